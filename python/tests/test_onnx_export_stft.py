"""tools/kokoro_onnx_export.py's rewrites of what torch 1.13 cannot export (STFT as a Conv1d, iSTFT as a
ConvTranspose1d, angle() as atan + where) still match torch.stft / torch.istft / torch.atan2 on fixed
data (`--self-check`, a few seconds); skipped where Debian's torch is absent. The bench it serves,
bench/compare_tts.sh, is not run here."""
import os
import subprocess

import pytest

from conftest import SOURCE

PYTHON = "/usr/bin/python3"


def test_export_rewrites_match_torch():
    probe = subprocess.run([PYTHON, "-c", "import torch, numpy"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("Debian's python3-torch / python3-numpy are not installed")
    tool = os.path.join(SOURCE, "tools", "kokoro_onnx_export.py")
    run = subprocess.run([PYTHON, tool, "--self-check"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    # the four measured differences, each under its limit
    assert run.stdout.count("self-check ") == 4, run.stdout
