"""One calibration of OSCC-Select and RV-Select per stratum, and the clipping bound B it is certified with.

Block scores (noise units) average `block_size` consecutive groups of a
stratum; they are clipped to [-B, B] and certified with Hoeffding plus a
union bound over M = candidates x strata comparisons (method.selectors).
Physical draws are counts of uniforms.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from oscc_core.engine.arms import PAPER_ARMS
from oscc_core.method.selectors import FALLBACK, certify, oscc_select, rv_select
from oscc_core.method.strata import CARD_CLASSES

from .exact_root import CANDIDATES, ExactRoot, exact_selection
from .pools import Pool, collect_pool, estimated_noise, gain_scores, pool_size_for, sample_cov
from .root_policy import RootPolicy, resolve_root_policy

#: M: the comparisons the simultaneous certificate covers (three candidates x three own-card classes).
N_COMPARISONS = len(CANDIDATES) * len(CARD_CLASSES)


@dataclass
class Calibration:
    """The selectors' decisions from one calibration sample (n groups per stratum)."""

    groups_per_stratum: int
    block_size: int
    bound: float
    delta: float
    n_comparisons: int
    certificates: dict                  # stratum -> list[method.selectors.Certificate]
    objective: dict                     # stratum -> arm -> estimated J
    oscc: dict                          # stratum -> arm
    rv: dict                            # stratum -> arm
    draws: int                          # physical draws consumed by the calibration (all arms)
    arm_draws: dict = field(default_factory=dict)   # arm -> stratum -> physical draws of its calibration groups


def calibrate(pool: Pool, exact: ExactRoot, policy: RootPolicy, groups_per_stratum: int, block_size: int,
              bound: float, delta: float, lam: float = 0.0, offset: int = 0, *, noise_weights: str) -> Calibration:
    """OSCC-Select and RV-Select on groups [offset, offset + n) of every stratum of the pool.

    `noise_weights` weights the information states in the estimated noise of the independent arm
    (pools.estimated_noise), the objective OSCC-Select ranks its certified candidates by.
    """
    scores = gain_scores(pool, exact, policy, lam)
    strata = exact.strata()
    m = len(CANDIDATES) * len(strata)
    certs, objective, oscc, rv, draws = {}, {}, {}, {}, 0
    arm_draws = {a: {} for a in PAPER_ARMS}
    for z in strata:
        idx = pool.stratum_index(z)[offset:offset + groups_per_stratum]
        if len(idx) < groups_per_stratum:
            raise ValueError(f"stratum {z} has only {len(idx)} groups after offset {offset}; "
                             f"collect a larger pool.")
        nb = groups_per_stratum // block_size
        j_ind = estimated_noise(pool, exact, policy, FALLBACK, weights=noise_weights, groups=idx) \
            + lam * float(pool.draws[FALLBACK][idx].mean())
        certs[z], objective[z] = [], {FALLBACK: j_ind}
        for a in CANDIDATES:
            x = scores[a][idx[:nb * block_size]].reshape(nb, block_size).mean(1)
            certs[z].append(certify(x, a, bound, m, delta))
            objective[z][a] = j_ind - float(x.mean())
        oscc[z] = oscc_select(certs[z], objective[z])
        rv[z] = rv_select({a: sample_cov(pool, a, groups=idx) for a in PAPER_ARMS})
        for a in PAPER_ARMS:
            arm_draws[a][z] = int(pool.draws[a][idx].sum())
        draws += sum(arm_draws[a][z] for a in PAPER_ARMS)
    return Calibration(groups_per_stratum, block_size, bound, delta, m, certs, objective, oscc, rv, draws, arm_draws)


def label(choice: dict) -> str:
    """One arm name when every stratum chose it, else 'J: arm, Q: arm, K: arm'."""
    arms = set(choice.values())
    if len(arms) == 1:
        return arms.pop()
    return ", ".join(f"{z}: {a}" for z, a in choice.items())


# --- the clipping bound B ---------------------------------------------------------------

def pilot_bound(pool: Pool, exact: ExactRoot, policy: RootPolicy, block_size: int, quantile: float,
                lam: float = 0.0) -> float:
    """B declared before calibration: a quantile of |block score| over every candidate on a pilot split."""
    scores = gain_scores(pool, exact, policy, lam)
    blocks = []
    for z in exact.strata():
        idx = pool.stratum_index(z)
        nb = len(idx) // block_size
        for a in CANDIDATES:
            blocks.append(np.abs(scores[a][idx[:nb * block_size]].reshape(nb, block_size).mean(1)))
    return float(np.quantile(np.concatenate(blocks), quantile))


RETURN_BOUND = 13.0     # |return| <= 13 chips in Leduc


def natural_bound(exact: ExactRoot, policy: RootPolicy) -> float:
    """The largest |score| any group can give: max over I of ||G(I)||_2^2 (max ||R||)^2, R in [-13, 13]^m."""
    m = len(exact.actions)
    return float(max(np.linalg.norm(policy.jacobian(i.infostate), 2) ** 2 for i in exact.infos)
                 * m * RETURN_BOUND ** 2)


def sufficient_groups(bound: float, n_comparisons: int, delta: float, gain: float, block_size: int) -> float:
    """Theorem 1's sufficient calibration size in groups: block_size * 8 B^2 log(2M/delta) / d^2 (inf if d <= 0)."""
    if gain <= 0:
        return float("inf")
    return block_size * 8.0 * bound ** 2 * math.log(2.0 * n_comparisons / delta) / gain ** 2


def pilot_pool(p, root: str) -> Pool:
    """The pilot groups of `root` (validation split, semantic map) that fix B before calibration."""
    return collect_pool(root, p.pilot_groups, p.seed, p.continuation_policy, p.device, split="validation")


def bound_at(p, pilot: Pool, exact: ExactRoot, policy: RootPolicy) -> dict:
    """B (the fixed `score_bound` when positive, else the pilot quantile), the pilot quantile and the natural bound."""
    pilot_b = pilot_bound(pilot, exact, policy, p.block_size, p.bound_quantile, p.cost_weight)
    return {"B": p.score_bound if p.score_bound > 0 else pilot_b, "pilot quantile": pilot_b,
            "natural bound (one group)": natural_bound(exact, policy)}


def clipping_bounds(p, exact3: ExactRoot, exact2: ExactRoot) -> dict:
    """{"three-action": bound_at(...), "two-action": bound_at(...)} at the notebook's two roots."""
    return {"three-action": bound_at(p, pilot_pool(p, p.root), exact3, p.pi3),
            "two-action": bound_at(p, pilot_pool(p, p.binary_root), exact2, p.pi2)}


# --- a calibration at one root, and the same groups rescored under other root policies ----------

def calibrate_at(p, root: str, policy: RootPolicy, exact: ExactRoot, bound: float,
                 continuation_map: str = "semantic") -> tuple[Pool, Calibration]:
    """Collect the calibration split at `root` (enough groups for `calibration_groups` per stratum) and calibrate."""
    n_pool = pool_size_for(root, p.continuation_policy, p.calibration_groups, 1)
    pool = collect_pool(root, n_pool, p.seed, p.continuation_policy, p.device, continuation_map, "calibration")
    return pool, calibrate(pool, exact, policy, p.calibration_groups, p.block_size, bound, p.delta, p.cost_weight,
                           noise_weights=p.noise_weights)


OTHER_ROOT_POLICIES = ("uniform", "cfr_plus")


def other_root_policies(p, pool: Pool, exact: ExactRoot) -> tuple[list[dict], dict]:
    """The calibration groups of the three-action root rescored under the uniform, the CFR+ and the notebook's
    root policy: per policy (its short label: a list-valued policy by its probabilities alone) and stratum, the
    exact noise of each arm and the three selectors' choices.

    Returns the rows and the CFR+ policy's floored count and choices (for the prose).
    """
    pilot = pilot_pool(p, p.root) if p.score_bound <= 0 else None
    rows, cfr = [], {}
    for value in OTHER_ROOT_POLICIES + (p.root_policy,):
        pi = resolve_root_policy("root_policy", value, p.root, p.continuation_policy, p.cfr_iterations,
                                 floor=p.root_policy_floor)
        bound = p.score_bound if p.score_bound > 0 else pilot_bound(pilot, exact, pi, p.block_size,
                                                                    p.bound_quantile, p.cost_weight)
        cal = calibrate(pool, exact, pi, p.calibration_groups, p.block_size, bound, p.delta, p.cost_weight,
                        noise_weights=p.noise_weights)
        oracle = exact_selection(exact, pi)
        for z in exact.strata():
            rows.append({"root policy": pi.short, "stratum": z,
                         **{f"N({a})": exact.noise(a, pi, z) for a in PAPER_ARMS},
                         "OSCC-Select": cal.oscc[z], "RV-Select": cal.rv[z], "Oracle-Select": oracle[z]})
        if isinstance(value, str) and value == "cfr_plus":
            cfr = {"cfr_floored": pi.floored, "cfr_oracle": label(oracle), "cfr_oscc": label(cal.oscc)}
    return rows, cfr
