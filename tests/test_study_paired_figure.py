"""The learning study's paired-difference figure: independent − CP-GRPO per seed, against scipy's t-interval."""
import numpy as np
import pytest
from scipy import stats

from oscc_core.chapters.solver import study_view


def _runs():
    rng = np.random.default_rng(4)
    runs = {"independent": {}, "cp_grpo": {}}
    for seed in ("13", "17", "19", "23"):
        for arm in runs:
            runs[arm][seed] = {str(m): {"exploitability_average": float(rng.uniform(0.1, 2.0))}
                               for m in (6144, 61440, 614400)}
    del runs["cp_grpo"]["23"]["614400"]       # one seed short of the largest budget in one arm
    return runs


def test_the_difference_is_independent_minus_cp_grpo_seed_by_seed_with_scipys_interval():
    runs = _runs()
    points = study_view.paired_differences(runs)
    calls, iv = points[0]
    d = [runs["independent"][s]["6144"]["exploitability_average"] - runs["cp_grpo"][s]["6144"]["exploitability_average"]
         for s in ("13", "17", "19", "23")]
    low, high = stats.t.interval(0.95, len(d) - 1, loc=np.mean(d), scale=stats.sem(d))
    assert calls == 6144
    assert iv.mean == pytest.approx(np.mean(d), abs=1e-12)
    assert (iv.low, iv.high) == pytest.approx((low, high), abs=1e-9)


def test_a_budget_not_every_seed_reached_in_both_arms_is_left_out():
    assert [m for m, _ in study_view.paired_differences(_runs())] == [6144, 61440]


def test_the_literal_learner_comes_first_whatever_the_files_key_order():
    assert study_view.learner_order({"runs": {"converging": {}, "literal": {}}}) == ["literal", "converging"]
