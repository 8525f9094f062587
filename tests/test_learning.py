"""Learners (oscc_core.learning, DESIGN section 8) against independent values.

Every expected value here is computed in this file without the library's
learning code: hand-worked GAE, closed-form group normalisation, autograd of
the clipped surrogate, a plain-Python/pyspiel replay of whole learner
iterations (from zero and from random logits) from the stream definitions,
enumeration of pyspiel histories for the visitation law and the own-reach
average, and pyspiel's own exploitability.
"""
from __future__ import annotations

import math
from collections import defaultdict
from functools import cache

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

pyspiel = pytest.importorskip("pyspiel")

from oscc_core.engine import rng
from oscc_core.exact.exploitability import evaluate
from oscc_core.games import get_game
from oscc_core.interop.openspiel import to_openspiel
from oscc_core.learning import episodes, objectives, visitation
from oscc_core.learning.loop import Learners, RunSpec, Schedule
from oscc_core.policy import table_to_policy

TRAIN = rng.SPLITS["train"]
OS_NAME = {"kuhn": "kuhn_poker", "leduc": "leduc_poker"}


# ----- independent helpers ------------------------------------------------------------------
def _uniform_probs(state) -> list[float]:
    legal = state.legal_actions()
    n = state.get_game().num_distinct_actions()
    return [1.0 / len(legal) if x in legal else 0.0 for x in range(n)]


def enumerate_decisions(game_name: str, probs_of, own_reach: dict | None = None):
    """Every decision history of the pyspiel game with its reach under a self-play policy.

    probs_of(info_string, legal_actions) -> list over all actions.  Returns a list of
    (info_string, player, private cards (p0, p1), opponent card, reach, history actions).
    Also returns the list of terminal histories' decision counts and reaches.  When
    `own_reach` is a dict, it is filled with info_string -> the owner's own reach (the
    product of the acting player's own action probabilities on the way there).
    """
    g = pyspiel.load_game(OS_NAME[game_name])
    out, terminals = [], []

    def walk(state, reach, cards, history, decisions, own):
        if state.is_terminal():
            terminals.append((decisions, reach))
            return
        if state.is_chance_node():
            for a, p in state.chance_outcomes():
                child = state.clone()
                child.apply_action(a)
                walk(child, reach * p, cards + [a] if len(cards) < 2 else cards, history + [a], decisions, own)
            return
        player = state.current_player()
        info = state.information_state_string()
        out.append((info, player, tuple(cards), cards[1 - player], reach, tuple(history)))
        if own_reach is not None:
            assert own_reach.setdefault(info, own[player]) == own[player]     # perfect recall
        pr = probs_of(info, state.legal_actions())
        for a in state.legal_actions():
            child = state.clone()
            child.apply_action(a)
            child_own = (own[0] * pr[a], own[1]) if player == 0 else (own[0], own[1] * pr[a])
            walk(child, reach * pr[a], cards, history + [a], decisions + 1, child_own)

    walk(g.new_initial_state(), 1.0, [], [], 0, (1.0, 1.0))
    return out, terminals


@cache
def uniform_decisions(game_name: str):
    n = pyspiel.load_game(OS_NAME[game_name]).num_distinct_actions()
    return enumerate_decisions(game_name, lambda info, legal: [1.0 / len(legal) if x in legal else 0.0
                                                                for x in range(n)])


def uniform_bits_ref(key: int, counter: int) -> int:
    """The 53-bit integer behind the plain-Python reference uniform."""
    m = rng.uniform_reference(key, counter) * 2.0 ** 53
    assert m == int(m)
    return int(m)


def first_exceeding(weights: list[float], target: float) -> int:
    """Inverse CDF in index order: first index whose running sum exceeds target (clamped to last positive)."""
    run = 0.0
    last = max(i for i, w in enumerate(weights) if w > 0)
    for i, w in enumerate(weights):
        run += w
        if run > target:
            return min(i, last)
    return last


def policy_action(probs: list[float], m: int) -> int:
    """First action whose ceil(cumulative probability * 2**53) exceeds the 53-bit draw m."""
    run = 0.0
    last = max(i for i, p in enumerate(probs) if p > 0)
    for a, p in enumerate(probs):
        run += p
        if math.ceil(run * 2 ** 53) > m:
            return min(a, last)
    return last


# ----- 1. GAE ------------------------------------------------------------------------------
def test_gae_matches_hand_worked_example():
    lam = 0.95
    # hand 0: P0, P1, P0, P1 then ends, player 0 wins 3 chips; hand 1: P0, P1 then ends, player 0 loses 1.
    info = torch.tensor([[0, 1, 2, 3], [4, 5, -1, -1]])
    player = torch.tensor([[0, 1, 0, 1], [0, 1, 0, 0]])
    tr = episodes.Transitions(info, torch.zeros_like(info), player, torch.tensor([3, -1]))
    v = torch.tensor([[0.5, -0.25, 1.5, -2.0], [0.1, 0.7, 0.0, 0.0]], dtype=torch.float64)
    # hand 0, player 0: decisions 0 and 2 (u = 3); player 1: decisions 1 and 3 (u = -3)
    d2 = 3 - 1.5
    d0 = 1.5 - 0.5
    d3 = -3 - (-2.0)
    d1 = -2.0 - (-0.25)
    # hand 1: one decision each; player 0 u = -1, player 1 u = +1
    expected = torch.tensor([[d0 + lam * d2, d1 + lam * d3, d2, d3],
                             [-1 - 0.1, 1 - 0.7, 0.0, 0.0]], dtype=torch.float64)
    got = episodes.gae(tr, v, lam)
    assert torch.allclose(got, expected, atol=1e-14, rtol=0)
    # the worked numbers, spelled out
    assert got[0, 0].item() == pytest.approx(1.0 + 0.95 * 1.5)
    assert got[0, 1].item() == pytest.approx(-1.75 + 0.95 * -1.0)


# ----- 2. group normalisation ------------------------------------------------------------------
def test_group_normalised_is_centred_over_sample_sd_and_zero_when_equal():
    r = torch.tensor([[1.0, -2.0, 4.0, 0.5], [3.0, 3.0, 3.0, 3.0], [2.0, -1.0, 7.0, 99.0]], dtype=torch.float64)
    mask = torch.tensor([[True, True, True, True], [True, True, True, True], [True, True, True, False]])
    got = objectives.group_normalised(r, mask)
    for row in range(3):
        vals = np.array([x for x, m in zip(r[row].tolist(), mask[row].tolist()) if m])
        sd = vals.std(ddof=1)
        want = np.zeros(4)
        if sd > 0:
            want[:len(vals)] = (vals - vals.mean()) / (sd + 1e-8)
        assert np.allclose(got[row].numpy(), want, atol=1e-14, rtol=0), row
    assert torch.equal(got[1], torch.zeros(4, dtype=torch.float64))
    assert got[2, 3].item() == 0.0


def test_centred_subtracts_the_mean_of_masked_lanes_only():
    r = torch.tensor([[1.0, -2.0, 4.0], [5.0, 1.0, 100.0]], dtype=torch.float64)
    mask = torch.tensor([[True, True, True], [True, True, False]])
    got = objectives.centred(r, mask)
    assert torch.allclose(got, torch.tensor([[0.0, -3.0, 3.0], [2.0, -2.0, 0.0]], dtype=torch.float64), atol=1e-15)


# ----- 3. clipped gradient ----------------------------------------------------------------------
def test_clipped_gradient_matches_autograd_with_some_terms_clipped():
    eps = 0.2
    legal = torch.tensor([[True, True, True], [False, True, True], [True, True, False]])
    theta0 = torch.tensor([[0.0, 0.0, 0.0], [0.0, 0.3, -0.2], [0.1, -0.4, 0.0]], dtype=torch.float64)
    theta = torch.tensor([[0.9, -0.5, 0.1], [0.0, 0.35, -0.2], [-0.6, 0.4, 0.0]], dtype=torch.float64)

    def probs(t):
        z = torch.where(legal, t, torch.full_like(t, -torch.inf))
        return torch.softmax(z, dim=1)

    row = torch.tensor([0, 0, 0, 1, 1, 2, 2, 0])
    action = torch.tensor([0, 1, 2, 1, 2, 0, 1, 0])
    adv = torch.tensor([1.5, -0.7, 0.4, 2.0, -1.0, -0.3, 0.8, -2.5], dtype=torch.float64)
    weight = torch.tensor([0.3, 0.2, 0.1, 0.5, 0.25, 0.4, 0.6, 0.15], dtype=torch.float64)
    pi0 = probs(theta0)[row, action]
    terms = objectives.Terms(row, action, weight, adv, pi0)

    t = theta.clone().requires_grad_(True)
    r = probs(t)[row, action] / pi0
    obj = (weight * torch.minimum(r * adv, torch.clamp(r, 1 - eps, 1 + eps) * adv)).sum()
    obj.backward()
    expected_grad = torch.where(legal, t.grad, torch.zeros_like(t.grad))

    rr = r.detach()
    expected_clipped = ((adv > 0) & (rr > 1 + eps)) | ((adv < 0) & (rr < 1 - eps))
    assert expected_clipped.any() and (~expected_clipped).any()   # the point mixes both kinds of term
    grad, clipped = objectives.clipped_gradient(theta, legal, terms, eps)
    assert torch.equal(clipped, expected_clipped)
    assert torch.allclose(grad, expected_grad, atol=1e-14, rtol=0)


# ----- 4. learner iterations, replayed from the stream definitions ----------------------------------
LEDGER_FIELDS = ("physical_calls", "transitions", "decisions", "root_draws", "groups", "unused_hands", "illegal",
                 "terms", "clipped_terms", "iterations")


def policy_of(theta: torch.Tensor) -> dict[str, list[float]]:
    """pi_theta of every Leduc information state (softmax over its legal logits), keyed by OpenSpiel's string."""
    game = get_game("leduc")
    legal = torch.as_tensor(game.infostates.legal)
    probs = torch.softmax(torch.where(legal, theta, torch.full_like(theta, -torch.inf)), dim=1)
    return {s: probs[i].tolist() for i, s in enumerate(game.infostates.strings)}


def replay_epochs(theta: torch.Tensor, terms, epochs: int, eta: float, eps: float, ledger: dict) -> torch.Tensor:
    """E plain-SGD steps theta += eta * grad of sum_k w_k min(r_k A_k, clip(r_k) A_k), r_k = pi_theta(a_k|I_k) / b_k.

    terms: (infostate id, action, behaviour prob b, advantage, weight); the gradient is autograd's.  Counts
    terms and clip-selected terms per epoch into `ledger`.
    """
    legal_mask = torch.as_tensor(get_game("leduc").infostates.legal)
    for _ in range(epochs):
        t = theta.clone().requires_grad_(True)
        obj = torch.zeros((), dtype=torch.float64)
        for i, a, b, adv, w in terms:
            p = torch.softmax(torch.where(legal_mask[i], t[i], torch.full_like(t[i], -torch.inf)), dim=0)
            r = p[a] / b
            ledger["terms"] += 1
            ledger["clipped_terms"] += int((adv > 0 and r.item() > 1 + eps) or (adv < 0 and r.item() < 1 - eps))
            obj = obj + w * torch.minimum(r * adv, torch.clamp(r, 1 - eps, 1 + eps) * adv)
        obj.backward()
        theta = theta + eta * torch.where(legal_mask, t.grad, torch.zeros_like(t.grad))
    return theta


def own_reach_average(num: np.ndarray, den: np.ndarray, theta: torch.Tensor) -> dict:
    """Add pi_theta weighted by its owners' own reach (from a pyspiel walk) to num [n_info, A] / den [n_info].

    Returns pi_theta by information-state string and the walk's decision histories under pi_theta.
    """
    id_of = get_game("leduc").infostates.id_of
    table = policy_of(theta)
    own: dict = {}
    decisions, _ = enumerate_decisions("leduc", lambda info, legal: table[info], own)
    for info, reach in own.items():
        num[id_of[info]] += reach * np.array(table[info])
        den[id_of[info]] += reach
    return table, decisions


def reference_run(arm: str, seed: int, n: int, epochs: int, eta: float, eps: float, group_size: int,
                  theta: torch.Tensor | None = None, iterations: int = 1) -> list[dict]:
    """One run on Leduc from logits `theta` (default 0), recomputed with pyspiel and the reference streams.

    Returns, after each iteration, the logits, the ledger and the own-reach-weighted average of the
    policies played so far.
    """
    game = get_game("leduc")
    strings = game.infostates.strings
    id_of = {s: i for i, s in enumerate(strings)}
    num_cards = 6
    event = rng.semantic_event_id("leduc", "public_card", 2, 0)
    osg = pyspiel.load_game("leduc_poker")
    theta = torch.zeros((len(strings), 3), dtype=torch.float64) if theta is None else theta.clone()
    ledger = dict.fromkeys(LEDGER_FIELDS, 0)
    num, den = np.zeros((len(strings), 3)), np.zeros(len(strings))
    history = []

    def key(ns, **f):
        return rng.derive_key_reference(ns, **f)

    def rollout(hist, root_action, acting, table, policy_k, chance_k):
        state = osg.new_initial_state()
        for a in hist:
            state.apply_action(a)
        state.apply_action(root_action)
        counter = 0
        while not state.is_terminal():
            if state.is_chance_node():
                remaining = sorted(a for a, _ in state.chance_outcomes())
                u = rng.uniform_reference(chance_k, 0)
                state.apply_action(remaining[int(u * len(remaining))])
            else:
                state.apply_action(policy_action(table[state.information_state_string()],
                                                 uniform_bits_ref(policy_k, counter)))
                counter += 1
        return state.returns()[acting], counter

    for it in range(iterations):
        table, decisions = own_reach_average(num, den, theta)     # pi_t, and the law of decision points under it
        weights = np.zeros((len(strings), num_cards))
        history_of = {}
        for info, player, cards, opp, reach, hist in decisions:
            i = id_of[info]
            weights[i, opp] += reach
            assert history_of.setdefault((i, opp), hist) == hist        # (I, c) fixes the history in Leduc
        per_state = weights.sum(axis=1)
        total = sum(per_state.tolist())
        groups = []          # (infostate id, [(action, pi0, advantage, weight)])
        for k in range(n):
            g = it * n + k       # group = t * N + k
            u = rng.uniform_reference(key("root", run=seed, split=TRAIN, group=g), 0)
            i = first_exceeding(per_state.tolist(), u * total)
            info = strings[i]
            row = weights[i].tolist()

            def hidden(g=g, row=row, **branch):
                uh = rng.uniform_reference(key("hidden", run=seed, split=TRAIN, group=g, **branch), 0)
                return first_exceeding(row, uh * sum(row))

            shared_opp = hidden()
            any_hist = next(h for (j, c), h in history_of.items() if j == i)
            state = osg.new_initial_state()
            for a in any_hist:
                state.apply_action(a)
            acting = state.current_player()
            legal = state.legal_actions()
            pi0 = table[info]
            assert state.information_state_string() == info
            samples = []
            if arm in ("cp_grpo", "independent"):
                for a in legal:
                    opp = shared_opp if arm == "cp_grpo" else hidden(branch=a)
                    chance_k = (key("chance", run=seed, split=TRAIN, group=g, event=event, rollout=0)
                                if arm == "cp_grpo"
                                else key("chance", run=seed, split=TRAIN, group=g, event=event, rollout=0, branch=a))
                    ret, steps = rollout(history_of[(i, opp)], a, acting, table,
                                         key("policy", run=seed, split=TRAIN, group=g, branch=a, rollout=0), chance_k)
                    samples.append((a, ret))
                    ledger["transitions"] += 1 + steps
                    ledger["decisions"] += steps
            else:       # grpo
                for s in range(group_size):
                    m = uniform_bits_ref(key("policy", run=seed, split=TRAIN, group=g, branch=s, rollout=0,
                                             stream=2), 0)
                    a = policy_action(pi0, m)
                    ret, steps = rollout(history_of[(i, shared_opp)], a, acting, table,
                                         key("policy", run=seed, split=TRAIN, group=g, branch=s, rollout=0),
                                         key("chance", run=seed, split=TRAIN, group=g, event=event, rollout=0,
                                             branch=s))
                    samples.append((a, ret))
                    ledger["transitions"] += 1 + steps
                    ledger["decisions"] += 1 + steps
            ledger["physical_calls"] += len(samples)
            ledger["root_draws"] += 1
            ledger["groups"] += 1
            rets = [x for _, x in samples]
            mean = sum(rets) / len(rets)
            if arm == "grpo":
                sd = math.sqrt(sum((x - mean) ** 2 for x in rets) / (len(rets) - 1))
                advs = [(x - mean) / (sd + 1e-8) if sd > 0 else 0.0 for x in rets]
                ws = [1.0 / (n * group_size)] * len(rets)
            else:
                advs = [x - mean for x in rets]
                ws = [pi0[a] / n for a, _ in samples]
            groups.append((i, [(a, pi0[a], adv, w) for (a, _), adv, w in zip(samples, advs, ws)]))
        terms = [(i, a, b, adv, w) for i, ts in groups for a, b, adv, w in ts]
        theta = replay_epochs(theta, terms, epochs, eta, eps, ledger)
        ledger["iterations"] += 1
        history.append({"logits": theta, "ledger": dict(ledger), "average": num / den[:, None]})
    return history


def reference_iteration(arm: str, seed: int, n: int, epochs: int, eta: float, eps: float, group_size: int):
    """Logits and physical calls after iteration 0 from zero logits."""
    last = reference_run(arm, seed, n, epochs, eta, eps, group_size)[-1]
    return last["logits"], last["ledger"]["physical_calls"]


@pytest.mark.parametrize("arm", ["cp_grpo", "independent", "grpo"])
def test_one_iteration_equals_stream_replay_with_pyspiel(arm):
    seed, n, epochs, eta, eps, g = 13, 8, 2, 4.0, 0.2, 4
    expected, calls = reference_iteration(arm, seed, n, epochs, eta, eps, g)
    learners = Learners("leduc", [RunSpec(arm, seed)],
                        Schedule(iterations=1, decision_points=n, epochs=epochs, epsilon=eps, learning_rate=eta,
                                 group_size=g))
    learners.step()
    assert learners.ledger.row(0)["physical_calls"] == calls
    assert expected.abs().max() > 0.1       # the update is not trivially zero
    assert torch.allclose(learners.logits[0], expected, atol=1e-12, rtol=0)


def reference_ppo_run(seed: int, n: int, epochs: int, eta: float, eps: float, lam: float, value_rate: float,
                      theta: torch.Tensor | None = None, values: np.ndarray | None = None,
                      iterations: int = 1) -> list[dict]:
    """PPO on Leduc from logits `theta` and values `values` (default 0): n hands per iteration replayed with
    pyspiel from the streams.  Returns, after each iteration, logits, values, ledger and average policy."""
    game = get_game("leduc")
    strings = game.infostates.strings
    id_of = {s: i for i, s in enumerate(strings)}
    osg = pyspiel.load_game("leduc_poker")
    event = rng.semantic_event_id("leduc", "public_card", 2, 0)
    theta = torch.zeros((len(strings), 3), dtype=torch.float64) if theta is None else theta.clone()
    values = np.zeros(len(strings)) if values is None else np.array(values, dtype=np.float64)
    ledger = dict.fromkeys(LEDGER_FIELDS, 0)
    num, den = np.zeros((len(strings), 3)), np.zeros(len(strings))
    history = []
    for it in range(iterations):
        table, _ = own_reach_average(num, den, theta)
        hands = []       # per hand: list of (info id, action, player), utilities
        for k in range(n):
            g = it * n + k
            u0 = rng.uniform_reference(rng.derive_key_reference("root", run=seed, split=TRAIN, group=g), 0)
            c0 = first_exceeding([1.0] * 6, u0 * 6)
            rest = [0.0 if c == c0 else 1.0 for c in range(6)]
            u1 = rng.uniform_reference(rng.derive_key_reference("hidden", run=seed, split=TRAIN, group=g), 0)
            c1 = first_exceeding(rest, u1 * 5)
            pk = rng.derive_key_reference("policy", run=seed, split=TRAIN, group=g, branch=0, rollout=0)
            ck = rng.derive_key_reference("chance", run=seed, split=TRAIN, group=g, event=event, rollout=0)
            state = osg.new_initial_state()
            state.apply_action(c0)
            state.apply_action(c1)
            steps, counter = [], 0
            while not state.is_terminal():
                if state.is_chance_node():
                    remaining = sorted(a for a, _ in state.chance_outcomes())
                    state.apply_action(remaining[int(rng.uniform_reference(ck, 0) * len(remaining))])
                else:
                    info = state.information_state_string()
                    a = policy_action(table[info], uniform_bits_ref(pk, counter))
                    steps.append((id_of[info], a, state.current_player()))
                    state.apply_action(a)
                    counter += 1
            hands.append((steps, state.returns()))
        # each seat's own decisions: delta = V(next own state) - V(I), the last one's u - V(I); gamma = 1
        samples = []     # (info, action, GAE advantage, lambda-return)
        for steps, returns in hands:
            for p in (0, 1):
                own = [(i, a) for i, a, q in steps if q == p]
                next_value, running, back = returns[p], 0.0, []
                for i, a in reversed(own):
                    adv = next_value - values[i] + lam * running
                    back.append((i, a, adv, adv + values[i]))
                    running, next_value = adv, values[i]
                samples.extend(reversed(back))
        advs = np.array([x[2] for x in samples])
        z = (advs - advs.mean()) / (advs.std() + 1e-8)
        targets = defaultdict(list)
        for i, _, _, target in samples:
            targets[i].append(target)
        for i, ts in targets.items():
            values[i] += value_rate * (np.mean(ts) - values[i])
        terms = [(i, a, table[strings[i]][a], adv, 1.0 / len(samples)) for (i, a, _, _), adv in zip(samples, z)]
        theta = replay_epochs(theta, terms, epochs, eta, eps, ledger)
        for f in ("transitions", "decisions"):
            ledger[f] += len(samples)
        ledger["physical_calls"] += n          # one physical call per hand played from the deal
        ledger["root_draws"] += n
        ledger["groups"] += n
        ledger["iterations"] += 1
        history.append({"logits": theta, "values": values.copy(), "ledger": dict(ledger),
                        "average": num / den[:, None]})
    return history


def reference_ppo_iteration(seed: int, n: int, epochs: int, eta: float, eps: float, lam: float, value_rate: float):
    """Logits, values and physical calls after PPO's iteration 0 from zero logits and values."""
    last = reference_ppo_run(seed, n, epochs, eta, eps, lam, value_rate)[-1]
    return last["logits"], last["values"], last["ledger"]["physical_calls"]


def test_one_ppo_iteration_equals_stream_replay_with_pyspiel():
    seed, n, epochs, eta, eps, lam, rate = 23, 6, 2, 4.0, 0.2, 0.95, 0.5
    theta, values, calls = reference_ppo_iteration(seed, n, epochs, eta, eps, lam, rate)
    learners = Learners("leduc", [RunSpec("ppo", seed)],
                        Schedule(iterations=1, decision_points=n, epochs=epochs, epsilon=eps, learning_rate=eta,
                                 gae_lambda=lam, value_rate=rate))
    learners.step()
    assert learners.ledger.row(0)["physical_calls"] == calls
    assert theta.abs().max() > 0.1
    assert np.allclose(learners.values[0].numpy(), values, atol=1e-12, rtol=0)
    assert torch.allclose(learners.logits[0], theta, atol=1e-12, rtol=0)


# Two iterations from random logits (and, for ppo, random values): pi0 is far from uniform, so the replay
# covers the behaviour weights pi0 / N, the on-policy draw of decision points and the hidden card's
# posterior, grpo's inverse CDF on pi0, GAE with V != 0, iteration 1's group ids t * N + k and the
# own-reach-weighted average of pi_0 and pi_1.
TWO = {"n": 16, "epochs": 2, "eta": 4.0, "eps": 0.2}
TWO_SEEDS = {"cp_grpo": 13, "independent": 17, "grpo": 19, "ppo": 23}


def random_start(seed: int) -> tuple[torch.Tensor, np.ndarray]:
    rs = np.random.default_rng(seed)
    n_info = len(get_game("leduc").infostates)
    return torch.tensor(rs.normal(0.0, 1.0, size=(n_info, 3))), rs.normal(0.0, 1.0, size=n_info)


@cache
def two_iteration_reference(arm: str) -> list[dict]:
    theta, values = random_start(1000 + TWO_SEEDS[arm])
    if arm == "ppo":
        return reference_ppo_run(TWO_SEEDS[arm], TWO["n"], TWO["epochs"], TWO["eta"], TWO["eps"], 0.95, 0.5, theta, values,
                                 iterations=2)
    return reference_run(arm, TWO_SEEDS[arm], TWO["n"], TWO["epochs"], TWO["eta"], TWO["eps"], 4, theta,
                         iterations=2)


@pytest.mark.parametrize("engine", ["fused", "torch"])
@pytest.mark.parametrize("arm", ["cp_grpo", "independent", "grpo", "ppo"])
def test_two_iterations_from_random_logits_equal_stream_replay_with_pyspiel(arm, engine):
    history = two_iteration_reference(arm)
    theta0, values0 = random_start(1000 + TWO_SEEDS[arm])
    game = get_game("leduc")
    schedule = Schedule(iterations=2, decision_points=TWO["n"], epochs=TWO["epochs"],
                        epsilon=TWO["eps"], learning_rate=TWO["eta"], group_size=4, gae_lambda=0.95, value_rate=0.5)
    learners = Learners("leduc", [RunSpec(arm, TWO_SEEDS[arm])], schedule, logits=theta0.clone().unsqueeze(0),
                        values=torch.tensor(values0).unsqueeze(0) if arm == "ppo" else None, engine=engine)
    assert learners.engine == engine
    for t, want in enumerate(history):
        learners.step()
        assert learners.ledger.row(0) == want["ledger"], t
        assert torch.allclose(learners.logits[0], want["logits"], atol=1e-12, rtol=0), t
        if arm == "ppo":
            assert np.allclose(learners.values[0].numpy(), want["values"], atol=1e-12, rtol=0), t
        else:
            assert torch.equal(learners.values[0], torch.zeros(len(game.infostates), dtype=torch.float64))
    assert np.allclose(learners.average_tables()[0], history[-1]["average"], atol=1e-12, rtol=0)
    # the replay is not trivial: both iterations moved the logits, and the average is reach-weighted
    moved = [(history[0]["logits"] - theta0).abs().max(), (history[1]["logits"] - history[0]["logits"]).abs().max()]
    assert min(moved) > 0.1, moved
    legal = game.infostates.legal
    pi = [torch.softmax(torch.where(torch.as_tensor(legal), x, torch.tensor(-torch.inf)), dim=1).numpy()
          for x in (theta0, history[0]["logits"])]
    assert np.abs(history[-1]["average"] - (pi[0] + pi[1]) / 2).max() > 1e-5     # not the plain mean
    assert history[-1]["ledger"]["clipped_terms"] > 0 or arm != "cp_grpo"
    if arm == "ppo":
        assert np.abs(history[-1]["values"] - values0).max() > 0.1


def test_cp_grpo_replay_exercises_clipping():
    """At eta = 4 the second epoch has clip-selected terms, so the replay above covers the clipped branch."""
    learners = Learners("leduc", [RunSpec("cp_grpo", 13)],
                        Schedule(iterations=1, decision_points=8, epochs=2, epsilon=0.2, learning_rate=4.0))
    learners.step()
    assert learners.ledger.row(0)["clipped_terms"] > 0


# ----- 5. determinism across batch composition ---------------------------------------------------------
OTHERS = [RunSpec("independent", 17), RunSpec("grpo", 13), RunSpec("ppo", 23), RunSpec("uniform", 13),
          RunSpec("ppo", 29), RunSpec("cp_grpo", 31), RunSpec("grpo", 37)]   # same-kind runs share code paths


@pytest.mark.parametrize("run", [RunSpec("cp_grpo", 13), RunSpec("independent", 17), RunSpec("grpo", 13),
                                 RunSpec("ppo", 23)])
def test_run_is_bitwise_independent_of_its_batch(run):
    sched = Schedule(iterations=5, decision_points=16, epochs=2, learning_rate=1.0)
    alone = Learners("leduc", [run], sched)
    batch_runs = [r for r in OTHERS if r != run]
    batch_runs.insert(2, run)
    batch = Learners("leduc", batch_runs, sched)
    for _ in range(5):
        alone.step()
        batch.step()
    row = batch_runs.index(run)
    assert torch.equal(alone.logits[0], batch.logits[row])
    assert torch.equal(alone.values[0], batch.values[row])
    assert np.array_equal(alone.average_tables()[0], batch.average_tables()[row])
    assert alone.ledger.row(0) == batch.ledger.row(row)
    assert alone.logits[0].abs().max() > 0


# ----- 6. matched budgets ------------------------------------------------------------------------------
def _max_decisions_per_hand(game_name: str) -> int:
    _, terminals = uniform_decisions(game_name)
    return max(d for d, _ in terminals)


def _max_legal(game_name: str) -> int:
    decisions, _ = uniform_decisions(game_name)
    g = pyspiel.load_game(OS_NAME[game_name])
    best = 0
    for *_, hist in decisions:
        s = g.new_initial_state()
        for a in hist:
            s.apply_action(a)
        best = max(best, len(s.legal_actions()))
    return best


BUDGET_ARMS = ["cp_grpo", "independent", "grpo", "ppo", "uniform"]


def _budget_batch(budget, iterations):
    g = 4
    sched = Schedule(iterations=iterations, decision_points=16, epochs=2, learning_rate=1.0, group_size=g,
                     budget=budget)
    learners = Learners("leduc", [RunSpec(a, 13) for a in BUDGET_ARMS], sched)
    return learners, g


def test_budget_is_matched_in_physical_calls():
    budget = 150
    learners, g = _budget_batch(budget, 40)
    group_calls = {"cp_grpo": _max_legal("leduc"), "independent": _max_legal("leduc"), "uniform": _max_legal("leduc"),
                   "grpo": g, "ppo": 1}                          # ppo: one call per hand
    assert group_calls["cp_grpo"] == 3 and _max_decisions_per_hand("leduc") == 8
    while bool(learners.active().any()) and learners.iteration < 40:
        before = learners.ledger.counts["physical_calls"].clone()
        was_active = learners.active().clone()
        learners.step()
        spent = learners.ledger.counts["physical_calls"] - before
        assert torch.all(spent[~was_active] == 0)                 # inactive runs spend nothing
    for r, arm in enumerate(BUDGET_ARMS):
        row = learners.ledger.row(r)
        assert budget - group_calls[arm] < row["physical_calls"] <= budget, (arm, row)
        assert row["illegal"] == 0
        if arm == "ppo":               # a hand has one to eight decisions, each a transition
            assert row["physical_calls"] <= row["transitions"] <= 8 * row["physical_calls"]
    assert torch.equal(learners.logits[BUDGET_ARMS.index("uniform")], torch.zeros_like(learners.logits[0]))


def test_budget_stops_runs_whose_budget_admits_no_group():
    """A run whose remaining budget admits no further group stops taking part (and stops adding to its average)."""
    cap = 5
    learners, _ = _budget_batch(1, cap)
    while bool(learners.active().any()) and learners.iteration < cap:
        learners.step()
    for r, arm in enumerate(BUDGET_ARMS):
        one_hand = arm == "ppo"                 # a budget of 1 admits exactly one hand, and no group of branches
        assert learners.ledger.row(r)["physical_calls"] == (1 if one_hand else 0)
        assert learners.ledger.row(r)["groups"] == (1 if one_hand else 0)
    idle = {arm: learners.ledger.row(r)["iterations"] for r, arm in enumerate(BUDGET_ARMS)
            if learners.ledger.row(r)["iterations"] > 1}
    assert not idle, f"runs kept taking part with no group within their budget (iterations): {idle}"
    assert not bool(learners.active().any())


def test_budget_runs_stop_before_the_iteration_cap():
    """Budget 100 is spent within ~8 iterations of 16 groups; no run may idle on to the cap of 30."""
    budget, cap = 100, 30
    learners, _ = _budget_batch(budget, cap)
    while bool(learners.active().any()) and learners.iteration < cap:
        learners.step()
    assert not bool(learners.active().any())
    late = {arm: learners.ledger.row(r) for r, arm in enumerate(BUDGET_ARMS)
            if learners.ledger.row(r)["iterations"] >= cap}
    assert not late, f"runs still taking part after their budget stopped admitting groups: {late}"


# ----- 7. the average policy ---------------------------------------------------------------------------
@pytest.mark.parametrize("game_name", ["kuhn", "leduc"])
def test_average_policy_is_own_reach_weighted_mean_of_played_policies(game_name):
    game = get_game(game_name)
    runs = [RunSpec("cp_grpo", 13), RunSpec("ppo", 17), RunSpec("grpo", 23)]
    learners = Learners(game_name, runs, Schedule(iterations=4, decision_points=16, epochs=2, learning_rate=2.0))
    num = np.zeros(learners.logits.shape)
    den = np.zeros(learners.logits.shape[:2])
    for _ in range(4):
        tables = learners.last_tables()
        for r in range(len(runs)):
            reach = evaluate(game, table_to_policy(game, tables[r])).own_reach
            num[r] += reach[:, None] * tables[r]
            den[r] += reach
        learners.step()
    expected = num / den[:, :, None]
    assert np.all(den > 0)
    # the runs moved, so a plain (unweighted) mean or the last iterate would differ
    assert not np.allclose(learners.last_tables(), expected, atol=1e-6)
    assert np.allclose(learners.average_tables(), expected, atol=1e-12, rtol=0)


# ----- 8. the visitation law -----------------------------------------------------------------------------
def test_decision_law_matches_enumerated_kuhn_histories_under_random_policies():
    game = get_game("kuhn")
    rs = np.random.default_rng(5)
    tables = []
    for _ in range(2):
        t = rs.uniform(0.05, 1.0, size=(len(game.infostates), game.num_actions)) * game.infostates.legal
        tables.append(t / t.sum(axis=1, keepdims=True))
    tables = np.array(tables)
    law = visitation.decision_law(game, tables)
    for r in range(2):
        lookup = {s: tables[r, i] for i, s in enumerate(game.infostates.strings)}
        decisions, terminals = enumerate_decisions("kuhn", lambda info, legal, lookup=lookup: list(lookup[info]))
        want = np.zeros((len(game.infostates), game.num_cards))
        for info, _, _, opp, reach, _ in decisions:
            want[game.infostates.id_of[info], opp] += reach
        expected_decisions = sum(d * p for d, p in terminals)
        assert abs(sum(reach for *_, reach, _ in decisions) - expected_decisions) < 1e-12
        assert law.expected_decisions[r] == pytest.approx(expected_decisions, abs=1e-12)
        assert np.allclose(law.weights[r], want, atol=1e-14, rtol=0)


def test_decision_law_leduc_uniform_expected_decisions():
    game = get_game("leduc")
    law = visitation.decision_law(game, (game.infostates.legal / game.infostates.legal.sum(1, keepdims=True))[None])
    _, terminals = uniform_decisions("leduc")
    expected = sum(d * p for d, p in terminals)
    assert law.expected_decisions[0] == pytest.approx(expected, abs=1e-12)
    assert sum(p for _, p in terminals) == pytest.approx(1.0, abs=1e-12)


# ----- 9. uniform arm's exploitability --------------------------------------------------------------------
@pytest.mark.parametrize("game_name,value", [("leduc", 2.373611), ("kuhn", 0.458333)])
def test_uniform_arm_average_policy_exploitability(game_name, value):
    from open_spiel.python.algorithms import exploitability as os_exploitability

    game = get_game(game_name)
    learners = Learners(game_name, [RunSpec("uniform", 13)], Schedule(iterations=2, decision_points=8, epochs=2))
    learners.step()
    learners.step()
    avg = learners.average_tables()[0]
    tabular = to_openspiel(game, table_to_policy(game, avg))
    got = os_exploitability.exploitability(pyspiel.load_game(OS_NAME[game_name]), tabular)
    assert abs(got - value) < 1e-6


def test_exact_sqrt_is_the_correctly_rounded_root_on_every_cpu():
    # Python's math.sqrt is the IEEE square root; torch's CPU sqrt misses sqrt(2) by one unit on some AVX-512 CPUs
    import math

    from oscc_core.learning.tabular import exact_sqrt

    values = torch.tensor([2.0, 3.0, 0.75, 1e-300, 12345.678, 0.0, 5.0 / 3.0], dtype=torch.float64)
    assert [float(x).hex() for x in exact_sqrt(values)] == [math.sqrt(float(v)).hex() for v in values]


# ----- 8. the budget check: a group that lands exactly on the budget is taken --------------------------------
@pytest.mark.parametrize("engine", ["torch", "fused"])
@pytest.mark.parametrize("groups", [1, 37])
def test_grpo_spends_a_budget_that_is_a_multiple_of_its_group_to_the_last_call(engine, groups):
    """G = 4 sampled actions per group, one physical call each: a budget of 4k calls admits exactly k groups."""
    g = 4
    sched = Schedule(iterations=50, decision_points=16, epochs=1, learning_rate=1.0, group_size=g,
                     budget=g * groups)
    learners = Learners("leduc", [RunSpec("grpo", 13), RunSpec("grpo", 17)], sched, engine=engine)
    assert learners.engine == engine
    while bool(learners.active().any()) and learners.iteration < 50:
        learners.step()
    for r in range(2):
        row = learners.ledger.row(r)
        assert row["physical_calls"] == g * groups, row
        assert row["groups"] == groups
    assert not bool(learners.active().any())


# ----- 9. the step-size rule ---------------------------------------------------------------------------------
def tabled_training(monkeypatch, scores: dict) -> None:
    """Replace training and evaluation by a table: scores[eta][arm] is the exploitability each run of that arm
    ends with at that step size (chips)."""
    from types import SimpleNamespace

    from oscc_core.learning import runs

    def train(game, specs, schedule, device, **_):
        return SimpleNamespace(runs=specs, average=np.array([scores[schedule.learning_rate][s.arm] for s in specs]))

    monkeypatch.setattr(runs, "train", train)
    monkeypatch.setattr(runs, "exploitabilities", lambda game, tables: np.asarray(tables, dtype=float))


def flat(values: dict) -> dict:
    return {eta: dict.fromkeys(("cp_grpo", "independent", "grpo", "ppo"), v) for eta, v in values.items()}


def test_the_step_size_is_the_grid_value_with_the_lowest_mean_exploitability(monkeypatch):
    from oscc_core.learning.runs import choose_step_size

    tabled_training(monkeypatch, flat({2.0: 1.9, 4.0: 1.2, 8.0: 1.5, 64.0: 2.4}))
    choice = choose_step_size("leduc", [2.0, 4.0, 8.0, 64.0], [1001], Schedule(), "cpu")
    assert choice["best"] == 4.0 and choice["eta"] == 4.0 and not choice["given"]   # not the worst (64), not 0


def test_the_step_size_ties_go_to_the_smaller_eta_and_a_given_eta_overrides(monkeypatch):
    from oscc_core.learning.runs import choose_step_size

    tabled_training(monkeypatch, flat({2.0: 1.5, 4.0: 1.2, 8.0: 1.2}))
    assert choose_step_size("leduc", [8.0, 4.0, 2.0], [1001], Schedule(), "cpu")["eta"] == 4.0
    given = choose_step_size("leduc", [8.0, 4.0, 2.0], [1001], Schedule(), "cpu", given=16.0)
    assert given["eta"] == 16.0 and given["best"] == 4.0 and given["given"]


@given(st.lists(st.tuples(st.floats(min_value=0.0, max_value=5.0), st.floats(min_value=0.0, max_value=5.0)),
                min_size=1, max_size=6, unique_by=lambda x: x[0]).filter(lambda g: all(e > 0 for e, _ in g)))
def test_the_chosen_step_size_minimises_the_mean_over_the_learned_arms(grid):
    from oscc_core.learning import runs

    rng_ = np.random.default_rng(len(grid))
    scores = {eta: {arm: base + 0.1 * rng_.random() for arm in runs.LEARNED_ARMS} for eta, base in grid}
    means = {eta: np.mean(list(by_arm.values())) for eta, by_arm in scores.items()}
    want = min(means, key=lambda eta: (means[eta], eta))
    with pytest.MonkeyPatch.context() as mp:
        tabled_training(mp, scores)
        got = runs.choose_step_size("leduc", [eta for eta, _ in grid], [1001, 1002], Schedule(), "cpu")
    assert got["eta"] == want and got["best"] == want


# ----- 10. the converging learner's options: decision law and proximal pull ----------------------------------
def _random_tables(game, count, seed):
    rs = np.random.default_rng(seed)
    t = rs.uniform(0.05, 1.0, size=(count, len(game.infostates), game.num_actions)) * game.infostates.legal
    return t / t.sum(axis=2, keepdims=True)


def test_counterfactual_law_weights_are_chance_times_the_opponents_reach_enumerated_with_pyspiel():
    game = get_game("kuhn")
    tables = _random_tables(game, 2, 7)
    law = visitation.decision_law(game, tables, "counterfactual")
    for r in range(2):
        lookup = {s: tables[r, i] for i, s in enumerate(game.infostates.strings)}
        own: dict = {}
        decisions, _ = enumerate_decisions("kuhn", lambda info, legal, lookup=lookup: list(lookup[info]), own)
        want = np.zeros((len(game.infostates), game.num_cards))
        for info, _, _, opp, reach, _ in decisions:          # reach = chance x own x opponent: divide own out
            want[game.infostates.id_of[info], opp] += reach / own[info]
        assert np.allclose(law.weights[r], want, atol=1e-14, rtol=0)
        assert np.allclose(law.per_state[r], want.sum(axis=1), atol=1e-14, rtol=0)


def test_the_hidden_cards_posterior_is_the_same_under_every_law():
    game = get_game("leduc")
    tables = _random_tables(game, 1, 3)
    post = {}
    for name in ("on_policy", "counterfactual", "uniform"):
        w = visitation.decision_law(game, tables, name).weights[0]
        post[name] = w / np.where(w.sum(axis=1, keepdims=True) > 0, w.sum(axis=1, keepdims=True), 1.0)
    assert np.allclose(post["on_policy"], post["counterfactual"], atol=1e-12)
    assert np.array_equal(post["counterfactual"], post["uniform"])
    assert np.array_equal(visitation.decision_law(game, tables, "uniform").per_state,
                          np.ones((1, len(game.infostates))))


def test_a_misnamed_law_or_a_negative_pull_is_one_sentence():
    with pytest.raises(ValueError, match="decision_law must be one of on_policy, counterfactual, uniform"):
        Schedule(decision_law="on-policy")
    with pytest.raises(ValueError, match="proximal_alpha must be a finite number >= 0"):
        Schedule(proximal_alpha=-1.0)
    with pytest.raises(ValueError, match="proximal_kappa must be at most 1"):
        Schedule(proximal_kappa=2.0)


def test_the_pull_is_the_closed_form_on_drawn_states_and_leaves_the_others_bit_for_bit():
    from oscc_core.learning import proximal

    logits = torch.tensor([[[0.0, 1.0, -2.0], [3.0, 0.5, -0.0]]], dtype=torch.float64)
    magnet = torch.tensor([[[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]], dtype=torch.float64)
    counts = torch.tensor([[2.0, 0.0]], dtype=torch.float64)
    before = logits.clone()
    proximal.pull(logits, magnet, counts, alpha=0.5, eta=4.0, n=8)
    c = 0.5 * 4.0 * 2.0 / 8                                  # alpha * eta * k / N = 0.5
    assert torch.equal(logits[0, 0], (before[0, 0] + c * magnet[0, 0]) / (1 + c))
    assert torch.equal(torch.signbit(logits[0, 1]), torch.signbit(before[0, 1])) and torch.equal(logits[0, 1],
                                                                                                  before[0, 1])
    proximal.move_magnet(magnet, logits, 0.25)
    assert torch.allclose(magnet[0, 1], 0.25 * logits[0, 1], atol=0, rtol=0)


def test_without_a_pull_the_converging_options_off_are_the_literal_learner_bit_for_bit():
    sched = Schedule(iterations=4, decision_points=12, epochs=2, learning_rate=4.0)
    off = Schedule(iterations=4, decision_points=12, epochs=2, learning_rate=4.0, decision_law="on_policy",
                   proximal_alpha=0.0, proximal_kappa=0.0)
    a, b = (Learners("leduc", [RunSpec("cp_grpo", 3)], s) for s in (sched, off))
    for _ in range(4):
        a.step()
        b.step()
    assert torch.equal(a.logits, b.logits) and torch.equal(b.magnet, torch.zeros_like(b.magnet))


@pytest.mark.parametrize("engine", ["torch", "fused"])
def test_a_snapshot_restored_and_stepped_again_continues_as_if_never_taken(engine):
    sched = Schedule(iterations=10, decision_points=12, epochs=2, learning_rate=4.0, decision_law="counterfactual",
                     proximal_alpha=1.0, proximal_kappa=0.1)
    runs = [RunSpec("cp_grpo", 3), RunSpec("ppo", 4)]
    a, b = (Learners("leduc", runs, sched, engine=engine) for _ in range(2))
    for t in range(5):
        a.step()
        b.step()
        if t == 2:
            snap = b.snapshot()
            b.step()
            b.step()
            b.restore(snap)
    for name in ("logits", "values", "magnet", "spent"):
        assert torch.equal(getattr(a, name), getattr(b, name)), name
    assert np.array_equal(a.cumulative, b.cumulative) and a.ledger.row(0) == b.ledger.row(0)


def test_coverage_counts_the_states_whose_logits_never_moved():
    learners = Learners("leduc", [RunSpec("cp_grpo", 3), RunSpec("uniform", 3)],
                        Schedule(iterations=2, decision_points=8, epochs=1, learning_rate=2.0))
    assert np.array_equal(learners.coverage(), [1.0, 1.0])
    learners.step()
    moved = (learners.logits[0] != 0).any(dim=-1).sum().item()
    assert 0 < moved <= 8 and learners.coverage()[0] == pytest.approx(1 - moved / 936)
    assert learners.coverage()[1] == 1.0                     # the uniform arm never updates
