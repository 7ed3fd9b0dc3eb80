"""Model.encode_*: shapes, ownership (CASES.md C26.1), the CLI's bits, thread-count invariance."""
import gc
import hashlib
import json
import struct

import numpy as np
import pytest

import ckbatch
from conftest import LINES, P11, PF, run_cli


def sha(a):
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


def numpy_read(path):
    """The README's reader: the file's tensors parsed by hand, independent of ckbatch."""
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    head = json.loads(raw[8:8 + n])
    base = 8 + n

    def tensor(name, dtype):
        lo, hi = head[name]["data_offsets"]
        return np.frombuffer(raw[base + lo:base + hi], dtype).reshape(head[name]["shape"])
    rows = "hidden" if "hidden" in head else "features"
    seqs = [json.loads(l) for l in tensor("sequences", "u1").tobytes().splitlines()]
    return tensor(rows, "<f4"), tensor("offsets", "<i8"), seqs


def test_shapes_dtypes_and_views(model):
    r = model.encode_phonemes(LINES)
    assert len(r) == 4                                   # the blank line gives no sequence
    assert r.features.dtype == np.float32 and r.features.shape == (96, 512)
    assert r.offsets.dtype == np.int64 and r.offsets.tolist() == [0, 11, 40, 54, 96]
    assert r.features.flags["C_CONTIGUOUS"] and r.offsets.flags["C_CONTIGUOUS"]
    assert [s.line for s in r.sequences] == [0, 2, 3, 4]
    assert r.sequences[0] == ckbatch.Sequence(0, 0, 1, 11, P11)
    assert [d.line for d in r.dropped] == [3] and "U+2717" in r.dropped[0].message
    assert r.warnings == r.dropped
    assert r.dropped[0].column == 14
    first = r[0]
    assert first.shape == (11, 512) and np.shares_memory(first, r.features)
    assert [a.shape[0] for a in r] == [11, 29, 14, 42]   # the trailing space left by the drop is trimmed
    assert r[-1].shape == (42, 512)
    with pytest.raises(IndexError):
        r[4]
    h = model.encode_phonemes(LINES, layer="hidden")
    assert h.features.shape == (96, 768) and h.layer == "hidden"


def test_empty_input(model):
    r = model.encode_phonemes([])
    assert r.features.shape == (0, 512) and r.offsets.tolist() == [0] and len(r) == 0
    assert model.encode_phonemes(["", "  "]).offsets.tolist() == [0]


def test_buffer_ownership_outlives_model():
    """C26.1: the rows survive the next call, the model's end and a collection, unchanged."""
    m = ckbatch.Model(threads=2)
    a = m.encode_phonemes([P11])[0]
    h = sha(a)
    b = m.encode_phonemes([PF])[0]
    del m
    gc.collect()
    assert sha(a) == h
    once = ckbatch.Model(threads=2).encode_phonemes([P11])[0].copy()
    gc.collect()
    with ckbatch.Model(threads=2) as fresh:
        assert np.array_equal(a, fresh.encode_phonemes([P11])[0])
        assert np.array_equal(b, fresh.encode_phonemes([PF])[0])
    assert np.array_equal(once, a)
    assert a.base is not None and b.base is not None   # the chain reaches the owner


def test_features_equal_cli_file(model, tmp_path):
    """The same bits as the CLI, read back with ckbatch.load and with the README's parser."""
    out = run_cli(tmp_path, LINES, "-t", "2")
    r = model.encode_phonemes(LINES)
    f = ckbatch.load(out)
    assert f.features.tobytes() == r.features.tobytes()
    assert np.array_equal(f.offsets, r.offsets)
    assert f.sequences == r.sequences
    rows, offsets, seqs = numpy_read(out)
    assert rows.tobytes() == r.features.tobytes() and offsets.tolist() == r.offsets.tolist()
    assert [s["phonemes"] for s in seqs] == [s.phonemes for s in r.sequences]


def test_text_hidden_equal_cli_file(model, tmp_path):
    lines = ["Hello world.", "How are you today?"]
    out = run_cli(tmp_path, lines, "-t", "2", "--format", "text", "--lang", "en-us",
                  "--layer", "hidden")
    r = model.encode_text(lines, layer="hidden")
    f = ckbatch.load(out)
    assert f.layer == "hidden" and f.features.shape[1] == 768
    assert f.features.tobytes() == r.features.tobytes()
    assert [s.phonemes for s in f.sequences] == [s.phonemes for s in r.sequences]


def test_ids_equal_cli_file(model, tmp_path):
    seqs = [[50, 157, 43], np.array([7, 102, 16], dtype=np.int64), range(1, 40)]
    out = run_cli(tmp_path, ["[50, 157, 43]", "[7, 102, 16]", json.dumps(list(range(1, 40)))],
                  "-t", "2", "--format", "ids")
    r = model.encode_ids(seqs)
    assert ckbatch.load(out).features.tobytes() == r.features.tobytes()
    assert r.offsets.tolist() == [0, 5, 10, 51]
    # ids the vocabulary does not define are kept and reported: 7 in line 1, eleven in line 2
    assert [(d.line, d.column) for d in r.dropped][:2] == [(1, 1), (2, 7)]
    assert len(r.dropped) == 12 and r.dropped[0].message == \
        "<lines>:2: element 1: id 7 names no vocab symbol, kept"


def test_thread_count_invariance(model):
    with ckbatch.Model(threads=1) as one:
        a = one.encode_phonemes(LINES)
    b = model.encode_phonemes(LINES)
    if ckbatch.kernels_isa == "avx512":      # the header's bit-identity promise
        assert a.features.tobytes() == b.features.tobytes()
    else:                                    # oneDNN's AVX2 matmul tiles differ by ~1e-6
        assert np.allclose(a.features, b.features, rtol=0, atol=1e-5)


def test_solo_equals_batched(model):
    batch = model.encode_phonemes(LINES)
    for i, line in enumerate(l for l in LINES if l.strip()):
        assert model.encode_phonemes([line]).features.tobytes() == batch[i].tobytes()


def test_load_keeps_mapping_alive(tmp_path):
    with ckbatch.Model(threads=2) as m:
        s = m.run(str(run_cli(tmp_path, [P11], "-t", "1", name="src").with_suffix(".txt")),
                  tmp_path / "out.st", resume=False)
    assert s.sequences == 1 and s.tokens == 11
    f = ckbatch.load(tmp_path / "out.st")
    rows = f[0]
    h = sha(rows)
    del f
    gc.collect()
    assert sha(rows) == h and not rows.flags["WRITEABLE"]
    assert ckbatch.load(tmp_path / "out.st").metadata["format"] == "ckbatch.features.v2"


@pytest.mark.parametrize("g2p", ["misaki", "espeak"])
def test_text_g2p_equal_cli_file(model, tmp_path, g2p):
    lines = ["Hello Zxqwvbn world.", "It costs $5 on 3 May."]
    out = run_cli(tmp_path, lines, "-t", "2", "--format", "text", "--g2p", g2p)
    r = model.encode_text(lines, g2p=g2p)
    f = ckbatch.load(out)
    assert f.features.tobytes() == r.features.tobytes()
    assert [s.phonemes for s in f.sequences] == [s.phonemes for s in r.sequences]
    fallback = [w for w in r.warnings if "phonemized by espeak-ng" in w.message]
    assert r.dropped == [] and [(w.line, w.column) for w in fallback] == \
        ([(0, 7)] if g2p == "misaki" else [])


def test_run_text_equals_cli_file(model, tmp_path):
    lines = ["Hello Zxqwvbn world.", "", "It costs $5 on 3 May."]
    out = run_cli(tmp_path, lines, "-t", "2", "--format", "text")
    s = model.run(out.with_suffix(".txt"), tmp_path / "py.st", format="text", resume=False)
    assert (s.lines, s.sequences, s.empty_lines, s.g2p_fallback_words) == (3, 2, 1, 1)
    assert s.g2p_seconds > 0
    assert (tmp_path / "py.st").read_bytes() == out.read_bytes()


def test_compiled_library_gives_the_same_features(tmp_path):
    """A library `ckbatch compile` built runs behind the same Model with the interpreter's bits."""
    from conftest import CLI
    import subprocess
    subprocess.run([CLI, "compile", "-q", "-o", str(tmp_path)], check=True)
    lib = tmp_path / "kokoro_phoneme_encoder.so"
    lines = [P11, PF, "ə" * 40]
    with ckbatch.Model(threads=2, compiled=lib) as g, ckbatch.Model(threads=2) as i:
        assert g.backend == "generated" and i.backend == "interpreted"
        assert sha(g.encode_phonemes(lines).features) == sha(i.encode_phonemes(lines).features)
