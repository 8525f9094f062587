"""Calls to an exploitability threshold, and how much the rule that computes them moves the figure.

A run's exploitability is stored only at a study's recorded budgets, so the
calls at which it first falls to a threshold are interpolated between the
two stored budgets around the crossing.  The study's rule (`STUDY_RULE`)
interpolates linearly in log calls and log exploitability and takes the
geometric mean over the seeds that reach the threshold; the alternative
(`ALTERNATIVE_RULE`) interpolates linearly in calls and exploitability and
takes the arithmetic mean.  Where the stored budgets are dense around the
crossings the two agree; where they are far apart the interpolation (and the
mean, over widely spread seeds) can move the figure, and `rule_effect` says
by how much, so a reader can see whether the stored budgets support the
printed precision (under 2% is the aim).

Units: calls in physical calls, exploitability and thresholds in chips.
"""
from __future__ import annotations

import numpy as np

from oscc_core.method.stats import t_interval

#: (interpolation, mean) of the study's rule and of the alternative it is compared with.
STUDY_RULE = ("log", "geometric")
ALTERNATIVE_RULE = ("linear", "arithmetic")
INTERPOLATIONS, MEANS = ("log", "linear"), ("geometric", "arithmetic")


def crossing(curve: dict, threshold: float, interpolation: str = "log") -> tuple[float, int, int] | None:
    """(calls, stored budget before, stored budget after) at which one run's average-policy exploitability first
    falls to `threshold` (`crossing_of_points` on the run's stored budgets); None when it never gets there.
    `curve`: {budget: record}."""
    return crossing_of_points([(int(b), rec["exploitability_average"]) for b, rec in curve.items()], threshold,
                              interpolation)


def crossing_of_points(points, threshold: float, interpolation: str = "log") -> tuple[float, object, object] | None:
    """(calls, calls before, calls after) at which a curve of (calls, exploitability) points first falls to
    `threshold`, interpolated between the two points around the crossing, linearly in log calls and log
    exploitability ("log") or in calls and exploitability ("linear"); (first calls, it, it) when the curve starts
    at or below it; None when it never gets there (or has no point)."""
    if interpolation not in INTERPOLATIONS:
        raise ValueError(f"interpolation must be one of {', '.join(INTERPOLATIONS)}, got {interpolation!r}.")
    points = sorted(points)
    if not points:
        return None
    if points[0][1] <= threshold:
        return float(points[0][0]), points[0][0], points[0][0]
    for (b0, e0), (b1, e1) in zip(points, points[1:]):
        if e1 <= threshold:
            if interpolation == "log":
                f = (np.log(e0) - np.log(threshold)) / (np.log(e0) - np.log(e1))
                return float(np.exp(np.log(b0) + f * (np.log(b1) - np.log(b0)))), b0, b1
            return float(b0 + (e0 - threshold) / (e0 - e1) * (b1 - b0)), b0, b1
    return None


def calls_over_seeds(curves, threshold: float, interpolation: str = "log", mean: str = "geometric") -> dict:
    """Calls to `threshold` over runs (`curves`: one {budget: record} per seed) under one rule: {"calls" (the mean
    over the seeds that reach it), "low", "high" (95% interval: exp(t-interval of log calls) for a geometric mean,
    the t-interval for an arithmetic one; None with fewer than two distinct crossings), "reached", "seeds", "gaps"
    ({(before, after): seeds crossing between those stored budgets})}."""
    if mean not in MEANS:
        raise ValueError(f"mean must be one of {', '.join(MEANS)}, got {mean!r}.")
    found = [crossing(curve, threshold, interpolation) for curve in curves]
    hits = [c for c in found if c is not None]
    out = {"calls": None, "low": None, "high": None, "reached": len(hits), "seeds": len(found), "gaps": {}}
    for _, b0, b1 in hits:
        out["gaps"][(b0, b1)] = out["gaps"].get((b0, b1), 0) + 1
    calls = np.array([c for c, _, _ in hits], dtype=np.float64)
    if not calls.size:
        return out
    geometric = mean == "geometric"
    out["calls"] = float(np.exp(np.log(calls).mean())) if geometric else float(calls.mean())
    if calls.size >= 2 and np.ptp(calls) > 0:
        iv = t_interval(np.log(calls) if geometric else calls)
        out["low"], out["high"] = (float(np.exp(iv.low)), float(np.exp(iv.high))) if geometric else (iv.low, iv.high)
    return out


def rule_effect(curves, threshold: float) -> dict:
    """The calls to `threshold` over runs under the study's rule and under the alternative, and the relative
    difference alternative / study - 1 (None when no seed reaches it): {"study", "alternative",
    "relative_difference", "interpolation_difference", "reached", "seeds"}.  The alternative changes two things;
    "interpolation_difference" is the part the stored budgets govern: the study's geometric mean of linearly
    interpolated crossings against the study's figure.  The rest comes from the mean (an arithmetic mean exceeds a
    geometric one by about half the variance of the seeds' log calls), which denser budgets do not remove."""
    curves = list(curves)
    ours = calls_over_seeds(curves, threshold, *STUDY_RULE)
    other = calls_over_seeds(curves, threshold, *ALTERNATIVE_RULE)
    linear = calls_over_seeds(curves, threshold, ALTERNATIVE_RULE[0], STUDY_RULE[1])
    rel, interp = (None, None) if ours["calls"] is None else \
        (other["calls"] / ours["calls"] - 1.0, linear["calls"] / ours["calls"] - 1.0)
    return {"study": ours["calls"], "alternative": other["calls"], "relative_difference": rel,
            "interpolation_difference": interp, "reached": ours["reached"], "seeds": ours["seeds"]}


# ----- where a curve lies against a threshold (one seed's curve: {budget: exploitability}) --------------------------
def exploitability_curve(curve: dict, field: str = "exploitability_average") -> dict[int, float]:
    """{budget: exploitability} of one run's {budget: record} (budgets as integers, in increasing order)."""
    return {int(b): float(curve[b][field]) for b in sorted(curve, key=int)}


def _points(curve: dict) -> list[tuple[int, float]]:
    """A {budget: exploitability} curve as (budget, exploitability) pairs in increasing budget order (budgets may be
    integer-valued strings, as a results file keeps them)."""
    return sorted((int(b), float(e)) for b, e in curve.items())


def settled_at_or_below(curve: dict, threshold: float) -> int | None:
    """The smallest recorded budget from which `curve` ({budget: exploitability}) stays at or below `threshold` at
    every recorded budget up to its last; None when its last recorded value lies above it (or it has none).  The
    first crossing (`crossing`) may come earlier: a curve that dips below and comes back above settles later."""
    settled = None
    for budget, value in reversed(_points(curve)):
        if value > threshold:
            break
        settled = budget
    return settled


def seeds_above_at_end(curves, threshold: float) -> int:
    """How many of `curves` (one {budget: exploitability} per seed) lie above `threshold` at their own last recorded
    budget (a curve with no budget counts for none)."""
    return sum(1 for curve in curves if (points := _points(curve)) and points[-1][1] > threshold)


def curve_minimum(curve: dict) -> tuple[float, int] | None:
    """(the smallest exploitability of `curve` ({budget: exploitability}), the smallest recorded budget where it
    lies); None for a curve with no budget."""
    points = _points(curve)
    if not points:
        return None
    low = min(value for _, value in points)
    return low, next(budget for budget, value in points if value == low)
