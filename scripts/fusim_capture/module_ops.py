"""call_module nodes: torch.nn leaf modules -> fusim layers (attrs as in traces/SCHEMA.md)."""
import torch.nn as nn

from .errors import CaptureError


def pair(v):
    return [int(v), int(v)] if isinstance(v, int) else [int(x) for x in v]


def own_params(node, module):
    return [(f"{node.target}.{n}", p) for n, p in module.named_parameters()]


def fail(node, module, why):
    raise CaptureError(f"fx node '{node.name}' (module '{node.target}', "
                       f"{type(module).__name__}): {why}")


def conv2d(b, node, m):
    if m.padding_mode != "zeros":
        fail(node, m, f"padding_mode '{m.padding_mode}' is not supported (only zeros)")
    kernel, dilation = pair(m.kernel_size), pair(m.dilation)
    if m.padding == "valid":
        padding = [0, 0]
    elif m.padding == "same":
        # 'same' pads d*(k-1) in total; fusim's symmetric padding needs that to be even.
        totals = [d * (k - 1) for d, k in zip(dilation, kernel)]
        if any(t % 2 for t in totals):
            fail(node, m, "padding='same' with an even kernel pads asymmetrically")
        padding = [t // 2 for t in totals]
    else:
        padding = pair(m.padding)
    attrs = {"kernel": kernel, "stride": pair(m.stride), "padding": padding,
             "dilation": dilation, "groups": m.groups, "bias": m.bias is not None}
    b.emit(node, "conv2d", attrs, [node.args[0]], own_params(node, m), name=node.target)


def linear(b, node, m):
    b.emit(node, "linear", {"bias": m.bias is not None}, [node.args[0]], own_params(node, m),
           name=node.target)


def batch_norm(b, node, m):
    if not m.affine:
        fail(node, m, "affine=False batch norm has no weight/bias; fusim needs both")
    if m.momentum is None:
        fail(node, m, "momentum=None (cumulative average) is not representable")
    buffers = []
    if m.track_running_stats:
        buffers = [(f"{node.target}.running_mean", m.running_mean),
                   (f"{node.target}.running_var", m.running_var)]
    b.emit(node, "batch_norm", {"eps": m.eps, "momentum": m.momentum}, [node.args[0]],
           own_params(node, m), buffers, name=node.target)


def layer_norm(b, node, m):
    if not m.elementwise_affine:
        fail(node, m, "elementwise_affine=False layer norm has no weight/bias")
    b.emit(node, "layer_norm", {"normalized_shape": list(m.normalized_shape), "eps": m.eps},
           [node.args[0]], own_params(node, m), name=node.target)


def embedding(b, node, m):
    if m.max_norm is not None or m.sparse:
        fail(node, m, "max_norm and sparse embeddings are not supported")
    attrs = {"padding_idx": -1 if m.padding_idx is None else m.padding_idx}
    b.emit(node, "embedding", attrs, [node.args[0]], own_params(node, m), name=node.target)


def max_pool2d(b, node, m):
    if m.return_indices:
        fail(node, m, "return_indices=True is not supported")
    kernel = pair(m.kernel_size)
    attrs = {"kernel": kernel, "stride": pair(m.stride) if m.stride is not None else kernel,
             "padding": pair(m.padding), "dilation": pair(m.dilation), "ceil_mode": m.ceil_mode}
    b.emit(node, "max_pool2d", attrs, [node.args[0]], name=node.target)


def avg_pool2d(b, node, m):
    if m.divisor_override is not None:
        fail(node, m, "divisor_override is not supported")
    kernel = pair(m.kernel_size)
    attrs = {"kernel": kernel, "stride": pair(m.stride) if m.stride is not None else kernel,
             "padding": pair(m.padding), "ceil_mode": m.ceil_mode,
             "count_include_pad": m.count_include_pad}
    b.emit(node, "avg_pool2d", attrs, [node.args[0]], name=node.target)


def adaptive_avg_pool2d(b, node, m):
    # output_size may hold None ("keep the input size"); the recorded shape resolves it.
    b.emit(node, "adaptive_avg_pool2d", {"output_size": b.shape(node)[-2:]}, [node.args[0]],
           name=node.target)


def simple(op):
    def convert(b, node, m):
        b.emit(node, op, {}, [node.args[0]], name=node.target)
    return convert


def gelu(b, node, m):
    b.emit(node, "gelu", {"approximate": m.approximate}, [node.args[0]], name=node.target)


def dropout(b, node, m):
    b.emit(node, "dropout", {"p": m.p}, [node.args[0]], name=node.target)


def softmax(b, node, m):
    if m.dim is None:
        fail(node, m, "Softmax(dim=None) relies on a deprecated implicit dim; give dim")
    b.emit(node, "softmax", {"dim": m.dim}, [node.args[0]], name=node.target)


def flatten(b, node, m):
    b.emit(node, "flatten", {"start_dim": m.start_dim, "end_dim": m.end_dim}, [node.args[0]],
           name=node.target)


def identity(b, node, m):
    b.alias(node, node.args[0])


def attention(b, node, m):
    """A model's own attention leaf (fusim_op = "scaled_dot_product_attention")."""
    if len(node.args) != 3 or node.kwargs:
        fail(node, m, "an attention leaf takes exactly (q, k, v)")
    attrs = {"heads": int(m.heads), "causal": bool(m.causal), "p": float(m.p)}
    b.emit(node, "scaled_dot_product_attention", attrs, list(node.args), own_params(node, m),
           name=node.target)


# Checked in order with isinstance, so subclasses of these modules map like them.
MODULES = [
    (nn.Conv2d, conv2d), (nn.Linear, linear), (nn.modules.batchnorm._BatchNorm, batch_norm),
    (nn.LayerNorm, layer_norm), (nn.Embedding, embedding), (nn.ReLU6, simple("relu6")),
    (nn.ReLU, simple("relu")), (nn.GELU, gelu), (nn.SiLU, simple("silu")),
    (nn.Sigmoid, simple("sigmoid")), (nn.Tanh, simple("tanh")), (nn.Dropout, dropout),
    (nn.MaxPool2d, max_pool2d), (nn.AvgPool2d, avg_pool2d),
    (nn.AdaptiveAvgPool2d, adaptive_avg_pool2d), (nn.Softmax, softmax), (nn.Flatten, flatten),
    (nn.Identity, identity),
]
FUSED = {"scaled_dot_product_attention": attention}


def convert(b, node, module):
    fused = getattr(module, "fusim_op", None)
    if fused:
        if fused not in FUSED:
            fail(node, module, f"fusim_op '{fused}' is not one of {sorted(FUSED)}")
        return FUSED[fused](b, node, module)
    for cls, handler in MODULES:
        if isinstance(module, cls):
            return handler(b, node, module)
    fail(node, module, "no fusim op for this module type (supported: "
         + ", ".join(c.__name__ for c, _ in MODULES) + ")")
