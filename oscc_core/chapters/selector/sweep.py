"""The calibration-size sweep (tab:calibration-sample-complexity): OSCC-Select repeated at each size.

Per size n (groups per stratum): the share of stratum decisions that certify
a coupling, the family-wise false-selection rate with its exact one-sided
upper 95% bound, the median lower bound on full coupling's gain with a
distribution-free 95% interval (noise units), the noise regret (noise units),
and physical draws (uniforms).  Theorem 1's sufficient size is in groups.

The relations the paper states for the sweep's numbers (`sweep_comparison`): the certification rate rises
and the regret falls with n; the false-selection rate stays at or below delta (Theorem 1); the median gain
bound has, at each size, the sign the paper prints there (negative at 64 groups, positive from 128 on: "The
median gain bound becomes positive at 128 groups"); physical draws grow with n by construction (each size
draws n groups per stratum), so that relation is shown but decides nothing.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
from scipy.stats import binom

from oscc_core.engine.arms import PAPER_ARMS
from oscc_core.method.selectors import FALLBACK, hoeffding_radius
from oscc_core.reporting import claims
from oscc_core.reporting.rows import Relation, Row

from .calibration import label, sufficient_groups
from .exact_root import CANDIDATES, ExactRoot, exact_gains
from .pools import Pool, gain_scores
from .root_policy import RootPolicy


def _certify_blocks(scores: dict, idx: np.ndarray, block_size: int, bound: float, r_n: float):
    """Per repetition (rows of `idx`): the chosen arm (index into PAPER_ARMS, 0 = fallback) and full's LCB."""
    repetitions, n = idx.shape
    nb = n // block_size
    means, lcbs = [], []
    for a in CANDIDATES:
        x = scores[a][idx[:, :nb * block_size]].reshape(repetitions, nb, block_size).mean(2)
        lcbs.append(np.clip(x, -bound, bound).mean(1) - r_n)
        means.append(x.mean(1))
    lcbs, means = np.stack(lcbs, 1), np.stack(means, 1)             # [R, candidates]
    certified = lcbs > 0
    masked = np.where(certified, means, -np.inf)
    pick = np.argmax(masked, axis=1)                                 # first max: fixed arm order
    return np.where(certified.any(1), 1 + pick, 0), lcbs[:, CANDIDATES.index("full")]


def sweep(pool: Pool, exact: ExactRoot, policy: RootPolicy, sizes, repetitions: int, block_size: int, bound: float,
          delta: float, lam: float = 0.0) -> list[dict]:
    """OSCC-Select at each calibration size, `repetitions` times on disjoint group ranges of one pool.

    Repetition r at n groups per stratum uses the groups [r n, (r+1) n) of each stratum (in group-id
    order, from the counter-based streams), so repetitions are independent.  Per (repetition,
    stratum) decision: the certified candidate with the largest mean score, else independent.
    """
    scores = gain_scores(pool, exact, policy, lam)
    strata = exact.strata()
    m = len(CANDIDATES) * len(strata)
    w = np.array([exact.stratum_weight(z) for z in strata])
    w = w / w.sum()
    cost = {a: {z: float(pool.draws[a][pool.stratum_index(z)].mean()) for z in strata} for a in PAPER_ARMS}
    obj = {z: {a: exact.noise(a, policy, z) + lam * cost[a][z] for a in PAPER_ARMS} for z in strata}
    gain = {z: {a: obj[z][FALLBACK] - obj[z][a] for a in CANDIDATES} for z in strata}
    best = {z: min(obj[z].values()) for z in strata}
    out = []
    for n in sizes:
        nb = n // block_size
        r_n = hoeffding_radius(nb, bound, m, delta)
        chosen = np.zeros((repetitions, len(strata)), dtype=np.int64)      # index into PAPER_ARMS
        lcb_full = np.zeros((repetitions, len(strata)))
        draws = np.zeros(repetitions)
        for k, z in enumerate(strata):
            idx = pool.stratum_index(z)
            if len(idx) < repetitions * n:
                raise ValueError(f"stratum {z} holds {len(idx)} groups, fewer than {repetitions} x {n}.")
            idx = idx[:repetitions * n].reshape(repetitions, n)
            chosen[:, k], lcb_full[:, k] = _certify_blocks(scores, idx, block_size, bound, r_n)
            draws += sum(pool.draws[a][idx].sum(1) for a in PAPER_ARMS)
        sel_gain = np.array([[0.0 if c == 0 else gain[z][PAPER_ARMS[c]] for c, z in zip(row, strata)]
                             for row in chosen])
        false = (chosen > 0) & (sel_gain <= 0)
        regret = np.array([[obj[z][PAPER_ARMS[c]] - best[z] for c, z in zip(row, strata)] for row in chosen]) @ w
        labels = [label(dict(zip(strata, (PAPER_ARMS[c] for c in row)))) for row in chosen]
        modal = max(sorted(set(labels)), key=labels.count)
        fw = int(false.any(1).sum())
        out.append({"groups per stratum": n, "blocks": nb, "radius r_n": r_n,
                    "certification rate": float((chosen > 0).mean()),
                    "false-selection rate": float(false.mean()),
                    "family-wise false-selection rate": fw / repetitions,
                    "family-wise false selections": fw,
                    "family-wise upper 95%": clopper_pearson_upper(fw, repetitions),
                    "median full gain LCB": float(np.median(lcb_full)),
                    **dict(zip(MEDIAN_INTERVAL_KEYS, median_interval(lcb_full.ravel()))),
                    "noise regret": float(regret.mean()),
                    "physical draws": float(draws.mean()),
                    "physical draws per stratum and arm": float(draws.mean()) / (len(strata) * len(PAPER_ARMS)),
                    "modal selection": modal, "repetitions": repetitions})
    return out


#: The sweep row's keys of the distribution-free 95% interval of the median full-arm bound.
MEDIAN_INTERVAL_KEYS = ("median full gain LCB low", "median full gain LCB high")


def median_interval(values, level: float = 0.95) -> tuple[float, float]:
    """A distribution-free `level` interval for the median of independent values: the order statistics
    x_(l) and x_(n+1-l) (1-based), l the largest rank with P(Bin(n, 1/2) <= l - 1) <= (1 - level)/2.  It covers
    the median of the values' mean distribution with probability at least `level` when the values are independent,
    identically distributed or not (the count of values below the median is then binomial or more concentrated).
    (-inf, inf) when n is too small for any order statistic to do so."""
    x = np.sort(np.asarray(values, dtype=float).ravel())
    n = len(x)
    k = int(binom.ppf((1 - level) / 2, n, 0.5)) if n else -1    # smallest k with cdf(k) >= alpha/2
    if n and binom.cdf(k, n, 0.5) > (1 - level) / 2:
        k -= 1                                                     # largest k with cdf(k) <= alpha/2
    lower_rank = k + 1                                             # l, 1-based
    if lower_rank < 1:
        return float("-inf"), float("inf")
    return float(x[lower_rank - 1]), float(x[n - lower_rank])


def clopper_pearson_upper(k: int, n: int, level: float = 0.95) -> float:
    """Exact one-sided upper confidence bound for a binomial proportion: the p with P(X <= k; n, p) = 1 - level."""
    if k >= n:
        return 1.0

    def cdf(p: float) -> float:
        return sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k + 1))

    lo, hi = 0.0, 1.0
    for _ in range(100):                     # bisection: cdf decreases in p
        mid = (lo + hi) / 2
        if cdf(mid) > 1 - level:
            lo = mid
        else:
            hi = mid
    return hi


def sufficient_sizes(exact: ExactRoot, policy: RootPolicy, bound: float, n_comparisons: int, delta: float,
                     block_size: int) -> tuple[dict, list[dict]]:
    """Theorem 1's sufficient groups per stratum for its best candidate's exact gain d; and the table rows."""
    gains = exact_gains(exact, policy)
    sufficient = {z: sufficient_groups(bound, n_comparisons, delta, max(g.values()), block_size)
                  for z, g in gains.items()}
    rows = [{"stratum": z, "best candidate": max(g, key=g.get), "exact gain d": max(g.values()),
             "sufficient groups 8B^2 log(2M/delta)/d^2 x block": sufficient[z]} for z, g in gains.items()]
    return sufficient, rows


def positive_lcb_at(rows: list[dict]) -> int | None:
    """The smallest size whose median full-arm bound is positive in the positive (semantic) regime, or None."""
    return next((r["groups per stratum"] for r in rows if r["map"] == "semantic" and r["median full gain LCB"] > 0),
                None)


def sweep_glue(rows: list[dict], sufficient: dict) -> dict:
    """Glue name -> value for the sweep's prose."""
    pos = [r for r in rows if r["map"] == "semantic"]
    adverse = [r for r in rows if r["map"] != "semantic"]
    positive_at = positive_lcb_at(rows)
    out = {"cert_first": pos[0]["certification rate"], "cert_last": pos[-1]["certification rate"],
           "n_first": f"{pos[0]['groups per stratum']:,}", "n_last": f"{pos[-1]['groups per stratum']:,}",
           "false_max": max(r["family-wise false-selection rate"] for r in adverse),
           "false_upper": max(r["family-wise upper 95%"] for r in adverse),
           "regret_last": pos[-1]["noise regret"],
           "lcb_positive_at": "none of our sizes" if positive_at is None else f"{positive_at:,}"}
    for z, v in sufficient.items():
        out[f"suff_{z}"] = "never (no positive gain)" if not math.isfinite(v) else f"{v:,.0f}"
    return out


def below_delta(rate: float, upper: float, delta: float) -> Relation:
    """Theorem 1's promise for a false-selection rate: at most delta; resolved when the rate's exact upper 95%
    bound is at most delta too (then no value inside the interval [0, upper] breaks it)."""
    return Relation(f"false-selection rate <= delta = {delta:g}", rate <= delta, upper <= delta)


def rises(values, up: bool = True) -> bool:
    """The paper's "rises from a to b" (`up`) or "falls from a to b" over a sweep: never moves the other way
    from one size to the next, and ends strictly above (below) where it starts."""
    v = list(values)
    steps = all((b >= a) if up else (b <= a) for a, b in itertools.pairwise(v))
    return steps and len(v) > 1 and ((v[-1] > v[0]) if up else (v[-1] < v[0]))


def median_lcb_sign(paper: float, row: dict, scale: float = 1.0) -> Relation:
    """The sign the paper prints for the median full-arm bound at one size (its table: -4.6831 at 64 groups,
    positive from 128 on, "The median gain bound becomes positive at 128 groups"), on ours: holds when our
    median has that sign; resolved when the median's distribution-free 95% interval lies wholly on that side,
    unresolved when it reaches the other (`scale` > 0 only changes units)."""
    low, high = (row[k] for k in MEDIAN_INTERVAL_KEYS)
    low, high = (None if x is None else x / scale for x in (low, high))
    value = row["median full gain LCB"] / scale
    finite = low is not None and high is not None and math.isfinite(low) and math.isfinite(high)
    if paper > 0:
        return Relation.side("median gain LCB > 0", value, *((low, high) if finite else ()), above=0.0)
    return Relation.side("median gain LCB < 0", value, *((low, high) if finite else ()), below=0.0)


def lcb_turns_positive(rows: list[dict]) -> Relation:
    """What the paper states of the size at which the median full-arm bound turns positive (positive regime):
    negative at the smallest measured size and positive at a larger one; resolved when the smallest size's 95%
    interval lies below 0 and the first positive size's above 0."""
    pos = [r for r in rows if r["map"] == "semantic"]
    first = positive_lcb_at(rows)
    holds = bool(pos) and pos[0]["median full gain LCB"] < 0 and first is not None
    if not holds:
        return Relation("median gain LCB negative at the smallest size, positive at a larger one", False)
    turned = next(r for r in pos if r["groups per stratum"] == first)
    low_turn, high_first = turned[MEDIAN_INTERVAL_KEYS[0]], pos[0][MEDIAN_INTERVAL_KEYS[1]]
    resolved = None if low_turn is None or high_first is None else bool(high_first < 0 < low_turn)
    return Relation("median gain LCB negative at the smallest size, positive at a larger one", True, resolved)


def sweep_comparison(rows: list[dict], delta: float, g1_norm2: float | None) -> list[Row]:
    """tab:calibration-sample-complexity beside ours (positive regime = semantic map; false selection =
    the family-wise rate, worst of the near-zero and negative regimes, named in its row; draws = physical
    draws per stratum and arm).

    Relations, as the paper states them for each number: the certification rate rises with n and the regret
    falls (`rises`, over our sizes); the false-selection rate stays at or below delta, resolved by its exact upper
    95% bound (`below_delta`); the median gain bound has the sign the paper prints at that size, resolved by its
    distribution-free 95% interval (`median_lcb_sign`); the physical draws grow with n by construction, so that
    relation is declared `constructed` and never makes a row partly.  The trends compare sweep values that carry
    no interval, so their `resolved` stays None.
    """
    pos = {r["groups per stratum"]: r for r in rows if r["map"] == "semantic"}
    adverse = {}
    for r in rows:
        if r["map"] != "semantic":
            n = r["groups per stratum"]
            if n not in adverse or r["family-wise false-selection rate"] > adverse[n]["family-wise false-selection rate"]:
                adverse[n] = r
    sizes = sorted(pos)

    def column(col):
        return [pos[n][col] for n in sizes]

    trend = {"certification": Relation("certification rate rises with n", rises(column("certification rate"))),
             "regret": Relation("noise regret falls with n", rises(column("noise regret"), up=False)),
             "draws": Relation("physical draws grow with n", rises(column("physical draws"))).constructed()}
    out = []
    for n in sizes:
        key = f"calibration.{n}"
        if f"{key}.certification_rate" not in claims.load_claims():
            continue
        p, a = pos[n], adverse[n]
        out.append(Row.compare(f"{n} groups: certification rate (positive)", f"{key}.certification_rate",
                               p["certification rate"], relation=trend["certification"]))
        out.append(Row.compare(f"{n} groups: false-selection rate ({a['regime']})",
                               f"{key}.false_selection_rate", a["family-wise false-selection rate"],
                               0.0, a["family-wise upper 95%"],
                               relation=below_delta(a["family-wise false-selection rate"],
                                                    a["family-wise upper 95%"], delta)))
        if g1_norm2:
            cid = f"{key}.median_gain_lcb"
            ends = [p[k] for k in MEDIAN_INTERVAL_KEYS]
            interval = [x / g1_norm2 for x in ends] if all(x is not None and math.isfinite(x) for x in ends) \
                else [None, None]
            out.append(Row.compare(f"{n} groups: median full-arm gain LCB (chips^2)", cid,
                                   p["median full gain LCB"] / g1_norm2, *interval,
                                   relation=median_lcb_sign(float(claims.claim(cid)), p, g1_norm2)))
        out.append(Row.compare(f"{n} groups: gradient-noise regret", f"{key}.gradient_noise_regret",
                               p["noise regret"], relation=trend["regret"]))
        out.append(Row.compare(f"{n} groups: draws per stratum and arm", f"{key}.physical_calls",
                               p["physical draws per stratum and arm"], relation=trend["draws"]))
    return out


def comparison_glue(rows: list[Row]) -> dict:
    """Glue name -> value from the sweep's comparison rows (`sweep_comparison`): at how many sizes our median
    full-arm bound has the sign the paper prints there (`n_sign_holds` of `n_sign`) and at which it has not
    (`sign_fails`, "none" when it always has), and whether our regret falls with n as the paper's does
    (`regret_trend`: "falls" or "does not fall")."""
    sign = [r for r in rows if r.claim_id and r.claim_id.endswith(".median_gain_lcb")]
    fails = [int(r.claim_id.split(".")[1]) for r in sign if not r.relation_holds]
    regret = [r for r in rows if r.claim_id and r.claim_id.endswith(".gradient_noise_regret")]
    return {"n_sign": len(sign), "n_sign_holds": len(sign) - len(fails),
            "sign_fails": ", ".join(f"{n:,}" for n in fails) or "none",
            "regret_trend": "falls" if regret and regret[0].relation_holds else "does not fall"}
