"""Estimator statistics: paired root bootstrap, marginal equivalence, variance identity.

Units: returns are the acting player's utility in chips; means and mean
differences are in chips, variances and covariances in chips^2, ratios are
unitless.

The bootstrap resamples *groups* (comparison roots).  Arms collected with the
same seed draw the same root in group g, so they are paired by group id and
are resampled jointly: one multiset of group indices per replicate is applied
to every arm.  Resampling arms separately would throw away the covariance
between arms that a paired comparison is designed to keep.

Every resampling index comes from the counter-based stream
``rng.derive_key("bootstrap", run=seed, purpose=..., replicate=r)``, drawn at
counter i for the i-th index, so the replicates depend only on
``(seed, purpose, n, replicate)``: never on chunking, device or the order of
computation.  Bootstrap sums are computed as integer-valued float64 matrix
products (exact below 2**53), so every statistic is bit-for-bit repeatable.
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Mapping, Sequence

import numpy as np
import torch

from oscc_core.device import HOST
from oscc_core.engine import rng

#: Default cap on replicate x group elements held in memory at once.
MAX_ELEMENTS = 1 << 22


def purpose_id(purpose: str) -> int:
    """A stable non-negative 62-bit integer naming a bootstrap purpose (the key's ``purpose`` field)."""
    if not isinstance(purpose, str) or not purpose:
        raise ValueError(f"purpose must be a non-empty string, got {purpose!r}.")
    return int.from_bytes(hashlib.sha256(f"oscc/bootstrap/{purpose}".encode()).digest()[:8], "little") >> 2


def resample_indices(n: int, replicates: Sequence[int] | torch.Tensor, seed: int, purpose: str) -> torch.Tensor:
    """Group indices [R, n] drawn uniformly with replacement from 0..n-1, one row per replicate id.

    Index i of replicate r is ``(top 32 bits of uniform_bits(key_r, i)) * n >> 32``:
    an integer multiply-shift, so no floating-point rounding enters.
    """
    if not 1 <= n < 2 ** 31:
        raise ValueError(f"the number of groups must be in [1, 2**31), got {n}.")
    dev = replicates.device if isinstance(replicates, torch.Tensor) else HOST
    reps = torch.as_tensor(replicates, dtype=torch.int64, device=dev).reshape(-1)
    keys = rng.derive_key("bootstrap", run=int(seed), purpose=purpose_id(purpose), replicate=reps)
    bits = rng.uniform_bits(keys[:, None], torch.arange(n, dtype=torch.int64, device=dev)[None, :])  # 53-bit
    return ((bits >> 21) * n) >> 32


def resample_counts(n: int, replicates: Sequence[int] | torch.Tensor, seed: int, purpose: str) -> torch.Tensor:
    """Multiplicity of every group in each replicate, [R, n] int64 (rows sum to n)."""
    idx = resample_indices(n, replicates, seed, purpose)
    r = idx.shape[0]
    flat = idx + torch.arange(r, dtype=torch.int64, device=idx.device)[:, None] * n
    return torch.bincount(flat.reshape(-1), minlength=r * n).view(r, n)


def _features(returns: torch.Tensor) -> torch.Tensor:
    """[n, B + B(B+1)/2] float64: the returns and their pairwise products (upper triangle)."""
    r = returns.to(torch.int64)
    b = r.shape[1]
    cols = [r[:, i] for i in range(b)] + [r[:, i] * r[:, j] for i in range(b) for j in range(i, b)]
    x = torch.stack(cols, dim=1)
    if int(x.abs().max()) * r.shape[0] >= 2 ** 53:
        raise ValueError("returns are too large for exact float64 bootstrap sums.")
    return x.to(torch.float64)


def _moments_from_sums(s1: np.ndarray, s2: np.ndarray, n: int, b: int) -> tuple[np.ndarray, np.ndarray]:
    """Means [R, B] and unbiased covariances [R, B, B] from sums [R, B] and upper-triangle products."""
    mean = s1 / n
    prod = np.zeros((s1.shape[0], b, b))
    k = 0
    for i in range(b):
        for j in range(i, b):
            prod[:, i, j] = prod[:, j, i] = s2[:, k]
            k += 1
    cov = (prod - np.einsum("ri,rj->rij", s1, s1) / n) / (n - 1)
    return mean, cov


@dataclass(frozen=True)
class BootstrapMoments:
    """Per-replicate branch means [R, B] (chips) and covariances [R, B, B] (chips^2), per arm."""

    n: int
    replicates: int
    seed: int
    purpose: str
    mean: dict[str, np.ndarray]
    cov: dict[str, np.ndarray]

    def contrast_var(self, arm: str, i: int = 0, j: int = 1) -> np.ndarray:
        """Var(R_i - R_j) per replicate, chips^2."""
        c = self.cov[arm]
        return c[:, i, i] + c[:, j, j] - 2 * c[:, i, j]

    def covariance(self, arm: str, i: int = 0, j: int = 1) -> np.ndarray:
        """Cov(R_i, R_j) per replicate, chips^2."""
        return self.cov[arm][:, i, j]

    def variance_ratio(self, numerator: str, denominator: str, i: int = 0, j: int = 1) -> np.ndarray:
        """Contrast-variance ratio numerator / denominator per replicate (unitless)."""
        return self.contrast_var(numerator, i, j) / self.contrast_var(denominator, i, j)

    def mean_difference(self, arm: str, reference: str, branch: int) -> np.ndarray:
        """Branch-mean difference arm minus reference per replicate, chips."""
        return self.mean[arm][:, branch] - self.mean[reference][:, branch]


def paired_bootstrap(returns: Mapping[str, torch.Tensor], n_bootstrap: int, seed: int, purpose: str,
                     max_elements: int = MAX_ELEMENTS) -> BootstrapMoments:
    """Paired root bootstrap of branch means and covariances for several arms.

    returns       arm -> [n, B] integer returns (chips), row g of every arm = the same root group
    n_bootstrap   number of replicates
    seed, purpose name the bootstrap stream; the same values give the same replicates

    All arms are resampled with the same group multiset in each replicate.
    Replicates are processed in chunks of at most ``max_elements`` indices;
    the result does not depend on the chunk size.
    """
    if not returns:
        raise ValueError("give the returns of at least one arm.")
    shapes = {tuple(r.shape[:1]) for r in returns.values()}
    if len(shapes) != 1:
        raise ValueError(f"paired arms must have the same number of groups, got {sorted(shapes)}.")
    n = int(next(iter(returns.values())).shape[0])
    if n < 2:
        raise ValueError("the bootstrap needs at least two groups.")
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, int) or n_bootstrap < 1:
        raise ValueError(f"n_bootstrap must be an integer >= 1, got {n_bootstrap!r}.")
    names = list(returns)
    feats = [_features(returns[a].cpu()) for a in names]
    widths = [f.shape[1] for f in feats]
    branches = [int(returns[a].shape[1]) for a in names]
    x = torch.cat(feats, dim=1)
    step = max(1, max_elements // n)
    sums = []
    for start in range(0, n_bootstrap, step):
        reps = torch.arange(start, min(start + step, n_bootstrap), dtype=torch.int64, device=HOST)
        w = resample_counts(n, reps, seed, purpose).to(torch.float64)
        sums.append((w @ x).numpy())
    s = np.concatenate(sums, axis=0)
    means, covs, col = {}, {}, 0
    for a, width, b in zip(names, widths, branches):
        block = s[:, col:col + width]
        means[a], covs[a] = _moments_from_sums(block[:, :b], block[:, b:], n, b)
        col += width
    return BootstrapMoments(n=n, replicates=n_bootstrap, seed=int(seed), purpose=purpose, mean=means, cov=covs)


def percentile_interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Equal-tailed percentile interval of bootstrap replicates (linear interpolation)."""
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}.")
    v = np.asarray(values, dtype=np.float64)
    lo, hi = np.quantile(v, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def bootstrap_se(values: np.ndarray) -> float:
    """Standard deviation of bootstrap replicates (ddof=1): the bootstrap standard error."""
    v = np.asarray(values, dtype=np.float64)
    return float(v.std(ddof=1)) if v.size > 1 else float("nan")


def se_mean(variance: float, n: int) -> float:
    """Standard error of a mean of n independent draws with the given variance (units of the draws)."""
    return math.sqrt(variance / n)


# --- point estimates from exact integer sums --------------------------------

def sample_moments(returns: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """Branch means [B] (chips) and unbiased covariance [B, B] (chips^2) of integer returns [n, B].

    Computed from exact int64 sums with rational arithmetic, then rounded once
    to float64, so the values do not depend on summation order.
    """
    r = returns.to(torch.int64).cpu()
    n, b = r.shape
    if n < 2:
        raise ValueError("moments need at least two groups.")
    s1 = [int(v) for v in r.sum(0)]
    mean = np.array([float(Fraction(s, n)) for s in s1])
    cov = np.zeros((b, b))
    for i in range(b):
        for j in range(i, b):
            s2 = int((r[:, i] * r[:, j]).sum())
            cov[i, j] = cov[j, i] = float(Fraction(n * s2 - s1[i] * s1[j], n * (n - 1)))
    return mean, cov


def contrast_var(cov: np.ndarray, i: int = 0, j: int = 1) -> float:
    """Var(R_i - R_j) = Var R_i + Var R_j - 2 Cov(R_i, R_j) from a covariance matrix, chips^2."""
    c = np.asarray(cov, dtype=np.float64)
    return float(c[i, i] + c[j, j] - 2 * c[i, j])


def variance_identity(summary: dict, i: int = 0, j: int = 1) -> dict:
    """Check Var(R_i - R_j) = Var R_i + Var R_j - 2 Cov(R_i, R_j) on a collection summary.

    The left side comes from the sums of the contrast D = R_i - R_j and its
    powers; the right side from the branch sums and cross-products.  Both are
    exact rationals rounded to float64, so the residual (chips^2) measures
    only floating-point rounding of the right side's combination.
    """
    key = f"{min(i, j)}-{max(i, j)}"
    lhs = summary["pairwise_contrasts"][key]["contrast_var"]
    c = summary["cov"]
    rhs = c[i][i] + c[j][j] - 2 * c[i][j]
    return {"contrast_var": lhs, "var_i": c[i][i], "var_j": c[j][j], "cov_ij": c[i][j],
            "identity_rhs": rhs, "residual": lhs - rhs}


# --- marginal equivalence -----------------------------------------------------

def equivalence_test(difference: float, replicates: np.ndarray, margin: float, alpha: float = 0.05) -> dict:
    """Two one-sided tests (TOST) of |difference| < margin from paired bootstrap replicates.

    difference   point estimate of a mean difference (chips), e.g. full minus independent
    replicates   its paired bootstrap replicates
    margin       equivalence margin epsilon (chips)
    alpha        size of each one-sided test; equivalence is declared when the
                 (1 - 2 alpha) percentile interval lies inside (-margin, margin)

    Returns the difference, the (1 - 2 alpha) interval used for the decision,
    the 95% interval, the bootstrap SE and the decision.
    """
    if not margin > 0:
        raise ValueError(f"margin must be positive, got {margin!r}.")
    lo, hi = percentile_interval(replicates, 1 - 2 * alpha)
    lo95, hi95 = percentile_interval(replicates, 0.95)
    return {"difference": float(difference), "tost_level": 1 - 2 * alpha, "tost_low": lo, "tost_high": hi,
            "ci95_low": lo95, "ci95_high": hi95, "se": bootstrap_se(replicates), "margin": float(margin),
            "equivalent": bool(-margin < lo and hi < margin)}


# --- estimates ---------------------------------------------------------------

def contrast_pair(actions: list[str]) -> tuple[int, int]:
    """Branch indices of the reported contrast: the two actions of a two-action root;
    Call minus Raise at a three-action root (Fold's return is a constant -1 chip there,
    so no coupling can change a contrast with Fold)."""
    if len(actions) == 2:
        return 0, 1
    return actions.index("Call"), actions.index("Raise")


@dataclass(frozen=True)
class Estimate:
    """A Monte-Carlo estimate with its paired root-bootstrap 95% interval, SE and exact value."""

    value: float
    low: float
    high: float
    exact: float | None
    se: float

    def as_dict(self) -> dict:
        return {"value": self.value, "low": self.low, "high": self.high, "exact": self.exact, "se": self.se}


def estimate_from_replicates(value: float, replicates: np.ndarray, exact: float | None) -> Estimate:
    """An Estimate of `value` with the percentile interval and standard error of its bootstrap replicates."""
    lo, hi = percentile_interval(replicates)
    return Estimate(float(value), lo, hi, None if exact is None else float(exact), bootstrap_se(replicates))


# --- intervals over seeds ------------------------------------------------------

def student_t_cdf(t: float, df: int) -> float:
    """P(T <= t) for Student's t with an integer number of degrees of freedom df >= 1.

    Closed form for integer df (Abramowitz and Stegun 26.7.3-4): with
    theta = atan(t / sqrt(df)), P(|T| < |t|) is a finite trigonometric sum.
    """
    if isinstance(df, bool) or not isinstance(df, (int, np.integer)) or df < 1:
        raise ValueError(f"df must be a positive integer, got {df!r}.")
    theta = math.atan(abs(t) / math.sqrt(df))
    s, c = math.sin(theta), math.cos(theta)
    if df % 2:                                    # odd: (2/pi) (theta + sin cos (1 + 2/3 c^2 + 2*4/(3*5) c^4 + ...))
        term, series = 1.0, 1.0 if df > 1 else 0.0
        for k in range(1, (df - 1) // 2):
            term *= (2 * k) / (2 * k + 1) * c * c
            series += term
        inside = 2.0 / math.pi * (theta + s * c * series)
    else:                                         # even: sin (1 + 1/2 c^2 + 1*3/(2*4) c^4 + ...)
        term, series = 1.0, 1.0
        for k in range(1, df // 2):
            term *= (2 * k - 1) / (2 * k) * c * c
            series += term
        inside = s * series
    return 0.5 + math.copysign(inside / 2.0, t)


def student_t_quantile(probability: float, df: int) -> float:
    """The t with P(T <= t) = probability for Student's t with integer df (bisection to float precision)."""
    if not 0.0 < probability < 1.0:
        raise ValueError(f"probability must be in (0, 1), got {probability!r}.")
    if probability < 0.5:
        return -student_t_quantile(1.0 - probability, df)
    low, high = 0.0, 1.0
    while student_t_cdf(high, df) < probability:
        low, high = high, 2.0 * high
    for _ in range(200):
        mid = 0.5 * (low + high)
        if mid in (low, high):
            break
        low, high = (mid, high) if student_t_cdf(mid, df) < probability else (low, mid)
    return 0.5 * (low + high)


@dataclass(frozen=True)
class TInterval:
    """mean +- t_{(1+level)/2, n-1} * sd / sqrt(n) over n seeds (units of the values).

    `sd` is the sample standard deviation (ddof=1), `t` the Student quantile.
    """

    mean: float
    low: float
    high: float
    half_width: float
    sd: float
    n: int
    t: float
    level: float

    def as_dict(self) -> dict:
        return {"mean": self.mean, "low": self.low, "high": self.high, "half_width": self.half_width,
                "sd": self.sd, "n": self.n, "t": self.t, "level": self.level}


def t_interval(values, level: float = 0.95) -> TInterval:
    """Student-t interval of the mean of per-seed values (at least two finite values)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}.")
    v = np.asarray(values, dtype=np.float64).ravel()
    if v.size < 2 or not np.all(np.isfinite(v)):
        raise ValueError(f"values must hold at least two finite numbers (one per seed), got {v.tolist()}.")
    n = int(v.size)
    mean, sd = float(v.mean()), float(v.std(ddof=1))
    t = student_t_quantile((1.0 + level) / 2.0, n - 1)
    half = t * sd / math.sqrt(n)
    return TInterval(mean, mean - half, mean + half, half, sd, n, t, float(level))


def prediction_interval(values, level: float = 0.95) -> TInterval:
    """95% prediction interval for one more seed's value: mean +- t_{(1+level)/2, n-1} * sd * sqrt(1 + 1/n).

    This is the interval a value printed for *one* seed is compared with: a paper's seed 17 and ours share no
    random numbers, so its value is one more draw from the spread of seeds, not an estimate of our seed 17.
    `half_width` is the prediction half-width (units of the values).
    """
    iv = t_interval(values, level)
    half = iv.t * iv.sd * math.sqrt(1.0 + 1.0 / iv.n)
    return TInterval(iv.mean, iv.mean - half, iv.mean + half, half, iv.sd, iv.n, iv.t, iv.level)


def log_t_interval(values, level: float = 0.95) -> TInterval:
    """Student-t interval of the mean of per-seed values of a quantity positive by definition (a variance,
    a ratio of variances), on the log scale: mean * exp(+- t * se / mean) with se = sd / sqrt(n).

    The centre stays the seed mean and the interval cannot reach 0, which a symmetric interval of a variance
    over a few seeds can.  Values must be >= 0 with a positive mean; `half_width` is the larger side.
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    if v.size and (np.any(v < 0) or not v.mean() > 0):
        raise ValueError(f"a log-scale interval needs non-negative values with a positive mean, got {v.tolist()}.")
    iv = t_interval(v, level)
    factor = math.exp(iv.t * iv.sd / math.sqrt(iv.n) / iv.mean)
    low, high = iv.mean / factor, iv.mean * factor
    return TInterval(iv.mean, low, high, high - iv.mean, iv.sd, iv.n, iv.t, iv.level)


#: The standard normal's 97.5% quantile.
Z95 = 1.959963984540054


def held_out_interval(values, root_variances, roots: int, seeds: int | None = None) -> tuple[float, float, float]:
    """(mean, low, high) of the seed mean of a quantity the paper averages over `roots` held-out roots per seed.

    Per seed the exact value `values[s]` gains root noise of variance `root_variances[s] / roots` (the
    checkpoint's variance over equally likely roots), so the interval is
    mean +- t_{n-1} sqrt((s^2 + mean(root_variances) / roots) / n) over n seeds; when every seed gives the same
    number (a deterministic policy), mean +- 1.96 sqrt(mean(root_variances) / (roots * seeds)), `seeds`
    defaulting to n.  Units: those of the values (variances in their square).
    """
    v = np.asarray(values, dtype=np.float64)
    noise, n = float(np.mean(root_variances)) / roots, v.size
    if n > 1 and np.ptp(v) > 0:
        half = student_t_quantile(0.975, n - 1) * math.sqrt((float(np.var(v, ddof=1)) + noise) / n)
    else:
        half = Z95 * math.sqrt(noise / (seeds or n))
    mean = float(v.mean())
    return mean, mean - half, mean + half
