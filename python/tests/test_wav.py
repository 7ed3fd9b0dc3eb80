"""The WAV writer (engine/output/wav.c) as other tools read it: the C suite test_wav, run with
CK_WAV_KEEP_DIR, leaves a 0.25 s 440 Hz sine (amplitude 0.5, sample 10 set to 1.5) as s16 and as
f32; Python's wave module reads the s16 file (it reads PCM only), and the f32 file's chunks are
parsed with struct (RIFF/WAVE, an 18-byte fmt of format 3, fact, LIST/INFO, data)."""
import math
import os
import struct
import subprocess
import wave

import numpy as np

from conftest import BINARY, SOURCE

N = 6000
INFO = {b"ISFT": "ckbatch test", b"ICMT": "weights synthetic; voice af_heart; speed 1",
        b"INAM": "sine"}


def sine():
    x = np.array([0.5 * math.sin(2 * math.pi * 440 * i / 24000) for i in range(N)], dtype=np.float32)
    x[10] = 1.5
    return x


def make_files(tmp_path):
    exe = os.path.join(BINARY, "tests", "test_wav")
    assert os.access(exe, os.X_OK), f"{exe}: build with the tests (CK_TESTS=ON)"
    env = dict(os.environ, CK_WAV_KEEP_DIR=str(tmp_path), CK_SOURCE_DIR=SOURCE)
    subprocess.run([exe], env=env, check=True, capture_output=True)
    return tmp_path / "sine_s16.wav", tmp_path / "sine_f32.wav"


def chunks(data):
    """The RIFF/WAVE file's chunks in order: [(id, body)]."""
    assert data[:4] == b"RIFF" and data[8:12] == b"WAVE"
    assert struct.unpack_from("<I", data, 4)[0] == len(data) - 8
    out, at = [], 12
    while at < len(data):
        cid, size = struct.unpack_from("<4sI", data, at)
        out.append((cid, data[at + 8:at + 8 + size]))
        at += 8 + size + (size & 1)
    assert at == len(data)
    return out


def info_of(body):
    assert body[:4] == b"INFO"
    tags, at = {}, 4
    while at < len(body):
        tid, size = struct.unpack_from("<4sI", body, at)
        text = body[at + 8:at + 8 + size]
        assert text.endswith(b"\0")
        tags[tid] = text[:-1].decode("utf-8")
        at += 8 + size + (size & 1)
    return tags


def test_s16_read_by_wave_module(tmp_path):
    s16, _ = make_files(tmp_path)
    with wave.open(str(s16), "rb") as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate(), w.getnframes()) == (1, 2, 24000, N)
        assert w.getcomptype() == "NONE"
        got = np.frombuffer(w.readframes(N), dtype="<i2")
    x = sine().astype(np.float64) * 32768.0
    want = np.clip(np.rint(x), -32768, 32767).astype(np.int16)   # rint: ties to even
    assert np.array_equal(got, want)
    assert got[10] == 32767
    ids = [c for c, _ in chunks(s16.read_bytes())]
    assert ids == [b"fmt ", b"LIST", b"data"]
    assert info_of(dict(chunks(s16.read_bytes()))[b"LIST"]) == INFO


def test_f32_parsed_with_struct(tmp_path):
    _, f32 = make_files(tmp_path)
    parts = chunks(f32.read_bytes())
    assert [c for c, _ in parts] == [b"fmt ", b"fact", b"LIST", b"data"]
    body = dict(parts)
    assert len(body[b"fmt "]) == 18
    fmt, channels, rate, byte_rate, block, bits, cb = struct.unpack("<HHIIHHH", body[b"fmt "])
    assert (fmt, channels, rate, byte_rate, block, bits, cb) == (3, 1, 24000, 96000, 4, 32, 0)
    assert struct.unpack("<I", body[b"fact"]) == (N,)
    assert info_of(body[b"LIST"]) == INFO
    got = np.frombuffer(body[b"data"], dtype="<f4")
    assert np.array_equal(got, sine())   # the floats' own bits, 1.5 included
