"""Realised clipped-surrogate updates of each comparison group, and the settings the chapter studies.

An `UpdateSetting` fixes

* ``epsilon``: the clipping half-width (``inf`` switches clipping off);
* ``lag``: how far the current policy has moved from the behaviour checkpoint
  before the update starts: theta_start(I) = log pi0(I) + lag * s(I), s(I)
  the unit vector of the exact expected policy gradient at pi0 (the direction
  a learner drifts in while its behaviour data is frozen); in logits
  (Euclidean norm of the logit shift);
* ``learning_rate`` eta and ``epochs`` E: each group's own copy of theta_I
  takes E gradient-ascent steps on its frozen returns
  (`learning.surrogate.surrogate_ascent`).

The realised update of group g is u_g = (theta_final - theta_start) / (eta E),
the average surrogate gradient along the update, in chips per logit like the
projected gradient G R.  With lag 0 and one epoch every ratio is 1 when the
gradient is taken, nothing clips and u_g = G(I) R_g exactly (the
connectivity control).  The clip fraction is the share of (group, action,
epoch) terms that are clip-selected; ratio quantiles are the 2.5% and 97.5%
quantiles of r_i at theta_final over all groups and actions.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from oscc_core.chapters.gradient_noise.geometry import Geometry, lag_direction
from oscc_core.learning import surrogate

QUANTILES = (0.025, 0.975)


@dataclass(frozen=True)
class UpdateSetting:
    """One configuration of the clipped-surrogate update (see the module docstring)."""

    name: str
    epsilon: float
    lag: float
    learning_rate: float
    epochs: int

    def as_dict(self) -> dict:
        return {"name": self.name, "epsilon": self.epsilon if math.isfinite(self.epsilon) else "inf",
                "lag": self.lag, "learning_rate": self.learning_rate, "epochs": self.epochs}


@dataclass(frozen=True)
class SettingGrid:
    """The settings of the chapter: the control, the noise-transfer setting and the clipping study's grids."""

    control: UpdateSetting
    main: UpdateSetting
    main_free: UpdateSetting
    lag: tuple[UpdateSetting, ...]
    learning_rate: tuple[UpdateSetting, ...]
    stress: UpdateSetting
    stress_free: UpdateSetting

    @property
    def all(self) -> list[UpdateSetting]:
        return [self.control, self.main, self.main_free, *self.lag, *self.learning_rate, self.stress,
                self.stress_free]

    @property
    def clip_groups(self) -> dict[str, list[str]]:
        """The rows of tab:app-p1-clipping and the setting names pooled into each."""
        return {"connectivity control": [self.control.name], "behaviour-lag grid": [s.name for s in self.lag],
                "learning-rate grid": [s.name for s in self.learning_rate], "activated stress": [self.stress.name]}


def setting_grid(epsilon: float, behaviour_lag: float, learning_rate: float, epochs: int, lag_grid,
                 learning_rate_grid) -> SettingGrid:
    """Connectivity control (lag 0, one epoch), noise transfer (with and without clipping), lag and
    learning-rate grids, and the activated stress (largest lag with largest learning rate, with and without
    clipping)."""
    lag = tuple(UpdateSetting(f"lag {x:g}", epsilon, x, learning_rate, epochs) for x in lag_grid)
    lr = tuple(UpdateSetting(f"η {x:g}", epsilon, 0.0, x, epochs) for x in learning_rate_grid)
    stress = UpdateSetting("activated stress", epsilon, max(lag_grid), max(learning_rate_grid), epochs)
    return SettingGrid(
        control=UpdateSetting("connectivity control", epsilon, 0.0, learning_rate, 1),
        main=UpdateSetting("noise transfer", epsilon, behaviour_lag, learning_rate, epochs),
        main_free=UpdateSetting("noise transfer, no clipping", math.inf, behaviour_lag, learning_rate, epochs),
        lag=lag, learning_rate=lr, stress=stress,
        stress_free=UpdateSetting("activated stress, no clipping", math.inf, stress.lag, stress.learning_rate,
                                  epochs))


@dataclass
class Updates:
    """Per-group results of one setting: u [n, m], clipped terms [n], final ratios [n, m], finite [n]."""

    setting: UpdateSetting
    u: np.ndarray
    clipped: np.ndarray
    ratio: np.ndarray
    finite: np.ndarray

    @property
    def terms_per_group(self) -> int:
        return self.u.shape[1] * self.setting.epochs


def realised_updates(returns: np.ndarray, info: np.ndarray, geom: Geometry, setting: UpdateSetting,
                     direction: np.ndarray | None = None) -> Updates:
    """Each group's own clipped-surrogate update from theta_start(I) (see the module docstring)."""
    pi0 = geom.probs[info]
    direction = lag_direction(geom) if direction is None else direction
    start = np.log(pi0) + setting.lag * direction[info]
    end = surrogate.surrogate_ascent(start, pi0, returns, setting.epsilon, setting.learning_rate, setting.epochs)
    with np.errstate(over="ignore", invalid="ignore"):
        u = (end.theta - start) / (setting.learning_rate * setting.epochs)
    return Updates(setting, u, end.clipped, end.ratio, surrogate.finite_rows(u))


def ratio_quantiles(updates: list[Updates], q=QUANTILES) -> tuple[float, float]:
    """The q quantiles of the final ratios r_i over the finite groups of every batch."""
    r = np.concatenate([x.ratio[x.finite].reshape(-1) for x in updates])
    lo, hi = np.quantile(r, q)
    return float(lo), float(hi)


def clip_fraction(updates: list[Updates]) -> float:
    """Share of clip-selected (group, action, epoch) terms over the batches."""
    return surrogate.clip_fraction([x.clipped for x in updates], [x.terms_per_group for x in updates])
