"""The solver chapter's sentence on the last iterate beside the average policy, on hand-made studies: the paired
change of the last iterate's exploitability from the paper's budget to the largest (against scipy's t interval),
its direction, and the arms whose last iterate rises while their average policy falls."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from oscc_core.chapters.solver import study_view

BUDGETS = (100, 10_000)


def study(last: dict, average: dict) -> dict:
    """A converging study from {arm: [(last at 100, last at 10,000) per seed]} and {arm: (average at both)}."""
    runs = {arm: {str(s): {str(b): {"exploitability_last": v, "exploitability_average": average[arm][i]}
                           for i, (b, v) in enumerate(zip(BUDGETS, pair))} for s, pair in enumerate(pairs)}
            for arm, pairs in last.items()}
    summary = {str(b): {"arms": {arm: {"exploitability_last": {"mean": float(np.mean([p[i] for p in pairs]))},
                                       "exploitability_average": {"mean": average[arm][i]}}
                                 for arm, pairs in last.items()}} for i, b in enumerate(BUDGETS)}
    return {"design": {"budget": BUDGETS[0], "budgets": list(BUDGETS)}, "runs": {"converging": runs},
            "summary": {"converging": summary}}


RISING = [(0.7, 1.0), (0.8, 1.2), (0.75, 0.95), (0.72, 1.1)]
FALLING = [(0.7, 0.5), (0.8, 0.55), (0.75, 0.6), (0.72, 0.4)]
MIXED = [(0.7, 0.9), (0.8, 0.6), (0.75, 0.8), (0.72, 0.7)]


def test_the_change_is_scipys_t_interval_of_the_paired_seed_changes():
    s = study({"cp_grpo": RISING}, {"cp_grpo": (0.7, 0.08)})
    d = np.array([b - a for a, b in RISING])
    low, high = stats.t.interval(0.95, len(d) - 1, loc=d.mean(), scale=stats.sem(d))
    got = study_view.last_iterate_change(s, "converging", "cp_grpo")
    assert (got["mean"], got["low"], got["high"], got["n"]) == pytest.approx((d.mean(), low, high, 4))
    assert got["last"] == pytest.approx([np.mean([a for a, _ in RISING]), np.mean([b for _, b in RISING])])


def test_a_resolved_rise_while_the_average_falls_is_named_and_counted():
    text = study_view.last_iterate_sentence(study({"cp_grpo": RISING, "independent": MIXED, "ppo": RISING},
                                                {"cp_grpo": (0.7, 0.08), "independent": (0.8, 0.09),
                                                 "ppo": (0.5, 0.6)}))
    assert "its last iterate goes from 0.742 to 1.062: the last iterate rises" in text
    assert "average policy goes from 0.700 to 0.080" in text
    assert "for 1 (cp_grpo); there the iterates themselves do not converge" in text   # ppo's average rises too


def test_a_resolved_fall_and_an_unresolved_change_are_said_as_such():
    falls = study_view.last_iterate_sentence(study({"cp_grpo": FALLING}, {"cp_grpo": (0.7, 0.1)}))
    assert "the last iterate falls" in falls and falls.endswith("for 0.")
    mixed = study_view.last_iterate_sentence(study({"cp_grpo": MIXED}, {"cp_grpo": (0.7, 0.1)}))
    assert "the last iterate does not change at 95%" in mixed
