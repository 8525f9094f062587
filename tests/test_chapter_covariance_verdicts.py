"""One verdict per paper number on the covariance chapter's page (`verdicts.Page`), and its closing counts on the
values basis (`verdicts.counts_frame`), each against verdicts and counts worked out by hand."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oscc_core.chapters.covariance import coupling, findings, verdicts
from oscc_core.exact.arm_moments import Moments
from oscc_core.method.stats import BootstrapMoments
from oscc_core.chapters.covariance.paired_audit import PairedAudit
from oscc_core.reporting import claims
from oscc_core.reporting.rows import Relation, Row
from oscc_core.reporting.tally import chapter_tally, tally_text

IND = "main.independent.variance"                # 41.1158, the root of its same_as group
IND_PRINTINGS = ("coupling_factors.ind.contrast", "ablations.ind.variance")


def two_branch_audit(variances: dict) -> PairedAudit:
    """An audit of Call and Raise whose arm a has contrast variance variances[a] (exact and estimated alike)."""
    cov = {a: np.diag([v / 2, v / 2]) for a, v in variances.items()}
    reps = 11
    boot = BootstrapMoments(n=100, replicates=reps, seed=0, purpose="t",
                            mean={a: np.zeros((reps, 2)) for a in variances},
                            cov={a: np.stack([c] * reps) for a, c in cov.items()})
    return PairedAudit(root="", actions=["Call", "Raise"], pair=(0, 1), groups=100, valid=100, budget=1,
                       mean={a: np.zeros(2) for a in variances}, cov=cov,
                       exact={a: Moments(a, ["Call", "Raise"], np.zeros(2), c) for a, c in cov.items()}, boot=boot)


def main_row(ours: float = 48.9, holds: bool = True) -> Row:
    """The main table's independent variance: far from the paper's 41.1158; paired below independent."""
    return Row.compare("independent: contrast variance", IND, ours, ours - 0.4, ours + 0.4,
                       Relation("paired variance < independent variance", holds), positive=True)


def test_every_printing_of_41_1158_reads_the_main_tables_verdict_where_the_ablation_ordering_fails():
    # stated relation broken (root_only below full): the coupling and ablation rows of the independent arm
    # are printings of the main table's 41.1158, which is partly; the other arms' rows keep the failed ordering
    page = verdicts.Page()
    main = page.add([main_row()])
    assert main[0].verdict == claims.PARTLY
    audit = two_branch_audit({"independent": 48.9, "root_only": 36.5, "continuation_only": 46.2, "full": 37.5,
                              "policy_namespace": 48.9})
    rows = {r.claim_id: r for r in page.add(coupling.coupling_rows(audit))}
    for cid in IND_PRINTINGS:
        assert (rows[cid].verdict, rows[cid].printing_of) == (claims.PARTLY, IND)
        assert rows[cid].paper == claims.claim(cid) and rows[cid].ours == pytest.approx(48.9)
    assert rows["ablations.root_only.variance"].verdict == claims.NOT_REPRODUCED
    assert rows["ablations.root_only.variance"].printing_of == "coupling_factors.root_only.contrast"
    assert rows["coupling_factors.root_only.contrast"].relation_holds is False


def test_a_page_refuses_a_deciding_row_shown_after_one_of_its_printings():
    page = verdicts.Page()
    printing = Row.compare("factors, independent", "coupling_factors.ind.contrast", 48.9, 48.5, 49.3,
                           Relation("variance: independent > root_only > continuation_only > full", False),
                           positive=True)
    page.add([printing])                              # alone, it decides its group: not reproduced
    with pytest.raises(ValueError, match="deciding row"):
        page.add([main_row()])                        # the root, partly, would change it


@settings(max_examples=40, deadline=None)
@given(st.permutations(["root", "factors", "ablation"]), st.booleans(), st.booleans())
def test_within_one_table_the_printings_of_a_group_share_the_roots_verdict_whatever_their_order(order, holds,
                                                                                                   ordered):
    made = {"root": main_row(holds=holds),
            "factors": Row.compare("f", "coupling_factors.ind.contrast", 48.9, 48.5, 49.3,
                                   Relation("ordering", ordered), positive=True),
            "ablation": Row.compare("a", "ablations.ind.variance", 48.9, 48.5, 49.3,
                                    Relation("ordering", ordered), positive=True)}
    rows = verdicts.Page().add([made[k] for k in order])
    assert {r.verdict for r in rows} == {made["root"].verdict}


def test_the_closing_table_counts_each_value_once_as_the_box_does():
    rows = [main_row(),                                                       # partly
            Row.compare("c", "coupling_factors.ind.contrast", 48.9, 48.5, 49.3, positive=True),   # a printing
            Row.compare("m", "main.cp_grpo_paired.variance", 18.0, 17.0, 19.0),                    # reproduced
            Row.setting("s", "main.independent.pairs", 100_000)]                                  # adopted
    counted = chapter_tally(findings.STEM, verdicts.Page().add(rows))
    frame = verdicts.counts_frame(counted)
    # 41.1158 is counted once, though two rows print it; the section's entries without a row are not compared
    assert frame.loc["measured values", "partly"] == "1" and frame.loc["measured values", "reproduced"] == "1"
    measured = counted["measurements"]
    assert frame.loc["measured values", "total"] == f"{sum(measured.values()):,}"
    assert frame.loc["further printings, not counted again", "total"] == f"{counted['printings']:,}"
    assert frame.loc["settings: adopted", "total"] == "1"
    assert f"1 reproduced, 1 partly, {measured[claims.NOT_COMPARED]:,} not compared" in tally_text(counted)


def test_the_closing_table_has_a_line_for_reading_dependent_verdicts_and_for_orderings():
    counted = {"measurements": {claims.PARTLY: 2, claims.DEPENDS: 1}, "checks": {}, "intervals": {},
               "by construction": {}, "printings": 0, "settings": {"adopted": 0, "differs": 3},
               "reading dependent": 4, "orderings": {claims.REPRODUCED: 2, claims.NOT_REPRODUCED: 1}}
    frame = verdicts.counts_frame(counted)
    assert list(frame.loc["measured values", ["partly", "depends on the reading", "total"]]) == ["2", "1", "3"]
    assert frame.loc["verdicts that depend on the reading", "total"] == "4"
    assert list(frame.loc[verdicts.ORDERINGS_LABEL, ["reproduced", "not reproduced", "total"]]) == ["2", "1", "3"]
    assert frame.loc["settings: differs", "total"] == "3"


def test_the_box_states_the_mismatched_construction_as_a_hypothesis_with_its_caveat():
    import pandas as pd

    mixed = pd.DataFrame([{"independent arm under": "uniform", "coupled arms under": "CFR+ (1000 it.)",
                           "independent": 40.0, "full": 17.6, "ratio": 0.44, "reduction_percent": 56.0}])
    text = findings.hypothesis_sentence(mixed, "")
    assert text.startswith("A hypothesis about how the paper may have built its headline")
    assert "uniform" in text and "CFR+ (1000 it.)" in text and "56.0%" in text and "40.00 and 17.60" in text
    assert f"{claims.format_value(claims.claim('main.caption.variance_reduction'))}%" in text
    assert "searching for the paper's number" in text and "changes no verdict" in text


def test_the_box_counts_the_values_compared_in_size_apart_from_those_not_compared():
    rows = [main_row(), Row.compare("m", "main.cp_grpo_paired.variance", 18.0, 17.0, 19.0)]
    n = findings.verdict_counts({"t": verdicts.Page().add(rows)})
    assert n == {claims.PARTLY: 1, claims.REPRODUCED: 1}     # the section's rowless entries are not compared: left out


def test_the_main_tables_paired_below_independent_is_decided_on_the_exact_variances():
    from oscc_core.chapters.covariance import headline

    # estimates: full 30 < independent 48.9 (a reduction); exact values: full 50 > independent 48.9
    audit = two_branch_audit({"independent": 48.9, "full": 30.0})
    audit.exact["full"] = Moments("full", ["Call", "Raise"], np.zeros(2), np.diag([25.0, 25.0]))
    rows = {r.claim_id: r for r in headline.estimate_rows(audit)}
    for cid in ("main.independent.variance", "main.cp_grpo_paired.variance"):
        assert (rows[cid].relation_holds, rows[cid].relation_resolved) == (False, None)
        assert rows[cid].verdict == claims.NOT_REPRODUCED


def test_the_box_line_counts_only_the_values_compared_in_size():
    audit = two_branch_audit({"independent": 48.9, "full": 37.5})
    rows = verdicts.Page().add([main_row(), Row.compare("m", "main.cp_grpo_paired.variance", 18.0, 17.0, 19.0)])
    line = findings.size_statement(audit, {"fixed_root": rows}).text
    assert "of 2 measured values compared with the paper's" in line
    assert "1 are partly" in line and "1 reproduced" in line
