"""common.py - what the baselines share: the torch encoder module (tools/capture_kokoro.py's functions,
imported, not copied), the benchmark workloads built exactly as bench/ckbench.c builds them, and the
two batch policies; it must not time anything or write reports.

Shape letters: B sequences in a padded batch, T positions, O output 512.
"""
import contextlib
import json
import os
import sys

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import capture_kokoro as ck  # noqa: E402  (the oracle: weights generator and encoder)

VOCAB_JSON = os.path.join(ck.KOKORO_DIR, "config.json")


class Encoder(torch.nn.Module):
    """The Kokoro phoneme encoder with the synthetic `splitmix64-uniform-v1` weights (seed 20261129):
    forward(ids int64 [B,T], attention_mask int64 [B,T]) -> features float32 [B,T,O]."""

    def __init__(self, seed=ck.SEED):
        super().__init__()
        weights = ck.make_weights(seed)
        ck.check_generator(weights)
        # registered buffers so torch.onnx.export stores them as initializers; dots are not allowed
        # in buffer names, the encoder looks them up by checkpoint name through self.names
        self.names = [n for n, _ in ck.WEIGHT_SHAPES]
        for i, n in enumerate(self.names):
            self.register_buffer(f"w{i}", torch.from_numpy(weights[n]))

    def forward(self, ids, attention_mask):
        w = {n: getattr(self, f"w{i}") for i, n in enumerate(self.names)}
        return ck.encoder(ids, attention_mask, w, lambda _name, x: x)


class _StaticLayerNormShape:
    """torch.nn.functional with layer_norm's normalized_shape made Python ints: under ONNX tracing
    capture_kokoro.layer_norm's `(x.shape[-1],)` is a traced value, which torch 1.13's exporter cannot
    lower; the hidden size is fixed (128 or 768), so freezing it changes no arithmetic."""

    def __getattr__(self, name):
        return getattr(torch.nn.functional, name)

    @staticmethod
    def layer_norm(x, shape, *args, **kwargs):
        return torch.nn.functional.layer_norm(x, tuple(int(s) for s in shape), *args, **kwargs)


@contextlib.contextmanager
def onnx_exportable():
    """Within the block the oracle's LayerNorm calls use static shapes (see _StaticLayerNormShape)."""
    saved, ck.F = ck.F, _StaticLayerNormShape()
    try:
        yield
    finally:
        ck.F = saved


def fixed_workload(length, tokens):
    """ckbench's fixed_workload: max(tokens // length, 1) sequences of `length` ids, 0 at both ends,
    the inside from one LCG stream (x = x * 1664525 + 1013904223 mod 2^32, id = 1 + (x >> 8) % 177)
    that runs on across sequences from x = 20261129."""
    seqs, x = [], 20261129
    for _ in range(max(tokens // length, 1)):
        ids = np.zeros(length, dtype=np.int64)
        for t in range(1, length - 1):
            x = (x * 1664525 + 1013904223) & 0xFFFFFFFF
            ids[t] = 1 + (x >> 8) % 177
        seqs.append(ids)
    return {"name": f"len{length}", "seqs": seqs}


def corpus_workload(path):
    """One sequence [0, *vocab ids, 0] per non-empty line of a Kokoro phoneme file, edge spaces and
    tabs trimmed (as engine/corpus/reader.c does). Lines must fit 510 phonemes: ckbatch would chunk longer
    ones, and the baselines must see the same sequences."""
    with open(VOCAB_JSON, encoding="utf-8") as f:
        vocab = json.load(f)["vocab"]
    seqs = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            ph = line.rstrip("\r\n").strip(" \t")
            if not ph:
                continue
            missing = sorted({c for c in ph if c not in vocab})
            if missing or len(ph) > ck.MAX_T - 2:
                raise ValueError(f"{path}:{number}: unknown symbols {missing} or over 510 phonemes")
            seqs.append(np.array([0] + [vocab[c] for c in ph] + [0], dtype=np.int64))
    return {"name": "corpus", "seqs": seqs}


def plan(lengths, budget, policy):
    """Batches as lists of sequence indices. Each padded batch holds B * T_max <= budget positions
    (one sequence alone may exceed it).
    padded: input order, the way a user feeds a DataLoader (shorter members are padded).
    equal: sequences grouped by exact length (then input order), so no batch carries padding."""
    order = list(range(len(lengths)))
    if policy == "equal":
        order.sort(key=lambda i: (lengths[i], i))
    batches, cur, t_max = [], [], 0
    for i in order:
        nxt = max(t_max, lengths[i])
        same = policy != "equal" or not cur or lengths[cur[0]] == lengths[i]
        if cur and (not same or nxt * (len(cur) + 1) > budget):
            batches.append(cur)
            cur, nxt = [], lengths[i]
        cur.append(i)
        t_max = nxt
    if cur:
        batches.append(cur)
    return batches


def padded(seqs, members):
    """(ids, attention_mask) int64 [B,T_max] of one batch, right-padded with id 0 and mask 0."""
    t_max = max(len(seqs[i]) for i in members)
    ids = np.zeros((len(members), t_max), dtype=np.int64)
    mask = np.zeros((len(members), t_max), dtype=np.int64)
    for row, i in enumerate(members):
        ids[row, :len(seqs[i])] = seqs[i]
        mask[row, :len(seqs[i])] = 1
    return ids, mask


def write_workloads(path, loads, budget):
    """Writes the workloads and both batch plans as JSON for the ONNX Runtime runner."""
    doc = []
    for w in loads:
        lengths = [len(s) for s in w["seqs"]]
        doc.append({"name": w["name"], "seqs": [s.tolist() for s in w["seqs"]],
                    "plans": {p: plan(lengths, budget, p) for p in ("padded", "equal")}})
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, separators=(",", ":"))
