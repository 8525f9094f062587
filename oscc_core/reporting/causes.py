"""Why a number of ours is not the paper's: one registry of causes for the whole book.

Every line of the claims ledger whose verdict is a gap (not reproduced, partly, inconclusive, or depends on the
reading) names one cause from `CAUSES`, with the evidence in its own numbers: the experiment, the table or the
bound that shows it.  A cause is one of

* **the learner**: the learner the paper describes (on-policy decision points) falls short of the policies the
  paper reports at its budget, so every number of those policies differs;
* **an open parameter**: a choice the paper leaves open (the step size, the clip, the evaluation opponent, the
  certificate's clip B, which roots or cards a row holds) sets the size;
* **another construction or unit**: the paper's number belongs to another construction, design or unit than the
  one its text lets us rebuild (its fault implementations, its solver, its seat-swap duplicate);
* **the paper's own numbers**: they disagree with each other or with a bound of the game's rules;
* **our precision**: the size agrees, but our intervals also hold values that contradict the relation the paper
  states (more seeds or groups would decide);
* **unexplained**: no experiment of the book accounts for the gap; allowed, and counted.

How a line gets its cause (`attribute`, the one function the rows, the ledger and the tallies call), first that
applies:

1. the row names one itself (`reporting.rows.Row.with_cause`, where the evidence needs numbers beyond the row's);
2. the verdict depends on the reading: an open parameter, with each reading's verdict;
3. a reading the line lists makes the paper's value impossible under the game's rules: the paper's own numbers,
   with the bound;
4. an inconclusive line whose relation holds on our estimate but is not resolved (or whose positive quantity has
   an interval reaching 0): our precision;
5. the attribution declared for the line's claim id (`ATTRIBUTIONS`, shell patterns over the claim ids; the first
   in declaration order whose pattern holds the id, the narrow families before the broad ones; a same-value line
   or a printing is looked up under the entry whose row it takes).

A gap line none of these covers has no cause, and the claims ledger refuses to build (`ledger.check_ledger`).
Attributions are declared here, once for the book, beside the reason each gives; the numbers a line's evidence
quotes are its own (paper, ours, interval, exact value, readings), never typed.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase

from oscc_core.reporting import claims
from oscc_core.reporting.numbers import interval_of, is_finite_number, value_text

__all__ = ["ATTRIBUTIONS", "CAUSES", "CAUSE_KEY", "Cause", "EVIDENCE_KEY", "GAP_VERDICTS", "Attribution",
           "attribute", "attribution_of", "cause_named", "is_gap", "own_numbers", "sampling_clause", "stamp"]

#: The record keys of a line's cause and of its evidence.
CAUSE_KEY, EVIDENCE_KEY = "cause", "cause evidence"
#: The verdicts that are gaps: each names its cause.
GAP_VERDICTS = (claims.INCONCLUSIVE, claims.PARTLY, claims.DEPENDS, claims.NOT_REPRODUCED)


@dataclass(frozen=True)
class Cause:
    """One cause of a gap: its `name` (what a tally prints), the `sentence` a reader is given for it, and `short`,
    the clause a one-sentence summary (the landing page's bottom line) gives it."""

    name: str
    sentence: str
    short: str = ""

    def __post_init__(self):
        if not (self.name.strip() and self.sentence.strip()):
            raise ValueError("a cause needs its name and its sentence.")


LEARNER = Cause("the learner", "the learner the paper describes (decision points drawn on-policy, as its text says) "
                "stalls far from equilibrium at the paper's budget, so every number of the policies it reaches "
                "(exploitability, values, returns, update sizes) differs from the paper's",
                "the learner the paper describes stalls far from equilibrium at its budget")
OPEN_PARAMETER = Cause("an open parameter", "a choice the paper leaves open (a step size, a clip, the evaluation "
                       "opponent, which roots or cards a row holds) sets the size, so the size says which choice the "
                       "paper made as much as whether it is right", "a choice the paper leaves open sets the size")
CONSTRUCTION = Cause("another construction or unit", "the paper's number belongs to another construction, design "
                     "or unit than the one its text lets us rebuild", "the paper measures another construction")
PAPER = Cause("the paper's own numbers", "the paper's numbers disagree with each other or with a bound of the "
              "game's rules", "the paper's numbers disagree with the game's rules or with each other")
PRECISION = Cause("our precision", "the size agrees, but our 95% intervals also hold values that contradict the "
                  "relation the paper states: more seeds or groups would decide it", "our runs do not resolve it")
UNEXPLAINED = Cause("unexplained", "no experiment of the book accounts for the gap; it is counted, not explained "
                    "away", "no experiment of ours accounts for it")
#: Every cause, in the order the tallies list them.
CAUSES = (LEARNER, OPEN_PARAMETER, CONSTRUCTION, PAPER, PRECISION, UNEXPLAINED)
_BY_NAME = {c.name: c for c in CAUSES}


def cause_named(name: str) -> Cause:
    """The cause called `name`; raises on a name the registry does not hold."""
    if name not in _BY_NAME:
        raise KeyError(f"no cause is called {name!r}; causes: {list(_BY_NAME)}.")
    return _BY_NAME[name]


def is_gap(verdict: str | None) -> bool:
    """Whether a line with `verdict` must name a cause."""
    return verdict in GAP_VERDICTS


@dataclass(frozen=True)
class Attribution:
    """The cause of the gaps of a family of entries (claim-id shell `patterns`), with `why`: the experiment, table
    or bound that shows it, in words (the line's own numbers go before it)."""

    cause: Cause
    patterns: tuple[str, ...]
    why: str

    def __post_init__(self):
        if self.cause not in CAUSES:
            raise ValueError(f"an attribution's cause must be one of the registry's, got {self.cause!r}.")
        if not (self.patterns and self.why.strip()):
            raise ValueError("an attribution needs its claim-id patterns and the evidence it points to.")

    def holds(self, claim_id: str) -> bool:
        return any(fnmatchcase(claim_id, p) for p in self.patterns)


# ----- the attributions, chapter by chapter ---------------------------------------------------------------------
_HEADLINE = ("no continuation, root or budget in chapter 02's construction tables gives the paper's four arm "
             "variances together, and the paper does not state its construction")
_LEARNED = ("grpo_ppo.cp_grpo_paired.*", "grpo_ppo.independent.*", "grpo_ppo.standard_grpo.*",
            "grpo_ppo.standard_ppo.*")

ATTRIBUTIONS = (
    # 01: the contract
    Attribution(CONSTRUCTION, ("seat_swap.seat_swap.variance_rel_drift",),
                "our seat-swapped duplicate replays the original's streams from the other seat, so its drift is "
                "exactly 0 (chapter 01, seat swap); the paper's non-zero drift points to a duplicate drawn afresh"),
    Attribution(CONSTRUCTION, ("safety.*",),
                "the paper does not describe how it implemented each violation; ours break the same condition "
                "(chapter 01's controls), and under the uniform continuation a policy lookup returns the same "
                "probabilities whatever extra field it carries, so most of our faults leave the returns unchanged; "
                "the certificate's decision, not these side effects, is what both share"),
    # 02: the return-contrast covariance, and the same variances where other chapters print them
    Attribution(OPEN_PARAMETER, ("main_uncertainty.check_bet_covariance.independent",
                                 "text_precision.independent.check_bet_covariance",
                                 "retained_evidence.fixed_root.independent_covariance",
                                 "coupling_factors.ind.covariance"),
                "pooled over roots and the acting player's cards, our covariance holds the spread of the branch "
                "means between information states; within one information state the independent arm draws each "
                "branch's hidden card and chance afresh, so its covariance there is exactly 0, near the paper's "
                "value: over which information states a covariance is taken is the paper's open choice"),
    Attribution(OPEN_PARAMETER, ("root_budget.private_card_group_*", "root_budget.public_round_split.*"),
                "the paper's rows name root strata it does not define, and the budget each row stands for sets "
                "the scale of a per-rollout variance: ours fall several-fold from k = 1 to k = 8 (chapter 02, "
                "budget factorization) while the paper's rows barely move"),
    Attribution(UNEXPLAINED, ("main.*", "main_uncertainty.*", "abstract.independent.*", "abstract.cp_grpo.*",
                              "intro.*", "conclusion.*", "fig_diagnostics.*", "learning_boundary.fixed_root.*",
                              "retained_evidence.fixed_root.*", "text_ablation.*", "coupling_factors.*",
                              "ablations.*", "strata.*", "root_budget.all_roots.*", "seed_precision*",
                              "text_precision.*", "acceptance.variance_mechanism.*", "cost_frontier.*"),
                _HEADLINE),
    # 03: gradient noise
    Attribution(UNEXPLAINED, ("noise_transfer.*_ratio", "text_rootbudget.oscc_select.*"),
                "with two actions a noise ratio is the contrast-variance ratio (Proposition 3), whose size chapter "
                "02 leaves unexplained: " + _HEADLINE),
    Attribution(OPEN_PARAMETER, ("noise_transfer.*.clip_fraction", "clipping.*", "learning_boundary_text.*",
                                 "text_bounded.scalar_screen.*", "extended_controls.scalar_clipped.*",
                                 "retained_evidence.scalar_clipped.*", "acceptance.clipping_interaction.*"),
                "how often the clip binds, and how far the probability ratios spread, are set by the step size and "
                "the behaviour lag of each setting, which the paper does not give (chapter 03 names ours)"),
    # 04: the selector
    Attribution(OPEN_PARAMETER, ("calibration.*", "abstract.calibration.*", "text_action_support.calibration.*",
                                 "selector_axes_text.calibration.*", "fig_calibration_size.*"),
                "the frozen checkpoint and the clip B of the gain scores, which the paper does not give, set the "
                "gains and the spread of the scores, and so the calibration size at which a bound certifies: ours "
                "are small next to the spread, so certification comes later than the paper's (chapter 04's sweep)"),
    Attribution(PAPER, ("multi_action.3_actions.oscc_select.*", "multi_action.3_actions.oracle_select.*",
                        "text_action_support.3_actions.oscc_select.*", "selector_axes_text.3_actions.oscc_select.*"),
                "at Leduc's three-action roots Fold's return is constant, which leaves one covariance for a "
                "coupling to change; the paper's continuation-only choice is then the noise minimiser only for "
                "the root policies chapter 04's scan counts, and not for the paper's own variances"),
    Attribution(UNEXPLAINED, ("multi_action.*", "selector_stress.*", "text_action_support.3_actions.*",
                              "selector_axes_text.3_actions.*"),
                "ours are computed at chapter 04's frozen checkpoint; the paper's two-action variances repeat its "
                "headline's, whose size chapter 02 leaves unexplained"),
    # 05: the learners and the solver
    Attribution(CONSTRUCTION, ("learning_boundary.exact_calibration.*", "retained_evidence.exact_calibration.*",
                               "extended_controls.exact_solver.*", "measured_solver.exact_cfr_plus.exploitability",
                               "measured_solver.exact_cfr_plus.nashconv"),
                "our CFR+ agrees with OpenSpiel's and at the paper's iteration count is far closer to equilibrium "
                "than the paper's number (chapter 05's calibration), so the paper's solver or its count of "
                "iterations is not the CFR+ it names"),
    Attribution(OPEN_PARAMETER, ("*.task_success", "*.success_mean", "*.success_sd", "*.return_mean",
                                 "*.return_sd"),
                "the paper does not name the opponent its return and task success are measured against; against "
                "the uniform opponent (our reading) even the near-equilibrium CFR+ policy has a task success near "
                "one half (chapter 05's solver table), far from the paper's"),
    Attribution(LEARNER, _LEARNED + ("measured_solver.*", "measured_independent.*", "app_solver.*",
                                     "text_bounded.policy_screen.*", "learning_boundary.policy_solver.*",
                                     "retained_evidence.policy_solver.*", "acceptance.solver_transfer.value",
                                     "acceptance.solver_transfer.exploitability", "release.*", "solver_text.*"),
                "the paper's literal learner (decision points drawn on-policy) stalls far from equilibrium at the "
                "paper's budget (chapter 05's screen and learning study), so the policies it reaches, and every "
                "number measured on them, differ from the paper's"),
    Attribution(UNEXPLAINED, ("text_bounded.frozen_opponent.*", "learning_boundary.frozen_opponent.*",
                              "retained_evidence.frozen_opponent.*", "extended_controls.frozen_opponent.*"),
                "fixing the rank pair leaves the paired mode only the card's suit and the public card to share, so "
                "its margin standard errors are close to the independent mode's (chapter 05's frozen screen); the "
                "size of the paper's errors follows from no setting it states"),
    # 06: transfer
    Attribution(LEARNER, ("measured_transfer.*", "app_transfer.*", "transfer_text.*", "text_rootbudget.kuhn.*",
                          "acceptance.solver_transfer.transfer_ratio"),
                "the operating point frozen on Leduc trains the paper's literal learner, which stalls far from "
                "equilibrium (chapter 05), and its Kuhn checkpoints set every number measured on them (chapter 06)"),
)


def attribution_of(claim_id: str | None) -> Attribution | None:
    """The attribution declared for `claim_id` (the first whose pattern holds it), or None."""
    if not claim_id:
        return None
    return next((a for a in ATTRIBUTIONS if a.holds(claim_id)), None)


# ----- the evidence, from a line's own numbers -------------------------------------------------------------------
_number, _text, _interval = is_finite_number, value_text, interval_of


def own_numbers(record: Mapping) -> str:
    """'the paper's P against our O [lo, hi], exact E' (what a line's evidence starts from)."""
    iv, exact = _interval(record), record.get("exact")
    text = f"the paper's {_text(record.get('paper'))} against our {_text(record.get('ours'))}"
    if iv is not None:
        text += f" {_text(iv)}"
    if _number(exact):
        text += f", exact {_text(exact)}"
    return text


def sampling_clause(record: Mapping) -> str:
    """"our estimate agrees with the exact value by enumeration, so the gap is not sampling noise; " where the line's
    exact value lies in its interval (or equals ours), else ""."""
    iv, exact, ours = _interval(record), record.get("exact"), record.get("ours")
    if not _number(exact):
        return ""
    agrees = iv[0] <= float(exact) <= iv[1] if iv is not None else _number(ours) and float(ours) == float(exact)
    return ("our estimate agrees with the exact value by enumeration, so the gap is not sampling noise; "
            if agrees else "")


def _readings(record: Mapping) -> list[Mapping]:
    return [r for r in record.get("readings") or () if isinstance(r, Mapping)]


def _reading_evidence(record: Mapping) -> str:
    listed = "; ".join(f"{_text(r.get('ours'))} ({r['verdict']}) under '{r['reading']}'" for r in _readings(record))
    return f"the paper's {_text(record.get('paper'))} against ours under each reading: {listed}"


def _impossible_evidence(record: Mapping) -> str | None:
    broken = [r for r in _readings(record) if r.get("verdict") == claims.IMPOSSIBLE]
    if not broken:
        return None
    bound = broken[0].get("reason") or "a bound of the game's rules"
    more = f" (and under {len(broken) - 1} more)" if len(broken) > 1 else ""
    return (f"the paper's {_text(record.get('paper'))} is impossible under the reading '{broken[0]['reading']}'"
            f"{more}: {bound}; ours is {_text(record.get('ours'))} under '{record.get('reading') or 'its reading'}'")


def _unresolved(record: Mapping) -> bool:
    """An inconclusive line whose relation holds on our estimate but not resolved, or whose interval reaches 0."""
    if record.get("verdict") != claims.INCONCLUSIVE:
        return False
    iv = _interval(record)
    return (bool(record.get("relation")) and record.get("relation holds") is True
            and record.get("relation resolved") is False) or (iv is not None and iv[0] <= 0.0 <= iv[1])


def _lookup_id(record: Mapping) -> str | None:
    return (record.get("printing of") or record.get("via") or record.get("id") or record.get("claim id")
            or record.get("sensitivity of"))


def attribute(record: Mapping) -> tuple[str, str] | None:
    """(cause name, evidence) of a gap line or row record, by the rules of the module docstring; None for a line
    that is no gap, or a gap no rule covers (the ledger then refuses it)."""
    if not is_gap(record.get("verdict")):
        return None
    given, evidence = record.get(CAUSE_KEY), record.get(EVIDENCE_KEY)
    if given in _BY_NAME and evidence and str(evidence).strip():
        return given, str(evidence)
    if record.get("verdict") == claims.DEPENDS and _readings(record):
        return OPEN_PARAMETER.name, _reading_evidence(record) + "; the paper's text fixes none of them"
    impossible = _impossible_evidence(record)
    if impossible is not None:
        return PAPER.name, impossible
    if _unresolved(record):
        return PRECISION.name, (f"{own_numbers(record)}: the paper's value is inside our interval, which also holds "
                                f"values that contradict “{record.get('relation') or 'a positive value'}”")
    found = attribution_of(_lookup_id(record))
    if found is None:
        return None
    return found.cause.name, f"{own_numbers(record)}: {sampling_clause(record)}{found.why}"


def stamp(record: dict, given: str | None = None, evidence: str | None = None) -> dict:
    """`record` (a row's record, changed in place and returned) with the cause of its gap and the evidence
    (`attribute`; `given`, `evidence`: the row's own, where it names one), and without either on a line that is no
    gap."""
    record.pop(CAUSE_KEY, None)
    record.pop(EVIDENCE_KEY, None)
    found = attribute({**record, CAUSE_KEY: given, EVIDENCE_KEY: evidence})
    if found is not None:
        record[CAUSE_KEY], record[EVIDENCE_KEY] = found
    return record
