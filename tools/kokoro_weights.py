#!/usr/bin/python3
"""kokoro_weights.py - the synthetic WHOLE Kokoro-82M checkpoint (all five groups) and a synthetic voice,
from DESIGN.md section 7's splitmix64-uniform-v1 stream; docs/synthetic-weights.md is the rule in prose.
It must not read a real checkpoint, and the 25 encoder tensors of capture_kokoro.py must stay bit-identical.

Names are flat checkpoint names: `<group>.<key without "module.">`, e.g.
`decoder.generator.conv_post.weight_g` (the group dict of kokoro-v1_0.pth, then the key as the file
stores it, legacy weight_g/weight_v storage).
Order: the order of SYNTHESIS.md Appendix A (bert, bert_encoder, predictor, text_encoder, decoder), which is
also the order of --weights-out. InstanceNorm affine tensors are not in the checkpoint and not generated.
"""
import math
import os
import re
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import capture_kokoro as ck  # noqa: E402  (the generator constants, FNV-1a, the bert tensor list)

SEED = ck.SEED
H = 256            # LSTM hidden per direction (hidden_dim // 2)
D_HID = 512        # hidden_dim
STYLE = 128        # style_dim
VOICE_NAME = "voice.synthetic"   # the stream name of the synthetic voice pack
VOICE_SHAPE = [510, 1, 256]

# ---------------------------------------------------------------- the scale table (first match wins)
# (regex over the flat name, scale, offset): value = scale * (2u - 1) + offset, u in [0, 1).
# Rows 1-2 are DESIGN.md section 7 unchanged; the rest were chosen so the forward pass is sane
# (docs/synthetic-weights.md gives the reason for each).
SCALE_TABLE = [
    (r".*(LayerNorm|layer_norm)\.weight", 0.1, 1.0),
    (r"bert\..*|bert_encoder\..*", 0.05, 0.0),
    (r"decoder\.generator\.conv_post\.weight_g", 0.02, 0.1),
    (r"decoder\.(F0_conv|N_conv)\.weight_g", 0.0, 0.01),
    (r".*\.weight_g", 0.1, 1.0),
    (r".*\.weight_v", 0.05, 0.0),
    (r".*\.(weight_ih|weight_hh|bias_ih|bias_hh)_l0(_reverse)?", 0.0625, 0.0),
    (r"predictor\.duration_proj\.linear_layer\.weight", 1.0, 0.0),
    (r"predictor\.duration_proj\.linear_layer\.bias", 2.0, -6.0),
    (r"predictor\.F0_proj\.weight", 5.0, 0.0),
    (r"predictor\.F0_proj\.bias", 20.0, 180.0),
    (r".*\.alpha[12]\.[0-9]+", 0.5, 1.0),
    (r"text_encoder\.cnn\.[0-9]+\.1\.gamma", 0.1, 1.0),
    (r"text_encoder\.embedding\.weight", 1.0, 0.0),
    (r"decoder\.generator\.m_source\.l_linear\.weight", 1.0, 0.0),
    (re.escape(VOICE_NAME), 0.25, 0.0),
    (r".*", 0.05, 0.0),
]
_COMPILED = [(re.compile(p), s, o) for p, s, o in SCALE_TABLE]


def scale_offset(name):
    """(scale, offset) of the tensor `name`: the first SCALE_TABLE row whose regex matches all of it."""
    for rx, scale, offset in _COMPILED:
        if rx.fullmatch(name):
            return scale, offset
    raise KeyError(name)


def uniform(seed, name, count):
    """float32 [count]: capture_kokoro's vectorised splitmix64-uniform-v1 stream with this table's scale."""
    base = np.uint64(seed ^ ck.fnv1a64(name))
    z = base + np.arange(1, count + 1, dtype=np.uint64) * np.uint64(ck.GOLDEN)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(ck.MIX1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(ck.MIX2)
    z = z ^ (z >> np.uint64(31))
    u = (z >> np.uint64(40)).astype(np.float64) / float(1 << 24)
    scale, offset = scale_offset(name)
    return (scale * (2.0 * u - 1.0) + offset).astype(np.float32)


def reference_uniform(seed, name, count):
    """The same stream one element at a time with Python integers (the independent check)."""
    state, (scale, offset), out = seed ^ ck.fnv1a64(name), scale_offset(name), []
    for _ in range(count):
        state = (state + ck.GOLDEN) & ck.MASK64
        z = ((state ^ (state >> 30)) * ck.MIX1) & ck.MASK64
        z = ((z ^ (z >> 27)) * ck.MIX2) & ck.MASK64
        z ^= z >> 31
        value = scale * (2.0 * ((z >> 40) / 16777216.0) - 1.0) + offset
        out.append(struct.unpack("<f", struct.pack("<f", value))[0])
    return out


# ---------------------------------------------------------------- the key list (SYNTHESIS.md Appendix A)
def lstm(p, n_in):
    """A 1-layer BiLSTM n_in -> 2 x 256: forward then reverse, weight_ih, weight_hh, bias_ih, bias_hh."""
    out = []
    for sfx in ("", "_reverse"):
        out += [(f"{p}.weight_ih_l0{sfx}", [4 * H, n_in]), (f"{p}.weight_hh_l0{sfx}", [4 * H, H]),
                (f"{p}.bias_ih_l0{sfx}", [4 * H]), (f"{p}.bias_hh_l0{sfx}", [4 * H])]
    return out


def wn(p, shape, bias=True):
    """A weight-normed layer as the legacy hook stores it: bias (if any), weight_g [dim0,1,1], weight_v."""
    return ([(p + ".bias", [shape[0]])] if bias else []) + [
        (p + ".weight_g", [shape[0], 1, 1]), (p + ".weight_v", list(shape))]


def wn_transpose(p, c_in, c_out, k, groups=1):
    """A weight-normed ConvTranspose1d: weight [Cin, Cout/groups, k], g over dim 0 = input, bias [Cout]."""
    return [(p + ".bias", [c_out]), (p + ".weight_g", [c_in, 1, 1]),
            (p + ".weight_v", [c_in, c_out // groups, k])]


def linear(p, n_out, n_in):
    return [(p + ".weight", [n_out, n_in]), (p + ".bias", [n_out])]


def adain_resblk1d(p, c_in, c_out, upsample=False):
    """AdainResBlk1d: conv1, conv2, norm1.fc, norm2.fc, [conv1x1 (no bias)], [pool (depthwise transpose)]."""
    out = wn(p + ".conv1", [c_out, c_in, 3]) + wn(p + ".conv2", [c_out, c_out, 3])
    out += linear(p + ".norm1.fc", 2 * c_in, STYLE) + linear(p + ".norm2.fc", 2 * c_out, STYLE)
    if c_in != c_out:
        out += wn(p + ".conv1x1", [c_out, c_in, 1], bias=False)
    if upsample:
        out += wn_transpose(p + ".pool", c_in, c_in, 3, groups=c_in)
    return out


def adain_resblock1(p, c, k):
    """AdaINResBlock1: convs1.0-2 (dilated), convs2.0-2, adain1.0-2.fc, adain2.0-2.fc, alpha1/2.0-2."""
    out = []
    for conv in ("convs1", "convs2"):
        for j in range(3):
            out += wn(f"{p}.{conv}.{j}", [c, c, k])
    for ada in ("adain1", "adain2"):
        for j in range(3):
            out += linear(f"{p}.{ada}.{j}.fc", 2 * c, STYLE)
    for a in ("alpha1", "alpha2"):
        out += [(f"{p}.{a}.{j}", [1, c, 1]) for j in range(3)]
    return out


def predictor_keys():
    p, out = "predictor", []
    for i in range(3):
        out += lstm(f"{p}.text_encoder.lstms.{2 * i}", D_HID + STYLE)
        out += linear(f"{p}.text_encoder.lstms.{2 * i + 1}.fc", 2 * D_HID, STYLE)
    out += lstm(p + ".lstm", D_HID + STYLE) + linear(p + ".duration_proj.linear_layer", 50, D_HID)
    out += lstm(p + ".shared", D_HID + STYLE)
    for br in ("F0", "N"):
        out += adain_resblk1d(f"{p}.{br}.0", D_HID, D_HID)
        out += adain_resblk1d(f"{p}.{br}.1", D_HID, D_HID // 2, upsample=True)
        out += adain_resblk1d(f"{p}.{br}.2", D_HID // 2, D_HID // 2)
    for br in ("F0", "N"):
        out += [(f"{p}.{br}_proj.weight", [1, D_HID // 2, 1]), (f"{p}.{br}_proj.bias", [1])]
    return out


def text_encoder_keys():
    p, out = "text_encoder", [("text_encoder.embedding.weight", [178, D_HID])]
    for i in range(3):
        out += wn(f"{p}.cnn.{i}.0", [D_HID, D_HID, 5])
        out += [(f"{p}.cnn.{i}.1.gamma", [D_HID]), (f"{p}.cnn.{i}.1.beta", [D_HID])]
    return out + lstm(p + ".lstm", D_HID)


def decoder_keys():
    p = "decoder"
    out = adain_resblk1d(p + ".encode", D_HID + 2, 1024)
    for i in range(4):
        out += adain_resblk1d(f"{p}.decode.{i}", 1024 + 2 + 64, 1024 if i < 3 else 512, upsample=i == 3)
    out += wn(p + ".F0_conv", [1, 1, 3]) + wn(p + ".N_conv", [1, 1, 3]) + wn(p + ".asr_res.0", [64, 512, 1])
    g = p + ".generator"
    out += linear(g + ".m_source.l_linear", 1, 9)
    out += [(g + ".noise_convs.0.weight", [256, 22, 12]), (g + ".noise_convs.0.bias", [256]),
            (g + ".noise_convs.1.weight", [128, 22, 1]), (g + ".noise_convs.1.bias", [128])]
    out += adain_resblock1(g + ".noise_res.0", 256, 7) + adain_resblock1(g + ".noise_res.1", 128, 11)
    out += wn_transpose(g + ".ups.0", 512, 256, 20) + wn_transpose(g + ".ups.1", 256, 128, 12)
    for i, k in enumerate([3, 7, 11] * 2):
        out += adain_resblock1(f"{g}.resblocks.{i}", 256 if i < 3 else 128, k)
    return out + wn(g + ".conv_post", [22, 128, 7])


def bert_keys():
    """capture_kokoro's 23 bert tensors plus the pooler (unused by Kokoro), then bert_encoder's 2."""
    shapes = dict(ck.WEIGHT_SHAPES)
    bert = [(n, s) for n, s in ck.WEIGHT_SHAPES if n.startswith("bert.")]
    bert += [("bert.pooler.weight", [768, 768]), ("bert.pooler.bias", [768])]
    return bert, [(n, shapes[n]) for n in ("bert_encoder.weight", "bert_encoder.bias")]


def weight_shapes():
    """[(flat name, shape)] of the whole checkpoint, in Appendix A order (548 tensors)."""
    bert, bert_encoder = bert_keys()
    return bert + bert_encoder + predictor_keys() + text_encoder_keys() + decoder_keys()


GROUP_COUNTS = {"bert": (25, 6292480), "bert_encoder": (2, 393728), "predictor": (122, 16194612),
                "text_encoder": (24, 5606400), "decoder": (375, 53276190)}  # SYNTHESIS.md section 3


def check_key_list(shapes):
    """Raises unless the tensor and parameter counts per group are SYNTHESIS.md section 3's."""
    got = {}
    for name, shape in shapes:
        n, p = got.get(name.split(".")[0], (0, 0))
        got[name.split(".")[0]] = (n + 1, p + math.prod(shape))
    if got != GROUP_COUNTS or len({n for n, _ in shapes}) != len(shapes):
        raise RuntimeError(f"key list does not match SYNTHESIS.md section 3: {got}")


def make_weights(seed=SEED):
    """dict flat name -> float32 ndarray, in weight_shapes() order."""
    shapes = weight_shapes()
    check_key_list(shapes)
    return {n: uniform(seed, n, math.prod(s)).reshape(s) for n, s in shapes}


def make_voice(seed=SEED):
    """The synthetic voice pack [510, 1, 256] float32: stream VOICE_NAME, uniform +-0.25 (std 0.144,
    like a real pack's 0.15); row r is the style of a phoneme string of r + 1 characters."""
    return uniform(seed, VOICE_NAME, math.prod(VOICE_SHAPE)).reshape(VOICE_SHAPE)


def check_generator(weights, voice):
    """Raises when the vectorised stream disagrees with the scalar one on a few tensors of each rule kind,
    or when the encoder tensors differ from capture_kokoro's (DESIGN.md section 7 must stay unchanged)."""
    enc = ck.make_weights(SEED)
    for name, array in enc.items():
        if not np.array_equal(array, weights[name]):
            raise RuntimeError(f"{name} differs from capture_kokoro's stream")
    probe = ["predictor.duration_proj.linear_layer.bias", "decoder.generator.conv_post.weight_g",
             "text_encoder.cnn.0.1.gamma", "decoder.generator.resblocks.0.alpha1.0"]
    for name in probe:
        if weights[name].reshape(-1)[:16].tolist() != reference_uniform(SEED, name, 16):
            raise RuntimeError(f"generator mismatch for {name}")
    if voice.reshape(-1)[:16].tolist() != reference_uniform(SEED, VOICE_NAME, 16):
        raise RuntimeError("generator mismatch for the voice")
