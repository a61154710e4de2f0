"""Models for capture_trace.py: an MLP, BERT- and GPT-2-style transformers (fx-traceable),
and small classifiers built from torch.nn's own blocks (TransformerEncoderLayer,
MultiheadAttention, LSTM, GRU, EmbeddingBag) that only the ATen path captures.

torch.nn.TransformerEncoderLayer cannot be traced by torch.fx in torch 1.13 (its fast path
branches on tensor values), so the blocks are written here from Linear, LayerNorm, GELU,
Dropout and one attention leaf that fusim sees as a single scaled_dot_product_attention op.

Sizes follow the published configurations:
  BERT-base (Devlin et al. 2019, HF bert-base-uncased config): vocab 30522, 512 positions,
    hidden 768, 12 layers, 12 heads, FFN 3072, exact GELU, post-LN, dropout 0.1, LN eps 1e-12.
  GPT-2 small/medium (Radford et al. 2019, HF gpt2 config): vocab 50257, 1024 positions,
    hidden 768/1024, 12/24 layers, 12/16 heads, FFN 4x, tanh GELU ("gelu_new"), pre-LN
    with a final LN, dropout 0.1, LN eps 1e-5.
Differences from the originals, because trace version 1 has no weight tying and no
token-type input: the LM head has its own weight (not tied to the token embedding), and
BERT has no token-type embedding and no pooler. Position ids are a second model input.
"""
import math
from collections import OrderedDict

import torch
import torch.nn as nn


class Attention(nn.Module):
    """softmax(q k^T / sqrt(d)) v over `heads` heads of q, k, v [N, S, E]; a fusim leaf."""

    fusim_op = "scaled_dot_product_attention"

    def __init__(self, heads, causal=False, p=0.0):
        super().__init__()
        self.heads, self.causal, self.p = heads, causal, p
        self.dropout = nn.Dropout(p)

    def forward(self, q, k, v):
        n, s, e = q.shape
        d = e // self.heads
        split = lambda t: t.view(n, s, self.heads, d).transpose(1, 2)  # [N, heads, S, d]
        scores = split(q) @ split(k).transpose(-2, -1) / math.sqrt(d)
        if self.causal:
            mask = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
            scores = scores.masked_fill(mask, float("-inf"))
        probs = self.dropout(torch.softmax(scores, dim=-1))
        return (probs @ split(v)).transpose(1, 2).reshape(n, s, e)


class SelfAttention(nn.Module):
    def __init__(self, hidden, heads, causal, p):
        super().__init__()
        self.q = nn.Linear(hidden, hidden)
        self.k = nn.Linear(hidden, hidden)
        self.v = nn.Linear(hidden, hidden)
        self.sdpa = Attention(heads, causal, p)
        self.proj = nn.Linear(hidden, hidden)
        self.drop = nn.Dropout(p)

    def forward(self, x):
        return self.drop(self.proj(self.sdpa(self.q(x), self.k(x), self.v(x))))


class FeedForward(nn.Module):
    def __init__(self, hidden, ffn, approximate, p):
        super().__init__()
        self.fc1 = nn.Linear(hidden, ffn)
        self.act = nn.GELU(approximate=approximate)
        self.fc2 = nn.Linear(ffn, hidden)
        self.drop = nn.Dropout(p)

    def forward(self, x):
        return self.drop(self.fc2(self.act(self.fc1(x))))


class Block(nn.Module):
    """Post-LN (BERT: x = LN(x + f(x))) or pre-LN (GPT-2: x = x + f(LN(x)))."""

    def __init__(self, hidden, heads, ffn, causal, pre_ln, approximate, p, eps):
        super().__init__()
        self.pre_ln = pre_ln
        self.attn = SelfAttention(hidden, heads, causal, p)
        self.ln1 = nn.LayerNorm(hidden, eps=eps)
        self.mlp = FeedForward(hidden, ffn, approximate, p)
        self.ln2 = nn.LayerNorm(hidden, eps=eps)

    def forward(self, x):
        if self.pre_ln:
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))
        x = self.ln1(x + self.attn(x))
        return self.ln2(x + self.mlp(x))


class Transformer(nn.Module):
    """Token + position embedding, blocks, LM head; logits come out as [B*S, vocab]."""

    def __init__(self, vocab, positions, hidden, layers, heads, causal, pre_ln,
                 approximate, p=0.1, eps=1e-5):
        super().__init__()
        if hidden % heads:
            raise ValueError(f"hidden {hidden} is not a multiple of heads {heads}")
        self.vocab, self.pre_ln = vocab, pre_ln
        self.tok = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(positions, hidden)
        if not pre_ln:
            self.emb_ln = nn.LayerNorm(hidden, eps=eps)  # BERT normalises the embeddings
        self.emb_drop = nn.Dropout(p)
        self.blocks = nn.ModuleList(
            Block(hidden, heads, 4 * hidden, causal, pre_ln, approximate, p, eps)
            for _ in range(layers))
        if pre_ln:
            self.ln_f = nn.LayerNorm(hidden, eps=eps)  # GPT-2's final LN
            self.lm_head = nn.Linear(hidden, vocab, bias=False)
        else:
            # BERT's MLM head: dense + GELU + LN transform, then the decoder with a bias.
            self.head = nn.Sequential(OrderedDict(
                dense=nn.Linear(hidden, hidden), act=nn.GELU(approximate=approximate),
                ln=nn.LayerNorm(hidden, eps=eps), decoder=nn.Linear(hidden, vocab)))

    def forward(self, input_ids, position_ids):
        x = self.tok(input_ids) + self.pos(position_ids)
        if not self.pre_ln:
            x = self.emb_ln(x)
        x = self.emb_drop(x)
        for block in self.blocks:
            x = block(x)
        logits = self.lm_head(self.ln_f(x)) if self.pre_ln else self.head(x)
        return logits.reshape(-1, self.vocab)


def bert(layers=12, hidden=768, heads=12, vocab=30522, positions=512):
    return Transformer(vocab, positions, hidden, layers, heads, causal=False, pre_ln=False,
                       approximate="none", eps=1e-12)


def gpt2(layers=12, hidden=768, heads=12, vocab=50257, positions=1024):
    return Transformer(vocab, positions, hidden, layers, heads, causal=True, pre_ln=True,
                       approximate="tanh", eps=1e-5)


def bert_base():
    return bert()


def gpt2_small():
    return gpt2()


def gpt2_medium():
    return gpt2(layers=24, hidden=1024, heads=16)


def bert_tiny():
    """2 layers of hidden 128 (Turc et al. 2019's BERT-Tiny shape), for quick tests."""
    return bert(layers=2, hidden=128, heads=2)


def gpt2_tiny():
    return gpt2(layers=2, hidden=128, heads=2)


def mlp(sizes=(784, 1024, 1024, 10)):
    """Linear+ReLU layers (MNIST-sized by default): fc1, relu1, fc2, relu2, fc3."""
    layers = OrderedDict()
    for i in range(len(sizes) - 1):
        layers[f"fc{i + 1}"] = nn.Linear(sizes[i], sizes[i + 1])
        if i + 2 < len(sizes):
            layers[f"relu{i + 1}"] = nn.ReLU()
    return nn.Sequential(layers)


# ---- torch.nn blocks as they are (the ATen capture path; torch.fx cannot trace them) ----


class TransformerEncoderClassifier(nn.Module):
    """Token embedding, nn.TransformerEncoder of nn.TransformerEncoderLayer (post-LN, ReLU,
    dropout 0.1, batch_first), mean over the sequence, a linear head."""

    def __init__(self, vocab=1000, hidden=128, heads=4, ffn=256, layers=2, classes=10):
        super().__init__()
        self.tok = nn.Embedding(vocab, hidden)
        layer = nn.TransformerEncoderLayer(hidden, heads, ffn, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(hidden, classes)

    def forward(self, ids):
        return self.head(self.encoder(self.tok(ids)).mean(dim=1))


class MHAClassifier(nn.Module):
    """nn.MultiheadAttention self-attention over float inputs [B, S, E], mean, head."""

    def __init__(self, hidden=64, heads=4, classes=10):
        super().__init__()
        self.attn = nn.MultiheadAttention(hidden, heads, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        out, _ = self.attn(x, x, x)  # the averaged attention weights are not used
        return self.head(out.mean(dim=1))


class RecurrentClassifier(nn.Module):
    """Token embedding, an nn.LSTM or nn.GRU (batch_first), the last step's state, head."""

    def __init__(self, cell, vocab=1000, emb=64, hidden=128, layers=1, classes=10):
        super().__init__()
        self.tok = nn.Embedding(vocab, emb)
        self.rnn = cell(emb, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, ids):
        out, _ = self.rnn(self.tok(ids))
        return self.head(out[:, -1])


class EmbeddingBagClassifier(nn.Module):
    """nn.EmbeddingBag (mean of each row's tokens: bags of fixed length), linear head."""

    def __init__(self, vocab=1000, dim=64, classes=10):
        super().__init__()
        self.bag = nn.EmbeddingBag(vocab, dim, mode="mean")
        self.head = nn.Linear(dim, classes)

    def forward(self, ids):
        return self.head(self.bag(ids))


def transformer_encoder_classifier():
    return TransformerEncoderClassifier()


def mha_classifier():
    return MHAClassifier()


def lstm_classifier():
    return RecurrentClassifier(nn.LSTM)


def gru_classifier():
    return RecurrentClassifier(nn.GRU, layers=2)


def embedding_bag_classifier():
    return EmbeddingBagClassifier()
