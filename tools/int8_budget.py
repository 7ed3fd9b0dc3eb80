#!/usr/bin/python3
"""int8_budget.py - writes the int8 X-Ray budget from measured reports (as bf16_budget.py does bf16's).

Usage: /usr/bin/python3 tools/int8_budget.py REPORT.json [REPORT.json ...] > circuits/kokoro_phoneme_encoder.int8_budget.json

Each REPORT is the JSON report of `ckbatch --xray-oracle CAPTURE --precision int8 --report R`
(int8 candidate against the FP32 pinned capture). Per checkpoint id, the budget is the worst value
over every case of every report with a margin of 2x on the error, rounded up to two significant
digits (bf16_budget.py's rule); at the features it is also held to the published promise
(per-token cosine >= 0.9995, relative RMSE <= 1.5%), whichever is tighter.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bf16_budget  # noqa: E402  (the same rounding and margin)

PROMISE = {"kokoro.bert_encoder.features": {"cosine_min": 0.9995, "rel_rmse": 0.015}}


def main(paths):
    worst, order = {}, []
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
    m = bf16_budget.MARGIN
    for cp in order:
        w = worst[cp]
        b = {"cosine_min": bf16_budget.down_cos(w["cosine"]), "rmse": bf16_budget.up2(m * w["rmse"]),
             "rel_rmse": bf16_budget.up2(m * w["rel_rmse"]), "max_abs": bf16_budget.up2(m * w["max_abs"])}
        p = PROMISE.get(cp, {})
        if "cosine_min" in p:
            b["cosine_min"] = max(b["cosine_min"], p["cosine_min"])
        if "rel_rmse" in p:
            b["rel_rmse"] = min(b["rel_rmse"], p["rel_rmse"])
        cps[cp] = {"I8": {k: float(f"{v:.10g}") for k, v in b.items()}}
    out = {
        "about": "X-Ray budget of --precision int8 (q, k, v and FFN-in in int8; attention dense and FFN-out "
                 "in bf16; the 128->768 projection and the 768->512 features in f32) against the FP32 "
                 "pinned capture, per checkpoint: 2x the worst error measured over every pinned case, "
                 "AMX and AVX512-VNNI runs (tools/int8_budget.py), held at "
                 "the features to cosine >= 0.9995 and relative RMSE <= 1.5%. docs/precision.md.",
        "dtypes": {"I8": {"cosine_min": 0.9995, "rmse": 0.1, "rel_rmse": 0.015, "max_abs": 0.2}},
        "checkpoints": cps,
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
