"""The exact calibration of chapter 05 (solver) against OpenSpiel's CFRPlusSolver.

Reference numbers come from pyspiel at test time (CFRPlusSolver run here,
pyspiel.exploitability of its average policy after every iteration), never
from the module's own output.
"""
from __future__ import annotations

import pytest

pyspiel = pytest.importorskip("pyspiel")

from oscc_core.chapters.solver.calibration import (
    LABELS_CLAIM,
    MAX_EXPLOITABILITY_CLAIM,
    calibration_rows,
    paper_labels,
    run_calibration,
)
from oscc_core.reporting import claims

MATCH_TOLERANCE = 1e-9          # chips: ours against OpenSpiel over tens of iterations
SHORT_RUN = {"kuhn": 50, "leduc": 10}
CURVE_ITERATIONS = 200          # Kuhn iterations of the first-reach test


def openspiel_curve(name: str, iterations: int) -> list[float]:
    """pyspiel.exploitability (chips) of CFRPlusSolver's average policy after each of `iterations` iterations."""
    game = pyspiel.load_game(f"{name}_poker")
    solver = pyspiel.CFRPlusSolver(game)
    curve = []
    for _ in range(iterations):
        solver.evaluate_and_update_policy()
        curve.append(pyspiel.exploitability(game, solver.average_policy()))
    return curve


@pytest.mark.parametrize("name", ["kuhn", "leduc"])
def test_our_exploitability_equals_openspiel_cfr_plus_after_a_short_run(name):
    expected = openspiel_curve(name, SHORT_RUN[name])[-1]
    result = run_calibration(name, SHORT_RUN[name], [1])
    assert result["runs"][0]["exploitability"] == pytest.approx(expected, abs=MATCH_TOLERANCE)


def test_the_reported_openspiel_value_is_openspiels_own():
    expected = openspiel_curve("leduc", SHORT_RUN["leduc"])[-1]
    result = run_calibration("leduc", SHORT_RUN["leduc"], [1])
    assert result["openspiel"]["exploitability"] == pytest.approx(expected, abs=MATCH_TOLERANCE)
    assert result["openspiel"]["abs_difference"] == pytest.approx(
        abs(result["runs"][0]["exploitability"] - expected), abs=MATCH_TOLERANCE)


def test_three_labels_give_bitwise_identical_reruns():
    result = run_calibration("leduc", SHORT_RUN["leduc"], [1, 2, 3])
    assert len({r["policy_digest"] for r in result["runs"]}) == 1
    assert len({r["curve_digest"] for r in result["runs"]}) == 1
    assert result["identical"] and result["distinct_digests"] == 1


def test_the_policy_digest_changes_with_the_iteration_count():
    shorter = run_calibration("kuhn", 3, [1])["runs"][0]["policy_digest"]
    longer = run_calibration("kuhn", 4, [1])["runs"][0]["policy_digest"]
    assert shorter != longer


def test_first_reach_is_the_first_iteration_of_openspiels_curve_at_or_below_the_target():
    curve = openspiel_curve("kuhn", CURVE_ITERATIONS)
    target = curve[36] + 1e-9            # a value the curve passes part-way through the run
    expected = next(t for t, e in enumerate(curve, start=1) if e <= target)
    never = min(curve) / 2               # below every value of the curve
    result = run_calibration("kuhn", CURVE_ITERATIONS, [1], targets={"mid": target, "never": never})
    assert result["targets"]["mid"]["first_reach"] == expected
    assert result["targets"]["never"]["first_reach"] is None


def test_the_curve_is_openspiels_at_its_log_spaced_iterations():
    curve = openspiel_curve("kuhn", CURVE_ITERATIONS)
    result = run_calibration("kuhn", CURVE_ITERATIONS, [1], curve_points=10)
    points = result["curve"]["iteration"]
    assert points[0] == 1 and points[-1] == CURVE_ITERATIONS
    assert result["curve"]["exploitability"] == pytest.approx([curve[t - 1] for t in points], abs=MATCH_TOLERANCE)


def test_rows_reproduce_a_max_exploitability_equal_to_the_papers_and_report_non_identical_reruns():
    paper = float(claims.claim(MAX_EXPLOITABILITY_CLAIM["kuhn"]))
    results = {"kuhn": {"iterations": 7, "labels": paper_labels(), "max_exploitability": paper,
                        "identical": False, "distinct_digests": 2,
                        "openspiel": {"exploitability": paper, "abs_difference": 0.0}}}
    rows = {r["quantity"]: r for r in calibration_rows(results)}
    assert rows["kuhn: max exploitability over labels (chips)"]["verdict"] == claims.REPRODUCED
    assert rows["kuhn: CFR+ iterations"]["verdict"] == claims.NOT_REPRODUCED   # 7 is not the paper's count
    assert rows["run labels"]["verdict"] == claims.REPRODUCED
    assert rows["run labels"]["claim id"] == LABELS_CLAIM
    assert rows["reruns bitwise identical across labels (distinct digests per game)"]["ours"].startswith("no")
