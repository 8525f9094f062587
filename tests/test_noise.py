"""Gradient-noise chapter (oscc_core.chapters.gradient_noise): estimates against exact values and the identities."""
import math

import numpy as np
import pytest

from oscc_core import collect
from oscc_core.chapters.gradient_noise import (
    calibration,
    frontier,
    geometry,
    parameters,
    proposition3,
    tables,
    transfer,
)
from oscc_core.chapters.gradient_noise.bootstrap import Resampled
from oscc_core.chapters.gradient_noise.updates import UpdateSetting, clip_fraction, ratio_quantiles, realised_updates
from oscc_core.engine.arms import PAPER_ARMS
from oscc_core.method import policy_gradient as gr
from oscc_core.reporting.params import ParameterError

FLOOR = 1e-3     # the chapter's default root_policy_floor


@pytest.fixture(scope="module")
def geom():
    return geometry.geometry("", "uniform", "uniform", 1000, FLOOR)


@pytest.fixture(scope="module")
def collections():
    return {a: collect("leduc", "", a, 40_000, 7, continuation="uniform", device="cpu") for a in PAPER_ARMS}


def test_estimated_noise_is_within_a_few_standard_errors_of_exact(geom, collections):
    for arm in ("independent", "full"):
        d = transfer.arm_data(geom, collections[arm])
        est = transfer.noise_estimate(geom, d.returns, d.info)
        boot = Resampled(d.info, len(geom.infos), {"R": d.returns}, {"R"}, 200, 7, f"test/{arm}")
        reps = geom.noise_per_info(boot.cov("R")) @ geom.weight
        assert reps[0] == pytest.approx(est, rel=1e-12)          # replicate 0 is the sample itself
        se = float(np.std(reps[1:], ddof=1))
        assert abs(est - geom.exact_noise(arm)) < 4 * se, (arm, est, geom.exact_noise(arm), se)


def test_gradient_ratio_of_the_full_arm_is_below_one_and_near_exact(geom, collections):
    audit = transfer.run_audit(geom, collections, [UpdateSetting("control", 0.2, 0.0, 0.02, 1)],
                         {0: "full", 1: "full", 2: "full"}, 100, 7, "test")
    r = audit.ratio("gradient", "full")
    assert r.value < 1 and r.low <= r.exact <= r.high


def _enumerated_noise_table(g) -> dict:
    """(own card, arm) -> (N(arm), 2 sum_{i<j} <g_i,g_j> (Sigma_ij - Sigma'_ij), Var(R_1 - R_2)) from
    covariances enumerated with OpenSpiel and the softmax Jacobian G = diag(pi) - pi pi^T."""
    from test_arm_moments_openspiel import enumerated_moments

    out = {}
    for k, (own, pub) in enumerate(g.infos):
        assert pub == -1                                    # both roots are round-one roots
        p = g.probs[k]
        jac = np.diag(p) - np.outer(p, p)
        gram = jac.T @ jac
        ref = enumerated_moments(g.root.history, "independent", own_card=own)[1]
        for arm in PAPER_ARMS[1:]:
            cov = enumerated_moments(g.root.history, arm, own_card=own)[1]
            rhs = sum(2 * gram[i, j] * (cov[i, j] - ref[i, j])
                      for i in range(len(p)) for j in range(i + 1, len(p)))
            out[(own, arm)] = (float((gram * cov).sum()), rhs, cov[0, 0] + cov[1, 1] - 2 * cov[0, 1])
    return out


def _check_proposition_3(g, table) -> None:
    expected = _enumerated_noise_table(g)
    assert len(table) == len(expected)
    scale = float(table["N(arm)"].abs().max())
    for _, row in table.iterrows():
        n_arm, rhs, contrast_var = expected[(row["own card"], row["arm"])]
        assert row["N(arm)"] == pytest.approx(n_arm, abs=1e-9)
        assert row["2 sum <g_i,g_j> dCov"] == pytest.approx(rhs, abs=1e-9)
        assert abs(row["difference residual"]) < 1e-12 * scale
        if "binary residual" in table:
            p1 = g.probs[list(g.infos).index((row["own card"], -1))][0]
            g1_norm2 = 2 * (p1 * (1 - p1)) ** 2                # g_1 = p_1 (1 - p_1) (1, -1)
            assert row["||g1||^2 Var(R1-R2)"] == pytest.approx(g1_norm2 * contrast_var, abs=1e-9)
            assert abs(row["binary residual"]) < 1e-12 * scale


def test_proposition_3_residuals_are_rounding_only_with_exact_covariances(geom):
    pytest.importorskip("pyspiel")
    table = proposition3.proposition3_exact(geom)
    assert "binary residual" in table
    _check_proposition_3(geom, table)


def test_proposition_3_holds_at_a_three_action_root_with_a_cfr_root_policy():
    pytest.importorskip("pyspiel")
    g = geometry.geometry("2", "uniform", "cfr_plus", 30, FLOOR)
    assert len(g.actions) == 3
    table = proposition3.proposition3_exact(g)
    assert "binary residual" not in table
    _check_proposition_3(g, table)


def test_zero_clipping_control_gives_realised_update_equal_to_projected_gradient(geom, collections):
    d = transfer.arm_data(geom, collections["full"])
    up = realised_updates(d.returns, d.info, geom, UpdateSetting("control", 0.2, 0.0, 0.05, 1))
    projected = np.einsum("nki,ni->nk", geom.jac[d.info], d.returns.astype(float))
    np.testing.assert_allclose(up.u, projected, rtol=0, atol=1e-12)
    assert up.clipped.sum() == 0
    assert transfer.update_noise_estimate(geom, up.u, d.info) == pytest.approx(transfer.noise_estimate(geom, d.returns, d.info),
                                                                         rel=1e-9)
    # with clipping switched off the realised update is the projected gradient at the (lagged) start
    lagged = realised_updates(d.returns, d.info, geom, UpdateSetting("off", math.inf, 0.3, 0.05, 1))
    start = np.log(geom.probs) + 0.3 * geometry.lag_direction(geom)
    jac = np.stack([gr.policy_jacobian(gr.softmax(t)) for t in start])
    np.testing.assert_allclose(lagged.u, np.einsum("nki,ni->nk", jac[d.info], d.returns.astype(float)), atol=1e-12)
    assert lagged.clipped.sum() == 0


def test_stress_setting_clips_and_counts_terms(geom, collections):
    d = transfer.arm_data(geom, collections["independent"])
    up = realised_updates(d.returns, d.info, geom, UpdateSetting("stress", 0.2, 0.3, 0.05, 4))
    assert 0 < clip_fraction([up]) < 1
    assert up.terms_per_group == 2 * 4
    lo, hi = ratio_quantiles([up])
    assert lo < 1 < hi


def test_root_policy_checks():
    assert parameters.check_root_policy("root_policy", "uniform") == "uniform"
    assert parameters.check_root_policy("root_policy", [0.25, 0.75]) == [0.25, 0.75]
    for bad in ("greedy", [0.0, 1.0], [0.5, 0.6], [], [True, False], 3):
        with pytest.raises(ParameterError, match="root_policy"):
            parameters.check_root_policy("root_policy", bad)
    with pytest.raises(ParameterError, match="legal actions"):
        geometry.geometry("", "uniform", [0.2, 0.3, 0.5], 1000, FLOOR)


def test_cfr_root_policy_is_floored_and_normalised():
    g = geometry.geometry("", "uniform", "cfr_plus", 30, FLOOR)
    assert (g.probs >= FLOOR * 0.99).all()
    np.testing.assert_allclose(g.probs.sum(1), 1.0)


def test_group_costs_add_up_and_the_matched_prefix_fits_the_budget():
    for arm in ("independent", "full"):
        draws, trans, col = frontier.group_costs("", arm, 2_000, 3, "uniform", "cpu")
        assert int(draws.sum()) == sum(col.physical_draws.values())
        assert (trans >= 2).all()                                   # at least the two forced root actions
        k = frontier.matched_groups(draws, 5_000)
        assert draws[:k].sum() <= 5_000 < draws[:k + 1].sum()
    # sharing the hidden deal saves one draw per group at a two-action root
    ind, _, _ = frontier.group_costs("", "independent", 500, 3, "uniform", "cpu")
    root, _, _ = frontier.group_costs("", "root_only", 500, 3, "uniform", "cpu")
    assert (ind - root == 1).all()


def test_selection_certifies_only_with_enough_evidence(geom):
    cal = {a: collect("leduc", "", a, 6_000, 5, continuation="uniform", device="cpu", split="calibration") for a in PAPER_ARMS}
    sel = calibration.calibrate_selection(geom, cal, block_size=8, pilot_blocks=16, delta=0.05, bound_factor=2.0)
    assert set(sel.selection) == {0, 1, 2}
    assert set(sel.selection.values()) <= set(PAPER_ARMS)
    for z, certs in sel.certificates.items():
        if sel.selection[z] != "independent":
            assert any(c.certified and c.arm == sel.selection[z] for c in certs)
    assert len(tables.selection_frame(sel)) == 12
