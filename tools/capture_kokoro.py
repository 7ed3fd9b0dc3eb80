#!/usr/bin/python3
"""capture_kokoro.py - the PyTorch oracle for ckbatch's Kokoro phoneme encoder and the pinned capture it
writes (tests/fixtures/kokoro_capture.*); it must not import kokoro or transformers, nor read a real
checkpoint: the weights are the synthetic `splitmix64-uniform-v1` stream of DESIGN.md section 7.

Run with Debian's interpreter (python3-torch, python3-numpy):
    /usr/bin/python3 tools/capture_kokoro.py --out tests/fixtures [--weights-out PATH]

Shape letters: T positions (tokens), B sequences in a padded batch, S sequences, E embedding 128,
C hidden 768, F ffn 2048, H heads 12, D head dim 64, O output 512, V vocab 178.

The forward pass follows Hugging Face transformers' ALBERT eager path (AlbertEmbeddings, AlbertAttention,
AlbertLayer, get_extended_attention_mask) and Kokoro's KModel (bert -> bert_encoder), written again here
with torch.nn.functional so the oracle depends on nothing but torch. Addition order matches HF's
(word + token_type, then + position) because float addition is not associative.
"""
import argparse
import hashlib
import json
import math
import os
import re
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

KOKORO_DIR = os.environ.get("CK_KOKORO_DIR", "/work/shared/kokoro")
FIXTURE = "kokoro_capture.safetensors"
MANIFEST = "kokoro_capture.manifest.json"

# ---------------------------------------------------------------- model facts (MODEL.md, config.json)
E, C, F_DIM, H, D, O, V, MAX_T = 128, 768, 2048, 12, 64, 512, 178, 512
N_LAYERS = 12
LN_EPS = 1e-12
L = "bert.encoder.albert_layer_groups.0.albert_layers.0."
WEIGHT_SHAPES = [  # flat checkpoint names in DESIGN.md section 7 order; also the --weights-out order
    ("bert.embeddings.word_embeddings.weight", [V, E]),
    ("bert.embeddings.position_embeddings.weight", [MAX_T, E]),
    ("bert.embeddings.token_type_embeddings.weight", [2, E]),
    ("bert.embeddings.LayerNorm.weight", [E]),
    ("bert.embeddings.LayerNorm.bias", [E]),
    ("bert.encoder.embedding_hidden_mapping_in.weight", [C, E]),
    ("bert.encoder.embedding_hidden_mapping_in.bias", [C]),
    (L + "attention.query.weight", [C, C]), (L + "attention.query.bias", [C]),
    (L + "attention.key.weight", [C, C]), (L + "attention.key.bias", [C]),
    (L + "attention.value.weight", [C, C]), (L + "attention.value.bias", [C]),
    (L + "attention.dense.weight", [C, C]), (L + "attention.dense.bias", [C]),
    (L + "attention.LayerNorm.weight", [C]), (L + "attention.LayerNorm.bias", [C]),
    (L + "ffn.weight", [F_DIM, C]), (L + "ffn.bias", [F_DIM]),
    (L + "ffn_output.weight", [C, F_DIM]), (L + "ffn_output.bias", [C]),
    (L + "full_layer_layer_norm.weight", [C]), (L + "full_layer_layer_norm.bias", [C]),
    ("bert_encoder.weight", [O, C]),
    ("bert_encoder.bias", [O]),
]
LAYER_CHECKPOINTS = ["query", "key", "value", "attention_context", "attention_output",
                     "attention_norm", "ffn", "ffn_gelu", "ffn_output", "output"]
CHECKPOINTS = (  # every X-Ray checkpoint id of the circuit, in forward order (124)
    ["kokoro.phoneme_encoder.embeddings", "kokoro.phoneme_encoder.projection"]
    + [f"kokoro.phoneme_encoder.layer.{i:02d}.{n}" for i in range(12) for n in LAYER_CHECKPOINTS]
    + ["kokoro.phoneme_encoder.last_hidden_state", "kokoro.bert_encoder.features"])
ROWS_PER_SEQUENCE = 3  # stored token rows per sequence: first, middle, last (fixture size, see README)
THRESHOLDS = {  # the X-Ray profile (engine/xray/xray.h): default FP32 contract, no per-checkpoint budget
    "dtypes": {"F32": {"cosine_min": 0.99999, "rmse": 2e-5, "rel_rmse": 2e-5, "max_abs": 2e-5}},
    "checkpoints": {},
}

# ---------------------------------------------------------------- splitmix64-uniform-v1 (DESIGN.md 7)
SEED = 20261129
GOLDEN = 0x9E3779B97F4A7C15
MIX1, MIX2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
FNV_BASIS, FNV_PRIME = 0xCBF29CE484222325, 0x100000001B3
MASK64 = (1 << 64) - 1


def fnv1a64(name):
    """FNV-1a 64 over the UTF-8 bytes of name (Fowler/Noll/Vo; basis and prime as in DESIGN.md 7)."""
    h = FNV_BASIS
    for byte in name.encode("utf-8"):
        h = ((h ^ byte) * FNV_PRIME) & MASK64
    return h


def scale_offset(name):
    """(scale, offset) of a tensor: LayerNorm gammas are 1 +- 0.1, everything else 0 +- 0.05."""
    if name.endswith("LayerNorm.weight") or name.endswith("layer_norm.weight"):
        return 0.1, 1.0
    return 0.05, 0.0


def splitmix_uniform(seed, name, count):
    """float32 [count] of the tensor `name`, vectorised over i: state_i = base + (i+1)*GOLDEN mod 2^64
    (numpy uint64 array arithmetic wraps), then the splitmix64 finaliser and u = (z >> 40) / 2^24."""
    base = np.uint64(seed ^ fnv1a64(name))
    z = base + np.arange(1, count + 1, dtype=np.uint64) * np.uint64(GOLDEN)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(MIX1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(MIX2)
    z = z ^ (z >> np.uint64(31))
    u = (z >> np.uint64(40)).astype(np.float64) / float(1 << 24)
    scale, offset = scale_offset(name)
    return (scale * (2.0 * u - 1.0) + offset).astype(np.float32)


def make_weights(seed):
    """dict name -> float32 ndarray of its shape, in WEIGHT_SHAPES order."""
    return {n: splitmix_uniform(seed, n, math.prod(s)).reshape(s) for n, s in WEIGHT_SHAPES}


def reference_uniform(seed, name, count):
    """The same stream, one element at a time with Python integers: the independent check."""
    state, scale, offset, out = seed ^ fnv1a64(name), *scale_offset(name), []
    for _ in range(count):
        state = (state + GOLDEN) & MASK64
        z = ((state ^ (state >> 30)) * MIX1) & MASK64
        z = ((z ^ (z >> 27)) * MIX2) & MASK64
        z ^= z >> 31
        value = scale * (2.0 * ((z >> 40) / 16777216.0) - 1.0) + offset
        out.append(struct.unpack("<f", struct.pack("<f", value))[0])
    return out


def check_generator(weights):
    """Raises when the numpy stream disagrees with the scalar one, or FNV-1a misses its test vectors."""
    if fnv1a64("") != FNV_BASIS or fnv1a64("a") != 0xAF63DC4C8601EC8C:
        raise RuntimeError("fnv1a64 does not match the published FNV-1a test vectors")
    for name in ("bert.embeddings.word_embeddings.weight", L + "full_layer_layer_norm.weight"):
        want = reference_uniform(SEED, name, 16)
        got = weights[name].reshape(-1)[:16].tolist()
        if got != want:
            raise RuntimeError(f"generator mismatch for {name}: {got[:4]} vs {want[:4]}")


# ---------------------------------------------------------------- safetensors writer (no torch)
DTYPES = {np.dtype(np.float32): "F32", np.dtype(np.int32): "I32", np.dtype(np.int64): "I64"}


def safetensors_bytes(items):
    """items: list of (name, ndarray). Returns the file bytes: u64 LE header length, compact JSON header
    (tensors in the given order, no __metadata__) padded with spaces to a multiple of 8, then the
    little-endian data of each tensor back to back in the same order."""
    header, blobs, offset = {}, [], 0
    for name, array in items:
        blob = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": DTYPES[array.dtype], "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def sha256_hex(data):
    """Lower-case hex SHA-256 of bytes."""
    return hashlib.sha256(data).hexdigest()


def write_file(path, data):
    """Writes bytes to path via a temporary name and a rename, so a failed run leaves no half file."""
    tmp = path + ".tmp.capture"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


# ---------------------------------------------------------------- phonemes (misaki US gold lexicon)
PASSAGE = (
    "The sun is warm, the sky is blue. The dog ran home in the rain. A small boat sat on the quiet "
    "lake at night. My mother has an old book by the window. We can hear a bird sing when the wind "
    "is calm. He painted the door green, and she grew a red rose near the gate. Children laugh and "
    "play in the park after school. The train left the city before dawn and came back by noon."
)
UTT36_TEXT = "The sun is warm, the sky is blue."
TOKEN_RE = re.compile(r"[A-Za-z']+|[.,!?;:]")


def first_existing(*paths):
    """The first of paths that exists (the last one when none does, so open() names it)."""
    return next((p for p in paths if os.path.exists(p)), paths[-1])


class Lexicon:
    """Kokoro's vocab plus misaki's US gold dictionary (word -> phoneme string)."""

    def __init__(self, kokoro_dir):
        # the shared Kokoro folder when there is one, else the repository's byte-identical copies
        # (tests/fixtures/kokoro/config.json, data/misaki/us_gold.json), so a fresh checkout runs
        repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        config = first_existing(os.path.join(kokoro_dir, "config.json"),
                                os.path.join(repo, "tests", "fixtures", "kokoro", "config.json"))
        gold = first_existing(os.path.join(kokoro_dir, "misaki", "us_gold.json"),
                              os.path.join(repo, "data", "misaki", "us_gold.json"))
        with open(config, encoding="utf-8") as f:
            self.vocab = json.load(f)["vocab"]
        with open(gold, encoding="utf-8") as f:
            self.gold = json.load(f)

    def phonemes(self, token):
        """Phonemes of one word (lower-case entry first; heteronyms take DEFAULT) or a punctuation mark."""
        if not token[0].isalpha():
            return token
        entry = self.gold.get(token.lower(), self.gold.get(token))
        if entry is None:
            raise KeyError(f"word {token!r} is not in misaki us_gold.json")
        return entry["DEFAULT"] if isinstance(entry, dict) else entry

    def filler(self, length):
        """First lower-case word (sorted order) whose phoneme string has exactly `length` symbols."""
        for word in sorted(self.gold):
            if word.isalpha() and word.islower():
                ph = self.phonemes(word)
                if len(ph) == length and all(c in self.vocab for c in ph):
                    return word
        raise KeyError(f"no lexicon word with {length} phonemes")

    def ids(self, phonemes):
        """[0, *vocab ids, 0] as int32; unlike the reference, an unknown symbol is an error."""
        missing = sorted({c for c in phonemes if c not in self.vocab})
        if missing:
            raise KeyError(f"symbols not in vocab: {missing}")
        return np.array([0] + [self.vocab[c] for c in phonemes] + [0], dtype=np.int32)


def join_tokens(lex, tokens):
    """(text, phonemes) of a token list: words separated by one space, punctuation attached."""
    text, ph = "", ""
    for tok in tokens:
        sep = "" if not text or not tok[0].isalpha() else " "
        text, ph = text + sep + tok, ph + sep + lex.phonemes(tok)
    return text, ph


def exact_utterance(lex, count, sentence):
    """Tokens of PASSAGE (cycled from the start of its sentence number `sentence`) taken while their
    phonemes fit in `count`, then one lexicon filler word (or ".") so there are exactly `count` symbols."""
    passage, tokens = TOKEN_RE.findall(PASSAGE), []
    start = ([0] + [i + 1 for i, tok in enumerate(passage) if tok == "."])[sentence]
    while True:
        nxt = passage[(start + len(tokens)) % len(passage)]
        if len(join_tokens(lex, tokens + [nxt])[1]) > count:
            break
        tokens.append(nxt)
    rest = count - len(join_tokens(lex, tokens)[1])
    if rest == 1 and tokens:
        tokens.append(".")
    elif rest > 0:
        tokens.append(lex.filler(rest - 1 if tokens else rest))
    text, ph = join_tokens(lex, tokens)
    if len(ph) != count:
        raise RuntimeError(f"could not build {count} phonemes (got {len(ph)})")
    return text, ph


def make_cases(lex):
    """case name -> list of (text, phonemes): utt36, long512, and batch5 (one padded batch)."""
    text, ph = join_tokens(lex, TOKEN_RE.findall(UTT36_TEXT))
    if len(ph) != 34:
        raise RuntimeError(f"utt36 sentence has {len(ph)} phonemes, not 34")
    batch = [exact_utterance(lex, n - 2, k + 1) for k, n in enumerate([3, 17, 64, 130, 255])]
    return {"utt36": [(text, ph)], "long512": [exact_utterance(lex, 510, 0)], "batch5": batch}


# ---------------------------------------------------------------- the encoder (torch.nn.functional)
def gelu_new(x):
    """0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): HF NewGELUActivation, written as HF writes it."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def layer_norm(x, w, name):
    """torch.nn.LayerNorm over the last axis (population variance, eps 1e-12) with name.weight/.bias."""
    return F.layer_norm(x, (x.shape[-1],), w[name + ".weight"], w[name + ".bias"], eps=LN_EPS)


def linear(x, w, name):
    """y = x W^T + b with W stored [out, in]."""
    return F.linear(x, w[name + ".weight"], w[name + ".bias"])


def embeddings(ids, w):
    """ids [B,T] int64 -> LayerNorm(word[id] + token_type[0] + position[t]) [B,T,E] (AlbertEmbeddings)."""
    pos = torch.arange(ids.shape[1])
    x = F.embedding(ids, w["bert.embeddings.word_embeddings.weight"])
    x = x + F.embedding(torch.zeros_like(ids), w["bert.embeddings.token_type_embeddings.weight"])
    x = x + F.embedding(pos, w["bert.embeddings.position_embeddings.weight"])[None]
    return layer_norm(x, w, "bert.embeddings.LayerNorm")


def attention(x, mask_add, w, keep, prefix):
    """x [B,T,C], mask_add [B,1,1,T] -> LN(x + dense(softmax(q k^T / sqrt(D) + mask) v)) (AlbertAttention).
    keep(id, tensor) sees query, key, value, attention_context, attention_output, attention_norm."""
    b, t, _ = x.shape
    q, k, v = (keep(prefix + n, linear(x, w, L + "attention." + p))
               for n, p in (("query", "query"), ("key", "key"), ("value", "value")))
    q, k, v = (y.view(b, t, H, D).transpose(1, 2) for y in (q, k, v))
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(D) + mask_add
    ctx = torch.matmul(torch.softmax(scores, dim=-1), v).transpose(1, 2).flatten(2)
    ctx = keep(prefix + "attention_context", ctx)
    dense = keep(prefix + "attention_output", linear(ctx, w, L + "attention.dense"))
    return keep(prefix + "attention_norm", layer_norm(x + dense, w, L + "attention.LayerNorm"))


def albert_layer(x, mask_add, w, keep, prefix):
    """The one shared ALBERT layer: attention block, then LN(ffn_output(gelu_new(ffn(h))) + h)."""
    h = attention(x, mask_add, w, keep, prefix)
    ffn = keep(prefix + "ffn", linear(h, w, L + "ffn"))
    ffn = keep(prefix + "ffn_output",
               linear(keep(prefix + "ffn_gelu", gelu_new(ffn)), w, L + "ffn_output"))
    return keep(prefix + "output", layer_norm(ffn + h, w, L + "full_layer_layer_norm"))


def encoder(ids, mask, w, keep):
    """ids, mask [B,T] -> features [B,T,O] in w's dtype; keep(id, tensor) is called with every
    checkpoint (forward order) and returns the tensor unchanged. The additive mask is
    (1 - mask) * finfo(dtype).min, as HF's get_extended_attention_mask builds it."""
    dtype = w["bert_encoder.weight"].dtype
    mask_add = (1.0 - mask[:, None, None, :].to(dtype)) * torch.finfo(dtype).min
    x = keep(CHECKPOINTS[0], embeddings(ids, w))
    x = keep(CHECKPOINTS[1], linear(x, w, "bert.encoder.embedding_hidden_mapping_in"))
    for i in range(N_LAYERS):
        x = albert_layer(x, mask_add, w, keep, f"kokoro.phoneme_encoder.layer.{i:02d}.")
    keep(CHECKPOINTS[-2], x)
    return keep(CHECKPOINTS[-1], linear(x, w, "bert_encoder"))


# ---------------------------------------------------------------- cases: padded run, packed storage
def padded_batch(seqs):
    """seqs: list of int32 id arrays -> (ids, attention_mask) int64 [B,T_max], right-padded with id 0
    and mask 0, the way a PyTorch user batches them."""
    t_max = max(len(s) for s in seqs)
    ids = torch.zeros(len(seqs), t_max, dtype=torch.int64)
    mask = torch.zeros(len(seqs), t_max, dtype=torch.int64)
    for i, s in enumerate(seqs):
        ids[i, :len(s)] = torch.from_numpy(s.astype(np.int64))
        mask[i, :len(s)] = 1
    return ids, mask


def sequence_rows(length):
    """Stored rows of one sequence: first, middle, last (fewer when it is shorter), ascending."""
    k = min(length, ROWS_PER_SEQUENCE)
    return sorted({round(i * (length - 1) / (k - 1)) for i in range(k)}) if k > 1 else [0]


def stored_rows(seqs):
    """Packed token indices (into the case's [T] token axis) whose rows the fixture stores."""
    rows, start = [], 0
    for s in seqs:
        rows += [start + r for r in sequence_rows(len(s))]
        start += len(s)
    return rows


def run_packed(seqs, w):
    """One padded batch through the oracle in w's dtype; returns {checkpoint: stored rows [R,*]}.
    Only the stored rows are kept, so a 5 x 255 batch never holds all 124 checkpoints at once."""
    ids, mask = padded_batch(seqs)
    t_max = ids.shape[1]
    flat = [i * t_max + r for i, s in enumerate(seqs) for r in sequence_rows(len(s))]
    sel = torch.tensor(flat, dtype=torch.int64)
    out = {}

    def keep(name, x):
        out[name] = x.reshape(-1, x.shape[-1]).index_select(0, sel).clone()
        return x

    with torch.no_grad():
        encoder(ids, mask, w, keep)
    return out


def max_abs(a, b):
    """{checkpoint: max |a - b|} in float64, rounded to 3 significant digits."""
    return {c: float(f"{float((a[c].double() - b[c].double()).abs().max()):.3g}") for c in CHECKPOINTS}


def make_all_cases(lex):
    """The pinned cases: utt36, long512, batch5 (one padded batch) and each batch5 sequence alone."""
    cases = make_cases(lex)
    for utt in list(cases["batch5"]):
        cases[f"solo{len(utt[1]) + 2}"] = [utt]
    return cases


def capture(lex, weights):
    """Runs every case in float32 and float64. Returns (fixture items in storage order, manifest "cases",
    f32-vs-f64 max abs per case, batch5 padded-batch-vs-each-sequence-alone max abs in float32)."""
    w32 = {n: torch.from_numpy(a) for n, a in weights.items()}
    w64 = {n: t.double() for n, t in w32.items()}
    items, cases, noise, seqs, out32 = [], {}, {}, {}, {}
    for case, utts in make_all_cases(lex).items():
        seqs[case] = [lex.ids(ph) for _, ph in utts]
        out32[case] = run_packed(seqs[case], w32)
        noise[case] = max_abs(out32[case], run_packed(seqs[case], w64))
        offsets = np.cumsum([0] + [len(s) for s in seqs[case]]).astype(np.int64)
        rows = np.array(stored_rows(seqs[case]), dtype=np.int64)
        # I64 tensors before I32 ids: every tensor then starts on a multiple of its element size
        names = [f"{case}.offsets", f"{case}.rows", f"{case}.ids"] + [f"{case}.{c}" for c in CHECKPOINTS]
        arrays = [offsets, rows, np.concatenate(seqs[case])] + [out32[case][c].numpy() for c in CHECKPOINTS]
        items += list(zip(names, arrays))
        cases[case] = {"lengths": [len(s) for s in seqs[case]], "rows": rows.tolist(),
                       "text": [t for t, _ in utts], "phonemes": [ph for _, ph in utts]}
        print(f"capture_kokoro: {case} done", file=sys.stderr)
    alone = [out32[f"solo{len(s)}"] for s in seqs["batch5"]]
    alone = {c: torch.cat([a[c] for a in alone]) for c in CHECKPOINTS}
    return items, cases, noise, max_abs(out32["batch5"], alone)


def manifest(fixture_bytes, weights, cases, noise, batch_vs_alone):
    script = os.path.abspath(__file__)
    with open(script, "rb") as f:
        script_sha = sha256_hex(f.read())
    tensors = {n: {"shape": list(a.shape), "sha256": sha256_hex(a.astype("<f4").tobytes())}
               for n, a in weights.items()}
    return {
        "fixture": {"file": FIXTURE, "sha256": sha256_hex(fixture_bytes)},
        "oracle": {"torch": torch.__version__, "numpy": np.__version__,
                   "python": sys.version.split()[0], "script": "tools/capture_kokoro.py",
                   "script_sha256": script_sha, "dtype": "float32", "torch_threads": 1},
        "weights": {"generator": "splitmix64-uniform-v1", "seed": SEED, "tensors": tensors},
        "checkpoints": CHECKPOINTS,
        "rows_per_sequence": ROWS_PER_SEQUENCE,
        "cases": cases,
        "thresholds": THRESHOLDS,
        "oracle_f32_vs_f64_max_abs": noise,
        "oracle_batch5_padded_vs_alone_max_abs": batch_vs_alone,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", help="directory for kokoro_capture.safetensors + manifest")
    parser.add_argument("--weights-out", help="also write the synthetic weights (F32 safetensors)")
    args = parser.parse_args(argv)
    if not args.out and not args.weights_out:
        parser.error("give --out and/or --weights-out")
    torch.set_num_threads(1)
    weights = make_weights(SEED)
    check_generator(weights)
    if args.weights_out:
        write_file(args.weights_out, safetensors_bytes(list(weights.items())))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        items, cases, noise, batch_vs_alone = capture(Lexicon(KOKORO_DIR), weights)
        data = safetensors_bytes(items)
        write_file(os.path.join(args.out, FIXTURE), data)
        doc = manifest(data, weights, cases, noise, batch_vs_alone)
        text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        write_file(os.path.join(args.out, MANIFEST), text.encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
