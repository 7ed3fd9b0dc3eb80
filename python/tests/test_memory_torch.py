"""RSS stays flat over many calls; torch takes the arrays without a copy, in either import
order."""
import ctypes
import gc
import subprocess
import sys

import pytest

import ckbatch
from conftest import P11, TINY


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS in /proc/self/status")


def live_rss_kib():
    """RSS after glibc's malloc_trim(0) hands freed heap back: what is still allocated, not the
    high-water mark glibc keeps (an interrupted 100,000-line call leaves 14-26 MB of freed
    heap resident that the next call reuses, which is no leak)."""
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    return rss_kib()


def test_rss_flat_over_1000_calls_of_64_lines():
    """1,000 encode_phonemes calls on 64 lines grow RSS by < 5 MB. The tiny circuit (vocab 10,
    16 positions) keeps this fast; the binding's buffers and objects per call are the same as the
    full model's (python/bench_overhead.py measures the full model)."""
    lines = [";:,.!?"[: 1 + i % 6] for i in range(64)]
    with ckbatch.Model(circuit=TINY, threads=1) as m:
        for _ in range(50):                       # warm up allocator pools and oneDNN caches
            r = m.encode_phonemes(lines)
        del r
        gc.collect()
        before = rss_kib()
        for _ in range(1000):
            r = m.encode_phonemes(lines)
            assert len(r) == 64
        del r
        gc.collect()
        grew = rss_kib() - before
    print(f"\nRSS growth over 1000 calls x 64 lines: {grew} KiB")
    assert grew < 5 * 1024


def test_arrays_are_torch_ready(model):
    torch = pytest.importorskip("torch")
    r = model.encode_phonemes([P11, P11 + " " + P11])
    t = torch.from_numpy(r.features)
    assert t.data_ptr() == r.features.ctypes.data and t.shape == (11 + 21, 512)
    assert torch.from_numpy(r.offsets).tolist() == [0, 11, 32]
    assert torch.equal(torch.from_numpy(r[1]), t[11:32])


SCRIPT = """
import sys
first, second = sys.argv[1:3]
__import__(first); __import__(second)
import ckbatch, torch
with ckbatch.Model(threads=2) as m:
    r = m.encode_phonemes(["{p}"] * 3)
t = torch.from_numpy(r.features)
x = torch.nn.functional.linear(t, torch.ones(4, 512))     # torch's own OpenMP and BLAS after ours
assert t.data_ptr() == r.features.ctypes.data
print(r.features.shape[0], tuple(x.shape), r.features[0, :4].tobytes().hex())
"""


@pytest.mark.parametrize("order", [("torch", "ckbatch"), ("ckbatch", "torch")])
def test_with_torch_in_either_import_order(order):
    pytest.importorskip("torch")
    code = SCRIPT.format(p=P11)
    out = subprocess.run([sys.executable, "-c", code, *order], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    with ckbatch.Model(threads=2) as m:
        want = m.encode_phonemes([P11])[0][0, :4].tobytes().hex()
    assert out.stdout.split() == ["33", "(33,", "4)", want]
