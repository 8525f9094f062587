"""The gradient-noise chapter's computations: from return covariance to the realised update.

Everything ``03_gradient_noise.ipynb`` reports is computed here; the notebook
chooses parameters, calls these functions and shows their tables.

Objects and units
-----------------
A comparison group fixes a root *information state* I of the acting player
(own card and, in round two, the public card) drawn by the root law, plays
every legal root action once and records the branch returns R (chips).

* Root policy pi0(. | I): the tabular softmax policy being differentiated at
  each root information state; it is also the frozen *behaviour* policy of the
  clipped surrogate.  ``root_policy`` is "uniform", "cfr_plus" (the CFR+
  average policy of the acting player at I; probabilities below
  ``CFR_FLOOR`` are raised to it and the row renormalised, because a softmax
  cannot represent a zero and the importance ratio pi/pi0 needs pi0 > 0) or a
  list of probabilities over the root's legal actions, applied at every I.
* G(I) = [g_1 .. g_m], g_i = d pi0(a_i | I) / d theta_I (``gradient.policy_jacobian``).
* Noise trace of an arm: N = sum_I w(I) tr(G(I) Sigma(I) G(I)^T), where w(I)
  is the root-law probability of I and Sigma(I) the covariance of the branch
  returns *given* I.  Estimated from the sample covariance of the groups at
  each I; exact from ``exact.arm_moments(..., where=I)``.  Units chips^2 per
  logit^2.  Each group only moves its own I's logits, so the per-I traces add
  with the root-law weights (Proposition 3's ``||g_1(I)||^2`` weights stay inside).
* Return ratio rho_R: pooled contrast variance Var(R_i - R_j) of an arm over
  independent's (the covariance chapter's quantity, between-I spread included).
  Gradient ratio rho_G: N(arm) / N(independent).

Realised update (the paper's Eq. paired-update)
----------------------------------------------
For group g at information state I with centred advantages A_i = R_i - mean R
and ratios r_i = pi_theta(a_i | I) / pi0(a_i | I), the surrogate is
L_g(theta) = sum_i pi0_i min(r_i A_i, clip(r_i, 1 - eps, 1 + eps) A_i).
An :class:`UpdateSetting` fixes

* ``epsilon``: the clipping half-width (``inf`` switches clipping off);
* ``lag``: how far the current policy has moved from the behaviour checkpoint
  before the update starts.  theta_start(I) = log pi0(I) + lag * s(I), where
  s(I) is the unit vector of the exact expected policy gradient at pi0 (the
  direction a learner drifts in while its behaviour data is frozen); lag in
  logits (Euclidean norm of the logit shift);
* ``learning_rate`` eta and ``epochs`` E: each group's own copy of theta_I
  takes E plain gradient-ascent steps theta += eta * grad L_g(theta) on its
  frozen returns.

The realised update of group g is u_g = (theta_final - theta_start) / (eta E):
the average surrogate gradient along the update, in the same units as the
projected gradient G R.  With lag 0 and one epoch every ratio is 1 when the
gradient is taken, nothing is clipped and u_g = G(I) R_g exactly (the
*connectivity control*).  Update noise U = sum_I w(I) tr Cov(u | I); the
update ratio rho_dtheta is U(arm) / U(independent).  A branch term is
*clip-selected* when its clipped branch is the one the min picks with a
different value (A > 0 and r > 1 + eps, or A < 0 and r < 1 - eps): its
gradient is zero.  The clip fraction is the share of (group, action, epoch)
terms that are clip-selected.  A group's gradient is *finite* when every
coordinate of u_g is finite.  Ratio quantiles are the 2.5% and 97.5%
quantiles of r_i at theta_final over all groups and actions.

OSCC-Select (this chapter's simple version)
-------------------------------------------
Strata are own-card classes (J, Q, K).  On a separate calibration split the
groups of each information state are cut, in group order, into blocks of
``block_size``; block k of a stratum holds block k of each of its
information states.  A block's score for candidate arm a is
X_k = N_k(independent) - N_k(a), the stratum's weighted per-block noise
estimate difference (unbiased for the gain because per-block sample
covariances are unbiased).  The first ``pilot_blocks`` blocks fix the bound
B = ``bound_factor`` * max |X| over the pilot and all candidates; they are
not used again.  ``select.certify`` clips the remaining scores to [-B, B] and
applies the Hoeffding + union-bound certificate over M = 3 candidates x 3
strata; ``select.oscc_select`` picks the certified arm with the smallest
estimated noise (lambda = 0: physical cost is compared separately, at
matched budgets) and falls back to independent.  The selected arm's returns
are then used for every group of that stratum.

Matched physical cost
---------------------
Physical draws are the uniforms a collection consumes (root, hidden, chance,
policy).  Per-group draws and transitions come from the collector's trace: a
transition is one state change of one branch (its forced root action, each
policy decision, each chance deal it receives).  Each arm gets the largest
prefix of groups whose draws fit the budget.  Wall time is measured but is
machine-dependent, so the notebook prints it only in a sanitised form.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from oscc_core.engine.collector import collect
from oscc_core.engine.rollout import ActionEvent
from oscc_core.engine.roots import Root, build_root
from oscc_core.exact.arm_moments import Moments, arm_moments
from oscc_core.games import get_game
from oscc_core.method import root_policy as root_policy_mod
from oscc_core.method import stats
from oscc_core.method.policy_gradient import clipped_surrogate_gradient, policy_jacobian, softmax
from oscc_core.method.selectors import Certificate, certify, oscc_select
from oscc_core.method.stats import Estimate, contrast_pair
from oscc_core.policy import resolve_policy
from oscc_core.reporting import claims
from oscc_core.reporting.params import ParameterError
from oscc_core.reporting.rows import NO_PAPER, Row
from oscc_core.reporting.tables import rows_record

GAME = "leduc"
ARMS = ("independent", "root_only", "continuation_only", "full")
SELECT = "oscc_select"
ROW_ARMS = ARMS + (SELECT,)
LABELS = {"independent": "independent", "root_only": "root-only", "continuation_only": "continuation-only",
          "full": "CP-GRPO full", SELECT: "OSCC-Select"}
#: Claim-id keys of the paper's rows in tab:noise-transfer and tab:physical-cost-frontier.
PAPER_KEY = {"independent": "independent", "root_only": "root_only", "continuation_only": "continuation_only",
             "full": "cp_grpo_full", SELECT: "oscc_select"}
#: Smallest probability of a CFR+ root policy (zeros are raised to it, then the row is renormalised).
CFR_FLOOR = 1e-3
#: Own-card classes of Leduc (rank = card id // 2): the selector's strata.
STRATA = ("J", "Q", "K")
QUANTILES = (0.025, 0.975)
NOT_COMPARED = "not compared"
WALL_TIME = ": wall time"   # suffix of the frontier rows that report seconds
VERDICT_KINDS = tuple(claims.VERDICTS) + (NO_PAPER, NOT_COMPARED)


# --- parameters -------------------------------------------------------------------------

def check_root_policy(name: str, value) -> "str | list[float]":
    """`method.root_policy.check_root_policy` as a notebook parameter check (ParameterError)."""
    try:
        return root_policy_mod.check_root_policy(name, value)
    except ValueError as e:
        raise ParameterError(str(e)) from None


def check_floats(name: str, values, low: float, high: float, open_low: bool = False) -> list[float]:
    """A non-empty list of numbers, each in the range (see ``params.check_float``)."""
    if not isinstance(values, (list, tuple)) or not values:
        raise ParameterError(f"{name} must be a non-empty list of numbers, got {values!r}.")
    from oscc_core.reporting.params import check_float

    return [check_float(name, v, low, high, open_low) for v in values]


# --- the root's geometry ------------------------------------------------------------------

@dataclass
class Geometry:
    """Root information states, their root-law weights, the root policy and its Jacobians.

    infos    [(own card, public card or -1)] in sorted order
    weight   [nI] root-law probability of each information state
    probs    [nI, m] root (behaviour) policy pi0
    jac      [nI, m, m] G(I) (column i = g_i)
    exact    arm -> [Moments per information state] (exact conditional moments)
    pooled   arm -> Moments over the whole root law
    """

    root: Root
    continuation: object
    root_policy: str
    infos: list[tuple[int, int]]
    weight: np.ndarray
    probs: np.ndarray
    jac: np.ndarray
    exact: dict[str, list[Moments]]
    pooled: dict[str, Moments]
    floored: int = 0

    @property
    def actions(self) -> list[str]:
        return self.root.action_names

    @property
    def pair(self) -> tuple[int, int]:
        return contrast_pair(self.actions)

    @property
    def stratum(self) -> np.ndarray:
        """[nI] own-card class (0 J, 1 Q, 2 K) of each information state."""
        return np.array([own // 2 for own, _ in self.infos])

    def info_index(self, own, public) -> np.ndarray:
        """Index into `infos` of each group's (own card, public card); ValueError on an unknown pair."""
        own = np.asarray(own, dtype=np.int64)
        public = np.asarray(public, dtype=np.int64)
        n_cards = self.root.game.num_cards
        lookup = np.full((n_cards, n_cards + 1), -1, dtype=np.int64)
        for i, (o, p) in enumerate(self.infos):
            lookup[o, p + 1] = i
        out = lookup[own, public + 1]
        if (out < 0).any():
            raise ValueError("a group's information state is not a root information state of this geometry.")
        return out

    def gram(self) -> np.ndarray:
        """[nI, m, m] <g_i, g_j> per information state."""
        return np.einsum("nki,nkj->nij", self.jac, self.jac)

    def noise_per_info(self, covs) -> np.ndarray:
        """[.., nI] tr(G Sigma G^T) for covariances [.., nI, m, m]."""
        return np.einsum("nij,...nij->...n", self.gram(), np.asarray(covs))

    def exact_noise(self, arm: str, per_info: bool = False):
        """Exact N(arm) = sum_I w(I) tr(G Sigma G^T) (or the [nI] per-I values)."""
        v = self.noise_per_info(np.stack([m.cov for m in self.exact[arm]]))
        return v if per_info else float(self.weight @ v)

    def exact_conditional_contrast_var(self, arm: str) -> float:
        i, j = self.pair
        return float(sum(w * m.contrast_var(i, j) for w, m in zip(self.weight, self.exact[arm])))

    def exact_contrast_var(self, arm: str) -> float:
        i, j = self.pair
        return self.pooled[arm].contrast_var(i, j)

    def exact_composite(self, selection: dict[int, str]) -> tuple[float, float]:
        """Exact (noise trace, pooled contrast variance) when stratum z uses arm selection[z]."""
        i, j = self.pair
        strata = self.stratum
        noise, within = 0.0, 0.0
        for k, (w, z) in enumerate(zip(self.weight, strata)):
            m = self.exact[selection[int(z)]][k]
            noise += w * self.noise_per_info(m.cov[None])[0]
            within += w * m.contrast_var(i, j)
        # pooled Var(D) = E[Var(D | I)] + Var(E[D | I]); the conditional means are the same in every arm
        means = np.array([m.contrast_mean(i, j) for m in self.exact["independent"]])
        between = float(self.weight @ (means - self.weight @ means) ** 2)
        return float(noise), float(within + between)


def geometry(root_history: str, continuation, root_policy, cfr_iterations: int = 1000,
             game: str = GAME, floor: float = CFR_FLOOR) -> Geometry:
    """Root information states, root-law weights, root policy, Jacobians and exact moments."""
    g = get_game(game)
    root = build_root(g, root_history, resolve_policy(g, continuation))
    keys = [tuple(x) for x in root.situations[:, :2].tolist()]
    infos = sorted(set(keys))
    weight = np.array([sum(w for k, w in zip(keys, root.weight) if k == i) for i in infos])
    weight = weight / weight.sum()
    try:
        probs, floored = root_policy_mod.root_policy_probs(root_policy, root, infos, cfr_iterations, floor)
    except ValueError as e:
        raise ParameterError(str(e)) from None
    jac = np.stack([policy_jacobian(p) for p in probs])
    exact = {a: [] for a in ARMS}
    for own, pub in infos:
        mom = arm_moments(g, root_history, continuation,
                          where=lambda s, o=own, p=pub: (s[:, 0] == o) & (s[:, 1] == p))
        for a in ARMS:
            exact[a].append(mom[a])
    pooled = arm_moments(g, root_history, continuation)
    label = root_policy if isinstance(root_policy, str) else "fixed " + str([round(p, 6) for p in root_policy])
    return Geometry(root=root, continuation=continuation, root_policy=label, infos=infos, weight=weight,
                    probs=probs, jac=jac, exact=exact, pooled={a: pooled[a] for a in ARMS}, floored=floored)


def lag_direction(geom: Geometry) -> np.ndarray:
    """[nI, m] unit vector of the exact expected policy gradient G(I) E[R | I] at pi0 (zero if it vanishes)."""
    means = np.stack([m.mean for m in geom.exact["independent"]])
    d = np.einsum("nki,ni->nk", geom.jac, means)
    norm = np.linalg.norm(d, axis=1, keepdims=True)
    return np.where(norm > 0, d / np.where(norm > 0, norm, 1.0), 0.0)


# --- Proposition 3 -----------------------------------------------------------------------

def proposition3_exact(geom: Geometry) -> "object":
    """Per information state and arm: N(arm) - N(independent), Eq. geometry-difference's right side, residuals.

    Also the binary reduction ||g_1||^2 Var(R_1 - R_2) for two-action roots.
    All from exact covariances; residuals are floating-point rounding only.
    """
    import pandas as pd

    gram = geom.gram()
    out = []
    for k, (own, pub) in enumerate(geom.infos):
        ref = geom.exact["independent"][k].cov
        n_ref = float((gram[k] * ref).sum())
        for arm in ARMS[1:]:
            cov = geom.exact[arm][k].cov
            n_arm = float((gram[k] * cov).sum())
            rhs = float(2 * (gram[k] * np.triu(cov - ref, 1)).sum())
            rec = {"own card": own, "public card": "—" if pub < 0 else pub, "arm": arm,
                   "N(arm)": n_arm, "N(independent)": n_ref, "N(arm) - N(ind)": n_arm - n_ref,
                   "2 sum <g_i,g_j> dCov": rhs, "difference residual": (n_arm - n_ref) - rhs}
            if len(geom.actions) == 2:
                g1 = geom.jac[k][:, 0]
                rec["||g1||^2 Var(R1-R2)"] = float(g1 @ g1) * geom.exact[arm][k].contrast_var(0, 1)
                rec["binary residual"] = n_arm - rec["||g1||^2 Var(R1-R2)"]
            out.append(rec)
    return pd.DataFrame(out)


PROPOSITION = "0 (identity)"


def proposition3_rows(geom: Geometry, audit: "NoiseAudit", tolerance: float = 1e-12) -> list[dict]:
    """Proposition 3 checked exactly and on the Monte-Carlo covariances.

    Exact: the largest |N - N' - 2 sum_{i<j} <g_i,g_j>(Sigma_ij - Sigma'_ij)| over
    information states and arms (independent as Gamma'), and for two actions the
    largest |N - ||g_1||^2 Var(R_1 - R_2)|; both rounding only (tolerance
    relative to N).  Monte Carlo: the binary reduction is algebraic and holds
    for sample covariances too; the difference formula does not, because
    sample covariances of two arms have slightly different diagonals.  Its
    residual is exactly sum_i ||g_i||^2 (S_ii - S'_ii), whose expectation is
    zero (marginal preservation); its paired-bootstrap interval should cover 0.
    """
    table = proposition3_exact(geom)
    scale = max(float(table["N(arm)"].abs().max()), 1.0)
    diff = float(table["difference residual"].abs().max())
    rows = [Row.identity("exact: max |N(arm) - N(ind) - 2 Σ<g_i,g_j> ΔCov| over I and arms", PROPOSITION, diff,
                          tolerance * scale)]
    if "binary residual" in table:
        b = float(table["binary residual"].abs().max())
        rows.append(Row.identity("exact: max |N - ||g1||² Var(R1-R2)| over I and arms", PROPOSITION, b, tolerance * scale))
    gram = geom.gram()
    ref = audit.boot.cov("R:independent")
    for arm in ARMS[1:]:
        cov = audit.boot.cov(f"R:{arm}")
        lhs = audit.noise(arm) - audit.noise("independent")
        rhs = 2 * np.einsum("nij,rnij->rn", np.triu(np.ones_like(gram[0]), 1) * gram, cov - ref) @ geom.weight
        est = estimate(lhs - rhs, 0.0)
        rows.append({"quantity": f"Monte Carlo, {arm}: N̂ - N̂(ind) - 2 Σ<g_i,g_j> ΔĈov (diagonal sampling term)",
                     "paper": PROPOSITION, "ours": est.value, "95% interval": (est.low, est.high), "exact": 0.0,
                     "verdict": claims.REPRODUCED if est.low <= 0 <= est.high else claims.NOT_REPRODUCED,
                     "claim id": None})
    if len(geom.actions) == 2:
        worst = 0.0
        for arm in ARMS:
            c = audit.boot.cov(f"R:{arm}")[0]
            g1 = np.einsum("nk,nk->n", geom.jac[:, :, 0], geom.jac[:, :, 0])
            binary = float(geom.weight @ (g1 * (c[:, 0, 0] + c[:, 1, 1] - 2 * c[:, 0, 1])))
            worst = max(worst, abs(float(audit.noise(arm)[0]) - binary))
        rows.append(Row.identity("Monte Carlo: max |N̂ - Σ w ||g1||² V̂ar(R1-R2 | I)| over arms", PROPOSITION, worst,
                                  tolerance * scale))
    return rows


def exact_ratio_grid(root: str, constructions: dict, cfr_iterations: int):
    """Exact rho_R and rho_G of every arm for several (continuation, root policy) constructions."""
    import pandas as pd

    out = []
    for name, (continuation, root_policy) in constructions.items():
        g = geometry(root, continuation, root_policy, cfr_iterations)
        rec = {"construction": name}
        for a in ARMS[1:]:
            rec[f"ρ_R {LABELS[a]}"] = g.exact_contrast_var(a) / g.exact_contrast_var("independent")
            rec[f"ρ_G {LABELS[a]}"] = g.exact_noise(a) / g.exact_noise("independent")
        g1 = np.einsum("nk,nk->n", g.jac[:, :, 0], g.jac[:, :, 0])
        rec["spread of ||g1(I)||² (max/min)"] = float(g1.max() / g1.min())
        out.append(rec)
    return pd.DataFrame(out).set_index("construction")


# --- realised updates ------------------------------------------------------------------------

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
    r = np.asarray(returns, dtype=np.float64)
    pi0 = geom.probs[info]
    direction = lag_direction(geom) if direction is None else direction
    start = np.log(pi0) + setting.lag * direction[info]
    theta = start.copy()
    clipped = np.zeros(len(r), dtype=np.int64)
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(setting.epochs):
            grad, active = clipped_surrogate_gradient(theta, pi0, r, setting.epsilon)
            clipped += (~active).sum(axis=1)
            theta = theta + setting.learning_rate * grad
        u = (theta - start) / (setting.learning_rate * setting.epochs)
        ratio = softmax(theta) / pi0
    return Updates(setting, u, clipped, ratio, finite_rows(u))


def finite_rows(u: np.ndarray) -> np.ndarray:
    """[n] bool: the group's update has only finite coordinates."""
    return np.isfinite(np.asarray(u, dtype=np.float64)).all(axis=1)


def finite_count(u: np.ndarray) -> int:
    """Number of groups whose update vector is finite in every coordinate."""
    return int(finite_rows(u).sum())


def ratio_quantiles(updates: list[Updates], q=QUANTILES) -> tuple[float, float]:
    r = np.concatenate([x.ratio[x.finite].reshape(-1) for x in updates])
    lo, hi = np.quantile(r, q)
    return float(lo), float(hi)


def clip_fraction(updates: list[Updates]) -> float:
    return float(sum(int(x.clipped.sum()) for x in updates) / sum(len(x.clipped) * x.terms_per_group
                                                                   for x in updates))


# --- stratified paired bootstrap ------------------------------------------------------------

class Resampled:
    """Per-information-state sums of several per-group columns, for the sample and each bootstrap replicate.

    Replicate 0 is the sample itself; replicates 1..R resample the groups of
    each information state with replacement (counter-based streams of
    ``stats.resample_counts``, one purpose per information state), the same
    multiset for every column, so arms collected with one seed stay paired.
    Stratum sizes are fixed (a stratified bootstrap), because the estimators
    weight information states by their root-law probability.
    """

    def __init__(self, info: np.ndarray, n_info: int, columns: dict[str, np.ndarray], squares: set[str],
                 n_bootstrap: int, seed: int, purpose: str, max_elements: int = 1 << 22) -> None:
        info = np.asarray(info)
        self.names = list(columns)
        self.width = {k: (v.shape[1] if v.ndim == 2 else 1) for k, v in columns.items()}
        self.squares = set(squares)
        self.n = np.bincount(info, minlength=n_info)
        if (self.n < 2).any():
            raise ValueError(f"every root information state needs at least two groups; got {self.n.tolist()}. "
                             "Increase the number of groups.")
        feats, slots, col = [], {}, 0
        for k in self.names:
            x = columns[k].reshape(len(info), -1).astype(np.float64)
            d = x.shape[1]
            parts = [x] + ([np.einsum("ni,nj->nij", x, x).reshape(len(x), d * d)] if k in self.squares else [])
            f = np.concatenate(parts, axis=1)
            slots[k] = (col, d)
            col += f.shape[1]
            feats.append(f)
        x = np.concatenate(feats, axis=1)
        self.slots = slots
        r = n_bootstrap + 1
        self.sums = np.zeros((r, n_info, x.shape[1]))
        for s in range(n_info):
            idx = np.flatnonzero(info == s)
            xs = x[idx]
            self.sums[0, s] = xs.sum(0)
            step = max(1, max_elements // len(idx))
            for start in range(0, n_bootstrap, step):
                reps = np.arange(start, min(start + step, n_bootstrap))
                w = stats.resample_counts(len(idx), reps, seed, f"{purpose}/info{s}").numpy().astype(np.float64)
                self.sums[1 + reps, s] = w @ xs
        self.replicates = n_bootstrap

    def total(self, name: str) -> np.ndarray:
        """[R+1, nI, d] sums of the column."""
        c, d = self.slots[name]
        return self.sums[:, :, c:c + d]

    def cov(self, name: str) -> np.ndarray:
        """[R+1, nI, d, d] unbiased covariance within each information state."""
        c, d = self.slots[name]
        s1 = self.sums[:, :, c:c + d]
        s2 = self.sums[:, :, c + d:c + d + d * d].reshape(*s1.shape[:2], d, d)
        n = self.n[None, :, None, None]
        return (s2 - np.einsum("rni,rnj->rnij", s1, s1) / n) / (n - 1)

    def pooled_cov(self, name: str) -> np.ndarray:
        """[R+1, d, d] unbiased covariance over all groups (information states pooled)."""
        c, d = self.slots[name]
        s1 = self.sums[:, :, c:c + d].sum(1)
        s2 = self.sums[:, :, c + d:c + d + d * d].sum(1).reshape(-1, d, d)
        n = self.n.sum()
        return (s2 - np.einsum("ri,rj->rij", s1, s1) / n) / (n - 1)


def estimate(values: np.ndarray, exact: float | None = None) -> Estimate:
    """Estimate from [R+1] values: index 0 the point estimate, the rest bootstrap replicates."""
    v = np.asarray(values, dtype=np.float64)
    lo, hi = stats.percentile_interval(v[1:])
    return Estimate(float(v[0]), lo, hi, None if exact is None else float(exact), stats.bootstrap_se(v[1:]))


def noise_estimate(geom: Geometry, returns: np.ndarray, info: np.ndarray) -> float:
    """Estimated N = sum_I w(I) tr(G(I) S(I) G(I)^T) with S(I) the sample covariance of the groups at I."""
    r = np.asarray(returns, dtype=np.float64)
    covs = []
    for k in range(len(geom.infos)):
        rows = r[info == k]
        if len(rows) < 2:
            raise ValueError(f"information state {geom.infos[k]} has {len(rows)} groups; at least two are needed.")
        covs.append(np.cov(rows, rowvar=False, ddof=1).reshape(r.shape[1], r.shape[1]))
    return float(geom.weight @ geom.noise_per_info(np.stack(covs)))


def update_noise_estimate(geom: Geometry, u: np.ndarray, info: np.ndarray) -> float:
    """U = sum_I w(I) tr Cov(u | I) of per-group update vectors."""
    u = np.asarray(u, dtype=np.float64)
    return float(sum(w * np.var(u[info == k], axis=0, ddof=1).sum() for k, w in enumerate(geom.weight)))


# --- the noise-transfer audit ------------------------------------------------------------------

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


@dataclass
class NoiseAudit:
    """Point estimates and paired bootstrap replicates of every arm's noise quantities at one setting grid."""

    geom: Geometry
    data: dict[str, ArmData]
    updates: dict[str, dict[str, Updates]]          # arm -> setting name -> Updates
    boot: Resampled
    selection: dict[int, str]

    @property
    def arms(self) -> list[str]:
        return list(self.data)

    def noise(self, arm: str) -> np.ndarray:
        """[R+1] N = sum_I w tr(G Sigma G^T)."""
        return self.geom.noise_per_info(self.boot.cov(f"R:{arm}")) @ self.geom.weight

    def update_noise(self, arm: str, setting: str) -> np.ndarray:
        """[R+1] U = sum_I w tr Cov(u | I)."""
        c = self.boot.cov(f"u:{arm}:{setting}")
        return np.einsum("rnii->rn", c) @ self.geom.weight

    def contrast_var(self, arm: str) -> np.ndarray:
        """[R+1] pooled Var(R_i - R_j)."""
        i, j = self.geom.pair
        c = self.boot.pooled_cov(f"R:{arm}")
        return c[:, i, i] + c[:, j, j] - 2 * c[:, i, j]

    def conditional_contrast_var(self, arm: str) -> np.ndarray:
        """[R+1] sum_I w Var(R_i - R_j | I)."""
        i, j = self.geom.pair
        c = self.boot.cov(f"R:{arm}")
        return (c[..., i, i] + c[..., j, j] - 2 * c[..., i, j]) @ self.geom.weight

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

    def ratio(self, quantity: str, arm: str, setting: str | None = None) -> Estimate:
        """rho_R ('return'), rho_G ('gradient') or rho_dtheta ('update', at `setting`) of arm over independent."""
        if quantity == "return":
            num, den = self.contrast_var(arm), self.contrast_var("independent")
            ex = self.exact_contrast_var(arm) / self.exact_contrast_var("independent")
        elif quantity == "gradient":
            num, den = self.noise(arm), self.noise("independent")
            ex = self.exact_noise(arm) / self.exact_noise("independent")
        elif quantity == "update":
            num, den = self.update_noise(arm, setting), self.update_noise("independent", setting)
            ex = None
        else:
            raise ValueError(f"unknown ratio {quantity!r}")
        return estimate(num / den, ex)


def run_audit(geom: Geometry, collections: dict, settings: list[UpdateSetting], selection: dict[int, str],
              n_bootstrap: int, seed: int, purpose: str) -> NoiseAudit:
    """Realised updates of every arm (and OSCC-Select's composite) at every setting, and their bootstrap."""
    data = {a: arm_data(geom, collections[a]) for a in ARMS}
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
    return NoiseAudit(geom, data, updates, boot, dict(selection))


# --- OSCC-Select on calibration blocks ----------------------------------------------------------

@dataclass
class Selection:
    selection: dict[int, str]
    certificates: dict[int, list[Certificate]]
    objective: dict[int, dict[str, float]]
    bound: dict[int, float]
    blocks: dict[int, int]
    pilot_blocks: int
    block_size: int
    delta: float
    n_comparisons: int

    def frame(self):
        import pandas as pd

        rows = []
        for z, certs in self.certificates.items():
            for c in certs:
                rows.append({"stratum": STRATA[z], "candidate": c.arm, "blocks": c.blocks,
                             "bound B": self.bound[z], "mean gain": c.mean_gain, "lower bound L": c.lower_bound,
                             "clipped scores": c.clipped_scores, "certified": "yes" if c.certified else "no",
                             "estimated noise": self.objective[z][c.arm],
                             "selected": "yes" if self.selection[z] == c.arm else ""})
            rows.append({"stratum": STRATA[z], "candidate": "independent", "blocks": self.blocks[z],
                         "bound B": self.bound[z], "mean gain": 0.0, "lower bound L": None, "clipped scores": None,
                         "certified": "fallback", "estimated noise": self.objective[z]["independent"],
                         "selected": "yes" if self.selection[z] == "independent" else ""})
        return pd.DataFrame(rows)


def _block_noise(returns: np.ndarray, gram: np.ndarray, block_size: int, n_blocks: int) -> np.ndarray:
    """[n_blocks] tr(G S G^T) of each block's sample covariance (consecutive groups of one information state)."""
    r = returns[:n_blocks * block_size].astype(np.float64).reshape(n_blocks, block_size, -1)
    dev = r - r.mean(1, keepdims=True)
    cov = np.einsum("kbi,kbj->kij", dev, dev) / (block_size - 1)
    return np.einsum("ij,kij->k", gram, cov)


#: Memory per physical draw of the matched-cost frontier (traced collections of every arm, upper estimate).
DRAW_BYTES = 1024


def group_bytes(lag_grid, learning_rate_grid) -> int:
    """Upper estimate of the memory per group of the noise audit: collections plus per-group updates of each setting.

    Measured on Leduc: about 4 KiB per group plus about 1 KiB per group for each update setting (the five fixed
    settings and one per lag and per learning rate of the grids).
    """
    return 4096 + 1024 * (5 + len(lag_grid) + len(learning_rate_grid))


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
                        bound_factor: float) -> Selection:
    """OSCC-Select per own-card stratum from calibration collections (module docstring)."""
    data = {a: arm_data(geom, collections[a]) for a in ARMS}
    info = data["independent"].info
    gram = geom.gram()
    strata = geom.stratum
    present = sorted(set(int(z) for z in strata))
    m_comp = 3 * len(present)
    selection, certificates, objective, bound, blocks = {}, {}, {}, {}, {}
    for z in present:
        members = [k for k in range(len(geom.infos)) if strata[k] == z]
        w = geom.weight[members] / geom.weight[members].sum()
        n_blocks = min(int((info == k).sum()) // block_size for k in members)
        if n_blocks < pilot_blocks + 2:
            raise ValueError(f"stratum {STRATA[z]} has {n_blocks} calibration blocks; at least {pilot_blocks + 2} "
                             "are needed (raise calibration_groups or lower block_size).")
        per_arm = {}
        for a in ARMS:
            rows = [_block_noise(data[a].returns[info == k], gram[k], block_size, n_blocks) for k in members]
            per_arm[a] = np.asarray(w) @ np.stack(rows)
        scores = {a: per_arm["independent"] - per_arm[a] for a in ARMS[1:]}
        b = bound_factor * max(float(np.abs(s[:pilot_blocks]).max()) for s in scores.values())
        b = b if b > 0 else 1.0
        certs = [certify(scores[a][pilot_blocks:], a, b, m_comp, delta) for a in ARMS[1:]]
        obj = {a: float(per_arm[a][pilot_blocks:].mean()) for a in ARMS}
        selection[z] = oscc_select(certs, obj)
        certificates[z], objective[z], bound[z], blocks[z] = certs, obj, b, n_blocks - pilot_blocks
    return Selection(selection, certificates, objective, bound, blocks, pilot_blocks, block_size, delta, m_comp)


# --- matched physical cost ------------------------------------------------------------------------

def group_costs(root: str, arm: str, n_groups: int, seed: int, continuation, device,
                game: str = GAME) -> tuple[np.ndarray, np.ndarray, object]:
    """Per-group physical draws and transitions [n] from the collector's trace (and the collection).

    Draws: root (1, or 2 when the public card belongs to the root), hidden
    (1 shared or one per branch), chance (per branch, or once per semantic
    event when shared) and policy (one per decision).  Transitions: per
    branch, its forced root action, every decision and every chance deal.
    The totals are checked against the collection's own ledger.
    """
    trace: list = []
    col = collect(game, root, arm, n_groups, seed, continuation, device, trace=trace)
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
    arm: str
    groups: int
    draws: int
    transitions: int
    wall_time: float
    contrast_var: Estimate
    noise: Estimate
    mean_noise: Estimate          # N / groups: the variance (trace) of the batch-mean gradient
    draws_per_group: float


def _timed(fn, repeats: int) -> float:
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def frontier(geom: Geometry, audit: NoiseAudit, budget: int, seed: int, device, n_bootstrap: int,
             setting: UpdateSetting, repeats: int = 3) -> dict[str, FrontierArm]:
    """Every arm (and OSCC-Select) at equal physical draws: groups, draws, transitions, wall time, noise.

    Each arm's groups are the prefix of a collection (split ``audit``, run
    `seed`) whose per-group draws add up to at most `budget`.  Wall time is
    the best of `repeats` runs of collecting that prefix and computing its
    realised updates at `setting` (after one warm-up run).  OSCC-Select uses,
    for a group of stratum z, the arm selected for z (its draws, transitions
    and returns); its wall time is the selected arms' times weighted by their
    share of the groups.  Intervals: a stratified bootstrap per arm.
    """
    root = geom.root.history
    cont = geom.continuation
    per_group = {a: sum(audit.data[a].draws.values()) / len(audit.data[a].info) for a in ARMS}
    n_trace = int(math.ceil(1.3 * budget / min(per_group.values()))) + 16
    while True:
        traced = {a: group_costs(root, a, n_trace, seed, cont, device) for a in ARMS}
        if all(int(t[0].sum()) > budget for t in traced.values()):
            break
        n_trace *= 2
    data = {a: arm_data(geom, t[2]) for a, t in traced.items()}
    direction = lag_direction(geom)

    def batch(arm, k):
        d = arm_data(geom, collect(GAME, root, arm, k, seed, cont, device))
        realised_updates(d.returns, d.info, geom, setting, direction)
        return d

    def summarise(arm, returns, info, draws, trans, wall):
        k = len(info)
        boot = Resampled(info, len(geom.infos), {"R": returns}, {"R"}, n_bootstrap, seed, f"frontier/{arm}")
        n = geom.noise_per_info(boot.cov("R")) @ geom.weight
        i, j = geom.pair
        c = boot.pooled_cov("R")
        v = c[:, i, i] + c[:, j, j] - 2 * c[:, i, j]
        ex_n, ex_v = audit.exact_noise(arm), audit.exact_contrast_var(arm)
        return FrontierArm(arm, k, int(draws), int(trans), wall, estimate(v, ex_v), estimate(n, ex_n),
                           estimate(n / k, ex_n / k), float(draws) / k)

    out = {}
    for a in ARMS:
        draws, trans, _ = traced[a]
        k = matched_groups(draws, budget)
        batch(a, k)                                   # warm-up
        wall = _timed(lambda a=a, k=k: batch(a, k), repeats)
        if not np.array_equal(batch(a, k).returns, data[a].returns[:k]):
            raise AssertionError("a matched-cost batch differs from the prefix of the longer collection.")
        out[a] = summarise(a, data[a].returns[:k], data[a].info[:k], draws[:k].sum(), trans[:k].sum(), wall)
    info = data["independent"].info
    z = geom.stratum[info]
    sel_draws = np.zeros(len(info), dtype=np.int64)
    sel_trans = np.zeros(len(info), dtype=np.int64)
    for s, arm in audit.selection.items():
        rows = z == s
        sel_draws[rows] = traced[arm][0][rows]
        sel_trans[rows] = traced[arm][1][rows]
    k = matched_groups(sel_draws, budget)
    mixed = composite(data, geom, audit.selection)
    wall = 0.0
    for arm in sorted(set(audit.selection.values())):
        share = float(np.isin(z[:k], [s for s, a in audit.selection.items() if a == arm]).mean())
        batch(arm, k)
        wall += share * _timed(lambda arm=arm: batch(arm, k), repeats)
    out[SELECT] = summarise(SELECT, mixed.returns[:k], mixed.info[:k], sel_draws[:k].sum(), sel_trans[:k].sum(),
                            wall)
    return out


# --- comparison rows -----------------------------------------------------------------------------

def _ordered(values: dict[str, float]) -> bool:
    """independent > root_only > continuation_only > full (the paper's ordering of the fixed arms)."""
    v = [values[a] for a in ARMS]
    return all(x > y for x, y in zip(v, v[1:]))


def noise_transfer_rows(audit: NoiseAudit, setting: str) -> list[dict]:
    """tab:noise-transfer: return, gradient and update ratios, clip fraction and finite gradients per arm.

    Direction: a ratio below 1 with the fixed arms in the paper's order
    (root-only > continuation-only > full); for OSCC-Select, a ratio whose
    interval reaches down to the lowest fixed arm.  Clip fraction: clipping
    is active (> 0) at the noise-transfer setting, as in the paper.
    """
    rows = []
    for q, col in (("return", "return_ratio"), ("gradient", "gradient_ratio"), ("update", "update_ratio")):
        est = {a: audit.ratio(q, a, setting) for a in ROW_ARMS}
        order = _ordered({a: est[a].value for a in ARMS})
        for a in ROW_ARMS:
            if a == "independent":
                d = True
            elif a == SELECT:
                d = est[a].value < 1 and est[a].low <= min(est[b].value for b in ARMS)
            else:
                d = est[a].value < 1 and order
            rows.append(Row.estimate(f"{LABELS[a]}: {q} ratio", f"noise_transfer.{PAPER_KEY[a]}.{col}", est[a], d))
    for a in ROW_ARMS:
        cf = estimate(audit.clip_fraction(a, setting))
        rows.append(Row.estimate(f"{LABELS[a]}: clip fraction", f"noise_transfer.{PAPER_KEY[a]}.clip_fraction", cf,
                         cf.value > 0))
    for a in ROW_ARMS:
        u = audit.updates[a][setting]
        rows.append(Row.all_finite(f"{LABELS[a]}: finite gradients", f"noise_transfer.{PAPER_KEY[a]}.finite_gradients",
                               int(u.finite.sum()), len(u.finite)))
    return rows


def noise_transfer_frame(audit: NoiseAudit, setting: str, digits: int = 3):
    """The paper's table layout: one row per arm, ours with 95% intervals."""
    import pandas as pd

    out = []
    for a in ROW_ARMS:
        rec = {"arm": LABELS[a]}
        for q, label in (("return", "return ratio ρ_R"), ("gradient", "gradient ratio ρ_G"),
                         ("update", "update ratio ρ_Δθ")):
            e = audit.ratio(q, a, setting)
            rec[label] = f"{e.value:.{digits}f} [{e.low:.{digits}f}, {e.high:.{digits}f}]"
            if e.exact is not None:
                rec[label] += f" (exact {e.exact:.{digits}f})"
        rec["clip fraction"] = f"{estimate(audit.clip_fraction(a, setting)).value:.{digits}f}"
        u = audit.updates[a][setting]
        rec["finite gradients"] = f"{int(u.finite.sum()):,}/{len(u.finite):,}"
        out.append(rec)
    return pd.DataFrame(out).set_index("arm")


def update_variance(audit: NoiseAudit, arm: str, settings: list[str]) -> Estimate:
    """Mean update noise U over a grid of settings (replicates averaged the same way)."""
    return estimate(np.mean([audit.update_noise(arm, s) for s in settings], axis=0))


CLIPPING_ROWS = {"connectivity control": "connectivity_control", "behaviour-lag grid": "behavior_lag_grid",
                 "learning-rate grid": "learning_rate_grid", "activated stress": "activated_stress"}


def clipping_rows(audit: NoiseAudit, groups: dict[str, list[str]], arm: str = "full") -> list[dict]:
    """tab:app-p1-clipping: ratio quantiles, clip-selected fraction, finite gradients, update variance.

    ``groups`` maps each paper row ("connectivity control", "behaviour-lag
    grid", ...) to the setting names pooled into it.  Update variance is the
    coupled (`arm`) update noise averaged over the row's settings.
    Directions: ratio quantiles straddle 1; the connectivity control has no
    clipping and the lowest update variance; each stress row clips (> 0) and
    has a larger update variance than the control.  Finite gradients: the
    paper prints a count of gradients that were all finite; a row reproduces
    when all of ours are finite too.
    """
    rows = []
    control = update_variance(audit, arm, groups["connectivity control"]).value
    stressed = [update_variance(audit, arm, groups[k]).value for k in CLIPPING_ROWS if k != "connectivity control"]
    for label, key in CLIPPING_ROWS.items():
        names = groups[label]
        ups = [audit.updates[a][s] for a in ("independent", arm) for s in names]
        lo, hi = ratio_quantiles(ups)
        p_lo, p_hi = (float(x) for x in claims.claim(f"clipping.{key}.ratio_quantiles"))
        close = abs(lo - p_lo) <= 0.05 * abs(p_lo) and abs(hi - p_hi) <= 0.05 * abs(p_hi)
        straddle = lo <= 1 <= hi
        rows.append({"quantity": f"{label}: ratio quantiles (2.5%, 97.5%)", "paper": f"[{p_lo:g}, {p_hi:g}]",
                     "ours": f"[{lo:.4f}, {hi:.4f}]", "95% interval": None, "exact": None,
                     "verdict": claims.REPRODUCED if close else (claims.PARTLY if straddle else claims.NOT_REPRODUCED),
                     "claim id": f"clipping.{key}.ratio_quantiles"})
        cf = estimate(np.mean([audit.clip_fraction(a, s) for a in ("independent", arm) for s in names], axis=0))
        is_control = key == "connectivity_control"
        rows.append(Row.estimate(f"{label}: clip-selected fraction", f"clipping.{key}.clip_selected_fraction", cf,
                         (cf.value == 0) if is_control else (cf.value > 0)))
        fin = sum(int(u.finite.sum()) for u in ups)
        tot = sum(len(u.finite) for u in ups)
        rows.append({"quantity": f"{label}: finite gradients", "paper": f"{int(claims.claim(f'clipping.{key}.finite_gradients')):,}",
                     "ours": f"{fin:,}/{tot:,}", "95% interval": None, "exact": None,
                     "verdict": claims.REPRODUCED if fin == tot else claims.NOT_REPRODUCED,
                     "claim id": f"clipping.{key}.finite_gradients"})
        uv = update_variance(audit, arm, names)
        if is_control:
            uv = Estimate(uv.value, uv.low, uv.high, audit.exact_noise(arm), uv.se)
        d = (control < min(stressed)) if is_control else uv.value > control
        rows.append(Row.estimate(f"{label}: update variance ({LABELS[arm]})", f"clipping.{key}.update_variance", uv, d))
    return rows


def clipping_frame(audit: NoiseAudit, settings: list[UpdateSetting], digits: int = 4):
    """Every setting: its parameters, clip fraction, ratio quantiles and the update noise of each arm."""
    import pandas as pd

    out = []
    for s in settings:
        ups = [audit.updates[a][s.name] for a in ("independent", "full")]
        lo, hi = ratio_quantiles(ups)
        rec = {"setting": s.name, "ε": "∞" if not math.isfinite(s.epsilon) else f"{s.epsilon:g}",
               "lag": f"{s.lag:g}", "η": f"{s.learning_rate:g}", "epochs": s.epochs,
               "ratio quantiles": f"[{lo:.3f}, {hi:.3f}]",
               "clip fraction (ind / full)": f"{estimate(audit.clip_fraction('independent', s.name)).value:.3f} / "
                                              f"{estimate(audit.clip_fraction('full', s.name)).value:.3f}"}
        for a in ARMS:
            rec[f"U {LABELS[a]}"] = f"{estimate(audit.update_noise(a, s.name)).value:.{digits}f}"
        raw = (s.learning_rate * s.epochs) ** 2 * estimate(audit.update_noise("full", s.name)).value
        rec["Var Δθ full, raw (×1e3)"] = f"{1e3 * raw:.{digits}f}"
        r = audit.ratio("update", "full", s.name)
        rec["ρ_Δθ full [95%]"] = f"{r.value:.3f} [{r.low:.3f}, {r.high:.3f}]"
        out.append(rec)
    return pd.DataFrame(out).set_index("setting")


def frontier_rows(front: dict[str, FrontierArm]) -> list[dict]:
    """tab:physical-cost-frontier: calls, transitions, wall time (not compared), contrast variance, noise trace."""
    rows = []
    order_v = _ordered({a: front[a].contrast_var.value for a in ARMS})
    order_n = _ordered({a: front[a].noise.value for a in ARMS})
    for a in ROW_ARMS:
        f = front[a]
        key = f"cost_frontier.{PAPER_KEY[a]}"
        rows.append(Row.compare(f"{LABELS[a]}: physical draws", f"{key}.physical_calls", f.draws,
                                   exact=None))
        rows.append(Row.compare(f"{LABELS[a]}: transitions", f"{key}.transitions", f.transitions,
                                   direction_agrees=None))
        rows.append({"quantity": f"{LABELS[a]}{WALL_TIME}", "paper": claims.claim(f"{key}.wall_time"),
                     "ours": f"{f.wall_time:.2f} s", "95% interval": None, "exact": None, "verdict": NOT_COMPARED,
                     "claim id": f"{key}.wall_time"})
        sel_v = f.contrast_var.value <= min(front[b].contrast_var.value for b in ARMS) or \
            f.contrast_var.low <= min(front[b].contrast_var.value for b in ARMS)
        sel_n = f.noise.low <= min(front[b].noise.value for b in ARMS)
        rows.append(Row.estimate(f"{LABELS[a]}: contrast variance", f"{key}.contrast_variance", f.contrast_var,
                         (sel_v if a == SELECT else order_v)))
        rows.append(Row.estimate(f"{LABELS[a]}: gradient-noise trace", f"{key}.gradient_noise_trace", f.noise,
                         (sel_n if a == SELECT else order_n)))
    return rows


def frontier_frame(front: dict[str, FrontierArm], digits: int = 4):
    import pandas as pd

    return pd.DataFrame([{
        "arm": LABELS[a], "groups": f"{f.groups:,}", "physical draws": f"{f.draws:,}",
        "draws per group": f"{f.draws_per_group:.3f}", "transitions": f"{f.transitions:,}",
        "wall time": f"{f.wall_time:.2f} s",
        "contrast variance [95%]": f"{f.contrast_var.value:.2f} [{f.contrast_var.low:.2f}, {f.contrast_var.high:.2f}]",
        "noise trace N [95%]": f"{f.noise.value:.{digits}f} [{f.noise.low:.{digits}f}, {f.noise.high:.{digits}f}]",
        "exact N": f"{f.noise.exact:.{digits}f}",
        "N / groups (×1e4)": f"{1e4 * f.mean_noise.value:.{digits}f}",
        "exact N / groups (×1e4)": f"{1e4 * f.mean_noise.exact:.{digits}f}",
    } for a, f in front.items()]).set_index("arm")


def plot_noise_transfer(audit: NoiseAudit, setting: str, title: str):
    """Grouped bars: return, gradient and update ratios per arm with 95% intervals and the paper's values."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8.5, 4.2), dpi=100)
    x = np.arange(len(ROW_ARMS))
    width = 0.26
    colours = {"return": "#7aa6c2", "gradient": "#e3a857", "update": "#8fbf7f"}
    names = {"return": "return ratio ρ_R", "gradient": "gradient ratio ρ_G", "update": "update ratio ρ_Δθ"}
    cols = {"return": "return_ratio", "gradient": "gradient_ratio", "update": "update_ratio"}
    for k, q in enumerate(("return", "gradient", "update")):
        est = [audit.ratio(q, a, setting) for a in ROW_ARMS]
        v = np.array([e.value for e in est])
        err = np.array([[e.value - e.low for e in est], [e.high - e.value for e in est]])
        pos = x + (k - 1) * width
        ax.bar(pos, v, width, color=colours[q], label=f"ours: {names[q]}")
        ax.errorbar(pos, v, yerr=err, fmt="none", ecolor="black", capsize=2, lw=0.8)
        ax.scatter(pos, [float(claims.claim(f"noise_transfer.{PAPER_KEY[a]}.{cols[q]}")) for a in ROW_ARMS],
                   marker="x", color="#c0392b", s=40, zorder=3, label="paper" if k == 0 else None)
    ax.axhline(1.0, color="grey", lw=0.8, ls=":")
    ax.set_xticks(x, [LABELS[a] for a in ROW_ARMS])
    ax.set_xlabel("coupling arm")
    ax.set_ylabel("noise relative to independent (unitless)")
    ax.set_ylim(0, 1.2)
    ax.set_title(title)
    ax.legend(loc="lower left", fontsize=8, ncol=2)
    fig.tight_layout()
    return fig


def plot_frontier(front: dict[str, FrontierArm], budget: int, title: str):
    """Two panels: per-group noise trace against physical draws per group, and batch-mean noise at the budget."""
    import matplotlib.pyplot as plt

    colours = {"independent": "#7f7f7f", "root_only": "#7aa6c2", "continuation_only": "#e3a857",
               "full": "#2e6f9e", SELECT: "#8e44ad"}
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2), dpi=100)
    for a, f in front.items():
        e = f.noise
        left.errorbar([f.draws_per_group], [e.value], yerr=[[e.value - e.low], [e.high - e.value]], fmt="o",
                      color=colours[a], capsize=3, ms=5, label=LABELS[a])
        left.scatter([f.draws_per_group], [e.exact], marker="D", facecolors="none", edgecolors="black", s=30,
                     zorder=3)
    left.scatter([], [], marker="D", facecolors="none", edgecolors="black", label="exact")
    left.set_xlabel("physical draws per group")
    left.set_ylabel("gradient-noise trace N per group\n(chips² per logit²)")
    left.set_title("per-group noise against per-group cost", fontsize=10)
    left.legend(fontsize=7, loc="lower right")
    x = np.arange(len(front))
    est = [f.mean_noise for f in front.values()]
    v = np.array([1e4 * e.value for e in est])
    err = np.array([[1e4 * (e.value - e.low) for e in est], [1e4 * (e.high - e.value) for e in est]])
    right.bar(x, v, color=[colours[a] for a in front])
    right.errorbar(x, v, yerr=err, fmt="none", ecolor="black", capsize=3, lw=0.8)
    right.scatter(x, [1e4 * e.exact for e in est], marker="D", facecolors="none", edgecolors="black", s=30,
                  zorder=3, label="exact")
    right.set_xticks(x, [LABELS[a].replace(" ", "\n", 1) for a in front], fontsize=8)
    right.set_ylabel("N / groups at the budget (×1e-4)")
    right.set_title(f"batch-mean gradient noise at {budget:,} draws per arm", fontsize=10)
    right.legend(fontsize=7, loc="upper right")
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


# --- the scalar clipped-surrogate screen -----------------------------------------------------------

@dataclass
class ScreenResult:
    """One (seed, arm) run of the screen."""

    seed: int
    arm: str
    delta_p: float                 # root-law-weighted change of P(Call) at the root information states
    gradients: int                 # batch gradients evaluated (iterations x epochs)
    finite_nonzero: int            # of which finite and not all zero
    clipped_terms: int             # clip-selected (group, action, epoch) terms
    terms: int
    ratio_range: tuple[float, float]


def scalar_screen(geom: Geometry, arm: str, seed: int, iterations: int, groups: int, epochs: int,
                  learning_rate: float, epsilon: float, device="cpu", split: str = "train") -> ScreenResult:
    """A short clipped-surrogate learning run of the root policy on frozen-continuation returns.

    The root policy theta_I starts at log pi0(I).  Iteration t takes the next
    `groups` comparison groups of a collection (split ``train``, run `seed`),
    freezes the behaviour policy at the current theta, and takes `epochs`
    gradient-ascent steps of size `learning_rate` on the batch mean of the
    groups' clipped surrogates (each group moves only its own I's logits).
    Only the root policy learns, so the continuation, and with it the law of
    the returns, is fixed: one collection of iterations x groups groups
    serves the whole run.  Reports the change of P(Call | I) averaged with the
    root-law weights, the number of batch gradients and how many were finite
    and non-zero, the clip-selected terms and the range of the ratios seen.
    """
    col = collect(GAME, geom.root.history, arm, iterations * groups, seed, geom.continuation, device, split=split)
    d = arm_data(geom, col)
    n_info, m = geom.probs.shape
    call = geom.actions.index("Call")
    theta = np.log(geom.probs).copy()
    start = softmax(theta)[:, call]
    n_grad = n_ok = clipped = 0
    lo, hi = math.inf, -math.inf
    for t in range(iterations):
        rows = slice(t * groups, (t + 1) * groups)
        info, r = d.info[rows], d.returns[rows].astype(np.float64)
        behaviour = softmax(theta)[info]
        for _ in range(epochs):
            grad, active = clipped_surrogate_gradient(theta[info], behaviour, r, epsilon)
            ratio = softmax(theta[info]) / behaviour
            lo, hi = min(lo, float(ratio.min())), max(hi, float(ratio.max()))
            batch = np.zeros_like(theta)
            np.add.at(batch, info, grad / groups)
            n_grad += 1
            n_ok += int(np.isfinite(batch).all() and np.abs(batch).sum() > 0)
            clipped += int((~active).sum())
            theta = theta + learning_rate * batch
    delta = float(geom.weight @ (softmax(theta)[:, call] - start))
    return ScreenResult(seed, arm, delta, n_grad, n_ok, clipped, iterations * groups * m * epochs, (lo, hi))


def screen_rows(results: list[ScreenResult]) -> tuple[list[dict], dict]:
    """The paper's scalar-screen prose: mean P(Call) change per arm (5-seed t interval), gradients, clipping."""
    from statistics import mean, stdev

    out, summary = [], {}
    by_arm = {}
    for r in results:
        by_arm.setdefault(r.arm, []).append(r)
    t975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}
    for arm, label in (("full", "paired"), ("independent", "independent")):
        rs = by_arm[arm]
        v = [r.delta_p for r in rs]
        m = mean(v)
        half = t975.get(len(v) - 1, 1.96) * stdev(v) / math.sqrt(len(v)) if len(v) > 1 else float("nan")
        summary[arm] = {"delta_p_mean": m, "low": m - half, "high": m + half, "per_seed": v}
        out.append(Row.compare(f"{LABELS[arm]}: mean change of P(check) over the screen",
                                  f"text_bounded.scalar_screen.{label}.check_prob_delta", m, m - half, m + half,
                                  m > 0))
    grads = sum(r.gradients for r in results)
    ok = sum(r.finite_nonzero for r in results)
    clipped = sum(r.clipped_terms for r in results)
    out.append(Row.compare("finite non-zero batch gradients (both arms, all seeds)",
                              "text_bounded.scalar_screen.finite_nonzero_gradients", ok, direction_agrees=ok == grads))
    paper_clip = claims.claim("text_bounded.scalar_screen.selected_clipping")
    out.append({"quantity": "clip-selected terms (both arms, all seeds)", "paper": paper_clip, "ours": clipped,
                "95% interval": None, "exact": None,
                "verdict": claims.REPRODUCED if clipped == int(paper_clip) else claims.NOT_REPRODUCED,
                "claim id": "text_bounded.scalar_screen.selected_clipping"})
    summary.update({"gradients": grads, "finite_nonzero": ok, "clipped_terms": clipped,
                    "terms": sum(r.terms for r in results),
                    "ratio_range": [min(r.ratio_range[0] for r in results), max(r.ratio_range[1] for r in results)]})
    return out, summary


# --- display and results -----------------------------------------------------------------------

def geometry_frame(geom: Geometry, digits: int = 4):
    """One row per root information state: weight, root policy, ||g_i||^2 and the exact N(Gamma; I) of each arm."""
    import pandas as pd

    gram = geom.gram()
    rows = []
    for k, (own, pub) in enumerate(geom.infos):
        rec = {"own card": own, "class": STRATA[own // 2], "public card": "—" if pub < 0 else pub,
               "root-law weight": f"{geom.weight[k]:.4f}",
               "π0": "(" + ", ".join(f"{a} {p:.3f}" for a, p in zip(geom.actions, geom.probs[k])) + ")",
               "tr(GᵀG)": f"{np.trace(gram[k]):.{digits}f}"}
        for a in ARMS:
            rec[f"N {LABELS[a]}"] = f"{geom.exact_noise(a, per_info=True)[k]:.{digits}f}"
        rows.append(rec)
    return pd.DataFrame(rows).set_index(["own card", "public card"])


def _setting_record(audit: NoiseAudit, s: UpdateSetting) -> dict:
    rec = {"setting": s.as_dict(), "arms": {}}
    for a in ROW_ARMS:
        u = audit.updates[a][s.name]
        lo, hi = ratio_quantiles([u])
        rec["arms"][a] = {"update_noise": estimate(audit.update_noise(a, s.name)).as_dict(),
                          "update_ratio": audit.ratio("update", a, s.name).as_dict(),
                          "clip_fraction": estimate(audit.clip_fraction(a, s.name)).as_dict(),
                          "finite_gradients": int(u.finite.sum()), "groups": len(u.finite),
                          "ratio_quantiles": [lo, hi]}
    return rec


def results_payload(geom: Geometry, audit: NoiseAudit, settings: list[UpdateSetting], main: str,
                    selection: Selection, front: dict[str, FrontierArm], screen: dict, grid, tables) -> dict:
    """Everything the notebook reports, JSON-ready (wall times are machine-dependent, marked as such)."""
    arms = {}
    for a in ROW_ARMS:
        d = audit.data[a]
        arms[a] = {
            "groups": len(d.info),
            "noise_trace": estimate(audit.noise(a), audit.exact_noise(a)).as_dict(),
            "contrast_var": estimate(audit.contrast_var(a), audit.exact_contrast_var(a)).as_dict(),
            "conditional_contrast_var": estimate(audit.conditional_contrast_var(a)).as_dict(),
            "return_ratio": audit.ratio("return", a).as_dict(),
            "gradient_ratio": audit.ratio("gradient", a).as_dict(),
            "update_ratio": audit.ratio("update", a, main).as_dict(),
            "physical_draws": d.draws or None,
        }
    return {
        "root": geom.root.history, "actions": geom.actions, "contrast": [geom.actions[i] for i in geom.pair],
        "root_policy": geom.root_policy, "root_policy_floored_entries": geom.floored,
        "information_states": [{"own_card": o, "public_card": p, "weight": w, "root_policy": pr.tolist(),
                                "exact_noise": {a: geom.exact_noise(a, per_info=True)[k] for a in ARMS}}
                               for k, ((o, p), w, pr) in enumerate(zip(geom.infos, geom.weight, geom.probs))],
        "arms": arms,
        "noise_transfer_setting": main,
        "settings": {s.name: _setting_record(audit, s) for s in settings},
        "selection": {"strata": {STRATA[z]: a for z, a in selection.selection.items()},
                      "block_size": selection.block_size, "pilot_blocks": selection.pilot_blocks,
                      "delta": selection.delta, "n_comparisons": selection.n_comparisons,
                      "certificates": {STRATA[z]: [{"arm": c.arm, "blocks": c.blocks, "mean_gain": c.mean_gain,
                                                    "lower_bound": c.lower_bound, "clipped_scores": c.clipped_scores,
                                                    "certified": c.certified} for c in certs]
                                       for z, certs in selection.certificates.items()},
                      "bound": {STRATA[z]: b for z, b in selection.bound.items()},
                      "objective": {STRATA[z]: o for z, o in selection.objective.items()}},
        "physical_cost_frontier": {a: {"groups": f.groups, "physical_draws": f.draws, "transitions": f.transitions,
                                       "draws_per_group": f.draws_per_group,
                                       "contrast_var": f.contrast_var.as_dict(), "noise_trace": f.noise.as_dict(),
                                       "batch_mean_noise": f.mean_noise.as_dict()} for a, f in front.items()},
        "scalar_screen": screen,
        "exact_ratio_grid": grid.reset_index().to_dict(orient="records"),
        # wall time varies from run to run; it is shown in the chapter, never written to the results file
        "tables": {k: rows_record([r for r in v if not r["quantity"].endswith(WALL_TIME)]) for k, v in tables.items()},
    }
