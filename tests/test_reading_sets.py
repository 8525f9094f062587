"""One reading set per quantity (`oscc_core.reporting.reading_sets`): two chapters that measure one quantity on the
same checkpoints list the same readings and give one verdict where the paper prints one value.

The test finds every such pair itself, in the ledger built from the committed results: two lines of different
chapters measure the same quantity on the same checkpoints when one of them shows, as its number or under one of
its readings, exactly the estimate and 95% interval the other shows (ten significant digits and an interval of
positive width: a fingerprint no two different quantities share by chance) and the two are of one kind of quantity
(a contrast variance, a player-0 value: the paper's return against an opponent and its player-0 value read against
that opponent share a number but are two quantities).  Printings of another entry and lines that take another
entry's row are the same row already, and are left out.
"""
from __future__ import annotations

import math
from itertools import combinations

from oscc_core.chapters.claims_ledger import collect, ledger
from oscc_core.reporting import reading_sets
from oscc_core.reporting.claims import REPO_ROOT, load_claims


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _fingerprint(ours, interval):
    if not (_number(ours) and isinstance(interval, (list, tuple)) and len(interval) == 2
            and all(_number(v) for v in interval) and interval[1] > interval[0]):
        return None
    return tuple(float(f"{v:.9e}") for v in (ours, *interval))


def fingerprints(line: dict) -> set:
    found = {_fingerprint(line.get("ours"), line.get("interval"))}
    found |= {_fingerprint(r.get("ours"), r.get("interval")) for r in line.get("readings") or ()}
    return found - {None}


def readings_of(line: dict) -> list[str]:
    """The readings a line lists on its own checkpoints (one taken under another continuation is another
    checkpoint's: `reading_sets.on_other_continuation`); none for a line read one way only."""
    return [r["reading"] for r in line.get("readings") or () if not reading_sets.on_other_continuation(r["reading"])]


#: The paper's names of one kind of quantity in its tables (the last part of a claim id), written out here.
KIND = {"variance": "contrast_variance", "contrast": "contrast_variance", "value": "player0_value",
        "success_mean": "task_success"}


def kind_of(claim_id: str) -> str:
    last = claim_id.rsplit(".", 1)[-1]
    return KIND.get(last, last)


def shared_pairs(lines: list[dict]) -> list[tuple[dict, dict]]:
    """Every pair of lines of different chapters, of one kind of quantity, that share a fingerprint (module
    docstring)."""
    own = [r for r in lines if r["kind"] == "result" and r.get("basis") == "row" and not r.get("printing of")
           and r.get("chapter")]
    prints = {r["id"]: fingerprints(r) for r in own}
    return [(a, b) for a, b in combinations(own, 2) if a["chapter"] != b["chapter"]
            and kind_of(a["id"]) == kind_of(b["id"]) and prints[a["id"]] & prints[b["id"]]]


def build(results_dir) -> list[dict]:
    entries = load_claims()
    found = collect.read_results(results_dir)
    rows, _ = collect.rows_by_claim(collect.row_records(found), entries)
    return ledger.build_ledger(entries, rows, set(found))


def mismatches(lines: list[dict]) -> list[str]:
    """The pairs that list different readings, or give two verdicts for one printed value."""
    out = []
    for a, b in shared_pairs(lines):
        if readings_of(a) != readings_of(b):
            out.append(f"{a['id']} ({a['chapter']}) and {b['id']} ({b['chapter']}) list different readings")
        elif a["paper"] == b["paper"] and a["verdict"] != b["verdict"]:
            out.append(f"{a['id']} and {b['id']}: one value, verdicts {a['verdict']!r} and {b['verdict']!r}")
    return out


def test_lines_of_two_chapters_on_the_same_checkpoints_list_the_same_readings_and_give_one_verdict():
    lines = build(REPO_ROOT / "results")
    assert shared_pairs(lines)                     # the learning and transfer chapters share Leduc checkpoints
    assert mismatches(lines) == []


def _line(cid, chapter, ours, interval, readings=None, verdict="partly", paper=1.0):
    return {"id": cid, "chapter": chapter, "kind": "result", "basis": "row", "ours": ours, "interval": interval,
            "readings": readings, "reading": "r", "verdict": verdict, "paper": paper}


def test_a_pair_is_found_by_a_number_one_line_shows_under_a_reading_and_the_other_as_its_own():
    pooled = {"reading": "pooled", "ours": 32.33, "interval": [30.36, 34.43], "verdict": "partly"}
    root = {"reading": "at ''", "ours": 32.17, "interval": [27.10, 38.18], "verdict": "not reproduced"}
    a = _line("x.contrast_variance", "05_solver", 32.17, [27.10, 38.18])
    b = _line("y.contrast_variance", "06_transfer", 32.33, [30.36, 34.43], [pooled, root])
    assert shared_pairs([a, b]) == [(a, b)]
    assert mismatches([a, b]) == ["x.contrast_variance (05_solver) and y.contrast_variance (06_transfer) list "
                                  "different readings"]
    assert shared_pairs([{**a, "id": "x.return_mean"}, b]) == []          # another kind of quantity
    assert mismatches([{**a, "ours": 32.33, "interval": [30.36, 34.43], "readings": [pooled, root]}, b]) == []


def test_one_printed_value_with_two_verdicts_on_the_same_checkpoints_is_refused_and_two_values_are_not():
    a = _line("x.task_success", "05_solver", 0.5, [0.4, 0.6], verdict="not reproduced", paper=0.68)
    b = _line("y.task_success", "06_transfer", 0.5, [0.4, 0.6], verdict="partly", paper=0.68)
    assert len(mismatches([a, b])) == 1
    assert mismatches([a, {**b, "paper": 0.67}]) == []
    assert shared_pairs([a, {**b, "interval": [0.5, 0.5], "ours": 0.5}]) == []      # no width: no fingerprint


def test_a_reading_under_another_continuation_is_another_checkpoints_and_not_compared_between_chapters():
    pooled = {"reading": "pooled", "ours": 48.94, "interval": [48.55, 49.36], "verdict": "partly"}
    cfr = {"reading": reading_sets.under_continuation("at ''", "CFR+"), "ours": 32.3, "interval": [32.0, 32.6],
           "verdict": "partly"}
    a = _line("main.independent.variance", "02_covariance", 48.94, [48.55, 49.36], [pooled, cfr])
    b = _line("cost_frontier.independent.contrast_variance", "03_gradient_noise", 48.94, [48.55, 49.36], [pooled])
    assert shared_pairs([a, b]) == [(a, b)] and mismatches([a, b]) == []
