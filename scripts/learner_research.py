"""Research harness for issue 33: how fast does a converging-learner variant reach an exploitability threshold?

One *configuration* is a converging CP-GRPO learner (`loop.Learners`, fused or torch engine) plus the options
under study, run on development seeds (never the reporting seeds) up to a budget of physical calls.  After every
iteration that passes the next point of a log-spaced grid of budgets (`--per-decade` points per decade), the exact
exploitability (NashConv / 2, chips) of the run's average policy and last iterate is taken, at the run's realised
calls.  Calls to a threshold: per seed, the first crossing interpolated linearly in log calls and log
exploitability between the two evaluations around it (`study_design.calls_to`'s rule); over seeds, the geometric
mean of the seeds that reach it, and how many do.

Options that need no new arithmetic in the learner are applied from the host between iterations, so they run on
any engine:
- averaging weights w_t of the average policy (`avg`): the average-policy sums are scaled by w_{t-1} / w_t before
  iteration t adds its increment, so the sums are proportional to sum_t w_t (own reach x pi_t);
- step-size schedules (`eta_decay`): `Learners.rate_divisor`;
- magnet schedules (`alpha_decay`, `kappa_decay`): the schedule's alpha and kappa, replaced each iteration;
- optimism (`optimism` = beta): iteration t is computed from the extrapolated logits theta_t + beta (theta_t -
  theta_{t-1}) and its increment is added to theta_t (a predictive / extragradient-style step).

    .venv/bin/python scripts/learner_research.py NAME '{"eta": 128, ...}' [--seeds 1001,...] [--max-calls 1e6]

prints one line of results and appends it (with per-seed numbers) to --out (JSON lines).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import replace

import numpy as np
import torch

from oscc_core.learning.loop import Learners, RunSpec, Schedule
from oscc_core.chapters.solver import study as solver_study
from oscc_core.chapters.transfer import study as transfer_study
from oscc_core.learning import calls_rules
from oscc_core.learning.study import exploitability

DEFAULTS = dict(arm="cp_grpo", N=128, E=4, eps=0.2, eta=128.0, alpha=0.5, kappa=0.1, law="counterfactual",
                avg="uniform", avg_power=1.0, avg_delay=0, eta_decay=None, alpha_decay=None, kappa_decay=None,
                engine="fused", learner=None, learner_options=None)
THRESHOLDS = (solver_study.ROUND_THRESHOLDS[0], solver_study.thresholds()[-1])
KUHN_THRESHOLDS = tuple(sorted(transfer_study.thresholds(), reverse=True))    # chapter 06's Kuhn thresholds (the paper's, from the claims file)


def schedule_factor(spec, t: int) -> float:
    """A decay spec [p, t0]: ((t + t0) / t0) ** p (the divisor at iteration t, 0-based); None: 1."""
    if not spec:
        return 1.0
    p, t0 = spec
    return ((t + t0) / t0) ** p


def avg_weight(cfg, t: int) -> float:
    """w_t of iteration t (0-based) in the average policy."""
    if cfg["avg"] == "uniform":
        return 1.0
    if cfg["avg"] == "power":        # (t + 1)^g, from iteration `avg_delay` on (0 before it)
        return 0.0 if t < cfg["avg_delay"] else float(t + 1 - cfg["avg_delay"]) ** cfg["avg_power"]
    raise ValueError(cfg["avg"])


def grid(lo: float, hi: float, per_decade: int) -> np.ndarray:
    n = int(round(math.log10(hi / lo) * per_decade))
    return np.unique(np.round(np.logspace(math.log10(lo), math.log10(hi), n + 1)).astype(np.int64))


def calls_to(points, threshold: float):
    """First crossing of `threshold` by (calls, exploitability) points, log-log interpolated (the study's rule,
    `calls_rules.crossing_of_points`); None if never."""
    found = calls_rules.crossing_of_points(points, threshold)
    return None if found is None else found[0]


def make_learners(cfg, seeds):
    s = Schedule(iterations=2 ** 40, decision_points=cfg["N"], epochs=cfg["E"], epsilon=cfg["eps"],
                 learning_rate=float(cfg["eta"]), decision_law=cfg["law"], proximal_alpha=float(cfg["alpha"]),
                 proximal_kappa=float(cfg["kappa"]), **(cfg.get("schedule_extra") or {}))
    runs = [RunSpec(cfg["arm"], int(seed)) for seed in seeds]
    if cfg.get("history"):
        sys.path.insert(0, __file__.rsplit("/", 1)[0])
        from research_variants import HistoryLearners
        return HistoryLearners("leduc", runs, s, **cfg["history"])
    if cfg.get("variant"):
        sys.path.insert(0, __file__.rsplit("/", 1)[0])
        from research_variants import VariantLearners
        return VariantLearners("leduc", runs, s, **cfg["variant"])
    return Learners(cfg.get("game", "leduc"), runs, s, engine=cfg["engine"])


def run(cfg, seeds, max_calls: float, per_decade: int, lo: float = 3e3):
    torch.set_num_threads(1)
    L = make_learners(cfg, seeds)
    base = L.schedule
    marks = grid(lo, max_calls, per_decade)
    nxt = np.zeros(len(seeds), dtype=np.int64)          # next grid index per run
    curves = [[] for _ in seeds]
    lasts = [[] for _ in seeds]
    t, w_prev, prev_logits = 0, None, None
    start = time.time()
    while True:
        calls = L.ledger.counts["physical_calls"].numpy()
        if (nxt >= len(marks)).all():
            break
        w = avg_weight(cfg, t)
        if cfg["avg"] != "uniform":
            cum = L.cumulative
            if w_prev is not None and w_prev != w:
                if w > 0 and w_prev > 0:
                    cum *= w_prev / w
            w_prev = w if w > 0 else None
            if w == 0:
                cum[:] = 0.0         # before the delay: nothing is kept (the sums are reset every iteration)
        L.rate_divisor = schedule_factor(cfg["eta_decay"], t)
        if cfg["alpha_decay"] or cfg["kappa_decay"]:
            L.schedule = replace(base, proximal_alpha=base.proximal_alpha / schedule_factor(cfg["alpha_decay"], t),
                                 proximal_kappa=base.proximal_kappa / schedule_factor(cfg["kappa_decay"], t))
        beta = cfg.get("optimism") or 0.0
        if beta:                      # evaluate the iteration at theta + beta (theta - theta_prev), keep its increment
            base_logits = L.logits.clone()
            if prev_logits is not None:
                L.logits.copy_(base_logits + beta * (base_logits - prev_logits))
            start_point = L.logits.clone()
            L.step()
            L.logits.copy_(base_logits + (L.logits - start_point))
            prev_logits = base_logits
        else:
            L.step()
        t += 1
        calls = L.ledger.counts["physical_calls"].numpy()
        due = [r for r in range(len(seeds)) if nxt[r] < len(marks) and calls[r] >= marks[nxt[r]]]
        if due:
            avg, last = L.average_tables(), L.last_tables()
            for r in due:
                curves[r].append((int(calls[r]), exploitability(cfg.get("game", "leduc"), avg[r])))
                lasts[r].append((int(calls[r]), exploitability(cfg.get("game", "leduc"), last[r])))
                while nxt[r] < len(marks) and calls[r] >= marks[nxt[r]]:
                    nxt[r] += 1
    wall = time.time() - start
    out = {"wall_s": wall, "iterations": t, "per_seed": {}}
    out["thresholds"] = ths = KUHN_THRESHOLDS if cfg.get("game") == "kuhn" else THRESHOLDS
    for th in ths:
        c = [calls_to(curves[r], th) for r in range(len(seeds))]
        got = [x for x in c if x is not None]
        out[str(th)] = {"geomean": float(np.exp(np.mean(np.log(got)))) if got else None, "reached": len(got),
                        "per_seed": c}
        cl = [calls_to(lasts[r], th) for r in range(len(seeds))]
        gl = [x for x in cl if x is not None]
        out[f"last_{th}"] = {"geomean": float(np.exp(np.mean(np.log(gl)))) if gl else None, "reached": len(gl)}
    for at in (1e5, 2e5, 6e5):
        vals = []
        for r in range(len(seeds)):
            pts = [(b, e) for b, e in curves[r] if b <= at * 1.02]
            if pts:
                vals.append(pts[-1][1])
        out[f"avg_at_{int(at)}"] = float(np.mean(vals)) if vals else None
        vl = [[e for b, e in lasts[r] if b <= at * 1.02][-1] for r in range(len(seeds)) if lasts[r]]
        out[f"last_at_{int(at)}"] = float(np.mean(vl)) if vl else None
    out["curves"] = {str(s): curves[r] for r, s in enumerate(seeds)}
    return out


def fmt(x):
    return "-" if x is None else f"{x:,.0f}"


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("config", help="JSON overrides of DEFAULTS")
    ap.add_argument("--seeds", default="1001,1002,1003,1004,1005,1006,1007,1008")
    ap.add_argument("--max-calls", type=float, default=1e6)
    ap.add_argument("--per-decade", type=int, default=24)
    ap.add_argument("--out", default="/tmp/research/results.jsonl")
    a = ap.parse_args(argv)
    cfg = {**DEFAULTS, **json.loads(a.config)}
    seeds = [int(s) for s in a.seeds.split(",")]
    res = run(cfg, seeds, a.max_calls, a.per_decade)
    t1, t2 = (str(t) for t in res["thresholds"])
    line = (f"{a.name:40s} to{t1} {fmt(res[t1]['geomean']):>10s} ({res[t1]['reached']}/{len(seeds)})  "
            f"to{t2} {fmt(res[t2]['geomean']):>10s} ({res[t2]['reached']}/{len(seeds)})  "
            f"avg@1e5 {res['avg_at_100000']:.3f} @2e5 {res['avg_at_200000']:.3f} @6e5 "
            f"{(res['avg_at_600000'] or float('nan')):.3f}  last@2e5 {res['last_at_200000']:.3f}  "
            f"wall {res['wall_s']:.1f}s")
    print(line, flush=True)
    import os
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "a") as f:
        f.write(json.dumps({"name": a.name, "config": cfg, "seeds": seeds, "max_calls": a.max_calls,
                            "per_decade": a.per_decade, **res}) + "\n")


if __name__ == "__main__":
    sys.exit(main())
