#!/usr/bin/python3
"""baselines.py - the PyTorch side of bench/compare.sh: prepares the shared workloads, times PyTorch on
padded batches, exports the ONNX model and its INT8 twin (int8.py) and checks that ckbatch, PyTorch
and ONNX Runtime agree on one batch, and how far each reduced-precision engine is from FP32; it must
not measure ckbatch or ONNX Runtime itself (ckbench and ort_bench.js do).

Run with Debian's interpreter and OpenBLAS (compare.sh sets this up):
    LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp OPENBLAS_CORETYPE=Cooperlake \
    /usr/bin/python3 bench/compare/baselines.py SUBCOMMAND ...
"""
import argparse
import json
import os
import statistics
import struct
import sys
import time

import numpy as np
import torch

import common
import int8

def cmd_prepare(a):
    loads = [common.fixed_workload(n, a.tokens) for n in a.lengths]
    loads.append(common.corpus_workload(a.corpus))
    common.write_workloads(a.out, loads, a.budget)
    return 0


def blas_check():
    """(library path of the BLAS torch loaded, seconds of one 1024^3 sgemm on one thread)."""
    torch.set_num_threads(1)
    x = torch.rand(1024, 1024)
    x @ x
    t0 = time.perf_counter()
    x @ x
    seconds = time.perf_counter() - t0
    with open("/proc/self/maps", encoding="utf-8") as f:
        libs = sorted({line.split()[-1] for line in f if "blas" in line.lower()})
    return libs, seconds


def time_pass(model, batches):
    """Seconds for one pass over the prepared (ids, mask) batches."""
    t0 = time.perf_counter()
    for ids, mask in batches:
        model(ids, mask)
    return time.perf_counter() - t0


def cmd_torch(a):
    with open(a.workloads, encoding="utf-8") as f:
        loads = json.load(f)
    libs, sgemm = blas_check()
    if not any("openblas" in lib for lib in libs) or sgemm > 0.1:
        print(f"baselines: torch is not on OpenBLAS ({libs}, 1024^3 sgemm {sgemm:.3f} s)",
              file=sys.stderr)
        return 1
    model, results = common.Encoder().eval(), []
    for threads in a.threads:
        torch.set_num_threads(threads)
        for w in loads:
            seqs = [np.array(s, dtype=np.int64) for s in w["seqs"]]
            batches = [tuple(torch.from_numpy(t) for t in common.padded(seqs, m))
                       for m in w["plans"]["padded"]]
            tokens = sum(len(s) for s in seqs)
            with torch.inference_mode():
                time_pass(model, batches)  # warm-up, as ckbench does
                rates = [tokens / time_pass(model, batches) for _ in range(a.runs)]
            results.append(run_result("pytorch", "padded", w, threads, tokens, rates))
    doc = {"engine": "pytorch", "torch": torch.__version__, "blas": libs,
           "sgemm_1024_seconds_1_thread": sgemm, "results": results}
    with open(a.json, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    return 0


def run_result(engine, batching, w, threads, tokens, rates):
    """One result row; tokens/s counts real (non-pad) tokens only."""
    positions = sum(len(m) * max(len(w["seqs"][i]) for i in m) for m in w["plans"][batching])
    line = f"{engine} {batching} {w['name']} threads {threads}: {statistics.median(rates):.0f} tokens/s"
    print(line, file=sys.stderr)
    return {"engine": engine, "batching": batching, "workload": w["name"], "threads": threads,
            "sequences": len(w["seqs"]), "tokens": tokens, "padded_positions": positions,
            "runs": len(rates), "tokens_per_s": rates, "tokens_per_s_median": statistics.median(rates),
            "min": min(rates), "max": max(rates)}


def cmd_export(a):
    model = common.Encoder().eval()
    ids, mask = common.padded([np.arange(1, 12), np.arange(1, 7)], [0, 1])
    axes = {0: "batch", 1: "sequence"}
    with torch.no_grad(), common.onnx_exportable():
        torch.onnx.export(model, (torch.from_numpy(ids), torch.from_numpy(mask)), a.out,
                          input_names=["ids", "attention_mask"], output_names=["features"],
                          dynamic_axes={"ids": axes, "attention_mask": axes, "features": axes},
                          opset_version=14, do_constant_folding=True)
    return 0


def cmd_quantize(a):
    counts = int8.quantize_file(a.model, a.out)
    print(f"baselines: {a.out}: INT8 {counts['MatMul']} MatMul, {counts['Gather']} Gather", file=sys.stderr)
    return 0


def read_ckbatch(path):
    """(features float32 [T,O], offsets int64 [S+1]) from ckbatch's safetensors output."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header, base = json.loads(data[8:8 + n]), 8 + n

    def tensor(name, dtype):
        lo, hi = header[name]["data_offsets"]
        return np.frombuffer(data[base + lo:base + hi], dtype=dtype).reshape(header[name]["shape"])
    return tensor("features", "<f4"), tensor("offsets", "<i8")


def unpad(features, seqs):
    """Padded [B,T_max,O] -> packed [sum T,O] (each sequence's real rows, in order)."""
    return np.concatenate([features[b, :len(s)] for b, s in enumerate(seqs)])


def accuracy(candidate, reference):
    """How far packed features [T,O] are from a reference: the lowest per-token cosine (and where),
    relative RMSE over the whole batch (RMSE / RMS of the reference, as X-Ray's rel_rmse), max abs."""
    c, r = candidate.astype(np.float64), reference.astype(np.float64)
    cos = (c * r).sum(1) / (np.linalg.norm(c, axis=1) * np.linalg.norm(r, axis=1))
    rel = np.sqrt(((c - r) ** 2).mean()) / np.sqrt((r ** 2).mean())
    return {"cosine_min": float(cos.min()), "cosine_min_token": int(cos.argmin()),
            "rel_rmse": float(rel), "max_abs": float(np.abs(c - r).max())}


def read_check(path, offsets, seqs):
    """Packed features [T,O] of the check batch from ckbatch's safetensors (offsets must match) or
    from ORT's raw padded f32 [B,T_max,O] (any other suffix)."""
    if path.endswith(".safetensors"):
        features, got = read_ckbatch(path)
        if got.tolist() != offsets:
            raise SystemExit(f"baselines: {path}: offsets {got.tolist()} differ from the check batch")
        return features
    t_max = max(len(s) for s in seqs)
    return unpad(np.fromfile(path, dtype="<f4").reshape(len(seqs), t_max, -1), seqs)


# (engine, its check features' argument, reference engine, reference's argument); the FP32 row of
# ORT against ckbatch gives the scale: what two FP32 engines differ by.
ACCURACY = [("ckbatch bf16", "ckbatch_bf16", "ckbatch fp32", "ckbatch"),
            ("ckbatch int8", "ckbatch_int8", "ckbatch fp32", "ckbatch"),
            ("ORT INT8", "ort_int8", "ORT FP32", "ort"),
            ("ORT INT8", "ort_int8", "ckbatch fp32", "ckbatch"),
            ("ORT FP32", "ort", "ckbatch fp32", "ckbatch")]


def cmd_agree(a):
    with open(a.workloads, encoding="utf-8") as f:
        corpus = [w for w in json.load(f) if w["name"] == "corpus"][0]
    seqs = [np.array(s, dtype=np.int64) for s in corpus["seqs"][:a.sequences]]
    offsets = np.cumsum([0] + [len(s) for s in seqs]).tolist()
    ids, mask = common.padded(seqs, range(len(seqs)))
    with torch.inference_mode():
        torch_out = common.Encoder().eval()(torch.from_numpy(ids), torch.from_numpy(mask)).numpy()
    got = {k: read_check(getattr(a, k), offsets, seqs)
           for k in ("ckbatch", "ckbatch_bf16", "ckbatch_int8", "ort", "ort_int8")}
    ck = got["ckbatch"]
    diffs = {"pytorch": float(np.abs(unpad(torch_out, seqs) - ck).max()),
             "onnxruntime": float(np.abs(got["ort"] - ck).max())}
    rows = [{"engine": e, "reference": ref, **accuracy(got[k], got[rk])} for e, k, ref, rk in ACCURACY]
    doc = {"sequences": len(seqs), "tokens": offsets[-1], "tolerance": a.tolerance,
           "max_abs_diff_vs_ckbatch": diffs, "pass": all(d <= a.tolerance for d in diffs.values()),
           "accuracy": rows}
    with open(a.json, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    print(f"baselines: agreement on {len(seqs)} sequences: {diffs}", file=sys.stderr)
    for r in rows:
        print(f"baselines: {r['engine']} vs {r['reference']}: cosine min {r['cosine_min']:.6f}, "
              f"relative RMSE {r['rel_rmse']:.3%}", file=sys.stderr)
    return 0 if doc["pass"] else 1


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("prepare", help="write the workloads and batch plans (JSON)")
    s.add_argument("--lengths", type=lambda v: [int(x) for x in v.split(",")], required=True)
    s.add_argument("--tokens", type=int, required=True)
    s.add_argument("--corpus", required=True)
    s.add_argument("--budget", type=int, required=True, help="padded positions per batch")
    s.add_argument("--out", required=True)
    s = sub.add_parser("torch", help="time PyTorch on padded batches")
    s.add_argument("--workloads", required=True)
    s.add_argument("--threads", type=lambda v: [int(x) for x in v.split(",")], required=True)
    s.add_argument("--runs", type=int, required=True)
    s.add_argument("--json", required=True)
    s = sub.add_parser("export", help="torch.onnx.export the encoder (dynamic batch and sequence)")
    s.add_argument("--out", required=True)
    s = sub.add_parser("quantize", help="ORT-style dynamic INT8 (quantize_dynamic defaults; int8.py)")
    s.add_argument("--model", required=True)
    s.add_argument("--out", required=True)
    s = sub.add_parser("agree", help="max abs diff of PyTorch and ORT features vs ckbatch; bf16 and "
                       "INT8 accuracy against FP32")
    s.add_argument("--workloads", required=True)
    s.add_argument("--ckbatch", required=True, help="ckbatch fp32 features (safetensors)")
    s.add_argument("--ckbatch-bf16", required=True, help="ckbatch --precision bf16 features")
    s.add_argument("--ckbatch-int8", required=True, help="ckbatch --precision int8 features")
    s.add_argument("--ort", required=True, help="ORT FP32: raw f32 [B,T_max,O] of the check batch")
    s.add_argument("--ort-int8", required=True, help="ORT INT8, the same form")
    s.add_argument("--sequences", type=int, required=True, help="the corpus's first N, one padded batch")
    s.add_argument("--tolerance", type=float, default=1e-4)
    s.add_argument("--json", required=True)
    a = p.parse_args()
    return {"prepare": cmd_prepare, "torch": cmd_torch, "export": cmd_export,
            "quantize": cmd_quantize, "agree": cmd_agree}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
