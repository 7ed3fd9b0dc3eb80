#!/usr/bin/python3
"""Writes tests/fixtures/pth/: small PyTorch checkpoints made by real torch.save in Kokoro's layout,
their safetensors twin, and hostile archives (raw pickle bytes) the C reader must reject.

    /usr/bin/python3 tools/make_pth_fixtures.py --out tests/fixtures/pth
    /usr/bin/python3 tools/make_pth_fixtures.py --full /tmp/kokoro_synthetic.pth   # ~24 MB, not committed

Use Debian's /usr/bin/python3 (python3-torch). The C tests never need torch: they read these files.
"""
import argparse
import collections
import io
import os
import struct
import sys
import zipfile

import numpy as np
import torch

# Reduced config with Kokoro's tensor names (MODEL.md): V vocab, E embedding, C hidden, F ffn, P
# positions, O output. Values are k/64 for integers |k| <= 64, exact in f32, f16 and bf16, so one F32
# safetensors twin equals every dtype's checkpoint after conversion.
V, E, C, F_DIM, P, O = 7, 4, 8, 12, 6, 5
L = "encoder.albert_layer_groups.0.albert_layers.0."
BERT = [
    ("embeddings.word_embeddings.weight", [V, E]), ("embeddings.position_embeddings.weight", [P, E]),
    ("embeddings.token_type_embeddings.weight", [2, E]), ("embeddings.LayerNorm.weight", [E]),
    ("embeddings.LayerNorm.bias", [E]), ("encoder.embedding_hidden_mapping_in.weight", [C, E]),
    ("encoder.embedding_hidden_mapping_in.bias", [C]),
    (L + "attention.query.weight", [C, C]), (L + "attention.query.bias", [C]),
    (L + "ffn.weight", [F_DIM, C]), (L + "ffn.bias", [F_DIM]),
    (L + "full_layer_layer_norm.weight", [C]), (L + "full_layer_layer_norm.bias", [C]),
]
BERT_ENCODER = [("weight", [O, C]), ("bias", [O])]
DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def values(index, shape):
    """Deterministic k/64 values, k in [-64, 64], distinct per tensor index."""
    n = int(np.prod(shape))
    k = (np.arange(n, dtype=np.int64) * 37 + index * 11) % 129 - 64
    return torch.from_numpy((k / 64.0).astype(np.float32)).reshape(shape)


def state_dict(pairs, first_index, dtype):
    """OrderedDict like nn.Module.state_dict(): "module." keys and a _metadata attribute (BUILD)."""
    sd = collections.OrderedDict()
    for i, (name, shape) in enumerate(pairs):
        sd["module." + name] = values(first_index + i, shape).to(dtype)
    sd._metadata = collections.OrderedDict({"": {"version": 1}})
    return sd


def kokoro_layout(dtype):
    """{"bert", "bert_encoder", "predictor", "text_encoder", "decoder"} as Kokoro's checkpoint."""
    bert_encoder = state_dict(BERT_ENCODER, len(BERT), dtype)
    # the bias is a view at a non-zero storage offset (a slice of a larger tensor): offsets are read
    big = torch.cat([torch.full([3], 9.0), bert_encoder["module.bias"].float()]).to(dtype)
    bert_encoder["module.bias"] = big[3:]
    bert = state_dict(BERT, 0, dtype)
    bert["module.embeddings.position_ids"] = torch.arange(P).reshape(1, P)  # int64 buffer: skipped
    return {
        "bert": bert, "bert_encoder": bert_encoder,
        "predictor": state_dict([("lstm.weight", [3, 2])], 50, dtype),
        "text_encoder": state_dict([("embedding.weight", [4, 2])], 60, dtype),
        "decoder": state_dict([("generator.conv_post.weight", [2, 2, 3])], 70, dtype),
    }


def twin_safetensors(path):
    """The same bert/bert_encoder weights as flat F32 safetensors without "module." (weights.c's names)."""
    items = [("bert." + n, values(i, s)) for i, (n, s) in enumerate(BERT)]
    items += [("bert_encoder." + n, values(len(BERT) + i, s)) for i, (n, s) in enumerate(BERT_ENCODER)]
    write_safetensors(path, [(n, t.numpy()) for n, t in items])


def write_safetensors(path, items):
    header, offset, blobs = {}, 0, []
    for name, a in items:
        data = np.ascontiguousarray(a, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    import json
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


# ---------------------------------------------------------------- raw pickles for hostile archives
def s(text):
    b = text.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def i4(v):
    return b"J" + struct.pack("<i", v)


def tup(ints):
    return b"(" + b"".join(i4(v) for v in ints) + b"t"


def tensor_pickle(key="0", numel=6, shape=(2, 3), stride=(3, 1), offset=0):
    """{"bert": {"w": _rebuild_tensor_v2(storage(key, numel), offset, shape, stride, False, {})}}."""
    storage = b"(" + s("storage") + b"ctorch\nFloatStorage\n" + s(key) + s("cpu") + i4(numel) + b"tQ"
    call = (b"ctorch._utils\n_rebuild_tensor_v2\n(" + storage + i4(offset) + tup(shape) + tup(stride)
            + b"\x89}tR")
    return b"\x80\x02}" + s("bert") + b"}" + s("w") + call + b"ss."


def archive(path, pkl, storages=None):
    """A torch.save-shaped ZIP (stored entries) around raw pickle bytes."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/byteorder", "little")
        for key, data in (storages or {}).items():
            z.writestr("archive/data/" + key, data)
        z.writestr("archive/version", "3\n")


def deep_dicts(depth):
    pkl = b"\x80\x02}"
    for _ in range(depth):
        pkl += s("d") + b"}"
    return pkl + b"s" * depth + b"."


def flip_storage_byte(src, dst, entry_suffix):
    """Copies src to dst with one data byte of the entry ending in entry_suffix flipped (CRC breaks)."""
    data = bytearray(open(src, "rb").read())
    with zipfile.ZipFile(src) as z:
        info = next(i for i in z.infolist() if i.filename.endswith(entry_suffix))
    name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26:info.header_offset + 30])
    data[info.header_offset + 30 + name_len + extra_len] ^= 0x01
    open(dst, "wb").write(bytes(data))


def hostile(out):
    six = struct.pack("<6f", 1, 2, 3, 4, 5, 6)
    archive(f"{out}/h_os_system.pth", b"\x80\x02cos\nsystem\n" + s("true") + b"\x85R.")
    archive(f"{out}/h_builtins_eval.pth", b"\x80\x02cbuiltins\neval\n" + s("1") + b"\x85R.")
    archive(f"{out}/h_reduce_storage.pth", b"\x80\x02ctorch\nFloatStorage\n)R.")
    archive(f"{out}/h_inst_opcode.pth", b"\x80\x02(ios\nsystem\n.")
    archive(f"{out}/h_missing_storage.pth", tensor_pickle(key="7"), {"0": six})
    archive(f"{out}/h_short_storage.pth", tensor_pickle(shape=(3, 3), stride=(3, 1)), {"0": six})
    archive(f"{out}/h_storage_bytes.pth", tensor_pickle(numel=6), {"0": six[:20]})
    archive(f"{out}/h_noncontiguous.pth", tensor_pickle(shape=(3, 2), stride=(1, 3)), {"0": six})
    archive(f"{out}/h_memo.pth", b"\x80\x02}h\x05.")
    archive(f"{out}/h_long_string.pth", b"\x80\x02}X\x00\x00\x00\x80abc.")
    archive(f"{out}/h_deep_dicts.pth", deep_dicts(40))
    archive(f"{out}/h_deep_stack.pth", b"\x80\x02" + b"]" * 70000 + b".")
    archive(f"{out}/h_deep_marks.pth", b"\x80\x02" + b"(" * 2000 + b".")
    good = f"{out}/kokoro_reduced_f32.pth"
    data = open(good, "rb").read()
    open(f"{out}/h_truncated.pth", "wb").write(data[:len(data) // 2])
    flip_storage_byte(good, f"{out}/h_bad_crc.pth", "/data/0")


def write_small(out):
    os.makedirs(out, exist_ok=True)
    for tag, dtype in DTYPES.items():
        torch.save(kokoro_layout(dtype), f"{out}/kokoro_reduced_{tag}.pth")
    twin_safetensors(f"{out}/kokoro_reduced.safetensors")
    params = {"bert": {"module." + n: torch.nn.Parameter(values(i, s)) for i, (n, s) in enumerate(BERT)}}
    params["bert_encoder"] = {"module." + n: torch.nn.Parameter(values(len(BERT) + i, s))
                              for i, (n, s) in enumerate(BERT_ENCODER)}
    torch.save(params, f"{out}/kokoro_reduced_param.pth")
    extra = kokoro_layout(torch.float32)
    extra["unused_extra"] = {"module.junk": torch.zeros(16)}
    torch.save(extra, f"{out}/kokoro_extra_group.pth")
    keys = [k.split("/data/")[1] for k in zipfile.ZipFile(f"{out}/kokoro_extra_group.pth").namelist()
            if "/data/" in k]
    # corrupt the unused group's storage (pickled last: the highest key): loading must still succeed
    flip_storage_byte(f"{out}/kokoro_extra_group.pth", f"{out}/kokoro_extra_group.pth",
                      "/data/" + max(keys, key=int))
    ckpt, folded = weight_norm_layout()
    torch.save(ckpt, f"{out}/kokoro_weight_norm.pth")
    write_safetensors(f"{out}/kokoro_weight_norm_folded.safetensors", folded)
    torch.save(values(97, [510, 1, 256]), f"{out}/voice_tensor.pt")  # a voice file: one bare tensor
    torch.save(torch.arange(6, dtype=torch.int64).view(2, 3), f"{out}/voice_i64.pt")  # not a voice
    hostile(out)


def weight_norm_layout():
    """Weight-normed layers as Kokoro stores them: torch.nn.utils.weight_norm (weight_g, weight_v) on a
    Conv1d (dim 0 = output channel) and a ConvTranspose1d (dim 0 = INPUT channel), and the parametrize
    form torch >= 2.1 writes (parametrizations.weight.original0 / original1), built by hand since
    Debian's torch 1.13 lacks it. Returns (checkpoint, folded): folded holds torch's own W = g v/||v||
    under the normalised names ckbatch derives (the C test compares its fold with these)."""
    conv = torch.nn.utils.weight_norm(torch.nn.Conv1d(3, 4, 5))
    up = torch.nn.utils.weight_norm(torch.nn.ConvTranspose1d(3, 2, 4))
    with torch.no_grad():
        for i, m in enumerate((conv, up)):
            m.weight_v.copy_(values(80 + 2 * i, list(m.weight_v.shape)) + 0.25)
            m.weight_g.copy_(values(81 + 2 * i, list(m.weight_g.shape)) * 3 + 0.5)
            m.bias.copy_(values(90 + i, list(m.bias.shape)))
    g2, v2 = values(95, [2, 1, 1]) + 1.0, values(96, [2, 2, 3]) - 0.125
    ckpt = {
        "text_encoder": collections.OrderedDict(
            ("module.cnn.0.0." + k, t.detach().clone()) for k, t in conv.state_dict().items()),
        "decoder": collections.OrderedDict(
            ("module.generator.ups.0." + k, t.detach().clone()) for k, t in up.state_dict().items()),
        "predictor": collections.OrderedDict([
            ("module.F0.0.conv1.parametrizations.weight.original0", g2),
            ("module.F0.0.conv1.parametrizations.weight.original1", v2)]),
    }
    folded = [("text_encoder.cnn.0.0.weight", torch._weight_norm(conv.weight_v, conv.weight_g, 0)),
              ("decoder.generator.ups.0.weight", torch._weight_norm(up.weight_v, up.weight_g, 0)),
              ("predictor.F0.0.conv1.weight", torch._weight_norm(v2, g2, 0))]
    return ckpt, [(n, t.detach().numpy().astype(np.float32)) for n, t in folded]


def write_full(path):
    """Full-size synthetic Kokoro checkpoint: capture_kokoro.py's splitmix64-uniform-v1 weights (seed
    20261129) in Kokoro's layout ("module." keys, five groups), for the manual .pth vs .safetensors check."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import capture_kokoro as ck
    w = ck.make_weights(ck.SEED)
    groups = {"bert": collections.OrderedDict(), "bert_encoder": collections.OrderedDict()}
    for name, a in w.items():
        group, rest = name.split(".", 1)
        groups[group]["module." + rest] = torch.from_numpy(a)
    for g in ("predictor", "text_encoder", "decoder"):
        groups[g] = {"module.placeholder.weight": torch.zeros(64, 64)}
    torch.save(groups, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="directory for the small fixtures (tests/fixtures/pth)")
    ap.add_argument("--full", help="also write the full-size synthetic Kokoro .pth here")
    args = ap.parse_args()
    if not args.out and not args.full:
        ap.error("give --out and/or --full")
    if args.out:
        write_small(args.out)
    if args.full:
        write_full(args.full)


if __name__ == "__main__":
    main()
