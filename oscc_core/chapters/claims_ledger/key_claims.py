"""The landing page's opening: the bottom line in one sentence, the counts with the gaps by cause, and a table of the
paper's key claims (each row's why short: the relation, the outcome and the cause, the reading in a detail line).

Both are written from the ledger's lines and counts alone (the verdicts, our values and intervals, the exact
values and the relations the rows declared), so they say what the chapters measured and change when a chapter's
numbers change.  The key claims are the abstract's headline numbers and one claim per later question (learning,
transfer), chosen by what the paper stresses, not by their verdicts; beside them, the guarantees the paper
states (the audit, Theorem 1's false-selection bound, zero leakage, Proposition 3), so that a reader who skims
the table sees what holds as well as what does not.
"""
from __future__ import annotations

import html
from collections import Counter

from oscc_core.reporting import causes, claims, comparability, tally
from oscc_core.reporting.tables import interval_text, significant_text

#: (claim id, what the row is called on the landing page), in the order of the paper's argument.
KEY_CLAIMS = (
    ("abstract.independent.contrast_variance", "Contrast variance, independent rollouts (chips², all roots)"),
    ("abstract.cp_grpo.contrast_variance", "Contrast variance, full coupling CP-GRPO (chips², all roots)"),
    ("abstract.cp_grpo.variance_reduction", "Variance reduction by full coupling (%)"),
    ("abstract.oscc_select.gradient_noise_trace", "Gradient-noise trace of OSCC-Select, three actions"),
    ("abstract.calibration.certification_rate_2048", "Certification rate, 2,048 calibration groups"),
    ("measured_solver.cp_grpo_paired.exploitability", "Leduc exploitability of CP-GRPO at the paper's budget (chips)"),
    ("transfer_text.kuhn.cp_grpo.variance_ratio", "Kuhn: variance ratio of the coupling frozen on Leduc"),
    ("measured_transfer.kuhn.cp_grpo_paired.contrast_variance", "Kuhn: contrast variance of CP-GRPO (chips²)"),
)
#: The paper's guarantees (claim id, label), in the order of its argument: what a reader should see holds or not.
GUARANTEES = (
    ("text_rootbudget.safety.rejected_groups_per_condition",
     "Audit: injected groups rejected per deliberate violation (five violations)"),
    ("method_obs.observation_audit.opponent_card_exposures", "Observation audit: opponent-card exposures"),
    ("calibration.2048.false_selection_rate", "Theorem 1: false-selection rate, 2,048 calibration groups (δ = 0.05)"),
    ("measured_transfer.kuhn.cp_grpo_paired.leakage_violations", "Kuhn: leakage violations of CP-GRPO's checkpoints"),
)
#: Proposition 3's identity has no paper number: its row reads the gradient-noise chapter's identity checks.
PROPOSITION_3 = ("Proposition 3: gradient noise = Σ ⟨g_i, g_j⟩ Σ_ij (identity, exact and sampled)",
                 "03_gradient_noise", "proposition_3")
#: The key claims the verdict's second and third sentences read.
REDUCTION, INDEPENDENT, COUPLED = KEY_CLAIMS[2][0], KEY_CLAIMS[0][0], KEY_CLAIMS[1][0]
LEARNING = KEY_CLAIMS[5][0]
#: Beyond this factor a deviation reads as "N times", within it as a percentage.
TIMES_AFTER = 2.0


def key_lines(ledger: list[dict]) -> list[dict]:
    """The ledger's lines of the key claims, in KEY_CLAIMS order; stops on a key claim the ledger lacks."""
    by_id = {r["id"]: r for r in ledger}
    missing = [cid for cid, _ in KEY_CLAIMS if cid not in by_id]
    if missing:
        raise ValueError(f"key claims missing from the ledger: {', '.join(missing)}.")
    return [by_id[cid] for cid, _ in KEY_CLAIMS]


def number(x) -> str:
    """A value as the key-claims table shows it (four significant figures; counts whole; none as a dash)."""
    if x is None or isinstance(x, str):
        return "—" if x is None else x
    return f"{x:,}" if isinstance(x, int) and not isinstance(x, bool) else significant_text(float(x))


def ours_cell(line: dict) -> str:
    """Our value with its 95% interval, or alone where it has none (an exact value, a count)."""
    if line.get("interval") and line.get("ours") is not None:
        return f"{number(line['ours'])} {interval_text(*line['interval'])}"
    return number(line["ours"])


def deviation_phrase(paper: float, ours: float) -> str:
    """How far ours lies from the paper's value: "10.2 times the paper's", "33% lower than the paper's", or
    "the paper's within 5% of ours" (the verdict rule's size test)."""
    if paper == 0 or ours is None:
        return "not comparable in size"
    ratio = ours / paper
    if ratio >= TIMES_AFTER or 0 < ratio <= 1 / TIMES_AFTER:
        return f"{significant_text(ratio, 3)} times the paper's"
    if abs(paper - ours) <= claims.RELATIVE_TOLERANCE * abs(ours):       # the verdict rule's size test
        return "the paper's within 5% of ours"
    deviation = ratio - 1
    return f"{abs(deviation):.0%} {'higher' if deviation > 0 else 'lower'} than the paper's"


def size_phrase(line: dict) -> str:
    """What the size test found: where the paper's value lies against our interval, or ours against the paper's
    (a count printed as text, "512/512", is equal or not)."""
    paper, interval = line["paper"], line.get("interval")
    numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (paper, line["ours"]))
    if not numbers or paper == line["ours"]:
        same = str(paper) == str(line["ours"]) or (numbers and float(paper) == float(line["ours"]))
        return "ours equals the paper's" if same else f"ours is {number(line['ours'])}"
    if interval and isinstance(paper, (int, float)):
        inside = interval[0] <= paper <= interval[1]
        return f"the paper's value lies {'inside' if inside else 'outside'} our 95% interval"
    return f"ours is {deviation_phrase(paper, line['ours'])}"


def relation_phrase(line: dict) -> str | None:
    """The relation the paper states, and whether it holds (and is resolved) on our numbers."""
    if not line.get("relation"):
        return None
    if not line.get("relation holds"):
        return f"“{line['relation']}” fails"
    resolved = line.get("relation resolved")
    return f"“{line['relation']}” holds" + ("" if resolved in (None, True) else ", unresolved at 95%")


def readings_phrase(line: dict) -> str | None:
    """The reading the verdict rests on, and how the other readings' verdicts differ (counted by verdict: a
    quantity may have a dozen readings; the ledger lists each)."""
    readings = line.get("readings") or ()
    if line.get("reading dependent") and readings:
        others = Counter(r["verdict"] for r in readings if r["reading"] != line.get("reading"))
        lead = f"under the reading '{line['reading']}'" if line.get("reading") else "readings differ"
        return f"{lead}; other readings: " + ", ".join(f"{n} {v}" for v, n in others.items())
    return f"reading: {line['reading']}" if line.get("reading") else None


def cause_phrase(line: dict) -> str | None:
    """"cause: <name>" for a gap that names its cause (`reporting.causes`), else None."""
    return f"cause: {line['cause']}" if line.get("cause") else None


def why(line: dict) -> str:
    """One short line on why the key claim got its verdict, from the ledger line's own fields: the relation the
    paper states and whether it holds, the outcome of the size test, and the cause of a gap (the reading stands in
    a detail line of its own, `reading_detail`)."""
    verdict = line.get("verdict")
    if verdict is None:
        return "its chapter has not been run"
    if verdict == claims.NOT_COMPARED:
        family = comparability.family_of(line["id"]) if line.get("not comparable") else None
        if family is None:
            return line.get("reason") or "not compared"
        relation = relation_phrase(line)
        return f"{family.name}: size not compared ({family.basis})" + (f"; {relation}" if relation else "")
    if verdict == claims.IMPOSSIBLE:
        readings = len(line.get("readings") or ()) or 1
        return (f"the game's rules bound it below the paper's value under {'all ' if readings > 1 else ''}"
                f"{readings} reading{'s' if readings > 1 else ''} of the quantity its chapter computes")
    parts = [p for p in (relation_phrase(line), size_phrase(line) if verdict != claims.DEPENDS else
                         "the verdict depends on the reading", cause_phrase(line)) if p]
    return "; ".join(parts)


def reading_detail(line: dict) -> str | None:
    """The key claim's detail line: the reading its verdict rests on, and the other readings' verdicts."""
    return readings_phrase(line)


def verdict_cell(line: dict) -> str:
    """The verdict, marked where it is the paper's fixed reading's and another reading gives another."""
    verdict = line.get("verdict") or "—"
    return verdict + (" (depends on the reading)" if line.get("reading dependent") and verdict != claims.DEPENDS
                      else "")


#: The longest reading a detail line shows (a section's reading can name a dozen choices); the whole is its tooltip.
DETAIL_CHARACTERS = 160


def _why_cell(line: dict) -> str:
    """The why cell: the short line, whole, and the reading under it in a detail line of its own (a long reading cut
    at a word, its whole text the tooltip)."""
    detail = reading_detail(line)
    if not detail:
        return f"<td>{html.escape(why(line))}</td>"
    short = detail if len(detail) <= DETAIL_CHARACTERS else detail[:DETAIL_CHARACTERS].rsplit(" ", 1)[0] + " …"
    return (f"<td>{html.escape(why(line))}<div class=\"oscc-why-detail\" title=\"{html.escape(detail, quote=True)}\">"
            f"{html.escape(short)}</div></td>")


def _row(cid: str, label: str, line: dict) -> str:
    cells = (f'<td title="{html.escape(cid, quote=True)}">{html.escape(label)}</td>',
             f"<td>{html.escape(claims.format_value(line['paper']))}</td>",
             f"<td>{html.escape(ours_cell(line))}</td>",
             f"<td>{html.escape(verdict_cell(line))}</td>",
             _why_cell(line))
    return "<tr>" + "".join(cells) + "</tr>"


def proposition3_line(found: dict[str, dict]) -> dict | None:
    """Proposition 3 as a key-claims line: the gradient-noise chapter's identity checks (rows without a paper
    number), reproduced when every one holds; None when that chapter has not been run."""
    label, stem, table = PROPOSITION_3
    rows = ((found.get(stem) or {}).get("tables") or {}).get(table)
    if not rows:
        return None
    held = sum(r.get("verdict") == claims.REPRODUCED for r in rows)
    return {"paper": "an identity", "ours": f"{held} of {len(rows)} checks hold", "interval": None, "exact": None,
            "verdict": claims.REPRODUCED if held == len(rows) else claims.NOT_REPRODUCED,
            "reason": (f"{held} of {len(rows)} identity checks hold: the exact residual is below 1e-12 and each "
                       "sampled check's interval covers it")}


def key_claims_html(ledger: list[dict], found: dict[str, dict] | None = None) -> str:
    """The key claims as an HTML table: claim | paper | ours [95% interval] | verdict | why (claim id as the
    claim's tooltip), the paper's headline claims first, then its guarantees (`GUARANTEES`, and Proposition 3
    from the gradient-noise chapter's results in `found`)."""
    head = "".join(f"<th>{h}</th>" for h in ("claim", "paper", "ours [95% interval]", "verdict", "why"))
    body = [_row(cid, label, line) for (cid, label), line in zip(KEY_CLAIMS, key_lines(ledger))]
    by_id = {r["id"]: r for r in ledger}
    body.append('<tr class="oscc-key-claims-group"><td colspan="5"><strong>The guarantees the paper states'
                "</strong></td></tr>")
    body += [_row(cid, label, by_id[cid]) for cid, label in GUARANTEES if cid in by_id]
    prop3 = proposition3_line(found or {})
    if prop3 is not None:
        cells = (f"<td>{html.escape(PROPOSITION_3[0])}</td>", f"<td>{html.escape(prop3['paper'])}</td>",
                 f"<td>{html.escape(prop3['ours'])}</td>", f"<td>{html.escape(prop3['verdict'])}</td>",
                 f"<td>{html.escape(prop3['reason'])}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (f'<table class="oscc-key-claims"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>")


def verdict_text(counted: dict, ledger: list[dict]) -> str:
    """The landing page's opening: the bottom line in words (`bottom_line`), then how the paper's measured values
    fare and the gaps by cause (`counts_sentence`, `tally.causes_text`), each from the ledger."""
    return " ".join((bottom_line(ledger), counts_sentence(counted) + tally.causes_text(counted)))


#: A few words for each guarantee the bottom line names when it holds (`GUARANTEES`, in order).
GUARANTEE_WORDS = {"text_rootbudget.safety.rejected_groups_per_condition": "the audit rejects every deliberate "
                                                                            "violation",
                   "method_obs.observation_audit.opponent_card_exposures": "no information state exposes the "
                                                                          "opponent's card",
                   "calibration.2048.false_selection_rate": "the selector's false selection stays within Theorem 1's "
                                                            "bound",
                   "measured_transfer.kuhn.cp_grpo_paired.leakage_violations": "no checkpoint leaks a hidden card"}


def _gap_clause(line: dict, what: str) -> str:
    """'<what> (<cause>: <its short clause>)' for a key claim whose size is not reproduced."""
    cause = line.get("cause")
    short = causes.cause_named(cause).short if cause else ""
    return what + (f" ({cause}: {short})" if cause else "")


def bottom_line(ledger: list[dict]) -> str:
    """One sentence in words, first on the landing page: what holds (the coupling's direction and the guarantees
    the paper states, where our numbers reproduce them), what does not (the headline reduction's size and the
    learning result, where they are not reproduced) and why (each gap's cause), from the ledger's lines."""
    by_id = {r["id"]: r for r in ledger}
    red, learn = by_id[REDUCTION], by_id[LEARNING]
    if red.get("ours") is None:
        return "The covariance chapter has not been run, so the book's bottom line is not drawn yet."
    held = ([] if not (red.get("relation holds") and red.get("relation resolved") is not False)
            else ["coupling lowers the variance of an action contrast"])
    held += [GUARANTEE_WORDS[cid] for cid, _ in GUARANTEES
             if by_id.get(cid, {}).get("verdict") == claims.REPRODUCED]
    failed = []
    if red["verdict"] != claims.REPRODUCED:
        failed.append(_gap_clause(red, f"the reduction is {number(red['ours'])}% against its "
                                       f"{claims.format_value(red['paper'])}%"))
    if learn.get("ours") is not None and learn["verdict"] != claims.REPRODUCED:
        failed.append(_gap_clause(learn, f"CP-GRPO's Leduc exploitability is {number(learn['ours'])} chips against "
                                         f"its {claims.format_value(learn['paper'])}"))
    holds = (_join(held)[0].upper() + _join(held)[1:] + ", as the paper says") if held else \
        "None of the paper's guarantees holds on our numbers"
    return holds + (f"; its sizes do not hold: {_join(failed)}." if failed else "; its headline sizes hold too.")


def _join(parts: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def counts_sentence(counted: dict) -> str:
    m = counted["measurements"]
    compared = sum(m.values()) - m[claims.NOT_COMPARED]
    dependent = counted.get("reading dependent", 0)
    return (f"Of the {sum(m.values()):,} values the paper measures we compare {compared:,} in size: "
            f"{m[claims.REPRODUCED]:,} are reproduced, {m[claims.PARTLY]:,} hold only in direction (the relation "
            f"the paper states holds, the size does not), {m[claims.NOT_REPRODUCED]:,} are not reproduced, "
            f"{m[claims.INCONCLUSIVE]:,} are inconclusive, {m[claims.DEPENDS]:,} depend on the reading of the "
            f"paper's words and {m[claims.IMPOSSIBLE]:,} are impossible under the game's rules; {dependent:,} "
            f"verdicts of the whole ledger depend on the reading.")
