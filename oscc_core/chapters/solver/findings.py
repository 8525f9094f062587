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

from oscc_core.chapters.solver import study_view
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


def _impossible(rows) -> tuple[list, list]:
    """(rows impossible under every reading, rows impossible under some readings only)."""
    every = [r for r in rows if r.verdict == claims.IMPOSSIBLE]
    some = [r for r in rows if r.verdict != claims.IMPOSSIBLE and r.readings
            and any(x["verdict"] == claims.IMPOSSIBLE for x in r.readings)]
    return every, some


def _first_allowed(rows) -> str:
    """The verdicts that rows impossible under some readings take from their first allowed, compared reading,
    counted, with the readings that gave them ("none" without such rows)."""
    if not rows:
        return "none"
    counts = Counter(r.verdict for r in rows)
    short = {READINGS[k]: v for k, v in SHORT.items()}
    used = list(dict.fromkeys(short.get(r.reading, r.reading) for r in rows))
    return f"{', '.join(f'{n} {v}' for v, n in counts.most_common())}, read as " + " or as ".join(
        f"'{u}'" for u in used)


def _number(x) -> str:
    return claims.format_value(x) if not isinstance(x, float) else f"{x:.4g}"


def _study_sentences(study: dict) -> tuple[str, str]:
    """(what the study shows of the literal learner at the paper's budget, what the converging learner reaches)."""
    d = study["design"]
    lit = study["summary"]["literal"][str(d["budget"])]
    diff = lit["differences"]["independent - cp_grpo"]
    top = max(int(b) for b in d["budgets"])
    conv = study["summary"]["converging"][str(top)]["arms"]
    to = study["thresholds"]["converging"]["cp_grpo"][repr(float(d["thresholds"][0]))]
    literal = (f"over {len(d['seeds'])} seeds at that budget, independent minus CP-GRPO is {diff['mean']:+.3f} "
               f"chips, 95% interval [{diff['low']:.3f}, {diff['high']:.3f}] (CP-GRPO lower on {diff['cp_grpo_lower']} "
               f"of {diff['n']} seeds)")
    reach = ("never within the study" if to["geometric_mean"] is None else
             f"after about {to['geometric_mean']:,.0f} physical calls ({to['reached']} of {to['seeds']} seeds)")
    converging = (f"with our converging learner (counterfactual decision points and a proximal pull, not the "
                  f"paper's) CP-GRPO's average policy falls to {d['thresholds'][0]:g} chips {reach} and to "
                  f"{conv['cp_grpo']['exploitability_average']['mean']:.3f} at {top:,} calls, and independent minus "
                  f"CP-GRPO has its 95% interval "
                  f"{study_view.resolved_text(study, 'converging', 'independent - cp_grpo')} "
                  f"(literal learner: {study_view.resolved_text(study, 'literal', 'independent - cp_grpo')})")
    return literal, converging


def findings(cal: dict, records: dict, diagnostic: list, rows: list, budget: int, study: dict | None = None
             ) -> Findings:
    """The box and landing bullets from the calibration results, the screen's records, the diagnostic rows,
    every comparison row of the chapter (`rows`) and the learning study (`study`, when there is one)."""
    exploit = [summary.values(records, arm, "exploitability").mean() for arm in LEARNED_ARMS]
    paper = claims.claim(LEARNED_CLAIM)
    mean = next(r for r in diagnostic if r.claim_id == DIAGNOSTIC_CLAIM)
    resolved = [o for o in orderings(records) if o["resolved (every paired difference, 95%)"] == "yes"]
    every, some = _impossible(rows)
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
        literal, converging = _study_sentences(study)
        holds = holds[:-1] + f"; {converging}."
        does_not = does_not[:-1] + f"; {literal}."
    names = "; ".join(f"{r.quantity.split(' (')[0]} = {_number(r.paper)} (ours {_number(float(r.ours))})"
                      for r in every) or "none"
    impossible = (f"Impossible under the rules under every reading: {names}. {len(some)} more paper numbers "
                  f"(values and best-response values and their intervals) are impossible as whole-game self-play "
                  f"numbers but allowed under a later reading; each takes the verdict of the first allowed, compared "
                  f"reading: {_first_allowed(some)}.")
    landing = (f"Learners: at the matched budget our average policies are {min(exploit):.2f} to {max(exploit):.2f} "
               f"chips exploitable against the paper's {_number(paper)}; exact CFR+ reaches the paper's calibration "
               f"values {_first_reach(cal, 'leduc')} (Leduc), not at the budgets the paper names.",
               (f"The paper's learning question with power: {_study_sentences(study)[0]}; "
                f"{_study_sentences(study)[1]}." if study is not None else
                f"{len(resolved)} of {len(orderings(records))} orderings the paper states (CP-GRPO best, the uniform "
                f"policy worst) are resolved at 95% on paired per-seed differences; the three-seed diagnostic's "
                f"sign is {mean.verdict} ({mean.ours:+.3f} chips against the paper's {_number(mean.paper)})."),
               f"Impossible under every reading: {names}; {len(some)} more numbers are impossible only as "
               f"whole-game self-play values ({_first_allowed(some)}).")
    return Findings(box=(holds, does_not, impossible), landing=landing, counts=chapter_counts_text(STEM, rows))


def impossible_glue(rows) -> dict[str, str]:
    """Two sentences the chapter glues: which paper numbers are impossible under every reading, and how many under
    some readings only."""
    every, some = _impossible(rows)
    if every:
        names = "; ".join(f"{r.claim_id} = {_number(r.paper)}" for r in every)
        first = (f"{len(every)} paper number{'s are' if len(every) > 1 else ' is'} impossible under the rules under "
                 f"every reading ({names}).")
    else:
        first = "No paper number of the section is impossible under every reading."
    second = (f"{len(some)} more {'are' if len(some) != 1 else 'is'} impossible under some readings only (as a "
              f"whole-game self-play number) and take{'s' if len(some) == 1 else ''} the verdict of the first "
              f"reading in the listed order that the rules allow and that is compared: {_first_allowed(some)}.")
    return {"impossible_every": first, "impossible_some": second}


# ----- the last iterate beside the average policy -------------------------------------------------
def last_iterate_change(study: dict, learner: str, arm: str) -> dict:
    """The change of the arm's last-iterate exploitability from the paper's budget to the study's largest (chips),
    paired by seed: mean, 95% t-interval and n, with the seed means at both budgets and the average policy's."""
    from oscc_core.method.stats import t_interval

    d = study["design"]
    first, top = str(d["budget"]), str(max(int(b) for b in d["budgets"]))
    seeds = study["runs"][learner][arm]
    iv = t_interval([rec[top]["exploitability_last"] - rec[first]["exploitability_last"] for rec in seeds.values()])
    at = {b: study["summary"][learner][b]["arms"][arm] for b in (first, top)}
    return {"mean": iv.mean, "low": iv.low, "high": iv.high, "n": iv.n,
            "last": [at[b]["exploitability_last"]["mean"] for b in (first, top)],
            "average": [at[b]["exploitability_average"]["mean"] for b in (first, top)]}


def _direction(change: dict) -> str:
    if change["low"] > 0:
        return "rises"
    if change["high"] < 0:
        return "falls"
    return "does not change at 95%"


def last_iterate_sentence(study: dict, learner: str = "converging") -> str:
    """The last iterate beside the average policy for one learner of the study, from its runs: CP-GRPO's seed means
    of both at the paper's budget and the largest, the last iterate's paired change between them (95% t-interval),
    and for how many arms the last iterate rises (resolved) while the average policy falls."""
    d = study["design"]
    first, top = int(d["budget"]), max(int(b) for b in d["budgets"])
    arms = [a for a in study["runs"][learner] if str(top) in next(iter(study["runs"][learner][a].values()))]
    changes = {arm: last_iterate_change(study, learner, arm) for arm in arms}
    cp = changes["cp_grpo"]
    rising = [a for a, c in changes.items() if c["low"] > 0 and c["average"][1] < c["average"][0]]
    text = (f"From {first:,} to {top:,} calls the {learner} learner's CP-GRPO average policy goes from "
            f"{cp['average'][0]:.3f} to {cp['average'][1]:.3f} chips exploitable, while its last iterate goes from "
            f"{cp['last'][0]:.3f} to {cp['last'][1]:.3f}: the last iterate {_direction(cp)} (change "
            f"{cp['mean']:+.3f} chips, 95% interval [{cp['low']:+.3f}, {cp['high']:+.3f}], paired over {cp['n']} "
            f"seeds). Over the {len(changes)} learned arms the last iterate rises while the average policy falls for "
            f"{len(rising)}" + (f" ({', '.join(rising)})" if rising else ""))
    if rising:
        text += ("; there the iterates themselves do not converge, only their average does, so the study compares "
                 "average policies (the chapter's checkpoints), and a last iterate is no substitute for one.")
    else:
        text += "."
    return text
