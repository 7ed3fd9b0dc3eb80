#!/usr/bin/python3
"""kokoro_onnx_export.py - exports ckbatch's PyTorch reference of the whole Kokoro-82M (tools/
kokoro_reference.py over the synthetic weights of tools/kokoro_weights.py, which ckbatch embeds) to ONNX,
opset 17, as Kokoro's examples/export.py does: (input_ids, style, speed) -> waveform. It must not import
kokoro nor read a real checkpoint; bench/compare_tts.sh runs the file with ONNX Runtime.

Run with Debian's interpreter (python3-torch 1.13, python3-numpy):
    /usr/bin/python3 tools/kokoro_onnx_export.py --out kokoro.onnx [--check PHONEME_LINES]

Inputs: input_ids int64 [1,T] ([0, *vocab ids, 0], T dynamic), style float32 [1,256] (the voice row
of the line: decoder half, then prosody half), speed float32 [1]. Output: waveform float32 [1,N],
N = 600 x (sum of the predicted durations), dynamic. One sequence per call (B = 1), as Kokoro's export.

What differs from the reference, and why (each is checked by --check against kokoro_reference.py):
- The BiLSTMs use torch.lstm (ONNX LSTM), not the reference's per-step loop; with B = 1 there is no
  padding, so pack_padded_sequence's behaviour is the plain bidirectional LSTM.
- The alignment is built from cumsum(durations) and a comparison (ONNX Range/CumSum/Less), not
  repeat_interleave, whose ONNX export needs a known repeats size.
- torch 1.13 exports neither torch.stft, torch.istft nor complex numbers: the STFT is a Conv1d over the
  reflect-padded source (22 kernels: periodic Hann x cos and x -sin of bins 0..10), angle() is atan2
  written with atan and where, and the iSTFT is a ConvTranspose1d (stride 5) divided by the
  overlap-added squared window, first and last 10 samples dropped (center=True).
- The SineGen noise is zeroed (ckbatch runs with --noise-scale 0 for agreement).

--check compares the export module (in PyTorch) with the reference line by line. Every stage agrees
to float32 rounding (the LSTMs exactly, the STFT magnitude to 5e-7, the iSTFT to 1e-7) except angle()
of the STFT bins whose magnitude is rounding noise (|X| ~ 1e-9, a few hundred of 1e5 bins per line):
their phase is arbitrary in any two STFT implementations, and the synthetic generator amplifies it
to differences of the size of the audio itself (max abs ~0.13 on peaks ~0.17). Waveform agreement on
synthetic weights is therefore uninformative; docs/speech-bench.md says so with the figures.
"""
import argparse
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import capture_kokoro as ck  # noqa: E402  (ALBERT oracle, lexicon)
import kokoro_reference as kr  # noqa: E402  (the reference's blocks)
import kokoro_weights as kw  # noqa: E402  (the synthetic checkpoint and voice)

N_FFT, HOP, BINS = kr.N_FFT, kr.HOP, kr.N_FFT // 2 + 1


# ---------------------------------------------------------------- export-friendly twins of reference blocks
def lstm(x, w, p):
    """Bidirectional 1-layer LSTM over the whole sequence: x [1,T,I] -> [1,T,512] (torch.lstm, gate
    order i, f, g, o, h0 = c0 = 0): the reference's bilstm when no position is padding."""
    params = [w[f"{p}.{k}_l0{sfx}"] for sfx in ("", "_reverse")
              for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
    h0 = x.new_zeros(2, x.shape[0], kw.H)
    out, _, _ = torch.lstm(x, (h0, h0), params, True, 1, 0.0, False, True, True)
    return out


def atan2(y, x):
    """torch.atan2 from atan and where (ONNX has no Atan2): the angle of x + iy in (-pi, pi]. y = -0 is
    taken as +0 (pi, not -pi, for x < 0), as an rfft's +0 imaginary parts of bins 0 and 10 give."""
    safe = torch.where(x == 0, torch.ones_like(x), x)
    base = torch.atan(y / safe)
    neg = torch.where(y >= 0, base + math.pi, base - math.pi)
    axis = torch.where(y > 0, torch.full_like(y, math.pi / 2),
                       torch.where(y < 0, torch.full_like(y, -math.pi / 2), torch.zeros_like(y)))
    return torch.where(x > 0, base, torch.where(x < 0, neg, axis))


def dft_kernels():
    """(analysis [22,1,20], synthesis [22,1,20]) in float64 rounded to float32: rows 0..10 real parts,
    11..21 imaginary parts. Analysis: win[n] cos(2 pi k n / 20) and -win[n] sin(...) (torch.stft,
    onesided). Synthesis: irfft's weights (1 for bins 0 and 10, else 2) / 20, times win[n]."""
    n = torch.arange(N_FFT, dtype=torch.float64)
    k = torch.arange(BINS, dtype=torch.float64)
    ang = 2 * math.pi * k[:, None] * n[None, :] / N_FFT                    # [11, 20]
    win = kr.window().double()
    sin = torch.sin(ang)
    sin[0] = sin[-1] = 0.0  # exactly: an rfft's bins 0 and 10 have imaginary part +0, so angle 0 or pi
    analysis = torch.cat([torch.cos(ang) * win, -sin * win])
    weight = torch.full((BINS, 1), 2.0, dtype=torch.float64)
    weight[0] = weight[-1] = 1.0
    synthesis = torch.cat([torch.cos(ang) * weight, -sin * weight]) / N_FFT * win
    return analysis.float()[:, None], synthesis.float()[:, None]


def reflect_pad(x, p):
    """F.pad(x, (p, p), mode="reflect") on [B,C,L] as gathers and a concat (ONNX Pad with a dynamic
    length loses the static channel count that InstanceNormalization's export needs)."""
    rev = torch.arange(p - 1, -1, -1)
    return torch.cat([x[:, :, 1:p + 1][:, :, rev], x, x[:, :, -p - 1:-1][:, :, rev]], dim=2)


def stft_har(har_source, analysis):
    """har_source [1,L] -> har [1,22,L/5+1] = [|X|, angle(X)] (the reference's harmonics())."""
    x = reflect_pad(har_source[:, None], N_FFT // 2)
    spec = F.conv1d(x, analysis, stride=HOP)
    re, im = spec[:, :BINS], spec[:, BINS:]
    return torch.cat([torch.sqrt(re * re + im * im), atan2(im, re)], dim=1)


def istft(mag, phase, synthesis):
    """mag, phase [1,11,frames] -> [1, 5 (frames - 1)]: torch.istft(mag e^{i phase}, 20, 5, 20, hann,
    center=True) as overlap-add of windowed inverse DFTs over the overlap-added squared window."""
    spec = torch.cat([mag * torch.cos(phase), mag * torch.sin(phase)], dim=1)
    out = F.conv_transpose1d(spec, synthesis, stride=HOP)                   # [1,1,5(frames-1)+20]
    win2 = (kr.window() ** 2)[None, None]
    env = F.conv_transpose1d(torch.ones_like(spec[:, :1]), win2, stride=HOP)
    return (out / env)[:, 0, N_FFT // 2:-(N_FFT // 2)]


def sine_source(f0_curve, w):
    """The reference's sine_source with zero noise: F0 [1,2F] -> har_source [1,600F]."""
    f0 = F.interpolate(f0_curve[:, None], scale_factor=kr.UPSAMPLE, mode="nearest").transpose(1, 2)
    fn = f0 * torch.arange(1, kr.HARMONICS + 1, dtype=torch.float32)[None, None, :]
    rad = torch.remainder(fn / kr.SR, 1.0)
    rad = F.interpolate(rad.transpose(1, 2), scale_factor=1 / kr.UPSAMPLE, mode="linear").transpose(1, 2)
    phase = torch.cumsum(rad, dim=1) * 2 * math.pi
    phase = F.interpolate(phase.transpose(1, 2) * kr.UPSAMPLE, scale_factor=kr.UPSAMPLE,
                          mode="linear").transpose(1, 2)
    uv = (f0 > kr.VOICED_HZ).to(torch.float32)
    waves = torch.sin(phase) * kr.SINE_AMP * uv
    lin = "decoder.generator.m_source.l_linear"
    return torch.tanh(F.linear(waves, w[lin + ".weight"], w[lin + ".bias"])).transpose(1, 2).squeeze(1)


def f0n(en, s, w):
    """The reference's f0n with torch.lstm: en [1,640,F] -> (F0 [1,2F], N [1,2F])."""
    x = lstm(en.transpose(1, 2), w, "predictor.shared").transpose(1, 2)
    out = []
    for br in ("F0", "N"):
        y = kr.adain_resblk1d(x, s, w, f"predictor.{br}.0")
        y = kr.adain_resblk1d(y, s, w, f"predictor.{br}.1", upsample=True)
        y = kr.adain_resblk1d(y, s, w, f"predictor.{br}.2")
        out.append(kr.conv1d(y, w, f"predictor.{br}_proj").squeeze(1))
    return tuple(out)


class KokoroExport(torch.nn.Module):
    """(input_ids [1,T] int64, style [1,256], speed [1]) -> waveform [1,600F]; weights are constants."""

    def __init__(self, w):
        super().__init__()
        # as buffers, each weight becomes ONE initializer: traced as plain constants, ALBERT's shared
        # layer (used 12 times) would be stored 12 times (568 MB instead of about 330)
        for i, t in enumerate(w.values()):
            self.register_buffer(f"w{i}", t)
        self.w = w
        self.analysis, self.synthesis = dft_kernels()

    def forward(self, input_ids, style, speed):
        w = self.w
        s_dec, s_pro = style[:, :128], style[:, 128:]
        keep = lambda _n, x: x  # noqa: E731
        # PL-BERT and bert_encoder -> d_en [1,512,T]
        d_en = ck.encoder(input_ids, torch.ones_like(input_ids), w, keep).transpose(1, 2)
        # text encoder: embedding, 3 x (conv, channel LayerNorm, LeakyReLU), BiLSTM -> t_en [1,512,T]
        x = F.embedding(input_ids, w["text_encoder.embedding.weight"]).transpose(1, 2)
        for i in range(3):
            x = kr.conv1d(x, w, f"text_encoder.cnn.{i}.0", padding=2)
            x = F.layer_norm(x.transpose(1, -1), (x.shape[1],), w[f"text_encoder.cnn.{i}.1.gamma"],
                             w[f"text_encoder.cnn.{i}.1.beta"], kr.LN_EPS).transpose(1, -1)
            x = F.leaky_relu(x, 0.2)
        t_en = lstm(x.transpose(1, 2), w, "text_encoder.lstm").transpose(1, 2)
        # duration encoder -> d [1,T,640]
        style_t = s_pro[:, None, :].expand(-1, d_en.shape[2], -1)
        d = torch.cat([d_en.transpose(1, 2), style_t], dim=-1)
        for i in range(3):
            d = lstm(d, w, f"predictor.text_encoder.lstms.{2 * i}")
            p = f"predictor.text_encoder.lstms.{2 * i + 1}.fc"
            gamma, beta = F.linear(s_pro, w[p + ".weight"], w[p + ".bias"])[:, None, :].chunk(2, dim=-1)
            ones = torch.ones(d.shape[-1])  # torch 1.13's opset-17 LayerNorm needs a scale: x 1 + 0 is exact
            d = (1 + gamma) * F.layer_norm(d, (d.shape[-1],), ones, torch.zeros_like(ones), kr.LN_EPS) + beta
            d = torch.cat([d, style_t], dim=-1)
        # durations -> pred_dur [T]
        logits = F.linear(lstm(d, w, "predictor.lstm"), w["predictor.duration_proj.linear_layer.weight"],
                          w["predictor.duration_proj.linear_layer.bias"])
        dur = torch.sigmoid(logits).sum(dim=-1)[0] / speed
        pred_dur = torch.clamp(torch.round(dur), min=1).long()
        # alignment: frame f belongs to token #{t : ends[t] <= f}
        ends = torch.cumsum(pred_dur, dim=0)
        frame = torch.arange(ends[-1])
        idx = (ends[:, None] <= frame[None, :]).long().sum(dim=0)
        en = d[0][idx].T[None]                                  # [1,640,F]
        asr = t_en[0][:, idx][None]                             # [1,512,F]
        f0, n = f0n(en, s_pro, w)
        x = kr.decoder(asr, f0, n, s_dec, w, keep)
        return self.generator(x, s_dec, f0)

    def generator(self, x, s, f0_curve):
        """The reference's generator with zero noise, the STFT and iSTFT as convolutions."""
        w, g = self.w, "decoder.generator"
        har = stft_har(sine_source(f0_curve, w), self.analysis)
        for i, (stride, k) in enumerate(((10, 20), (6, 12))):
            x = F.leaky_relu(x, 0.1)
            if i == 0:
                src = kr.conv1d(har, w, f"{g}.noise_convs.0", stride=6, padding=3)
            else:
                src = kr.conv1d(har, w, f"{g}.noise_convs.1")
            src = kr.adain_resblock1(src, s, w, f"{g}.noise_res.{i}", 7 if i == 0 else 11)
            x = F.conv_transpose1d(x, w[f"{g}.ups.{i}.weight"], w[f"{g}.ups.{i}.bias"], stride=stride,
                                   padding=(k - stride) // 2)
            if i == 1:  # F.pad(x, (1, 0), mode="reflect"), which loses the channel count in ONNX
                x = torch.cat([x[:, :, 1:2], x], dim=2)
            x = x + src
            xs = None
            for j, kk in enumerate((3, 7, 11)):
                y = kr.adain_resblock1(x, s, w, f"{g}.resblocks.{3 * i + j}", kk)
                xs = y if xs is None else xs + y
            x = xs / 3
        x = kr.conv1d(F.leaky_relu(x), w, f"{g}.conv_post", padding=3)
        return istft(torch.exp(x[:, :BINS]), torch.sin(x[:, BINS:]), self.synthesis)


# ---------------------------------------------------------------- inputs shared with the bench
def line_inputs(lex, voice, phonemes, speed=1.0):
    """One phoneme line -> (input_ids [1,T] int64, style [1,256], speed [1]) as ckbatch speak uses them:
    ids [0, *vocab ids, 0], style = voice[len(phonemes) - 1]."""
    ids = torch.from_numpy(lex.ids(phonemes).astype(np.int64))[None]
    return ids, kr.style_rows(voice, [len(phonemes)]), torch.tensor([speed], dtype=torch.float32)


def reference_audio(w, voice, lex, phonemes):
    """kokoro_reference.synthesize of one line at speed 1 with zero noise -> float32 numpy [600F]."""
    ids, style, _ = line_inputs(lex, voice, phonemes)
    with torch.no_grad():
        out = kr.synthesize([ids[0].numpy()], style, [1.0], w, noise_scale=0.0)[0]
    return out["audio"].numpy()


def export(w, lex, voice, path):
    """Traces KokoroExport on one line and writes path. Under tracing, x.shape[-1] is a tensor, and the
    ONNX LayerNorm needs a constant normalized_shape: the (static) channel counts are made ints."""
    model = KokoroExport(w).eval()
    args = line_inputs(lex, voice, "ðə sˈʌn ɪz wˈɔɹm.")
    layer_norm = F.layer_norm
    F.layer_norm = lambda x, shape, *a, **k: layer_norm(x, tuple(int(v) for v in shape), *a, **k)
    try:
        with torch.no_grad():
            torch.onnx.export(model, args, path, opset_version=17,
                              input_names=["input_ids", "style", "speed"], output_names=["waveform"],
                              dynamic_axes={"input_ids": {1: "tokens"}, "waveform": {1: "samples"}})
    finally:
        F.layer_norm = layer_norm
    return model


def self_check():
    """The export's rewrites against torch on fixed random data (seed 31, a few seconds): stft_har's
    magnitude vs |torch.stft|, its phase where |X| > 1e-3 (mod 2 pi), istft vs torch.istft, atan2 vs
    torch.atan2 on a grid with the axes and x = -0. Returns the failures (empty when all pass)."""
    gen = torch.Generator().manual_seed(31)
    analysis, synthesis = dft_kernels()
    x = torch.rand(1, 3000, generator=gen) - 0.5
    ref = torch.stft(x, N_FFT, HOP, N_FFT, window=kr.window(), return_complex=True)
    har = stft_har(x, analysis)
    live = ref.abs() > 1e-3
    dphase = torch.remainder(har[:, BINS:] - ref.angle() + math.pi, 2 * math.pi) - math.pi
    mag, phase = torch.rand(1, BINS, 601, generator=gen), 4 * torch.randn(1, BINS, 601, generator=gen)
    inv = torch.istft(mag * torch.exp(phase * 1j), N_FFT, HOP, N_FFT, window=kr.window())
    v = torch.tensor([-2.0, -1.0, -0.0, 0.0, 1.0, 3.0])
    y, xx = v[[0, 1, 3, 4, 5], None].expand(5, 6), v[None, :].expand(5, 6)  # no y = -0: atan2 takes it as +0
    err = {"stft magnitude": (har[:, :BINS] - ref.abs()).abs().max().item(),
           "stft phase (|X| > 1e-3)": dphase[live].abs().max().item(),
           "istft": (istft(mag, phase, synthesis) - inv).abs().max().item(),
           "atan2 (y, x not both zero)": (atan2(y, xx) - torch.atan2(y, xx))[(y != 0) | (xx != 0)].abs().max().item()}
    limits = {"stft magnitude": 2e-6, "stft phase (|X| > 1e-3)": 1e-4, "istft": 2e-6,
              "atan2 (y, x not both zero)": 1e-6}
    for k, e in err.items():
        print(f"kokoro_onnx_export: self-check {k}: max abs {e:.3g} (limit {limits[k]:g})")
    return [k for k in err if not err[k] <= limits[k]]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", help="the .onnx file to write")
    parser.add_argument("--self-check", action="store_true", help="the STFT/iSTFT/atan2 rewrites vs torch")
    parser.add_argument("--check", metavar="LINES", help="phoneme lines: export module vs reference")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if args.self_check:
        failed = self_check()
        if failed:
            print(f"kokoro_onnx_export: self-check failed: {', '.join(failed)}", file=sys.stderr)
            return 1
        if not args.out:
            return 0
    if not args.out:
        parser.error("--out is required (unless --self-check alone)")
    w = kr.load_state(kw.make_weights())
    voice = kw.make_voice()
    lex = ck.Lexicon(ck.KOKORO_DIR)
    model = export(w, lex, voice, args.out)
    print(f"kokoro_onnx_export: wrote {args.out} ({os.path.getsize(args.out) / 1e6:.1f} MB)")
    if args.check:
        worst = 0.0
        for line in open(args.check, encoding="utf-8").read().splitlines():
            ref = reference_audio(w, voice, lex, line)
            with torch.no_grad():
                got = model(*line_inputs(lex, voice, line))[0].numpy()
            if got.shape != ref.shape:
                raise SystemExit(f"kokoro_onnx_export: {got.shape} samples vs reference {ref.shape}: {line}")
            diff = float(np.abs(got - ref).max())
            worst = max(worst, diff)
            print(f"  {len(ref)} samples, max |export - reference| {diff:.3g}, peak {np.abs(ref).max():.3g}")
        print(f"kokoro_onnx_export: worst max abs difference {worst:.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
