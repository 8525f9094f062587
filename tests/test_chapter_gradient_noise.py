"""The gradient-noise chapter package (oscc_core.chapters.gradient_noise), each piece against an independent value:
a closed form, a hand-worked example or a direct computation written out in the test."""
import math
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from oscc_core import collect
from oscc_core.chapters.gradient_noise import (calibration, constructions, frontier, geometry, paper_settings,
                                               parameters, relations, transfer)
from oscc_core.chapters.gradient_noise import findings as gfindings
from oscc_core.chapters.gradient_noise.arms import ROW_ARMS
from oscc_core.chapters.gradient_noise.rows import screen_rows
from oscc_core.chapters.gradient_noise.screen import ScreenResult
from oscc_core.chapters.gradient_noise.updates import setting_grid
from oscc_core.engine.arms import PAPER_ARMS
from oscc_core.method.stats import Estimate
from oscc_core.reporting import claims
from oscc_core.reporting.params import ParameterError
from oscc_core.reporting.rows import Row

FLOOR = 1e-3


@pytest.fixture(scope="module")
def geom():
    return geometry.geometry("", "uniform", "uniform", 1000, FLOOR)


@pytest.fixture(scope="module")
def independent(geom):
    return transfer.arm_data(geom, collect("leduc", "", "independent", 3_000, 11, continuation="uniform", device="cpu"))


def test_first_decision_has_six_equally_likely_information_states(geom):
    # Leduc's deck has six cards; at the first decision player 0's card is uniform and there is no public card.
    assert geom.infos == [(c, -1) for c in range(6)]
    np.testing.assert_allclose(geom.weight, np.full(6, 1 / 6), rtol=1e-12)
    assert geom.stratum.tolist() == [0, 0, 1, 1, 2, 2]                    # J J Q Q K K


def test_fixed_root_policy_gives_the_two_action_softmax_jacobian():
    g = geometry.geometry("", "uniform", [0.25, 0.75], 1000, FLOOR)
    jac = g.jac[0]
    np.testing.assert_allclose(jac, [[0.25 * 0.75, -0.25 * 0.75], [-0.25 * 0.75, 0.25 * 0.75]], atol=1e-15)
    # ||g_1||^2 = 2 (p1 p2)^2
    assert jac[:, 0] @ jac[:, 0] == pytest.approx(2 * (0.25 * 0.75) ** 2, rel=1e-12)


def test_cfr_root_policy_entries_below_the_floor_are_raised_and_renormalised():
    raw = geometry.geometry("", "uniform", "cfr_plus", 30, 1e-12).probs
    floor = 0.1
    g = geometry.geometry("", "uniform", "cfr_plus", 30, floor)
    assert g.floored == int((raw < floor).sum()) > 0
    for row, got in zip(raw, g.probs):
        expected = np.maximum(row, floor) / np.maximum(row, floor).sum()
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_empirical_weights_are_each_states_share_of_the_groups(geom):
    info = np.array([0, 0, 1, 5, 5, 5, 2, 3, 4, 4])
    np.testing.assert_allclose(geometry.state_weights(geom, info, "empirical"), [0.2, 0.1, 0.1, 0.1, 0.2, 0.3])
    assert geometry.state_weights(geom, info, "root_law") is geom.weight
    with pytest.raises(ValueError, match="weights must be one of"):
        geometry.state_weights(geom, info, "uniform")


@pytest.mark.parametrize("weights", ["root_law", "empirical"])
def test_noise_estimate_is_the_weighted_sum_of_per_state_projected_covariances(geom, independent, weights):
    d = independent
    n = np.bincount(d.info, minlength=6)
    w = np.full(6, 1 / 6) if weights == "root_law" else n / n.sum()
    expected = 0.0
    for k in range(6):
        p = geom.probs[k]
        jac = np.diag(p) - np.outer(p, p)
        expected += w[k] * np.trace(jac @ np.cov(d.returns[d.info == k].astype(float), rowvar=False) @ jac.T)
    assert transfer.noise_estimate(geom, d.returns, d.info, weights) == pytest.approx(expected, rel=1e-12)


def test_uniform_root_policy_makes_the_gradient_ratio_the_conditional_contrast_ratio(geom):
    # every state has the same ||g_1||^2, so N = ||g_1||^2 sum_I w Var(R_1 - R_2 | I)
    for arm in PAPER_ARMS[1:]:
        rho_g = geom.exact_noise(arm) / geom.exact_noise("independent")
        rho_c = geom.exact_conditional_contrast_var(arm) / geom.exact_conditional_contrast_var("independent")
        assert rho_g == pytest.approx(rho_c, rel=1e-12)


def test_composite_of_one_arm_everywhere_is_that_arm_exactly(geom):
    # the composite splits the pooled variance by the law of total variance; arm_moments pools directly
    for arm in PAPER_ARMS:
        noise, contrast_var = geom.exact_composite({0: arm, 1: arm, 2: arm})
        assert noise == pytest.approx(geom.exact_noise(arm), rel=1e-12)
        assert contrast_var == pytest.approx(geom.exact_contrast_var(arm), rel=1e-12)


def test_composite_takes_each_strata_returns_from_its_selected_arm(geom):
    info = np.array([0, 1, 2, 3, 4, 5])
    data = {"independent": transfer.ArmData(np.zeros((6, 2), dtype=np.int64), info),
            "full": transfer.ArmData(np.ones((6, 2), dtype=np.int64), info)}
    mixed = transfer.composite(data, geom, {0: "full", 1: "independent", 2: "full"})
    assert mixed.returns[:, 0].tolist() == [1, 1, 0, 0, 1, 1]          # J and K from full, Q from independent


def test_matched_prefix_is_the_longest_whose_draws_fit_the_budget():
    draws = np.array([3, 3, 4, 4])
    assert frontier.matched_groups(draws, 10) == 3          # 3 + 3 + 4 = 10 fits exactly
    assert frontier.matched_groups(draws, 9) == 2
    assert frontier.matched_groups(draws, 2) == 0


def test_block_noise_is_the_projected_sample_covariance_of_each_block():
    rng = np.random.default_rng(5)
    returns = rng.integers(-4, 5, size=(25, 2))
    gram = np.array([[2.0, -1.0], [-1.0, 2.0]])
    got = calibration._block_noise(returns, gram, block_size=8, n_blocks=3)
    expected = [(gram * np.cov(returns[8 * k:8 * (k + 1)].astype(float), rowvar=False)).sum() for k in range(3)]
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_expected_min_blocks_is_four_binomial_sds_below_the_mean(geom):
    # 6,000 groups, weight 1/6: mean 1,000, sd sqrt(6000 / 6 * 5 / 6); four sds below, in blocks of 8
    low = 1000 - 4 * math.sqrt(6000 * (1 / 6) * (5 / 6))
    assert calibration.expected_min_blocks(geom, 6_000, 8) == int(low // 8) == 110


def test_setting_grid_has_the_control_main_grids_and_stress():
    grid = setting_grid(0.2, 0.3, 0.02, 4, [0.1, 0.5], [0.01, 0.05])
    assert (grid.control.lag, grid.control.epochs) == (0.0, 1)
    assert math.isinf(grid.main_free.epsilon) and math.isinf(grid.stress_free.epsilon)
    assert (grid.stress.lag, grid.stress.learning_rate) == (0.5, 0.05)
    assert len(grid.all) == 5 + 2 + 2
    assert grid.clip_groups["learning-rate grid"] == ["η 0.01", "η 0.05"]


def test_screen_interval_is_the_five_seed_student_t_interval():
    deltas = {"full": [0.1, 0.2, 0.15, 0.05, 0.3], "independent": [0.0, 0.1, 0.2, 0.1, 0.05]}
    runs = [ScreenResult(s, a, deltas[a][s], 160, 160, 0, 1280, (0.9, 1.1)) for s in range(5) for a in deltas]
    _, summary = screen_rows(runs)
    t975 = 2.7764451051977934                    # scipy.stats.t.ppf(0.975, 4); the table prints 3 decimals
    for arm, v in deltas.items():
        half = t975 * np.std(v, ddof=1) / math.sqrt(5)
        s = summary[arm]
        assert s["delta_p_mean"] == pytest.approx(np.mean(v), rel=1e-12)
        assert s["delta_p_mean"] - s["low"] == pytest.approx(half, rel=1e-3)
        assert s["high"] - s["delta_p_mean"] == pytest.approx(half, rel=1e-3)
    assert summary["gradients"] == 1600 and summary["clipped_terms"] == 0


def test_gradient_raised_lists_the_cells_where_rho_g_exceeds_rho_r():
    import pandas as pd

    cols = {f"ρ_{q} {a}": [1.0, 1.0] for q in ("R", "G") for a in constructions.COUPLED}
    grid = pd.DataFrame(cols, index=["a", "b"])
    grid.loc["b", "ρ_G CP-GRPO full"] = 1.5
    assert constructions.gradient_raised(grid) == [("b", "CP-GRPO full")]


def _notebook_defaults() -> dict:
    return {"n_groups": 1_000, "seed": 13, "root": "", "root_policy": "uniform", "root_policy_floor": 1e-3,
            "noise_weights": "root_law", "continuation": "uniform", "cfr_iterations": 10, "epsilon": 0.2,
            "epochs": 4, "learning_rate": 0.02, "behaviour_lag": 0.2, "lag_grid": [0.1], "learning_rate_grid": [0.01],
            "calibration_groups": 6_000, "block_size": 8, "pilot_blocks": 16, "bound_factor": 2.0, "delta": 0.05,
            "physical_budget": 0, "screen_seeds": [13], "screen_iterations": 2, "screen_groups": 4,
            "screen_learning_rate": 0.5, "connectivity_seeds": [13, 17], "connectivity_batches": 2,
            "connectivity_decision_points": 4, "connectivity_epochs": 2, "connectivity_learning_rate": 0.05,
            "connectivity_lag_grid": [1], "connectivity_learning_rate_grid": [0.1], "connectivity_endpoint": "last",
            "device": "cpu", "output_dir": None, "n_bootstrap": 20, "pooled_groups": 10_000,
            "pooled_weighting": "visits"}


@pytest.mark.parametrize("name, bad", [("noise_weights", "uniform"), ("root_policy_floor", 0.0),
                                       ("root_policy_floor", 0.7), ("lag_grid", []),
                                       ("connectivity_endpoint", "best"), ("connectivity_lag_grid", [1.5]),
                                       ("pooled_weighting", "empirical"), ("pooled_groups", 2_399)])
def test_validate_names_the_bad_parameter(tmp_path, name, bad):
    values = _notebook_defaults() | {"output_dir": str(tmp_path), name: bad}
    with pytest.raises(ParameterError, match=f"^{name} "):
        parameters.validate(values)


def test_validate_records_the_declared_parameters_with_the_resolved_budget(tmp_path):
    values = _notebook_defaults() | {"output_dir": str(tmp_path), "noise_weights": "empirical"}
    p = parameters.validate(values | {"unrelated_global": 1})
    from oscc_core.reporting import claims
    assert p.record["physical_budget"] == int(claims.claim("cost_frontier.independent.physical_calls"))
    assert set(p.record) == set(parameters.NAMES) - {"device", "output_dir"} | {"game"}
    assert p.record["noise_weights"] == "empirical" and p.record["root_policy_floor"] == 1e-3
    assert p.geom.infos == [(c, -1) for c in range(6)]


# --- relations, settings and the verdict rule ------------------------------------------------------------------

def _replicates(estimate_: float, diffs) -> np.ndarray:
    """[R+1]: the estimate, then replicates equal to it plus each of `diffs`."""
    return np.concatenate([[estimate_], estimate_ + np.asarray(diffs, dtype=float)])


CLEAR = np.linspace(0.5, 1.5, 200)                     # every paired difference above 0
UNCLEAR = np.where(np.arange(200) % 2 == 0, 1.0, -0.5)  # half the paired differences below 0, mean above 0


def _step(clear: bool) -> np.ndarray:
    """[R+1] paired differences between two neighbouring arms: estimate 1, replicates CLEAR or UNCLEAR."""
    return np.concatenate([[1.0], CLEAR if clear else UNCLEAR])


@given(steps=st.lists(st.booleans(), min_size=3, max_size=3))
def test_an_ordering_is_decided_only_when_every_paired_step_lies_above_zero(steps):
    # four arms a > b > c > d on the estimates; step k (a-b, b-c, c-d) is clear or not
    values = {"d": np.zeros(201)}
    values["c"] = values["d"] + _step(steps[2])
    values["b"] = values["c"] + _step(steps[1])
    values["a"] = values["b"] + _step(steps[0])
    rel = relations.ordering("a > b > c > d", values, "abcd")
    assert rel.holds is True
    assert rel.resolved == all(steps)


@given(x=st.floats(-5, 5), y=st.floats(-5, 5))
def test_swapping_two_arms_reverses_an_ordering_on_the_estimates(x, y):
    assume(x != y)
    values = {"a": _replicates(x, np.zeros(20)), "b": _replicates(y, np.zeros(20))}
    assert relations.ordering("a > b", values, "ab").holds == (not relations.ordering("b > a", values, "ba").holds)


def test_the_lowest_arm_is_decided_only_when_it_is_below_every_other_arm_in_every_paired_difference():
    values = {"s": _replicates(0.0, np.zeros(200)), "a": _replicates(1.0, CLEAR - 1.0),
              "b": _replicates(1.0, UNCLEAR - 1.0)}
    assert relations.lowest("s lowest", values, "s", "a").resolved is True
    rel = relations.lowest("s lowest", values, "s", "ab")
    assert rel.holds is True and rel.resolved is False


def test_a_zero_clipping_control_is_decided_only_when_no_replicate_clips():
    assert relations.zero("= 0", np.zeros(50)).resolved is True
    some = np.zeros(50)
    some[7] = 0.01                                        # one replicate clips: the interval is still [0, 0]
    assert relations.zero("= 0", some).resolved is True
    many = np.where(np.arange(50) % 3 == 1, 0.01, 0.0)   # a third of the replicates clip (the estimate does not)
    assert relations.zero("= 0", many).resolved is False


def test_a_screen_rise_is_not_compared_in_size_and_its_sign_is_unresolved_when_its_interval_reaches_zero():
    # paired: mean 0.16, sd 0.0962, t(0.975, 4) = 2.7764: [0.041, 0.279] lies above 0;
    # independent: mean 0.09, sd 0.0742: [-0.002, 0.182] reaches below 0.  The size of a change of P(check) follows
    # the screen's step size, which the paper does not give: only its sign is judged
    deltas = {"full": [0.1, 0.2, 0.15, 0.05, 0.3], "independent": [0.0, 0.1, 0.2, 0.1, 0.05]}
    runs = [ScreenResult(s, a, deltas[a][s], 160, 160, 0, 1280, (0.9, 1.1)) for s in range(5) for a in deltas]
    out, _ = screen_rows(runs)
    assert [r.verdict for r in out[:2]] == ["not compared", "not compared"]
    assert [r.relation_verdict for r in out[:2]] == ["reproduced", "inconclusive"]


def _front(draws: int, groups: int) -> frontier.FrontierArm:
    e = Estimate(1.0, 0.5, 1.5, None, 0.1)
    return frontier.FrontierArm("x", groups, draws, 0, e, e, e, draws / groups)


def test_the_papers_budget_of_physical_calls_is_adopted_and_the_realised_draws_are_stated():
    budget = claims.claim("cost_frontier.independent.physical_calls")
    front = {a: _front(budget - 3, 6_000) for a in ROW_ARMS}
    rows = paper_settings.frontier_settings(front, budget)
    assert {r["status"] for r in rows} == {"adopted"} and [r["ours"] for r in rows] == [budget] * len(ROW_ARMS)
    assert all(f"{budget - 3:,} draws" in r["reason"] and "6,000 groups" in r["reason"] for r in rows)


def test_another_budget_of_physical_calls_differs_and_names_the_parameter():
    rows = paper_settings.frontier_settings({a: _front(3_999, 400) for a in ROW_ARMS}, 4_000)
    assert {r["status"] for r in rows} == {"differs"}
    assert all("physical_budget" in r["reason"] and "4,000" in r["reason"] for r in rows)


def test_the_screen_settings_follow_the_notebook_parameters():
    # the paper's scalar screen: 40 iterations of 32 groups, 4 epochs, five seeds
    p = SimpleNamespace(screen_iterations=40, screen_groups=32, epochs=4, screen_seeds=[13, 17, 23, 29, 31])
    assert {r["status"] for r in paper_settings.screen_settings(p)} == {"adopted"}
    rows = {r.claim_id: r for r in paper_settings.screen_settings(SimpleNamespace(**{**vars(p), "screen_seeds": [1]}))}
    assert rows["setup.connectivity.seeds"]["status"] == "differs" and rows["setup.connectivity.seeds"]["ours"] == 1
    assert rows["learning_boundary.scalar_clipped.iterations"]["status"] == "adopted"


def test_the_clipping_study_runs_one_seed_where_the_paper_runs_five_and_says_so():
    arms, *seeds = paper_settings.clipping_settings(13, 100_000)
    assert arms["status"] == "adopted" and arms["ours"] == 4             # independent, root-only, continuation, full
    assert [r["status"] for r in seeds] == ["differs"] * 4
    assert all("seed (13)" in r["reason"] and "100,000 groups" in r["reason"] for r in seeds)


def test_the_ordering_phrase_names_what_decides_each_stage():
    def row(q, holds, resolved):
        return Row("x", 1.0, 1.0, "not reproduced", f"noise_transfer.root_only.{q}_ratio", relation="order",
                   relation_holds=holds, relation_resolved=resolved)
    # the return and gradient ratios have exact values (resolved None), the update ratio a paired bootstrap
    decided = [row("return", True, None), row("gradient", True, None), row("update", True, True)]
    text = gfindings.order_text(decided)
    assert "on exact values for the return and gradient ratios" in text
    assert "every step decided by the paired bootstrap for the update ratio" in text
    assert "not every step decided" in gfindings.order_text(decided[:2] + [row("update", True, False)])
    assert gfindings.order_text(decided[:1] + [row("gradient", False, None)] + decided[2:]) == \
        "but not in the paper's order at the gradient stage"


def _frontier_costs(draws: dict, transitions: dict) -> dict:
    return {a: SimpleNamespace(draws=draws[a], transitions=transitions[a]) for a in draws}


def test_a_frontier_wall_time_ratio_is_shown_true_by_construction_and_not_compared_in_size():
    from oscc_core.chapters.gradient_noise.rows import frontier_cost_row
    from oscc_core.reporting import comparability

    row = frontier_cost_row(_frontier_costs({"independent": 1000, "full": 1000}, {"independent": 100, "full": 115}), "full")
    assert row.paper == pytest.approx(106.67 / 105.21, abs=1e-4)          # the paper's seconds, full over independent
    assert row.ours == 1.0 and "1.150" in row.reason                      # draws; transitions in the reason
    assert row.verdict == "not compared" and comparability.reason_of("wall times") in row.reason
    assert row["by construction"] and row.test is None
    # even a ratio far from the paper's is not a size verdict: the family is not compared
    doubled = frontier_cost_row(_frontier_costs({"independent": 1000, "full": 2000}, {"independent": 1, "full": 1}), "full")
    assert doubled.verdict == "not compared" and doubled.ours == 2.0


def test_independent_samplings_own_frontier_wall_time_is_not_compared():
    from oscc_core.chapters.gradient_noise.rows import frontier_cost_row

    row = frontier_cost_row(_frontier_costs({"independent": 1000}, {"independent": 1}), "independent")
    assert row.verdict == "not compared" and "ratio" in row.reason


def test_the_frontier_figures_arm_names_do_not_run_together():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from oscc_core.chapters.gradient_noise import figures

    e = Estimate(4.0, 3.9, 4.1, 4.0, 0.05)
    front = {a: frontier.FrontierArm(a, 6_000, 61_440, 0, e, e, e, 10.0) for a in ROW_ARMS}
    fig = figures.plot_frontier(front, 61_440, "title")
    try:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        named = [t.get_text() for t in fig.axes[1].get_yticklabels()]
        assert named == ["independent", "root-only", "continuation-only", "CP-GRPO full", "OSCC-Select"]
        for ax in fig.axes:
            for labels in (ax.get_xticklabels(), ax.get_yticklabels()):
                boxes = [t.get_window_extent(renderer) for t in labels if t.get_text()]
                assert len(boxes) >= 2
                for k, a in enumerate(boxes):
                    for b in boxes[k + 1:]:
                        assert not a.overlaps(b), (ax.get_title(), [t.get_text() for t in labels])
    finally:
        plt.close(fig)
