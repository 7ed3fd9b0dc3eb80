"""Model.speak on the speech circuit and the embedded synthetic weights (the speech capture's),
voice "synthetic": speech4's phonemes give 600 x 7 float32 samples equal to the bytes of
`ckbatch speak --sample-format f32` (the WAV's data chunk), speech20's words carry times; the same
seed gives the same bits, another seed other bits; noise_scale 0 removes the seed's effect; a blank
line gives no entry; a bad seed raises."""
import subprocess
import struct

import numpy as np
import pytest

import ckbatch
from conftest import CLI

S4 = "ði"
S20 = "ði dˈɔɡ ɹˈæn hˈOm."


@pytest.fixture(scope="module")
def speech():
    with ckbatch.Model(threads=2, circuit=ckbatch.speech_circuit()) as m:
        yield m


def wav_samples(path):
    b = open(path, "rb").read()
    at = 12
    while at + 8 <= len(b):
        cid, size = b[at:at + 4], struct.unpack("<I", b[at + 4:at + 8])[0]
        if cid == b"data":
            return b[at + 8:at + 8 + size]
        at += 8 + size + (size & 1)
    raise AssertionError("no data chunk")


def test_audio_equals_cli(speech, tmp_path):
    out = speech.speak([S4], voice="synthetic", noise_scale=0)
    assert len(out) == 1
    audio, words = out[0]
    assert audio.dtype == np.float32 and audio.shape == (4200,)
    assert np.isfinite(audio).all() and np.abs(audio).sum() > 0
    assert [w.phonemes for w in words] == ["ði"]
    src = tmp_path / "s4.txt"
    src.write_text(S4 + "\n", encoding="utf-8")
    wav = tmp_path / "s4.wav"
    subprocess.run([CLI, "speak", "-q", "-f", "phonemes", "--voice", "synthetic",
                    "--noise-scale", "0", "--sample-format", "f32", "-i", str(src), "-o", str(wav)],
                   check=True)
    assert wav_samples(wav) == audio.tobytes()


def test_seeds_words_and_blank(speech):
    a = speech.speak([S20, "", S4], voice="synthetic", seed=3)
    b = speech.speak([S20, "", S4], voice="synthetic", seed=3)
    c = speech.speak([S20, "", S4], voice="synthetic", seed=4)
    assert len(a) == 2
    assert a[0][0].tobytes() == b[0][0].tobytes()
    assert a[0][0].tobytes() != c[0][0].tobytes()
    z1 = speech.speak([S20], voice="synthetic", seed=3, noise_scale=0)
    z2 = speech.speak([S20], voice="synthetic", seed=4, noise_scale=0)
    assert z1[0][0].tobytes() == z2[0][0].tobytes()
    words = a[0][1]
    assert [w.phonemes for w in words] == S20.split(" ")
    assert all(w.start is not None and w.end >= w.start for w in words)
    assert words[-1].end <= len(a[0][0]) / 24000


def test_bad_seed(speech):
    with pytest.raises(ValueError):
        speech.speak([S4], seed=-1)
    with pytest.raises(ValueError):
        speech.speak([S4], seed=2 ** 64)
