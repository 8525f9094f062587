"""The exact calibration of chapter 05 (solver) against OpenSpiel's CFRPlusSolver.

Reference numbers come from pyspiel at test time (CFRPlusSolver run here,
pyspiel.exploitability of its average policy after every iteration), never
from the module's own output.
"""
from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from oscc_core.chapters.solver import calibration
from oscc_core.chapters.solver.calibration import (
    ITERATIONS_CLAIM,
    LABELS_CLAIM,
    MAX_EXPLOITABILITY_CLAIM,
    calibration_rows,
    calibration_settings,
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


def test_a_rerun_that_differs_is_reported_as_not_identical(monkeypatch):
    # the labels never reach CFR+ (it draws no random number), so the check is of the detection: a rerun whose
    # policy differs in one bit must show as a second digest
    real = calibration._run_ours
    calls = []

    def perturbed(game, iterations):
        run = real(game, iterations)
        calls.append(1)
        if len(calls) == 2:
            first = next(iter(run["policy"]))
            run["policy"][first] = [np.nextafter(x, 2.0) if i == 0 else x for i, x in enumerate(run["policy"][first])]
        return run

    monkeypatch.setattr(calibration, "_run_ours", perturbed)
    result = run_calibration("kuhn", 5, [1, 2, 3])
    assert not result["identical"] and result["distinct_digests"] == 2


def test_reruns_under_three_labels_are_identical_and_each_equals_openspiel():
    expected = openspiel_curve("kuhn", SHORT_RUN["kuhn"])[-1]
    result = run_calibration("kuhn", SHORT_RUN["kuhn"], [13, 17, 23])
    assert result["identical"] and result["distinct_digests"] == 1
    for run in result["runs"]:
        assert run["exploitability"] == pytest.approx(expected, abs=MATCH_TOLERANCE)


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


def nearest_iteration(curve: list[float], paper: float) -> int:
    """The iteration (1-based) at which OpenSpiel's curve comes nearest the paper's value."""
    return int(np.argmin(np.abs(np.asarray(curve) - paper))) + 1


@pytest.mark.parametrize("name", ["kuhn", "leduc"])
def test_the_max_exploitability_row_is_reproduced_exactly_when_openspiels_run_lies_within_five_percent(name):
    paper = float(claims.claim(MAX_EXPLOITABILITY_CLAIM[name]))
    curve = openspiel_curve(name, 120)
    near = nearest_iteration(curve, paper)
    for iterations in (near, 10):
        expected = claims.REPRODUCED if abs(curve[iterations - 1] - paper) <= 0.05 * paper else \
            claims.NOT_REPRODUCED
        rows = {r.claim_id: r for r in calibration_rows({name: run_calibration(name, iterations, [1])})}
        row = rows[MAX_EXPLOITABILITY_CLAIM[name]]
        assert row.ours == pytest.approx(curve[iterations - 1], abs=MATCH_TOLERANCE)
        assert row.verdict == expected
    assert expected == claims.NOT_REPRODUCED                     # ten iterations are far from the paper's value


def test_iteration_counts_and_labels_are_settings_adopted_only_at_the_papers_values():
    ours = {r.claim_id: r for r in calibration_settings({"kuhn": run_calibration("kuhn", 7, paper_labels())})}
    assert ours[ITERATIONS_CLAIM["kuhn"]]["status"] == claims.DIFFERS         # 7 is not the paper's count
    assert "7" in ours[ITERATIONS_CLAIM["kuhn"]].reason
    assert ours[LABELS_CLAIM]["status"] == claims.ADOPTED
    paper = int(claims.claim(ITERATIONS_CLAIM["kuhn"]))
    fake = {"kuhn": {"iterations": paper, "labels": [4, 5]}}
    ours = {r.claim_id: r for r in calibration_settings(fake)}
    assert ours[ITERATIONS_CLAIM["kuhn"]]["status"] == claims.ADOPTED
    assert ours[LABELS_CLAIM]["status"] == claims.DIFFERS


def test_the_openspiel_difference_is_shown_against_its_tolerance_not_as_rounding_noise():
    rows = calibration_rows({"kuhn": run_calibration("kuhn", SHORT_RUN["kuhn"], [1])})
    shown = {r.quantity: r.ours for r in rows}
    assert shown["kuhn: |ours - OpenSpiel| exploitability (chips)"] == f"< {MATCH_TOLERANCE:.0e}"
