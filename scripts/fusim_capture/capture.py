"""nn.Module -> fusim trace dict (traces/SCHEMA.md), and its compact JSON form.

Two paths: torch.fx (symbolic: the graph holds for any input of these shapes) and the ATen
level (aten_capture: every op as the forward ran). `path="auto"` tries fx first and falls
back to ATen where fx fails or meets an op or module fusim has no kind for.
"""
import copy
import importlib
import json
import warnings

import torch

from .builder import DTYPE_NAMES, LayerBuilder
from .errors import CaptureError, one_line
from .fx_graph import trace_module

TORCH_DTYPES = {name: dt for dt, name in DTYPE_NAMES.items() if dt.is_floating_point}
PATHS = ("auto", "fx", "aten")


class _ParamsOnMeta(torch.overrides.TorchFunctionMode):
    """torch.empty without a device makes a meta tensor. Modules allocate their parameters
    with it (nn.Linear, nn.Conv2d, nn.BatchNorm2d: `torch.empty(..., **factory_kwargs)`,
    torch/nn/modules/linear.py), so a model is built without memory and its nn.init calls
    cost nothing (vit_h_14's 632 M parameters: seconds of CPU otherwise, twice per coverage
    row); tensors made otherwise (index buffers from arange, class tokens from zeros) stay
    on the CPU. The capture reads shapes only."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func is torch.empty and kwargs.get("device") is None:
            kwargs["device"] = "meta"
        return func(*args, **kwargs)


def load_model(spec, meta=False):
    """A torchvision model name ('resnet18') or 'package.module:factory'; with meta, its
    parameters are meta tensors where the constructor allows it (_ParamsOnMeta; a
    constructor that reads their values is run again as it is)."""
    if meta:
        try:  # imports outside the mode: tensors made at import time stay what they are
            importlib.import_module(spec.split(":", 1)[0] if ":" in spec else "torchvision.models")
        except Exception:
            pass  # reported by the plain load below
        try:
            with _ParamsOnMeta():
                return load_model(spec)
        except CaptureError:
            raise
        except Exception:
            pass
    if ":" in spec:
        module_name, factory_name = spec.split(":", 1)
        try:
            module = importlib.import_module(module_name)
        except Exception as e:  # ImportError, or the module itself raising on import
            raise CaptureError(f"MODEL '{spec}': cannot import '{module_name}': "
                               f"{one_line(e)}") from e
        factory = getattr(module, factory_name, None)
        if not callable(factory):
            raise CaptureError(f"MODEL '{spec}': '{module_name}' has no factory '{factory_name}'")
        try:
            model = factory()
        except Exception as e:
            raise CaptureError(f"MODEL '{spec}': the factory raised {one_line(e)}") from e
        name = factory_name.replace("_", "-")  # gpt2_small -> gpt2-small
    else:
        import torchvision.models as tvm
        names = sorted(n for n in tvm.list_models(module=tvm)) if hasattr(tvm, "list_models") \
            else sorted(n for n in dir(tvm) if n[0].islower() and callable(getattr(tvm, n)))
        if spec not in names or not callable(getattr(tvm, spec, None)):
            raise CaptureError(f"MODEL '{spec}': not a torchvision classification model "
                               f"(one of: {', '.join(names)}) nor 'package.module:factory'")
        with warnings.catch_warnings():
            # googlenet/inception_v3 warn that their default init will change: the capture
            # reads shapes only, never the weights.
            warnings.simplefilter("ignore", FutureWarning)
            model, name = getattr(tvm, spec)(weights=None), spec
    if not isinstance(model, torch.nn.Module):
        raise CaptureError(f"MODEL '{spec}': the factory returned {type(model).__name__}, "
                           "not an nn.Module")
    return model, name


def capture(model, name, batch, input_shape, seq, dtype, source, path="auto", real_model=None):
    """Captures one training step of `model` and returns (trace dict, parameter count).

    `real_model`, where `model` holds meta tensors (load_model(meta=True)), returns it with
    values, for a forward that reads them (aten_capture).

    Image/vector models get one float input [batch, *input_shape]; token models (seq)
    get int64 inputs [batch, seq] for every forward argument (token ids, position ids).
    The loss is a cross_entropy layer on the model's output [M, classes] against an int64
    model input "target" [M]. The trace's "capture" member says which path made it.
    """
    if dtype not in TORCH_DTYPES:
        raise CaptureError(f"--dtype: expected one of {sorted(TORCH_DTYPES)}, got '{dtype}'")
    if batch < 1:
        raise CaptureError(f"--batch: expected a positive integer, got {batch}")
    if path not in PATHS:
        raise CaptureError(f"--path: expected one of {', '.join(PATHS)}, got '{path}'")
    expected = sum(p.numel() for p in model.parameters())
    names = [n for n, p in _forward_params(model)]
    if seq is None and len(names) > 1:
        names = names[:1]  # image/vector models: the data only (later args keep defaults)
    shapes = [[batch, seq]] * len(names) if seq is not None else [[batch, *input_shape]]
    dtypes = [torch.int64] * len(names) if seq is not None else [TORCH_DTYPES[dtype]]
    input_names = ["input"] + names[1:]
    fx_error = None
    if path in ("auto", "fx"):
        try:
            trace = _capture_fx(model, shapes, dtypes, input_names, dtype)
            return _finish(trace, name, batch, dtype, source, expected, "fx", "symbolic"), expected
        except CaptureError as e:
            if path == "fx":
                raise
            fx_error = e
    from .aten_capture import capture_aten
    try:
        trace, control = capture_aten(model, shapes, dtypes, input_names, dtype, real_model)
    except CaptureError as e:
        if fx_error is not None:
            fx_line = str(fx_error).strip().splitlines()[0]
            raise CaptureError(f"{e} (torch.fx could not capture it either: {fx_line})") from e
        raise
    return _finish(trace, name, batch, dtype, source, expected, "aten", control), expected


def _finish(trace, name, batch, dtype, source, expected, path, control):
    got = sum(_numel(p["shape"]) for l in trace["layers"] for p in l.get("params", []))
    if got != expected:
        raise CaptureError(f"the trace holds {got} parameter elements but the model has "
                           f"{expected}; not captured: {', '.join(trace['missing']) or 'none'} "
                           "(parameters the loss does not depend on)")
    return {"format": "fusim-trace", "version": 1, "model": name, "batch": batch,
            "dtype": dtype, "source": source, "capture": {"path": path, "control_flow": control},
            "inputs": trace["inputs"], "layers": trace["layers"]}


def meta_copy(model, dtype):
    """A copy of `model` whose parameters, buffers and tensor attributes are meta tensors of
    the trace dtype (floating ones), sharing what the original shares (tied weights stay
    tied); the original keeps its values (for the real-tensor fallback)."""
    memo = {}

    def meta(t, parameter):
        dt = dtype if t.is_floating_point() else t.dtype
        m = torch.empty(t.shape, dtype=dt, device="meta")
        if parameter:
            m = torch.nn.Parameter(m, requires_grad=t.requires_grad and dt.is_floating_point)
        return m

    for m in model.modules():
        for p in m._parameters.values():
            if p is not None and id(p) not in memo:
                memo[id(p)] = meta(p, True)
        for b in m._buffers.values():
            if b is not None and id(b) not in memo:
                memo[id(b)] = meta(b, False)
        for v in vars(m).values():
            if isinstance(v, torch.Tensor) and id(v) not in memo:
                memo[id(v)] = meta(v, False)
    try:
        return copy.deepcopy(model, memo)
    except Exception as e:
        raise CaptureError(f"cannot copy the model onto meta tensors: {e}") from e


def _capture_fx(model, shapes, dtypes, input_names, dtype):
    tied = _tied_parameters(model)
    meta = meta_copy(model, TORCH_DTYPES[dtype]).train()
    example = [torch.empty(s, dtype=d, device="meta") if d.is_floating_point
               else torch.zeros(s, dtype=d, device="meta") for s, d in zip(shapes, dtypes)]
    names = [n for n, _ in _forward_params(meta)]
    if len(names) != len(example):
        raise CaptureError(f"the model's forward takes {len(names)} inputs "
                           f"({', '.join(names)}); torch.fx needs all of them as tensors")
    gm, values = trace_module(meta, example)
    builder = LayerBuilder(gm, values, dtype, tied)
    out = builder.build(input_names)
    if not builder.is_tensor(out):
        raise CaptureError("the model's output must be one tensor of logits [M, classes], "
                           f"got {out!r}")
    logits = builder.shape(out)
    if len(logits) != 2:
        raise CaptureError(f"the model's output (fx node '{out.name}') has shape {logits}; "
                           "cross_entropy needs logits [M, classes] (reshape [B, S, V] "
                           "to [B*S, V] inside the model)")
    builder.inputs.append({"name": "target", "shape": [logits[0]], "dtype": "int64"})
    builder.layers.append({"id": len(builder.layers), "name": "loss", "op": "cross_entropy",
                           "attrs": {}, "inputs": [builder.ref(out, out), "target"],
                           "output": []})
    missing = sorted(n for n, _ in model.named_parameters() if n not in builder.param_owner)
    return {"inputs": builder.inputs, "layers": builder.layers, "missing": missing}


def _tied_parameters(model):
    """{name: first name} for parameters that are the same tensor as an earlier one."""
    first, tied = {}, {}
    for module_name, module in model.named_modules():
        for pname, p in module._parameters.items():
            if p is None:
                continue
            name = f"{module_name}.{pname}" if module_name else pname
            if id(p) in first and first[id(p)] != name:
                tied[name] = first[id(p)]
            first.setdefault(id(p), name)
    return tied


def _forward_params(model):
    import inspect
    sig = inspect.signature(model.forward)
    return [(n, p) for n, p in sig.parameters.items()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def to_compact_json(trace):
    """One header line per top-level field, one line per layer: small and diffable."""
    dump = lambda v: json.dumps(v, separators=(",", ":"))
    keys = [k for k in ("format", "version", "model", "batch", "dtype", "source", "capture")
            if k in trace]
    head = ",".join(f"{dump(k)}:{dump(trace[k])}" for k in keys)
    lines = ["{" + head + ",", ' "inputs":' + dump(trace["inputs"]) + ",", ' "layers":[']
    lines += ["  " + dump(l) + ("," if i + 1 < len(trace["layers"]) else "")
              for i, l in enumerate(trace["layers"])]
    lines.append(" ]}")
    return "\n".join(lines) + "\n"
