"""OSCC-Select's certificate and the selection rules."""
import math

import numpy as np
import pytest

from oscc_core.method import selectors as sel


def test_hoeffding_radius_shrinks_as_one_over_root_n():
    r1 = sel.hoeffding_radius(100, 2.0, 8, 0.05)
    r4 = sel.hoeffding_radius(400, 2.0, 8, 0.05)
    assert r1 / r4 == pytest.approx(2.0)


def test_radius_matches_the_theorem_formula():
    assert sel.hoeffding_radius(50, 3.0, 4, 0.1) == pytest.approx(3.0 * math.sqrt(2 * math.log(80) / 50))


def test_sufficient_blocks_make_twice_the_radius_equal_the_gain():
    n = sel.sufficient_blocks(2.0, 8, 0.05, gain=0.5)
    assert 2 * sel.hoeffding_radius(n, 2.0, 8, 0.05) == pytest.approx(0.5)


def test_scores_are_clipped_to_the_bound_and_counted():
    cert = sel.certify([10.0, -10.0, 0.5], "full", bound=1.0, n_comparisons=1, delta=0.05)
    assert cert.mean_gain == pytest.approx(0.5 / 3)
    assert cert.clipped_scores == 2


def test_unsafe_arm_is_never_certified_even_with_large_gain():
    cert = sel.certify(np.ones(10_000), "full", bound=1.0, n_comparisons=1, delta=0.05, safe=False)
    assert cert.lower_bound > 0 and not cert.certified


def test_no_certified_candidate_falls_back_to_independent():
    certs = [sel.certify(np.full(10, 0.1), arm, 1.0, 3, 0.05) for arm in ("root_only", "continuation_only", "full")]
    assert sel.oscc_select(certs, {"independent": 1.0, "root_only": 0.9, "continuation_only": 0.8, "full": 0.7}) == "independent"


def test_selects_the_certified_arm_with_the_smallest_objective():
    certs = [sel.certify(np.full(5_000, g), arm, 1.0, 3, 0.05) for arm, g in
             (("root_only", 0.5), ("continuation_only", 0.4), ("full", -0.2))]
    objective = {"independent": 1.0, "root_only": 0.5, "continuation_only": 0.6, "full": 0.1}
    assert sel.oscc_select(certs, objective) == "root_only"   # full is cheaper but not certified


def test_false_certification_rate_stays_below_delta_when_there_is_no_gain():
    """With no gain, a certificate needs mean(X) > r_n = B sqrt(2 log(2M/delta)/n).  For uniform scores
    on [-1, 1] (sd 1/sqrt(3)) and n = 64 that is 4.3 standard errors: essentially never.  A radius
    a few times too small (4.3 / 3 = 1.4 standard errors) would certify about 8% of the trials."""
    n, bound, m, delta = 64, 1.0, 1, 0.1
    radius = bound * math.sqrt(2 * math.log(2 * m / delta) / n)
    rng = np.random.default_rng(3)
    trials = 2_000
    scores = rng.uniform(-1, 1, (trials, n))
    certs = [sel.certify(x, "full", bound, m, delta) for x in scores]
    for cert, x in zip(certs[:50], scores):
        assert cert.lower_bound == pytest.approx(x.mean() - radius, abs=1e-12)
    assert sum(c.certified for c in certs) == sum(x.mean() > radius for x in scores) <= 2


def test_rv_select_uses_mean_pairwise_contrast_variance():
    covs = {"independent": np.diag([4.0, 4.0]), "full": np.array([[4.0, 3.0], [3.0, 4.0]])}
    assert sel.rv_select(covs) == "full"


def test_oracle_breaks_ties_by_arm_order():
    assert sel.oracle_select({"full": 1.0, "root_only": 1.0, "independent": 2.0}) == "root_only"
