"""`chapters.transfer.kuhn_facts` against Kuhn poker enumerated here with OpenSpiel, and against closed forms.

The reference uses nothing from `oscc_core`: OpenSpiel deals both cards,
player 0 takes the root action (Pass = 0 or Bet = 1), and every continuation
is played out under the policy (a dict from OpenSpiel's information-state
string to action probabilities).  At the root "" player 0's card is uniform
and the opponent's card uniform over the other two.  A group fixes player 0's
card; the arms differ in what the two branches share:

    full, root_only                 the opponent's card (no chance after the root)
    continuation_only, independent  nothing but player 0's card

so Var(R_Pass - R_Bet) is read off the joint law of the two returns.
"""
from __future__ import annotations

import itertools
from collections import defaultdict

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from oscc_core.chapters.transfer import bounds, kuhn_facts

KUHN_VALUE = -1.0 / 18.0       # player 0's equilibrium value (Kuhn 1950)
SHARES_OPPONENT = {"full": True, "root_only": True, "continuation_only": False, "independent": False}
STRINGS = [f"{c}{h}" for h in ("", "p", "b", "pb") for c in range(3)]


def _game():
    return pyspiel.load_game("kuhn_poker")


def _random_policy(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return {s: [1.0 - b, b] for s, b in zip(STRINGS, rng.random(len(STRINGS)).tolist())}


def _uniform_policy() -> dict:
    return {s: [0.5, 0.5] for s in STRINGS}


def _returns(state, policy: dict, prob: float, out: dict) -> None:
    """Add P(return of player 0) over every continuation of `state` under `policy`."""
    if state.is_terminal():
        out[state.returns()[0]] += prob
        return
    probs = policy[state.information_state_string()]
    for a in state.legal_actions():
        if probs[a] > 0:
            _returns(state.child(a), policy, prob * probs[a], out)


def _branch_law(c0: int, c1: int, action: int, policy: dict) -> dict:
    state = _game().new_initial_state()
    for card in (c0, c1, action):
        state = state.child(card)
    out: dict = defaultdict(float)
    _returns(state, policy, 1.0, out)
    return out


def _contrast_variance(arm: str, policy: dict) -> float:
    """Var(R_Pass - R_Bet) at the root "" from the joint law of the two branch returns."""
    joint: dict = defaultdict(float)
    for c0 in range(3):
        opponents = [c for c in range(3) if c != c0]
        if SHARES_OPPONENT[arm]:
            pairs = [(c1, c1, 1 / 6) for c1 in opponents]
        else:
            pairs = [(a, b, 1 / 12) for a, b in itertools.product(opponents, repeat=2)]
        for ca, cb, w in pairs:
            for (ra, pa), (rb, pb) in itertools.product(_branch_law(c0, ca, 0, policy).items(),
                                                        _branch_law(c0, cb, 1, policy).items()):
                joint[ra - rb] += w * pa * pb
    d, p = np.array(list(joint)), np.array(list(joint.values()))
    return float(p @ d ** 2 - (p @ d) ** 2)


def _terminal_returns() -> set:
    out, stack = set(), [_game().new_initial_state()]
    while stack:
        state = stack.pop()
        if state.is_terminal():
            out.update(state.returns())
        elif state.is_chance_node():
            stack += [state.child(a) for a, _ in state.chance_outcomes()]
        else:
            stack += [state.child(a) for a in state.legal_actions()]
    return out


@pytest.mark.parametrize("arm", list(SHARES_OPPONENT))
def test_uniform_contrast_variance_matches_openspiel(arm):
    assert kuhn_facts.four_arm_contrast_variances("uniform")[arm] == pytest.approx(
        _contrast_variance(arm, _uniform_policy()), abs=1e-12)


@pytest.mark.parametrize("arm", list(SHARES_OPPONENT))
def test_checkpoint_contrast_variance_matches_openspiel(arm):
    policy = _random_policy(11)
    assert kuhn_facts.four_arm_contrast_variances(policy)[arm] == pytest.approx(
        _contrast_variance(arm, policy), abs=1e-12)


@pytest.mark.parametrize("seed", [None, 1, 2, 3])
def test_full_equals_root_only(seed):
    policy = "uniform" if seed is None else _random_policy(seed)
    assert abs(kuhn_facts.four_arm_contrast_variances(policy)["full - root_only"]) < 1e-12


@pytest.mark.parametrize("seed", [None, 1, 2, 3])
def test_continuation_only_equals_independent(seed):
    policy = "uniform" if seed is None else _random_policy(seed)
    assert abs(kuhn_facts.four_arm_contrast_variances(policy)["continuation_only - independent"]) < 1e-12


def test_returns_support_matches_openspiel():
    assert kuhn_facts.returns_support() == _terminal_returns()


def test_support_bounds_follow_from_openspiel_returns():
    r = sorted(_terminal_returns())
    span = r[-1] - r[0]
    bounds = kuhn_facts.support_bounds()
    assert (bounds["contrast"], bounds["unshared"]) == (span ** 2, 2 * (span / 2) ** 2)


@pytest.mark.parametrize("arm", list(SHARES_OPPONENT))
def test_search_maxima_respect_the_range_bound(arm):
    r = sorted(_terminal_returns())
    assert kuhn_facts.bound_search()["arms"][arm]["max"] <= (r[-1] - r[0]) ** 2 + 1e-12


def test_fully_independent_construction_respects_the_unshared_bound():
    r = sorted(_terminal_returns())
    assert kuhn_facts.bound_search()["arms"]["fully_independent"]["max"] <= 2 * max(abs(x) for x in r) ** 2 + 1e-12


@pytest.mark.parametrize("arm", list(SHARES_OPPONENT))
def test_search_maximum_is_reached_by_its_policy(arm):
    found = kuhn_facts.bound_search()["arms"][arm]
    policy = _uniform_policy()
    policy.update({s: [1.0 - b, b] for s, b in found["policy"].items()})
    assert _contrast_variance(arm, policy) == pytest.approx(found["max"], abs=1e-9)


def test_value_above_the_band_is_flagged():
    nash_conv = 0.02
    assert bounds.value_outside_band(KUHN_VALUE + nash_conv + 0.01, nash_conv)


def test_value_inside_the_band_is_not_flagged():
    nash_conv = 0.02
    assert not bounds.value_outside_band(KUHN_VALUE + nash_conv / 2, nash_conv)


# ----- the certified (branch-and-bound) maximum --------------------------------------------
ALL_ARMS = list(SHARES_OPPONENT) + ["fully_independent"]


@pytest.mark.parametrize("root", kuhn_facts.KUHN_ROOTS)
def test_polynomial_form_equals_arm_moments(root):
    from oscc_core.exact.arm_moments import arm_moments
    from oscc_core.games import get_game
    from oscc_core.policy import table_to_policy, uniform_table
    g, poly = get_game("kuhn"), kuhn_facts._root_polynomial(root)
    x = np.random.default_rng(5).random((40, len(poly.free)))
    values = poly.values(x)
    for n, point in enumerate(x):
        table = uniform_table(g)
        table[poly.free] = np.stack([1 - point, point], axis=1)
        m = arm_moments(g, root, table_to_policy(g, table))
        for arm in SHARES_OPPONENT:
            assert values[arm][n] == pytest.approx(m[arm].contrast_var(0, 1), abs=1e-12)
        assert values["fully_independent"][n] == pytest.approx(m["full"].cov.diagonal()[:2].sum(), abs=1e-12)


@pytest.mark.parametrize("root", ["1", "01"])
def test_terminal_roots_have_maximum_four(root):
    # facing a bet both branches end at once: fold = -1, call = +-2 (OpenSpiel's returns), so the contrast
    # takes the two values -1 - 2 and -1 + 2 whatever the coupling: Var <= ((1 - (-3)) / 2)^2 = 4, reached
    # when the acting player holds the higher card with probability 1/2
    r = sorted(_terminal_returns())
    closed_form = ((-1 + r[-1]) - (-1 - r[-1])) ** 2 / 4
    for arm, res in kuhn_facts.certified_maxima(root).items():
        assert res["complete"] and res["upper"] == pytest.approx(closed_form, abs=1e-12), arm
        assert res["best"] == pytest.approx(closed_form, abs=1e-12), arm


@pytest.mark.parametrize("root", kuhn_facts.KUHN_ROOTS)
def test_certified_bound_dominates_random_points_and_vertices(root):
    poly = kuhn_facts._root_polynomial(root)
    x = np.concatenate([np.random.default_rng(7).random((2000, len(poly.free))),
                        np.array(list(itertools.product((0.0, 1.0), repeat=len(poly.free))))])
    values, cert = poly.values(x), kuhn_facts.certified_maxima(root)
    for arm in ALL_ARMS:
        assert np.max(values[arm]) <= cert[arm]["upper"] + 1e-12, arm
        assert cert[arm]["best"] >= kuhn_facts.bound_search(root=root)["arms"][arm]["max"] - 1e-12, arm


def test_certified_bound_is_tight_where_the_arm_maxima_are_reached():
    for arm, res in kuhn_facts.arm_maxima().items():
        cert = kuhn_facts.certified_maxima(res["upper_root"], (arm,))[arm]
        assert cert["complete"] and res["gap"] <= kuhn_facts.CERT_TOL, arm
        assert res["upper"] == pytest.approx(res["max"], abs=kuhn_facts.CERT_TOL)
    for root in kuhn_facts.KUHN_ROOTS:     # every root's bound is a proof, closed or not
        for arm, res in kuhn_facts.certified_maxima(root).items():
            assert res["upper"] >= res["best"] and (res["gap"] <= kuhn_facts.CERT_TOL or not res["complete"])


def _box_bound_violations(root: str, arm: str, bound=kuhn_facts.box_bounds, n_boxes=60, n_points=400) -> float:
    """Largest excess of the sampled maximum over the box bound on small random sub-boxes (<= 0 is sound)."""
    poly = kuhn_facts._root_polynomial(root)
    rng = np.random.default_rng(3)
    lo0, hi0 = kuhn_facts._initial_boxes(poly)
    pick = rng.integers(len(lo0), size=n_boxes)
    width = rng.choice([0.05, 0.2, 0.5], size=(n_boxes, 1))
    lo = np.clip(np.where(lo0[pick] == hi0[pick], lo0[pick], rng.random((n_boxes, len(poly.free))) * (1 - width)), 0, 1)
    hi = np.where(lo0[pick] == hi0[pick], hi0[pick], lo + width)
    ub = bound(root, arm, lo, hi)["ub"]
    worst = -np.inf
    for b in range(n_boxes):
        pts = lo[b] + rng.random((n_points, len(poly.free))) * (hi[b] - lo[b])
        pts = np.concatenate([pts, lo[b][None], hi[b][None]])
        worst = max(worst, float(np.max(poly.values(pts)[arm]) - ub[b]))
    return worst


@pytest.mark.parametrize("root", kuhn_facts.KUHN_ROOTS)
@pytest.mark.parametrize("arm", ["full", "independent", "fully_independent"])
def test_box_bound_dominates_dense_samples(root, arm):
    assert _box_bound_violations(root, arm) <= 1e-12


def test_box_bound_check_catches_an_oversubtracted_mean_term():
    def buggy(root, arm, lo, hi):          # subtracts the largest M^2 on the box instead of the smallest
        poly = kuhn_facts._root_polynomial(root)
        corners = np.array(list(itertools.product((0.0, 1.0), repeat=len(poly.free))))
        out = []
        for a, b in zip(lo, hi):
            k = poly.quantities(a + corners * (b - a))
            out.append(k["E2_unshared"].max() - (k["M"] ** 2).max())
        return {"ub": np.array(out)}
    assert _box_bound_violations("", "independent", bound=buggy, n_boxes=20, n_points=200) > 1e-3
