"""The pooled all-roots audit (`method.pooling`, `chapters.covariance.pooled`) against independent values.

The exact pooled moments are checked against an enumeration of the Leduc tree
written here with OpenSpiel (nothing from `oscc_core`): every decision where
Call and Raise are legal is a root ID, weighted by the probability that a hand
dealt by OpenSpiel and played uniformly reaches it; the moments are taken over
that mixture directly (second moments, not per-root moments combined).  The
mixture formula is checked against numpy on a concatenated sample, the
allocation by hand and by properties, and the pooled estimates against the
exact values within a few bootstrap standard errors.
"""
from __future__ import annotations

from collections import defaultdict
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from oscc_core.chapters.covariance import pooled
from oscc_core.method import pooling
from oscc_core.policy import resolve_policy
from oscc_core.reporting import claims

pyspiel = pytest.importorskip("pyspiel")

CALL, RAISE = 1, 2           # OpenSpiel's Leduc action ids
N_GROUPS, SEED, N_BOOT = 12_000, 5, 200


# --- an independent enumeration with OpenSpiel ------------------------------------------------

@lru_cache(maxsize=None)
def _game():
    return pyspiel.load_game("leduc_poker")


def _value(state, player: int, public: int | None) -> tuple[float, float]:
    """(E[u], E[u^2]) of `player`'s utility from `state` under uniform play; the public card forced to `public`
    where given, else dealt by OpenSpiel's chance outcomes."""
    if state.is_terminal():
        u = state.returns()[player]
        return u, u * u
    if state.is_chance_node():
        outcomes = [(public, 1.0)] if public is not None else state.chance_outcomes()
        parts = [(p, _value(state.child(c), player, None)) for c, p in outcomes]
    else:
        legal = state.legal_actions()
        parts = [(1.0 / len(legal), _value(state.child(a), player, public)) for a in legal]
    return sum(p * v[0] for p, v in parts), sum(p * v[1] for p, v in parts)


def _roots():
    """Every decision where Call and Raise are legal: (betting key, reach probability, acting player, own card,
    public card or None, state), by a walk of OpenSpiel's tree under uniform play."""
    out, stack = [], [(_game().new_initial_state(), 1.0, "")]
    while stack:
        state, p, key = stack.pop()
        if state.is_terminal():
            continue
        if state.is_chance_node():
            dealt = len(state.history()) >= 2
            for c, pc in state.chance_outcomes():
                stack.append((state.child(c), p * pc, key + "|" if dealt else key))
            continue
        legal = state.legal_actions()
        player = state.current_player()
        if CALL in legal and RAISE in legal:
            public = state.history()[-len(key.split("|")[1]) - 1] if "|" in key else None
            out.append((key, p, player, state.history()[player], public, state))
        for a in legal:
            stack.append((state.child(a), p / len(legal), key + str(a)))
    return out


@lru_cache(maxsize=None)
def _all_roots():
    return tuple(_roots())


@lru_cache(maxsize=None)
def enumerated_pool(weighting: str, round_two_only: bool = False) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{arm: (mean [2], covariance [2, 2]) of (R_Call, R_Raise)} over the pooled root law, for "full" and
    "independent": full shares the opponent's card and the public card between the branches, independent draws
    both per branch from the acting player's information state.  `round_two_only`: the roots after the public
    card alone."""
    roots = [r for r in _all_roots() if "|" in r[0] or not round_two_only]
    reach = defaultdict(float)
    for key, p, *_ in roots:
        reach[key] += p
    weight = {k: (r / sum(reach.values()) if weighting == "visits" else 1.0 / len(reach)) for k, r in reach.items()}
    mean, second = np.zeros(2), np.zeros(2)
    full_cross = 0.0
    info = defaultdict(lambda: [0.0, np.zeros(2)])            # I -> [probability, sum of p * E[R_b | s]]
    for key, p, player, own, public, state in roots:
        law = weight[key] * p / reach[key]                     # P(root key) * P(state | root key)
        if public is None:                                     # round one: the public card is still to come
            cards = [c for c in range(6) if c not in state.history()[:2]]
            fixed = {c: [_value(state.child(b), player, c) for b in (CALL, RAISE)] for c in cards}
            m = np.mean([[v[0] for v in fixed[c]] for c in cards], axis=0)
            q = np.mean([[v[1] for v in fixed[c]] for c in cards], axis=0)
            cross = float(np.mean([fixed[c][0][0] * fixed[c][1][0] for c in cards]))
        else:
            vals = [_value(state.child(b), player, None) for b in (CALL, RAISE)]
            m, q = np.array([v[0] for v in vals]), np.array([v[1] for v in vals])
            cross = m[0] * m[1]
        mean += law * m
        second += law * q
        full_cross += law * cross
        entry = info[(key, own, public)]
        entry[0] += law
        entry[1] += law * m
    ind_cross = sum(pi * (s[0] / pi) * (s[1] / pi) for pi, s in info.values())
    out = {}
    for arm, cross in (("full", full_cross), ("independent", ind_cross)):
        e2 = np.array([[second[0], cross], [cross, second[1]]])
        out[arm] = (mean, e2 - np.outer(mean, mean))
    return out


def _contrast_var(cov) -> float:
    return float(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1])


@pytest.fixture(scope="module")
def pool():
    return pooled.pooled_roots(("independent", "full"), N_GROUPS, SEED, "uniform", "cpu", N_BOOT)


# --- the roots and their weights ----------------------------------------------------------------

def test_the_pool_holds_every_openspiel_decision_where_call_and_raise_are_legal():
    keys = {key for key, *_ in _all_roots()}
    assert set(pooled.contrast_roots()) == keys and len(keys) == 24


@pytest.mark.parametrize("weighting", pooling.WEIGHTINGS)
def test_root_weights_are_the_openspiel_reach_shares_or_equal(weighting, pool):
    reach = defaultdict(float)
    for key, p, *_ in _all_roots():
        reach[key] += p
    total = sum(reach.values())
    expected = [reach[h] / total if weighting == "visits" else 1 / len(reach) for h in pool.histories]
    got = pooling.root_weights("leduc", pool.histories, resolve_policy("leduc", "uniform"), weighting)
    assert got == pytest.approx(expected, rel=1e-12)


# --- exact pooled moments against OpenSpiel -----------------------------------------------------

@pytest.mark.parametrize("weighting", pooling.WEIGHTINGS)
@pytest.mark.parametrize("arm", ("full", "independent"))
def test_exact_pooled_moments_match_the_openspiel_enumeration_of_the_mixture(weighting, arm, pool):
    weights = pooling.root_weights("leduc", pool.histories, resolve_policy("leduc", "uniform"), weighting)
    p = pooled.PooledRoots(pool.histories, weights, weighting, pool.seed, pool.audits)
    exact = p.audit().exact[arm]
    mean, cov = enumerated_pool(weighting)[arm]
    assert exact.mean == pytest.approx(mean, abs=1e-10)
    assert exact.cov == pytest.approx(cov, abs=1e-9)
    assert exact.contrast_var(0, 1) == pytest.approx(_contrast_var(cov), abs=1e-9)


@pytest.mark.parametrize("arm", ("full", "independent"))
def test_a_stratum_pools_its_own_roots_with_renormalised_weights(arm, pool):
    """Round two alone: the enumeration restricted to the roots after the public card, weights renormalised."""
    exact = pool.audit(pool.stratum("round two")).exact[arm]
    mean, cov = enumerated_pool("visits", round_two_only=True)[arm]
    assert exact.mean == pytest.approx(mean, abs=1e-10) and exact.cov == pytest.approx(cov, abs=1e-9)


# --- the estimates ---------------------------------------------------------------------------------

@pytest.mark.parametrize("arm", ("full", "independent"))
def test_pooled_contrast_variance_lies_within_four_bootstrap_standard_errors_of_the_exact_value(arm, pool):
    v = pool.audit().contrast_var(arm)
    assert abs(v.value - v.exact) < 4 * v.se
    assert v.low < v.value < v.high


def test_pooled_estimate_is_the_mixture_of_each_roots_sample_moments(pool):
    """By hand from the collected returns: per root the Call and Raise columns' numpy moments, combined with
    the weights as E[X] = sum w m_h and E[XY] = sum w (C_h + m_h m_h^T)."""
    a = pool.audit()
    for arm in ("full", "independent"):
        m_all, e2 = np.zeros(2), np.zeros((2, 2))
        for h, w in zip(pool.histories, pool.weights):
            audit = pool.audits[h]
            c = audit.collections[arm]
            cols = [c.actions.index("Call"), c.actions.index("Raise")]
            r = c.returns[c.codes == 0].numpy()[:, cols].astype(np.float64)
            m = r.mean(0)
            m_all += w * m
            e2 += w * (np.cov(r.T, ddof=1) + np.outer(m, m))
        assert a.mean[arm] == pytest.approx(m_all, rel=1e-12)
        assert a.cov[arm] == pytest.approx(e2 - np.outer(m_all, m_all), rel=1e-10)


def test_roots_share_no_random_numbers(pool):
    seeds = [pooled.root_seed(SEED, h) for h in pool.histories]
    assert len(set(seeds)) == len(seeds) and all(0 <= s < 2 ** 63 for s in seeds)


def test_the_results_record_keeps_the_weighting_every_root_and_the_exact_values(pool):
    rec = pooled.record(pool, pooled.strata_audits(pool))
    assert rec["weighting"] == "visits" and [r["root"] for r in rec["roots"]] == pool.histories
    assert sum(r["groups"] for r in rec["roots"]) == rec["groups"] == N_GROUPS
    assert sum(r["weight"] for r in rec["roots"]) == pytest.approx(1.0)
    exact = enumerated_pool("visits")
    for arm in ("full", "independent"):
        assert rec["arms"][arm]["exact_contrast_var"] == pytest.approx(_contrast_var(exact[arm][1]), abs=1e-9)
    ratio = _contrast_var(exact["full"][1]) / _contrast_var(exact["independent"][1])
    assert rec["reduction_percent"]["exact"] == pytest.approx(100 * (1 - ratio), abs=1e-8)
    assert set(rec["strata"]) == {"round one", "round two", "two actions", "three actions", "all roots"}


def test_one_root_rows_become_sensitivity_rows_of_the_same_claims():
    from oscc_core.reporting.rows import Row
    rows = [Row.compare("full: contrast variance", "main.cp_grpo_paired.variance", 30.0, 29.0, 31.0)]
    out = pooled.one_root(rows, "")
    assert out[0].claim_id == "main.cp_grpo_paired.variance" and not out[0].primary
    assert out[0]["sensitivity of"] == "main.cp_grpo_paired.variance" and out[0].quantity.startswith("root '' only")
    assert claims.claim(out[0].claim_id) == out[0].paper


# --- the mixture formula and the allocation -------------------------------------------------------

@given(st.lists(st.integers(2, 40), min_size=1, max_size=5), st.integers(0, 2 ** 32 - 1))
def test_mixture_with_count_weights_is_the_moments_of_the_concatenated_sample(sizes, seed):
    """With weights n_h / N and each root's ddof-0 covariance, the mixture is numpy's ddof-0 moments of all
    groups pooled."""
    rng = np.random.default_rng(seed)
    parts = [rng.normal(loc=rng.normal(size=2) * 3, size=(n, 2)) for n in sizes]
    w = np.array(sizes, dtype=np.float64) / sum(sizes)
    mean, cov = pooling.mixture_moments(w, np.stack([p.mean(0) for p in parts]),
                                        np.stack([np.cov(p.T, ddof=0) for p in parts]))
    allx = np.concatenate(parts)
    assert mean == pytest.approx(allx.mean(0), abs=1e-10)
    assert cov == pytest.approx(np.cov(allx.T, ddof=0), abs=1e-9)


def test_mixture_moments_carry_a_leading_replicate_axis():
    w = np.array([0.25, 0.75])
    means = np.array([[[0.0, 1.0], [2.0, 3.0]], [[1.0, 1.0], [1.0, 1.0]]])     # [R=2, H=2, B=2]
    covs = np.broadcast_to(np.eye(2), (2, 2, 2, 2))
    mean, cov = pooling.mixture_moments(w, means, covs)
    assert mean.tolist() == [[1.5, 2.5], [1.0, 1.0]]
    # between-root spread of replicate 0: 0.25 * 0.75 * (2, 2)(2, 2)^T = 0.75 in every entry
    assert cov[0].tolist() == [[1.75, 0.75], [0.75, 1.75]] and cov[1].tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_allocation_by_hand():
    assert pooling.allocate(10, np.array([0.5, 0.25, 0.25]), 1).tolist() == [4, 3, 3]    # 7 left: 3.5 1.75 1.75
    assert pooling.allocate(3, np.array([0.9, 0.1]), 1).tolist() == [2, 1]


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30).filter(lambda x: sum(x) > 0),
       st.integers(0, 100_000), st.integers(0, 50))
def test_allocation_sums_to_the_total_gives_every_root_its_floor_and_stays_within_one_of_proportional(
        raw, extra, floor):
    w = np.array(raw) / sum(raw)
    total = floor * len(w) + extra
    n = pooling.allocate(total, w, floor)
    assert n.sum() == total and (n >= floor).all()
    assert np.all(np.abs(n - floor - extra * w) < 1 + 1e-9)


@pytest.mark.parametrize("total, weights, floor", [(5, [0.5, 0.5], 3), (10, [0.5, 0.6], 1), (True, [1.0], 0)])
def test_allocation_refuses_totals_below_the_floors_and_weights_not_summing_to_one(total, weights, floor):
    with pytest.raises(ValueError):
        pooling.allocate(total, np.array(weights), floor)


def test_an_unknown_weighting_is_refused_before_any_compute():
    with pytest.raises(ValueError, match="weighting"):
        pooling.root_weights("leduc", [""], None, "by pot")
