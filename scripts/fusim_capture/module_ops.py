"""torch.nn modules with a dedicated fusim op -> (op, attrs, params, buffers) (traces/SCHEMA.md).

Shared by both capture paths: the fx builder turns a call_module node into one layer, and
the ATen builder turns one call of such a module into one layer instead of its ATen ops.
`layer_spec` raises Unsupported with the reason when the module's configuration has no
fusim form; fx reports it, the ATen path records the module's ATen ops instead.
"""
import torch.nn as nn


class Unsupported(Exception):
    """The module's configuration has no dedicated fusim op (the message says why)."""


class Alias:
    """The module returns its input unchanged (nn.Identity): no layer."""


class LayerSpec:
    def __init__(self, op, attrs, params=(), buffers=(), inputs=1):
        self.op, self.attrs = op, attrs
        self.params = list(params)    # (role, tensor): "weight", "bias"
        self.buffers = list(buffers)  # (role, tensor): "running_mean", ...
        self.inputs = inputs          # tensor arguments the layer reads


def pair(v):
    return [int(v), int(v)] if isinstance(v, int) else [int(x) for x in v]


def own_params(module):
    return list(module.named_parameters(recurse=False))


def conv2d(m, out_shape):
    if m.padding_mode != "zeros":
        raise Unsupported(f"padding_mode '{m.padding_mode}' is not supported (only zeros)")
    kernel, dilation = pair(m.kernel_size), pair(m.dilation)
    if m.padding == "valid":
        padding = [0, 0]
    elif m.padding == "same":
        # 'same' pads d*(k-1) in total; fusim's symmetric padding needs that to be even.
        totals = [d * (k - 1) for d, k in zip(dilation, kernel)]
        if any(t % 2 for t in totals):
            raise Unsupported("padding='same' with an even kernel pads asymmetrically")
        padding = [t // 2 for t in totals]
    else:
        padding = pair(m.padding)
    attrs = {"kernel": kernel, "stride": pair(m.stride), "padding": padding,
             "dilation": dilation, "groups": m.groups, "bias": m.bias is not None}
    return LayerSpec("conv2d", attrs, own_params(m))


def linear(m, out_shape):
    return LayerSpec("linear", {"bias": m.bias is not None}, own_params(m))


def batch_norm(m, out_shape):
    if m.momentum is None:
        raise Unsupported("momentum=None (cumulative average) is not representable")
    buffers = []
    if m.track_running_stats:
        buffers = [("running_mean", m.running_mean), ("running_var", m.running_var)]
    return LayerSpec("batch_norm", {"eps": m.eps, "momentum": m.momentum}, own_params(m),
                     buffers)


def layer_norm(m, out_shape):
    return LayerSpec("layer_norm", {"normalized_shape": list(m.normalized_shape), "eps": m.eps},
                     own_params(m))


def embedding(m, out_shape):
    if m.max_norm is not None or m.sparse:
        raise Unsupported("max_norm and sparse embeddings are not supported")
    attrs = {"padding_idx": -1 if m.padding_idx is None else m.padding_idx}
    return LayerSpec("embedding", attrs, own_params(m))


def max_pool2d(m, out_shape):
    if m.return_indices:
        raise Unsupported("return_indices=True is not supported")
    kernel = pair(m.kernel_size)
    attrs = {"kernel": kernel, "stride": pair(m.stride) if m.stride is not None else kernel,
             "padding": pair(m.padding), "dilation": pair(m.dilation), "ceil_mode": m.ceil_mode}
    return LayerSpec("max_pool2d", attrs)


def avg_pool2d(m, out_shape):
    if m.divisor_override is not None:
        raise Unsupported("divisor_override is not supported")
    kernel = pair(m.kernel_size)
    attrs = {"kernel": kernel, "stride": pair(m.stride) if m.stride is not None else kernel,
             "padding": pair(m.padding), "ceil_mode": m.ceil_mode,
             "count_include_pad": m.count_include_pad}
    return LayerSpec("avg_pool2d", attrs)


def adaptive_avg_pool2d(m, out_shape):
    # output_size may hold None ("keep the input size"); the recorded shape resolves it.
    return LayerSpec("adaptive_avg_pool2d", {"output_size": list(out_shape)[-2:]})


def simple(op):
    return lambda m, out_shape: LayerSpec(op, {})


def gelu(m, out_shape):
    return LayerSpec("gelu", {"approximate": m.approximate})


def dropout(m, out_shape):
    return LayerSpec("dropout", {"p": float(m.p)})


def softmax(m, out_shape):
    if m.dim is None:
        raise Unsupported("Softmax(dim=None) relies on a deprecated implicit dim; give dim")
    return LayerSpec("softmax", {"dim": m.dim})


def flatten(m, out_shape):
    return LayerSpec("flatten", {"start_dim": m.start_dim, "end_dim": m.end_dim})


def identity(m, out_shape):
    return Alias()


def attention(m, out_shape):
    """A model's own attention leaf (fusim_op = "scaled_dot_product_attention")."""
    attrs = {"heads": int(m.heads), "causal": bool(m.causal), "p": float(m.p)}
    return LayerSpec("scaled_dot_product_attention", attrs, own_params(m), inputs=3)


# Checked in order with isinstance, so subclasses of these modules map like them (the ATen
# path also requires that the subclass keeps the forward of the class listed here).
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


def find(module):
    """(class, handler) of the table entry for `module`, or None; fused leaves first."""
    fused = getattr(module, "fusim_op", None)
    if fused:
        if fused not in FUSED:
            raise Unsupported(f"fusim_op '{fused}' is not one of {sorted(FUSED)}")
        return type(module), FUSED[fused]
    for cls, handler in MODULES:
        if isinstance(module, cls):
            return cls, handler
    return None


def layer_spec(module, out_shape):
    """LayerSpec or Alias for `module`; Unsupported when it has no dedicated op."""
    entry = find(module)
    if entry is None:
        raise Unsupported("no fusim op for this module type (supported: "
                          + ", ".join(c.__name__ for c, _ in MODULES) + ")")
    return entry[1](module, out_shape)
