"""What chapter 05 shows of the coupling question and of the calls rule, on the committed study, at show time.

Expected values are computed here from the committed runs with this file's own crossing (written out below), numpy
and scipy's t distribution, not with the library's functions.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from oscc_core.chapters.solver import study_coupling, study_view

STUDY = Path(__file__).resolve().parent.parent / "results" / "05_solver_study.json"


@pytest.fixture(scope="module")
def study() -> dict:
    return json.loads(STUDY.read_text())


def cross(curve: dict, th: float, linear: bool = False):
    pts = sorted((int(b), r["exploitability_average"]) for b, r in curve.items())
    if pts[0][1] <= th:
        return pts[0][0]
    for (b0, e0), (b1, e1) in zip(pts, pts[1:]):
        if e1 <= th:
            if linear:
                return b0 + (e0 - th) / (e0 - e1) * (b1 - b0)
            return b0 * (b1 / b0) ** (math.log(e0 / th) / math.log(e0 / e1))
    return None


def test_the_paired_calls_ratio_shown_is_the_t_interval_of_the_seeds_log_ratios(study):
    ind, cp = study["runs"]["converging"]["independent"], study["runs"]["converging"]["cp_grpo"]
    logs = [math.log(cross(ind[s], 0.2) / cross(cp[s], 0.2)) for s in cp]
    low, high = stats.t.interval(0.95, len(logs) - 1, loc=np.mean(logs), scale=stats.sem(logs))
    expected = f"{math.exp(np.mean(logs)):.2f} [{math.exp(low):.2f}, {math.exp(high):.2f}], {len(logs)} pairs"
    frame = study_coupling.ratio_frame(study, study_view.learner_order(study))
    assert frame.loc[("converging", "0.2"), "independent / CP-GRPO calls"] == expected
    assert frame.loc[("converging", "0.2"), "CP-GRPO fewer calls"] == f"{sum(x > 0 for x in logs)} of {len(logs)}"
    assert study_coupling.glue_values(study)["study_coupling_ratio"] == expected
    assert frame.loc[("literal", "0.2"), "CP-GRPO fewer calls"] == "—"        # the literal learner never gets there


def test_the_calls_table_shows_how_far_the_other_rule_moves_each_figure(study):
    frame = study_view.thresholds_frame(study)
    for arm in ("cp_grpo", "independent"):
        for th in study["design"]["thresholds"]:
            seeds = study["runs"]["converging"][arm].values()
            geo = math.exp(np.mean([math.log(cross(c, th)) for c in seeds]))
            plain = np.mean([cross(c, th, linear=True) for c in seeds])
            chord = math.exp(np.mean([math.log(cross(c, th, linear=True)) for c in seeds]))
            assert frame.loc[("converging", arm, f"{th:g}"), "other rule (interpolation)"] == \
                f"{plain / geo - 1:+.1%} ({chord / geo - 1:+.1%})"


def test_the_paired_difference_is_shown_at_every_recorded_budget(study):
    frame = study_coupling.differences_frame(study, "converging")
    assert list(frame.index) == [f"{b:,}" for b in study["design"]["recorded_budgets"]]
    top = str(max(study["design"]["recorded_budgets"]))
    ind, cp = study["runs"]["converging"]["independent"], study["runs"]["converging"]["cp_grpo"]
    lower = sum(ind[s][top]["exploitability_average"] > cp[s][top]["exploitability_average"] for s in cp)
    assert frame.loc[f"{int(top):,}", "CP-GRPO lower"] == f"{lower} of 30"


def test_the_stored_budgets_factor_is_the_median_neighbours_ratio(study):
    # the committed grid: 6,144 x 1600^(k/77) (24 a decade), rounded, with the multiples inserted; most
    # neighbours 10^(1/24) apart
    assert study_coupling.glue_values(study)["study_budget_factor"] == f"{10 ** (1 / 24):.2f}" == "1.10"


def test_the_budget_factor_is_the_median_of_the_neighbours_ratios_not_their_geometric_mean(monkeypatch):
    # budgets 1, 2, 4, 8, 100: neighbours' ratios 2, 2, 2, 12.5; their median is 2, their geometric mean
    # (2 * 2 * 2 * 12.5) ** (1 / 4) = 100 ** (1 / 4) = 3.16
    r = {"ratio": 1.5, "low": 1.2, "high": 1.8, "pairs": 3, "reference_faster": 3, "seeds": 3}
    monkeypatch.setattr(study_coupling, "summaries", lambda study: {"converging": {"calls_ratio": {"0.2": r}}})
    grid = {"design": {"thresholds": [0.2], "recorded_budgets": [8, 1, 100, 4, 2]}}
    assert study_coupling.glue_values(grid) == {"study_coupling_ratio": "1.50 [1.20, 1.80], 3 pairs",
                                               "study_coupling_faster": "3 of 3", "study_budget_factor": "2.00"}
