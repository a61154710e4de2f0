"""Walks an fx graph (with recorded values) and builds the fusim layer list.

Every call node becomes one layer of the closed op set (traces/SCHEMA.md), or an alias of
its input (contiguous, Identity), or a static value (x.size(1)); anything else is an error
naming the node. Params keep their PyTorch names and each belongs to exactly one layer.
"""
import torch
import torch.fx as fx

from . import function_ops, module_ops
from .errors import CaptureError, one_line

DTYPE_NAMES = {
    torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16",
    torch.int64: "int64", torch.int32: "int32", torch.bool: "bool",
}


def dtype_name(dtype, where):
    if dtype not in DTYPE_NAMES:
        raise CaptureError(f"{where}: dtype {dtype} is not one of {sorted(DTYPE_NAMES.values())}")
    return DTYPE_NAMES[dtype]


class LayerBuilder:
    def __init__(self, gm, values, trace_dtype, tied=None):
        self.gm = gm
        self.values = values
        self.trace_dtype = trace_dtype
        self.layers = []
        self.inputs = []
        self.refs = {}          # node -> layer id (int) or model input name (str)
        self.param_owner = {}   # param name -> fx node name that owns it
        self.modules = dict(gm.named_modules())
        self.tied = tied or {}  # param name -> the name of the tensor it shares
        self.name_uses = {}     # module path -> calls so far (a ReLU module may run twice)

    # ---- helpers used by the op tables ----
    def is_tensor(self, arg):
        return isinstance(arg, fx.Node) and isinstance(self.values.get(arg), torch.Tensor)

    def static(self, arg, node, what):
        """A concrete non-tensor argument (an fx node computing a size resolves to its value)."""
        if isinstance(arg, fx.Node):
            value = self.values.get(arg)
            if isinstance(value, torch.Tensor):
                raise CaptureError(f"fx node '{node.name}': {what} must be a constant, "
                                   f"got the tensor '{arg.name}'")
            return value
        if isinstance(arg, (list, tuple)):
            return type(arg)(self.static(a, node, what) for a in arg)
        return arg

    def ref(self, arg, node):
        if not self.is_tensor(arg):
            raise CaptureError(f"fx node '{node.name}' ({node.op} {node.target}): expected a "
                               f"tensor input, got {arg!r}; ops mixing tensors with constants "
                               "are not in fusim's op set")
        if arg not in self.refs:
            raise CaptureError(f"fx node '{node.name}': its input '{arg.name}' has no layer")
        return self.refs[arg]

    def shape(self, node):
        return list(self.values[node].shape)

    def emit(self, node, op, attrs, inputs, params=(), buffers=(), name=None):
        value = self.values[node]
        if not isinstance(value, torch.Tensor):
            raise CaptureError(f"fx node '{node.name}' ({node.op} {node.target}): "
                               f"produces {type(value).__name__}, not one tensor")
        name = self.unique_name(name or node.name)
        layer = {"id": len(self.layers), "name": name, "op": op, "attrs": attrs,
                 "inputs": [self.ref(a, node) for a in inputs], "output": self.shape(node)}
        out_dtype = dtype_name(value.dtype, f"fx node '{node.name}'")
        if out_dtype != self.trace_dtype:
            if not value.dtype.is_floating_point:
                raise CaptureError(f"fx node '{node.name}': computes an {out_dtype} tensor; "
                                   "fusim layers produce floating-point activations only")
            layer["output_dtype"] = out_dtype
        if params:
            layer["params"] = [self.spec(n, t, True, node) for n, t in params]
        if buffers:
            layer["buffers"] = [self.spec(n, t, False, node) for n, t in buffers]
        self.layers.append(layer)
        self.refs[node] = layer["id"]
        return layer

    def unique_name(self, name):
        # A module called again (torchvision's BasicBlock runs self.relu twice) gets
        # "layer1.0.relu_1", as fx names the second call node.
        uses = self.name_uses.get(name, 0)
        self.name_uses[name] = uses + 1
        return name if uses == 0 else f"{name}_{uses}"

    def spec(self, name, tensor, trained, node):
        if trained:
            if name in self.tied:
                raise CaptureError(f"fx node '{node.name}': parameter '{name}' is the same "
                                   f"tensor as '{self.tied[name]}' (tied weights); trace "
                                   "version 1 gives every layer its own parameters")
            if name in self.param_owner:
                raise CaptureError(f"fx node '{node.name}': parameter '{name}' is already used "
                                   f"by '{self.param_owner[name]}'; shared (tied) parameters "
                                   "are not representable in trace version 1")
            self.param_owner[name] = node.name
        spec = {"name": name, "shape": list(tensor.shape)}
        dt = dtype_name(tensor.dtype, f"fx node '{node.name}' tensor '{name}'")
        if dt != self.trace_dtype:
            spec["dtype"] = dt
        if trained and not tensor.requires_grad:
            spec["requires_grad"] = False
        if not trained:
            spec["requires_grad"] = False
        return spec

    def alias(self, node, source):
        self.refs[node] = self.ref(source, node)

    def module_layer(self, node, module):
        try:
            spec = module_ops.layer_spec(module, self.shape(node))
        except module_ops.Unsupported as e:
            raise CaptureError(f"fx node '{node.name}' (module '{node.target}', "
                               f"{type(module).__name__}): {e}") from e
        if isinstance(spec, module_ops.Alias):
            return self.alias(node, node.args[0])
        if len(node.args) < spec.inputs or (spec.inputs > 1 and
                                            (len(node.args) != spec.inputs or node.kwargs)):
            raise CaptureError(f"fx node '{node.name}' (module '{node.target}', "
                               f"{type(module).__name__}): takes exactly {spec.inputs} tensor "
                               "inputs")
        prefix = f"{node.target}."
        self.emit(node, spec.op, spec.attrs, list(node.args[:spec.inputs]),
                  [(prefix + role, t) for role, t in spec.params],
                  [(prefix + role, t) for role, t in spec.buffers], name=node.target)

    # ---- the walk ----
    def build(self, input_names):
        placeholders = 0
        for node in self.gm.graph.nodes:
            if node.op == "placeholder":
                name = input_names[placeholders]
                placeholders += 1
                value = self.values[node]
                spec = {"name": name, "shape": list(value.shape)}
                dt = dtype_name(value.dtype, f"input '{node.target}'")
                if dt != self.trace_dtype:
                    spec["dtype"] = dt
                self.inputs.append(spec)
                self.refs[node] = name
            elif node.op == "get_attr":
                raise CaptureError(
                    f"fx node '{node.name}': the forward reads '{node.target}' directly "
                    "(a parameter or buffer used outside a module); fusim needs every "
                    "parameter inside a module of its op set (Linear, Embedding, ...)")
            elif node.op in ("call_module", "call_function", "call_method"):
                if not isinstance(self.values[node], torch.Tensor):
                    continue  # a static value (a size, a shape); consumers read it concretely
                try:
                    if node.op == "call_module":
                        self.module_layer(node, self.modules[node.target])
                    else:
                        function_ops.convert(self, node)
                except CaptureError:
                    raise
                except Exception as e:  # an argument form the op tables do not expect
                    raise CaptureError(f"fx node '{node.name}' ({node.op} {node.target}): "
                                       f"cannot convert it: {one_line(e)}") from e
            elif node.op == "output":
                return node.args[0]
        raise CaptureError("the fx graph has no output node")
