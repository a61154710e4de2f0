#!/usr/bin/python3
"""Captured forward FLOPs against counts derived by hand (CTest label `capture`).

The hand counts are the models' multiply-adds, worked out below from their published
architectures (2 FLOPs each, the convention of cost.h); the captured count adds what the
trace also holds (norms, activations, softmax, bias adds), which must stay under 5%. Each
model is captured on the ATen path (resnet18 on both paths) at batch 1, on meta tensors.
Usage: capture_flops_test.py FUSIM_BINARY SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

FUSIM, ROOT = sys.argv[1], sys.argv[2]
sys.path[:0] = [os.path.join(ROOT, "scripts")]

import torchvision.models as tvm  # noqa: E402

import fusim_models  # noqa: E402
from fusim_capture.capture import capture, to_compact_json  # noqa: E402


def forward_flops(trace):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.json")
        with open(path, "w") as f:
            f.write(to_compact_json(trace))
        r = subprocess.run([FUSIM, "trace", "show", path, "--json"], capture_output=True,
                           text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["totals"]["flops_fwd"]


def conv_macs(c_out, h_out, w_out, c_in, k):
    return c_out * h_out * w_out * c_in * k * k


def resnet18_macs():
    """He et al. 2016, table 1, at 224x224: 7x7/2 stem to 112x112, a 3x3/2 max pool to 56,
    then four stages of two BasicBlocks (two 3x3 convs each) at 56, 28, 14 and 7 pixels with
    64, 128, 256, 512 channels; each later stage starts with a stride-2 conv and a 1x1/2
    projection shortcut; 512 -> 1000 classifier."""
    macs = conv_macs(64, 112, 112, 3, 7)
    macs += 4 * conv_macs(64, 56, 56, 64, 3)
    for c, s in ((128, 28), (256, 14), (512, 7)):
        macs += conv_macs(c, s, s, c // 2, 3)      # first conv, stride 2
        macs += 3 * conv_macs(c, s, s, c, 3)       # the other three 3x3 convs
        macs += conv_macs(c, s, s, c // 2, 1)      # projection shortcut
    return macs + 512 * 1000                       # 1,814,073,344 (torchvision: 1.81 G)


def vit_b_16_macs():
    """Dosovitskiy et al. 2021, ViT-B/16 at 224x224: 196 patches of 16x16x3 embedded to
    768 (+ a class token: S = 197), 12 layers of attention (qkv and output projections,
    q k^T and attention-weighted v over 12 heads of 64) and a 3072-wide MLP; 768 -> 1000."""
    s, d, mlp = 197, 768, 3072
    macs = 196 * 768 * 16 * 16 * 3
    per_layer = 3 * s * d * d + s * s * d + s * s * d + s * d * d + 2 * s * d * mlp
    return macs + 12 * per_layer + d * 1000        # 17,563,828,224 (torchvision: 17.56 G)


def lstm_macs(batch, seq, emb, hidden, classes):
    """nn.LSTM (Hochreiter & Schmidhuber 1997, PyTorch's gate layout): per step the four
    gates are x W_ih^T + h W_hh^T, [batch, emb] x [emb, 4h] and [batch, h] x [h, 4h]; the
    head reads the last step's h."""
    return seq * batch * 4 * hidden * (emb + hidden) + batch * hidden * classes


class FlopsAgainstHandCounts(unittest.TestCase):
    def check(self, got, macs, what):
        ratio = got / (2 * macs)
        print(f"{what}: captured {got:,} FLOPs, hand count {2 * macs:,} ({ratio:.4f})",
              file=sys.stderr)
        self.assertGreaterEqual(ratio, 1.0)  # the trace holds every multiply-add ...
        self.assertLess(ratio, 1.05)         # ... and less than 5% on top

    def test_resnet18_both_paths(self):
        for path in ("fx", "aten"):
            trace, _ = capture(tvm.resnet18(weights=None), "r18", 1, [3, 224, 224], None,
                               "float32", "t", path=path)
            self.check(forward_flops(trace), resnet18_macs(), f"resnet18 ({path})")

    def test_vit_b_16(self):
        trace, _ = capture(tvm.vit_b_16(weights=None), "vit", 1, [3, 224, 224], None,
                           "float32", "t", path="aten")
        self.check(forward_flops(trace), vit_b_16_macs(), "vit_b_16")

    def test_lstm(self):
        # fusim_models.lstm_classifier: embedding 64, LSTM hidden 128, 10 classes.
        trace, _ = capture(fusim_models.lstm_classifier(), "lstm", 4, None, 32, "float32",
                           "t", path="aten")
        self.check(forward_flops(trace), lstm_macs(4, 32, 64, 128, 10), "lstm")

    def test_hand_counts_match_the_published_totals(self):
        # torchvision's model cards list 1.81 and 17.56 GFLOPS (multiply-adds) per image.
        self.assertEqual(round(resnet18_macs() / 1e9, 2), 1.81)
        self.assertEqual(round(vit_b_16_macs() / 1e9, 2), 17.56)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
