"""call_function and call_method nodes -> fusim layers.

Arguments are read the way PyTorch binds them (position or keyword, with PyTorch's
defaults: note torch.flatten starts at dim 0 while nn.Flatten starts at 1).
"""
import operator

import torch
import torch.nn.functional as F

from .errors import CaptureError


def arg(b, node, pos, name, default=None, what=None):
    if len(node.args) > pos:
        v = node.args[pos]
    else:
        v = node.kwargs.get(name, default)
    return b.static(v, node, what or name)


def pair(v):
    return [int(v), int(v)] if isinstance(v, int) else [int(x) for x in v]


def fail(node, why):
    raise CaptureError(f"fx node '{node.name}' ({node.op} {getattr(node.target, '__name__', node.target)}): {why}")


def binary(op):
    def convert(b, node):
        if node.kwargs.get("alpha", 1) != 1:
            fail(node, "add with alpha != 1 is not in fusim's op set")
        x, y = node.args[0], node.args[1]
        if b.is_tensor(x) and b.is_tensor(y):
            return b.emit(node, op, {}, [x, y])
        tensor, other = (x, y) if b.is_tensor(x) else (y, x)
        scalar_op(b, node, op, tensor, other)
    return convert


def scalar_op(b, node, op, tensor, other, transform=lambda c: c):
    """x + c, x * c (either order) as add/mul with attrs.scalar; x - c and x / c too."""
    value = b.static(other, node, "the constant operand")
    if not b.is_tensor(tensor) or isinstance(value, bool) or not isinstance(value, (int, float)):
        fail(node, f"{op} needs two tensors or a tensor and a number")
    b.emit(node, op, {"scalar": float(transform(value))}, [tensor])


def sub_or_div(op, transform):
    def convert(b, node):
        x, y = node.args[0], node.args[1]
        if not b.is_tensor(x) or b.is_tensor(y):
            fail(node, "only tensor - number and tensor / number are expressible "
                       "(fusim has no sub/div op)")
        scalar_op(b, node, op, x, y, transform)
    return convert


def unary(op):
    def convert(b, node):
        b.emit(node, op, {}, [node.args[0]])
    return convert


def gelu(b, node):
    b.emit(node, "gelu", {"approximate": arg(b, node, 1, "approximate", "none")}, [node.args[0]])


def dropout(b, node):
    p = arg(b, node, 1, "p", 0.5)
    b.emit(node, "dropout", {"p": float(p)}, [node.args[0]])


def softmax(b, node):
    dim = arg(b, node, 1, "dim")
    if dim is None:
        fail(node, "softmax without dim relies on a deprecated implicit dim; give dim")
    if arg(b, node, 3 if node.op == "call_function" else 2, "dtype") is not None:
        fail(node, "softmax with a dtype cast is not supported")
    b.emit(node, "softmax", {"dim": int(dim)}, [node.args[0]])


def flatten(b, node):
    start, end = arg(b, node, 1, "start_dim", 0), arg(b, node, 2, "end_dim", -1)
    b.emit(node, "flatten", {"start_dim": int(start), "end_dim": int(end)}, [node.args[0]])


def reshape(b, node):
    b.emit(node, "reshape", {}, [node.args[0]])


def permute(b, node):
    if node.op == "call_method" and len(node.args) > 2:
        dims = b.static(list(node.args[1:]), node, "dims")  # x.permute(0, 2, 1)
    else:
        dims = arg(b, node, 1, "dims")
    rank = len(b.shape(node))
    b.emit(node, "permute", {"dims": [int(d) % rank for d in dims]}, [node.args[0]])


def transpose(b, node):
    rank = len(b.shape(node))
    d0, d1 = int(arg(b, node, 1, "dim0")) % rank, int(arg(b, node, 2, "dim1")) % rank
    dims = list(range(rank))
    dims[d0], dims[d1] = dims[d1], dims[d0]
    b.emit(node, "permute", {"dims": dims}, [node.args[0]])


def concat(b, node):
    tensors = node.args[0] if node.args else node.kwargs["tensors"]
    dim = arg(b, node, 1, "dim", 0)
    if len(tensors) == 1:  # torch.cat of one tensor copies it (DenseNet's first layer)
        b.emit(node, "generic_data_movement", {"aten": "aten.cat.default"}, list(tensors))
        return
    b.emit(node, "concat", {"dim": int(dim)}, list(tensors))


def matmul(op):
    def convert(b, node):
        b.emit(node, op, {}, [node.args[0], node.args[1]])
    return convert


def max_pool2d(b, node):
    if arg(b, node, 6, "return_indices", False):
        fail(node, "return_indices=True is not supported")
    kernel = pair(arg(b, node, 1, "kernel_size"))
    stride = arg(b, node, 2, "stride")
    attrs = {"kernel": kernel, "stride": pair(stride) if stride else kernel,
             "padding": pair(arg(b, node, 3, "padding", 0)),
             "dilation": pair(arg(b, node, 4, "dilation", 1)),
             "ceil_mode": bool(arg(b, node, 5, "ceil_mode", False))}
    b.emit(node, "max_pool2d", attrs, [node.args[0]])


def avg_pool2d(b, node):
    if arg(b, node, 6, "divisor_override") is not None:
        fail(node, "divisor_override is not supported")
    kernel = pair(arg(b, node, 1, "kernel_size"))
    stride = arg(b, node, 2, "stride")
    attrs = {"kernel": kernel, "stride": pair(stride) if stride else kernel,
             "padding": pair(arg(b, node, 3, "padding", 0)),
             "ceil_mode": bool(arg(b, node, 4, "ceil_mode", False)),
             "count_include_pad": bool(arg(b, node, 5, "count_include_pad", True))}
    b.emit(node, "avg_pool2d", attrs, [node.args[0]])


def adaptive_avg_pool2d(b, node):
    b.emit(node, "adaptive_avg_pool2d", {"output_size": b.shape(node)[-2:]}, [node.args[0]])


def alias(b, node):
    b.alias(node, node.args[0])


FUNCTIONS = {
    operator.add: binary("add"), operator.iadd: binary("add"), torch.add: binary("add"),
    operator.mul: binary("mul"), operator.imul: binary("mul"), torch.mul: binary("mul"),
    operator.sub: sub_or_div("add", lambda c: -c), operator.truediv: sub_or_div("mul", lambda c: 1.0 / c),
    torch.relu: unary("relu"), F.relu: unary("relu"), F.relu6: unary("relu6"),
    F.gelu: gelu, F.silu: unary("silu"), torch.sigmoid: unary("sigmoid"),
    torch.tanh: unary("tanh"), F.dropout: dropout, F.softmax: softmax, torch.softmax: softmax,
    torch.flatten: flatten, torch.reshape: reshape, torch.permute: permute,
    torch.transpose: transpose, torch.cat: concat, torch.concat: concat,
    torch.matmul: matmul("matmul"), operator.matmul: matmul("matmul"), torch.bmm: matmul("bmm"),
    F.max_pool2d: max_pool2d, F.avg_pool2d: avg_pool2d, F.adaptive_avg_pool2d: adaptive_avg_pool2d,
}
METHODS = {
    "add": binary("add"), "add_": binary("add"), "mul": binary("mul"), "mul_": binary("mul"),
    "relu": unary("relu"), "relu_": unary("relu"), "sigmoid": unary("sigmoid"),
    "tanh": unary("tanh"), "softmax": softmax, "flatten": flatten, "view": reshape,
    "reshape": reshape, "permute": permute, "transpose": transpose, "matmul": matmul("matmul"),
    "bmm": matmul("bmm"), "contiguous": alias,
}


def convert(b, node):
    if node.op == "call_function":
        handler = FUNCTIONS.get(node.target)
        names = sorted({getattr(f, "__name__", str(f)) for f in FUNCTIONS})
    else:
        handler = METHODS.get(node.target)
        names = sorted(METHODS)
    if handler is None:
        fail(node, "no fusim op for it (supported: " + ", ".join(names) + ")")
    handler(b, node)
