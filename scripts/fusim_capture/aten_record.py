"""Recording one forward at the ATen level: every op with its tensors, inside its module.

torch 1.13's TorchDispatchMode (torch.utils._python_dispatch) sees each ATen op after
autograd and the CompositeImplicit decompositions, i.e. what actually runs (F.linear as
t + addmm, dropout as bernoulli_ + div_ + mul on CPU/meta), with shapes and dtypes; forward
pre-hooks and hooks on every module keep the stack of module calls, so each op is
attributed to the innermost module running it. Tensors are meta by default (no memory, no
compute: batch 2 of vit_h_14 costs nothing); the records keep every tensor alive so that
Python ids stay unique for the builder.
"""
import torch
from torch.utils._python_dispatch import TorchDispatchMode


class ModuleCall:
    """One call of one module: its positional args, its result, the ops inside [start, end)."""

    def __init__(self, path, module, args, start, parent):
        self.path, self.module, self.args = path, module, args
        self.start, self.end = start, None
        self.parent = parent
        self.output = None
        self.in_versions = _versions([a for a in args if isinstance(a, torch.Tensor)])
        self.out_versions, self.out_shape = {}, None

    def describe(self):
        return f"module '{self.path or '<root>'}' ({type(self.module).__name__})"


class OpRecord:
    def __init__(self, index, func, args, kwargs, out, call, in_versions, in_shapes):
        self.index, self.func, self.args, self.kwargs = index, func, args, kwargs
        self.out, self.call = out, call
        # Version counters (shared by a tensor and its views) before and after the op: a
        # read of a tensor whose version moved since its value was recorded sees an
        # in-place write made through another alias.
        self.in_versions = in_versions
        # Shapes when the op ran: an in-place view op (RNNs' output.transpose_) changes the
        # shape of a tensor object that earlier ops produced or read.
        self.in_shapes = in_shapes
        self.out_shapes = {id(t): list(t.shape) for t in self.outputs()}
        self.out_versions = _versions(self.outputs() + [t for _, t in self.tensor_args()])
        # The dispatch mode runs below autograd's ADInplaceOrView kernel, which, once the op
        # returns, makes a view share its base's version counter and bumps the version of a
        # written tensor: account for both here.
        self_arg = args[0] if args and isinstance(args[0], torch.Tensor) else None
        if self_arg is not None and any(ret.alias_info is not None and not ret.alias_info.is_write
                                        for ret in func._schema.returns):
            for t in self.outputs():
                self.out_versions[id(t)] = in_versions.get(id(self_arg), self_arg._version)
        for pos in self.mutated_positions():
            t = self.args[pos]
            if isinstance(t, torch.Tensor):
                self.out_versions[id(t)] = in_versions.get(id(t), t._version) + 1

    @property
    def name(self):  # "aten.add_.Tensor"
        return str(self.func)

    @property
    def packet(self):  # "add_"
        return self.func.overloadpacket.__name__

    def tensor_args(self):
        """Tensor arguments in schema order (lists such as cat's flattened), with positions."""
        found = []
        for pos, a in enumerate(self.args):
            _collect(a, pos, found)
        for key, a in self.kwargs.items():
            _collect(a, key, found)
        return found

    def outputs(self):
        """The op's tensor results (a tuple result flattened)."""
        if isinstance(self.out, torch.Tensor):
            return [self.out]
        if isinstance(self.out, (tuple, list)):
            return [o for o in self.out if isinstance(o, torch.Tensor)]
        return []

    def arg(self, pos, name, default=None):
        if len(self.args) > pos:
            return self.args[pos]
        return self.kwargs.get(name, default)

    def mutated_positions(self):
        """Arguments the op writes in place (Tensor(a!) in its schema)."""
        return [i for i, a in enumerate(self.func._schema.arguments)
                if a.alias_info is not None and a.alias_info.is_write and i < len(self.args)]


def _versions(tensors):
    return {id(t): t._version for t in tensors}


def _collect(a, pos, found):
    if isinstance(a, torch.Tensor):
        found.append((pos, a))
    elif isinstance(a, (list, tuple)):
        for x in a:
            if isinstance(x, torch.Tensor):
                found.append((pos, x))


class OpFailed(Exception):
    """An ATen op (or Python code between ops) raised while the forward ran."""

    def __init__(self, where, op, error):
        super().__init__(str(error))
        self.where, self.op, self.error = where, op, error


class Recorder(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops, self.calls, self.stack = [], [], []
        self.current_op = None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.current_op = func
        found = []
        for a in list(args) + list(kwargs.values()):
            _collect(a, None, found)
        in_versions = _versions([t for _, t in found])
        in_shapes = {id(t): list(t.shape) for _, t in found}
        out = func(*args, **kwargs)
        self.current_op = None
        call = self.stack[-1] if self.stack else None
        self.ops.append(OpRecord(len(self.ops), func, args, kwargs, out, call, in_versions,
                                 in_shapes))
        return out

    def enter(self, path, module, args):
        call = ModuleCall(path, module, args, len(self.ops), self.stack[-1] if self.stack else None)
        self.calls.append(call)
        self.stack.append(call)

    def leave(self, output):
        call = self.stack.pop()
        call.end, call.output = len(self.ops), output
        if isinstance(output, torch.Tensor):
            call.out_versions = _versions([output])
            call.out_shape = list(output.shape)

    def where(self):
        return self.stack[-1].describe() if self.stack else "the model's forward"


def record(model, example):
    """Runs model(*example) under the recorder; returns (recorder, output).

    Raises OpFailed naming the module and the ATen op that failed (shape errors, ops with
    no meta kernel, reads of tensor values on meta tensors).
    """
    rec = Recorder()
    handles = []
    for path, module in model.named_modules():
        handles.append(module.register_forward_pre_hook(
            lambda m, args, path=path: rec.enter(path, m, args)))
        handles.append(module.register_forward_hook(lambda m, args, out: rec.leave(out)))
    try:
        with rec:
            out = model(*example)
    except Exception as e:
        raise OpFailed(rec.where(), rec.current_op, e) from e
    finally:
        for h in handles:
            h.remove()
    return rec, out
