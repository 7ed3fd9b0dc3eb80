#!/usr/bin/python3
"""kokoro_reference.py - ckbatch's PyTorch reference of Kokoro-82M after PL-BERT (text encoder, duration
predictor, alignment, F0/N, iSTFTNet decoder and generator) as torch.nn.functional code over a flat state
dict, and the pinned speech capture it writes (tests/fixtures/speech/). It must not import kokoro; the facts
come from /work/shared/kokoro/SYNTHESIS.md, the weights from tools/kokoro_weights.py.

Run with Debian's interpreter (python3-torch 1.13, python3-numpy):
    /usr/bin/python3 tools/kokoro_reference.py --capture tests/fixtures/speech [--weights-out PATH]
    /usr/bin/python3 tools/kokoro_reference.py --verify tests/fixtures/speech [--case speech4]
    /usr/bin/python3 tools/kokoro_reference.py --check-batch      (one padded batch == each case alone)
    /usr/bin/python3 tools/kokoro_reference.py --check-stft tests/fixtures/speech  (explicit STFT recipes)

Shape letters: B sequences, T tokens (with BOS/EOS), F frames (sum of durations; 600 samples each),
S style 128, C channels. Tensors follow PyTorch's [B,C,L] layout for convolutions.

Randomness: none is drawn inside the model. The only draw that reaches the audio (SineGen's
randn_like, SYNTHESIS.md section 2 R2) is an input tensor `noise` [600F, 9] of N(0,1) values, scaled by
--noise-scale (0 zeroes it). R1 (rand_ini) and R3 (noi_source) have no effect on the
audio and are not modelled. Dropout is off (eval mode).
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import capture_kokoro as ck  # noqa: E402  (ALBERT + bert_encoder oracle, safetensors writer, lexicon)
import kokoro_weights as kw  # noqa: E402  (the synthetic checkpoint and voice)

SR, UPSAMPLE, N_FFT, HOP = 24000, 300, 20, 5
SAMPLES_PER_FRAME = 2 * UPSAMPLE  # F0 runs at 2 values per frame, each upsampled x300
HARMONICS = 9                 # fundamental + 8 overtones (SineGen harmonic_num 8)
SINE_AMP, NOISE_STD, VOICED_HZ = 0.1, 0.003, 10.0
LN_EPS = 1e-5


# ---------------------------------------------------------------- weights
def load_state(weights):
    """numpy flat dict (kokoro_weights names) -> torch dict with every weight norm folded:
    `<layer>.weight = g * v / ||v||` (norm over all dims but 0; dim 0 is the input channel of a
    ConvTranspose1d), via torch._weight_norm, the op the legacy weight_norm hook calls."""
    w = {n: torch.from_numpy(a) for n, a in weights.items()}
    for name in [n for n in w if n.endswith(".weight_g")]:
        base = name[: -len(".weight_g")]
        w[base + ".weight"] = torch._weight_norm(w.pop(base + ".weight_v"), w.pop(name), 0)
    return w


# ---------------------------------------------------------------- building blocks
def bilstm(x, lengths, w, p):
    """1-layer BiLSTM, PyTorch gate order i, f, g, o, h0 = c0 = 0. x [B,T,I], lengths [B] -> [B,T,2H]
    with zeros past each length; the reverse direction starts at each sequence's own last step, as
    pack_padded_sequence does."""
    b, t, _ = x.shape
    out = x.new_zeros(b, t, 2 * kw.H)
    for k, sfx in enumerate(("", "_reverse")):
        wi, wh = w[f"{p}.weight_ih_l0{sfx}"], w[f"{p}.weight_hh_l0{sfx}"]
        bi, bh = w[f"{p}.bias_ih_l0{sfx}"], w[f"{p}.bias_hh_l0{sfx}"]
        xg = F.linear(x, wi, bi)                      # input projection for every step at once
        for s in range(b):
            n = int(lengths[s])
            h = x.new_zeros(kw.H)
            c = x.new_zeros(kw.H)
            for step in (range(n) if k == 0 else range(n - 1, -1, -1)):
                gi, gf, gg, go = (xg[s, step] + F.linear(h, wh, bh)).chunk(4)
                c = torch.sigmoid(gf) * c + torch.sigmoid(gi) * torch.tanh(gg)
                h = torch.sigmoid(go) * torch.tanh(c)
                out[s, step, k * kw.H:(k + 1) * kw.H] = h
    return out


def conv1d(x, w, p, **kw_args):
    return F.conv1d(x, w[p + ".weight"], w.get(p + ".bias"), **kw_args)


def adain1d(x, s, w, p):
    """AdaIN1d: (1 + gamma) * InstanceNorm(x) + beta, [gamma, beta] = fc(s); statistics over the whole
    time axis (biased variance, eps 1e-5); the InstanceNorm affine stays 1/0 (not in the checkpoint)."""
    gamma, beta = F.linear(s, w[p + ".fc.weight"], w[p + ".fc.bias"])[:, :, None].chunk(2, dim=1)
    return (1 + gamma) * F.instance_norm(x, eps=LN_EPS) + beta


def adain_resblk1d(x, s, w, p, upsample=False):
    """AdainResBlk1d (LeakyReLU 0.2, dropout off): residual = conv2(lrelu(norm2(conv1(pool(lrelu(
    norm1(x))))))), shortcut = conv1x1(nearest x2 (x)), out = (residual + shortcut) / sqrt(2)."""
    r = F.leaky_relu(adain1d(x, s, w, p + ".norm1"), 0.2)
    if upsample:  # depthwise ConvTranspose1d k3 s2 p1 op1: L -> 2L
        r = F.conv_transpose1d(r, w[p + ".pool.weight"], w[p + ".pool.bias"], stride=2, padding=1,
                               output_padding=1, groups=r.shape[1])
    r = conv1d(r, w, p + ".conv1", padding=1)
    r = conv1d(F.leaky_relu(adain1d(r, s, w, p + ".norm2"), 0.2), w, p + ".conv2", padding=1)
    sc = F.interpolate(x, scale_factor=2, mode="nearest") if upsample else x
    if p + ".conv1x1.weight" in w:
        sc = F.conv1d(sc, w[p + ".conv1x1.weight"])
    return (r + sc) * torch.rsqrt(torch.tensor(2.0))


def snake(x, alpha):
    return x + (1 / alpha) * (torch.sin(alpha * x) ** 2)


def adain_resblock1(x, s, w, p, k):
    """AdaINResBlock1, dilations 1, 3, 5: three times x += conv2(snake(adain2(conv1_d(snake(adain1(x))))))."""
    for j, d in enumerate((1, 3, 5)):
        t = snake(adain1d(x, s, w, f"{p}.adain1.{j}"), w[f"{p}.alpha1.{j}"])
        t = conv1d(t, w, f"{p}.convs1.{j}", dilation=d, padding=d * (k - 1) // 2)
        t = snake(adain1d(t, s, w, f"{p}.adain2.{j}"), w[f"{p}.alpha2.{j}"])
        x = conv1d(t, w, f"{p}.convs2.{j}", padding=(k - 1) // 2) + x
    return x


# ---------------------------------------------------------------- token side (padded batch)
def pad_mask(lengths, t):
    """[B,T] bool, True on padding."""
    return torch.arange(t)[None, :] >= lengths[:, None]


def text_encoder(ids, lengths, w):
    """TextEncoder: ids [B,T] -> t_en [B,512,T]. Embedding, 3 x (weight-normed Conv1d k5 p2, channel
    LayerNorm eps 1e-5 with gamma/beta, LeakyReLU 0.2), padding zeroed after each, then the BiLSTM."""
    m = pad_mask(lengths, ids.shape[1])[:, None, :]
    x = F.embedding(ids, w["text_encoder.embedding.weight"]).transpose(1, 2).masked_fill(m, 0.0)
    for i in range(3):
        x = conv1d(x, w, f"text_encoder.cnn.{i}.0", padding=2)
        x = F.layer_norm(x.transpose(1, -1), (x.shape[1],), w[f"text_encoder.cnn.{i}.1.gamma"],
                         w[f"text_encoder.cnn.{i}.1.beta"], LN_EPS).transpose(1, -1)
        x = F.leaky_relu(x, 0.2).masked_fill(m, 0.0)
    x = bilstm(x.transpose(1, 2), lengths, w, "text_encoder.lstm")
    return x.transpose(1, 2).masked_fill(m, 0.0)


def duration_encoder(d_en, s, lengths, w):
    """predictor.text_encoder: d_en [B,512,T], s [B,128] -> d [B,T,640]. 3 x (BiLSTM over [x, s],
    AdaLayerNorm: (1 + gamma) * LN(x) + beta with [gamma, beta] = fc(s), no affine), s concatenated
    after each block, padding zeroed."""
    m = pad_mask(lengths, d_en.shape[2])[:, :, None]
    style = s[:, None, :].expand(-1, d_en.shape[2], -1)
    x = torch.cat([d_en.transpose(1, 2), style], dim=-1).masked_fill(m, 0.0)
    for i in range(3):
        x = bilstm(x, lengths, w, f"predictor.text_encoder.lstms.{2 * i}")
        p = f"predictor.text_encoder.lstms.{2 * i + 1}.fc"
        gamma, beta = F.linear(s, w[p + ".weight"], w[p + ".bias"])[:, None, :].chunk(2, dim=-1)
        x = (1 + gamma) * F.layer_norm(x, (x.shape[-1],), eps=LN_EPS) + beta
        x = torch.cat([x, style], dim=-1).masked_fill(m, 0.0)
    return x


def durations(d, lengths, speed, w):
    """predictor.lstm (packed by length; Kokoro's B = 1 call is the same) + duration_proj -> logits
    [B,T,50], dur = sum(sigmoid) / speed [B,T], pred_dur = max(1, round-half-even(dur)) int64 [B,T]."""
    x = bilstm(d, lengths, w, "predictor.lstm")
    logits = F.linear(x, w["predictor.duration_proj.linear_layer.weight"],
                      w["predictor.duration_proj.linear_layer.bias"])
    dur = torch.sigmoid(logits).sum(dim=-1) / speed[:, None]
    return x, logits, dur, torch.round(dur).clamp(min=1).long()


# ---------------------------------------------------------------- frame side (one sequence, B = 1)
def f0n(en, s, w):
    """F0Ntrain: en [1,640,F] -> (shared [1,512,F], F0 [1,2F], N [1,2F]); shared BiLSTM, then per
    branch AdainResBlk1d 512->512, 512->256 (upsample), 256->256 and a Conv1d 256->1 k1."""
    f = en.shape[2]
    x = bilstm(en.transpose(1, 2), torch.tensor([f]), w, "predictor.shared").transpose(1, 2)
    out = [x]
    for br in ("F0", "N"):
        y = adain_resblk1d(x, s, w, f"predictor.{br}.0")
        y = adain_resblk1d(y, s, w, f"predictor.{br}.1", upsample=True)
        y = adain_resblk1d(y, s, w, f"predictor.{br}.2")
        out.append(conv1d(y, w, f"predictor.{br}_proj").squeeze(1))
    return tuple(out)


def decoder(asr, f0_curve, n_curve, s, w, keep):
    """Decoder: asr [1,512,F], F0/N [1,2F] -> generator input [1,512,2F]. keep(id, x) records stages."""
    f0 = keep("dec.F0_conv", conv1d(f0_curve[:, None], w, "decoder.F0_conv", stride=2, padding=1))
    n = keep("dec.N_conv", conv1d(n_curve[:, None], w, "decoder.N_conv", stride=2, padding=1))
    x = keep("dec.encode", adain_resblk1d(torch.cat([asr, f0, n], dim=1), s, w, "decoder.encode"))
    asr_res = keep("dec.asr_res", conv1d(asr, w, "decoder.asr_res.0"))
    for i in range(4):  # decode.3 upsamples; nothing is concatenated after it
        x = adain_resblk1d(torch.cat([x, asr_res, f0, n], dim=1), s, w, f"decoder.decode.{i}", i == 3)
        keep(f"dec.decode.{i}", x)
    return x


def sine_source(f0_curve, noise, w):
    """SineGen + SourceModuleHnNSF: F0 [1,2F] (Hz), noise [600F,9] N(0,1) -> har_source [1,600F].
    Phase is integrated at frame rate (linear 1/300 downsample, cumsum, linear x300 upsample) exactly
    as Kokoro does; rand_ini is left out (it never reaches the downsampled phase)."""
    f0 = F.interpolate(f0_curve[:, None], scale_factor=UPSAMPLE, mode="nearest").transpose(1, 2)
    fn = f0 * torch.arange(1, HARMONICS + 1, dtype=torch.float32)[None, None, :]
    rad = (fn / SR) % 1
    rad = F.interpolate(rad.transpose(1, 2), scale_factor=1 / UPSAMPLE, mode="linear").transpose(1, 2)
    phase = torch.cumsum(rad, dim=1) * 2 * math.pi
    phase = F.interpolate(phase.transpose(1, 2) * UPSAMPLE, scale_factor=UPSAMPLE,
                          mode="linear").transpose(1, 2)
    sines = torch.sin(phase) * SINE_AMP
    uv = (f0 > VOICED_HZ).to(torch.float32)
    amp = uv * NOISE_STD + (1 - uv) * SINE_AMP / 3
    waves = sines * uv + amp * noise[None]
    lin = "decoder.generator.m_source.l_linear"
    return torch.tanh(F.linear(waves, w[lin + ".weight"], w[lin + ".bias"])).transpose(1, 2).squeeze(1)


def harmonics(f0_curve, noise, w):
    """(har_source [1,600F], har [1,22,120F+1]): the source, then its STFT as [|X|, angle(X)]."""
    har_source = sine_source(f0_curve, noise, w)
    spec = torch.stft(har_source, N_FFT, HOP, N_FFT, window=window(), return_complex=True)
    return har_source, torch.cat([torch.abs(spec), torch.angle(spec)], dim=1)


def window():
    return torch.hann_window(N_FFT, periodic=True, dtype=torch.float32)


def generator(x, s, f0_curve, noise, w, keep):
    """Generator: x [1,512,2F] -> audio [1,600F]. Harmonic source -> STFT (n_fft 20, hop 5, periodic
    Hann, centre reflect padding) -> har [1,22,120F+1]; two upsampling stages (LeakyReLU 0.1,
    ConvTranspose1d, + noise_res(noise_convs(har)), mean of 3 AdaINResBlock1); LeakyReLU 0.01,
    conv_post, exp magnitude and sin phase, iSTFT."""
    g = "decoder.generator"
    har_source, har = harmonics(f0_curve, noise, w)
    keep("gen.har_source", har_source)
    har = keep("gen.har", har)
    for i, (stride, k) in enumerate(((10, 20), (6, 12))):
        x = F.leaky_relu(x, 0.1)
        if i == 0:
            src = conv1d(har, w, f"{g}.noise_convs.0", stride=6, padding=3)
        else:
            src = conv1d(har, w, f"{g}.noise_convs.1")
        src = adain_resblock1(src, s, w, f"{g}.noise_res.{i}", 7 if i == 0 else 11)
        src = keep(f"gen.noise_res.{i}", src)
        x = F.conv_transpose1d(x, w[f"{g}.ups.{i}.weight"], w[f"{g}.ups.{i}.bias"], stride=stride,
                               padding=(k - stride) // 2)
        if i == 1:
            x = F.pad(x, (1, 0), mode="reflect")
        x = keep(f"gen.ups.{i}", x) + src
        xs = None
        for j, kk in enumerate((3, 7, 11)):
            y = adain_resblock1(x, s, w, f"{g}.resblocks.{3 * i + j}", kk)
            xs = y if xs is None else xs + y
        x = keep(f"gen.stage.{i}", xs / 3)
    x = keep("gen.conv_post", conv1d(F.leaky_relu(x), w, f"{g}.conv_post", padding=3))
    mag, phase = torch.exp(x[:, :N_FFT // 2 + 1]), torch.sin(x[:, N_FFT // 2 + 1:])
    return torch.istft(mag * torch.exp(phase * 1j), N_FFT, HOP, N_FFT, window=window())


# ---------------------------------------------------------------- the whole synthesis
def style_rows(voice, phoneme_lengths):
    """ref_s [B,256] = voice[len(phonemes) - 1] (Kokoro's pipeline row, SYNTHESIS.md 1.0)."""
    return torch.stack([torch.from_numpy(voice[n - 1, 0]) for n in phoneme_lengths])


def noise_for(frames, seed):
    """The N(0,1) noise input [600F, 9] of one sequence: torch.randn from a private generator."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(SAMPLES_PER_FRAME * frames, HARMONICS, generator=gen)


def synthesize(seqs, ref_s, speeds, w, noise_scale=1.0, noise_seeds=None, noises=None, pred_dur=None):
    """seqs: list of int id arrays ([0, *ids, 0]), ref_s [B,256], speeds [B] -> one dict per sequence
    of named stages. PL-BERT runs per sequence (capture_kokoro.py owns its batch behaviour); the rest of
    the token side runs as ONE right-padded batch, masked as Kokoro masks it; the frame side runs per
    sequence (Kokoro has no batched frame path: its alignment is B = 1 only).
    noises (list of [600F,9]) overrides noise_seeds; pred_dur (list) forces the durations."""
    lengths = torch.tensor([len(q) for q in seqs])
    ids, mask = ck.padded_batch(seqs)
    s_dec, s_pro = ref_s[:, :128], ref_s[:, 128:]
    d_en = torch.zeros(len(seqs), 512, ids.shape[1])
    for b, n in enumerate(lengths.tolist()):  # PL-BERT per sequence: its batch noise is capture_kokoro's
        d_en[b, :, :n] = ck.encoder(ids[b:b + 1, :n], mask[b:b + 1, :n], w, lambda _n, x: x)[0].T
    results = token_side(seqs, ref_s, speeds, w, d_en, pred_dur)
    for b, out in enumerate(results):
        results[b] = frame_side(out, s_dec[b:b + 1], s_pro[b:b + 1], w, noise_scale,
                                None if noises is None else noises[b],
                                None if noise_seeds is None else noise_seeds[b])
    return results


def token_side(seqs, ref_s, speeds, w, d_en=None, pred_dur=None):
    """TextEncoder, DurationEncoder and durations of ONE right-padded batch (d_en [B,512,T] from
    PL-BERT per sequence when None) -> one dict per sequence: ids, ref_s, speed, d_en, t_en, d,
    dur_lstm, dur_logits, dur, pred_dur (pred_dur (list) forces the durations)."""
    lengths = torch.tensor([len(q) for q in seqs])
    ids, mask = ck.padded_batch(seqs)
    s_pro = ref_s[:, 128:]
    if d_en is None:
        d_en = torch.zeros(len(seqs), 512, ids.shape[1])
        for b, n in enumerate(lengths.tolist()):
            d_en[b, :, :n] = ck.encoder(ids[b:b + 1, :n], mask[b:b + 1, :n], w, lambda _n, x: x)[0].T
    t_en = text_encoder(ids, lengths, w)
    d = duration_encoder(d_en, s_pro, lengths, w)
    lstm_out, logits, dur, pdur = durations(d, lengths, torch.as_tensor(speeds, dtype=torch.float32), w)
    results = []
    for b, n in enumerate(lengths.tolist()):
        out = {"ids": torch.from_numpy(np.asarray(seqs[b], dtype=np.int32)), "ref_s": ref_s[b],
               "speed": torch.tensor([speeds[b]], dtype=torch.float32),
               "d_en": d_en[b, :, :n], "t_en": t_en[b, :, :n], "d": d[b, :n], "dur_lstm": lstm_out[b, :n],
               "dur_logits": logits[b, :n], "dur": dur[b, :n]}
        out["pred_dur"] = pdur[b, :n] if pred_dur is None else torch.as_tensor(pred_dur[b]).long()
        results.append(out)
    return results


def prosody_frames(out, s_pro, w):
    """Alignment (row gather by pred_dur) and F0Ntrain of one sequence: adds en [640,F], asr [512,F],
    f0n_shared [512,F], F0 [2F], N [2F] to `out`; returns (asr [1,512,F], F0 [1,2F], N [1,2F])."""
    idx = torch.repeat_interleave(torch.arange(len(out["pred_dur"])), out["pred_dur"])
    en = out["d"][idx].T[None]                       # [1,640,F] = d^T @ alignment
    asr = out["t_en"][:, idx][None]                  # [1,512,F] = t_en @ alignment
    shared, f0, n = f0n(en, s_pro, w)
    out.update({"en": en[0], "asr": asr[0], "f0n_shared": shared[0], "F0": f0[0], "N": n[0]})
    return asr, f0, n


def frame_side(out, s_dec, s_pro, w, noise_scale, noise, seed):
    """Alignment (row gather), F0Ntrain, decoder and generator of one sequence; fills `out`."""
    asr, f0, n = prosody_frames(out, s_pro, w)
    frames = asr.shape[2]
    if noise is None and seed is not None:
        noise = noise_for(frames, seed)
    elif noise is None:
        noise = torch.zeros(SAMPLES_PER_FRAME * frames, HARMONICS)
    out["noise"] = noise

    def keep(name, x):
        out[name] = x[0]
        return x

    x = decoder(asr, f0, n, s_dec, w, keep)
    out["audio"] = generator(x, s_dec, f0, noise * noise_scale, w, keep)[0]
    return out


# ---------------------------------------------------------------- the pinned capture
FIXTURE, MANIFEST = "kokoro_speech_capture.safetensors", "kokoro_speech_capture.manifest.json"
INPUTS = ["ids", "ref_s", "speed", "noise"]
TOKEN_STAGES = ["d_en", "t_en", "d", "dur_lstm", "dur_logits", "dur", "pred_dur"]
FRAME_STAGES = ["en", "asr", "f0n_shared", "F0", "N", "dec.F0_conv", "dec.N_conv", "dec.encode",
                "dec.asr_res", "dec.decode.0", "dec.decode.1", "dec.decode.2", "dec.decode.3",
                "gen.har_source", "gen.har", "gen.noise_res.0", "gen.ups.0", "gen.stage.0",
                "gen.noise_res.1", "gen.ups.1", "gen.stage.1", "gen.conv_post", "audio"]
FULL_ONLY = {"dur_lstm", "en", "asr", "gen.har_source", "f0n_shared", "dec.decode.0", "dec.decode.1",
             "dec.decode.2", "gen.har", "gen.noise_res.0", "gen.ups.0", "gen.stage.0", "gen.noise_res.1",
             "gen.ups.1", "gen.stage.1"}
# (case, sentence of PASSAGE, phoneme count, speed, tier): "full" stores every stage; "light" leaves out
# FULL_ONLY: the 20F and 120F+1 generator tensors (they dominate: 320 kB vs 48 kB per frame), and
# the exact gathers en / asr (d and t_en rows repeated by pred_dur), har_source and the duration LSTM.
CASES = [("speech4", 0, 2, 1.0, "full"), ("speech8", 0, 6, 1.4, "light"), ("speech20", 1, 18, 1.3, "light"),
         ("speech40", 2, 38, 1.1, "light")]
NOISE_SEED = 20261205   # + case index: the torch.Generator seed of each case's N(0,1) noise
# The "sinegen" case: the harmonic source alone on a hand-made F0 curve [2F], F = 6, that the synthetic
# model never produces: zero, below and exactly at the 10 Hz voicing threshold, negative (remainder
# wraps), and high; its noise uses seed NOISE_SEED - 1.
SINEGEN_F0 = [0.0, 5.0, 10.0, 10.5, 80.0, 150.0, 220.0, 300.0, 450.0, -30.0, -200.0, 120.0]


def case_inputs(lex):
    """[(name, text, phonemes, ids, speed, tier)] of CASES; ids are [0, *vocab ids, 0]."""
    out = []
    for name, sentence, count, speed, tier in CASES:
        text, ph = ck.exact_utterance(lex, count, sentence)
        out.append((name, text, ph, lex.ids(ph), speed, tier))
    return out


def stages_of(tier):
    return [s for s in INPUTS + TOKEN_STAGES + FRAME_STAGES if tier == "full" or s not in FULL_ONLY]


def to_numpy(x):
    x = x.detach().contiguous()
    return x.numpy().astype(np.int64 if x.dtype == torch.int64 else
                            np.int32 if x.dtype == torch.int32 else np.float32)


def run_cases(w, voice, cases, noise_scale, batch):
    """Runs the cases alone (batch False: one synthesize call each) or as ONE padded batch."""
    ref_s = style_rows(voice, [len(c[2]) for c in cases])
    seeds = [NOISE_SEED + i for i in range(len(cases))]
    with torch.no_grad():
        if batch:
            return synthesize([c[3] for c in cases], ref_s, [c[4] for c in cases], w, noise_scale, seeds)
        return [synthesize([c[3]], ref_s[i:i + 1], [c[4]], w, noise_scale, seeds[i:i + 1])[0]
                for i, c in enumerate(cases)]


def batch_vs_alone(alone, batched):
    """{stage: max |batch - alone|} over the cases (stage shapes differ if a duration flipped)."""
    return worst_diff(alone, batched, INPUTS + TOKEN_STAGES + FRAME_STAGES)


def worst_diff(alone, batched, stages):
    """{stage: max |batch - alone|} over the cases, 3 significant digits; inf where a shape differs."""
    res = {}
    for stage in stages:
        worst = 0.0
        for a, b in zip(alone, batched):
            if a[stage].shape != b[stage].shape:
                worst = float("inf")
                break
            worst = max(worst, float((a[stage].double() - b[stage].double()).abs().max()))
        res[stage] = float(f"{worst:.3g}")
    return res


BATCH_LIMITS = {"token": 1e-5, "dec.": 1e-4}  # max abs allowed between padded batch and alone (see README)


def stft_recipe(x):
    """SYNTHESIS.md 1.7's STFT in float64 without torch.stft: reflect-pad 10, frames at hop 5 times the
    periodic Hann window, 20-point DFT bins 0..10. x [L] -> complex [11, L/5 + 1]."""
    x = F.pad(x.double()[None, None], (N_FFT // 2, N_FFT // 2), mode="reflect")[0, 0]
    frames = x.unfold(0, N_FFT, HOP) * window().double()              # [frames, 20]
    n, k = torch.arange(N_FFT, dtype=torch.float64), torch.arange(N_FFT // 2 + 1, dtype=torch.float64)
    ang = -2 * math.pi * k[:, None] * n[None, :] / N_FFT
    return torch.complex(torch.cos(ang) @ frames.T, torch.sin(ang) @ frames.T)


def istft_recipe(spec):
    """SYNTHESIS.md 1.7's iSTFT in float64: per frame a real inverse DFT of bins 0..10 (imaginary parts
    of bins 0 and 10 ignored), times the window, overlap-add at hop 5, divided by the overlap-added
    window squared, first 10 samples dropped, 5 (frames - 1) kept. spec complex [11, frames] -> [L]."""
    n, k = torch.arange(N_FFT, dtype=torch.float64), torch.arange(N_FFT // 2 + 1, dtype=torch.float64)
    ang = 2 * math.pi * n[:, None] * k[None, :] / N_FFT               # [20, 11]
    weight = torch.full((N_FFT // 2 + 1,), 2.0, dtype=torch.float64)
    weight[0] = weight[-1] = 1.0
    re, im = spec.real.double(), spec.imag.double()
    frames = (torch.cos(ang) * weight) @ re - (torch.sin(ang) * weight) @ im   # [20, frames]
    win = window().double()
    count = spec.shape[1]
    out = torch.zeros(HOP * (count - 1) + N_FFT, dtype=torch.float64)
    env = torch.zeros_like(out)
    for t in range(count):
        out[HOP * t:HOP * t + N_FFT] += frames[:, t] / N_FFT * win
        env[HOP * t:HOP * t + N_FFT] += win * win
    keep = slice(N_FFT // 2, N_FFT // 2 + HOP * (count - 1))
    return out[keep] / env[keep]


def check_stft(fixture_dir):
    """The pinned speech4 and sinegen tensors against stft_recipe / istft_recipe: har magnitude, har
    phase (mod 2 pi, bins with magnitude > 1e-3 only, since angle() of smaller bins is noise) and
    the audio from conv_post. Prints max abs differences; returns 0."""
    t = read_safetensors(os.path.join(fixture_dir, FIXTURE))
    for case in ("speech4", "sinegen"):
        spec = stft_recipe(torch.from_numpy(t[f"{case}.har_source" if case == "sinegen" else
                                             f"{case}.gen.har_source"].copy()))
        har = torch.from_numpy(t[f"{case}.har" if case == "sinegen" else f"{case}.gen.har"].copy()).double()
        mag = spec.abs()
        dphase = torch.remainder(torch.angle(spec) - har[11:] + math.pi, 2 * math.pi) - math.pi
        print(f"{case}: |X| max abs {float((mag - har[:11]).abs().max()):.3g}, phase mod 2pi max abs "
              f"{float(dphase[mag > 1e-3].abs().max()):.3g} (bins > 1e-3)")
    post = torch.from_numpy(t["speech4.gen.conv_post"].copy()).double()
    audio = istft_recipe(torch.polar(torch.exp(post[:11]), torch.sin(post[11:])))
    pinned = torch.from_numpy(t["speech4.audio"].copy())
    print(f"speech4: audio max abs {float((audio - pinned).abs().max()):.3g} (peak {float(audio.abs().max()):.3g})")
    return 0


def check_batch(weights, voice, noise_scale):
    """The capture's cases as ONE right-padded batch vs each alone. Passes when pred_dur is identical,
    every token-side stage is within 1e-5 and every decoder stage within 1e-4: differences that size
    come from GEMM shapes (batch rows change BLAS blocking); a padding leak would give O(0.1). The
    generator stages are printed, not judged: STFT phase of near-zero bins wraps (README)."""
    w = load_state(weights)
    cases = case_inputs(ck.Lexicon(ck.KOKORO_DIR))
    alone = run_cases(w, voice, cases, noise_scale, batch=False)
    diff = batch_vs_alone(alone, run_cases(w, voice, cases, noise_scale, batch=True))
    bad = [st for st, v in diff.items()
           if (st in TOKEN_STAGES and v > BATCH_LIMITS["token"]) or
              (st.startswith("dec.") and v > BATCH_LIMITS["dec."]) or (st == "pred_dur" and v != 0)]
    for st, v in diff.items():
        print(f"{st:18s} {v:.3g}{'  FAIL' if st in bad else ''}")
    print(f"kokoro_reference: batch of {len(cases)} vs alone: {'FAIL ' + str(bad) if bad else 'ok'}",
          file=sys.stderr)
    return 1 if bad else 0


def capture_items(cases, results):
    """Fixture items (name, ndarray) in storage order: per case its stages in stages_of(tier) order."""
    items = []
    for (name, _t, _p, _i, _s, tier), out in zip(cases, results):
        items += [(f"{name}.{st}", to_numpy(out[st])) for st in stages_of(tier)]
    return items


def g4(x):
    """A float rounded to 4 significant digits, for the manifest."""
    return float(f"{float(x):.4g}")


def capture_manifest(data, cases, results, weights, voice, noise_scale, batch_diff, argv):
    with open(os.path.abspath(__file__), "rb") as f:
        script_sha = ck.sha256_hex(f.read())
    return {
        "fixture": {"file": FIXTURE, "sha256": ck.sha256_hex(data)},
        "oracle": {"torch": torch.__version__, "numpy": np.__version__, "python": sys.version.split()[0],
                   "script": "tools/kokoro_reference.py", "script_sha256": script_sha, "dtype": "float32",
                   "torch_threads": 1,
                   "command": "/usr/bin/python3 tools/kokoro_reference.py " + " ".join(argv)},
        "weights": {"generator": "splitmix64-uniform-v1", "seed": kw.SEED,
                    "rule": "docs/synthetic-weights.md",
                    "tensors": {n: {"shape": list(a.shape),
                                    "sha256": ck.sha256_hex(a.astype("<f4").tobytes())}
                                for n, a in weights.items()},
                    "voice": {"name": kw.VOICE_NAME, "shape": kw.VOICE_SHAPE,
                              "sha256": ck.sha256_hex(voice.astype("<f4").tobytes())}},
        "noise": {"kind": "N(0,1) from torch.randn(600F, 9, generator=torch.Generator().manual_seed(seed))",
                  "scale": noise_scale},
        "cases": {c[0]: {"text": c[1], "phonemes": c[2], "tokens": len(c[3]), "speed": c[4], "tier": c[5],
                         "voice_row": len(c[2]) - 1, "noise_seed": NOISE_SEED + i,
                         "pred_dur": r["pred_dur"].tolist(), "frames": int(r["pred_dur"].sum()),
                         "samples": int(r["audio"].numel()),
                         "audio_max_abs": g4(r["audio"].abs().max()),
                         "F0_range": [g4(r["F0"].min()), g4(r["F0"].max())],
                         "tensors": {f"{c[0]}.{st}": list(r[st].shape) for st in stages_of(c[5])}}
                  for i, (c, r) in enumerate(zip(cases, results))},
        "sinegen": {"F0": SINEGEN_F0, "frames": len(SINEGEN_F0) // 2, "noise_seed": NOISE_SEED - 1,
                    "tensors": ["sinegen.F0", "sinegen.noise", "sinegen.har_source", "sinegen.har"]},
        "batch_padded_vs_alone_max_abs": batch_diff,
    }


def sinegen_items(w, noise_scale):
    """The "sinegen" items: F0 [12], noise [3600,9] (N(0,1), unscaled), har_source [3600], har [22,721]."""
    f0 = torch.tensor([SINEGEN_F0], dtype=torch.float32)
    noise = noise_for(len(SINEGEN_F0) // 2, NOISE_SEED - 1)
    with torch.no_grad():
        har_source, har = harmonics(f0, noise * noise_scale, w)
    return [("sinegen.F0", f0[0].numpy()), ("sinegen.noise", noise.numpy()),
            ("sinegen.har_source", har_source[0].numpy()), ("sinegen.har", har[0].numpy())]


def capture(out_dir, weights, voice, noise_scale, argv):
    t0 = time.time()
    w = load_state(weights)
    cases = case_inputs(ck.Lexicon(ck.KOKORO_DIR))
    alone = run_cases(w, voice, cases, noise_scale, batch=False)
    batch_diff = batch_vs_alone(alone, run_cases(w, voice, cases, noise_scale, batch=True))
    data = ck.safetensors_bytes(capture_items(cases, alone) + sinegen_items(w, noise_scale))
    os.makedirs(out_dir, exist_ok=True)
    ck.write_file(os.path.join(out_dir, FIXTURE), data)
    doc = capture_manifest(data, cases, alone, weights, voice, noise_scale, batch_diff, argv)
    ck.write_file(os.path.join(out_dir, MANIFEST),
                  (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    print(f"kokoro_reference: {len(data)} bytes in {time.time() - t0:.1f} s", file=sys.stderr)


def read_safetensors(path):
    """{name: ndarray} of a safetensors file (F32 / I32 / I64 only)."""
    with open(path, "rb") as f:
        blob = f.read()
    n = int.from_bytes(blob[:8], "little")
    header, base = json.loads(blob[8:8 + n]), 8 + n
    kinds = {"F32": "<f4", "I32": "<i4", "I64": "<i8"}
    return {k: np.frombuffer(blob[base + v["data_offsets"][0]:base + v["data_offsets"][1]],
                             dtype=kinds[v["dtype"]]).reshape(v["shape"])
            for k, v in header.items() if k != "__metadata__"}


def verify(fixture_dir, weights, voice, case_name):
    """Regenerates one case alone (and the small sinegen entry) and compares every stored tensor bit
    for bit; returns 0 on success."""
    with open(os.path.join(fixture_dir, MANIFEST), encoding="utf-8") as f:
        doc = json.load(f)
    with open(os.path.join(fixture_dir, FIXTURE), "rb") as f:
        if ck.sha256_hex(f.read()) != doc["fixture"]["sha256"]:
            print("kokoro_reference: fixture SHA-256 does not match its manifest", file=sys.stderr)
            return 1
    pinned = read_safetensors(os.path.join(fixture_dir, FIXTURE))
    cases = [c for c in case_inputs(ck.Lexicon(ck.KOKORO_DIR)) if c[0] == case_name]
    index = [c[0] for c in CASES].index(case_name)
    ref_s = style_rows(voice, [len(cases[0][2])])
    w = load_state(weights)
    with torch.no_grad():
        out = synthesize([cases[0][3]], ref_s, [cases[0][4]], w, doc["noise"]["scale"],
                         [NOISE_SEED + index])[0]
    fresh = [(f"{case_name}.{st}", to_numpy(out[st])) for st in stages_of(cases[0][5])]
    fresh += sinegen_items(w, doc["noise"]["scale"])
    bad = [name for name, a in fresh if not np.array_equal(a, pinned[name])]
    for name, a in fresh:
        if name in bad:
            diff = np.abs(a.astype(np.float64) - pinned[name]).max()
            print(f"kokoro_reference: {name} differs (max abs {diff:.3g})", file=sys.stderr)
    print(f"kokoro_reference: {case_name} + sinegen: {len(fresh) - len(bad)} tensors identical, "
          f"{len(bad)} differ", file=sys.stderr)
    return 1 if bad else 0


# ---------------------------------------------------------------- the token-side edge capture
EDGE_FIXTURE, EDGE_MANIFEST = "kokoro_token_edges.safetensors", "kokoro_token_edges.manifest.json"
# (case, sentence of PASSAGE, phoneme count, speed, channel stride): the shortest line (1 phoneme,
# 3 tokens, voice row 0) and the longest chunk (510 phonemes, 512 tokens: every PL-BERT position and
# voice row 509). The stride keeps every `stride`-th channel (0, stride, ...) of the wide tensors
# (EDGE_STRIDED) so the 512-token case stays near 2 MB; dur_logits, dur, pred_dur, F0, N are whole.
# Speed 0.85 on edge510: its durations take 4 values (1 to 4) and none of its sums / speed lies within
# 0.016 of a rounding tie (1.1 or 1.15 vary more but come within 2e-5 / 3e-4 of one; the manifest
# records the distance as dur_min_distance_to_half).
EDGE_CASES = [("edge1", 0, 1, 1.0, 1), ("edge510", 0, 510, 0.85, 8)]
EDGE_STAGES = ["ids", "ref_s", "speed", "d_en", "t_en", "d", "dur_lstm", "dur_logits", "dur", "pred_dur",
               "en", "asr", "f0n_shared", "F0", "N"]
EDGE_STRIDED = {"d_en": 0, "t_en": 0, "d": 1, "dur_lstm": 1, "en": 0, "asr": 0, "f0n_shared": 0}  # axis
EDGE_BATCH_WITH = "speech4"  # the existing case batched with the two edges for the batch check


def edge_inputs(lex):
    """[(name, text, phonemes, ids, speed, stride)] of EDGE_CASES; ids are [0, *vocab ids, 0]."""
    out = []
    for name, sentence, count, speed, stride in EDGE_CASES:
        text, ph = ck.exact_utterance(lex, count, sentence)
        out.append((name, text, ph, lex.ids(ph), speed, stride))
    return out


def run_edges(w, voice, cases):
    """Token side + alignment + F0Ntrain of each case alone ([out dict] in case order)."""
    ref_s = style_rows(voice, [len(c[2]) for c in cases])
    res = []
    with torch.no_grad():
        for i, c in enumerate(cases):
            out = token_side([c[3]], ref_s[i:i + 1], [c[4]], w)[0]
            prosody_frames(out, ref_s[i:i + 1, 128:], w)
            res.append(out)
    return res


def edge_items(cases, results):
    """Fixture items (name, ndarray): per case EDGE_STAGES, the EDGE_STRIDED ones cut to every
    stride-th channel (same layout as the speech capture otherwise)."""
    items = []
    for c, out in zip(cases, results):
        for st in EDGE_STAGES:
            x = out[st]
            if st in EDGE_STRIDED and c[5] > 1:
                x = x[::c[5]] if EDGE_STRIDED[st] == 0 else x[:, ::c[5]]
            items.append((f"{c[0]}.{st}", to_numpy(x)))
    return items


def edge_batch_diff(w, voice, cases):
    """{stage: max |batch - alone|} over the token stages: the edge cases and EDGE_BATCH_WITH as ONE
    padded token-side batch against each alone (the frame stages run per sequence: with equal
    pred_dur they see only the token stages' differences)."""
    lex = ck.Lexicon(ck.KOKORO_DIR)
    extra = [c for c in case_inputs(lex) if c[0] == EDGE_BATCH_WITH][0]
    seqs = [c[3] for c in cases] + [extra[3]]
    speeds = [c[4] for c in cases] + [extra[4]]
    ref_s = style_rows(voice, [len(c[2]) for c in cases] + [len(extra[2])])
    with torch.no_grad():
        batched = token_side(seqs, ref_s, speeds, w)
        alone = [token_side([q], ref_s[i:i + 1], [speeds[i]], w)[0] for i, q in enumerate(seqs)]
    return worst_diff(alone, batched, INPUTS[:3] + TOKEN_STAGES)


def edge_manifest(data, cases, results, batch_diff, argv):
    with open(os.path.abspath(__file__), "rb") as f:
        script_sha = ck.sha256_hex(f.read())
    cases_doc = {}
    for c, r in zip(cases, results):
        dur = r["dur"].double()
        tie = (dur - torch.floor(dur) - 0.5).abs().min()   # closest distance to a rounding tie
        hist = torch.bincount(r["pred_dur"]).tolist()
        cases_doc[c[0]] = {
            "text": c[1], "phonemes": c[2], "tokens": len(c[3]), "speed": c[4], "voice_row": len(c[2]) - 1,
            "channel_stride": c[5],
            "strided": {f"{c[0]}.{st}": ("rows" if ax == 0 else "columns") for st, ax in EDGE_STRIDED.items()}
            if c[5] > 1 else {},
            "pred_dur": r["pred_dur"].tolist(), "frames": int(r["pred_dur"].sum()),
            "pred_dur_histogram": {str(k): v for k, v in enumerate(hist) if v},
            "dur_min_distance_to_half": g4(tie),
            "F0_range": [g4(r["F0"].min()), g4(r["F0"].max())],
            "tensors": {f"{c[0]}.{st}": list(x.shape) for st, x in
                        [(n.split(".", 1)[1], a) for n, a in edge_items([c], [r])]}}
    return {
        "fixture": {"file": EDGE_FIXTURE, "sha256": ck.sha256_hex(data)},
        "oracle": {"torch": torch.__version__, "numpy": np.__version__, "python": sys.version.split()[0],
                   "script": "tools/kokoro_reference.py", "script_sha256": script_sha, "dtype": "float32",
                   "torch_threads": 1,
                   "command": "/usr/bin/python3 tools/kokoro_reference.py " + " ".join(argv)},
        "weights": {"generator": "splitmix64-uniform-v1", "seed": kw.SEED, "rule": "docs/synthetic-weights.md",
                    "same_as": MANIFEST},
        "stages": "token side + alignment + F0Ntrain only (no decoder, generator, noise); each case alone",
        "subset": "a case with channel_stride k > 1 keeps channels 0, k, 2k, ... of d_en, t_en, en, asr, "
                  "f0n_shared ([C/k, T or F]) and of d, dur_lstm ([T, C/k]); every other tensor is whole",
        "cases": cases_doc,
        "batch_padded_vs_alone_max_abs": {"with": EDGE_BATCH_WITH, "stages": batch_diff},
    }


def capture_edges(out_dir, weights, voice, argv):
    t0 = time.time()
    w = load_state(weights)
    cases = edge_inputs(ck.Lexicon(ck.KOKORO_DIR))
    results = run_edges(w, voice, cases)
    batch_diff = edge_batch_diff(w, voice, cases)
    data = ck.safetensors_bytes(edge_items(cases, results))
    os.makedirs(out_dir, exist_ok=True)
    ck.write_file(os.path.join(out_dir, EDGE_FIXTURE), data)
    doc = edge_manifest(data, cases, results, batch_diff, argv)
    ck.write_file(os.path.join(out_dir, EDGE_MANIFEST),
                  (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    print(f"kokoro_reference: {len(data)} bytes in {time.time() - t0:.1f} s", file=sys.stderr)


def verify_edges(fixture_dir, weights, voice, case_name=None):
    """Regenerates the edge cases alone (only case_name when given: edge1 takes seconds, edge510 about
    a minute) and compares their stored tensors bit for bit; returns 0 on success."""
    with open(os.path.join(fixture_dir, EDGE_MANIFEST), encoding="utf-8") as f:
        doc = json.load(f)
    with open(os.path.join(fixture_dir, EDGE_FIXTURE), "rb") as f:
        if ck.sha256_hex(f.read()) != doc["fixture"]["sha256"]:
            print("kokoro_reference: edge fixture SHA-256 does not match its manifest", file=sys.stderr)
            return 1
    pinned = read_safetensors(os.path.join(fixture_dir, EDGE_FIXTURE))
    cases = [c for c in edge_inputs(ck.Lexicon(ck.KOKORO_DIR)) if case_name in (None, c[0])]
    if not cases:
        print(f"kokoro_reference: no edge case {case_name!r}", file=sys.stderr)
        return 1
    fresh = edge_items(cases, run_edges(load_state(weights), voice, cases))
    bad = [name for name, a in fresh if name not in pinned or not np.array_equal(a, pinned[name])]
    stored = [n for n in pinned if n.split(".", 1)[0] in {c[0] for c in cases}]
    for name in bad:
        print(f"kokoro_reference: {name} differs", file=sys.stderr)
    print(f"kokoro_reference: {', '.join(c[0] for c in cases)}: {len(fresh) - len(bad)} tensors "
          f"identical, {len(bad)} differ", file=sys.stderr)
    return 1 if bad or len(fresh) != len(stored) else 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--capture", metavar="DIR", help="write the pinned speech capture + manifest here")
    parser.add_argument("--weights-out", metavar="PATH", help="write the 548 synthetic tensors + voice (F32)")
    parser.add_argument("--verify", metavar="DIR", help="regenerate one case and compare with DIR's capture")
    parser.add_argument("--case", help=f"the case --verify (default {CASES[0][0]}) or --verify-edges "
                        "(default: both) regenerates")
    parser.add_argument("--capture-edges", metavar="DIR", help="write the token-side edge capture here")
    parser.add_argument("--verify-edges", metavar="DIR", help="regenerate DIR's edge capture, compare bits")
    parser.add_argument("--check-batch", action="store_true", help="padded batch == each sequence alone")
    parser.add_argument("--check-stft", metavar="DIR", help="DIR's capture vs the explicit STFT recipes")
    parser.add_argument("--noise-scale", type=float, default=1.0, help="SineGen noise multiplier (0: none)")
    args = parser.parse_args(argv)
    if args.check_stft:
        return check_stft(args.check_stft)
    if not (args.capture or args.weights_out or args.verify or args.check_batch or args.capture_edges or
            args.verify_edges):
        parser.error("give --capture, --capture-edges, --weights-out, --verify, --verify-edges, "
                     "--check-batch or --check-stft")
    torch.set_num_threads(1)
    weights, voice = kw.make_weights(), kw.make_voice()
    kw.check_generator(weights, voice)
    if args.weights_out:
        items = list(weights.items()) + [(kw.VOICE_NAME, voice)]
        ck.write_file(args.weights_out, ck.safetensors_bytes(items))
    if args.capture:
        capture(args.capture, weights, voice, args.noise_scale, argv)
    if args.capture_edges:
        capture_edges(args.capture_edges, weights, voice, argv)
    status = check_batch(weights, voice, args.noise_scale) if args.check_batch else 0
    if args.verify_edges:
        status = max(status, verify_edges(args.verify_edges, weights, voice, args.case))
    return max(status, verify(args.verify, weights, voice, args.case or CASES[0][0]) if args.verify else 0)


if __name__ == "__main__":
    sys.exit(main())
