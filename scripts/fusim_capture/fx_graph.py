"""Symbolic tracing of a module with torch.fx and one pass over it on meta tensors.

The pass records every node's value: tensors keep their shape and dtype (meta tensors
hold no data, so batch 32 at 224x224 costs nothing), and non-tensor nodes (x.size(1),
x.shape) keep their concrete value so that ops using them as arguments can be resolved.
"""
import torch
import torch.fx as fx

from .errors import CaptureError


class FusimTracer(fx.Tracer):
    """torch.fx's tracer, plus: modules carrying a `fusim_op` attribute are leaves.

    That lets a model hand fusim one fused op (e.g. a whole attention block written as
    matmul/softmax/matmul inside) instead of its parts.
    """

    def is_leaf_module(self, m, module_qualified_name):
        if getattr(m, "fusim_op", None):
            return True
        return super().is_leaf_module(m, module_qualified_name)


class ValueRecorder(fx.Interpreter):
    """Runs the graph and keeps each node's result (tensors are meta: shape and dtype only)."""

    def __init__(self, module):
        super().__init__(module, garbage_collect_values=False)
        self.values = {}

    def run_node(self, n):
        try:
            result = super().run_node(n)
        except Exception as e:  # a shape error surfaces here; name the node
            raise CaptureError(f"fx node '{n.name}' ({n.op} {n.target}): running it on "
                               f"meta tensors failed: {e}") from e
        self.values[n] = result
        return result


def trace_module(model, example_inputs):
    """Returns (GraphModule, {node: value}) for `model` called on `example_inputs`."""
    try:
        graph = FusimTracer().trace(model)
    except Exception as e:
        raise CaptureError(f"torch.fx cannot trace {type(model).__name__}: {e} "
                           "(data-dependent control flow? write the block from traceable "
                           "modules or mark it as a leaf with a `fusim_op` attribute)") from e
    gm = fx.GraphModule(model, graph)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(example_inputs):
        names = ", ".join(n.target for n in placeholders)
        raise CaptureError(f"the model's forward takes {len(placeholders)} inputs ({names}); "
                           f"the capture builds {len(example_inputs)}")
    recorder = ValueRecorder(gm)
    with torch.no_grad():
        recorder.run(*example_inputs)
    return gm, recorder.values
