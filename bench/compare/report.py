#!/usr/bin/python3
"""report.py - merges one compare.sh run (ckbench JSON, PyTorch and ONNX Runtime JSON, agreement and
accuracy JSON) into compare.json, compare.md and the gnuplot data and script of compare.png; it must
not time anything. Fails when the engines did not see the same tokens.

usage: report.py --dir OUT --command "..."   (reads OUT/{ckbatch,pytorch,onnxruntime,agree}.json)
"""
import argparse
import datetime
import json
import os
import platform
import sys

# (column key, engine, precision, batching, label): the FP32 engines first (the first table), then
# the reduced-precision ones (the second table)
COLUMNS = [("ckbatch", "ckbatch", "fp32", "packed", "ckbatch (packed)"),
           ("pytorch", "pytorch", "fp32", "padded", "PyTorch+OpenBLAS (padded)"),
           ("ort_padded", "onnxruntime", "fp32", "padded", "ORT (padded)"),
           ("ort_equal", "onnxruntime", "fp32", "equal", "ORT (equal lengths, no padding)"),
           ("ckbatch_bf16", "ckbatch", "bf16", "packed", "ckbatch bf16 (packed)"),
           ("ckbatch_int8", "ckbatch", "int8", "packed", "ckbatch int8 (packed)"),
           ("ort_int8_padded", "onnxruntime", "int8", "padded", "ORT INT8 (padded)"),
           ("ort_int8_equal", "onnxruntime", "int8", "equal", "ORT INT8 (equal lengths)")]
FP32 = [c for c in COLUMNS if c[2] == "fp32"]
# (numerator, denominator, label): ckbatch bf16 against ckbatch FP32 and both ORTs, then what INT8
# buys ORT, for comparison with what bf16 buys ckbatch
REDUCED_RATIOS = [("ckbatch_bf16", "ckbatch", "bf16 / ckbatch FP32"),
                  ("ckbatch_bf16", "ort_padded", "bf16 / ORT FP32 padded"),
                  ("ckbatch_bf16", "ort_equal", "bf16 / ORT FP32 equal"),
                  ("ckbatch_bf16", "ort_int8_padded", "bf16 / ORT INT8 padded"),
                  ("ckbatch_bf16", "ort_int8_equal", "bf16 / ORT INT8 equal"),
                  ("ckbatch_int8", "ckbatch_bf16", "int8 / ckbatch bf16"),
                  ("ckbatch_int8", "ort_int8_padded", "int8 / ORT INT8 padded"),
                  ("ckbatch_int8", "ort_int8_equal", "int8 / ORT INT8 equal"),
                  ("ort_int8_padded", "ort_padded", "ORT INT8 / ORT FP32 padded")]


def load(directory, name):
    with open(os.path.join(directory, name + ".json"), encoding="utf-8") as f:
        return json.load(f)


def rows(directory):
    """{(workload, threads): {column: result}}; ckbench rows are mapped onto the same keys. For a
    fixed-length workload the equal-length plan is the padded plan, so ORT was timed once and that
    result fills both columns of that ORT precision."""
    table = {}
    for doc in (load(directory, "ckbatch"), load(directory, "pytorch"), load(directory, "onnxruntime")):
        for r in doc["results"]:
            key = (r.get("engine", "ckbatch"), r.get("precision", "fp32"), r.get("batching", "packed"))
            col = [c for c, e, p, b, _ in COLUMNS if (e, p, b) == key][0]
            table.setdefault((r["workload"], r["threads"]), {})[col] = r
    for cell in table.values():
        for equal, padded in (("ort_equal", "ort_padded"), ("ort_int8_equal", "ort_int8_padded")):
            if equal not in cell and padded in cell:
                cell[equal] = cell[padded]
    for key, cell in table.items():
        tokens = {c: r["tokens"] for c, r in cell.items()}
        if len(cell) != len(COLUMNS) or len(set(tokens.values())) != 1:
            raise SystemExit(f"report: {key}: engines missing or token counts differ: {tokens}")
    return table


def machine():
    cpu = "unknown"
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {"cpu": cpu, "online_cpus": os.cpu_count(), "kernel": platform.release()}


def ratio(cell, col, over="ckbatch"):
    return cell[over]["tokens_per_s_median"] / cell[col]["tokens_per_s_median"]


def fmt(r):
    return f"{r['tokens_per_s_median']:.0f} ({r['min']:.0f}-{r['max']:.0f})"


def ordered(table):
    return sorted(table.items(), key=lambda kv: (kv[0][0] != "corpus", kv[0]))


def markdown(doc, table):
    out = [f"Date {doc['date']}; CPU {doc['machine']['cpu']} ({doc['machine']['online_cpus']} online); "
           f"PyTorch {doc['versions']['pytorch']} on {doc['versions']['blas']}; "
           f"onnxruntime-node {doc['versions']['onnxruntime']}.",
           f"Command: `{doc['command']}`", "",
           "Tokens/s count real (non-pad) tokens only: median of the runs (min-max).", "",
           "| workload | threads | " + " | ".join(c[4] for c in FP32)
           + " | ckbatch / PyTorch | ckbatch / ORT padded | ckbatch / ORT equal |",
           "|---|---|" + "---|" * (len(FP32) + 3)]
    for (workload, threads), cell in ordered(table):
        out.append(f"| {workload} | {threads} | " + " | ".join(fmt(cell[c[0]]) for c in FP32)
                   + " | " + " | ".join(f"{ratio(cell, c[0]):.2f}x" for c in FP32[1:]) + " |")
    reduced = [c for c in COLUMNS if c[2] != "fp32"]
    out += ["", "Reduced precision: ckbatch `--precision bf16` (linears on oneDNN's bf16 matmul, the rest "
            "f32), ckbatch `--precision int8` (q, k, v and FFN-in on oneDNN's u8 x s8 matmul, the other "
            "linears bf16, the rest f32) and ORT on the dynamically quantized INT8 model (`baselines.py quantize`), timed in the "
            "same run as the FP32 engines above.", "",
            "| workload | threads | " + " | ".join(c[4] for c in reduced) + " | "
            + " | ".join(label for _, _, label in REDUCED_RATIOS) + " |",
            "|---|---|" + "---|" * (len(reduced) + len(REDUCED_RATIOS))]
    for (workload, threads), cell in ordered(table):
        out.append(f"| {workload} | {threads} | " + " | ".join(fmt(cell[c[0]]) for c in reduced) + " | "
                   + " | ".join(f"{ratio(cell, d, n):.2f}x" for n, d, _ in REDUCED_RATIOS) + " |")
    a = doc["agreement"]
    diffs = ", ".join(f"{k} {v:.2e}" for k, v in a["max_abs_diff_vs_ckbatch"].items())
    out += ["", f"Agreement on the corpus's first {a['sequences']} sequences ({a['tokens']} tokens, one "
            f"padded batch for the baselines): max abs diff of features vs ckbatch: {diffs} "
            f"(tolerance {a['tolerance']:g}: {'pass' if a['pass'] else 'FAIL'}).", "",
            "Accuracy against FP32 on the same batch, at the features (per-token cosine over the 512 "
            "channels, its minimum over the tokens; relative RMSE = RMSE / RMS of the reference, over "
            "the batch):", "",
            "| engine | reference | per-token cosine min | relative RMSE | max abs |", "|---|---|---|---|---|"]
    for r in a["accuracy"]:
        out.append(f"| {r['engine']} | {r['reference']} | {r['cosine_min']:.7f} | {100 * r['rel_rmse']:.3g}% | "
                   f"{r['max_abs']:.2e} |")
    return "\n".join(out) + "\n"


def plot_files(directory, table):
    """compare_threads.dat (corpus: threads, one column per engine), compare_lengths.dat (fixed
    lengths at the highest thread count) and compare.gp, which draws both into compare.png."""
    threads = sorted({t for w, t in table if w == "corpus"})
    lengths = sorted(int(w[3:]) for w, t in table if w.startswith("len") and t == threads[-1])
    cols = [c[0] for c in COLUMNS]
    with open(os.path.join(directory, "compare_threads.dat"), "w", encoding="utf-8") as f:
        for t in threads:
            f.write(f"{t} " + " ".join(f"{table[('corpus', t)][c]['tokens_per_s_median']:.1f}"
                                       for c in cols) + "\n")
    with open(os.path.join(directory, "compare_lengths.dat"), "w", encoding="utf-8") as f:
        for n in lengths:
            f.write(f"{n} " + " ".join(f"{table[(f'len{n}', threads[-1])][c]['tokens_per_s_median']:.1f}"
                                       for c in cols) + "\n")
    series = ", ".join(f"'{{dat}}' using 1:{i + 2} with linespoints title '{label}'"
                       for i, (_, _, _, _, label) in enumerate(COLUMNS))
    with open(os.path.join(directory, "compare.gp"), "w", encoding="utf-8") as f:
        f.write("set terminal pngcairo size 1200,640\nset output 'compare.png'\n"
                "set multiplot layout 1,2\nset key below\nset ylabel 'tokens/s'\nset grid\n"
                "set yrange [0:*]\n"
                f"set xlabel 'threads (corpus mix)'\nset xtics 1\n"
                f"plot {series.replace('{dat}', 'compare_threads.dat')}\n"
                f"set xlabel 'sequence length ({threads[-1]} threads)'\nset logscale x 2\n"
                f"set xtics ({', '.join(str(n) for n in lengths)})\n"
                f"plot {series.replace('{dat}', 'compare_lengths.dat')}\nunset multiplot\n")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dir", required=True)
    p.add_argument("--command", required=True)
    a = p.parse_args()
    table = rows(a.dir)
    torch_doc, ort_doc = load(a.dir, "pytorch"), load(a.dir, "onnxruntime")
    doc = {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
           "command": a.command, "machine": machine(),
           "versions": {"pytorch": torch_doc["torch"], "blas": os.path.basename(torch_doc["blas"][-1]),
                        "onnxruntime": ort_doc["version"]},
           "agreement": load(a.dir, "agree"),
           "results": [{"workload": w, "threads": t, **{c[0]: cell[c[0]] for c in COLUMNS},
                        "ratio": {c[0]: ratio(cell, c[0]) for c in FP32[1:]},
                        "ratio_reduced": {f"{n}/{d}": ratio(cell, d, n) for n, d, _ in REDUCED_RATIOS}}
                       for (w, t), cell in sorted(table.items())]}
    with open(os.path.join(a.dir, "compare.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    text = markdown(doc, table)
    with open(os.path.join(a.dir, "compare.md"), "w", encoding="utf-8") as f:
        f.write(text)
    plot_files(a.dir, table)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
