"""The coupling question at one operating point (chapter 05): both arms run at each arm's tuned choice in turn, on
the study's first seeds, and the ratio of their calls is read beside the study's own.

The runs are replaced by curves written here, whose crossings are known in closed form, so the tests check what
the chapter asks of the study machinery and what it concludes, not the learner."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from notebook_runs import parameter_defaults

from oscc_core.chapters.solver import common_point
from oscc_core.chapters.solver import parameters as solver_parameters

CHOICES = {"cp_grpo": {"eta": 32.0, "alpha": 1.0, "kappa": 0.003},
           "independent": {"eta": 16.0, "alpha": 1.0, "kappa": 0.001}}
SEEDS = [13, 17, 19, 23]
BUDGETS = [1000, 2000, 4000, 8000, 16000]
THRESHOLD = 0.2


def curve(cross_at: float) -> dict:
    """Exploitability 0.2 * (cross_at / b): a power law that crosses 0.2 chips exactly at `cross_at` calls, so
    log-log interpolation between any two stored budgets finds it exactly."""
    return {str(b): {"exploitability_average": THRESHOLD * cross_at / b, "exploitability_last": 1.0,
                     "never_updated": 0, "physical_calls": b, "transitions": b, "decisions": b} for b in BUDGETS}


class FakeStudy:
    """Stands in for the study design: records what it is asked to run and returns curves whose independent arm
    crosses `slowdown` times later than CP-GRPO on every seed."""

    def __init__(self, asked: list, seeds, slowdown: float):
        self.asked, self.seeds, self.slowdown = asked, seeds, slowdown

    def run(self, store, choices, workers, scheduler, device):
        self.asked.append((tuple(self.seeds), choices))
        runs = {"cp_grpo": {str(s): curve(3000.0) for s in self.seeds},
                "independent": {str(s): curve(3000.0 * self.slowdown) for s in self.seeds}}
        gm = {"geometric_mean": 3000.0, "low": 3000.0, "high": 3000.0, "reached": len(self.seeds),
              "seeds": len(self.seeds)}
        return {"study": {"runs": {"converging": runs},
                          "thresholds": {"converging": {a: {repr(THRESHOLD): gm} for a in runs}}}}


def shown_study() -> dict:
    return {"design": {"seeds": SEEDS, "thresholds": [THRESHOLD]}, "choices": {"converging": CHOICES}}


@pytest.fixture
def fake(monkeypatch):
    asked: list = []

    def install(slowdown: float):
        monkeypatch.setattr(common_point, "like_shown", lambda p, shown, seeds: FakeStudy(asked, seeds, slowdown))
        monkeypatch.setattr(common_point, "store", lambda p: "unused")
        return asked
    return install


def params(n: int):
    return SimpleNamespace(common_point_seeds=n, workers=1, scheduler="", torch_device="cpu")


def test_both_arms_run_at_each_owners_choice_in_turn(fake):
    asked = fake(1.0)
    common_point.run(params(4), shown_study())
    assert [choices["converging"] for _, choices in asked] == [
        {"cp_grpo": CHOICES["cp_grpo"], "independent": CHOICES["cp_grpo"]},
        {"cp_grpo": CHOICES["independent"], "independent": CHOICES["independent"]}]


def test_the_runs_take_the_studys_first_seeds_and_all_of_them_when_it_has_fewer(fake):
    asked = fake(1.0)
    common_point.run(params(2), shown_study())
    common_point.run(params(30), shown_study())
    assert [seeds for seeds, _ in asked] == [(13, 17), (13, 17), tuple(SEEDS), tuple(SEEDS)]


def test_the_runs_are_recorded_at_the_shown_studys_density_and_thresholds_up_to_ten_times_the_budget(tmp_path):
    p = solver_parameters.validate({**parameter_defaults("05_solver"), "study_file": "", "curve_per_decade": 4,
                                    "output_dir": str(tmp_path / "out")})
    shown = {"design": {"seeds": SEEDS, "thresholds": [0.3, 0.25], "curve_per_decade": 24}}
    d = common_point.like_shown(p, shown, (13, 17))
    assert (d.curve_per_decade, d.thresholds, d.multiples, d.seeds) == (24, (0.3, 0.25), (1, 10), (13, 17))


def test_zero_seeds_runs_nothing(fake):
    asked = fake(1.0)
    assert common_point.run(params(0), shown_study()) is None and asked == []


@pytest.mark.parametrize("slowdown", [1.0, 1.5, 0.8])
def test_the_ratio_is_the_independent_arms_slowdown(fake, slowdown):
    fake(slowdown)
    out = common_point.run(params(4), shown_study())
    for owner in CHOICES:
        r = out[owner]["summary"]["calls_ratio"][repr(THRESHOLD)]
        assert np.isclose(r["ratio"], slowdown) and r["pairs"] == len(SEEDS)


def ratio(value, low, high):
    return {"ratio": value, "low": low, "high": high, "pairs": 30}


def common_with(low, high):
    return {o: {"summary": {"calls_ratio": {repr(THRESHOLD): ratio((low + high) / 2, low, high)}}} for o in CHOICES}


def test_an_advantage_that_vanishes_at_one_operating_point_is_read_as_the_tunings():
    text = common_point.reading(common_with(0.98, 1.02), ratio(1.27, 1.25, 1.29), THRESHOLD)
    assert "comes from the choices the tuning made for each arm, not from the coupling" in text


def test_an_unresolved_common_point_that_overlaps_the_studys_interval_concludes_nothing():
    text = common_point.reading(common_with(0.9, 1.3), ratio(1.27, 1.25, 1.29), THRESHOLD)
    assert "not resolved at 95%" in text and "tuning" not in text


def test_an_advantage_that_stays_at_one_operating_point_is_read_as_the_couplings():
    text = common_point.reading(common_with(1.2, 1.3), ratio(1.27, 1.25, 1.29), THRESHOLD)
    assert "at CP-GRPO's choice CP-GRPO needs fewer calls" in text and "not from the coupling" not in text


def test_no_difference_anywhere_is_read_as_none_resolved():
    text = common_point.reading(common_with(0.98, 1.02), ratio(1.0, 0.97, 1.03), THRESHOLD)
    assert "not resolved at 95%" in text and "tuning" not in text
