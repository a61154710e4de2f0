"""One recorded ATen op -> fusim layers: a dedicated kind where one fits, else a generic one.

Generic kinds (traces/SCHEMA.md, "Generic layers") carry the ATen name in attrs.aten and
the few numbers their cost rule needs: flops_per_element (elementwise and reduction ops,
from the table below, read off PyTorch's CPU kernels), reduce (elements combined per
output element) and contraction (multiply-adds per output element of a matmul-like op).
An op missing from every table is classified by its shapes: output = broadcast of the
inputs -> elementwise, fewer elements than its first input -> reduction, else data
movement. Outputs after the first (indices, saved statistics) are data movement.
"""
import torch

ALIASES = {"detach", "alias", "lift_fresh", "_conj", "_neg_view", "resolve_conj", "resolve_neg"}
# Views that are the identity when their output has the input's shape.
IDENTITY_VIEWS = {"slice", "expand", "narrow"}
RESHAPES = {"view", "_unsafe_view", "_reshape_alias", "reshape", "squeeze", "unsqueeze",
            "flatten", "view_as", "unflatten", "squeeze_", "unsqueeze_"}
PERMUTES = {"permute", "transpose", "t", "swapaxes", "swapdims", "transpose_", "t_"}

# FLOPs per output element (a multiply-add is 2; add, mul, div, compare, select, exp, log,
# erf, tanh, sqrt are 1 each).
ELEMENTWISE = {
    "sub": 1, "rsub": 1, "div": 1, "neg": 1, "abs": 1, "sign": 1, "sgn": 1, "ceil": 1,
    "floor": 1, "round": 1, "trunc": 1, "frac": 2, "reciprocal": 1, "sqrt": 1, "rsqrt": 2,
    "exp": 1, "exp2": 1, "expm1": 1, "log": 1, "log2": 1, "log10": 1, "log1p": 1, "sin": 1,
    "cos": 1, "tan": 1, "asin": 1, "acos": 1, "atan": 1, "sinh": 1, "cosh": 1, "erf": 1,
    "erfc": 1, "erfinv": 1, "atan2": 1, "pow": 3, "square": 1, "fmod": 1, "remainder": 2,
    "clamp": 2, "clamp_min": 1, "clamp_max": 1, "clip": 2, "hardtanh": 2, "threshold": 1,
    "leaky_relu": 2, "elu": 4, "selu": 5, "celu": 4, "softplus": 4, "mish": 7, "prelu": 2,
    "hardswish": 5,    # x * min(max(x + 3, 0), 6) / 6: add, max, min, mul, div
    "hardsigmoid": 4,  # min(max(x + 3, 0), 6) / 6
    "log_sigmoid_forward": 4, "logit": 3, "sigmoid": 4, "tanh": 1, "relu": 1, "silu": 5,
    "gelu": 5, "eq": 1, "ne": 1, "lt": 1, "le": 1, "gt": 1, "ge": 1, "logical_not": 1,
    "logical_and": 1, "logical_or": 1, "logical_xor": 1, "bitwise_not": 1, "bitwise_and": 1,
    "bitwise_or": 1, "bitwise_xor": 1, "isnan": 1, "isinf": 1, "where": 1, "masked_fill": 1,
    "addcmul": 2, "addcdiv": 2, "lerp": 3, "maximum": 1, "minimum": 1, "fmax": 1, "fmin": 1,
    "cumsum": 1, "cumprod": 1, "nan_to_num": 2, "add": 1, "mul": 1,
    "_softmax": 5, "_log_softmax": 5,  # max, subtract, exp, sum, divide (log) per element
    # Normalisations written functionally (their params shared or unnamed), counted as the
    # dedicated norms' forward: 7 per element (cost.cpp, norm_layer).
    "native_layer_norm": 7, "native_batch_norm": 7, "native_group_norm": 7,
    "_native_batch_norm_legit": 7,
}
# FLOPs per combined input element.
REDUCTIONS = {
    "sum": 1, "mean": 1, "nansum": 1, "amax": 1, "amin": 1, "max": 1, "min": 1, "argmax": 1,
    "argmin": 1, "prod": 1, "all": 1, "any": 1, "count_nonzero": 1, "aminmax": 2,
    "norm": 2, "linalg_vector_norm": 2,  # square and add (a sqrt per output)
    "var": 3, "std": 3, "var_mean": 3, "std_mean": 3,  # subtract the mean, square, add
    "logsumexp": 3, "_embedding_bag": 1, "_embedding_bag_forward_only": 1,
}
DATA_MOVEMENT = {
    "clone", "_to_copy", "copy", "expand", "slice", "select", "narrow", "split",
    "split_with_sizes", "unsafe_split", "unsafe_split_with_sizes", "unbind", "chunk",
    "unsafe_chunk", "diagonal", "as_strided", "unfold", "index", "index_select", "gather",
    "take", "roll", "flip", "constant_pad_nd", "reflection_pad1d", "reflection_pad2d",
    "replication_pad1d", "replication_pad2d", "repeat", "tile", "stack", "cat",
    "index_put", "scatter", "scatter_add", "masked_scatter", "embedding", "pixel_shuffle",
    "pixel_unshuffle", "channel_shuffle", "upsample_nearest2d", "upsample_bilinear2d",
    "im2col", "col2im", "tril", "triu", "sort", "topk", "masked_select", "nonzero",
    "native_dropout", "_index_put_impl",
}
# In-place ops whose result does not depend on the value they overwrite.
OVERWRITES = {"copy_", "fill_", "zero_", "bernoulli_", "normal_", "uniform_", "random_",
              "exponential_", "geometric_", "cauchy_", "log_normal_", "fill"}
# Factories: the tensor arguments (of *_like / new_*) only give a shape.
FACTORIES = {"zeros", "ones", "empty", "empty_strided", "full", "scalar_tensor", "arange",
             "eye", "linspace", "logspace", "zeros_like", "ones_like", "empty_like", "full_like",
             "rand_like", "randn_like", "randint_like", "new_zeros", "new_ones", "new_empty",
             "new_full", "new_empty_strided", "rand", "randn", "randint", "randperm", "tensor"}


def is_float(t):
    return isinstance(t, torch.Tensor) and t.dtype.is_floating_point


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def tensors(r):
    return [t for _, t in r.tensor_args()]


def broadcast(shapes):
    try:
        return list(torch.broadcast_shapes(*[tuple(s) for s in shapes]))
    except RuntimeError:
        return None


def generic(b, r, family, attrs, inputs, out=None, suffix=None):
    """Generic layers for r's outputs: `out` (default the first) as `family`, the rest as
    data movement (an output is only written when the loss depends on it)."""
    outs = r.outputs()
    first = out if out is not None else outs[0]
    for t in outs:
        if t is first:
            a = dict({"aten": r.name}, **attrs)
            b.produce(r, t, family, a, inputs, suffix=suffix)
        else:
            b.produce(r, t, "generic_data_movement", {"aten": f"{r.name} (a further output)"},
                      inputs, suffix=suffix)


def elementwise(b, r, k=None, inputs=None):
    ins = tensors(r) if inputs is None else inputs
    out = r.outputs()[0]
    if k is None:
        k = ELEMENTWISE.get(r.packet.rstrip("_"), 1)
    if ins and broadcast([t.shape for t in ins]) == list(out.shape):
        generic(b, r, "generic_elementwise", {"flops_per_element": k}, ins)
    else:  # not a broadcast of its inputs (e.g. an op reading a scalar into a new shape)
        generic(b, r, "generic_data_movement", {}, ins)


def reduction(b, r, k=None, reduce=None, inputs=None):
    ins = tensors(r) if inputs is None else inputs
    out = r.outputs()[0]
    if reduce is None:
        reduce = max(1, ins[0].numel() // max(1, out.numel())) if ins else 1
    if k is None:
        k = REDUCTIONS.get(r.packet.rstrip("_"), 1)
    generic(b, r, "generic_reduction", {"reduce": int(reduce), "flops_per_element": k}, ins)


def data_movement(b, r, inputs=None):
    generic(b, r, "generic_data_movement", {}, tensors(r) if inputs is None else inputs)


def matmul_generic(b, r, a, w, contraction, bias=None, channel_dim=None):
    """A matmul-like op as generic_matmul (2 * contraction FLOPs per output element), plus
    its bias as an add layer."""
    out = r.outputs()[0]
    attrs = {"contraction": int(max(1, contraction))}
    if bias is None:
        return generic(b, r, "generic_matmul", attrs, [a, w])
    node = b.produce(r, None, "generic_matmul", dict({"aten": r.name}, **attrs), [a, w],
                     shape=list(out.shape), dtype=b.dtype(out))
    add_bias(b, r, node, bias, out, channel_dim)


def add_bias(b, r, node, bias, out, channel_dim=None):
    """out = node + bias, bias reshaped to broadcast along channel_dim (convolutions)."""
    bias_ref = b.ref(bias, r.in_versions)
    if channel_dim is not None and out.dim() > 2:
        shape = [bias.shape[0]] + [1] * (out.dim() - 2)
        bias_ref = b.new_node(b._name("bias_view"), "reshape", {}, [bias_ref], shape=shape,
                              dtype=b.dtype(bias))
    if is_float(bias) and bias.dtype == out.dtype:
        b.produce(r, out, "add", {}, [node, bias_ref], suffix=r.packet + "_bias")
    else:
        b.produce(r, out, "generic_elementwise", {"aten": r.name, "flops_per_element": 1},
                  [node, bias_ref], suffix=r.packet + "_bias")


from . import aten_dedicated  # noqa: E402  (dedicated kinds use the helpers above)


def convert(b, r):
    name = r.packet
    base = name.rstrip("_")
    outs = r.outputs()
    if name in ALIASES:
        return b.alias(r, outs[0], r.args[0])
    if base in IDENTITY_VIEWS and len(outs) == 1 and \
            r.out_shapes[id(outs[0])] == r.in_shapes.get(id(r.args[0])):
        return b.alias(r, outs[0], r.args[0])  # x[:], x.expand(x.shape): the same tensor
    handler = aten_dedicated.HANDLERS.get(base)
    if handler is not None and handler(b, r):
        return
    if name in OVERWRITES or base == "fill":
        keep = [t for pos, t in r.tensor_args() if pos not in (0, "self")] \
            if base in ("copy", "fill") else []
        return data_movement(b, r, keep)
    if base in FACTORIES:
        return data_movement(b, r, [])
    if base in ELEMENTWISE:
        return elementwise(b, r)
    if base in REDUCTIONS:
        return reduction(b, r)
    if base in DATA_MOVEMENT:
        return data_movement(b, r)
    # Not in any table: classify by shapes.
    ins = tensors(r)
    if ins and broadcast([t.shape for t in ins]) == list(outs[0].shape):
        return elementwise(b, r, 1)
    if ins and outs[0].numel() < ins[0].numel():
        return reduction(b, r, 1)
    return data_movement(b, r)
