"""`exact.arm_moments` against a Leduc tree enumeration written here with OpenSpiel.

The reference below uses nothing from `oscc_core`: OpenSpiel deals, plays and
scores every hand, and the coupling of the branches is enumerated atom by
atom from the arm table of DESIGN.md section 5.

A group at a root history draws the acting player's private card from the
root law (uniform deals, both players uniform over legal actions up to the
root), and the opponent's card from its posterior given that card.  Every
legal root action is a branch; after it both players play uniformly.  The
public card is dealt by one uniform U as the remaining cards sorted by id
[floor(4 U)], so U falls in one of four equally likely bins.  Given the deal
and the bin, the branches' policy draws are independent.  The arms differ in
what the branches share:

    independent        opponent card and bin drawn per branch
    root_only          opponent card shared, bin per branch
    continuation_only  opponent card per branch, bin shared
    full               opponent card and bin shared

The selector-stress maps only change how a shared bin meets the other
branch's bin: semantic (bin k meets bin k), antithetic (a branch with an odd
position uses 1 - U, so bin k meets bin 3 - k across odd and even positions)
and relabelled (an independent bin).
"""
from __future__ import annotations

import itertools
from collections import defaultdict
from functools import lru_cache

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from oscc_core.exact.arm_moments import arm_moments  # noqa: E402

ARMS = {  # arm -> (opponent card shared, chance bin shared)
    "independent": (False, False),
    "root_only": (True, False),
    "continuation_only": (False, True),
    "full": (True, True),
}
BINS = 4            # Leduc: six cards, two dealt privately, four left for the public card
ROOTS = ("", "1", "2")


@lru_cache(maxsize=None)
def _leduc():
    return pyspiel.load_game("leduc_poker")


@lru_cache(maxsize=None)
def root_law(history: str) -> tuple[int, tuple[int, ...], dict]:
    """(acting player, legal root actions, {(own card, opponent card): probability}) at a public history."""
    game = _leduc()
    law: dict = defaultdict(float)
    start = game.new_initial_state()
    player = actions = None
    for c0, p0 in start.chance_outcomes():
        s0 = start.child(c0)
        for c1, p1 in s0.chance_outcomes():
            state, p = s0.child(c1), p0 * p1
            for a in history:
                p /= len(state.legal_actions())          # both players uniform before the root
                state = state.child(int(a))
            player, actions = state.current_player(), tuple(state.legal_actions())
            own, opp = (c0, c1) if player == 0 else (c1, c0)
            law[(own, opp)] += p
    total = sum(law.values())                            # condition on reaching the root
    return player, actions, {s: p / total for s, p in law.items()}


def _play_out(state, player: int, public: int) -> dict:
    """{acting player's utility: probability} from `state`: uniform play, public card forced to `public`."""
    if state.is_terminal():
        return {state.returns()[player]: 1.0}
    if state.is_chance_node():
        return _play_out(state.child(public), player, public)
    legal = state.legal_actions()
    out: dict = defaultdict(float)
    for a in legal:
        for u, p in _play_out(state.child(a), player, public).items():
            out[u] += p / len(legal)
    return out


@lru_cache(maxsize=None)
def branch_laws(history: str) -> dict:
    """{(branch, own, opp, bin): {utility: probability}} for every situation with positive probability."""
    game = _leduc()
    player, actions, law = root_law(history)
    out = {}
    for (own, opp) in law:
        cards = (own, opp) if player == 0 else (opp, own)
        state = game.new_initial_state().child(cards[0]).child(cards[1])
        for a in history:
            state = state.child(int(a))
        remaining = sorted(set(range(6)) - {own, opp})
        for b, action in enumerate(actions):
            child = state.child(action)
            for k in range(BINS):
                out[(b, own, opp, k)] = dict(_play_out(child, player, remaining[k]))
    return out


def _moment(dist: dict, power: int) -> float:
    return sum(p * u ** power for u, p in dist.items())


def branch_marginals(history: str) -> list[dict]:
    """Each branch's return law {utility: probability}, pooled over the root law and the public card."""
    _, actions, law = root_law(history)
    laws = branch_laws(history)
    out = []
    for b in range(len(actions)):
        pooled: dict = defaultdict(float)
        for (own, opp), p in law.items():
            for k in range(BINS):
                for u, pu in laws[(b, own, opp, k)].items():
                    pooled[u] += p * pu / BINS
        out.append(dict(pooled))
    return out


def coupling_covariance_bounds(law_x: dict, law_y: dict) -> tuple[float, float]:
    """Smallest and largest Cov(X, Y) over all couplings of two laws (Frechet-Hoeffding: the
    antitone and the comonotone coupling pair the quantiles in opposite and in the same order)."""
    def paired(xs, ys):
        xs, ys = [list(t) for t in xs], [list(t) for t in ys]
        i = j = 0
        total = 0.0
        while i < len(xs) and j < len(ys):
            t = min(xs[i][1], ys[j][1])
            total += t * xs[i][0] * ys[j][0]
            xs[i][1] -= t
            ys[j][1] -= t
            if xs[i][1] <= 1e-15:
                i += 1
            if ys[j][1] <= 1e-15:
                j += 1
        return total
    x, y = sorted(law_x.items()), sorted(law_y.items())
    mx, my = sum(u * p for u, p in x), sum(u * p for u, p in y)
    return paired(x, y[::-1]) - mx * my, paired(x, y) - mx * my


def _partner_bins(pairing: str, i: int, j: int, k: int, shared: bool):
    """[(bin of branch j, probability)] given bin k of branch i."""
    if not shared or pairing == "relabelled":
        return [(kj, 1.0 / BINS) for kj in range(BINS)]
    if pairing == "antithetic" and i % 2 != j % 2:
        return [(BINS - 1 - k, 1.0)]
    return [(k, 1.0)]


def enumerated_moments(history: str, arm: str, pairing: str = "semantic", own_card: int | None = None):
    """Means [B] and covariance [B, B] of the branch returns, by enumerating every coupled atom.

    `own_card` conditions on the acting player's card (its information state before the public card).
    """
    _, actions, law = root_law(history)
    if own_card is not None:
        law = {s: p for s, p in law.items() if s[0] == own_card}
    total = sum(law.values())
    law = {s: p / total for s, p in law.items()}
    own_prob: dict = defaultdict(float)
    for (own, _), p in law.items():
        own_prob[own] += p
    m = {key: _moment(d, 1) for key, d in branch_laws(history).items()}
    q = {key: _moment(d, 2) for key, d in branch_laws(history).items()}
    share_opp, share_bin = ARMS[arm]
    n = len(actions)
    mean = np.array([sum(p * m[(b, own, opp, k)] / BINS for (own, opp), p in law.items() for k in range(BINS))
                     for b in range(n)])
    second = np.zeros((n, n))
    for i in range(n):
        second[i, i] = sum(p * q[(i, own, opp, k)] / BINS for (own, opp), p in law.items() for k in range(BINS))
    for i, j in itertools.permutations(range(n), 2):
        acc = 0.0
        for own, p_own in own_prob.items():
            posterior = {opp: p / p_own for (o, opp), p in law.items() if o == own}
            for oi, p_oi in posterior.items():
                partners = [(oi, 1.0)] if share_opp else list(posterior.items())
                for oj, p_oj in partners:
                    for ki in range(BINS):
                        for kj, p_kj in _partner_bins(pairing, i, j, ki, share_bin):
                            acc += p_own * p_oi * p_oj * p_kj / BINS * m[(i, own, oi, ki)] * m[(j, own, oj, kj)]
        second[i, j] = acc
    return mean, second - np.outer(mean, mean)


@pytest.mark.parametrize("root", ROOTS)
def test_branches_are_openspiels_legal_root_actions_in_id_order(root):
    _, actions, _ = root_law(root)
    assert arm_moments("leduc", root)["independent"].actions == [{0: "Fold", 1: "Call", 2: "Raise"}[a]
                                                                   for a in actions]


@pytest.mark.parametrize("root", ROOTS)
@pytest.mark.parametrize("arm", list(ARMS))
def test_arm_moments_match_the_openspiel_enumeration(root, arm):
    ours = arm_moments("leduc", root)[arm]
    mean, cov = enumerated_moments(root, arm)
    np.testing.assert_allclose(ours.mean, mean, rtol=0, atol=1e-9)
    np.testing.assert_allclose(ours.cov, cov, rtol=0, atol=1e-9)
    for i, j in itertools.combinations(range(len(mean)), 2):
        expected = cov[i, i] + cov[j, j] - 2 * cov[i, j]
        assert ours.contrast_var(i, j) == pytest.approx(expected, abs=1e-9)


def test_the_enumeration_separates_the_arms():
    """The reference is not degenerate: at the first decision every arm has its own cross term."""
    cross = {arm: enumerated_moments("", arm)[1][0, 1] for arm in ARMS}
    assert len({round(c, 6) for c in cross.values()}) == len(ARMS)
