"""Small runs of every torch path that takes a device, each returning what it computed (on the host).

Shared by `test_device_discipline.py` (each case on the CPU while torch's default device is "meta") and
`test_cuda.py` (each case on CUDA and on the CPU, compared bit for bit).  A case takes the device and
returns a flat dict name -> tensor, array or plain value; `same(a, b)` says whether two results are
bitwise equal.
"""
from __future__ import annotations

import numpy as np
import torch

from oscc_core.engine.arms import ARMS
from oscc_core.engine.collector import collect
from oscc_core.engine.rollout import ActionEvent
from oscc_core.engine.violations import CONTROLS, EXAMPLES
from oscc_core.games import get_game
from oscc_core.learning.lagged import LaggedLearners
from oscc_core.learning.ledger import FIELDS
from oscc_core.learning.loop import Learners, RunSpec, Schedule
from oscc_core.learning.study_design import CONVERGING, LITERAL, learner_schedule
from oscc_core.policy import table_to_policy

LEARNER_ARMS = ("cp_grpo", "independent", "grpo", "ppo", "uniform")
SMALL = Schedule(iterations=2, decision_points=12, epochs=2, learning_rate=4.0, group_size=3)
SEEDS = (3, 8)


def _host(x):
    return x.detach().cpu() if isinstance(x, torch.Tensor) else x


def _collection(col, prefix: str = "") -> dict:
    out = {f"{prefix}{k}": _host(getattr(col, k)) for k in ("returns", "codes", "own_card", "public_card",
                                                            "legal_mask", "group_draws")}
    out.update({f"{prefix}stats": col.stats, f"{prefix}logical": col.logical_keys,
                f"{prefix}physical": col.physical_draws, f"{prefix}failures": col.failures})
    return out


def _trace(trace: list, prefix: str) -> dict:
    out = {}
    for c, chunk in enumerate(trace):
        for k, v in chunk.items():
            if isinstance(v, torch.Tensor):
                out[f"{prefix}{c}/{k}"] = _host(v)
        for e, ev in enumerate(chunk["events"]):
            kind = "action" if isinstance(ev, ActionEvent) else "chance"
            for f, v in ev._asdict().items():
                out[f"{prefix}{c}/{e}/{kind}/{f}"] = _host(v)
    return out


# ----- the collector ------------------------------------------------------------------------------------------
def collector(device) -> dict:
    """Every arm of both games with its trace; a tabular continuation, budget 2, a branch order, both maps."""
    out = {}
    rng = np.random.default_rng(0)
    for game in ("leduc", "kuhn"):
        for arm in ARMS:
            trace: list = []
            col = collect(game, "", arm, 40, seed=5, device=device, engine="torch", trace=trace, keep_draws=True)
            out.update(_collection(col, f"{game}/{arm}/"))
            out.update(_trace(trace, f"{game}/{arm}/trace/"))
        g = get_game(game)
        table = rng.random((len(g.infostates), g.num_actions)) * g.infostates.legal
        policy = table_to_policy(game, table / table.sum(axis=1, keepdims=True))
        col = collect(game, "", "full", 40, seed=6, device=device, engine="torch", continuation=policy, budget=2,
                      branch_order=[1, 0], chunk_size=16, keep_draws=True)
        out.update(_collection(col, f"{game}/tabular/"))
    for cmap in ("relabelled", "antithetic"):
        col = collect("leduc", "2", "full", 40, seed=7, device=device, continuation_map=cmap, keep_draws=True)
        out.update(_collection(col, f"map/{cmap}/"))
    return out


def violations(device) -> dict:
    """Every controlled violation and failure example through the run audit (chapter 01's core computation)."""
    from oscc_core.chapters.contract.run_audit import audit_run
    out = {}
    for name, v in {**CONTROLS, **EXAMPLES}.items():
        run = audit_run("leduc", "", "full", 24, 2, v, device=device)
        out.update({f"{name}/codes": run.codes, f"{name}/sealed": run.sealed_digest, f"{name}/counts": run.counts,
                    **_collection(run.collection, f"{name}/")})
    return out


# ----- the learners --------------------------------------------------------------------------------------------
def _learner_state(learners: Learners, prefix: str) -> dict:
    out = {f"{prefix}{k}": _host(getattr(learners, k)) for k in ("logits", "values", "magnet", "draws", "spent")}
    out[f"{prefix}cumulative"] = learners.cumulative.copy()
    out.update({f"{prefix}ledger/{f}": _host(learners.ledger.counts[f]) for f in FIELDS})
    return out


def learners(device) -> dict:
    """Every arm of both learners (literal; converging: counterfactual law, proximal pull), with and without a
    budget, two iterations on the torch path."""
    out = {}
    runs = [RunSpec(a, s) for a in LEARNER_ARMS for s in SEEDS]
    for learner in (LITERAL, CONVERGING):
        for budget in (None, 150):
            base = Schedule(**{**SMALL.as_dict(), "budget": budget})
            sched = learner_schedule(learner, base, eta=4.0, alpha=0.5, kappa=0.1)
            ls = Learners("leduc", runs, sched, device=device, engine="torch")
            for _ in range(2):
                ls.step()
            out.update(_learner_state(ls, f"{learner}/{budget}/"))
            out[f"{learner}/{budget}/average"] = ls.average_tables()
            out[f"{learner}/{budget}/coverage"] = ls.coverage()
    lagged = LaggedLearners("kuhn", [RunSpec("cp_grpo", 1), RunSpec("independent", 1)], SMALL, lag=1, device=device)
    for _ in range(3):
        lagged.step()
    out.update(_learner_state(lagged, "lagged/"))
    return out


def learners_fused(device) -> dict:
    """Every arm of both learners on the device's fused engine ("auto": the CPU kernels on the CPU, the GPU kernels
    on CUDA), with and without a budget, a snapshot restored on the way."""
    out = {}
    runs = [RunSpec(a, s) for a in LEARNER_ARMS for s in SEEDS]
    for learner in (LITERAL, CONVERGING):
        for budget in (None, 150):
            base = Schedule(**{**SMALL.as_dict(), "budget": budget, "iterations": 4})
            ls = Learners("leduc", runs, learner_schedule(learner, base, eta=4.0, alpha=0.5, kappa=0.1), device=device)
            ls.step()
            snapshot = ls.snapshot()
            ls.step()
            ls.restore(snapshot)
            for _ in range(2):
                ls.step()
            out.update(_learner_state(ls, f"{learner}/{budget}/"))
            out[f"{learner}/{budget}/average"] = ls.average_tables()
    return out


def study_tasks(device) -> dict:
    """Two study tasks trained together on the device (`learning.study.run_tasks_together`): budgets that cut
    runs inside an iteration, quiet iterations back to back and snapshots before the others, runs put back one by
    one, checkpoints kept."""
    from oscc_core.learning.study import Task, run_tasks_together
    tasks = [Task.make("kuhn", "converging", arm, (1, 2), SMALL, (60, 150), keep_table=True)
             for arm in ("cp_grpo", "ppo")]
    return {str(i): result for i, result in enumerate(run_tasks_together(tasks, device))}


# ----- one small call of each chapter's core computation that takes a device ----------------------------------
def chapter_covariance(device) -> dict:
    from oscc_core.chapters.covariance.paired_audit import paired_audit
    from oscc_core.engine.arms import PAPER_ARMS
    from oscc_core.learning.update_variance import update_variances
    audit = paired_audit("", PAPER_ARMS, 60, 4, "uniform", device, 16, "device-check")
    n_info = len(get_game("leduc").infostates)
    logits = torch.zeros((2, n_info, 3), dtype=torch.float64, device=device)
    values = torch.zeros((2, n_info), dtype=torch.float64, device=device)
    v = update_variances("leduc", [RunSpec("cp_grpo", 1), RunSpec("cp_grpo", 2)], logits, values,
                         Schedule(iterations=1, decision_points=8, epochs=1), 3, device)
    return {"means": audit.mean, "cov": audit.cov, "update_variance": np.asarray(v)}


def chapter_gradient_noise(device) -> dict:
    from oscc_core.chapters.gradient_noise.frontier import group_costs
    from oscc_core.chapters.gradient_noise.geometry import geometry
    from oscc_core.chapters.gradient_noise.screen import scalar_screen
    draws, transitions, _ = group_costs("", "full", 30, 3, "uniform", device)
    geom = geometry("", "uniform", "uniform", 1, 1e-3)
    screen = scalar_screen(geom, "full", 3, 2, 16, 2, 1.0, 0.2, device)
    return {"draws": draws, "transitions": transitions, "screen": repr(screen)}


def chapter_selector(device) -> dict:
    from oscc_core.chapters.selector.pools import collect_pool
    pool = collect_pool("", 40, 5, "uniform", device, continuation_map="relabelled")
    return {f"returns/{a}": r for a, r in pool.returns.items()} | {"draws": pool.draws}


def chapter_solver(device) -> dict:
    from oscc_core.chapters.solver.frozen_screen import sample_contrasts
    from oscc_core.learning.runs import train
    from oscc_core.learning.summary import contrast_variances
    batch = train("kuhn", [RunSpec("cp_grpo", 1), RunSpec("ppo", 1)], SMALL, device, curve_at=(1,))
    contrasts, rollouts = sample_contrasts(2, 6, device)
    cv = contrast_variances("kuhn", "", batch.runs, batch.average, 30, device)
    return {"average": batch.average, "last": batch.last, "curve": batch.curve_average, "contrasts": contrasts,
            "rollouts": rollouts, "contrast_variances": cv}


def chapter_transfer(device) -> dict:
    from oscc_core.chapters.transfer.selector_transfer import _pool
    returns, own, pub, valid, _, n = _pool("", 8, 3, "uniform", device, "validation")
    return {"returns": returns, "own": own, "public": pub, "valid": valid, "n": n}


CASES = {"collector": collector, "01_contract": violations, "learners": learners, "learners_fused": learners_fused,
         "study_tasks": study_tasks,
         "02_covariance": chapter_covariance, "03_gradient_noise": chapter_gradient_noise,
         "04_selector": chapter_selector, "05_solver": chapter_solver, "06_transfer": chapter_transfer}


def same(a, b) -> bool:
    """Bitwise equality of two results (tensors, arrays, dicts, lists, dataclass reprs, plain values)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, torch.Tensor):
        a, b = a.numpy(), _host(b).numpy()
    if isinstance(a, np.ndarray):
        b = np.asarray(b)
        return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()
    if isinstance(a, float):
        return np.float64(a).tobytes() == np.float64(b).tobytes()
    return a == b


def differences(a: dict, b: dict) -> list[str]:
    """The keys of two case results whose values differ (or that only one has)."""
    return sorted(k for k in a.keys() | b.keys() if k not in a or k not in b or not same(a[k], b[k]))
