"""Update variance of every ablation arm: one learner step per arm on matched batches (logits^2).

The paper's coupling-factor and ablation tables print an "update variance"
per arm, from "matched logical batches" with the same optimizer schedule in
every arm; they give neither the state the update starts from nor the
schedule.  We use the estimator of the learning chapters
(`learning.update_variance.update_variances`): from a fixed state, K
replicate iterations on disjoint validation batches, and the trace of the
covariance of the logit displacement (logits^2, unitless logits).  The state
is the chapter's continuation policy (its log-probabilities as logits; the
uniform policy is all-zero logits); the schedule is the notebook's
`update_*` parameters.  Every arm steps on the same decision points at each
seed (matched batches), so per-seed differences between arms are paired.

Readings of the step size.  The size of an update variance is set by the step
size η (for small steps it grows as η², the displacement being η times a
gradient), and the paper gives no η.  So every update variance is listed
under a grid of step sizes fixed before looking at the numbers (the notebook
parameter ``update_eta_readings``: by default the chapter's η and one decade
either side), one reading per η (`update_rows`, `Row.under_readings` with no
paper reading: the paper's text fixes none), and its size is compared under
none of them (`reporting.comparability`, "update variances"); the ordering of
the arms the paper states is judged at the chapter's η.

The root-only and continuation-only arms have no learner arm of their own;
they step with the collector arm's construction (`learning.coupling_arms`).
The policy-namespace ablation re-addresses policy streams that the learner
does not namespace: its law is the independent arm's, so its row takes the
independent arm's values and says so.  There is no exact counterpart: E
clipped epochs make the displacement a nonlinear function of the batch.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch

from oscc_core.chapters.covariance.coupling import ABLATION_NAMES, PAPER_ARM_NAMES
from oscc_core.device import HOST
from oscc_core.engine.arms import PAPER_ARMS
from oscc_core.games import get_game
from oscc_core.learning import summary
from oscc_core.learning.coupling_arms import BASE_RUN_ARM, LEARNER_CONSTRUCTION, coupling_learner_arm
from oscc_core.learning.loop import RunSpec, Schedule
from oscc_core.learning.update_variance import update_variances
from oscc_core.policy import resolve_policy
from oscc_core.reporting import comparability
from oscc_core.reporting.numbers import significant_text
from oscc_core.reporting.rows import Relation, Row

KEY = "update_variance"
#: Smallest probability whose log is a logit of the state (a legal action the continuation never plays).
FLOOR = 1e-12
#: The arm whose law the namespace ablation has (and whose values its row takes).
SAME_LAW = {"policy_namespace": "independent"}
NAMESPACE_REASON = ("the learner does not namespace policy streams; the namespaced arm has the independent arm's "
                    "law, so ours is the independent arm's update variance")


def state_logits(game: str, policy) -> torch.Tensor:
    """[n_info, A] logits of the continuation `policy`: all 0 for "uniform" (every learner's initial state);
    for a tabular dict the log-probabilities of the legal actions (at least log FLOOR), 0 on illegal ones
    (masked by every learner)."""
    g = get_game(game)
    legal = g.infostates.legal
    if isinstance(policy, str) and policy == "uniform":
        return torch.zeros(legal.shape, dtype=torch.float64, device=HOST)
    table = resolve_policy(g, policy)
    return torch.as_tensor(np.where(legal, np.log(np.maximum(table, FLOOR)), 0.0), device=HOST)


def schedule(p, eta: float | None = None) -> Schedule:
    """The one-iteration schedule of the update: the notebook's N, E and step size `eta` (default: the chapter's
    eta, ``update_learning_rate``)."""
    return Schedule(iterations=1, decision_points=p.update_decision_points, epochs=p.update_epochs,
                    learning_rate=p.update_learning_rate if eta is None else float(eta))


def eta_reading(eta: float) -> str:
    """The name of the reading of an update variance at step size `eta`."""
    return f"step size eta = {eta:g}"


def eta_grid(p) -> list[float]:
    """The step sizes of the readings, the chapter's eta first (the book's own reading), then the others of
    ``update_eta_readings`` in their order."""
    return [float(p.update_learning_rate)] + [float(e) for e in p.update_eta_readings
                                              if float(e) != float(p.update_learning_rate)]


def records_by_eta(p) -> dict[float, dict]:
    """eta -> `update_records` at that step size, for every eta of `eta_grid` (the chapter's first)."""
    return {eta: update_records(p, eta) for eta in eta_grid(p)}


def update_records(p, eta: float | None = None) -> dict:
    """{arm: {seed: {"update_variance": v}}} for each arm with a learner construction, every seed of `p.seeds`,
    `p.update_replicates` replicates each, from the continuation's state, at step size `eta` (default the
    chapter's) (logits^2)."""
    arms = [a for a, ok in LEARNER_CONSTRUCTION.items() if ok]
    runs = [RunSpec(BASE_RUN_ARM, s) for _ in arms for s in p.seeds]
    logits = state_logits(p.game, p.policy).to(p.torch_device)
    values = torch.zeros(logits.shape[0], dtype=torch.float64, device=p.torch_device)
    r = len(runs)
    v = update_variances(p.game, runs, logits.expand(r, -1, -1).clone(), values.expand(r, -1).clone(),
                         schedule(p, eta), p.update_replicates, p.torch_device,
                         arms=[coupling_learner_arm(a) for a in arms for _ in p.seeds])
    it = iter(v.tolist())
    return {a: {str(s): {KEY: next(it)} for s in p.seeds} for a in arms}


#: The relation the paper states for the update variances, as its prose states it for the contrast variances
#: ("both partial-coupling arms reduce ..., and their combination gives the lowest value"; bold marks the lowest):
#: (arm, arm it lies below) pairs.
BELOW = (("root_only", "independent"), ("continuation_only", "independent"), ("full", "independent"),
         ("full", "root_only"), ("full", "continuation_only"))


def ordering(records: dict) -> Relation:
    """Each coupled arm's update variance below the independent arm's, the full arm's the lowest: holds on the
    seed means; resolved when every pair's per-seed paired difference has its 95% interval below 0 (the arms
    share each seed's decision points)."""
    mean = {a: float(summary.values(records, a, KEY).mean()) for a in PAPER_ARMS}
    holds = all(mean[a] < mean[b] for a, b in BELOW)
    resolved = all(summary.paired_difference(records, a, b, KEY).high < 0 for a, b in BELOW)
    return Relation("update variance: root_only, continuation_only < independent; full lowest", holds, resolved)


def _row(quantity: str, claim_id: str, records: dict, arm: str, relation: Relation | None) -> Row:
    iv = summary.interval(records, SAME_LAW.get(arm, arm), KEY)
    row = Row.compare(quantity, claim_id, iv.mean, iv.low, iv.high, relation, positive=True)
    return replace(row, reason=NAMESPACE_REASON) if arm in SAME_LAW else row


def reading_rows(records: dict) -> list[Row]:
    """tab:app-p1-coupling-factors' update column and tab:app-p1-ablations' update-variance column against our
    seed means with their 95% log-scale t-intervals over seeds (logits^2), at one step size (`records`)."""
    rel = ordering(records)
    rows = [_row(f"factors, {arm}", f"coupling_factors.{p}.update", records, arm, rel)
            for arm, p in PAPER_ARM_NAMES.items()]
    rows += [_row(f"ablation, {arm}", f"ablations.{p}.update_variance", records, arm,
                  None if arm in SAME_LAW else rel) for arm, p in ABLATION_NAMES.items()]
    return rows


def update_rows(by_eta: dict[float, dict]) -> list[Row]:
    """Every update-variance claim under each step size of `by_eta` (eta -> `update_records`, the chapter's eta
    first), one reading per eta (`eta_reading`), combined by `Row.under_readings` with no paper reading: the
    paper fixes no eta, so readings that disagree make the row depend on the reading."""
    per_eta = [[replace(r, reading=eta_reading(eta)) for r in reading_rows(rec)] for eta, rec in by_eta.items()]
    return [Row.under_readings(list(rows)) for rows in zip(*per_eta)]


def update_frame(by_eta: dict[float, dict]):
    """Per step size and arm: the update variance of each seed and the seed mean (logits^2), as a table."""
    import pandas as pd

    out = []
    for eta, records in by_eta.items():
        for arm, by_seed in records.items():
            v = [rec[KEY] for rec in by_seed.values()]
            out.append({"eta": f"{eta:g}", "arm": arm, **{f"seed {s}": f"{rec[KEY]:.4g}" for s, rec in by_seed.items()},
                        "mean": f"{np.mean(v):.4g}"})
    return pd.DataFrame(out).set_index(["eta", "arm"])


def results_record(by_eta: dict[float, dict]) -> dict:
    """The results file's update records: the chapter's eta under ``seeds`` (the first of `by_eta`), every eta
    under ``by_eta`` (keyed by its text)."""
    first = next(iter(by_eta.values()))
    return {"seeds": first, "by_eta": {f"{eta:g}": rec for eta, rec in by_eta.items()}}


def _and(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def glue_values(rows: list[Row], by_eta: dict[float, dict]) -> dict:
    """What the text says about the update variances, by glue name: the step sizes of the readings
    (``update_eta_grid``), how far ours lie from the paper's under each (``update_verdicts_text``: their size is
    not compared, `reporting.comparability`, so no verdict per step size), how many rows depend on the reading
    (``update_reading_dependent``), the smallest and largest factor ours / paper at the chapter's step size
    (``update_factor_low`` / ``_high``), and the grid's step sizes just below and above the paper's values
    (``update_eta_below`` / ``_above``: the largest eta whose every arm lies below the paper's value, the smallest
    whose every arm lies above; "none" where the grid has none)."""
    etas = list(by_eta)
    mine = [r for r in rows if r.primary and r.printing_of is None]
    chapter = [r for r in mine if r.readings]

    def times(eta: float) -> str:             # ours / the paper's at one step size, over the chapter's rows
        f = [float(next(x["ours"] for x in r.readings if x["reading"] == eta_reading(eta))) / float(r.paper)
             for r in chapter]
        return (f"at η = {eta:g} ours are {significant_text(min(f), 2)} to {significant_text(max(f), 2)} times "
                f"the paper's")                          # 120, not 1.2e+02

    parts = [times(eta) for eta in etas]
    factors = [float(r.readings[0]["ours"]) / float(r.paper) for r in chapter]
    paper = {r.claim_id: float(r.paper) for r in chapter}

    def side(eta: float) -> str | None:
        ours = {r.claim_id: next(x["ours"] for x in r.readings if x["reading"] == eta_reading(eta)) for r in chapter}
        if all(ours[c] < paper[c] for c in paper):
            return "below"
        if all(ours[c] > paper[c] for c in paper):
            return "above"
        return None

    sides = {eta: side(eta) for eta in etas}
    below = [eta for eta in etas if sides[eta] == "below"]
    above = [eta for eta in etas if sides[eta] == "above"]
    return {"update_eta_grid": _and([f"η = {eta:g}" for eta in sorted(etas)]),
            "update_verdicts_text": "; ".join(parts),
            "why_update_size": comparability.reason_of("update variances"),
            "update_reading_dependent": sum(bool(r.reading_dependent) for r in mine),
            "update_factor_low": min(factors), "update_factor_high": max(factors),
            "update_eta_below": f"{max(below):g}" if below else "none",
            "update_eta_above": f"{min(above):g}" if above else "none"}
