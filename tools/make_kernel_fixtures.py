#!/usr/bin/python3
"""make_kernel_fixtures.py - PyTorch-computed expectations for the speech kernels (docs/speech-kernels.md).

Writes tests/fixtures/kernels/<kernel>.safetensors (one small file per kernel, float32 tensors only) and
tests/fixtures/kernels/manifest.json (the SHA-256 of each file, checked by the C tests before reading).
Inputs are drawn from torch.manual_seed(KERNEL_SEED) on one thread, so two runs write identical bytes.

Run with Debian's torch 1.13: /usr/bin/python3 tools/make_kernel_fixtures.py [--out DIR]
Layout of every activation: packed ragged rows [rows, C] (sequences back to back), as the C kernels take it.
"""
import argparse
import hashlib
import json
import os
import struct

import numpy as np
import torch
import torch.nn.functional as F

KERNEL_SEED = 20261205
LSTM_LENGTHS = [1, 5, 9]
NORM_LENGTHS = [2, 7, 13]
CONVT_LENGTHS = [1, 4, 7]
CONVT_STRIDED_LENGTHS = [1, 3, 4]


def safetensors_bytes(items):
    """items: list of (name, float32 array). Compact JSON header padded with spaces to 8, data in order."""
    header, blobs, at = {}, [], 0
    for name, arr in items:
        data = np.ascontiguousarray(arr, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(arr.shape), "data_offsets": [at, at + len(data)]}
        blobs.append(data)
        at += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def offsets_of(lengths):
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.float32)


def pack(padded, lengths):
    """[S, Lmax, ...] padded -> [sum(lengths), ...] packed rows."""
    return torch.cat([padded[s, :n] for s, n in enumerate(lengths)], 0)


def lstm_case():
    """BiLSTM 6 -> 2x8 over three sequences, pack_padded_sequence as Kokoro's TextEncoder runs it."""
    lstm = torch.nn.LSTM(6, 8, num_layers=1, batch_first=True, bidirectional=True)
    lengths = LSTM_LENGTHS
    x = torch.randn(len(lengths), max(lengths), 6)
    for s, n in enumerate(lengths):
        x[s, n:] = 0
    with torch.no_grad():
        packed = torch.nn.utils.rnn.pack_padded_sequence(x, torch.tensor(lengths), batch_first=True,
                                                         enforce_sorted=False)
        out, _ = lstm(packed)
        out, _ = torch.nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
        xp = pack(x, lengths)
        g_fwd = F.linear(xp, lstm.weight_ih_l0, lstm.bias_ih_l0)
        g_rev = F.linear(xp, lstm.weight_ih_l0_reverse, lstm.bias_ih_l0_reverse)
    return [("offsets", offsets_of(lengths)), ("x", xp.numpy()),
            ("gates_fwd", g_fwd.numpy()), ("gates_rev", g_rev.numpy()),
            ("w_hh_fwd", lstm.weight_hh_l0.detach().numpy()), ("b_hh_fwd", lstm.bias_hh_l0.detach().numpy()),
            ("w_hh_rev", lstm.weight_hh_l0_reverse.detach().numpy()),
            ("b_hh_rev", lstm.bias_hh_l0_reverse.detach().numpy()),
            ("h", pack(out, lengths).numpy())]


def hash_values(n, seed, scale):
    """(k - 2048) / 2048 * scale with k the top 12 bits of a 32-bit mix of (i, seed): exact in float32 for a
    power-of-two scale, and the same values tests/kernels/test_lstm_recurrence.c makes in C."""
    i = np.arange(n, dtype=np.uint64)
    x = (i * 0x9E3779B1 + seed * 0x85EBCA77) & 0xFFFFFFFF
    x ^= x >> 15
    x = (x * 0x2C1B3C6D) & 0xFFFFFFFF
    x ^= x >> 12
    k = (x >> 20).astype(np.int64)
    return ((k - 2048) / 2048.0 * scale).astype(np.float32)


def lstm_kokoro_case():
    """Kokoro's size, H = 256, lengths 2 and 30: weights and gates from hash_values (only h is stored).
    W_ih is the identity of 4H and b_ih 0, so torch's input projection hands the hashed gates over exactly."""
    hidden, lengths = 256, [2, 30]
    rows = sum(lengths)
    lstm = torch.nn.LSTM(4 * hidden, hidden, num_layers=1, batch_first=True, bidirectional=True)
    with torch.no_grad():
        for suffix, seed in (("", 1), ("_reverse", 2)):
            getattr(lstm, "weight_ih_l0" + suffix).copy_(torch.eye(4 * hidden))
            getattr(lstm, "bias_ih_l0" + suffix).zero_()
            getattr(lstm, "weight_hh_l0" + suffix).copy_(
                torch.from_numpy(hash_values(4 * hidden * hidden, seed, 1 / 16)).reshape(4 * hidden, hidden))
            getattr(lstm, "bias_hh_l0" + suffix).copy_(torch.from_numpy(hash_values(4 * hidden, seed + 10, 1 / 16)))
        gates = torch.from_numpy(hash_values(rows * 4 * hidden, 3, 2.0)).reshape(rows, 4 * hidden)
        x = torch.zeros(len(lengths), max(lengths), 4 * hidden)
        at = 0
        for s, n in enumerate(lengths):
            x[s, :n] = gates[at:at + n]
            at += n
        packed = torch.nn.utils.rnn.pack_padded_sequence(x, torch.tensor(lengths), batch_first=True,
                                                         enforce_sorted=False)
        out, _ = lstm(packed)
        out, _ = torch.nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
    return [("offsets", offsets_of(lengths)), ("h", pack(out, lengths).numpy())]


def adain_case():
    """AdaIN1d (instance norm over each sequence's frames) and AdaLayerNorm (LayerNorm over channels)."""
    channels, lengths = 20, NORM_LENGTHS
    xs = [torch.randn(n, channels) * 3 + torch.randn(1, channels) * 5 for n in lengths]
    gamma = torch.randn(len(lengths), channels) * 0.5
    beta = torch.randn(len(lengths), channels) * 0.5
    inorm = torch.nn.InstanceNorm1d(channels, affine=False, eps=1e-5)
    ins, lns = [], []
    for s, x in enumerate(xs):
        # Kokoro AdaIN1d: (1 + gamma) * norm(x) + beta, x as [B, C, L]
        n = inorm(x.t().unsqueeze(0))[0].t()
        ins.append((1 + gamma[s]) * n + beta[s])
        # Kokoro AdaLayerNorm: F.layer_norm over channels, no affine, then (1 + gamma) * x + beta
        ln = F.layer_norm(x, (channels,), eps=1e-5)
        lns.append((1 + gamma[s]) * ln + beta[s])
    return [("offsets", offsets_of(lengths)), ("x", torch.cat(xs).numpy()), ("gamma", gamma.numpy()),
            ("beta", beta.numpy()), ("instance_norm", torch.cat(ins).numpy()),
            ("layer_norm", torch.cat(lns).numpy())]


def duration_case():
    """Kokoro model.py:108-109 on random logits, plus rows built to land exactly on .5 ties."""
    lengths = [4, 6, 5]
    speed = torch.tensor([1.0, 0.8, 2.0])
    logits = torch.randn(sum(lengths), 50) * 2
    # sigmoid(0) = 0.5, sigmoid(40) = 1 and sigmoid(-200) = 0 exactly in float32, so these sums are exact
    # in any order: k halves + m ones.
    def tie_row(halves, ones):
        row = torch.full((50,), -200.0)
        row[:halves] = 0.0
        row[halves:halves + ones] = 40.0
        return row
    ties = {0: (1, 0), 1: (3, 0), 2: (5, 0), 3: (1, 2),   # speed 1: 0.5->0->1, 1.5->2, 2.5->2, 2.5->2
            10: (0, 5), 11: (1, 4), 12: (2, 0), 13: (0, 0), 14: (3, 2)}   # speed 2: 2.5->2, 2.25, 0.5->1, 0->1, 3.5->4
    for row, (h, o) in ties.items():
        logits[row] = tie_row(h, o)
    spd = torch.cat([speed[s].expand(n) for s, n in enumerate(lengths)])
    dur = torch.sigmoid(logits).sum(axis=-1) / spd
    frames = torch.round(dur).clamp(min=1).long()
    return [("offsets", offsets_of(lengths)), ("logits", logits.numpy()), ("speed", speed.numpy()),
            ("duration", dur.numpy()), ("frames", frames.float().numpy())]


def expand_case():
    """Alignment as Kokoro builds it (model.py:110-114: repeat_interleave, then d^T @ A) and nearest x2."""
    tokens, channels = 7, 5
    x = torch.randn(tokens, channels)
    frames = torch.tensor([1, 3, 2, 1, 4, 2, 1])
    idx = torch.repeat_interleave(torch.arange(tokens), frames)
    align = torch.zeros(tokens, int(frames.sum()))
    align[idx, torch.arange(int(frames.sum()))] = 1
    expanded = (x.t() @ align).t()
    up = F.interpolate(x.t().unsqueeze(0), scale_factor=2, mode="nearest")[0].t()
    return [("x", x.numpy()), ("frames", frames.float().numpy()), ("expanded", expanded.numpy()),
            ("upsampled", up.contiguous().numpy())]


def convt_case():
    """AdainResBlk1d's pool: ConvTranspose1d(C, C, 3, stride 2, padding 1, output_padding 1, groups C)."""
    channels, lengths = 5, CONVT_LENGTHS
    conv = torch.nn.ConvTranspose1d(channels, channels, 3, stride=2, padding=1, output_padding=1,
                                    groups=channels)
    xs = [torch.randn(n, channels) for n in lengths]
    with torch.no_grad():
        ys = [conv(x.t().unsqueeze(0))[0].t() for x in xs]
    return [("offsets", offsets_of(lengths)), ("x", torch.cat(xs).numpy()),
            ("weight", conv.weight.detach().reshape(channels, 3).numpy()),
            ("bias", conv.bias.detach().numpy()), ("y", torch.cat(ys).numpy())]


def snake_case():
    """istftnet AdaINResBlock1's Snake: x + (1 / alpha) * sin(alpha * x)^2, alpha per channel."""
    rows, channels = 11, 6
    x = torch.randn(rows, channels) * 4
    alpha = torch.rand(channels) * 2 + 0.2
    y = x + (1 / alpha) * (torch.sin(alpha * x) ** 2)
    return [("x", x.numpy()), ("alpha", alpha.numpy()), ("y", y.numpy())]


def convt_strided_case():
    """The generator's ups: ConvTranspose1d(Cin, Cout, K, stride s, padding (K - s) / 2) on each sequence alone,
    for Kokoro's two shapes (K 20 s 10, K 12 s 6) at small channel counts (Cin 6, Cout 5); y computed in float64."""
    items, lengths, cin, cout = [("offsets", offsets_of(CONVT_STRIDED_LENGTHS))], CONVT_STRIDED_LENGTHS, 6, 5
    for k, stride in ((20, 10), (12, 6)):
        x = torch.randn(sum(lengths), cin)
        weight = torch.randn(cin, cout, k) * 0.3
        bias = torch.randn(cout)
        xs = torch.split(x, lengths)
        # in float64, rounded once: the float32 sums' order is the BLAS's (reference vs OpenBLAS differ),
        # this is the same bytes under either
        ys = [F.conv_transpose1d(xi.t().unsqueeze(0).double(), weight.double(), bias.double(), stride=stride,
                                 padding=(k - stride) // 2)[0].t().float() for xi in xs]
        items += [(f"k{k}.x", x.numpy()), (f"k{k}.weight", weight.numpy()), (f"k{k}.bias", bias.numpy()),
                  (f"k{k}.y", torch.cat(ys).contiguous().numpy())]
    return items


def reflect_pad_case():
    """The generator's ReflectionPad1d((1, 0)) (F.pad reflect) on each sequence alone."""
    lengths, channels = [2, 5, 3], 4
    x = torch.randn(sum(lengths), channels)
    ys = [F.pad(xi.t().unsqueeze(0), (1, 0), mode="reflect")[0].t() for xi in torch.split(x, lengths)]
    return [("offsets", offsets_of(lengths)), ("x", x.numpy()), ("y", torch.cat(ys).contiguous().numpy())]


def adain_snake_case():
    """AdaINResBlock1's first two steps: AdaIN1d (instance norm over each sequence's frames, 1 + gamma, beta),
    then Snake with a per-channel alpha; 20 channels so the kernel's 16-channel blocks split."""
    channels, lengths = 20, NORM_LENGTHS
    xs = [torch.randn(n, channels) * 2 + torch.randn(1, channels) * 3 for n in lengths]
    gamma = torch.randn(len(lengths), channels) * 0.5
    beta = torch.randn(len(lengths), channels) * 0.5
    alpha = torch.rand(channels) * 2 + 0.2
    inorm = torch.nn.InstanceNorm1d(channels, affine=False, eps=1e-5)
    ys = []
    for s, x in enumerate(xs):
        t = (1 + gamma[s]) * inorm(x.t().unsqueeze(0))[0].t() + beta[s]
        ys.append(t + (1 / alpha) * (torch.sin(alpha * t) ** 2))
    return [("offsets", offsets_of(lengths)), ("x", torch.cat(xs).numpy()), ("gamma", gamma.numpy()),
            ("beta", beta.numpy()), ("alpha", alpha.numpy()), ("y", torch.cat(ys).numpy())]


LONG_F0 = 2000        # F0 values (80 per second): 25 s, 600,000 samples
LONG_KEEP = 97        # every 97th sample of har_source is stored


def harmonic_source_long_case():
    """The harmonic source over a long F0 curve through kokoro_reference.sine_source (the speech capture's own
    code, SYNTHESIS.md 1.7), noise zero: its float32 phase reaches ~4e5 rad, where one float ulp is 0.03 rad, so
    only a phase rounded exactly as torch rounds it matches. Voiced random walk 60-420 Hz with an unvoiced
    stretch (0 Hz) and one below the threshold (5 Hz). Every LONG_KEEP-th sample is stored."""
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import kokoro_reference as kr
    f0 = (200 + torch.cumsum(torch.randn(LONG_F0) * 6, 0)).clamp(60, 420)
    f0[300:340] = 0.0
    f0[1200:1230] = 5.0
    weight, bias = torch.randn(1, 9) * 0.5, torch.randn(1) * 0.1
    w = {"decoder.generator.m_source.l_linear.weight": weight, "decoder.generator.m_source.l_linear.bias": bias}
    out = kr.sine_source(f0[None], torch.zeros(kr.UPSAMPLE * LONG_F0, kr.HARMONICS), w)[0]
    return [("f0", f0.numpy()), ("weight", weight[0].numpy()), ("bias", bias.numpy()),
            ("keep", np.array([LONG_KEEP], dtype=np.float32)), ("har_source", out[::LONG_KEEP].contiguous().numpy())]


CASES = [("lstm_recurrence", lstm_case), ("adain", adain_case), ("duration_frames", duration_case),
         ("expand_rows", expand_case), ("conv_transpose1d_depthwise", convt_case), ("snake", snake_case),
         ("lstm_recurrence_kokoro", lstm_kokoro_case),  # its nn.LSTM draws from the generator
         # appended after the others so the earlier files keep their bytes
         ("conv_transpose1d_col2im", convt_strided_case), ("reflect_pad_left1", reflect_pad_case),
         ("adain_snake", adain_snake_case), ("harmonic_source_long", harmonic_source_long_case)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--out", default=os.path.join(here, "..", "tests", "fixtures", "kernels"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(KERNEL_SEED)
    os.makedirs(args.out, exist_ok=True)
    manifest = {"oracle": {"torch": torch.__version__, "script": "tools/make_kernel_fixtures.py",
                           "seed": KERNEL_SEED, "dtype": "float32"}, "files": {}}
    for name, fn in CASES:
        data = safetensors_bytes(fn())
        assert len(data) < 100 * 1024, name
        path = os.path.join(args.out, name + ".safetensors")
        with open(path + ".tmp", "wb") as f:
            f.write(data)
        os.replace(path + ".tmp", path)
        manifest["files"][name + ".safetensors"] = hashlib.sha256(data).hexdigest()
    with open(os.path.join(args.out, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
