"""The pinned speech capture (tests/fixtures/speech) still matches tools/kokoro_reference.py: one case
regenerated with Debian's torch and compared bit for bit (about 5 s); skipped where that torch is absent."""
import os
import subprocess

import pytest

from conftest import SOURCE

PYTHON = "/usr/bin/python3"


def test_speech4_regenerates_bit_for_bit():
    probe = subprocess.run([PYTHON, "-c", "import torch, numpy"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("Debian's python3-torch / python3-numpy are not installed")
    tool = os.path.join(SOURCE, "tools", "kokoro_reference.py")
    fixture = os.path.join(SOURCE, "tests", "fixtures", "speech")
    run = subprocess.run([PYTHON, tool, "--verify", fixture, "--case", "speech4"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "0 differ" in run.stderr
