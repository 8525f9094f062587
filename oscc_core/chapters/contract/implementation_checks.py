"""The replay checks of tab:app-implementation-checks, per seed and pooled over seeds.

Per arm and seed: groups, unique group keys, transitions (policy decisions)
and those whose observation hash drifts, stream events and counter gaps,
branch-swap sign reversals, and the marginal return shift (chips) of the
branch-averaged return against its exact value.
"""
from __future__ import annotations

import torch

from oscc_core.chapters.contract.run_audit import audit_run
from oscc_core.chapters.contract.swaps import branch_swap
from oscc_core.exact.arm_moments import arm_moments

#: pooled column <- per-seed column
POOLED_FROM = {"groups": "groups", "unique": "unique_group_key", "transitions": "transitions",
               "obs_drift": "obs_drift", "events": "events", "gaps": "gaps", "swap_reversed": "swap_reversed"}


def seed_row(game, root: str, arm: str, n_groups: int, seed: int, device: str = "cpu") -> tuple[dict, torch.Tensor]:
    """One seed's row of the checks and its branch returns [groups, branches] (float64 chips)."""
    run = audit_run(game, root, arm, n_groups, seed, device=device)
    sw = branch_swap(game, root, arm, n_groups, seed, device=device)
    row = {"seed": seed, "groups": n_groups, "valid": run.valid, "unique_group_key": run.counts["unique_group_keys"],
           "transitions": run.counts["transitions"], "obs_drift": run.counts["obs_drift_transitions"],
           "events": run.counts["events"], "gaps": run.counts["gap_events"], "swap_reversed": sw["reversed"],
           "failures": run.failures}
    return row, run.collection.returns.to(torch.float64)


def marginal_shift(game, root: str, returns: torch.Tensor) -> dict:
    """Mean branch-averaged return minus its exact value, its standard error, and the shift per branch."""
    exact = arm_moments(game, root)["independent"]
    branch_avg = returns.mean(1)
    per_branch = returns.mean(0).numpy() - exact.mean
    return {"marginal_shift": float(branch_avg.mean() - exact.mean.mean()),
            "marginal_shift_se": float(branch_avg.std() / len(branch_avg) ** 0.5),
            "marginal_shift_by_branch": dict(zip(exact.actions, per_branch.tolist()))}


def implementation_checks(game, root: str, arm: str, seeds, n_groups: int, device: str = "cpu") -> dict:
    """The rows of tab:app-implementation-checks for one arm, per seed and pooled."""
    per_seed, returns = zip(*(seed_row(game, root, arm, n_groups, seed, device) for seed in seeds))
    pooled = {key: sum(row[src] for row in per_seed) for key, src in POOLED_FROM.items()}
    pooled.update(marginal_shift(game, root, torch.cat(returns)))
    return {"arm": arm, "per_seed": list(per_seed), "pooled": pooled}


def states_visited(game, root: str, arm: str, seeds, n_groups: int, device: str = "cpu") -> list[int]:
    """Information states reached by a decision in each seed's run."""
    return [audit_run(game, root, arm, n_groups, s, device=device).counts["states_visited"] for s in seeds]
