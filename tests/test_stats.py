"""Paired root bootstrap, marginal equivalence and the variance identity (oscc_core.stats)."""
import numpy as np
import pytest
import torch

from oscc_core import collect
from oscc_core.engine import rng
from oscc_core.engine.roots import build_root
from oscc_core.exact.arm_moments import arm_moments
from oscc_core.method import stats
from oscc_core.policy import uniform_table


def _known_pairs(n: int, run: int, m: int = 7) -> torch.Tensor:
    """R1 = a, R2 = a + b with a, b independent uniform on {0..m-1}: Var(R1 - R2) = Var b = (m^2 - 1) / 12."""
    key = rng.derive_key("bootstrap", run=run, purpose=12345, replicate=0)
    u = rng.uniform(key, torch.arange(2 * n)).view(n, 2)
    a, b = (u * m).floor().to(torch.int64).unbind(1)
    return torch.stack([a, a + b], dim=1)


def test_bootstrap_is_identical_for_identical_parameters_and_any_chunking():
    r = {"x": _known_pairs(3_000, 1), "y": _known_pairs(3_000, 2)}
    one = stats.paired_bootstrap(r, 64, seed=5, purpose="test")
    again = stats.paired_bootstrap(r, 64, seed=5, purpose="test")
    chunked = stats.paired_bootstrap(r, 64, seed=5, purpose="test", max_elements=3_000 * 7)
    for arm in r:
        assert np.array_equal(one.cov[arm], again.cov[arm])
        assert np.array_equal(one.cov[arm], chunked.cov[arm])
        assert np.array_equal(one.mean[arm], chunked.mean[arm])


def test_another_purpose_or_seed_gives_other_replicates():
    r = {"x": _known_pairs(2_000, 1)}
    base = stats.paired_bootstrap(r, 16, seed=5, purpose="a").contrast_var("x")
    assert not np.array_equal(base, stats.paired_bootstrap(r, 16, seed=5, purpose="b").contrast_var("x"))
    assert not np.array_equal(base, stats.paired_bootstrap(r, 16, seed=6, purpose="a").contrast_var("x"))


def test_resample_counts_are_a_multiset_of_the_groups():
    counts = stats.resample_counts(1_000, range(8), seed=3, purpose="counts")
    assert counts.shape == (8, 1_000)
    assert torch.all(counts.sum(1) == 1_000)
    assert torch.all(counts >= 0)


def test_arms_are_resampled_jointly():
    r = _known_pairs(2_000, 4)
    boot = stats.paired_bootstrap({"a": r, "b": r.clone()}, 50, seed=1, purpose="pairing")
    assert np.all(boot.mean_difference("a", "b", 0) == 0)
    assert np.all(boot.variance_ratio("a", "b") == 1)


def test_contrast_variance_interval_covers_the_true_value_at_about_the_nominal_rate():
    true_var = (7 ** 2 - 1) / 12
    covered = 0
    trials = 40
    for t in range(trials):
        r = {"x": _known_pairs(1_500, 100 + t)}
        lo, hi = stats.percentile_interval(stats.paired_bootstrap(r, 200, seed=t, purpose="cover").contrast_var("x"))
        covered += lo <= true_var <= hi
    assert covered >= 0.8 * trials


def test_leduc_interval_contains_the_exact_contrast_variance():
    c = collect("leduc", "", "full", 20_000, seed=3, device="cpu")
    boot = stats.paired_bootstrap({"full": c.returns}, 300, seed=3, purpose="leduc")
    lo, hi = stats.percentile_interval(boot.contrast_var("full"))
    assert lo <= arm_moments("leduc", "")["full"].contrast_var() <= hi


def test_sample_moments_match_numpy():
    r = _known_pairs(500, 9)
    mean, cov = stats.sample_moments(r)
    x = r.double().numpy()
    assert np.allclose(mean, x.mean(0), rtol=0, atol=1e-12)
    assert np.allclose(cov, np.cov(x.T), rtol=0, atol=1e-12)


def test_percentile_interval_of_a_ramp():
    lo, hi = stats.percentile_interval(np.arange(101.0), 0.9)
    assert (lo, hi) == (pytest.approx(5.0), pytest.approx(95.0))


def test_equivalence_is_declared_only_when_the_90_percent_interval_lies_inside_the_margin():
    ramp = np.linspace(-1.0, 1.0, 201)
    inside = stats.equivalence_test(0.0, 0.01 * ramp, margin=0.05)
    assert inside["equivalent"]
    shifted = stats.equivalence_test(0.06, 0.06 + 0.01 * ramp, margin=0.05)
    assert not shifted["equivalent"]
    straddling = stats.equivalence_test(0.04, 0.04 + 0.02 * ramp, margin=0.05)
    assert not straddling["equivalent"]


def test_equivalence_reports_both_intervals():
    ramp = np.linspace(-1.0, 1.0, 201)
    out = stats.equivalence_test(0.0, ramp, margin=2.0)
    assert out["ci95_low"] < out["tost_low"] < out["tost_high"] < out["ci95_high"]
    assert out["tost_level"] == pytest.approx(0.9)


def test_equivalence_rejects_a_non_positive_margin():
    with pytest.raises(ValueError, match="margin"):
        stats.equivalence_test(0.0, np.zeros(10), margin=0.0)


def test_variance_identity_residual_is_rounding_only():
    c = collect("leduc", "", "independent", 5_000, seed=2, device="cpu")
    out = stats.variance_identity(c.summary())
    assert abs(out["residual"]) < 1e-12
    assert out["contrast_var"] == pytest.approx(out["var_i"] + out["var_j"] - 2 * out["cov_ij"], abs=1e-12)


def test_paired_bootstrap_rejects_unpaired_arms():
    with pytest.raises(ValueError, match="same number of groups"):
        stats.paired_bootstrap({"a": _known_pairs(10, 1), "b": _known_pairs(11, 1)}, 5, seed=1, purpose="x")


def test_exact_strata_average_back_to_the_whole_root_law():
    root = build_root("leduc", "", uniform_table("leduc"))
    whole = arm_moments("leduc", "")["full"].mean
    total = np.zeros_like(whole)
    for rank in range(3):
        weight = root.weight[root.situations[:, 0] // 2 == rank].sum()
        part = arm_moments("leduc", "", where=lambda s, r=rank: s[:, 0] // 2 == r)["full"].mean
        total += weight * part
    assert np.allclose(total, whole, rtol=0, atol=1e-12)


def test_exact_filter_selecting_everything_changes_nothing():
    a = arm_moments("leduc", "2")
    b = arm_moments("leduc", "2", where=lambda s: np.ones(len(s), dtype=bool))
    for arm in a:
        assert np.allclose(a[arm].cov, b[arm].cov, rtol=0, atol=1e-12)


def test_exact_filter_must_keep_whole_information_states():
    with pytest.raises(ValueError, match="whole information states"):
        arm_moments("leduc", "", where=lambda s: s[:, 2] == 0)
