"""The chapter's findings in a few sentences, written from its own computed numbers and verdicts: the three-line
result box that opens the chapter and the bullets of the landing page (`reporting.findings.Findings`).

Paper numbers are read from the claims file (never typed); every other number
is the chapter's: the CFR+ calibration's first iteration at the paper's value,
the learners' exploitability at the matched budget, the diagnostic's mean
difference with its interval, the orderings resolved at 95%, and the paper
numbers that are impossible under the rules under every reading, or under some
readings only.
"""
from __future__ import annotations

from collections import Counter

from oscc_core.chapters.solver import coupling_grid, study_view
from oscc_core.chapters.solver.calibration import MAX_EXPLOITABILITY_CLAIM
from oscc_core.chapters.solver.feasibility import READINGS, SHORT
from oscc_core.chapters.solver.rows import orderings
from oscc_core.chapters.solver.training import LEARNED_ARMS
from oscc_core.learning import summary
from oscc_core.reporting import claims
from oscc_core.learning.study_design import GRID_BASELINES
from oscc_core.reporting import study_tables
from oscc_core.reporting.findings import OPEN, Findings, Statement, relation_verdict, sided_verdict
from oscc_core.reporting.tally import chapter_counts_text

STEM = "05_solver"

LEARNED_CLAIM = "measured_solver.cp_grpo_paired.exploitability"
DIAGNOSTIC_CLAIM = "fig_three_seed.mean_difference"


def _first_reach(cal: dict, game: str) -> str:
    reach = next(iter(cal[game]["targets"].values()))["first_reach"]
    return f"after {reach:,} iterations" if reach else "at no iteration of its run"


def _impossible(rows) -> tuple[list, list, list]:
    """Each paper value once (printings left out): (rows impossible under every reading, rows impossible under some
    readings only whose other readings are compared, rows impossible under every compared reading and not compared
    under another: the uniform policy's exploitability, impossible for the fixed policy, read also as a learned arm
    the book does not run)."""
    def broken(r):
        return bool(r.readings) and any(x["verdict"] == claims.IMPOSSIBLE for x in r.readings)
    rows = [r for r in rows if r.primary and r.printing_of is None]      # each paper value once
    every = [r for r in rows if r.verdict == claims.IMPOSSIBLE]
    unrun = [r for r in rows if r.verdict == claims.NOT_COMPARED and broken(r)]
    some = [r for r in rows if r.verdict not in (claims.IMPOSSIBLE, claims.NOT_COMPARED) and broken(r)]
    return every, some, unrun


def _some_text(rows) -> str:
    """How the rows impossible under some readings only are decided: how many take the verdict under the reading
    the paper's text fixes (and which verdicts), how many depend on the reading ("none" without such rows)."""
    if not rows:
        return "none"
    fixed = Counter(r.verdict for r in rows if r.verdict != claims.DEPENDS)
    open_ = sum(r.verdict == claims.DEPENDS for r in rows)
    held_out = {READINGS[k] for k in ("held_out", "br0_held_out", "br1_held_out")}
    short = {READINGS[k]: v for k, v in SHORT.items()}
    used = list(dict.fromkeys("the mean over held-out roots" if set(r.reading.split("; ")) <= held_out else
                              f"'{short.get(r.reading, r.reading)}'" for r in rows if r.verdict != claims.DEPENDS))
    parts = []
    if fixed:
        parts.append(f"{sum(fixed.values())} take the verdict under the reading the paper's text fixes ("
                     + " or ".join(used) + f"): {', '.join(f'{n} {v}' for v, n in fixed.most_common())}")
    if open_:
        parts.append(f"{open_} {'depend' if open_ > 1 else 'depends'} on the reading")
    return "; ".join(parts)


def _unrun_text(rows) -> str:
    return "; ".join(f"the paper's {_number(r.paper)} for {r.claim_id} is impossible for the fixed uniform policy "
                     f"under every reading and not compared as a learned arm with uniform behaviour, which the book "
                     f"does not run" for r in rows)


#: What a reading-dependent value's reading is about, by a part of its claim id (the first that matches).
OPEN_CHOICES = (("update_variance", "the step size eta of an update variance"),
                ("frozen_opponent", "the clip epsilon of the frozen screen"),
                ("", "the aggregation or the seat of a value"))


def _open_choices(claim_ids) -> str:
    """The choices the paper leaves open on which the given values' verdicts depend, with how many each."""
    found = Counter(next(text for part, text in OPEN_CHOICES if part in cid) for cid in claim_ids)
    return ", ".join(f"{text} ({n})" for text, n in found.items()) or "none"


def _number(x) -> str:
    return claims.format_value(x) if not isinstance(x, float) else f"{x:.4g}"


#: What the converging learner changes, by its option set (`study_design.CONVERGING_OPTIONS`).
LEARNER_TEXT = {"none": "counterfactual decision points and a proximal pull",
                "fast": "counterfactual decision points, an annealed proximal pull, a history baseline and an "
                        "average weighted by (t + 1)^2",
                "steady": "counterfactual decision points, a constant proximal pull toward a moving magnet, a "
                          "history baseline and an average weighted by t + 1"}


def _grid_statement(study: dict) -> Statement | None:
    """The 2 x 2's answer (both arms at one choice, baseline on and off): filed by how often CP-GRPO is resolved
    faster to the first threshold (the paper's direction) and how often independent sampling is."""
    cells = coupling_grid.cells(study)
    if not cells:
        return None
    th = float(study["design"]["thresholds"][0])
    said, faster = [], Counter()
    for baseline in reversed(GRID_BASELINES):
        parts = []
        for owner, b, cell in cells:
            if b == baseline:
                r = coupling_grid.ratio(cell, th)
                faster[coupling_grid.direction(r)] += 1
                parts.append(f"{coupling_grid.ratio_text(r)} at {coupling_grid.choice_label(study, owner)}")
        said.append(f"with the history {coupling_grid.BASELINE_TEXT[baseline]} {'; '.join(parts)}")
    text = (f"At a common operating point (both arms at one choice, {len(study['design']['seeds'])} seeds), "
            f"independent / CP-GRPO calls to {th:g} chips is " + "; ".join(said) +
            f": {coupling_grid.conclusion(study)} (CP-GRPO is resolved faster in {faster['CP-GRPO']} of "
            f"{len(cells)} cells, independent sampling in {faster['independent']}).")
    return Statement(text, sided_verdict(faster["CP-GRPO"], faster["independent"]))


def _tuning_statement(study: dict) -> Statement:
    """The study's own-choice ratio, read as the tuning's effect beside the common-choice ratios (not a claim of
    the paper: open)."""
    return Statement(f"Each arm at its own tuned choice: {coupling_grid.tuning_reading(study)}", OPEN)


def _learner_statement(study: dict) -> Statement:
    """How far the converging learner gets, whether any of its curves rises, and its curve against the paper's
    exploitability at the paper's budget (the paper's number is reached later, not at its budget: not
    reproduced)."""
    d = study["design"]
    top = max(int(b) for b in d["budgets"])
    conv = study["summary"]["converging"][str(top)]["arms"]
    to = study_view.calls_to(study, "converging", "cp_grpo", float(d["thresholds"][0]))
    reach = ("never within the study" if to["calls"] is None else
             f"after about {study_view.calls_text(to['calls'])} physical calls ({to['reached']} of {to['seeds']} "
             f"seeds)")
    rising = study_tables.rises(study["runs"]["converging"])
    learner = LEARNER_TEXT[d.get("converging_options", "none")]
    text = (f"With our converging learner ({learner}, not the paper's), CP-GRPO's average policy falls to "
            f"{d['thresholds'][0]:g} chips {reach} and to {conv['cp_grpo']['exploitability_average']['mean']:.4f} at "
            f"{top:,} calls; its curves rise after their lowest point for "
            f"{', '.join(rising) if rising else 'no arm'}.")
    return Statement(text, claims.NOT_REPRODUCED if rising else OPEN)


def _matched_budget_range(records: dict, study: dict | None, budget: int) -> list[float]:
    """The learned arms' seed means of the average policy's exploitability at the paper's budget: the learning
    study's (literal learner, every study seed: the chapter's table) when there is one, else the five-seed
    screen's."""
    if study is not None:
        entry = study["summary"]["literal"][str(budget)]["arms"]
        return [entry[arm]["exploitability_average"]["mean"] for arm in LEARNED_ARMS if arm in entry]
    return [summary.values(records, arm, "exploitability").mean() for arm in LEARNED_ARMS]


def findings(cal: dict, records: dict, diagnostic: list, rows: list, budget: int, study: dict | None = None
             ) -> Findings:
    """The box and landing bullets from the calibration results, the screen's records, the diagnostic rows,
    every comparison row of the chapter (`rows`) and the learning study (`study`, when there is one): each
    sentence filed under the line its computed verdict belongs to (`reporting.findings.Findings.filed`), the
    learning study's answer at common operating points first."""
    exploit = _matched_budget_range(records, study, budget)
    paper = claims.claim(LEARNED_CLAIM)
    mean = next(r for r in diagnostic if r.claim_id == DIAGNOSTIC_CLAIM)
    resolved = [o for o in orderings(records) if o["resolved (every paired difference, 95%)"] == "yes"]
    every, some, unrun = _impossible(rows)
    kuhn_paper = claims.claim(MAX_EXPLOITABILITY_CLAIM["kuhn"])
    leduc_paper = claims.claim(MAX_EXPLOITABILITY_CLAIM["leduc"])
    reached = all(next(iter(cal[g]["targets"].values()))["first_reach"] for g in ("leduc", "kuhn"))
    statements = []
    if study is not None:
        grid = _grid_statement(study)
        statements += ([grid] if grid is not None else []) + [_tuning_statement(study), _learner_statement(study)]
    statements += [
        Statement(f"Our exact CFR+ agrees with OpenSpiel's and reaches the paper's calibration exploitability "
                  f"({_number(leduc_paper)} chips in Leduc, {_number(kuhn_paper)} in Kuhn) "
                  f"{_first_reach(cal, 'leduc')} in Leduc and {_first_reach(cal, 'kuhn')} in Kuhn.",
                  relation_verdict(reached)),
        Statement(f"{len(resolved)} of the {len(orderings(records))} orderings the paper states hold with every "
                  f"paired per-seed difference resolved at 95%.",
                  sided_verdict(len(resolved), len(orderings(records)) - len(resolved))),
        Statement(f"At the paper's matched budget of {budget:,} physical calls per seed the literal learner's "
                  f"average policies are {min(exploit):.3f} to {max(exploit):.3f} chips exploitable (seed means"
                  f"{', ' + str(len(study['design']['seeds'])) + ' seeds' if study is not None else ''}), against "
                  f"the paper's {_number(paper)} for CP-GRPO.", claims.NOT_REPRODUCED),
        Statement(f"The three-seed diagnostic: independent minus paired is {mean.ours:+.3f} chips, 95% interval "
                  f"[{mean.interval[0]:.2f}, {mean.interval[1]:.2f}], against the paper's {_number(mean.paper)}.",
                  mean.verdict)]
    names = "; ".join(f"{r.quantity.split(' (')[0]} = {_number(r.paper)} (ours {_number(float(r.ours))})"
                      for r in every) or "none"
    depends = {r.printing_of or r.claim_id for r in rows if r.primary and r.verdict == claims.DEPENDS}
    statements.append(Statement(
        f"Impossible under the rules under every reading: {names}" + (f" ({_unrun_text(unrun)})" if unrun else "") +
        f". {len(some)} more paper numbers (values, best-response values and their intervals) are impossible as "
        f"whole-game self-play numbers but allowed under another reading: {_some_text(some)}; {len(depends)} values "
        f"of the chapter depend on a reading the paper leaves open: {_open_choices(sorted(depends))}.",
        claims.IMPOSSIBLE if every else OPEN))
    learning = (statements[0].text if study is not None else
                f"{len(resolved)} of {len(orderings(records))} orderings the paper states (CP-GRPO best, the uniform "
                f"policy worst) are resolved at 95% on paired per-seed differences; the three-seed diagnostic's "
                f"sign is {mean.verdict} ({mean.ours:+.3f} chips against the paper's {_number(mean.paper)}).")
    landing = (f"Does coupling learn better? {learning}",
               f"Learners: at the matched budget the literal learner's average policies are {min(exploit):.3f} to "
               f"{max(exploit):.3f} "
               f"chips exploitable against the paper's {_number(paper)}; exact CFR+ reaches the paper's calibration "
               f"values {_first_reach(cal, 'leduc')} (Leduc), not at the budgets the paper names.",
               f"Impossible under every reading: {names}; {len(some)} more numbers are impossible only as "
               f"whole-game self-play values ({_some_text(some)}); {len(depends)} values depend on a reading.")
    return Findings.filed(statements, landing, counts=chapter_counts_text(STEM, rows))


def impossible_glue(rows) -> dict[str, str]:
    """Two sentences the chapter glues: which paper numbers are impossible under every reading (and which are
    impossible under every compared reading but not compared under one the book does not run), and how the
    numbers impossible under some readings only are decided."""
    every, some, unrun = _impossible(rows)
    if every:
        names = "; ".join(f"{r.claim_id} = {_number(r.paper)}" for r in every)
        first = (f"{len(every)} paper number{'s are' if len(every) > 1 else ' is'} impossible under the rules under "
                 f"every reading ({names}).")
    else:
        first = "No paper number of the section is impossible under every reading."
    if unrun:
        first += f" {_unrun_text(unrun)[0].upper()}{_unrun_text(unrun)[1:]}: not compared."
    second = (f"{len(some)} more {'are' if len(some) != 1 else 'is'} impossible under some readings only (as a "
              f"whole-game self-play number) and allowed under others: {_some_text(some)}.")
    return {"impossible_every": first, "impossible_some": second}
