#!/usr/bin/python3
"""report.py - merges one compare.sh run (ckbench JSON, PyTorch and ONNX Runtime JSON, agreement JSON)
into compare.json, compare.md and the gnuplot data and script of compare.png; it must not time
anything. Fails when the engines did not see the same tokens.

usage: report.py --dir OUT --command "..."   (reads OUT/{ckbatch,pytorch,onnxruntime,agree}.json)
"""
import argparse
import datetime
import json
import os
import platform
import sys

# (column key, engine, batching, label)
COLUMNS = [("ckbatch", "ckbatch", "packed", "ckbatch (packed)"),
           ("pytorch", "pytorch", "padded", "PyTorch+OpenBLAS (padded)"),
           ("ort_padded", "onnxruntime", "padded", "ORT (padded)"),
           ("ort_equal", "onnxruntime", "equal", "ORT (equal lengths, no padding)")]


def load(directory, name):
    with open(os.path.join(directory, name + ".json"), encoding="utf-8") as f:
        return json.load(f)


def rows(directory):
    """{(workload, threads): {column: result}}; ckbench rows are mapped onto the same keys. For a
    fixed-length workload the equal-length plan is the padded plan, so ORT was timed once and that
    result fills both ORT columns."""
    table = {}
    for r in load(directory, "ckbatch")["results"]:
        table.setdefault((r["workload"], r["threads"]), {})["ckbatch"] = r
    for doc in (load(directory, "pytorch"), load(directory, "onnxruntime")):
        for r in doc["results"]:
            col = [c for c, e, b, _ in COLUMNS if (e, b) == (r["engine"], r["batching"])][0]
            table.setdefault((r["workload"], r["threads"]), {})[col] = r
    for cell in table.values():
        if "ort_equal" not in cell and "ort_padded" in cell:
            cell["ort_equal"] = cell["ort_padded"]
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


def ratio(cell, col):
    return cell["ckbatch"]["tokens_per_s_median"] / cell[col]["tokens_per_s_median"]


def fmt(r):
    return f"{r['tokens_per_s_median']:.0f} ({r['min']:.0f}-{r['max']:.0f})"


def markdown(doc, table):
    out = [f"Date {doc['date']}; CPU {doc['machine']['cpu']} ({doc['machine']['online_cpus']} online); "
           f"PyTorch {doc['versions']['pytorch']} on {doc['versions']['blas']}; "
           f"onnxruntime-node {doc['versions']['onnxruntime']}.",
           f"Command: `{doc['command']}`", "",
           "Tokens/s count real (non-pad) tokens only: median of the runs (min-max).", "",
           "| workload | threads | " + " | ".join(label for _, _, _, label in COLUMNS)
           + " | ckbatch / PyTorch | ckbatch / ORT padded | ckbatch / ORT equal |",
           "|---|---|" + "---|" * (len(COLUMNS) + 3)]
    for (workload, threads), cell in sorted(table.items(), key=lambda kv: (kv[0][0] != "corpus", kv[0])):
        out.append(f"| {workload} | {threads} | " + " | ".join(fmt(cell[c]) for c, _, _, _ in COLUMNS)
                   + " | " + " | ".join(f"{ratio(cell, c):.2f}x" for c, _, _, _ in COLUMNS[1:]) + " |")
    a = doc["agreement"]
    diffs = ", ".join(f"{k} {v:.2e}" for k, v in a["max_abs_diff_vs_ckbatch"].items())
    out += ["", f"Agreement on the corpus's first {a['sequences']} sequences ({a['tokens']} tokens, one "
            f"padded batch for the baselines): max abs diff of features vs ckbatch: {diffs} "
            f"(tolerance {a['tolerance']:g}: {'pass' if a['pass'] else 'FAIL'})."]
    return "\n".join(out) + "\n"


def plot_files(directory, table):
    """compare_threads.dat (corpus: threads, one column per engine), compare_lengths.dat (fixed
    lengths at the highest thread count) and compare.gp, which draws both into compare.png."""
    threads = sorted({t for w, t in table if w == "corpus"})
    lengths = sorted(int(w[3:]) for w, t in table if w.startswith("len") and t == threads[-1])
    cols = [c for c, _, _, _ in COLUMNS]
    with open(os.path.join(directory, "compare_threads.dat"), "w", encoding="utf-8") as f:
        for t in threads:
            f.write(f"{t} " + " ".join(f"{table[('corpus', t)][c]['tokens_per_s_median']:.1f}"
                                       for c in cols) + "\n")
    with open(os.path.join(directory, "compare_lengths.dat"), "w", encoding="utf-8") as f:
        for n in lengths:
            f.write(f"{n} " + " ".join(f"{table[(f'len{n}', threads[-1])][c]['tokens_per_s_median']:.1f}"
                                       for c in cols) + "\n")
    series = ", ".join(f"'{{dat}}' using 1:{i + 2} with linespoints title '{label}'"
                       for i, (_, _, _, label) in enumerate(COLUMNS))
    with open(os.path.join(directory, "compare.gp"), "w", encoding="utf-8") as f:
        f.write("set terminal pngcairo size 1200,560\nset output 'compare.png'\n"
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
           "results": [{"workload": w, "threads": t, **{c: cell[c] for c, _, _, _ in COLUMNS},
                        "ratio": {c: ratio(cell, c) for c, _, _, _ in COLUMNS[1:]}}
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
