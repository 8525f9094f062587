"""OSCC-Select on calibration blocks (this chapter's simple version), one own-card stratum at a time.

Strata are the own-card classes of `method.strata` (J, Q, K).  On a separate
calibration split the groups of each information state are cut, in group
order, into blocks of ``block_size``; block k of a stratum holds block k of
each of its information states.  A block's score for candidate arm a is
X_k = N_k(independent) - N_k(a) (chips^2 per logit^2), the stratum's
weighted per-block noise estimate difference (unbiased for the gain because
per-block sample covariances are unbiased).  The first ``pilot_blocks``
blocks fix the bound B = ``bound_factor`` * max |X| over the pilot and all
candidates and are not used again.  `method.selectors.certify` clips the
remaining scores to [-B, B] and applies the Hoeffding + union-bound
certificate over M = 3 candidates x strata; `oscc_select` picks the certified
arm with the smallest estimated noise (lambda = 0: physical cost is compared
separately, at matched budgets) and falls back to independent.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from oscc_core.chapters.gradient_noise.geometry import Geometry, state_weights
from oscc_core.chapters.gradient_noise.transfer import arm_data
from oscc_core.engine.arms import PAPER_ARMS
from oscc_core.method.selectors import Certificate, certify, oscc_select
from oscc_core.method.strata import CARD_CLASSES
from oscc_core.reporting.params import ParameterError


@dataclass
class Selection:
    """The arm selected per stratum index, with each stratum's certificates, objective, bound B and blocks."""

    selection: dict[int, str]
    certificates: dict[int, list[Certificate]]
    objective: dict[int, dict[str, float]]
    bound: dict[int, float]
    blocks: dict[int, int]
    pilot_blocks: int
    block_size: int
    delta: float
    n_comparisons: int

    @property
    def by_stratum(self) -> dict[str, str]:
        """Stratum name ("J", "Q", "K") -> selected arm."""
        return {CARD_CLASSES[z]: a for z, a in self.selection.items()}


def _block_noise(returns: np.ndarray, gram: np.ndarray, block_size: int, n_blocks: int) -> np.ndarray:
    """[n_blocks] tr(G S G^T) of each block's sample covariance (consecutive groups of one information state)."""
    r = returns[:n_blocks * block_size].astype(np.float64).reshape(n_blocks, block_size, -1)
    dev = r - r.mean(1, keepdims=True)
    cov = np.einsum("kbi,kbj->kij", dev, dev) / (block_size - 1)
    return np.einsum("ij,kij->k", gram, cov)


def expected_min_blocks(geom: Geometry, calibration_groups: int, block_size: int, sigmas: float = 4.0) -> int:
    """Calibration blocks the smallest information state holds, at `sigmas` standard deviations below its mean.

    Information state k receives Binomial(calibration_groups, weight_k) calibration groups; `calibrate_selection`
    cuts each into blocks of `block_size` and needs `pilot_blocks + 2` blocks in every stratum.  This bound lets the
    notebook refuse a `pilot_blocks` the calibration cannot hold before collecting anything.
    """
    n, w = calibration_groups, np.asarray(geom.weight, dtype=np.float64)
    low = n * w - sigmas * np.sqrt(n * w * (1 - w))
    return int(max(0.0, float(low.min())) // block_size)


def check_pilot_blocks(name: str, pilot_blocks: int, geom: Geometry, calibration_groups: int,
                       block_size: int) -> int:
    """`pilot_blocks` leaves at least two calibration blocks in every information state (ParameterError if not)."""
    blocks = expected_min_blocks(geom, calibration_groups, block_size)
    if pilot_blocks + 2 > blocks:
        raise ParameterError(
            f"{name} must be at most {max(blocks - 2, 0)} (calibration_groups={calibration_groups:,} in blocks of "
            f"{block_size} leave about {blocks} blocks in the smallest information state, and 2 must remain after "
            f"the pilot), got {pilot_blocks}; raise calibration_groups or lower {name} or block_size.")
    return pilot_blocks


def calibrate_selection(geom: Geometry, collections: dict, block_size: int, pilot_blocks: int, delta: float,
                        bound_factor: float, weights: str = "root_law") -> Selection:
    """OSCC-Select per own-card stratum from calibration collections (module docstring).

    Within a stratum the per-state block noises are averaged with `weights`
    (`geometry.state_weights` of the calibration groups), renormalised over the stratum.
    """
    data = {a: arm_data(geom, collections[a]) for a in PAPER_ARMS}
    info = data["independent"].info
    weight = state_weights(geom, info, weights)
    gram = geom.gram()
    strata = geom.stratum
    present = sorted(set(int(z) for z in strata))
    m_comp = 3 * len(present)
    selection, certificates, objective, bound, blocks = {}, {}, {}, {}, {}
    for z in present:
        members = [k for k in range(len(geom.infos)) if strata[k] == z]
        w = weight[members] / weight[members].sum()
        n_blocks = min(int((info == k).sum()) // block_size for k in members)
        if n_blocks < pilot_blocks + 2:
            raise ValueError(f"stratum {CARD_CLASSES[z]} has {n_blocks} calibration blocks; at least "
                             f"{pilot_blocks + 2} are needed (raise calibration_groups or lower block_size).")
        per_arm = {}
        for a in PAPER_ARMS:
            rows = [_block_noise(data[a].returns[info == k], gram[k], block_size, n_blocks) for k in members]
            per_arm[a] = np.asarray(w) @ np.stack(rows)
        scores = {a: per_arm["independent"] - per_arm[a] for a in PAPER_ARMS[1:]}
        b = bound_factor * max(float(np.abs(s[:pilot_blocks]).max()) for s in scores.values())
        b = b if b > 0 else 1.0
        certs = [certify(scores[a][pilot_blocks:], a, b, m_comp, delta) for a in PAPER_ARMS[1:]]
        obj = {a: float(per_arm[a][pilot_blocks:].mean()) for a in PAPER_ARMS}
        selection[z] = oscc_select(certs, obj)
        certificates[z], objective[z], bound[z], blocks[z] = certs, obj, b, n_blocks - pilot_blocks
    return Selection(selection, certificates, objective, bound, blocks, pilot_blocks, block_size, delta, m_comp)
