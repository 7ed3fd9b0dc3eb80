#!/usr/bin/python3
"""bf16_budget.py - writes the bf16 X-Ray budget from measured reports.

Usage: /usr/bin/python3 tools/bf16_budget.py REPORT.json [REPORT.json ...] > circuits/kokoro_phoneme_encoder.bf16_budget.json

Each REPORT is the JSON report of `ckbatch --xray-oracle CAPTURE --precision bf16 --report R`
(bf16 candidate against the FP32 pinned capture). Per checkpoint id, the budget is the worst
value over every case of every report with a margin of 2x on the error (cosine: 1 - 2 (1 - min)),
rounded up to two significant digits; at the features it is also held to the published promise
(cosine >= 0.9999, relative RMSE <= 1%), whichever is tighter.
"""
import json
import math
import sys

PROMISE = {"kokoro.bert_encoder.features": {"cosine_min": 0.9999, "rel_rmse": 0.01}}
MARGIN = 2.0


def up2(x):
    """x rounded up to two significant digits."""
    if x <= 0:
        return 0.0
    e = math.floor(math.log10(x)) - 1
    return math.ceil(x / 10 ** e) * 10 ** e


def down_cos(c):
    """1 - up2(MARGIN * (1 - c)) with 1 - c at least 1e-8 (a cosine of 1.0 computed in double
    can come out a few ulp below it), as a float with no more digits than that needs."""
    return float(f"{1.0 - up2(MARGIN * max(1.0 - c, 1e-8)):.10g}")


def main(paths):
    worst = {}
    order = []
    for path in paths:
        for r in json.load(open(path))["checkpoints"]:
            if r["status"] == "NOT_TESTED":
                continue
            w = worst.get(r["checkpoint"])
            if w is None:
                order.append(r["checkpoint"])
                w = worst[r["checkpoint"]] = {"cosine": 1.0, "rmse": 0.0, "rel_rmse": 0.0, "max_abs": 0.0}
            w["cosine"] = min(w["cosine"], r["cosine"])
            for k in ("rmse", "rel_rmse", "max_abs"):
                w[k] = max(w[k], r[k])
    cps = {}
    for cp in order:
        w = worst[cp]
        b = {"cosine_min": down_cos(w["cosine"]), "rmse": up2(MARGIN * w["rmse"]),
             "rel_rmse": up2(MARGIN * w["rel_rmse"]), "max_abs": up2(MARGIN * w["max_abs"])}
        p = PROMISE.get(cp, {})
        if "cosine_min" in p:
            b["cosine_min"] = max(b["cosine_min"], p["cosine_min"])
        if "rel_rmse" in p:
            b["rel_rmse"] = min(b["rel_rmse"], p["rel_rmse"])
        cps[cp] = {"BF16": {k: float(f"{v:.10g}") for k, v in b.items()}}
    out = {
        "about": "X-Ray budget of --precision bf16 against the FP32 pinned capture, per checkpoint: "
                 "2x the worst error measured over every pinned case (tools/bf16_budget.py), held "
                 "at the features to cosine >= 0.9999 and relative RMSE <= 1%. docs/precision.md.",
        "dtypes": {"BF16": {"cosine_min": 0.9999, "rmse": 0.05, "rel_rmse": 0.01, "max_abs": 0.1}},
        "checkpoints": cps,
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
