"""Measures what the Python binding costs and gives: per-call overhead against the C API (1 and 64
lines), the GIL (a counter thread's rate during an encode; two threads on two models against one
after the other, CASES.md C26.3) and RSS growth over many calls. Prints a Markdown table.
Run from the repository root after building with -DCK_PYTHON=ON:

    PYTHONPATH=build/python /usr/bin/python3 python/bench/overhead.py [--calls 2000]

Not a test (no speed is asserted anywhere): numbers for the notes.
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import threading
import time

import ckbatch

P11 = "ðə lˈɛɾəɹ"


def py_median(m, lines, calls):
    for _ in range(calls // 10 + 1):
        m.encode_phonemes(lines)
    t = []
    for _ in range(calls):
        t0 = time.perf_counter()
        m.encode_phonemes(lines)
        t.append(time.perf_counter() - t0)
    return statistics.median(t)


def c_median(exe, threads, circuit, lines, calls):
    out = subprocess.run([exe, str(threads), str(calls), circuit or "-", *lines], check=True,
                         capture_output=True, text=True)
    return float(out.stdout)


def build_c(build):
    exe = os.path.join(tempfile.mkdtemp(), "overhead")
    lib = os.path.abspath(os.path.join(build, "engine"))
    subprocess.run(["cc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-pedantic",
                    "-D_POSIX_C_SOURCE=200809L", "-Iinclude",
                    os.path.join(os.path.dirname(__file__), "overhead.c"), "-o", exe,
                    f"-L{lib}", "-lckbatch", f"-Wl,-rpath,{lib}"], check=True)
    return exe


def rss_kib():
    with open("/proc/self/status") as f:
        return int(next(l for l in f if l.startswith("VmRSS:")).split()[1])


def counter_ratio(m, lines):
    count, stop = [0], [False]

    def spin():
        while not stop[0]:
            count[0] += 1
    th = threading.Thread(target=spin)
    th.start()
    t0 = time.perf_counter()
    time.sleep(1.0)
    idle = count[0] / (time.perf_counter() - t0)
    c0, t0 = count[0], time.perf_counter()
    m.encode_phonemes(lines)
    busy = (count[0] - c0) / (time.perf_counter() - t0)
    stop[0] = True
    th.join()
    return busy / idle


def two_threads(lines):
    a, b = ckbatch.Model(threads=1), ckbatch.Model(threads=1)
    a.encode_phonemes(lines[:2]), b.encode_phonemes(lines[:2])
    t0 = time.perf_counter()
    a.encode_phonemes(lines), b.encode_phonemes(lines)
    seq = time.perf_counter() - t0
    ts = [threading.Thread(target=m.encode_phonemes, args=(lines,)) for m in (a, b)]
    t0 = time.perf_counter()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    par = time.perf_counter() - t0
    a.close(), b.close()
    return seq, par


def overhead_rows(exe, threads, circuit, line, calls):
    with ckbatch.Model(threads=threads, circuit=circuit) as m:
        for n in (1, 64):
            lines = [line] * n
            c = c_median(exe, threads, circuit, lines, calls)
            p = py_median(m, lines, calls)
            name = "tiny circuit" if circuit else "Kokoro encoder"
            print(f"| {name} | {n} | {calls} | {c * 1e3:.3f} | {p * 1e3:.3f} | "
                  f"{(p - c) * 1e6:.1f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=2000, help="calls on the tiny circuit")
    ap.add_argument("--full-calls", type=int, default=10, help="calls on the full encoder")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--build", default="build")
    ap.add_argument("--gil-lines", type=int, default=20, help="lines of ə×100 per thread")
    ap.add_argument("--rss-calls", type=int, default=100, help="full-model calls of 64 lines")
    a = ap.parse_args()
    exe = build_c(a.build)
    tiny = os.path.join("tests", "fixtures", "circuits", "tiny.json")
    print(f"ckbatch {ckbatch.__version__}, kernels {ckbatch.kernels_isa}, threads {a.threads}, "
          f"median seconds per call; the tiny circuit computes almost nothing, so its difference "
          f"is the binding's own cost\n")
    print("| model | lines | calls | C API (ms) | Python (ms) | Python - C (µs) |")
    print("|---|---:|---:|---:|---:|---:|")
    overhead_rows(exe, a.threads, tiny, ";:,.!?", a.calls)
    overhead_rows(exe, a.threads, None, P11, a.full_calls)
    with ckbatch.Model(threads=a.threads) as m:
        r = counter_ratio(m, ["ə" * 250] * 8)
        print(f"\nGIL: a counter thread ran at {r:.0%} of its idle rate during one encode "
              f"(threads {a.threads}, 8 lines of ə×250)")
        short = ["a"] * 64
        for _ in range(10):
            m.encode_phonemes(short)
        before = rss_kib()
        for _ in range(a.rss_calls):
            m.encode_phonemes(short)
        print(f"RSS: {rss_kib() - before} KiB growth over {a.rss_calls} calls of 64 lines "
              f"(Kokoro encoder, after 10 warm-up calls)")
    seq, par = two_threads(["ə" * 100] * a.gil_lines)
    print(f"two Python threads, one Model(threads=1) each, {a.gil_lines} lines of ə×100 each: "
          f"one after the other {seq:.2f} s, in parallel {par:.2f} s, ratio {par / seq:.2f}")

if __name__ == "__main__":
    main()
