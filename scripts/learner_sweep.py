"""Sweep converging-learner choices on development seeds (issue 33), in one process: a grid of overrides of a base
configuration, each run by `learner_research.run` (fused kernels), appended as JSON lines to --out and printed as
one line each, sorted at the end by the score: the mean of log calls to the two thresholds of learner_research (a
configuration that leaves a seed short of a threshold scores as if that seed reached it at twice the largest budget).

    .venv/bin/python scripts/learner_sweep.py NAME '{"base": {...}, "grid": {"eta": [32, 64], ...}}'
        [--seeds 1001,...,1008] [--max-calls 1e6]

Grid keys are learner_research configuration keys, or schedule_extra keys (baseline_floor, alpha_horizon,
average_power, alpha_decay, baseline).
"""
from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from learner_research import DEFAULTS, THRESHOLDS, fmt, run  # noqa: E402

EXTRA = ("baseline", "baseline_floor", "alpha_decay", "alpha_horizon", "average_power")


def score(res: dict, seeds: int, max_calls: float) -> float:
    total = 0.0
    for th in THRESHOLDS:
        per = [c if c is not None else 2 * max_calls for c in res[str(th)]["per_seed"]]
        total += sum(math.log(c) for c in per) / seeds
    return total / len(THRESHOLDS)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("spec")
    ap.add_argument("--seeds", default="1001,1002,1003,1004,1005,1006,1007,1008")
    ap.add_argument("--max-calls", type=float, default=1e6)
    ap.add_argument("--per-decade", type=int, default=24)
    ap.add_argument("--out", default="/tmp/research/sweep.jsonl")
    a = ap.parse_args(argv)
    spec = json.loads(a.spec)
    seeds = [int(s) for s in a.seeds.split(",")]
    keys = list(spec["grid"])
    rows = []
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    for values in itertools.product(*(spec["grid"][k] for k in keys)):
        cfg = {**DEFAULTS, **spec.get("base", {})}
        extra = dict(cfg.get("schedule_extra") or {})
        label = []
        for k, v in zip(keys, values):
            label.append(f"{k}={v}")
            if k in EXTRA:
                extra[k] = v
            else:
                cfg[k] = v
        cfg["schedule_extra"] = extra
        res = run(cfg, seeds, a.max_calls, a.per_decade)
        s = score(res, len(seeds), a.max_calls)
        reach = " ".join(f"to{th} {fmt(res[str(th)]['geomean']):>9s} ({res[str(th)]['reached']})"
                         for th in res["thresholds"])
        at = {k: float("nan") if res[k] is None else res[k] for k in ("avg_at_200000", "avg_at_600000",
                                                                         "last_at_200000")}
        line = (f"{a.name} {' '.join(label):60s} {reach} @2e5 {at['avg_at_200000']:.3f} "
                f"@6e5 {at['avg_at_600000']:.3f} last@2e5 {at['last_at_200000']:.3f} score {s:.4f} "
                f"wall {res['wall_s']:.1f}s")
        print(line, flush=True)
        rows.append((s, line))
        with open(a.out, "a") as f:
            f.write(json.dumps({"name": a.name, "label": label, "config": cfg, "seeds": seeds,
                                "max_calls": a.max_calls, "score": s,
                                **{k: v for k, v in res.items() if k != "curves"}}) + "\n")
    print("--- best first")
    for s, line in sorted(rows)[:10]:
        print(line)


if __name__ == "__main__":
    sys.exit(main())
