#!/usr/bin/python3
"""Captured torchvision models run a training step in the libtorch backend (CTest label
`capture`): the ATen path's generic and parameter layers execute F, Bx, Bw and U in
`fusim run`, like the dedicated kinds do.

Twelve models at batch 2 (batch norm needs two values per channel) and a small resolution (CI time: the full table at 224x224 is
scripts/capture_coverage.py), each two measured eager steps with Adam; swin_t also in the
fused orderings. Only that the runs complete is checked here: the math of every ordering
against one autograd graph is tests/backend/ordering_equivalence_test.cpp.
Usage: capture_backend_test.py FUSIM_BINARY SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest
import warnings

FUSIM, ROOT = sys.argv[1], sys.argv[2]
sys.path[:0] = [os.path.join(ROOT, "scripts")]

import torchvision.models as tvm  # noqa: E402

from fusim_capture.capture import capture, to_compact_json  # noqa: E402

# (model, resolution, expected path): the smallest inputs each takes in training mode.
MODELS = [
    ("resnet18", 32, "fx"), ("mobilenet_v2", 32, "fx"), ("squeezenet1_1", 64, "fx"),
    ("regnet_x_400mf", 32, "fx"), ("densenet121", 32, "fx"),
    ("mobilenet_v3_small", 32, "aten"), ("shufflenet_v2_x0_5", 32, "aten"),
    ("mnasnet0_5", 32, "aten"), ("efficientnet_b0", 32, "aten"), ("googlenet", 32, "aten"),
    ("convnext_tiny", 32, "aten"), ("swin_t", 32, "aten"),
]


def run_step(path, orderings="eager"):
    r = subprocess.run([FUSIM, "run", "--trace", path, "--ordering", orderings, "--optimizer",
                        "adam", "--measured-steps", "2", "--warmup", "0", "--steps-per-block",
                        "2", "--max-time", "0", "--threads", "1", "--json"],
                       capture_output=True, text=True, timeout=600)
    return r


class CapturedModelsRunInTheBackend(unittest.TestCase):
    def test_twelve_torchvision_models_run_a_step(self):
        tmp = tempfile.mkdtemp()
        for name, size, path in MODELS:
            with self.subTest(model=name):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", FutureWarning)
                    model = getattr(tvm, name)(weights=None)
                trace, _ = capture(model, name, 2, [3, size, size], None, "float32", "test")
                self.assertEqual(trace["capture"]["path"], path)
                file = os.path.join(tmp, name + ".json")
                with open(file, "w") as f:
                    f.write(to_compact_json(trace))
                orderings = "all" if name == "swin_t" else "eager"
                r = run_step(file, orderings)
                self.assertEqual(r.returncode, 0, r.stderr[-2000:])
                results = json.loads(r.stdout)["results"]
                self.assertEqual(len(results), 3 if orderings == "all" else 1)
                for res in results:
                    self.assertEqual(res["steps_measured"], 2)
                    self.assertGreater(res["step_time_ms"], 0)
                print(f"{name}: {len(trace['layers'])} layers ({path}) ran", file=sys.stderr)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
