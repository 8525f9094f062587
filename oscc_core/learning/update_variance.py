"""Update variance: the trace of the covariance of one iteration's logit displacement (DESIGN section 8).

From a fixed state (a run's logits and, for ppo, its values), K replicate
iterations are taken on independent decision points: replicate k uses the
`validation` split and groups k * N ... k * N + N - 1, so replicates share
no draw with each other or with training.  With D_k the flattened logit
displacement theta_k - theta (unitless logits), the update variance is
    sum over coordinates of the unbiased sample variance of D_k over k
= trace of Cov(D).  All replicates of all runs advance in one batched step.

`arms` (optional, one `learning.arms.LearnerArm` per run) replaces the
sampling construction of the runs' arms, e.g. the root-only and
continuation-only couplings of `learning.coupling_arms`, which no learner
arm of its own has; those batches step on the torch path, the one that reads
each run's construction at every step.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch

from oscc_core.engine import rng
from oscc_core.learning.loop import Learners, RunSpec, Schedule

VALIDATION = rng.SPLITS["validation"]


def update_variances(game, runs: list[RunSpec], logits: torch.Tensor, values: torch.Tensor,
                     schedule: Schedule, replicates: int, device="cpu", arms: list | None = None) -> np.ndarray:
    """[R] update variance (logits^2) of each run from its state logits [R, n_info, A], values [R, n_info];
    `arms`: each run's sampling construction in place of its arm's (see the module docstring)."""
    r, k = len(runs), int(replicates)
    if arms is not None and len(arms) != r:
        raise ValueError(f"arms needs one construction per run ({r}), got {len(arms)}.")
    start = logits.repeat_interleave(k, dim=0).clone()
    batch = Learners(game, [run for run in runs for _ in range(k)], replace(schedule, budget=None, iterations=1),
                     device=device, logits=start.clone(), values=values.repeat_interleave(k, dim=0).clone(),
                     **({} if arms is None else {"engine": "torch"}))
    if arms is not None:
        batch.arms = [arm for arm in arms for _ in range(k)]
    base = torch.arange(k, device=start.device).repeat(r) * schedule.decision_points
    batch.step(group_base=base, split=VALIDATION)
    d = (batch.logits - start).reshape(r, k, -1).cpu().numpy()
    centred = d - d.mean(axis=1, keepdims=True)
    per_coordinate = (centred * centred).sum(axis=1) / (k - 1)
    return np.array([float(np.add.accumulate(row)[-1]) for row in per_coordinate])


def update_variances_by_eta(game, runs: list[RunSpec], logits: torch.Tensor, values: torch.Tensor, schedule_at,
                            grid, replicates: int, device="cpu") -> dict[float, dict]:
    """{eta: {arm: {seed: {"update_variance": v}}}} for every eta of `grid`: each run's update variance (logits^2)
    from its state (logits [R, n_info, A], values [R, n_info]), one iteration at that eta under the schedule
    `schedule_at(eta)`, `replicates` replicates on the same decision points as at the run's own eta.  The state
    stays the one each run trained to; only the step of the measuring iteration changes.  Seeds are keys as text."""
    out: dict[float, dict] = {}
    for eta in grid:
        at_eta = [replace(run, learning_rate=float(eta)) for run in runs]
        v = update_variances(game, at_eta, logits, values, schedule_at(float(eta)), replicates, device)
        at = out.setdefault(float(eta), {})
        for run, x in zip(at_eta, v):
            at.setdefault(run.arm, {})[str(run.seed)] = {"update_variance": float(x)}
    return out
