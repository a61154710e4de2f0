"""ATen ops that map onto fusim's dedicated kinds (traces/SCHEMA.md), each with its checks.

A handler returns True when it made the layers, False to leave the op to the generic
tables (aten_ops). Parameters read directly by an op (a functional conv, layer norm,
embedding, or F.linear's t + addmm) become that layer's own params when nothing else reads
them and their names end in the role the kind needs (".weight", ".bias"); otherwise they
come from `parameter` layers and the op is generic.
"""
import math

import torch

from . import aten_ops as ops


def _floats(out, *ts):
    return all(ops.is_float(t) and t.dtype == out.dtype for t in ts)


def _own_param(b, t, role):
    """t's name when t is a parameter read by this op alone, named '<module>.<role>'."""
    if not b.is_param(t) or b.uses.get(id(t), 0) != 1:
        return None
    name = b.param_names[id(t)]
    return name if name == role or name.endswith("." + role) else None


def _layer_name(param_name, role):
    return param_name[: -len(role) - 1] if param_name != role else role


def _attach(b, r, out, op, attrs, inputs, params, buffers=(), name=None):
    node = b.produce(r, out, op, attrs, inputs, params=params, buffers=buffers)
    if name:
        node.name = name
    for t in r.outputs():
        if t is not out:
            b.produce(r, t, "generic_data_movement", {"aten": f"{r.name} (a further output)"},
                      inputs)
    return True


def reshape(b, r):
    x, out = r.args[0], r.outputs()[0]
    if r.out_shapes[id(out)] == r.in_shapes[id(x)]:
        b.alias(r, out, x)
    else:
        b.produce(r, out, "reshape", {}, [x])
    if b.is_param(x):
        b.param_views[id(out)] = (x, r)
    return True


def permute(b, r):
    x, out = r.args[0], r.outputs()[0]
    rank = len(r.in_shapes[id(x)])
    if r.packet.rstrip("_") == "permute":
        dims = [int(d) % rank for d in r.arg(1, "dims")]
    elif r.packet.rstrip("_") == "t":
        dims = [1, 0] if rank == 2 else list(range(rank))
    else:
        dims = list(range(rank))
        if rank:
            d0, d1 = int(r.arg(1, "dim0")) % rank, int(r.arg(2, "dim1")) % rank
            dims[d0], dims[d1] = dims[d1], dims[d0]
    if dims == list(range(rank)):
        b.alias(r, out, x)
    else:
        b.produce(r, out, "permute", {"dims": dims}, [x])
    if b.is_param(x):
        b.param_views[id(out)] = (x, r)
    return True


def binary(b, r):
    base, out = r.packet.rstrip("_"), r.outputs()[0]
    x, y = r.args[0], r.arg(1, "other")
    alpha = r.kwargs.get("alpha", r.args[2] if len(r.args) > 2 else 1)
    if not isinstance(x, torch.Tensor):
        return False
    if isinstance(y, torch.Tensor):
        if base in ("add", "mul") and alpha == 1 and _floats(out, x, y):
            b.produce(r, out, base, {}, [x, y])
            return True
        return False  # sub/div of two tensors, alpha: generic elementwise
    if not ops.is_number(y) or not _floats(out, x) or r.kwargs.get("rounding_mode"):
        return False
    # tensor (op) number: x + c, x - c, x * c, x / c as add/mul with attrs.scalar
    if base == "add":
        b.produce(r, out, "add", {"scalar": float(y * alpha)}, [x])
    elif base == "sub":
        b.produce(r, out, "add", {"scalar": float(-y * alpha)}, [x])
    elif base == "mul":
        b.produce(r, out, "mul", {"scalar": float(y)}, [x])
    elif base == "div" and y != 0:
        b.produce(r, out, "mul", {"scalar": 1.0 / float(y)}, [x])
    else:
        return False
    return True


def unary(op):
    def handler(b, r):
        x, out = r.args[0], r.outputs()[0]
        if not _floats(out, x):
            return False
        attrs = {}
        if op == "gelu":
            attrs = {"approximate": r.kwargs.get("approximate", "none")}
        b.produce(r, out, op, attrs, [x])
        return True
    return handler


def hardtanh(b, r):
    x, out = r.args[0], r.outputs()[0]
    if (r.arg(1, "min_val", -1.0), r.arg(2, "max_val", 1.0)) != (0.0, 6.0) or not _floats(out, x):
        return False
    b.produce(r, out, "relu6", {}, [x])
    return True


def softmax(b, r):
    x, out = r.args[0], r.outputs()[0]
    if r.arg(2, "half_to_float", False) or not _floats(out, x):
        return False
    b.produce(r, out, "softmax", {"dim": int(r.arg(1, "dim"))}, [x])
    return True


def native_dropout(b, r):
    x, p, train = r.args[0], float(r.arg(1, "p")), r.arg(2, "train", True)
    out = r.outputs()[0]
    if not train or not _floats(out, x) or not 0 <= p < 1:
        return False
    return _attach(b, r, out, "dropout", {"p": p}, [x], [])


def concat(b, r):
    xs = [t for t in r.arg(0, "tensors") if not (t.dim() == 1 and t.shape[0] == 0)]
    out = r.outputs()[0]
    if len(xs) < 2 or any(t.dtype != out.dtype or t.dim() != out.dim() for t in xs):
        return False  # one tensor: torch.cat copies it (generic data movement)
    b.produce(r, out, "concat", {"dim": int(r.arg(1, "dim", 0))}, xs)
    return True


def _pair(v, default):
    v = default if v is None or (isinstance(v, (list, tuple)) and not v) else v
    return [int(v), int(v)] if isinstance(v, int) else [int(x) for x in v]


def max_pool(b, r):
    x, out = r.args[0], r.outputs()[0]
    if x.dim() != 4 or not _floats(out, x):
        return False
    kernel = _pair(r.arg(1, "kernel_size"), None)
    attrs = {"kernel": kernel, "stride": _pair(r.arg(2, "stride"), kernel),
             "padding": _pair(r.arg(3, "padding"), 0), "dilation": _pair(r.arg(4, "dilation"), 1),
             "ceil_mode": bool(r.arg(5, "ceil_mode", False))}
    return _attach(b, r, out, "max_pool2d", attrs, [x], [])


def avg_pool(b, r):
    x, out = r.args[0], r.outputs()[0]
    if x.dim() != 4 or not _floats(out, x) or r.arg(6, "divisor_override") is not None:
        return False
    kernel = _pair(r.arg(1, "kernel_size"), None)
    attrs = {"kernel": kernel, "stride": _pair(r.arg(2, "stride"), kernel),
             "padding": _pair(r.arg(3, "padding"), 0),
             "ceil_mode": bool(r.arg(4, "ceil_mode", False)),
             "count_include_pad": bool(r.arg(5, "count_include_pad", True))}
    b.produce(r, out, "avg_pool2d", attrs, [x])
    return True


def adaptive_avg_pool(b, r):
    x, out = r.args[0], r.outputs()[0]
    if x.dim() != 4 or not _floats(out, x):
        return False
    b.produce(r, out, "adaptive_avg_pool2d", {"output_size": list(out.shape[-2:])}, [x])
    return True


def _linear_weight(b, t):
    """The weight w when t is w.t() of a parameter read nowhere else (F.linear's pattern)."""
    view = b.param_views.get(id(t))
    if view is None or b.uses.get(id(t), 0) != 1:
        return None
    w, rec = view
    if rec.packet != "t" or w.dim() != 2:
        return None
    return w if _own_param(b, w, "weight") else None


def mm(b, r):
    x, y, out = r.args[0], r.args[1], r.outputs()[0]
    if not _floats(out, x, y):
        return False
    w = _linear_weight(b, y) if x.dim() == 2 else None
    if w is not None:
        name = b.param_names[id(w)]
        return _attach(b, r, out, "linear", {"bias": False}, [x], [(name, w)],
                       name=_layer_name(name, "weight"))
    b.produce(r, out, "bmm" if r.packet == "bmm" else "matmul", {}, [x, y])
    return True


def addmm(b, r):
    """bias + x @ y (F.linear on 2-D input, baddbmm): a linear layer, or matmul/bmm + add."""
    bias, x, y, out = r.args[0], r.args[1], r.args[2], r.outputs()[0]
    beta, alpha = r.kwargs.get("beta", 1), r.kwargs.get("alpha", 1)
    if not _floats(out, x, y) or alpha != 1:
        return False
    w = _linear_weight(b, y) if r.packet == "addmm" and beta == 1 else None
    if w is not None and _own_param(b, bias, "bias") and bias.dim() == 1:
        name = b.param_names[id(w)]
        return _attach(b, r, out, "linear", {"bias": True}, [x],
                       [(name, w), (b.param_names[id(bias)], bias)],
                       name=_layer_name(name, "weight"))
    kind = "bmm" if r.packet == "baddbmm" else "matmul"
    node = b.produce(r, None, kind, {}, [x, y], suffix=r.packet.rstrip("_") + "_mm",
                     shape=list(out.shape), dtype=b.dtype(out))
    if beta == 0:
        b.values[id(out)] = (node, r.out_versions.get(id(out)))
        return True
    ops.add_bias(b, r, node, bias, out)
    return True


def convolution(b, r):
    x, w, bias = r.args[0], r.args[1], r.args[2]
    stride, padding, dilation, transposed = r.args[3], r.args[4], r.args[5], r.args[6]
    groups, out = int(r.args[8]), r.outputs()[0]
    if not _floats(out, x, w):
        return False
    wname = _own_param(b, w, "weight")
    bname = _own_param(b, bias, "bias") if bias is not None else ""
    if w.dim() == 4 and not transposed and wname and bname is not None and \
            len(padding) == 2 and x.dim() == 4:
        attrs = {"kernel": list(w.shape[2:]), "stride": [int(s) for s in stride],
                 "padding": [int(p) for p in padding], "dilation": [int(d) for d in dilation],
                 "groups": groups, "bias": bias is not None}
        params = [(wname, w)] + ([(bname, bias)] if bias is not None else [])
        return _attach(b, r, out, "conv2d", attrs, [x], params, name=_layer_name(wname, "weight"))
    taps = math.prod(w.shape[2:])
    if transposed:  # each input element meets Cout/groups * taps weights
        contraction = round(x.numel() * w.shape[1] * taps / max(1, out.numel()))
    else:
        contraction = w.shape[1] * taps
    ops.matmul_generic(b, r, x, w, contraction, bias=bias, channel_dim=1)
    return True


def layer_norm(b, r):
    x, shape, w, bias, eps = r.args[0], r.args[1], r.args[2], r.args[3], r.args[4]
    out = r.outputs()[0]
    if not _floats(out, x):
        return False
    if w is None and bias is None:
        params = []
    else:
        wname = _own_param(b, w, "weight") if w is not None else None
        bname = _own_param(b, bias, "bias") if bias is not None else None
        if not wname or not bname:
            return False
        params = [(wname, w), (bname, bias)]
    return _attach(b, r, out, "layer_norm", {"normalized_shape": [int(d) for d in shape],
                                              "eps": float(eps)}, [x], params)


def batch_norm(b, r):
    x, w, bias, mean, var = r.args[:5]
    momentum, eps, out = float(r.args[6]), float(r.args[7]), r.outputs()[0]
    if not _floats(out, x) or x.dim() < 2:
        return False
    if w is None and bias is None:
        params = []
    else:
        wname = _own_param(b, w, "weight") if w is not None else None
        bname = _own_param(b, bias, "bias") if bias is not None else None
        if not wname or not bname:
            return False
        params = [(wname, w), (bname, bias)]
    buffers = []
    for t, role in ((mean, "running_mean"), (var, "running_var")):
        if t is None:
            continue
        name = b.buffer_names.get(id(t))
        if not name or not name.endswith(role) or b.uses.get(id(t), 0) != 1:
            return False
        buffers.append((name, t))
    return _attach(b, r, out, "batch_norm", {"eps": eps, "momentum": momentum}, [x], params,
                   buffers)


def norm_generic(b, r):
    """native_batch_norm/group_norm with shared params: x, weight, bias as one elementwise
    layer, weight and bias viewed as [C, 1, ...] so that they broadcast along dim 1."""
    x, out = r.args[0], r.outputs()[0]
    if r.packet == "native_layer_norm":
        return False  # its weight [normalized_shape] already broadcasts
    ins = [x]
    for t in (r.args[1], r.args[2]):
        if t is None:
            continue
        ref = b.ref(t, r.in_versions)
        if x.dim() > 2:
            ref = b.new_node(b._name("channel_view"), "reshape", {}, [ref],
                             shape=[t.shape[0]] + [1] * (x.dim() - 2), dtype=b.dtype(t))
        ins.append(ref)
    b.produce(r, out, "generic_elementwise", {"aten": r.name, "flops_per_element": 7}, ins)
    for t in r.outputs()[1:]:
        b.produce(r, t, "generic_data_movement", {"aten": f"{r.name} (a further output)"}, [x])
    return True


def batch_norm_any(b, r):
    return batch_norm(b, r) or norm_generic(b, r)


def embedding(b, r):
    w, idx, out = r.args[0], r.args[1], r.outputs()[0]
    wname = _own_param(b, w, "weight")
    if not wname or idx.dtype not in (torch.int64, torch.int32) or not ops.is_float(w):
        return False
    padding_idx = int(r.arg(2, "padding_idx", -1))
    return _attach(b, r, out, "embedding", {"padding_idx": padding_idx}, [idx], [(wname, w)],
                   name=_layer_name(wname, "weight"))


def embedding_bag(b, r):
    """Output 0 sums (or averages, maxes) bag-length rows of the weight per bag."""
    w, idx, offsets = r.args[0], r.args[1], r.args[2]
    out = r.outputs()[0]
    bags = max(1, out.shape[0])
    weights = r.arg(6, "per_sample_weights")
    ins = [w, idx, offsets] + ([weights] if weights is not None else [])
    ops.reduction(b, r, k=2 if weights is not None else 1,
                  reduce=max(1, idx.numel() // bags), inputs=ins)
    return True


HANDLERS = {
    "view": reshape, "_unsafe_view": reshape, "_reshape_alias": reshape, "reshape": reshape,
    "squeeze": reshape, "unsqueeze": reshape, "flatten": reshape, "view_as": reshape,
    "unflatten": reshape,
    "permute": permute, "transpose": permute, "t": permute, "swapaxes": permute,
    "swapdims": permute,
    "add": binary, "sub": binary, "mul": binary, "div": binary,
    "relu": unary("relu"), "sigmoid": unary("sigmoid"), "tanh": unary("tanh"),
    "silu": unary("silu"), "gelu": unary("gelu"), "hardtanh": hardtanh,
    "_softmax": softmax, "native_dropout": native_dropout, "cat": concat, "concat": concat,
    "max_pool2d_with_indices": max_pool, "max_pool2d": max_pool, "avg_pool2d": avg_pool,
    "_adaptive_avg_pool2d": adaptive_avg_pool, "adaptive_avg_pool2d": adaptive_avg_pool,
    "mm": mm, "bmm": mm, "matmul": mm, "mv": mm, "dot": mm, "addmm": addmm, "baddbmm": addmm,
    "convolution": convolution, "_convolution": convolution,
    "native_layer_norm": layer_norm, "native_batch_norm": batch_norm_any,
    "native_group_norm": norm_generic, "embedding": embedding,
    "_embedding_bag": embedding_bag, "_embedding_bag_forward_only": embedding_bag,
}
