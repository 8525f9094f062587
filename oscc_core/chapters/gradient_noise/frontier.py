"""The matched physical-cost frontier: every arm (and OSCC-Select) at an equal budget of physical draws.

Physical draws are the uniforms a collection consumes (root, hidden, chance,
policy).  Per-group draws and transitions come from the collector's trace: a
transition is one state change of one branch (its forced root action, each
policy decision, each chance deal it receives).  Each arm gets the largest
prefix of groups whose draws fit the budget; at that prefix we report draws,
transitions, the pooled contrast variance (chips^2), the noise trace N
(chips^2 per logit^2) and the batch-mean noise N / groups.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from oscc_core.chapters.gradient_noise.arms import SELECT
from oscc_core.chapters.gradient_noise.bootstrap import Resampled, estimate
from oscc_core.chapters.gradient_noise.geometry import Geometry, lag_direction, state_weights
from oscc_core.chapters.gradient_noise.transfer import NoiseAudit, arm_data, composite
from oscc_core.chapters.gradient_noise.updates import UpdateSetting, realised_updates
from oscc_core.engine.arms import PAPER_ARMS
from oscc_core.engine.collector import collect
from oscc_core.engine.rollout import ActionEvent
from oscc_core.engine.roots import build_root
from oscc_core.games import LEDUC, get_game
from oscc_core.method.stats import Estimate
from oscc_core.policy import resolve_policy


def group_costs(root: str, arm: str, n_groups: int, seed: int, continuation, device,
                game: str = LEDUC) -> tuple[np.ndarray, np.ndarray, object]:
    """Per-group physical draws and transitions [n] from the collector's trace (and the collection).

    Draws: root (1, or 2 when the public card belongs to the root), hidden
    (1 shared or one per branch), chance (per branch, or once per semantic
    event when shared) and policy (one per decision).  Transitions: per
    branch, its forced root action, every decision and every chance deal.
    The totals are checked against the collection's own ledger.
    """
    trace: list = []
    col = collect(game, root, arm, n_groups, seed, continuation=continuation, device=device, trace=trace)
    g = get_game(game)
    root_obj = build_root(g, root, resolve_policy(g, continuation))
    share_hidden = arm in ("root_only", "full")
    share_chance = arm in ("continuation_only", "full")
    draws = np.zeros(n_groups, dtype=np.int64)
    trans = np.zeros(n_groups, dtype=np.int64)
    for chunk in trace:
        groups = chunk["groups"].cpu().numpy()
        gn, b, k = chunk["shape"]
        base = np.full(gn, (2 if root_obj.public_in_root else 1) + (1 if share_hidden else b), dtype=np.int64)
        tr = np.full(gn, b * k, dtype=np.int64)
        chance_lanes = []
        for ev in chunk["events"]:
            lanes = ev.lanes.cpu().numpy()
            grp = lanes // (b * k)
            tr += np.bincount(grp, minlength=gn)
            if isinstance(ev, ActionEvent):
                base += np.bincount(grp, minlength=gn)
            else:
                chance_lanes.append(lanes)
        if chance_lanes:
            lanes = np.concatenate(chance_lanes)
            grp = lanes // (b * k)
            if share_chance:     # one draw per (group, rollout) whichever branches reach the event
                keys = np.unique(grp * k + lanes % k)
                base += np.bincount(keys // k, minlength=gn)
            else:
                base += np.bincount(grp, minlength=gn)
        draws[groups] = base
        trans[groups] = tr
    if int(draws.sum()) != sum(col.physical_draws.values()):
        raise AssertionError("per-group draws do not add up to the collection's physical-draw ledger.")
    return draws, trans, col


def matched_groups(draws: np.ndarray, budget: int) -> int:
    """The largest prefix of groups whose physical draws fit the budget."""
    return int(np.searchsorted(np.cumsum(draws), budget, side="right"))


@dataclass
class FrontierArm:
    """One arm at the budget: its groups, draws, transitions and noise estimates."""

    arm: str
    groups: int
    draws: int
    transitions: int
    contrast_var: Estimate
    noise: Estimate
    mean_noise: Estimate          # N / groups: the variance (trace) of the batch-mean gradient
    draws_per_group: float


def _traced_beyond(geom: Geometry, audit: NoiseAudit, budget: int, seed: int, device) -> dict:
    """arm -> group_costs of a traced collection long enough that every arm's draws exceed `budget`."""
    per_group = {a: sum(audit.data[a].draws.values()) / len(audit.data[a].info) for a in PAPER_ARMS}
    n_trace = int(math.ceil(1.3 * budget / min(per_group.values()))) + 16
    while True:
        traced = {a: group_costs(geom.root.history, a, n_trace, seed, geom.continuation, device, geom.game)
                  for a in PAPER_ARMS}
        if all(int(t[0].sum()) > budget for t in traced.values()):
            return traced
        n_trace *= 2


def _selected(z: np.ndarray, selection: dict[int, str], per_arm: dict[str, np.ndarray]) -> np.ndarray:
    """[n] per-group values of OSCC-Select: for a group of stratum z, the value of the arm selected for z."""
    out = np.zeros(len(z), dtype=np.int64)
    for s, arm in selection.items():
        rows = z == s
        out[rows] = per_arm[arm][rows]
    return out


def frontier(geom: Geometry, audit: NoiseAudit, budget: int, seed: int, device, n_bootstrap: int,
             setting: UpdateSetting) -> dict[str, FrontierArm]:
    """Every arm (and OSCC-Select) at equal physical draws: groups, draws, transitions, noise.

    Each arm's groups are the prefix of a collection (split ``audit``, run
    `seed`) whose per-group draws add up to at most `budget`; collecting that
    prefix on its own (and computing its realised updates at `setting`) is
    checked to give the same returns.  OSCC-Select uses, for a group of
    stratum z, the arm selected for z (its draws, transitions and returns).
    Intervals: a stratified bootstrap per arm.  Wall time is not measured
    here: it depends on the machine (benchmarks/ measures speed).
    """
    root = geom.root.history
    cont = geom.continuation
    traced = _traced_beyond(geom, audit, budget, seed, device)
    data = {a: arm_data(geom, t[2]) for a, t in traced.items()}
    direction = lag_direction(geom)

    def batch(arm, k):
        d = arm_data(geom, collect(geom.game, root, arm, k, seed, continuation=cont, device=device))
        realised_updates(d.returns, d.info, geom, setting, direction)
        return d

    def summarise(arm, returns, info, draws, trans):
        k = len(info)
        boot = Resampled(info, len(geom.infos), {"R": returns}, {"R"}, n_bootstrap, seed, f"frontier/{arm}")
        n = geom.noise_per_info(boot.cov("R")) @ state_weights(geom, info, audit.weighting)
        i, j = geom.pair
        c = boot.pooled_cov("R")
        v = c[:, i, i] + c[:, j, j] - 2 * c[:, i, j]
        ex_n, ex_v = audit.exact_noise(arm), audit.exact_contrast_var(arm)
        return FrontierArm(arm, k, int(draws), int(trans), estimate(v, ex_v), estimate(n, ex_n),
                           estimate(n / k, ex_n / k), float(draws) / k)

    out = {}
    for a in PAPER_ARMS:
        draws, trans, _ = traced[a]
        k = matched_groups(draws, budget)
        if not np.array_equal(batch(a, k).returns, data[a].returns[:k]):
            raise AssertionError("a matched-cost batch differs from the prefix of the longer collection.")
        out[a] = summarise(a, data[a].returns[:k], data[a].info[:k], draws[:k].sum(), trans[:k].sum())
    z = geom.stratum[data["independent"].info]
    sel_draws, sel_trans = (_selected(z, audit.selection, {a: t[c] for a, t in traced.items()}) for c in (0, 1))
    k = matched_groups(sel_draws, budget)
    mixed = composite(data, geom, audit.selection)
    out[SELECT] = summarise(SELECT, mixed.returns[:k], mixed.info[:k], sel_draws[:k].sum(), sel_trans[:k].sum())
    return out


