"""Small models the capture must reject, each for one stated reason (capture_test.py)."""
import torch.nn as nn

import fusim_models


class MeanPool(nn.Module):
    """x.mean(dim) has no fusim op: the capture must name the fx node 'mean'."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(x).mean(dim=1)


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
