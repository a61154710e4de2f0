#!/usr/bin/python3
"""scripts/capture_trace.py end to end (CTest label `capture`).

Captures torchvision, fusim_models and torch.nn-block networks at small sizes on both
paths (torch.fx, and the ATen level where fx cannot), checks that each trace's params are
exactly the model's (names, shapes, sum(p.numel())) and that `fusim trace validate`
accepts every file; then the ATen path's rules (in-place ops and views, shared and tied
parameters, value-dependent control flow, the op -> kind table on hand-worked cases) and
the command line: the recorded `source`, and exit code 2 with one line naming the module
and the op for models it cannot capture, never a traceback.
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

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torchvision.models as tvm  # noqa: E402

import capture_test_models as ctm  # noqa: E402
import fusim_models  # noqa: E402
from fusim_capture.capture import capture, to_compact_json  # noqa: E402

# (name, factory, batch, input shape, seq, expected path)
MODELS = [
    ("resnet18", lambda: tvm.resnet18(weights=None), 2, [3, 64, 64], None, "fx"),
    ("mobilenet_v2", lambda: tvm.mobilenet_v2(weights=None), 2, [3, 64, 64], None, "fx"),
    ("vgg11", lambda: tvm.vgg11(weights=None), 2, [3, 32, 32], None, "fx"),
    ("densenet121", lambda: tvm.densenet121(weights=None), 2, [3, 32, 32], None, "fx"),
    ("bert_tiny", fusim_models.bert_tiny, 2, None, 16, "fx"),
    ("gpt2_tiny", fusim_models.gpt2_tiny, 2, None, 16, "fx"),
    ("efficientnet_b0", lambda: tvm.efficientnet_b0(weights=None), 2, [3, 64, 64], None, "aten"),
    ("convnext_tiny", lambda: tvm.convnext_tiny(weights=None), 2, [3, 64, 64], None, "aten"),
    ("swin_t", lambda: tvm.swin_t(weights=None), 2, [3, 64, 64], None, "aten"),
    ("googlenet", lambda: tvm.googlenet(weights=None, init_weights=False), 2, [3, 64, 64],
     None, "aten"),
    ("transformer_encoder", fusim_models.transformer_encoder_classifier, 2, None, 8, "aten"),
    ("mha", fusim_models.mha_classifier, 2, [8, 64], None, "aten"),
    ("lstm", fusim_models.lstm_classifier, 2, None, 4, "aten"),
    ("gru", fusim_models.gru_classifier, 2, None, 4, "aten"),
    ("embedding_bag", fusim_models.embedding_bag_classifier, 2, None, 5, "aten"),
    ("tied_lm", ctm.tied_lm, 2, None, 8, "aten"),
    ("in_place", ctm.in_place, 2, [8], None, "aten"),
]


def run(args, cwd=ROOT):
    env = dict(os.environ, PYTHONPATH=HERE)
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def validate(test, traces):
    """Writes the traces, runs `fusim trace validate` on all of them; returns the files."""
    tmp = tempfile.mkdtemp()
    files = []
    for name, trace in traces:
        path = os.path.join(tmp, name + ".json")
        with open(path, "w") as f:
            f.write(to_compact_json(trace))
        files.append(path)
    result = run([FUSIM, "trace", "validate"] + files)
    test.assertEqual(result.returncode, 0, result.stdout + result.stderr)
    for path in files:
        test.assertIn(f"{path}: ok", result.stdout)
    return files


def layers_by_name(trace):
    return {l["name"]: l for l in trace["layers"]}


class CaptureModels(unittest.TestCase):
    def test_params_are_the_models_and_traces_validate(self):
        traces = []
        for name, factory, batch, shape, seq, path in MODELS:
            with self.subTest(model=name):
                model = factory()
                expected = {n: list(p.shape) for n, p in model.named_parameters()}
                numel = sum(p.numel() for p in model.parameters())
                trace, counted = capture(model, name, batch, shape, seq, "float32", "test")
                self.assertEqual(trace["capture"]["path"], path)
                got = {p["name"]: p["shape"] for l in trace["layers"]
                       for p in l.get("params", [])}
                self.assertEqual(got, expected)  # each parameter exactly once
                self.assertEqual(counted, numel)
                self.assertEqual(sum(_numel(s) for s in got.values()), numel)
                self.assertEqual(trace["layers"][-1]["op"], "cross_entropy")
                if name == "vgg11":
                    # Five 2x2 pools take 32 px to 1; the adaptive pool makes it 7x7.
                    by_name = layers_by_name(trace)
                    self.assertEqual(by_name["features.20"]["output"], [2, 512, 1, 1])
                    self.assertEqual(by_name["avgpool"]["output"], [2, 512, 7, 7])
                    self.assertEqual(by_name["flatten"]["output"], [2, 25088])
                traces.append((name, trace))
        validate(self, traces)

    def test_both_paths_agree_on_resnet18(self):
        # The ATen path maps resnet18's modules to the same kinds as torch.fx: the same
        # FLOPs and parameters, layer for layer where fx has a layer.
        fx, _ = capture(tvm.resnet18(weights=None), "r18", 2, [3, 32, 32], None, "float32",
                        "t", path="fx")
        aten, _ = capture(tvm.resnet18(weights=None), "r18", 2, [3, 32, 32], None, "float32",
                          "t", path="aten")
        self.assertEqual(aten["capture"], {"path": "aten", "control_flow": "as-run-shapes"})
        self.assertEqual(fx["capture"], {"path": "fx", "control_flow": "symbolic"})
        files = validate(self, [("fx", fx), ("aten", aten)])
        totals = [json.loads(run([FUSIM, "trace", "show", f, "--json"]).stdout)["totals"]
                  for f in files]
        self.assertEqual(totals[0]["flops_fwd"], totals[1]["flops_fwd"])
        self.assertEqual(totals[0]["flops_bwd"], totals[1]["flops_bwd"])
        self.assertEqual(totals[0]["params"], totals[1]["params"])
        ops = lambda t: sorted(l["op"] for l in t["layers"] if l["op"] != "flatten" and
                               l["op"] != "reshape")
        self.assertEqual(ops(fx), ops(aten))  # flatten (fx) is a view op (aten) there


class AtenRules(unittest.TestCase):
    def aten(self, model, batch=2, shape=(8,), seq=None):
        trace, _ = capture(model, "m", batch, list(shape) if shape else None, seq, "float32",
                           "t", path="aten")
        validate(self, [("m", trace)])
        return trace

    def test_tied_weights_are_one_parameter_layer(self):
        trace = self.aten(ctm.tied_lm(), seq=8, shape=None)
        by_name = layers_by_name(trace)
        tok = by_name["tok.weight"]  # the embedding weight, also the LM head's
        self.assertEqual(tok["op"], "parameter")
        readers = [l["op"] for l in trace["layers"] if tok["id"] in l["inputs"]]
        self.assertEqual(len(readers), 2)  # the token gather and the head's matmul
        self.assertNotIn("lm_head.weight", json.dumps(trace))

    def test_in_place_ops_and_views(self):
        trace = self.aten(ctm.in_place())
        by_name = layers_by_name(trace)
        ops = [l["op"] for l in trace["layers"]]
        # fc runs twice: its weight and bias are parameter layers, not fc's own params.
        self.assertEqual(by_name["fc.weight"]["op"], "parameter")
        self.assertEqual(by_name["head"]["op"], "linear")
        # y[:, 4:] += 1 is Python's getitem, iadd (aten.add_ on the view) and setitem
        # (aten.copy_ into the view): each write makes the base's next value.
        write_back = [l for l in trace["layers"] if "write_back" in l["name"]]
        self.assertEqual([l["attrs"]["aten"].split(" ")[0] for l in write_back],
                         ["aten.add_.Tensor", "aten.copy_.default"])
        self.assertEqual([l["output"] for l in write_back], [[2, 8], [2, 8]])
        self.assertEqual(write_back[1]["inputs"][0], write_back[0]["id"])
        relu = [l for l in trace["layers"] if l["op"] == "relu"]
        self.assertEqual(len(relu), 1)
        self.assertEqual(relu[0]["inputs"], [write_back[1]["id"]])  # relu_ reads the new y
        # `left` was taken before the writes: re-read from the base after them.
        self.assertIn("view re-read from its base after an in-place write",
                      [l["attrs"].get("aten") for l in trace["layers"]])
        self.assertEqual(ops.count("cross_entropy"), 1)

    def test_value_dependent_control_flow_runs_on_real_tensors(self):
        trace = self.aten(ctm.value_branch())
        self.assertEqual(trace["capture"], {"path": "aten", "control_flow": "as-run-values"})

    def test_auxiliary_heads_share_one_loss(self):
        # GoogLeNet in training returns (logits, aux2, aux1): one concat, one loss.
        trace, _ = capture(tvm.googlenet(weights=None, init_weights=False), "g", 2,
                           [3, 64, 64], None, "float32", "t")
        heads = layers_by_name(trace)["heads"]
        self.assertEqual((heads["op"], heads["attrs"], heads["output"]),
                         ("concat", {"dim": 0}, [6, 1000]))
        self.assertEqual(trace["inputs"][-1], {"name": "target", "shape": [6], "dtype": "int64"})

    def test_op_table_on_hand_worked_cases(self):
        class Ops(nn.Module):
            def __init__(self):
                super().__init__()
                self.up = nn.ConvTranspose2d(4, 2, 3, stride=2)
                self.bag = nn.EmbeddingBag(10, 4, mode="sum")
                self.fc = nn.Linear(2 * 9 * 9, 3)

            def forward(self, x):                    # x [2, 4, 4, 4]
                h = nn.functional.hardswish(x)       # elementwise, 5 FLOPs per element
                m = h.mean(dim=(2, 3), keepdim=True)  # reduction of 4*4 = 16 per output
                y = self.up(h - m)                   # sub: elementwise; transposed conv
                ids = torch.zeros(2, 3, dtype=torch.long, device=x.device)
                bag = self.bag(ids)                  # [2, 4]: 3 rows per bag
                return self.fc(y.flatten(1)) + bag[:, :3]

        trace = self.aten(Ops(), shape=(4, 4, 4))
        by_aten = {l["attrs"].get("aten"): l for l in trace["layers"]}
        self.assertEqual(by_aten["aten.hardswish.default"]["op"], "generic_elementwise")
        self.assertEqual(by_aten["aten.hardswish.default"]["attrs"]["flops_per_element"], 5)
        mean = by_aten["aten.mean.dim"]
        self.assertEqual((mean["op"], mean["attrs"]["reduce"], mean["output"]),
                         ("generic_reduction", 16, [2, 4, 1, 1]))
        self.assertEqual(by_aten["aten.sub.Tensor"]["op"], "generic_elementwise")
        # ConvTranspose2d(4 -> 2, k 3, s 2) on 4x4: out 9x9. Each of the 2*4*4*4 = 128 input
        # elements meets 2 * 3 * 3 = 18 weights: 2304 MACs over 2*2*9*9 = 324 outputs = 7.1
        # per output, rounded to 7.
        conv = by_aten["aten.convolution.default"]
        self.assertEqual((conv["op"], conv["attrs"]["contraction"], conv["output"]),
                         ("generic_matmul", 7, [2, 2, 9, 9]))
        bag = by_aten["aten._embedding_bag.default"]
        self.assertEqual((bag["op"], bag["attrs"]["reduce"], bag["output"]),
                         ("generic_reduction", 3, [2, 4]))
        self.assertEqual(by_aten["aten.zeros.default"]["inputs"], [])  # a source


class CaptureCommandLine(unittest.TestCase):
    def test_mlp_records_its_command(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "mlp.json")
            cmd = ["scripts/capture_trace.py", "fusim_models:mlp", "--batch", "4",
                   "--input-shape", "784", "-o", out]
            result = run(cmd)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertIn("(fx path)", result.stderr)
            with open(out) as f:
                lines = f.read().splitlines()
            trace = json.loads("\n".join(lines))
            self.assertEqual(trace["source"], " ".join(cmd))
            self.assertEqual(trace["model"], "mlp")
            self.assertEqual([l["op"] for l in trace["layers"]],
                             ["linear", "relu", "linear", "relu", "linear", "cross_entropy"])
            self.assertEqual(trace["inputs"][1], {"name": "target", "shape": [4], "dtype": "int64"})
            self.assertEqual(len(lines), 3 + 6 + 1)  # compact: one layer per line
            self.assertEqual(os.listdir(tmp), ["mlp.json"])  # no temporary file left

    def test_fx_failure_falls_back_to_aten(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "m.json")
            result = run(["scripts/capture_trace.py", "capture_test_models:mean_pool",
                          "--input-shape", "8", "-o", out])
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertIn("(aten path)", result.stderr)
            with open(out) as f:
                ops = [l["op"] for l in json.load(f)["layers"]]
            self.assertEqual(ops, ["linear", "generic_reduction", "cross_entropy"])

    def expect_error(self, args, fragment):
        with tempfile.TemporaryDirectory() as tmp:
            result = run(["scripts/capture_trace.py"] + args + ["-o", os.path.join(tmp, "x.json")])
            self.assertEqual(os.listdir(tmp), [])  # nothing written
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(fragment, result.stderr)
        self.assertNotIn("Traceback", result.stderr)
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)

    def test_unmappable_node_is_named_on_the_fx_path(self):
        self.expect_error(["capture_test_models:mean_pool", "--input-shape", "8", "--path", "fx"],
                          "fx node 'mean' (call_method mean): no fusim op for it")

    def test_tied_weights_are_refused_on_the_fx_path(self):
        self.expect_error(["capture_test_models:tied_lm", "--seq", "8", "--path", "fx"],
                          "parameter 'lm_head.weight' is the same tensor as 'tok.weight'")

    def test_shape_error_names_module_and_op(self):
        self.expect_error(["capture_test_models:broken", "--input-shape", "8"],
                          "capture_trace.py: module 'bad' (Linear), aten.addmm.default: "
                          "RuntimeError: mat1 and mat2 shapes cannot be multiplied")

    def test_unsupported_dtype_names_module_and_op(self):
        self.expect_error(["capture_test_models:float64", "--input-shape", "8"],
                          "module '<root>' (Float64), aten._to_copy.default: dtype "
                          "torch.float64 is not one of")

    def test_complex_tensors_name_module_and_op(self):
        self.expect_error(["capture_test_models:spectral", "--input-shape", "8"],
                          "capture_trace.py: module '<root>' (Spectral), aten._fft_r2c.default: "
                          "dtype torch.complex64 is not one of")

    def test_a_detour_through_numpy_names_the_module(self):
        self.expect_error(["capture_test_models:to_numpy", "--input-shape", "8"],
                          "capture_trace.py: module '<root>' (ToNumpy): TypeError: can't "
                          "convert meta device type tensor to numpy")

    def test_parameters_the_loss_does_not_use(self):
        self.expect_error(["capture_test_models:unused", "--input-shape", "8"],
                          "not captured: spare.bias, spare.weight")

    def test_output_must_be_logits(self):
        self.expect_error(["capture_test_models:dict_out", "--input-shape", "8"],
                          "the model's output must be a tensor of logits [M, classes]")

    def test_logits_must_be_two_dimensional(self):
        self.expect_error(["capture_test_models:no_reshape", "--batch", "2", "--seq", "8"],
                          "the model's output has shape [2, 8, 10] (torch.float32); "
                          "cross_entropy needs floating logits [M, classes]")

    def test_factory_that_raises(self):
        self.expect_error(["capture_test_models:raising", "--input-shape", "8"],
                          "capture_trace.py: MODEL 'capture_test_models:raising': the factory "
                          "raised ValueError: no such checkpoint")

    def test_module_that_raises_on_import(self):
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "bad_import.py"), "w") as f:
                f.write("raise RuntimeError('half-written module')\n")
            result = run([os.path.join(SCRIPTS, "capture_trace.py"), "bad_import:build",
                          "--input-shape", "8", "-o", os.path.join(tmp, "x.json")], cwd=tmp)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertEqual(result.stderr.strip(), "capture_trace.py: MODEL 'bad_import:build': "
                         "cannot import 'bad_import': RuntimeError: half-written module")

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
