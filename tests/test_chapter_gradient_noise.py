"""The gradient-noise chapter package (oscc_core.chapters.gradient_noise), each piece against an independent value:
a closed form, a hand-worked example or a direct computation written out in the test."""
import math

import numpy as np
import pytest

from oscc_core import collect
from oscc_core.chapters.gradient_noise import calibration, constructions, frontier, geometry, parameters, transfer
from oscc_core.chapters.gradient_noise.rows import screen_rows
from oscc_core.chapters.gradient_noise.screen import ScreenResult
from oscc_core.chapters.gradient_noise.updates import setting_grid
from oscc_core.engine.arms import PAPER_ARMS
from oscc_core.reporting.params import ParameterError

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
            "screen_learning_rate": 0.5, "device": "cpu", "output_dir": None, "n_bootstrap": 20}


@pytest.mark.parametrize("name, bad", [("noise_weights", "uniform"), ("root_policy_floor", 0.0),
                                       ("root_policy_floor", 0.7), ("lag_grid", [])])
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
