"""The transfer chapter's findings: the three-line result box and the landing page's bullets.

Every sentence is written from the chapter's rows (our numbers, the paper's
numbers as the claims file holds them, the verdicts) and records; nothing
here types a number.
"""
from __future__ import annotations

from collections import Counter

from oscc_core.chapters.transfer.bounds import AT_ROOT, POOLED, SELF_PLAY
from oscc_core.chapters.transfer.study import claim_of
from oscc_core.reporting import claims
from oscc_core.reporting.findings import OPEN, Findings, Statement, relation_verdict
from oscc_core.reporting.rows import IMPOSSIBLE, Row
from oscc_core.reporting.tally import chapter_counts_text, chapter_tally

#: Verdicts a result row may have, in the order the sentences count them.
COUNTED = (claims.REPRODUCED, claims.INCONCLUSIVE, claims.PARTLY, claims.DEPENDS, claims.NOT_REPRODUCED, IMPOSSIBLE)


STEM = "06_transfer"


def counts_text(rows: list[Row]) -> str:
    """'3 reproduced, 10 inconclusive, ...' over the section's measured values, each once however often the paper
    prints it (`reporting.tally.chapter_tally` over `rows`, every row of the chapter: the landing page's
    function)."""
    c = chapter_tally(STEM, rows)["measurements"]
    return ", ".join(f"{c[v]} {v}" for v in COUNTED if c[v]) or "none compared"


def _item(row: Row, labels: dict) -> str:
    """'<quantity> <ours> (paper <paper>)', with the reading where the verdict depends on it."""
    reading = f", {labels.get(row.reading, row.reading)}" if row.reading_dependent and row.reading else ""
    return f"{row.quantity} {row.ours:.4g} (paper {claims.format_value(row.paper)}{reading})"


def _span(rows: list[Row], game: str, column: str, attr: str) -> str:
    xs = [getattr(r, attr) for r in rows if r.claim_id.startswith(f"measured_transfer.{game}.")
          and r.claim_id.endswith(f".{column}")]
    if attr == "paper":
        return f"{claims.format_value(min(xs))} to {claims.format_value(max(xs))}"
    return f"{min(xs):.3f} to {max(xs):.3f}"


def _holds(measured: list[Row], ratios: list[Row], checkpoints: int, labels: dict) -> tuple[str, str]:
    leaks = sum(r.ours for r in measured if r.claim_id.endswith(".leakage_violations"))
    found = [r for r in measured + ratios if r.verdict == claims.REPRODUCED and r.interval is not None]
    leak = (f"all {checkpoints} checkpoints of both games show no leakage violation, as the paper reports"
            if leaks == 0 else f"our checkpoints show {leaks} leakage violations where the paper reports none")
    items = "; ".join(_item(r, labels) for r in found)
    box = f"{leak[0].upper() + leak[1:]}; reproduced within our 95% intervals: {items or 'no other number'}."
    return box, f"Transfer: {leak}; {len(found)} further numbers reproduced within our 95% intervals."


def _does_not(measured: list[Row], ratios: list[Row]) -> tuple[str, str]:
    leduc = next(r for r in ratios if r.claim_id == "app_transfer.leduc_to_leduc.paired.variance_ratio")
    exploit = (f"our exploitability is {_span(measured, 'kuhn', 'exploitability', 'ours')} chips in Kuhn and "
               f"{_span(measured, 'leduc', 'exploitability', 'ours')} in Leduc, against the paper's "
               f"{_span(measured, 'kuhn', 'exploitability', 'paper')} and "
               f"{_span(measured, 'leduc', 'exploitability', 'paper')}")
    ratio = (f"Leduc's paired variance ratio is {leduc.ours:.3f} (95% interval [{leduc.interval[0]:.3f}, "
             f"{leduc.interval[1]:.3f}]) against the paper's {claims.format_value(leduc.paper)} ({leduc.verdict})")
    box = f"{exploit[0].upper() + exploit[1:]}; {ratio}."
    return box, f"Transfer: {exploit}; {ratio}."


def _impossible(combined: dict, rule: dict, ratios: list[Row]) -> tuple[str, str]:
    """Which paper numbers break a bound of the rules under some reading and under every one, and how the verdicts
    that depend on the reading are decided (the reading the paper's text fixes, or none)."""
    some = [cid for cid, r in combined.items() if any(x["verdict"] == IMPOSSIBLE for x in r.readings or ())]
    every = [cid for cid in some if combined[cid].verdict == IMPOSSIBLE]
    n_contrast = sum(cid.endswith(".contrast_variance") for cid in some)
    kinds = [f"{n_contrast} contrast variances", f"{len(some) - n_contrast} player-0 values"]
    others = (f"; {len(rule)} NashConv or exploitability numbers break theirs" if rule else
              "; no NashConv or exploitability number breaks its bound")
    dependent = [r for r in list(combined.values()) + [r for r in ratios if r.readings] if r.reading_dependent]
    fixed = Counter(r.verdict for r in dependent if r.verdict != claims.DEPENDS)
    still = sum(r.verdict == claims.DEPENDS for r in dependent)
    head = (f"{len(some)} paper numbers ({' and '.join(kinds)}) break a bound of the rules under at least one "
            f"reading, {len(every) or 'none'} under every reading and construction the chapter computes{others}")
    tail = (f"{len(dependent)} verdicts depend on the reading; for {sum(fixed.values())} of them the paper's text "
            f"fixes it (a contrast variance pooled over every decision point, player 0's value over held-out "
            f"roots), which gives " + (", ".join(f"{n} {v}" for v, n in fixed.items()) or "none")
            + (f", and {still} stay {claims.DEPENDS!r}" if still else ""))
    box = f"{head}; {tail}."
    landing = (f"Transfer: {len(some)} paper numbers break a bound of the rules under some reading, "
               f"{len(every) or 'none'} under every reading the chapter computes; {len(dependent)} verdicts depend "
               f"on the reading, {sum(fixed.values())} decided by the reading the paper's text fixes.")
    return box, landing


def _chips(x: float, sign: bool = False) -> str:
    """Chips to four decimals, or to three significant figures below 0.001 (the Kuhn-tuned control reaches 3e-5)."""
    return f"{x:{'+' if sign else ''}.4f}" if abs(x) >= 1e-3 or x == 0 else f"{x:{'+' if sign else ''}.3g}"


def _interval(iv: dict) -> str:
    return f"{_chips(iv['mean'], True)} [{_chips(iv['low'], True)}, {_chips(iv['high'], True)}]"


def study_sentence(study: dict) -> tuple[str, str, bool]:
    """The converging Kuhn study in one clause for the box, a shorter one for the landing page, and whether it
    supports the paper: CP-GRPO's seed mean reaches the
    paper's Kuhn value within the study and CP-GRPO is lower than independent sampling at the largest budget,
    resolved (the paired 95% interval above 0)."""
    d = study["design"]
    top, n = max(int(b) for b in d["budgets"]), len(d["seeds"])
    cp = {b: study["summary"][str(b)]["arms"]["cp_grpo"]["exploitability_average"]["mean"] for b in (d["budget"], top)}
    paper = float(claims.claim(claim_of("cp_grpo")))
    reach = study["thresholds"]["cp_grpo"][repr(paper)]
    diff = study["summary"][str(top)]["differences"]["independent - cp_grpo"]
    resolved = diff["low"] is not None and diff["low"] > 0
    text = (f"with the converging learner (our additions) frozen on Leduc and applied unchanged to Kuhn over {n} "
            f"seeds, CP-GRPO's average policy is {cp[d['budget']]:.4f} chips exploitable at the paper's budget and "
            f"{cp[top]:.4f} at {top // d['budget']} times it, {reach['reached']} of {n} seeds reaching the paper's "
            f"{claims.format_value(paper)} within {top:,} calls; independent minus CP-GRPO there is "
            f"{_interval(diff)} chips ({'CP-GRPO lower, resolved' if resolved else 'unresolved at 95%'})")
    short = (f"with our converging learner frozen on Leduc, Kuhn CP-GRPO reaches {cp[top]:.4f} chips at "
             f"{top // d['budget']} times the paper's budget ({reach['reached']} of {n} seeds reach the paper's "
             f"{claims.format_value(paper)})")
    return text, short, bool(resolved and cp[top] <= paper)


def _exploitability_verdict(measured: list[Row]) -> str:
    """Not reproduced when any of the measured table's exploitability rows misses the paper's value, else
    reproduced (the verdicts the rows computed)."""
    rows = [r for r in measured if r.primary and r.claim_id.endswith(".exploitability")]
    return claims.REPRODUCED if rows and all(r.verdict == claims.REPRODUCED for r in rows) else \
        claims.NOT_REPRODUCED


def _control_statement(study: dict) -> Statement | None:
    """The Kuhn-tuned control, filed by whether it ends below the paper's value and is resolved lower than the
    frozen operating point (`relation_verdict`)."""
    from oscc_core.chapters.transfer import kuhn_tuned

    said = control_sentence(study)
    if said is None:
        return None
    c = _control(study)
    below = c["mean"]["tuned"] < float(claims.claim(claim_of("cp_grpo")))
    return Statement(f"{said[0][0].upper()}{said[0][1:]}.", relation_verdict(below, c["diff"]["low"] > 0))


def transfer_findings(measured: list[Row], ratios: list[Row], combined: dict, rule: dict,
                      checkpoints: int, labels: dict | None = None, study: dict | None = None,
                      counted: list | None = None) -> Findings:
    """The result box (each sentence filed by its computed verdict: `reporting.findings.Findings.filed`) and three
    landing-page bullets.

    measured, ratios: the rows of tab:measured-transfer and tab:app-p1-transfer; combined: claim id -> the
    row combining its readings (`readings.claim_rows`); rule: claim id -> impossible NashConv or exploitability
    row (`readings.rule_rows`); checkpoints: how many checkpoints were audited for leakage; labels: reading text
    -> its few-word label (`readings.labels`); study: the converging learner's Kuhn study (`study.reshape`, with
    the Kuhn-tuned control under `kuhn_tuned.KEY`); counted: every row of the chapter, whose values the counts
    sentence counts (`reporting.tally.chapter_tally`; default measured + ratios), the same rows as the closing
    table's."""
    labels = labels or {}
    leaks = sum(r.ours for r in measured if r.claim_id.endswith(".leakage_violations"))
    holds, does_not, impossible = (_holds(measured, ratios, checkpoints, labels), _does_not(measured, ratios),
                                   _impossible(combined, rule, ratios))
    every = [cid for cid, r in combined.items() if r.verdict == IMPOSSIBLE]
    statements = [Statement(holds[0], relation_verdict(leaks == 0)),
                  Statement(does_not[0], _exploitability_verdict(measured)),
                  Statement(impossible[0], claims.IMPOSSIBLE if every else OPEN)]
    landing = [holds[1], does_not[1], impossible[1]]
    if study is not None:
        text, short, supports = study_sentence(study)
        statements.insert(2, Statement(f"{text[0].upper()}{text[1:]}.", relation_verdict(supports)))
        control = _control_statement(study)
        if control is not None:
            statements.insert(3, control)
            short = f"{short}; {control_sentence(study)[1]}"
        landing[0 if supports else 1] = f"{landing[0 if supports else 1][:-1]}; {short}."
    rows = list(measured) + list(ratios) if counted is None else list(counted)
    return Findings.filed(statements, tuple(landing), counts=chapter_counts_text(STEM, rows))


def _ratio(rows: list[Row], label: str) -> Row:
    return next(r for r in rows if r.claim_id == f"app_transfer.{label}.variance_ratio")


def _reading_of(row: Row, prefix: str) -> dict:
    return next(x for x in row.readings if x["reading"].startswith(prefix))


def ratio_sentence(ratios: list[Row], measured: list[Row]) -> str:
    """The paired variance ratios of both games against the paper's under the paper's reading (contrast variances
    pooled over every decision point) and at the root '', and the sizes behind the Kuhn ratio."""
    kuhn, leduc = _ratio(ratios, "leduc_to_kuhn.paired"), _ratio(ratios, "leduc_to_leduc.paired")

    def said(r: Row) -> str:
        pool, root = _reading_of(r, POOLED), _reading_of(r, AT_ROOT.format(root=""))
        return (f"{pool['ours']:.3f} (95% interval [{pool['interval'][0]:.3f}, {pool['interval'][1]:.3f}]) pooled "
                f"over every decision point, {pool['verdict']}, and {root['ours']:.3f} at the root '', "
                f"{root['verdict']}, against the paper's {claims.format_value(r.paper)}; verdict {r.verdict}")
    sizes = {r.claim_id.split(".")[2]: r for r in measured if r.claim_id.startswith("measured_transfer.kuhn.")
             and r.claim_id.endswith(".contrast_variance") and r.claim_id.split(".")[2] in ("cp_grpo_paired",
                                                                                             "independent")}
    times = {k: {w: _reading_of(r, prefix)["ours"] / float(r.paper) for w, prefix in
                 (("pool", POOLED), ("root", AT_ROOT.format(root="")))} for k, r in sizes.items()}
    return (f"On Kuhn the paired variance ratio is {said(kuhn)}; on Leduc it is {said(leduc)}. Behind the Kuhn "
            f"ratio, our pooled contrast variances are {times['cp_grpo_paired']['pool']:.2f} (CP-GRPO) and "
            f"{times['independent']['pool']:.2f} (independent) times the paper's, and those at the root '' "
            f"{times['cp_grpo_paired']['root']:.2f} and {times['independent']['root']:.2f} times.")


def impossibility_sentence(combined: dict, range_bound: float) -> str:
    """Which paper numbers break a bound under which reading: player-0 values outside [v* - NashConv,
    v* + NashConv] (the whole-game self-play reading), Kuhn contrast variances above the proved maximum at every
    decision point, how many break the range bound, and what the pooled reading (bounded by the range alone)
    leaves."""
    def impossible_under(r: Row, prefix: str) -> bool:
        return any(x["verdict"] == IMPOSSIBLE for x in r.readings if x["reading"].startswith(prefix))
    values = [cid for cid, r in combined.items() if cid.endswith(".player0_value") and impossible_under(r, SELF_PLAY)]
    games = sorted({cid.split(".")[1].capitalize() for cid in values})
    contrast = [r for cid, r in combined.items() if cid.startswith("measured_transfer.kuhn.")
                and cid.endswith(".contrast_variance")]
    every_root = [r for r in contrast if all(x["verdict"] == IMPOSSIBLE for x in r.readings
                                             if x["reading"].startswith(AT_ROOT.split("{")[0]))]
    over = sum(float(r.paper) > range_bound for r in contrast)
    pooled_ok = sum(not impossible_under(r, POOLED) for r in contrast)
    return (f"Read as player 0's whole-game self-play value, {len(values)} player-0 values ({' and '.join(games) or 'none'}) "
            f"lie outside [v* - NashConv, v* + NashConv] for their rows' own NashConv, and read at one decision "
            f"point {len(every_root)} of the {len(contrast)} Kuhn contrast variances exceed the proved maximum of "
            f"their construction's per-group variance at every one of Kuhn's decision points; "
            f"{over or 'none'} of them {'exceeds' if over < 2 else 'exceed'} the bound {range_bound:g} that the "
            f"range of returns alone sets, so pooled over every decision point, the paper's reading, "
            f"{pooled_ok} of the {len(contrast)} are possible.")


# ----- the Kuhn-tuned control: what causes the plateau -------------------------------------------
#: A curve counts as a plateau over the study's last tenfold budget when its seed mean falls more slowly than
#: calls^-PLATEAU_RATE: half the 1/sqrt(calls) rate at which a no-regret learner's average policy converges.
PLATEAU_RATE = 0.25


def _choice(c: dict) -> str:
    return f"eta {c['eta']:g}, alpha {c['alpha']:g}, kappa {c['kappa']:g}"


def _rate(r: float | None) -> str:
    """How the seed mean moves over the last tenfold budget: falling as calls^-r, or rising as calls^+|r|."""
    if r is None:
        return ""
    return (f", falling as calls^-{r:.2f}" if r >= 0 else f", rising as calls^+{-r:.2f}") + \
        " over the last tenfold budget"


#: What the two studies point to (`cause`), as the chapter's paragraph says it and as the result box says it.
CAUSES = {
    "one budget": ("With a single budget the study cannot say whether either curve plateaus.",
                   "with a single budget the study cannot say whether the frozen operating point plateaus"),
    "no plateau": (f"The frozen operating point does not plateau here (it falls at least as fast as "
                   f"calls^-{PLATEAU_RATE:g}), so there is no plateau to attribute.",
                   "the frozen operating point does not plateau, so there is no plateau to attribute"),
    "transfer": ("The plateau is the transfer's, not the learner's: tuned on Kuhn the same learner keeps falling and "
                 "ends lower, so it is the choices frozen on Leduc that stop it.",
                 "the transfer plateau comes from the choices frozen on Leduc, not from the learner"),
    "transfer, unresolved": ("The plateau is the transfer's, not the learner's: tuned on Kuhn the same learner keeps "
                             "falling, though it is not yet resolved lower at the largest budget, so it is the "
                             "choices frozen on Leduc that stop it.",
                             "the transfer plateau comes from the choices frozen on Leduc (the tuned control not yet "
                             "resolved lower)"),
    "both": ("Tuning on Kuhn lowers the plateau but does not remove it: part of it is the transfer's, and the rest "
             "the learner's on Kuhn at any choice of the rule.",
             "part of the plateau comes from the choices frozen on Leduc, the rest from the learner"),
    "learner": ("Tuning on Kuhn does not lower it: the plateau is the learner's on Kuhn, not the transfer's; no "
                "choice the rule can make converges further.",
                "the plateau is the learner's on Kuhn, not the transfer's"),
    "both rise": ("Neither curve levels off: both rise again over the last tenfold budget, so the late rise is the "
                  "learner's at either choice, and the tuned control's lower level is what the choices frozen on "
                  "Leduc cost.",
                  "both curves rise again at the largest budget (the learner's late rise at either choice); the "
                  "tuned control's lower level is what the choices frozen on Leduc cost"),
}


def cause(frozen_rate: float | None, tuned_rate: float | None, tuned_lower: bool) -> str:
    """Which of transfer and learner the two studies' rates (`kuhn_tuned.decade_rate`, against `PLATEAU_RATE`) and
    whether the tuned control is resolved lower point to: a key of `CAUSES` ("both rise" when both curves go up
    over the last tenfold budget: no plateau, a late rise at either choice)."""
    if frozen_rate is None:
        return "one budget"
    if frozen_rate >= PLATEAU_RATE:
        return "no plateau"
    if frozen_rate < 0 and tuned_rate is not None and tuned_rate < 0:
        return "both rise"
    if tuned_rate >= PLATEAU_RATE:
        return "transfer" if tuned_lower else "transfer, unresolved"
    return "both" if tuned_lower else "learner"


def _control(study: dict) -> dict:
    """The control beside the frozen study at the largest budget, for CP-GRPO: both means, the paired difference,
    the rates and the cause."""
    from oscc_core.chapters.transfer import kuhn_tuned

    tuned, d = study[kuhn_tuned.KEY], study["design"]
    top = max(int(b) for b in d["budgets"])
    diff = kuhn_tuned.paired_difference(study, tuned, "cp_grpo", top)
    rates = {name: kuhn_tuned.decade_rate(s, "cp_grpo") for name, s in (("frozen", study), ("tuned", tuned))}
    mean = {name: s["summary"][str(top)]["arms"]["cp_grpo"]["exploitability_average"]["mean"]
            for name, s in (("frozen", study), ("tuned", tuned))}
    return {"tuned": tuned, "top": top, "diff": diff, "rates": rates, "mean": mean,
            "cause": cause(rates["frozen"], rates["tuned"], diff["low"] > 0)}


def control_sentence(study: dict) -> tuple[str, str] | None:
    """The Kuhn-tuned control in one clause for the result box and one for the landing page: CP-GRPO's
    exploitability at the largest budget tuned on Kuhn against the frozen operating point's, the paired
    difference, against the paper's value, and the cause they point to (`CAUSES`); None without a control."""
    from oscc_core.chapters.transfer import kuhn_tuned

    if kuhn_tuned.KEY not in study:
        return None
    c = _control(study)
    paper = float(claims.claim(claim_of("cp_grpo")))
    tuned, frozen, diff, top = c["mean"]["tuned"], c["mean"]["frozen"], c["diff"], c["top"]
    side = "below" if tuned < paper else "above"
    box = (f"the Kuhn-tuned control (the same learner, its choices made by the same rule on Kuhn) brings CP-GRPO to "
           f"{_chips(tuned)} chips at {top:,} calls, {side} the paper's {claims.format_value(paper)}, against the frozen "
           f"operating point's {_chips(frozen)} (frozen minus tuned {_interval(diff)} chips, the tuned control lower "
           f"on {diff['tuned_lower']} of {diff['n']} seeds): {CAUSES[c['cause']][1]}")
    landing = (f"tuned on Kuhn the same learner reaches {_chips(tuned)} chips ({side} the paper's "
               f"{claims.format_value(paper)}; lower than frozen on {diff['tuned_lower']} of {diff['n']} seeds): "
               f"{CAUSES[c['cause']][1]}")
    return box, landing


def plateau_sentence(study: dict, literal: dict) -> str:
    """What causes the frozen operating point's plateau on Kuhn, from the computed outcomes: CP-GRPO's
    exploitability at the largest budget frozen and Kuhn-tuned, their rates over the last tenfold budget
    (`kuhn_tuned.decade_rate`, against `PLATEAU_RATE`), the paired difference frozen - tuned (resolved when its
    95% interval lies above 0), the literal learner at the chapter's budget (`literal`: {arm: interval}), and over
    all arms where the tuned control is resolved lower."""
    from oscc_core.chapters.transfer import kuhn_tuned

    c = _control(study)
    tuned, top, base, rates = c["tuned"], c["top"], int(study["design"]["budget"]), c["rates"]
    diffs = {arm: kuhn_tuned.paired_difference(study, tuned, arm, top) for arm in study["runs"]}
    lower = [arm for arm, x in diffs.items() if x["low"] > 0]

    def at(s: dict, b: int) -> str:
        return _chips(s['summary'][str(b)]['arms']['cp_grpo']['exploitability_average']['mean'])
    cp = diffs["cp_grpo"]
    first = (f"At {top:,} calls CP-GRPO at the operating point frozen on Leduc ({_choice(study['choices']['cp_grpo'])})"
             f" is {at(study, top)} chips exploitable{_rate(rates['frozen'])}; tuned on Kuhn by the same rule "
             f"({_choice(tuned['choices']['cp_grpo'])}) it is {at(tuned, top)}{_rate(rates['tuned'])}; frozen minus "
             f"tuned is {_interval(cp)} chips, the tuned control lower on {cp['tuned_lower']} of {cp['n']} seeds.")
    lit = literal.get("cp_grpo")
    second = "" if lit is None else (
        f" At the chapter's budget ({base:,} calls) the literal learner is at {lit['mean']:.4f} "
        f"[{lit['low']:.4f}, {lit['high']:.4f}] ({lit['n']} seeds), the frozen converging one at {at(study, base)} "
        f"and the tuned one at {at(tuned, base)}.")
    arms = (f" Over the {len(diffs)} learned arms the Kuhn-tuned control is lower at the largest budget (paired, "
            f"95%) for {len(lower)}" + (f" ({', '.join(lower)})." if lower else "."))
    return first + second + " " + CAUSES[c["cause"]][0] + (
        _last_iterates(study, tuned) if c["cause"] == "both rise" else "") + arms


def _last_iterates(study: dict, tuned: dict) -> str:
    """CP-GRPO's last-iterate exploitability (seed means) at the two largest budgets, frozen and tuned: what the
    average policy, weighted toward late iterations, follows."""
    budgets = sorted(int(b) for b in study["design"]["budgets"])
    if len(budgets) < 2:
        return ""
    b0, b1 = budgets[-2:]

    def last(s: dict, b: int) -> float:
        return s["summary"][str(b)]["arms"]["cp_grpo"]["exploitability_last"]["mean"]
    return (f" CP-GRPO's last iterate goes from {_chips(last(study, b0))} to {_chips(last(study, b1))} chips "
            f"between {b0:,} and {b1:,} calls (frozen), and from {_chips(last(tuned, b0))} to "
            f"{_chips(last(tuned, b1))} (tuned).")
