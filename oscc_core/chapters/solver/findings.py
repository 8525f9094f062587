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

from oscc_core.chapters.solver import study_coupling, study_view
from oscc_core.chapters.solver.calibration import MAX_EXPLOITABILITY_CLAIM
from oscc_core.chapters.solver.feasibility import READINGS, SHORT
from oscc_core.chapters.solver.rows import orderings
from oscc_core.chapters.solver.training import LEARNED_ARMS
from oscc_core.learning import summary
from oscc_core.reporting import claims
from oscc_core.reporting.findings import Findings
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
                        "average weighted by (t + 1)^2"}


def _coupling_sentence(study: dict, common: dict | None) -> str:
    """The paired ratio of calls to the first threshold, each arm at its own choice, and at one operating point."""
    first = float(study["design"]["thresholds"][0])
    key = repr(first)
    own = study_coupling.ratio_text(study_coupling.summaries(study)["converging"]["calls_ratio"][key])
    text = f"independent over CP-GRPO calls to {first:g} chips is {own} with each arm at its own tuned choice"
    if common is None:
        return text
    at = {o: study_coupling.ratio_text(common[o]["summary"]["calls_ratio"][key]) for o in common}
    return (text + f", and {at['cp_grpo']} at CP-GRPO's choice, {at['independent']} at independent's (both arms at "
            f"one operating point)")


def _study_sentences(study: dict, common: dict | None = None) -> tuple[str, str]:
    """(what the study shows of the literal learner at the paper's budget, what the converging learner reaches,
    with the coupling's ratio of calls, each arm at its own choice and, given `common`, at one operating point)."""
    d = study["design"]
    lit = study["summary"]["literal"][str(d["budget"])]
    diff = lit["differences"]["independent - cp_grpo"]
    top = max(int(b) for b in d["budgets"])
    conv = study["summary"]["converging"][str(top)]["arms"]
    to = study_view.calls_to(study, "converging", "cp_grpo", float(d["thresholds"][0]))
    literal = (f"over {len(d['seeds'])} seeds at that budget, independent minus CP-GRPO is {diff['mean']:+.3f} "
               f"chips, 95% interval [{diff['low']:.3f}, {diff['high']:.3f}] (CP-GRPO lower on {diff['cp_grpo_lower']} "
               f"of {diff['n']} seeds)")
    reach = ("never within the study" if to["calls"] is None else
             f"after about {study_view.calls_text(to['calls'])} physical calls (geometric mean over seeds, "
             f"log-log interpolation between stored budgets; {to['reached']} of {to['seeds']} seeds)")
    learner = LEARNER_TEXT[d.get("converging_options", "none")]
    converging = (f"with our converging learner ({learner}, not the paper's) CP-GRPO's average policy falls to {d['thresholds'][0]:g} chips {reach} and to "
                  f"{conv['cp_grpo']['exploitability_average']['mean']:.3f} at {top:,} calls, and independent minus "
                  f"CP-GRPO has its 95% interval "
                  f"{study_view.resolved_text(study, 'converging', 'independent - cp_grpo')} "
                  f"(literal learner: {study_view.resolved_text(study, 'literal', 'independent - cp_grpo')}); "
                  f"{_coupling_sentence(study, common)}")
    return literal, converging


def findings(cal: dict, records: dict, diagnostic: list, rows: list, budget: int, study: dict | None = None,
             common: dict | None = None) -> Findings:
    """The box and landing bullets from the calibration results, the screen's records, the diagnostic rows,
    every comparison row of the chapter (`rows`), the learning study (`study`, when there is one) and the coupling
    at one operating point (`common`, `chapters.solver.common_point.run`)."""
    exploit = [summary.values(records, arm, "exploitability").mean() for arm in LEARNED_ARMS]
    paper = claims.claim(LEARNED_CLAIM)
    mean = next(r for r in diagnostic if r.claim_id == DIAGNOSTIC_CLAIM)
    resolved = [o for o in orderings(records) if o["resolved (every paired difference, 95%)"] == "yes"]
    every, some, unrun = _impossible(rows)
    kuhn_paper = claims.claim(MAX_EXPLOITABILITY_CLAIM["kuhn"])
    leduc_paper = claims.claim(MAX_EXPLOITABILITY_CLAIM["leduc"])
    holds = (f"Our exact CFR+ agrees with OpenSpiel's and reaches the paper's calibration exploitability "
             f"({_number(leduc_paper)} chips in Leduc, {_number(kuhn_paper)} in Kuhn) {_first_reach(cal, 'leduc')} "
             f"in Leduc and {_first_reach(cal, 'kuhn')} in Kuhn; {len(resolved)} of the {len(orderings(records))} "
             f"orderings the paper states hold with every paired per-seed difference resolved at 95%.")
    does_not = (f"At the paper's matched budget of {budget:,} physical calls per seed our learners' average "
                f"policies are {min(exploit):.2f} to {max(exploit):.2f} chips exploitable (seed means), against the "
                f"paper's {_number(paper)} for CP-GRPO; the three-seed diagnostic is {mean.verdict}: independent "
                f"minus paired is {mean.ours:+.3f} chips, 95% interval [{mean.interval[0]:.2f}, "
                f"{mean.interval[1]:.2f}], against the paper's {_number(mean.paper)}.")
    if study is not None:
        literal, converging = _study_sentences(study, common)
        holds = holds[:-1] + f"; {converging}."
        does_not = does_not[:-1] + f"; {literal}."
    names = "; ".join(f"{r.quantity.split(' (')[0]} = {_number(r.paper)} (ours {_number(float(r.ours))})"
                      for r in every) or "none"
    depends = {r.printing_of or r.claim_id for r in rows if r.primary and r.verdict == claims.DEPENDS}
    impossible = (f"Impossible under the rules under every reading: {names}" +
                  (f" ({_unrun_text(unrun)})" if unrun else "") +
                  f". {len(some)} more paper numbers (values, best-response values and their intervals) are "
                  f"impossible as whole-game self-play numbers but allowed under another reading: {_some_text(some)}; "
                  f"{len(depends)} values of the chapter depend on a reading the paper leaves open: "
                  f"{_open_choices(sorted(depends))}.")
    landing = (f"Learners: at the matched budget our average policies are {min(exploit):.2f} to {max(exploit):.2f} "
               f"chips exploitable against the paper's {_number(paper)}; exact CFR+ reaches the paper's calibration "
               f"values {_first_reach(cal, 'leduc')} (Leduc), not at the budgets the paper names.",
               (f"The paper's learning question with power: {_study_sentences(study, common)[0]}; "
                f"{_study_sentences(study, common)[1]}." if study is not None else
                f"{len(resolved)} of {len(orderings(records))} orderings the paper states (CP-GRPO best, the uniform "
                f"policy worst) are resolved at 95% on paired per-seed differences; the three-seed diagnostic's "
                f"sign is {mean.verdict} ({mean.ours:+.3f} chips against the paper's {_number(mean.paper)})."),
               f"Impossible under every reading: {names}; {len(some)} more numbers are impossible only as "
               f"whole-game self-play values ({_some_text(some)}); {len(depends)} values depend on a reading.")
    return Findings(box=(holds, does_not, impossible), landing=landing, counts=chapter_counts_text(STEM, rows))


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
