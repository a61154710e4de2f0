"""The ATen-level capture: record the forward (aten_record), build layers (aten_build).

The forward runs on meta tensors, so Python control flow that depends on shapes (or on
the training flag) is captured as it ran for these input shapes. A forward that reads a
tensor's value (`if x.sum() > 0`, `.item()`, `nonzero`) cannot run on meta tensors; it is
run again on real CPU tensors (data N(0, 1) from seed 0, token ids 0) and captured as it
ran for those values. The trace's capture.control_flow says which ("as-run-shapes",
"as-run-values").
"""
import torch

from .aten_build import AtenBuilder, Node
from .aten_record import OpFailed, record
from .builder import DTYPE_NAMES
from .capture import TORCH_DTYPES, meta_copy
from .errors import CaptureError, one_line


def _names(model):
    """id -> canonical name (first one, as model.named_parameters() dedupes) of every
    parameter and buffer."""
    params, buffers = {}, {}
    for mname, m in model.named_modules():
        for pname, p in m._parameters.items():
            if p is not None:
                params.setdefault(id(p), f"{mname}.{pname}" if mname else pname)
        for bname, b in m._buffers.items():
            if b is not None:
                buffers.setdefault(id(b), f"{mname}.{bname}" if mname else bname)
    return params, buffers


def _needs_values(error):
    text = str(error)
    return isinstance(error, NotImplementedError) and "'Meta' backend" in text


def _run(model, shapes, dtypes, device):
    gen = torch.Generator().manual_seed(0)
    example = []
    for s, d in zip(shapes, dtypes):
        if d.is_floating_point:
            x = torch.randn(s, generator=gen).to(d) if device == "cpu" else \
                torch.empty(s, dtype=d, device=device)
        else:
            x = torch.zeros(s, dtype=d, device=device)
        example.append(x)
    recorder, out = record(model, example)
    return recorder, out, example


def capture_aten(model, shapes, dtypes, input_names, dtype, real_model=None):
    meta = meta_copy(model, TORCH_DTYPES[dtype]).train()
    control = "as-run-shapes"
    try:
        rec, out, example = _run(meta, shapes, dtypes, "meta")
        target = meta
    except OpFailed as e:
        if not _needs_values(e.error):
            raise _failure(e) from e
        control = "as-run-values"
        target = (real_model() if real_model is not None else model)
        target = target.to(dtype=TORCH_DTYPES[dtype]).train()
        try:
            rec, out, example = _run(target, shapes, dtypes, "cpu")
        except OpFailed as e2:
            raise _failure(e2) from e2
    params, buffers = _names(target)
    b = AtenBuilder(rec, dtype, params, buffers, input_names)
    try:
        b.plan()
        b.build(example)
        return _layers(b, out, example, input_names, dtype, params), control
    except CaptureError:
        raise
    except Exception as e:  # an op form the tables do not expect: name where it ran
        op = f", {b.current.name}" if b.current is not None else ""
        raise CaptureError(f"{b.where}{op}: cannot convert it: {one_line(e)}") from e


def _failure(e):
    op = f", {e.op}" if e.op is not None else ""
    return CaptureError(f"{e.where}{op}: {one_line(e.error)}")


def _logits(b, out):
    """The model's logits: one tensor, or several [M_i, C] heads (GoogLeNet's and
    Inception's auxiliary classifiers in training mode) concatenated along dim 0, so that
    one cross_entropy does the work of one loss per head."""
    if isinstance(out, torch.Tensor):
        heads = [out]
    elif isinstance(out, (tuple, list)):
        heads = [t for t in out if t is not None]
    else:
        heads = [out]
    if not heads or not all(isinstance(t, torch.Tensor) for t in heads):
        raise CaptureError("the model's output must be a tensor of logits [M, classes] (or a "
                           f"tuple of them), got {type(out).__name__}")
    for t in heads:
        if t.dim() != 2 or not t.dtype.is_floating_point:
            raise CaptureError(f"the model's output has shape {list(t.shape)} ({t.dtype}); "
                               "cross_entropy needs floating logits [M, classes] (reshape "
                               "[B, S, V] to [B*S, V] inside the model)")
    if len({t.shape[1] for t in heads}) != 1:
        raise CaptureError("the model's outputs have different class counts "
                           f"{[list(t.shape) for t in heads]}; one loss needs one")
    refs = [b.output_ref(t) for t in heads]
    if any(not isinstance(r, Node) for r in refs):
        raise CaptureError("the model returns one of its inputs as logits")
    if len(refs) == 1:
        return refs[0], list(heads[0].shape)
    shape = [sum(t.shape[0] for t in heads), heads[0].shape[1]]
    b.seq += 1
    node = Node(b.seq, "heads", "concat", {"dim": 0}, refs, shape, DTYPE_NAMES[heads[0].dtype])
    b.nodes.append(node)
    return node, shape


def _layers(b, out, example, input_names, dtype, param_names):
    logits, shape = _logits(b, out)
    b.seq += 1
    loss = Node(b.seq, "loss", "cross_entropy", {}, [logits, "target"], [], dtype)
    b.nodes.append(loss)
    live = b.live_nodes(loss)
    ids, names, layers = {}, {}, []
    for n in live:
        ids[id(n)] = len(layers)
        uses = names.get(n.name, 0)
        names[n.name] = uses + 1
        layer = {"id": len(layers), "name": n.name if uses == 0 else f"{n.name}_{uses}",
                 "op": n.op, "attrs": n.attrs,
                 "inputs": [ids[id(i)] if isinstance(i, Node) else i for i in n.inputs],
                 "output": [int(d) for d in n.shape]}
        if n.dtype != dtype:
            layer["output_dtype"] = n.dtype
        if n.params:
            layer["params"] = [_spec(name, t, dtype, True) for name, t in n.params]
        if n.buffers:
            layer["buffers"] = [_spec(name, t, dtype, False) for name, t in n.buffers]
        layers.append(layer)
    used = {i for l in layers for i in l["inputs"] if isinstance(i, str)}
    inputs = []
    for name, t in zip(input_names, example):
        if name == "input" or name in used:
            spec = {"name": name, "shape": list(t.shape)}
            if DTYPE_NAMES[t.dtype] != dtype:
                spec["dtype"] = DTYPE_NAMES[t.dtype]
            inputs.append(spec)
    inputs.append({"name": "target", "shape": [shape[0]], "dtype": "int64"})
    held = {p["name"] for l in layers for p in l.get("params", [])}
    missing = sorted(set(param_names.values()) - held)
    return {"inputs": inputs, "layers": layers, "missing": missing}


def _spec(name, t, trace_dtype, trained):
    spec = {"name": name, "shape": list(t.shape)}
    dt = DTYPE_NAMES.get(t.dtype)
    if dt is None:
        raise CaptureError(f"tensor '{name}': dtype {t.dtype} is not one of "
                           f"{sorted(DTYPE_NAMES.values())}")
    if dt != trace_dtype:
        spec["dtype"] = dt
    if not trained or not t.requires_grad:
        spec["requires_grad"] = False
    return spec
