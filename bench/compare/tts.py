#!/usr/bin/python3
"""tts.py - the Python side of bench/compare_tts.sh: the shared inputs of the lines, the PyTorch reference
timed on them (tools/kokoro_reference.py, noise zeroed), the agreement of every engine's audio with the
fp32 reference, and the report; it must not run ckbatch nor ONNX Runtime (the script and ort_tts.js do).

usage: tts.py prepare --lines L --out inputs.json
       tts.py torch --inputs inputs.json --threads N --json OUT.json --audio OUT.f32
       tts.py agree --reference REF.f32 --lengths inputs.json --engine label=PATH[,...] --json OUT.json
       tts.py report --dir DIR --command "..."
Audio files are float32 little-endian, every line's samples back to back in input order; a .wav is
read as ckbatch speak's f32 WAV (its data chunk).
"""
import argparse
import json
import os
import statistics
import struct
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))


def prepare(args):
    """inputs.json: per line its phonemes, ids [0, *ids, 0] and style row voice[len - 1] (256 floats)."""
    import capture_kokoro as ck
    import kokoro_weights as kw
    lex, voice = ck.Lexicon(ck.KOKORO_DIR), kw.make_voice()
    lines = [ln for ln in open(args.lines, encoding="utf-8").read().splitlines() if ln.strip()]
    out = [{"phonemes": ln, "ids": lex.ids(ln).tolist(), "style": voice[len(ln) - 1, 0].tolist()}
           for ln in lines]
    json.dump(out, open(args.out, "w", encoding="utf-8"), ensure_ascii=False)


def run_torch(args):
    """Times kokoro_reference.synthesize, one line per call as `ckbatch speak` and ORT get them, on
    N threads; load (weight generation) is outside the timed span."""
    import torch
    import kokoro_reference as kr
    import kokoro_weights as kw
    torch.set_num_threads(args.threads)
    w = kr.load_state(kw.make_weights())
    lines = json.load(open(args.inputs, encoding="utf-8"))
    audio = []
    start = time.perf_counter()
    with torch.no_grad():
        for ln in lines:
            style = torch.tensor([ln["style"]], dtype=torch.float32)
            out = kr.synthesize([np.asarray(ln["ids"], dtype=np.int32)], style, [1.0], w, noise_scale=0.0)
            audio.append(out[0]["audio"].numpy())
    wall = time.perf_counter() - start
    np.concatenate(audio).astype("<f4").tofile(args.audio)
    json.dump({"engine": "pytorch", "threads": args.threads, "wall_s": wall,
               "samples": [len(a) for a in audio], "torch": torch.__version__,
               "blas": os.environ.get("LD_LIBRARY_PATH", "")}, open(args.json, "w"))


def read_audio(path):
    """float32 samples of a raw .f32 file or of ckbatch speak's f32 WAV (the 'data' chunk)."""
    raw = open(path, "rb").read()
    if not path.endswith(".wav"):
        return np.frombuffer(raw, dtype="<f4")
    pos = 12
    while pos + 8 <= len(raw):
        tag, size = raw[pos:pos + 4], struct.unpack("<I", raw[pos + 4:pos + 8])[0]
        if tag == b"data":
            return np.frombuffer(raw[pos + 8:pos + 8 + size], dtype="<f4")
        pos += 8 + size + (size & 1)
    raise SystemExit(f"tts.py: no data chunk in {path}")


def ser_db(ref, got):
    """Signal-to-error ratio 10 log10(sum ref^2 / sum (ref - got)^2), in dB (inf when identical)."""
    err = float(np.sum((ref.astype(np.float64) - got) ** 2))
    return float("inf") if err == 0 else 10 * np.log10(float(np.sum(ref.astype(np.float64) ** 2)) / err)


def frame_rms(x):
    """RMS of each 600-sample frame (one duration frame) [F]: the loudness envelope, blind to phase."""
    return np.sqrt(np.mean(x.astype(np.float64).reshape(-1, 600) ** 2, axis=1))


def agree(args):
    """Per engine: SER of each line against the fp32 PyTorch reference, and max abs difference; a line
    whose sample count differs (other durations) is counted, not compared."""
    counts = json.load(open(args.lengths))["samples"]
    ref = read_audio(args.reference)
    edges = np.cumsum([0] + counts)
    res = {}
    for item in args.engine.split(","):
        label, path = item.split("=", 1)
        got = read_audio(path)
        if len(got) != len(ref):
            res[label] = {"error": f"{len(got)} samples vs reference {len(ref)}"}
            continue
        sers = [ser_db(ref[a:b], got[a:b]) for a, b in zip(edges[:-1], edges[1:])]
        envs = [ser_db(frame_rms(ref[a:b]), frame_rms(got[a:b])) for a, b in zip(edges[:-1], edges[1:])]
        res[label] = {"ser_db": sers, "ser_db_median": statistics.median(sers),
                      "envelope_ser_db": envs, "envelope_ser_db_median": statistics.median(envs),
                      "max_abs": float(np.abs(ref - got).max()), "ref_peak": float(np.abs(ref).max())}
    json.dump(res, open(args.json, "w"), indent=1)


def fmt_ser(a):
    if "error" in a:
        return a["error"] + " | | "
    return f"{a['ser_db_median']:.1f} ({min(a['ser_db']):.1f}) | {a['envelope_ser_db_median']:.1f} " \
           f"({min(a['envelope_ser_db']):.1f}) | {a['max_abs']:.3f} / {a['ref_peak']:.3f}"


def agreement_cell(t, first):
    if t["engine"] == "pytorch" and t["threads"] == first:
        return "reference | | "
    return f"as at {first} thread(s) | | "


def report(args):
    """DIR/compare_tts.{json,md}: per engine and threads the real-time factor (audio s / wall s) of each
    run, its median, the ratio to ckbatch fp32, peak RSS and the agreement."""
    d = args.dir
    runs = [json.loads(ln) for ln in open(os.path.join(d, "runs.jsonl"))]
    agreement = json.load(open(os.path.join(d, "agree.json")))
    meta = json.load(open(os.path.join(d, "meta.json")))
    rows = {}
    for r in runs:
        rows.setdefault((r["engine"], r["threads"]), []).append(r)
    table = []
    for (engine, threads), rs in rows.items():
        rtf = [r["audio_s"] / r["wall_s"] for r in rs]
        table.append({"engine": engine, "threads": threads, "rtf": rtf, "rtf_median": statistics.median(rtf),
                      "peak_rss_mib": max(r["peak_rss_kib"] for r in rs) / 1024, "audio_s": rs[0]["audio_s"]})
    base = {t["threads"]: t["rtf_median"] for t in table if t["engine"] == "ckbatch fp32"}
    for t in table:
        t["vs_ckbatch"] = t["rtf_median"] / base[t["threads"]] if t["threads"] in base else None
    json.dump({"meta": meta, "table": table, "agreement": agreement},
              open(os.path.join(d, "compare_tts.json"), "w"), indent=1)
    md = [f"# ckbatch speak vs ONNX Runtime vs PyTorch: {meta['lines']} lines, {table[0]['audio_s']:.2f} s "
          "of audio", "",
          f"`{args.command}`; CPU: {meta['cpu']}; load (uptime) before: {meta['load_before']}, after: "
          f"{meta['load_after']}; {meta['runs']} interleaved runs.", "",
          "RTF = seconds of audio per second of synthesis wall time (higher is faster; model load "
          "excluded); peak RSS of the whole process (load included).", "",
          "| engine | threads | RTF per run | median RTF | vs ckbatch fp32 | peak RSS MiB | "
          "SER dB vs PyTorch fp32, median (min) | 600-sample RMS envelope SER dB, median (min) | "
          "max abs diff / peak |", "|---|---|---|---|---|---|---|---|---|"]
    for t in sorted(table, key=lambda t: (t["threads"], t["engine"])):
        first = int(str(meta["threads"]).split(",")[0])  # agreement is measured at the first thread count
        key = t["engine"] if t["engine"] in agreement and t["threads"] == first else None
        vs = f"{t['vs_ckbatch']:.2f}" if t["vs_ckbatch"] is not None else "-"
        md.append(f"| {t['engine']} | {t['threads']} | {', '.join(f'{x:.3f}' for x in t['rtf'])} | "
                  f"{t['rtf_median']:.3f} | {vs} | {t['peak_rss_mib']:.0f} | "
                  f"{fmt_ser(agreement[key]) if key else agreement_cell(t, first)} |")
    notes = os.path.join(d, "notes.txt")
    for note in open(notes, encoding="utf-8").read().splitlines() if os.path.exists(notes) else []:
        md += ["", note]
    open(os.path.join(d, "compare_tts.md"), "w", encoding="utf-8").write("\n".join(md) + "\n")
    print("\n".join(md))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("prepare")
    a.add_argument("--lines", required=True)
    a.add_argument("--out", required=True)
    a = sub.add_parser("torch")
    a.add_argument("--inputs", required=True)
    a.add_argument("--threads", type=int, required=True)
    a.add_argument("--json", required=True)
    a.add_argument("--audio", required=True)
    a = sub.add_parser("agree")
    a.add_argument("--reference", required=True)
    a.add_argument("--lengths", required=True)
    a.add_argument("--engine", required=True)
    a.add_argument("--json", required=True)
    a = sub.add_parser("report")
    a.add_argument("--dir", required=True)
    a.add_argument("--command", required=True)
    args = p.parse_args(argv)
    {"prepare": prepare, "torch": run_torch, "agree": agree, "report": report}[args.cmd](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
