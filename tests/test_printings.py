"""One verdict per paper quantity (`oscc_core.reporting.printings`): every printing of a same_as group shares
the verdict of the printing that decides, and the claims ledger refuses a group with two verdicts."""
from __future__ import annotations

import pytest
import yaml
from hypothesis import given, strategies as st

from oscc_core.chapters.claims_ledger import ledger
from oscc_core.reporting import claims, printings
from oscc_core.reporting.claims import DEFAULT_PATH
from oscc_core.reporting.rows import Row

RAW = {e["id"]: e for e in yaml.safe_load(DEFAULT_PATH.read_text(encoding="utf-8"))}
VERDICTS = (claims.REPRODUCED, claims.INCONCLUSIVE, claims.PARTLY, claims.NOT_REPRODUCED)


def _entries(parents: list[int | None], values: list[float]) -> dict[str, dict]:
    """A claims file of len(parents) entries; entry k names entry parents[k] or none."""
    return {f"c{k}": {"id": f"c{k}", "value": values[k], **({} if p is None else {"same_as": f"c{p}"})}
            for k, p in enumerate(parents)}


@st.composite
def forests(draw):
    """Trees of same_as links in any file order: a root need not be its group's first entry (the main table is
    printed after the abstract that repeats it)."""
    n = draw(st.integers(1, 12))
    order = draw(st.permutations(range(n)))              # links point to an entry earlier in this order
    parents = [None] * n
    for k in range(1, n):
        parents[order[k]] = draw(st.one_of(st.none(), st.sampled_from(order[:k])))
    values = [draw(st.sampled_from([18.1441, 41.1158, 0.4412])) for _ in range(n)]
    verdicts = [draw(st.sampled_from(VERDICTS)) for _ in range(n)]
    present = [draw(st.booleans()) for _ in range(n)]
    return parents, values, verdicts, present


def _row(cid: str, paper: float, verdict: str) -> Row:
    relation = claims.Relation("x < y", True) if verdict == claims.PARTLY else None
    return Row("q " + cid, paper, 2.0 * paper, verdict, cid, **({} if relation is None else {
        "relation": relation.text, "relation_holds": True, "relation_resolved": None}))


@given(forests())
def test_after_unify_no_group_has_two_verdicts_and_each_takes_its_roots_where_present(forest):
    parents, values, verdicts, present = forest
    entries = _entries(parents, values)
    rows = [_row(f"c{k}", values[k], verdicts[k]) for k in range(len(parents)) if present[k]]
    out = {r.claim_id: r for r in printings.unify(rows, entries)}
    groups = printings.groups(entries)
    for cid in out:
        group = groups[cid]
        root = printings.root_of(group, entries)
        decider = root if root in out else next(c for c in group if c in out)
        assert out[cid].verdict == {r.claim_id: r for r in rows}[decider].verdict
        assert out[cid].paper == entries[cid]["value"]                     # each printing keeps its own value
        if cid != decider:
            assert out[cid].printing_of == decider


def test_a_groups_root_is_the_entry_that_names_no_other():
    entries = _entries([None, 0, 1, 0], [1.0] * 4)
    assert printings.root_of(printings.groups(entries)["c2"], entries) == "c0"
    cyclic = {"a": {"id": "a", "value": 1, "same_as": "b"}, "b": {"id": "b", "value": 1, "same_as": "a"}}
    with pytest.raises(ValueError, match="tree"):
        printings.root_of(["a", "b"], cyclic)


def test_two_printings_with_different_values_of_ours_are_refused_as_one_quantity():
    entries = _entries([None, 0], [41.1158, 41.1158])
    a, b = Row("q", 41.1158, 48.94, claims.NOT_REPRODUCED, "c0"), Row("q", 41.1158, 36.43, claims.NOT_REPRODUCED, "c1")
    with pytest.raises(ValueError, match="must not link them"):
        printings.unify([a, b], entries)


def test_a_percentage_and_a_fraction_of_one_quantity_are_one_value():
    assert printings.same_quantity(0.152, 0.4603, 15.2, 46.03)
    assert not printings.same_quantity(0.152, 0.4603, 15.2, 40.0)


def test_the_claims_files_main_contrast_variance_group_reads_the_main_tables_verdict():
    main = Row.compare("independent", "main.independent.variance", 48.94, 48.55, 49.36,
                       relation=claims.Relation("paired variance < independent variance", True, True))
    ablation = Row.compare("independent (ablation)", "ablations.ind.variance", 48.94, 48.55, 49.36,
                           relation=claims.Relation("independent > root_only > continuation_only > full", False))
    assert (main.verdict, ablation.verdict) == (claims.PARTLY, claims.NOT_REPRODUCED)
    out = printings.unify([ablation, main])
    assert [r.verdict for r in out] == [claims.PARTLY, claims.PARTLY]
    assert out[0].printing_of == "main.independent.variance" and out[0].claim_id == "ablations.ind.variance"


def test_the_ledger_refuses_two_verdicts_for_one_quantity_and_names_the_group():
    lines = [{"id": "main.independent.variance", "kind": "result", "verdict": claims.PARTLY},
             {"id": "ablations.ind.variance", "kind": "result", "verdict": claims.NOT_REPRODUCED}]
    assert ledger.split_groups(lines, RAW) == {"main.independent.variance": ["not reproduced", "partly"]}
    assert ledger.split_groups([dict(lines[1], verdict=claims.PARTLY), lines[0]], RAW) == {}


def test_a_printing_keeps_its_own_paper_interval():
    main = Row.compare("covariance", "main_uncertainty.check_bet_covariance.cp_grpo_paired", 9.78, 9.61, 9.96,
                       relation=claims.Relation("full covariance > 0", True, True)).with_paper_interval(10.73, 11.63)
    factor = Row.compare("covariance (factors)", "coupling_factors.cp_grpo.covariance", 9.78, 9.61, 9.96)
    out = printings.unify([main, factor])
    assert out[1].paper_interval is None and out[1].verdict == main.verdict
