"""nn.Module -> fusim trace dict (traces/SCHEMA.md), and its compact JSON form."""
import importlib
import json

import torch

from .builder import DTYPE_NAMES, LayerBuilder
from .errors import CaptureError
from .fx_graph import trace_module

TORCH_DTYPES = {name: dt for dt, name in DTYPE_NAMES.items() if dt.is_floating_point}


def load_model(spec):
    """A torchvision model name ('resnet18') or 'package.module:factory'."""
    if ":" in spec:
        module_name, factory_name = spec.split(":", 1)
        try:
            module = importlib.import_module(module_name)
        except ImportError as e:
            raise CaptureError(f"MODEL '{spec}': cannot import '{module_name}': {e}") from e
        factory = getattr(module, factory_name, None)
        if not callable(factory):
            raise CaptureError(f"MODEL '{spec}': '{module_name}' has no factory '{factory_name}'")
        model, name = factory(), factory_name.replace("_", "-")  # gpt2_small -> gpt2-small
    else:
        import torchvision.models as tvm
        names = sorted(n for n in tvm.list_models(module=tvm)) if hasattr(tvm, "list_models") \
            else sorted(n for n in dir(tvm) if n[0].islower() and callable(getattr(tvm, n)))
        if spec not in names or not callable(getattr(tvm, spec, None)):
            raise CaptureError(f"MODEL '{spec}': not a torchvision classification model "
                               f"(one of: {', '.join(names)}) nor 'package.module:factory'")
        model, name = getattr(tvm, spec)(weights=None), spec
    if not isinstance(model, torch.nn.Module):
        raise CaptureError(f"MODEL '{spec}': the factory returned {type(model).__name__}, "
                           "not an nn.Module")
    return model, name


def capture(model, name, batch, input_shape, seq, dtype, source):
    """Traces `model` in training mode on meta tensors and returns the trace as a dict.

    Image/vector models get one float input [batch, *input_shape]; token models (seq)
    get int64 inputs [batch, seq] for every forward argument (token ids, position ids).
    The loss is a cross_entropy layer on the model's output [M, classes] against an int64
    model input "target" [M].
    """
    if dtype not in TORCH_DTYPES:
        raise CaptureError(f"--dtype: expected one of {sorted(TORCH_DTYPES)}, got '{dtype}'")
    if batch < 1:
        raise CaptureError(f"--batch: expected a positive integer, got {batch}")
    params = {id(p): p for p in model.parameters()}
    expected_params = sum(p.numel() for p in params.values())
    tied = _tied_parameters(model)
    model = model.to(device="meta", dtype=TORCH_DTYPES[dtype]).train()

    placeholders = [n for n, p in _forward_params(model)]
    if seq is not None:
        example = [torch.zeros(batch, seq, dtype=torch.int64, device="meta") for _ in placeholders]
    else:
        example = [torch.empty(batch, *input_shape, dtype=TORCH_DTYPES[dtype], device="meta")]
    gm, values = trace_module(model, example)
    builder = LayerBuilder(gm, values, dtype, tied)
    input_names = ["input"] + [n for n in placeholders[1:]]
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

    got = sum(_numel(p["shape"]) for l in builder.layers for p in l.get("params", []))
    if got != expected_params:
        missing = sorted(n for n, _ in model.named_parameters() if n not in builder.param_owner)
        raise CaptureError(f"the trace holds {got} parameter elements but the model has "
                           f"{expected_params}; not captured: {', '.join(missing) or 'none'}")
    return {"format": "fusim-trace", "version": 1, "model": name, "batch": batch,
            "dtype": dtype, "source": source, "inputs": builder.inputs,
            "layers": builder.layers}, expected_params


def _tied_parameters(model):
    """{name: first name} for parameters that are the same tensor as an earlier one.

    Recorded before the move to meta, which gives each module its own copy and so would
    hide the tying (e.g. an LM head sharing the token embedding's weight).
    """
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
    head = ",".join(f"{dump(k)}:{dump(trace[k])}"
                    for k in ("format", "version", "model", "batch", "dtype", "source"))
    lines = ["{" + head + ",", ' "inputs":' + dump(trace["inputs"]) + ",", ' "layers":[']
    lines += ["  " + dump(l) + ("," if i + 1 < len(trace["layers"]) else "")
              for i, l in enumerate(trace["layers"])]
    lines.append(" ]}")
    return "\n".join(lines) + "\n"
