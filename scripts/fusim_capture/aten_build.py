"""Recorded ATen ops -> fusim layers (traces/SCHEMA.md), as the forward ran.

- A call of a module with a dedicated fusim op (module_ops: Conv2d, Linear, BatchNorm...)
  becomes one layer with the module's own parameters, when the call is self-contained:
  it reads only its inputs, its own parameters and buffers and tensors it makes, nothing
  it makes is read after it, and its parameters are used nowhere else.
- Every other ATen op becomes a layer of its own (aten_ops: dedicated kinds where one
  fits, else a generic kind), named after the innermost module running it.
- A parameter read by ATen ops is the output of a `parameter` layer (a view of it): its
  consumers' gradients add up there, so shared and tied parameters train once.
- In-place ops make a new value of the tensor they write (SSA); a write through a view
  also makes a new value of its base, and a read of another view made before the write
  re-reads it from the base (version counters tell which values moved).
- Layers are made lazily; only those the loss depends on are written, in op order.
"""
import torch

from . import aten_ops, module_ops
from .builder import DTYPE_NAMES
from .errors import CaptureError


class Node:
    """A layer in the making; its inputs are Nodes or model input names."""

    def __init__(self, seq, name, op, attrs, inputs, shape, dtype, params=(), buffers=()):
        self.seq, self.name, self.op, self.attrs = seq, name, op, attrs
        self.inputs, self.shape, self.dtype = inputs, shape, dtype
        self.params, self.buffers = list(params), list(buffers)  # (name, tensor)


class AtenBuilder:
    def __init__(self, recorder, trace_dtype, param_names, buffer_names, input_names):
        self.rec = recorder
        self.trace_dtype = trace_dtype
        self.param_names, self.buffer_names = param_names, buffer_names  # id -> name
        self.values = {}       # id(tensor) -> (Node | input name, version)
        self.sources = {}      # id(param or buffer) -> its parameter Node
        self.param_views = {}  # id(view of a parameter) -> (param tensor, view record)
        self.nodes = []
        self.seq = 0
        self.current = None    # the record being converted (for messages)
        self.where = "the model's forward"  # the module call being converted (for messages)
        self.input_names = input_names

    # ---- planning: which module calls become one layer ----
    def plan(self):
        ops = self.rec.ops
        produced_at, last_read = {}, {}
        for r in ops:
            for _, t in r.tensor_args():
                last_read[id(t)] = r.index
            for t in r.outputs():
                produced_at.setdefault(id(t), r.index)
        self.last_read = last_read
        candidates = [c for c in self.rec.calls if self._collapsible(c, produced_at, last_read)]
        while True:
            collapsed = self._outermost(candidates)
            self.uses = self._count_uses(collapsed)
            shared = [c for c in collapsed
                      if any(self.uses.get(id(t), 0) > 1 for t in self._own(c.module))]
            if not shared:
                break
            candidates = [c for c in candidates if c not in shared]
        self.collapsed = collapsed

    def _collapsible(self, call, produced_at, last_read):
        m, out = call.module, call.output
        try:
            entry = module_ops.find(m)
        except module_ops.Unsupported:
            return False
        if entry is None or not isinstance(out, torch.Tensor):
            return False
        cls, _ = entry
        if not getattr(m, "fusim_op", None) and type(m).forward is not cls.forward:
            return False  # a subclass with its own forward: record what it does
        try:
            spec = module_ops.layer_spec(m, list(out.shape))
        except module_ops.Unsupported:
            return False
        n_in = 1 if isinstance(spec, module_ops.Alias) else spec.inputs
        if len(call.args) != n_in or not all(isinstance(a, torch.Tensor) for a in call.args):
            return False
        outside = {id(a) for a in call.args}
        own = {id(t) for t in self._own(m)}
        inside = set()
        for r in self.rec.ops[call.start:call.end]:
            for pos, t in r.tensor_args():
                if id(t) not in inside and id(t) not in outside and id(t) not in own:
                    return False  # reads a tensor from elsewhere
            for pos in r.mutated_positions():
                t = r.args[pos]
                if id(t) in outside and t is not out:
                    return False  # writes its input in place but returns something else
            inside.update(id(t) for t in r.outputs())
        for r in self.rec.ops[call.start:call.end]:
            for t in r.outputs():
                if t is not out and last_read.get(id(t), -1) >= call.end:
                    return False  # a tensor it makes is read after it
        call.spec = spec
        return True

    @staticmethod
    def _own(module):
        return [t for t in list(module.parameters(recurse=False)) +
                list(module.buffers(recurse=False)) if t is not None]

    @staticmethod
    def _outermost(candidates):
        chosen, end = [], -1
        for c in sorted(candidates, key=lambda c: (c.start, -c.end)):
            if c.start >= end or c.start == c.end:
                if c.start == c.end and c.start < end:
                    continue  # inside an already collapsed call
                chosen.append(c)
                end = max(end, c.end)
        return chosen

    def _count_uses(self, collapsed):
        uses = {}
        inside = set()
        for c in collapsed:
            inside.update(range(c.start, c.end))
            for t in {id(a): a for a in c.args}.values():
                uses[id(t)] = uses.get(id(t), 0) + 1
            for t in self._own(c.module):
                uses[id(t)] = uses.get(id(t), 0) + 1
        for r in self.rec.ops:
            if r.index in inside:
                continue
            for t in {id(t): t for _, t in r.tensor_args()}.values():
                uses[id(t)] = uses.get(id(t), 0) + 1
        return uses

    # ---- the walk ----
    def build(self, inputs):
        for name, t in zip(self.input_names, inputs):
            self.values[id(t)] = (name, t._version)
        starts = {}
        for c in self.collapsed:
            starts.setdefault(c.start, []).append(c)
        ops, i = self.rec.ops, 0
        while i <= len(ops):
            jump = None
            for c in starts.get(i, []):
                self._module_layer(c)
                if c.end > c.start:
                    jump = c.end
            if jump is not None:
                i = jump
                continue
            if i < len(ops):
                self.current = ops[i]
                self._op(ops[i])
            i += 1
        self.current = None

    def _module_layer(self, call):
        self.current = None
        spec, out = call.spec, call.output
        self.where = call.describe()
        if isinstance(spec, module_ops.Alias):
            self.values[id(out)] = (self.ref(call.args[0], call.in_versions),
                                    call.out_versions.get(id(out), out._version))
            return
        inputs = [self.ref(a, call.in_versions) for a in call.args]
        node = self.new_node(call.path, spec.op, spec.attrs, inputs, out, shape=call.out_shape,
                             params=[(self.param_names[id(t)], t) for _, t in spec.params],
                             buffers=[(self.buffer_names[id(t)], t) for _, t in spec.buffers])
        self.values[id(out)] = (node, call.out_versions.get(id(out), out._version))

    def _op(self, r):
        self.where = r.call.describe() if r.call else "the model's forward"
        if not r.outputs():
            return  # sizes, scalars: Python-level values, no layer
        mutated = [r.args[pos] for pos in r.mutated_positions()]
        for t in mutated:
            if id(t) in self.param_names or (t._base is not None and
                                              id(t._base) in self.param_names):
                name = self.param_names.get(id(t)) or self.param_names[id(t._base)]
                self.fail(r, f"writes parameter '{name}' in place (a trained parameter "
                             "changes only in the optimizer update)")
        aten_ops.convert(self, r)
        for t in mutated:
            if t._base is not None and id(t) in self.values:
                self._write_back(r, t)

    def _write_back(self, r, view):
        """view was written in place: its base's new value holds it (a copy into the base)."""
        base = view._base
        old = self.ref(base, {id(base): r.in_versions.get(id(view), base._version)})
        new = self.values[id(view)][0]
        node = self.new_node(self._name("write_back"), "generic_data_movement",
                             {"aten": r.name + " (written through a view into its base)"},
                             [old, new], base, shape=list(base.shape))
        self.values[id(base)] = (node, r.out_versions.get(id(view), base._version))

    # ---- helpers used by aten_ops ----
    def path(self, r):
        return r.call.path if r.call and r.call.path else ""

    def fail(self, r, why):
        op = f", {r.name}" if r is not None else ""
        raise CaptureError(f"{self.where}{op}: {why}")

    def dtype(self, t):
        if t.dtype not in DTYPE_NAMES:
            self.fail(self.current, f"dtype {t.dtype} is not one of "
                                    f"{sorted(DTYPE_NAMES.values())}")
        return DTYPE_NAMES[t.dtype]

    def new_node(self, name, op, attrs, inputs, out=None, shape=None, dtype=None, params=(),
                 buffers=()):
        shape = shape if shape is not None else list(out.shape)
        dtype = self.dtype(out) if out is not None else dtype
        self.seq += 1
        node = Node(self.seq, name, op, attrs, inputs, shape, dtype, params, buffers)
        self.nodes.append(node)
        return node

    def produce(self, r, out, op, attrs, inputs, suffix=None, **kw):
        """A layer computing `out` from `inputs` (tensors or refs), for record r."""
        refs = [self.ref(t, r.in_versions) if isinstance(t, torch.Tensor) else t for t in inputs]
        short = suffix or r.packet.rstrip("_")
        prefix = self.path(r)
        if out is not None:
            kw.setdefault("shape", r.out_shapes.get(id(out)))
        node = self.new_node(f"{prefix}.{short}" if prefix else short, op, attrs, refs, out, **kw)
        if out is not None:
            self.values[id(out)] = (node, r.out_versions.get(id(out), out._version))
        return node

    def alias(self, r, out, src):
        self.values[id(out)] = (self.ref(src, r.in_versions), r.out_versions.get(id(out)))

    def is_param(self, t):
        return isinstance(t, torch.Tensor) and id(t) in self.param_names

    def ref(self, t, versions):
        """The layer (or model input) holding t's current value."""
        key = id(t)
        if key in self.values:
            ref, version = self.values[key]
            now = versions.get(key, t._version)
            if version is None or version == now:
                return ref
            if t._base is not None and id(t._base) in self.values:
                return self._reread(t, versions)
            self.fail(self.current, "reads a tensor written in place through an alias the "
                                    "capture cannot follow")
        if key in self.param_names or key in self.buffer_names:
            return self._source(t)
        if t._base is not None and id(t._base) in self.values:
            return self._reread(t, versions)
        # A tensor the forward did not make: a plain tensor attribute of a module.
        self.seq += 1
        node = Node(self.seq, self._name("constant"), "generic_data_movement",
                    {"aten": "constant read by the forward"}, [], list(t.shape), self.dtype(t))
        self.nodes.append(node)
        self.values[key] = (node, None)
        return node

    def _reread(self, view, versions):
        base = self.ref(view._base, versions)
        self.seq += 1
        node = Node(self.seq, self._name("reread"), "generic_data_movement",
                    {"aten": "view re-read from its base after an in-place write"}, [base],
                    list(view.shape), self.dtype(view))
        self.nodes.append(node)
        return node

    def _name(self, short):
        r = self.current
        prefix = self.path(r) if r is not None else ""
        return f"{prefix}.{short}" if prefix else short

    def _source(self, t):
        """The `parameter` layer of a parameter or buffer (one per tensor, shared)."""
        key = id(t)
        if key not in self.sources:
            self.seq += 1
            if key in self.param_names:
                name = self.param_names[key]
                node = Node(self.seq, name, "parameter", {}, [], list(t.shape), self.dtype(t),
                            params=[(name, t)])
            else:
                name = self.buffer_names[key]
                node = Node(self.seq, name, "parameter", {}, [], list(t.shape), self.dtype(t),
                            buffers=[(name, t)])
            self.nodes.append(node)
            self.sources[key] = node
        return self.sources[key]

    # ---- the result ----
    def output_ref(self, t):
        self.current, self.where = None, "the model's output"
        return self.ref(t, {id(t): t._version})

    def live_nodes(self, sink):
        """Nodes the sink depends on, in op order (a topological order)."""
        live, stack = set(), [sink]
        while stack:
            n = stack.pop()
            if id(n) in live:
                continue
            live.add(id(n))
            stack.extend(i for i in n.inputs if isinstance(i, Node))
        return sorted((n for n in self.nodes if id(n) in live), key=lambda n: n.seq)
