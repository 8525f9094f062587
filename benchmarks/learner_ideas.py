"""The table of learner ideas tried for issue 33, measured on development seeds (benchmarks/learner_ideas.md).

Each idea is a configuration of `scripts/learner_research.py` (the converging CP-GRPO with one change, or the
changes kept so far): trained on development seeds 1001-1008 (never the reporting seeds), recorded at 24
log-spaced budgets per decade of physical calls, scored by the exact exploitability of the average policy.
Calls to a threshold: per seed, the first crossing, interpolated linearly in log calls and log exploitability
between the two evaluations around it; over seeds, the geometric mean of the seeds that reach it within the
idea's largest budget, and how many do.  Wall time: the whole idea (every seed in one batch, evaluations
included) on one core of this shared machine.

Ideas on the fused kernels run by default (a few minutes); `--prototypes` adds the torch-path prototypes of
`scripts/research_variants.py` (the hidden-card baseline and the exact-value oracles; tens of minutes).

    .venv/bin/python benchmarks/learner_ideas.py [--prototypes] [--only NAME,...] [--seeds 1001,...]

prints one markdown row per idea (and appends the full records to --out, JSON lines).
"""
from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from learner_research import DEFAULTS, THRESHOLDS, run  # noqa: E402

DEV = "1001,1002,1003,1004,1005,1006,1007,1008"
STUDY = {}                                    # the study's converging CP-GRPO: DEFAULTS (eta 128, alpha 0.5, kappa 0.1)
HIST = {"baseline": "history", "baseline_floor": 0.2}
FINAL = {"eta": 64, "alpha": 0.5, "kappa": 0.003,
         "schedule_extra": {"baseline": "history", "baseline_floor": 0.5, "alpha_decay": "inverse_sqrt",
                            "alpha_horizon": 30.0, "average_power": 2}}


def extra(**options):
    return {"schedule_extra": options}


#: (name, what changes, configuration overrides, largest budget, torch-path prototype)
IDEAS = [
    ("study", "the study's converging CP-GRPO (eta 128, alpha 0.5, kappa 0.1, N 128, E 4, clip 0.2)", STUDY, 3e6,
     False),
    # averaging
    ("avg-linear", "average weighted by t (CFR+'s linear averaging)", extra(average_power=1), 3e6, False),
    ("avg-t2", "average weighted by t^2 (DCFR's gamma = 2)", extra(average_power=2), 3e6, False),
    # schedules
    ("alpha-decay", "pull alpha_t = alpha / sqrt((t + 30) / 30), alpha 1 (annealed magnet strength, as MMD)",
     {"alpha": 1, **extra(alpha_decay="inverse_sqrt", alpha_horizon=30.0)}, 3e6, False),
    ("eta-decay", "step size eta_t = eta / sqrt((t + 300) / 300)", {"eta_decay": [0.5, 300]}, 3e6, False),
    ("kappa-decay", "magnet rate kappa_t = kappa / sqrt((t + 1000) / 1000)", {"kappa_decay": [0.5, 1000]}, 3e6,
     False),
    ("N64", "N = 64 decision points per iteration, eta 64 (the same step per draw)", {"N": 64, "eta": 64}, 3e6,
     False),
    ("N256", "N = 256, eta 256", {"N": 256, "eta": 256}, 3e6, False),
    ("E8", "E = 8 epochs", {"E": 8}, 3e6, False),
    ("clip0.1", "clip epsilon 0.1", {"eps": 0.1}, 3e6, False),
    ("law-uniform", "decision points uniform over information states", {"law": "uniform"}, 3e6, False),
    ("optimism", "optimistic step: each iteration computed at theta + (theta - theta_prev), its increment kept",
     {"optimism": 1.0}, 3e6, False),
    # baselines
    ("hidden-cv", "hidden-card control variate only: b(I, c, a) learned, R - b(c) + sum_c p(c|I) b(c) "
     "(prototype)", {"variant": {"baseline": "hidden", "baseline_rate": 0.1}}, 1e6, True),
    ("policy-bl", "history baseline on the action steps only (baseline 'policy', floor 0.2)",
     extra(baseline="policy", baseline_floor=0.2), 2e6, False),
    ("history-bl", "history baseline on every sampled step (baseline 'history', floor 0.2)", extra(**HIST), 2e6,
     False),
    ("history-bl-k0.01", "history baseline, eta 64, kappa 0.01", {"eta": 64, "kappa": 0.01, **extra(**HIST)}, 1e6,
     False),
    ("history-bl-k0.01-avg", "... and the average weighted by t", {"eta": 64, "kappa": 0.01,
                                                                   **extra(average_power=1, **HIST)}, 1e6, False),
    ("history-bl-k0.01-avg-ad", "... and alpha decay (alpha 1, t0 30)",
     {"eta": 64, "kappa": 0.01, "alpha": 1, **extra(average_power=1, alpha_decay="inverse_sqrt",
                                                    alpha_horizon=30.0, **HIST)}, 1e6, False),
    ("final", "history baseline (floor 0.5), eta 64, alpha 0.5 decaying (t0 30), kappa 0.003, average by t^2",
     FINAL, 1e6, False),
    ("final-independent", "the final learner on the independent arm", {**FINAL, "arm": "independent"}, 1e6, False),
    ("final-study-independent", "the study's learner on the independent arm", {"arm": "independent"}, 3e6, False),
    ("final-optimism", "final + optimistic step", {**FINAL, "optimism": 1.0}, 1e6, False),
    ("final-law-uniform", "final with decision points uniform over states", {**FINAL, "law": "uniform"}, 1e6,
     False),
    ("final-N64", "final with N 64 (eta 64)", {**FINAL, "N": 64}, 1e6, False),
    ("final-N256", "final with N 256 (eta 64)", {**FINAL, "N": 256}, 1e6, False),
    ("oracle-history", "oracle: every branch return replaced by its exact value given the deal (hidden card still "
     "sampled; prototype, 4 seeds)", {"variant": {"oracle": "history"}}, 3e5, True),
    ("oracle-state", "oracle: every branch return replaced by Q(I, a) (no sampling noise at all; prototype, 4 seeds)",
     {"variant": {"oracle": "state"}}, 3e5, True),
]


def fmt(x):
    return "-" if x is None else f"{x:,.0f}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prototypes", action="store_true", help="also the torch-path prototypes (slow)")
    ap.add_argument("--only", default=None, help="comma-separated idea names")
    ap.add_argument("--seeds", default=DEV)
    ap.add_argument("--out", default="/tmp/research/ideas.jsonl")
    a = ap.parse_args(argv)
    only = set(a.only.split(",")) if a.only else None
    first, second = (str(t) for t in THRESHOLDS)   # a round threshold, then the paper's (claims file)
    print(f"| idea | what changes | calls to {first} (seeds) | calls to {second} (seeds) | avg at 2e5 | "
          "last at 2e5 | largest budget | wall s |")
    print("|---|---|---|---|---|---|---|---|")
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    for name, what, overrides, top, prototype in IDEAS:
        if (only and name not in only) or (prototype and not a.prototypes and not only):
            continue
        seeds = [int(s) for s in a.seeds.split(",")]
        if name.startswith("oracle"):
            seeds = seeds[:4]
        cfg = {**DEFAULTS, **overrides}
        res = run(cfg, seeds, top, 24)
        n = len(seeds)
        print(f"| {name} | {what} | {fmt(res[first]['geomean'])} ({res[first]['reached']}/{n}) | "
              f"{fmt(res[second]['geomean'])} ({res[second]['reached']}/{n}) | {res['avg_at_200000']:.3f} | "
              f"{res['last_at_200000']:.3f} | {top:.0e} | {res['wall_s']:.0f} |", flush=True)
        with open(a.out, "a") as f:
            f.write(json.dumps({"name": name, "what": what, "config": cfg, "seeds": seeds, "max_calls": top,
                                **res}) + "\n")


if __name__ == "__main__":
    sys.exit(main())
