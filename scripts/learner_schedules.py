"""Research harness of issue 38: why the converging learner's curves rise, one hypothesis per run, development seeds only.

One configuration is the converging learner (`loop.Learners`, fused CPU kernels) with the options under study,
run on development seeds (never a reporting seed) without a budget up to --max-calls physical calls; after every
iteration that passes the next point of a log-spaced grid (--per-decade a decade from `lo`, default 10,000 calls)
the exact exploitability of each run's average policy and last iterate is taken.  Schedules are set from the
host between iterations, so they run on the fused engine unchanged:

    eta_s    [p, t0]: eta_t = eta ((t + t0) / t0)^-p            (Learners.rate_divisor)
    alpha_s  [p, t0]: alpha_t = alpha ((t + t0) / t0)^-p        (null: a constant pull)
    kappa_s  [p, t0]: kappa_t = kappa ((t + t0) / t0)^-p
    avg_p, avg_eta_q: the average policy weighs iteration t by (t + 1)^avg_p (eta_t / eta)^avg_eta_q (its sums
                      rescaled by w_{t-1} / w_t before each increment), from iteration avg_start on

    .venv/bin/python scripts/learner_schedules.py NAME '{"alpha_s": null, "alpha": 0.25, "avg_p": 1}' \
        --seeds 1001,1002,1003,1004 --max-calls 1e7 --out /tmp/research.jsonl

prints one line: calls to 0.2 and 0.1184 chips (geometric mean of the seeds that reach them), the curve's lowest
seed mean and the last budget's (with the rise after the lowest), then the seed means of the average policy and
of the last iterate near 6.3e3, 1.4e4, 2.8e4, 6.3e4, 1.4e5, 3e5, 1e6, 3e6 and 1e7 calls; every per-seed curve
goes to --out (JSON lines).  benchmarks/learner_ideas.md, part 2, lists every run behind issue 38's choice.
"""
import argparse, json, math, sys, time
from dataclasses import replace
import numpy as np, torch
from oscc_core.learning.loop import Learners, RunSpec, Schedule
from oscc_core.learning.study import exploitability
from oscc_core.learning import calls_rules

D = dict(game="leduc", arm="cp_grpo", N=128, E=4, eps=0.2, eta=32.0, alpha=1.0, kappa=0.003, law="counterfactual",
         baseline="history", floor=0.5, eta_s=None, alpha_s=[0.5, 30], kappa_s=None, avg_p=2.0, avg_eta_q=0.0,
         avg_start=0)

def fac(spec, t):
    if not spec: return 1.0
    p, t0 = spec
    return ((t + t0) / t0) ** (-p)

def marks(lo, hi, per):
    n = int(round(math.log10(hi / lo) * per))
    return np.unique(np.round(np.logspace(math.log10(lo), math.log10(hi), n + 1)).astype(np.int64))

def run(cfg, seeds, max_calls, per, lo=1e4):
    lo = float(cfg.get("lo", lo))
    torch.set_num_threads(1)
    s = Schedule(iterations=2**40, decision_points=cfg["N"], epochs=cfg["E"], epsilon=cfg["eps"],
                 learning_rate=float(cfg["eta"]), decision_law=cfg["law"], proximal_alpha=float(cfg["alpha"]),
                 proximal_kappa=float(cfg["kappa"]), baseline=cfg["baseline"], baseline_floor=cfg["floor"])
    L = Learners(cfg["game"], [RunSpec(cfg["arm"], int(x)) for x in seeds], s, engine="fused")
    M = marks(lo, max_calls, per)
    nxt = np.zeros(len(seeds), dtype=np.int64)
    avg = [[] for _ in seeds]; last = [[] for _ in seeds]
    t, wprev = 0, None
    t0 = time.time()
    while not (nxt >= len(M)).all():
        ef = fac(cfg["eta_s"], t)
        w = 0.0 if t < cfg["avg_start"] else (t + 1.0) ** cfg["avg_p"] * ef ** cfg["avg_eta_q"]
        cum = L.cumulative
        if w == 0: cum[:] = 0.0; wprev = None
        else:
            if wprev is not None: cum *= wprev / w
            wprev = w
        L.rate_divisor = 1.0 / ef
        L.schedule = replace(s, proximal_alpha=float(cfg["alpha"]) * fac(cfg["alpha_s"], t),
                             proximal_kappa=min(1.0, float(cfg["kappa"]) * fac(cfg["kappa_s"], t)))
        L.step(); t += 1
        calls = L.ledger.counts["physical_calls"].numpy()
        due = [r for r in range(len(seeds)) if nxt[r] < len(M) and calls[r] >= M[nxt[r]]]
        if due:
            A, B = L.average_tables(), L.last_tables()
            for r in due:
                avg[r].append((int(calls[r]), exploitability(cfg["game"], A[r])))
                last[r].append((int(calls[r]), exploitability(cfg["game"], B[r])))
                while nxt[r] < len(M) and calls[r] >= M[nxt[r]]: nxt[r] += 1
    return {"wall": time.time() - t0, "iters": t, "avg": avg, "last": last}

def summarize(name, res, ths):
    avg, last = res["avg"], res["last"]
    n = min(len(a) for a in avg)
    calls = np.array([[a[i][0] for a in avg] for i in range(n)]).mean(1)
    ma = np.array([[a[i][1] for a in avg] for i in range(n)]).mean(1)
    ml = np.array([[a[i][1] for a in last] for i in range(n)]).mean(1)
    out = f"{name:28s}"
    for th in ths:
        c = [calls_rules.crossing_of_points(a, th) for a in avg]
        got = [x[0] for x in c if x is not None]
        out += f" to{th}:{(np.exp(np.mean(np.log(got))) if got else float('nan')):9,.0f}({len(got)})"
    i = int(np.argmin(ma))
    out += f" min {ma[i]:.4f}@{calls[i]:.2g} end {ma[-1]:.4f} ({ma[-1]/ma[i]-1:+.0%})"
    want = [x for x in (6.3e3, 1.4e4, 2.8e4, 6.3e4, 1.4e5, 3e5, 1e6, 3e6, 1e7) if calls[0] * 0.97 <= x <= calls[-1] * 1.03]
    pick = sorted({int(np.argmin(np.abs(np.log(calls / x)))) for x in want})
    out += " | avg " + " ".join(f"{ma[j]:.3f}" for j in pick) + " | last " + " ".join(f"{ml[j]:.3f}" for j in pick)
    out += f" | {res['wall']:.0f}s"
    return out

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("name"); ap.add_argument("config")
    ap.add_argument("--seeds", default="1001,1002,1003,1004")
    ap.add_argument("--max-calls", type=float, default=1e7)
    ap.add_argument("--per-decade", type=int, default=8)
    ap.add_argument("--out", default="/tmp/learner_schedules.jsonl")
    a = ap.parse_args()
    cfg = {**D, **json.loads(a.config)}
    seeds = [int(x) for x in a.seeds.split(",")]
    res = run(cfg, seeds, a.max_calls, a.per_decade)
    ths = (0.2, 0.1184) if cfg["game"] == "leduc" else (0.0211, 0.0109)
    line = summarize(a.name, res, ths)
    print(line, flush=True)
    with open(a.out, "a") as f:
        f.write(json.dumps({"name": a.name, "cfg": cfg, "seeds": seeds, "line": line, **res}) + "\n")
