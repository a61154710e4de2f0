"""Small models for capture_test.py, each for one stated reason."""
import torch
import torch.nn as nn

import fusim_models


class MeanPool(nn.Module):
    """x.mean(dim) has no dedicated fusim op: torch.fx names the node 'mean', the ATen path
    captures it as a generic_reduction."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(x).mean(dim=1, keepdim=True)  # logits [N, 1]


def mean_pool():
    return MeanPool()


def tied_lm():
    """GPT-2 with the LM head tied to the token embedding, as the original does."""
    model = fusim_models.gpt2(layers=1, hidden=32, heads=2, vocab=100, positions=16)
    model.lm_head.weight = model.tok.weight
    return model


class NoReshape(nn.Module):
    """Logits left as [B, S, V]: cross_entropy needs [M, classes]."""

    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(10, 4)
        self.fc = nn.Linear(4, 10)

    def forward(self, ids):
        return self.fc(self.tok(ids))


def no_reshape():
    return NoReshape()


class InPlace(nn.Module):
    """In-place ops, one through a view (its base gets a new value), a view read after the
    write to its base, and one module applied twice (its weight shared by two calls)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.head = nn.Linear(4, 3)

    def forward(self, x):
        y = self.fc(x).clone()
        left = y[:, :4]
        y[:, 4:] += 1.0                # write through a view into y
        y.relu_()                      # in place on y itself
        z = self.fc(y)[:, 4:] + left   # fc again; `left` is re-read after the writes
        return self.head(z)


def in_place():
    return InPlace()


class ValueBranch(nn.Module):
    """Control flow on a tensor's value: meta tensors have none, so the capture runs it on
    real tensors and records the branch taken."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)
        self.neg = nn.Linear(8, 3)

    def forward(self, x):
        if x.sum() > -1e9:       # always true: the branch through fc
            return self.fc(x) + 0.0 * self.neg(x)
        return self.neg(x)


def value_branch():
    return ValueBranch()


class Float64(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc(x).double()


def float64():
    return Float64()


class Unused(nn.Module):
    """A parameter the loss does not depend on: the trace would not train it."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)
        self.spare = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc(x)


def unused():
    return Unused()


class Broken(nn.Module):
    """A shape error deep inside: the capture names the module and the ATen op."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 6), nn.ReLU())
        self.bad = nn.Linear(5, 3)

    def forward(self, x):
        return self.bad(self.body(x))


def broken():
    return Broken()


class DictOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        return {"logits": self.fc(x)}


def dict_out():
    return DictOut()


def raising():
    """A factory that fails before any module exists: the error still fits one line."""
    raise ValueError("no such checkpoint")


class Spectral(nn.Module):
    """An FFT: complex tensors have no fusim dtype (refused on both paths)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 3)

    def forward(self, x):
        return self.fc(torch.fft.rfft(x).abs())


def spectral():
    return Spectral()


class ToNumpy(nn.Module):
    """Leaves torch for NumPy mid-forward: no op records it, and a meta tensor has no
    values to hand over (refused, not captured without the detour)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        import numpy as np
        return self.fc(torch.from_numpy(np.tanh(x.detach().numpy())))


def to_numpy():
    return ToNumpy()
