#!/usr/bin/python3
"""scripts/capture_trace.py end to end (CTest label `capture`).

Captures torchvision and fusim_models networks at small sizes, checks that each trace's
params are exactly the model's (names, shapes, sum(p.numel())) and that
`fusim trace validate` accepts every file; then the command line itself: the recorded
`source`, and exit code 2 with a message naming the fx node for models it cannot map.
Usage: capture_test.py FUSIM_BINARY SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

FUSIM, ROOT = sys.argv[1], sys.argv[2]
SCRIPTS = os.path.join(ROOT, "scripts")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [SCRIPTS, HERE]

import torchvision.models as tvm  # noqa: E402

import fusim_models  # noqa: E402
from fusim_capture.capture import capture, to_compact_json  # noqa: E402

# (name, factory, batch, input shape, seq)
MODELS = [
    ("resnet18", lambda: tvm.resnet18(weights=None), 2, [3, 64, 64], None),
    ("mobilenet_v2", lambda: tvm.mobilenet_v2(weights=None), 2, [3, 64, 64], None),
    ("vgg11", lambda: tvm.vgg11(weights=None), 2, [3, 32, 32], None),
    ("bert_tiny", fusim_models.bert_tiny, 2, None, 16),
    ("gpt2_tiny", fusim_models.gpt2_tiny, 2, None, 16),
]


def run(args, cwd=ROOT):
    env = dict(os.environ, PYTHONPATH=HERE)
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


class CaptureModels(unittest.TestCase):
    def test_params_are_the_models_and_traces_validate(self):
        with tempfile.TemporaryDirectory() as tmp:
            files = []
            for name, factory, batch, shape, seq in MODELS:
                with self.subTest(model=name):
                    model = factory()
                    expected = {n: list(p.shape) for n, p in model.named_parameters()}
                    numel = sum(p.numel() for p in model.parameters())
                    trace, counted = capture(model, name, batch, shape, seq, "float32", "test")
                    got = {p["name"]: p["shape"] for l in trace["layers"]
                           for p in l.get("params", [])}
                    self.assertEqual(got, expected)
                    self.assertEqual(counted, numel)
                    self.assertEqual(sum(_numel(s) for s in got.values()), numel)
                    self.assertEqual(trace["layers"][-1]["op"], "cross_entropy")
                    if name == "vgg11":
                        # Five 2x2 pools take 32 px to 1; the adaptive pool makes it 7x7.
                        by_name = {l["name"]: l for l in trace["layers"]}
                        self.assertEqual(by_name["features.20"]["output"], [2, 512, 1, 1])
                        self.assertEqual(by_name["avgpool"]["output"], [2, 512, 7, 7])
                        self.assertEqual(by_name["flatten"]["output"], [2, 25088])
                    path = os.path.join(tmp, name + ".json")
                    with open(path, "w") as f:
                        f.write(to_compact_json(trace))
                    files.append(path)
            result = run([FUSIM, "trace", "validate"] + files)
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
            for path in files:
                self.assertIn(f"{path}: ok", result.stdout)


class CaptureCommandLine(unittest.TestCase):
    def test_mlp_records_its_command(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "mlp.json")
            cmd = ["scripts/capture_trace.py", "fusim_models:mlp", "--batch", "4",
                   "--input-shape", "784", "-o", out]
            result = run(cmd)
            self.assertEqual(result.returncode, 0, result.stderr)
            with open(out) as f:
                lines = f.read().splitlines()
            trace = json.loads("\n".join(lines))
            self.assertEqual(trace["source"], " ".join(cmd))
            self.assertEqual(trace["model"], "mlp")
            self.assertEqual([l["op"] for l in trace["layers"]],
                             ["linear", "relu", "linear", "relu", "linear", "cross_entropy"])
            self.assertEqual(trace["inputs"][1], {"name": "target", "shape": [4], "dtype": "int64"})
            self.assertEqual(len(lines), 3 + 6 + 1)  # compact: one layer per line

    def expect_error(self, args, fragment):
        with tempfile.TemporaryDirectory() as tmp:
            result = run(["scripts/capture_trace.py"] + args + ["-o", os.path.join(tmp, "x.json")])
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(fragment, result.stderr)

    def test_unmappable_node_is_named(self):
        self.expect_error(["capture_test_models:mean_pool", "--input-shape", "8"],
                          "fx node 'mean' (call_method mean): no fusim op for it")

    def test_tied_weights_are_refused(self):
        self.expect_error(["capture_test_models:tied_lm", "--seq", "8"],
                          "parameter 'lm_head.weight' is the same tensor as 'tok.weight'")

    def test_logits_must_be_two_dimensional(self):
        self.expect_error(["capture_test_models:no_reshape", "--batch", "2", "--seq", "8"],
                          "(fx node 'fc') has shape [2, 8, 10]; cross_entropy needs logits "
                          "[M, classes]")

    def test_unknown_model(self):
        self.expect_error(["resnet19"], "MODEL 'resnet19': not a torchvision classification model")

    def test_bad_batch(self):
        self.expect_error(["resnet18", "--batch", "0"], "expected a positive integer, got '0'")


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
