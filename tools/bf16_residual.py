#!/usr/bin/python3
"""bf16_residual.py - what keeping the residual stream in f32 buys in --precision bf16, emulated in
PyTorch on the pinned cases of tools/capture_kokoro.py (same synthetic weights, same cases).

Usage: /usr/bin/python3 tools/bf16_residual.py

Three runs per case against the float32 oracle, per-token cosine min and relative RMSE at the
features: "ckbatch bf16" rounds every linear's input and weight to bf16 (round to nearest even) and
computes in f32, as ckbatch does; "bf16 stream" also rounds every LayerNorm output (the residual
stream and the next matmul's input) and the embeddings to bf16, as a design that stores the
activations between ops in bf16 would; "bf16 everything" also rounds the attention scores'
inputs (q, k, v), the softmax output and the GELU output."""
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import capture_kokoro as ck  # noqa: E402


def bf(x):
    return x.to(torch.bfloat16).to(torch.float32)


def run(mode, seqs, w):
    orig_linear, orig_ln, orig_gelu, orig_matmul, orig_softmax = (
        ck.linear, ck.layer_norm, ck.gelu_new, torch.matmul, torch.softmax)

    def linear(x, w_, name):
        return F.linear(bf(x), bf(w_[name + ".weight"]), w_[name + ".bias"])

    def layer_norm(x, w_, name):
        y = orig_ln(x, w_, name)
        return bf(y) if mode != "ckbatch" else y

    def gelu(x):
        y = orig_gelu(x)
        return bf(y) if mode == "everything" else y

    def matmul(a, b):
        return orig_matmul(bf(a), bf(b)) if mode == "everything" else orig_matmul(a, b)

    def softmax(x, dim):
        y = orig_softmax(x, dim=dim)
        return bf(y) if mode == "everything" else y

    ck.linear, ck.layer_norm, ck.gelu_new = linear, layer_norm, gelu
    torch.matmul, torch.softmax = matmul, softmax
    try:
        return ck.run_packed(seqs, w)
    finally:
        ck.linear, ck.layer_norm, ck.gelu_new = orig_linear, orig_ln, orig_gelu
        torch.matmul, torch.softmax = orig_matmul, orig_softmax


def metrics(a, b):
    a, b = a.double(), b.double()
    cos = (a * b).sum(1) / (a.norm(dim=1) * b.norm(dim=1))
    return float(cos.min()), float(((a - b).norm() / b.norm()))


def main():
    torch.set_num_threads(1)
    w = {n: torch.from_numpy(a) for n, a in ck.make_weights(ck.SEED).items()}
    lex = ck.Lexicon(ck.KOKORO_DIR)
    feats = ck.CHECKPOINTS[-1]
    print("| case | ckbatch bf16 (f32 stream): min cos, rel RMSE | bf16 stream | bf16 everything |")
    print("|---|---|---|---|")
    for case, utts in ck.make_all_cases(lex).items():
        seqs = [lex.ids(ph) for _, ph in utts]
        ref = ck.run_packed(seqs, w)[feats]
        cells = []
        for mode in ("ckbatch", "stream", "everything"):
            c, r = metrics(run(mode, seqs, w)[feats], ref)
            cells.append(f"{c:.6f}, {100 * r:.2f}%")
        print(f"| {case} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
