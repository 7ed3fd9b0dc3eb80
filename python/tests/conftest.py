"""Shared fixtures of the ckbatch Python tests: the demo model, the CLI binary, the C26 lines."""
import os
import subprocess

import pytest

import ckbatch

SOURCE = os.environ.get("CK_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
BINARY = os.environ.get("CK_BINARY_DIR", os.path.join(SOURCE, "build"))
CLI = os.path.join(BINARY, "engine", "ckbatch")
TINY = os.path.join(SOURCE, "tests", "fixtures", "circuits", "tiny.json")

P11 = "ðə lˈɛɾəɹ"                      # 9 code points -> 11 positions (CASES.md)
PF = "ˌɪn fˈækt, ðɪs ɪz sˈʌmθˌɪŋ."
LINES = [P11, "", PF, "hˈɛlO wˈɜɹld ✗", "ə" * 40]   # a blank line, a dropped symbol (U+2717)


@pytest.fixture(scope="session")
def model():
    with ckbatch.Model(threads=2) as m:
        yield m


def run_cli(tmp_path, lines, *args, name="cli"):
    """The CLI's features file for `lines` (one per line) with `args`; returns its path."""
    src = tmp_path / f"{name}.txt"
    src.write_text("".join(l + "\n" for l in lines), encoding="utf-8")
    out = tmp_path / f"{name}.safetensors"
    subprocess.run([CLI, "-q", "--no-progress", "-i", str(src), "-o", str(out), *args],
                   check=True)
    return out
