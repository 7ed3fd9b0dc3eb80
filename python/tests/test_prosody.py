"""layer="prosody" from Python: Model.run with voice= and speed= on the prosody circuit writes the
speech capture's pred_dur (tests/fixtures/speech manifest) for its cases, load returns Prosody with
numpy arrays, and the word times equal an independent Python version of Kokoro's join_timestamps
(kokoro/pipeline.py:294-330: half frames / 80, clock from 2 max(0, d[0] - 3), a space's frames
split between its neighbours) over words split at the phoneme string's spaces; bad voice and speed
raise before anything is written."""
import json
import math
import os

import numpy as np
import pytest

import ckbatch
from conftest import SOURCE, run_cli

MANIFEST = os.path.join(SOURCE, "tests", "fixtures", "speech",
                        "kokoro_speech_capture.manifest.json")


def join_timestamps(phonemes, d):
    """[(word, start, end)] as Kokoro's pipeline times misaki tokens, a token being a word of the
    phoneme string and its trailing space its whitespace."""
    if len(d) < 3:
        return [(w, None, None) for w in phonemes.split()]
    left = right = 2 * max(0, d[0] - 3)
    i, out, stopped = 1, [], False
    pieces = phonemes.split(" ")
    for n, word in enumerate(pieces):
        space = n < len(pieces) - 1
        if not word:  # a misaki token with whitespace and no phonemes (pipeline.py:314-320)
            if stopped or i >= len(d) - 1:
                stopped = True
            elif space:
                i += 1
                left = right + d[i]
                right = left + d[i]
                i += 1
            continue
        j = i + len(word)
        if stopped or i >= len(d) - 1 or j >= len(d):
            stopped = True
            out.append((word, None, None))
            continue
        start = left / 80
        token = sum(d[i:j])
        gap = d[j] if space else 0
        left = right + 2 * token + gap
        out.append((word, start, left / 80))
        right = left + gap
        i = j + (1 if space else 0)
    return out


@pytest.fixture(scope="module")
def prosody_model():
    with ckbatch.Model(threads=2, circuit=ckbatch.prosody_circuit()) as m:
        yield m


@pytest.mark.parametrize("case", ["speech4", "speech8", "speech20"])
def test_durations_equal_the_capture(prosody_model, tmp_path, case):
    want = json.load(open(MANIFEST, encoding="utf-8"))["cases"][case]
    src = tmp_path / "in.txt"
    src.write_text(want["phonemes"] + "\n", encoding="utf-8")
    out = tmp_path / "out.safetensors"
    prosody_model.run(src, out, layer="prosody", voice="synthetic", speed=want["speed"])
    p = ckbatch.load(out)
    assert isinstance(p, ckbatch.Prosody) and len(p) == 1
    assert p.durations.dtype == np.int32 and p.frame_offsets.dtype == np.int64
    assert p.durations.tolist() == want["pred_dur"]
    assert p.offsets.tolist() == [0, want["tokens"]]
    assert p.frame_offsets.tolist() == [0, want["frames"]]
    assert p[0].tolist() == want["pred_dur"]
    assert p.metadata["voice"] == "synthetic" and float(p.metadata["speed"]) == want["speed"]
    times = join_timestamps(want["phonemes"], want["pred_dur"])
    assert [(w.phonemes, w.start, w.end) for w in p.words[0]] == times
    assert all(isinstance(w.start, float) and isinstance(w.end, float) for w in p.words[0])


def test_cli_writes_the_same_file(prosody_model, tmp_path):
    lines = ["ði dˈɔɡ ɹˈæn hˈOm.", "ði ˈAs", "  ði  ˈAs "]
    cli = run_cli(tmp_path, lines, "--layer", "prosody", "--speed", "0.8", name="p")
    src = tmp_path / "p.txt"
    out = tmp_path / "api.safetensors"
    prosody_model.run(src, out, layer="prosody", speed=0.8)
    a, b = ckbatch.load(cli), ckbatch.load(out)
    assert a.durations.tolist() == b.durations.tolist()
    assert a.frame_offsets.tolist() == b.frame_offsets.tolist()
    for k, seq in enumerate(b.sequences):
        d = b[k].tolist()
        assert [(w.phonemes, w.start, w.end) for w in b.words[k]] == \
            join_timestamps(seq.phonemes, d)
        assert b.frame_offsets[k + 1] - b.frame_offsets[k] == sum(d)


def test_bad_voice_and_speed(prosody_model, tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("ði\n", encoding="utf-8")
    out = tmp_path / "out.safetensors"
    for speed in (0, -1, math.nan, math.inf, "fast"):
        with pytest.raises(ckbatch.UsageError, match="speed"):
            prosody_model.run(src, out, layer="prosody", speed=speed)
    with pytest.raises(ckbatch.Error, match="af_heart"):
        prosody_model.run(src, out, layer="prosody", voice="af_nobody")
    with pytest.raises(ckbatch.Error, match="af_heart"):
        ckbatch.check_voice("af_nobody")
    bad = tmp_path / "nan.bin"
    pack = np.full((510, 256), 0.01, dtype="<f4")
    pack[3, 5] = np.nan
    bad.write_bytes(pack.tobytes())
    with pytest.raises(ckbatch.Error, match="row 3"):
        prosody_model.run(src, out, layer="prosody", voice=str(bad))
    assert not out.exists()
    ckbatch.check_voice("af_bella:2,af_sky:1")
    with pytest.raises(ckbatch.Error):
        ckbatch.Model(threads=1).run(src, out, layer="prosody")  # the encoder has no durations
    assert not out.exists()


def test_model_prosody_equals_the_file(prosody_model, tmp_path):
    lines = ["ði dˈɔɡ ɹˈæn hˈOm.", "", "ði ˈAs", "ði"]
    src = tmp_path / "in.txt"
    src.write_text("".join(l + "\n" for l in lines), encoding="utf-8")
    out = tmp_path / "out.safetensors"
    prosody_model.run(src, out, layer="prosody", speed=1.3)
    f = ckbatch.load(out)
    p = prosody_model.prosody(lines, speed=1.3)
    assert isinstance(p, ckbatch.Prosody) and len(p) == 3
    assert p.durations.dtype == np.int32 and p.frame_offsets.dtype == np.int64
    assert p.durations.tolist() == f.durations.tolist()
    assert p.offsets.tolist() == f.offsets.tolist()
    assert p.frame_offsets.tolist() == f.frame_offsets.tolist()
    assert p.words == f.words
    # the file's F0 and N (2 values per frame) are Model.prosody's bits
    assert f.f0.dtype == np.float32 and f.f0.shape == (2 * f.frame_offsets[-1],)
    assert f.f0.tobytes() == p.f0.tobytes() and f.n.tobytes() == p.n.tobytes()
    assert [s.line for s in p.sequences] == [0, 2, 3]
    want = json.load(open(MANIFEST, encoding="utf-8"))["cases"]["speech20"]["pred_dur"]
    assert p[0].tolist() == want
    with pytest.raises(ckbatch.UsageError, match="speed"):
        prosody_model.prosody(lines, speed=0)


def _capture_tensor(name):
    """One F32 tensor of the pinned speech capture (safetensors: u64 header size, JSON header)."""
    path = MANIFEST.replace(".manifest.json", ".safetensors")
    with open(path, "rb") as f:
        size = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(size))
        start, end = header[name]["data_offsets"]
        assert header[name]["dtype"] == "F32"
        f.seek(8 + size + start)
        return np.frombuffer(f.read(end - start), dtype=np.float32)


def test_model_prosody_f0_n(prosody_model):
    """Model.prosody's F0 and N (2 values per frame) of speech20 and speech8 at their own speeds
    against the capture, within test_prosody_frames.c's bounds (F0 3.5e-3, N 6e-5); and a
    sequence's F0/N bits alone equal its slice of a batch."""
    for case, line, speed in (("speech20", "ði dˈɔɡ ɹˈæn hˈOm.", 1.3), ("speech8", "ði ˈAs", 1.4)):
        p = prosody_model.prosody([line], speed=speed)
        assert p.f0.dtype == np.float32 and p.f0.shape == (2 * p.frame_offsets[-1],)
        assert p.n.shape == p.f0.shape
        assert np.max(np.abs(p.f0 - _capture_tensor(case + ".F0"))) < 3.5e-3
        assert np.max(np.abs(p.n - _capture_tensor(case + ".N"))) < 6e-5
    lines = ["ði dˈɔɡ ɹˈæn hˈOm.", "ði ˈAs", "ði"]
    batch = prosody_model.prosody(lines, speed=1.3)
    for i, line in enumerate(lines):
        alone = prosody_model.prosody([line], speed=1.3)
        a, b = 2 * batch.frame_offsets[i], 2 * batch.frame_offsets[i + 1]
        assert alone.f0.tobytes() == batch.f0[a:b].tobytes()
        assert alone.n.tobytes() == batch.n[a:b].tobytes()
