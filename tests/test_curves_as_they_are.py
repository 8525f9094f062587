"""Specifications of how the chapters show a learning curve as it is: where it settles below a threshold, which
curves rise after their lowest point, and where each tuned choice lies in its grid (`reporting.study_tables`)."""
from __future__ import annotations

import math

from oscc_core.reporting import study_tables as tables


def _seeds(*curves):
    """{seed: {budget: record}} from curves given as {budget: exploitability}."""
    return {str(i): {str(b): {"exploitability_average": e} for b, e in c.items()} for i, c in enumerate(curves)}


def test_a_curve_that_dips_below_and_comes_back_settles_only_where_it_stays_below():
    dips = {100: 0.3, 200: 0.15, 400: 0.25, 800: 0.1, 1600: 0.09}
    s = tables.settle(_seeds(dips), 0.2)
    assert math.isclose(s["settled"], 800) and s["seeds_settled"] == 1 and s["above_at_end"] == 0


def test_settled_budgets_are_averaged_geometrically_over_the_seeds_that_settle():
    a = {100: 0.3, 400: 0.1}
    b = {100: 0.1, 400: 0.1}            # below from its first budget
    c = {100: 0.1, 400: 0.3}            # ends above: does not settle, counts as above at the end
    s = tables.settle(_seeds(a, b, c), 0.2)
    assert math.isclose(s["settled"], 200.0)          # sqrt(400 * 100)
    assert (s["seeds_settled"], s["seeds"], s["above_at_end"]) == (2, 3, 1)
    assert tables.settle_text(s) == "200 (2/3); 1 above at the end"


def test_a_value_exactly_at_the_threshold_counts_as_below():
    s = tables.settle(_seeds({100: 0.3, 200: 0.2}), 0.2)
    assert math.isclose(s["settled"], 200) and s["above_at_end"] == 0


def test_a_curve_that_never_settles_says_never():
    s = tables.settle(_seeds({100: 0.3, 200: 0.25}), 0.2)
    assert s["settled"] is None and tables.settle_text(s) == "never; 1 above at the end"


def test_only_an_arm_whose_last_budget_is_resolved_above_its_lowest_rises():
    falling = _seeds({1: 0.5, 2: 0.3, 3: 0.2}, {1: 0.6, 2: 0.31, 3: 0.21})
    rising = _seeds({1: 0.5, 2: 0.1, 3: 0.2}, {1: 0.6, 2: 0.11, 3: 0.23}, {1: 0.6, 2: 0.12, 3: 0.22})
    assert tables.rises({"a": falling, "b": rising}) == ["b"]
    frame = tables.rise_frame({"a": falling, "b": rising}, "learner")
    assert list(frame["rises"]) == ["no", "yes"] and list(frame["at (calls)"]) == ["3", "2"]


def _tuning(at_edge=False, extensions=0, alpha=0.5, kappa=0.01, alphas=(0.25, 0.5), kappas=(0.01, 0.04)):
    grid = [{"eta": 1.0, "alpha": a, "kappa": k, "score": 0.1} for a in alphas for k in kappas]
    return {"eta": 1.0, "alpha": alpha, "kappa": kappa, "score": 0.1, "extensions": extensions,
            "at_edge": at_edge, "grid": grid}


def test_every_choice_inside_its_grid_is_said_with_the_extensions_in_all():
    text = tables.tuning_edges_text({"converging": {"cp_grpo": _tuning(extensions=2), "ppo": _tuning(extensions=1)}})
    assert text == "every choice lies inside its grid (3 extensions in all)"


def test_a_choice_still_at_an_edge_after_the_cap_is_named():
    text = tables.tuning_edges_text({"cp_grpo": _tuning(), "ppo": _tuning(at_edge=True, extensions=6)})
    assert text == "1 of 2 choices still sit at an edge after the grid's largest number of extensions: ppo"


def test_a_pull_switched_off_is_an_end_no_grid_can_pass():
    text = tables.tuning_edges_text({"grpo": _tuning(alpha=0.0, alphas=(0.0, 0.5))})
    assert text.endswith("; at an end no grid can pass: grpo (alpha)")


def test_given_choices_are_not_called_tuned():
    assert tables.tuning_edges_text(None) == "the choices were given, not tuned"
