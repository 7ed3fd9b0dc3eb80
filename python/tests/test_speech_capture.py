"""The pinned speech capture (tests/fixtures/speech) still matches tools/kokoro_reference.py: one case
regenerated with Debian's torch and compared bit for bit (about 5 s), and the 1-phoneme case of the
token-side edge capture (kokoro_token_edges.*, a few seconds); skipped where that torch is absent."""
import os
import subprocess

import pytest

from conftest import SOURCE

PYTHON = "/usr/bin/python3"
REFERENCE_BLAS = "/usr/lib/x86_64-linux-gnu/blas"  # Debian's libblas3 (the reference BLAS)


def run_reference(flag, case):
    """Runs tools/kokoro_reference.py FLAG tests/fixtures/speech --case CASE with Debian's torch on
    the reference BLAS; skips where that torch is absent. Returns its stderr."""
    probe = subprocess.run([PYTHON, "-c", "import torch, numpy"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("Debian's python3-torch / python3-numpy are not installed")
    tool = os.path.join(SOURCE, "tools", "kokoro_reference.py")
    fixture = os.path.join(SOURCE, "tests", "fixtures", "speech")
    # torch's float results depend on the BLAS behind libblas.so.3: the capture was made with Debian's
    # reference BLAS (a fresh machine's default; bench packages switch the alternative to OpenBLAS)
    env = dict(os.environ)
    if os.path.isdir(REFERENCE_BLAS):
        env["LD_LIBRARY_PATH"] = REFERENCE_BLAS + ":" + env.get("LD_LIBRARY_PATH", "")
    run = subprocess.run([PYTHON, tool, flag, fixture, "--case", case],
                         capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 0, run.stderr
    return run.stderr


def test_speech4_regenerates_bit_for_bit():
    assert "0 differ" in run_reference("--verify", "speech4")


def test_edge1_regenerates_bit_for_bit():
    # edge510 is left to `--verify-edges` by hand (about a minute: the Python LSTM over 1538 frames)
    assert "edge1: 15 tensors identical, 0 differ" in run_reference("--verify-edges", "edge1")
