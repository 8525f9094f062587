"""The noise-transfer audit: per-state noise of returns, projected gradients and realised updates, per arm.

Each arm's groups (collected with one seed, so group g has the same root
information state in every arm) give

* the noise trace N = sum_I w_I tr(G(I) S(I) G(I)^T) (chips^2 per logit^2),
  S(I) the sample covariance of the returns within I;
* the update noise U = sum_I w_I tr Cov(u | I) of the realised updates at each
  setting (same units);
* the pooled contrast variance Var(R_i - R_j) (chips^2) and its
  within-state version sum_I w_I Var(R_i - R_j | I);
* return, gradient and update ratios (unitless) against the independent arm,

with w_I the weights chosen by `geometry.state_weights` (root law by
default) and paired stratified-bootstrap replicates of each.  OSCC-Select's
composite uses, for a group of stratum z, the returns of the arm selected for z.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from oscc_core.chapters.gradient_noise.arms import SELECT
from oscc_core.chapters.gradient_noise.bootstrap import Resampled, estimate
from oscc_core.chapters.gradient_noise.geometry import Geometry, lag_direction, state_weights
from oscc_core.chapters.gradient_noise.updates import Updates, UpdateSetting, realised_updates
from oscc_core.engine.arms import PAPER_ARMS
from oscc_core.engine.collector import collect
from oscc_core.method.stats import Estimate


def collect_arms(geom: Geometry, n_groups: int, seed: int, device, split: str = "audit") -> dict:
    """One collection per paper arm at the geometry's root, all with the same seed (paired groups)."""
    return {a: collect(geom.game, geom.root.history, a, n_groups, seed, continuation=geom.continuation,
                       device=device, split=split) for a in PAPER_ARMS}


@dataclass
class ArmData:
    """Returns [n, m] (chips) and root information-state index [n] of one arm's valid groups."""

    returns: np.ndarray
    info: np.ndarray
    draws: dict = field(default_factory=dict)


def arm_data(geom: Geometry, collection) -> ArmData:
    ok = (collection.codes == 0).numpy()
    if not ok.all():
        raise ValueError(f"{int((~ok).sum())} groups failed ({collection.failures}); the noise estimators "
                         "need every group.")
    info = geom.info_index(collection.own_card.numpy(), collection.public_card.numpy())
    return ArmData(collection.returns.numpy().astype(np.int64), info, dict(collection.physical_draws))


def composite(data: dict[str, ArmData], geom: Geometry, selection: dict[int, str]) -> ArmData:
    """OSCC-Select's returns: for a group in stratum z, the returns of the arm selected for z."""
    info = data["independent"].info
    z = geom.stratum[info]
    returns = data["independent"].returns.copy()
    for s, arm in selection.items():
        rows = z == s
        returns[rows] = data[arm].returns[rows]
    return ArmData(returns, info)


def noise_estimate(geom: Geometry, returns: np.ndarray, info: np.ndarray, weights: str = "root_law") -> float:
    """Estimated N = sum_I w_I tr(G(I) S(I) G(I)^T) with S(I) the sample covariance of the groups at I."""
    r = np.asarray(returns, dtype=np.float64)
    covs = []
    for k in range(len(geom.infos)):
        rows = r[info == k]
        if len(rows) < 2:
            raise ValueError(f"information state {geom.infos[k]} has {len(rows)} groups; at least two are needed.")
        covs.append(np.cov(rows, rowvar=False, ddof=1).reshape(r.shape[1], r.shape[1]))
    return float(state_weights(geom, info, weights) @ geom.noise_per_info(np.stack(covs)))


def update_noise_estimate(geom: Geometry, u: np.ndarray, info: np.ndarray, weights: str = "root_law") -> float:
    """U = sum_I w_I tr Cov(u | I) of per-group update vectors."""
    u = np.asarray(u, dtype=np.float64)
    w = state_weights(geom, info, weights)
    return float(sum(wk * np.var(u[info == k], axis=0, ddof=1).sum() for k, wk in enumerate(w)))


@dataclass
class NoiseAudit:
    """Point estimates and paired bootstrap replicates of every arm's noise quantities at one setting grid.

    ``weights`` [nI] are the per-state weights of every estimate, chosen by
    ``weighting`` ("root_law" or "empirical"); exact values always use the root law.
    """

    geom: Geometry
    data: dict[str, ArmData]
    updates: dict[str, dict[str, Updates]]          # arm -> setting name -> Updates
    boot: Resampled
    selection: dict[int, str]
    weighting: str = "root_law"
    weights: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.weights is None:
            self.weights = state_weights(self.geom, self.data["independent"].info, self.weighting)

    @property
    def arms(self) -> list[str]:
        return list(self.data)

    def noise(self, arm: str) -> np.ndarray:
        """[R+1] N = sum_I w tr(G Sigma G^T)."""
        return self.geom.noise_per_info(self.boot.cov(f"R:{arm}")) @ self.weights

    def update_noise(self, arm: str, setting: str) -> np.ndarray:
        """[R+1] U = sum_I w tr Cov(u | I)."""
        c = self.boot.cov(f"u:{arm}:{setting}")
        return np.einsum("rnii->rn", c) @ self.weights

    def contrast_var(self, arm: str) -> np.ndarray:
        """[R+1] pooled Var(R_i - R_j)."""
        i, j = self.geom.pair
        c = self.boot.pooled_cov(f"R:{arm}")
        return c[:, i, i] + c[:, j, j] - 2 * c[:, i, j]

    def conditional_contrast_var(self, arm: str) -> np.ndarray:
        """[R+1] sum_I w Var(R_i - R_j | I)."""
        i, j = self.geom.pair
        c = self.boot.cov(f"R:{arm}")
        return (c[..., i, i] + c[..., j, j] - 2 * c[..., i, j]) @ self.weights

    def clip_fraction(self, arm: str, setting: str) -> np.ndarray:
        """[R+1] share of (group, action, epoch) terms whose clipped branch is selected."""
        u = self.updates[arm][setting]
        return self.boot.total(f"c:{arm}:{setting}")[:, :, 0].sum(1) / (self.boot.n.sum() * u.terms_per_group)

    # exact values
    def exact_noise(self, arm: str) -> float:
        if arm == SELECT:
            return self.geom.exact_composite(self.selection)[0]
        return self.geom.exact_noise(arm)

    def exact_contrast_var(self, arm: str) -> float:
        if arm == SELECT:
            return self.geom.exact_composite(self.selection)[1]
        return self.geom.exact_contrast_var(arm)

    def ratio_values(self, quantity: str, arm: str, setting: str | None = None) -> np.ndarray:
        """[R+1] rho_R ('return'), rho_G ('gradient') or rho_dtheta ('update', at `setting`) of arm over
        independent: index 0 the estimate, then the paired bootstrap replicates (the same resampled groups for
        every arm, so differences between arms are paired)."""
        if quantity == "return":
            return self.contrast_var(arm) / self.contrast_var("independent")
        if quantity == "gradient":
            return self.noise(arm) / self.noise("independent")
        if quantity == "update":
            return self.update_noise(arm, setting) / self.update_noise("independent", setting)
        raise ValueError(f"unknown ratio {quantity!r}")

    def ratio(self, quantity: str, arm: str, setting: str | None = None) -> Estimate:
        """rho_R ('return'), rho_G ('gradient') or rho_dtheta ('update', at `setting`) of arm over independent."""
        values = self.ratio_values(quantity, arm, setting)
        if quantity == "return":
            ex = self.exact_contrast_var(arm) / self.exact_contrast_var("independent")
        elif quantity == "gradient":
            ex = self.exact_noise(arm) / self.exact_noise("independent")
        else:
            ex = None
        return estimate(values, ex)


def run_audit(geom: Geometry, collections: dict, settings: list[UpdateSetting], selection: dict[int, str],
              n_bootstrap: int, seed: int, purpose: str, weights: str = "root_law") -> NoiseAudit:
    """Realised updates of every arm (and OSCC-Select's composite) at every setting, and their bootstrap."""
    data = {a: arm_data(geom, collections[a]) for a in PAPER_ARMS}
    data[SELECT] = composite(data, geom, selection)
    info = data["independent"].info
    for a in data:
        if not np.array_equal(data[a].info, info):
            raise ValueError("arms must be collected with the same seed so that group g has the same root in each.")
    direction = lag_direction(geom)
    updates = {a: {s.name: realised_updates(d.returns, info, geom, s, direction) for s in settings}
               for a, d in data.items()}
    columns, squares = {}, set()
    for a, d in data.items():
        columns[f"R:{a}"] = d.returns
        squares.add(f"R:{a}")
        for s in settings:
            u = updates[a][s.name]
            columns[f"u:{a}:{s.name}"] = np.where(u.finite[:, None], u.u, 0.0)
            squares.add(f"u:{a}:{s.name}")
            columns[f"c:{a}:{s.name}"] = u.clipped[:, None]
    boot = Resampled(info, len(geom.infos), columns, squares, n_bootstrap, seed, purpose)
    return NoiseAudit(geom, data, updates, boot, dict(selection), weights, state_weights(geom, info, weights))
