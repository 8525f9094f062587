"""Checks that kill the mutants that survived the engine tests (streams, collector, exact moments, CFR+).

Each test compares the library against a value worked out here: a hash
written from its documented construction, a closed form, or a tree
enumeration done with pyspiel.  See the mutation-testing note in issue 9.
"""
import hashlib
import itertools
from functools import lru_cache

import numpy as np
import pytest
import torch

pyspiel = pytest.importorskip("pyspiel")

from oscc_core import collect  # noqa: E402
from oscc_core.engine import rng
from oscc_core.engine.collector import contrast_moments  # noqa: E402
from oscc_core.exact.arm_moments import arm_moments, infostate_moments  # noqa: E402
from oscc_core.exact.cfr import CFRPlus, cfr_plus, regret_matching  # noqa: E402
from oscc_core.policy import uniform_policy  # noqa: E402

M64 = (1 << 64) - 1


# ----- the stream hash, written from its description (murmur3 fmix64, SplitMix64 gamma, SHA-256 tags)
def _fmix64(x):
    x &= M64
    x ^= x >> 33
    x = (x * 0xFF51AFD7ED558CCD) & M64
    x ^= x >> 33
    x = (x * 0xC4CEB9FE1A85EC53) & M64
    return x ^ (x >> 33)


def _sha_tag(text):
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


def _as_int64(x):
    x &= M64
    return x - (1 << 64) if x >= 1 << 63 else x


def _key(namespace, fields):
    """fmix64 of the namespace tag, then per field mix64(mix64(h ^ field tag) + value)."""
    h = _fmix64(_sha_tag(f"oscc/namespace/{namespace}"))
    for name, value in fields:
        h = _fmix64(_fmix64(h ^ _sha_tag(f"oscc/field/{name}")) + value)
    return _as_int64(h)


def _uniform(key, counter):
    return (_fmix64(key + 0x9E3779B97F4A7C15 * (counter + 1)) >> 11) / 2.0 ** 53


def test_stream_keys_are_sha256_tagged_fmix64_hashes_of_the_fields_in_order():
    cases = [
        ("root", [("run", 7), ("split", 1), ("group", 12345)]),
        ("hidden", [("run", 7), ("split", 0), ("group", 3)]),
        ("hidden", [("run", 7), ("split", 0), ("group", 3), ("branch", 2)]),
        ("chance", [("run", 1), ("split", 2), ("group", 9), ("event", 5), ("rollout", 1)]),
        ("chance", [("run", 1), ("split", 2), ("group", 9), ("event", 5), ("rollout", 1), ("branch", 0)]),
        ("policy", [("run", 2), ("split", 3), ("group", 4), ("branch", 1), ("rollout", 0)]),
        ("policy", [("run", 2), ("split", 3), ("group", 4), ("branch", 1), ("rollout", 0), ("stream", 1)]),
        ("bootstrap", [("run", 11), ("purpose", 2), ("replicate", 40)]),
    ]
    for namespace, fields in cases:
        assert int(rng.derive_key(namespace, **dict(fields))) == _key(namespace, fields), (namespace, fields)


def test_policy_key_addresses_the_policy_namespace_with_its_fields_in_order():
    got = rng.policy_key(3, 1, torch.tensor([0, 8]), 2, rollout=1, stream=1)
    assert got.tolist() == [_key("policy", [("run", 3), ("split", 1), ("group", g), ("branch", 2), ("rollout", 1),
                                            ("stream", 1)]) for g in (0, 8)]


def test_uniform_draws_are_fmix64_of_key_plus_gamma_times_counter_plus_one():
    keys = [0, 1, 12345, -1, -(1 << 63), (1 << 63) - 1]
    counters = [0, 1, 2, 1000, 1 << 40, 7]
    got = rng.uniform(torch.tensor(keys), torch.tensor(counters)).tolist()
    assert got == [_uniform(k & M64, c) for k, c in zip(keys, counters)]


def test_semantic_event_id_is_the_sha256_tag_of_game_type_round_and_occurrence():
    assert rng.semantic_event_id("leduc", "public_card", 2, 0) == _as_int64(
        _sha_tag("oscc/event/leduc/public_card/round2/occurrence0"))


def test_the_five_splits_address_five_distinct_streams():
    keys = {name: int(rng.derive_key("root", run=1, split=rng.SPLITS[name], group=0))
            for name in ("audit", "train", "validation", "test", "calibration")}
    assert len(set(keys.values())) == 5


def test_a_missing_stream_field_is_one_sentence_naming_namespace_and_field():
    with pytest.raises(ValueError) as err:
        rng.derive_key("hidden", run=1, split=0)
    assert str(err.value) == "namespace 'hidden' needs fields ['group']."


def test_root_cards_are_the_documented_draws_of_the_root_stream():
    """Leduc root '': own card floor(6 U) with U the root stream's draw at counter 0 (six equally likely cards)."""
    col = collect("leduc", "", "full", 64, seed=9, device="cpu", engine="torch")
    expected = [int(6 * _uniform(_key("root", [("run", 9), ("split", 0), ("group", g)]) & M64, 0))
                for g in range(64)]
    assert col.own_card.tolist() == expected


# ----- collector ------------------------------------------------------------
def test_contrast_moments_give_the_sample_variance_and_its_closed_form_standard_error():
    d = np.array([3, -1, 0, 4, 4, -2, 7, 1, 0, -5, 2, 2, 9], dtype=np.int64)
    n = len(d)
    sums = [int((d ** p).sum()) for p in (1, 2, 3, 4)]
    got = contrast_moments(sums, n)
    mean, var = d.mean(), d.var(ddof=1)
    m4 = ((d - mean) ** 4).mean()                       # central fourth moment
    se = np.sqrt((m4 - var ** 2 * (n - 3) / (n - 1)) / n)  # SE of the sample variance
    assert got["contrast_mean"] == pytest.approx(mean, rel=1e-12)
    assert got["contrast_var"] == pytest.approx(var, rel=1e-12)
    assert got["contrast_var_se"] == pytest.approx(se, rel=1e-12)


@pytest.mark.parametrize("chunk_size", [0, -3])
def test_a_chunk_size_below_one_is_rejected_naming_chunk_size(chunk_size):
    with pytest.raises(ValueError) as err:
        collect("leduc", "", "full", 10, seed=1, device="cpu", chunk_size=chunk_size)
    assert str(err.value) == f"chunk_size must be None or an integer >= 1, got {chunk_size}."


def test_a_budget_below_one_is_rejected_naming_budget():
    with pytest.raises(ValueError) as err:
        collect("leduc", "", "full", 10, seed=1, device="cpu", budget=0)
    assert str(err.value) == "budget must be an integer >= 1, got 0."


def test_seeds_cover_zero_to_two_to_the_63_exclusive():
    for seed in (0, 2 ** 63 - 1):
        assert collect("kuhn", "", "full", 5, seed=seed, device="cpu").stats["groups"] == 5
    for seed in (-1, 2 ** 63):
        with pytest.raises(ValueError, match="seed must be an integer in"):
            collect("kuhn", "", "full", 5, seed=seed, device="cpu")


def test_the_parameters_record_every_argument_of_the_call():
    col = collect("leduc", "2", "root_only", 10, seed=4, device="cpu", budget=2, split="train")
    assert col.parameters == {"game": "leduc", "root": "2", "arm": "root_only", "n_groups": 10, "seed": 4,
                              "continuation": "uniform", "budget": 2, "split": "train"}


def test_a_bad_branch_order_message_gives_the_range_of_positions():
    with pytest.raises(ValueError) as err:
        collect("leduc", "2", "full", 10, seed=1, device="cpu", branch_order=[0, 0, 1])
    assert str(err.value) == "branch_order must be a permutation of 0..2, got [0, 0, 1]."


def test_forcing_the_fused_engine_names_every_blocker():
    with pytest.raises(ValueError) as err:
        collect("leduc", "", "full", 10, seed=1, device="cpu", engine="fused", trace=[],
                chance_map=lambda u, lanes: u)
    assert str(err.value) == "engine='fused' needs no trace and no custom chance map; use engine='torch' or 'auto'."


def _always_call():
    """Leduc continuation that always calls: every hand is call/raise, call, deal, call, call."""
    return {key: [0.0, 1.0, 0.0] for key in uniform_policy("leduc")}


@pytest.mark.parametrize("engine", ["torch", "fused"])
@pytest.mark.parametrize("arm", ["full", "independent"])
def test_draw_counts_of_an_always_call_continuation_are_the_enumerated_ones(engine, arm):
    """Root '' has two branches; after Call or Raise each rollout draws three policy actions
    (opponent calls, then call, call in round two) and deals one public card."""
    g, b, k = 50, 2, 3
    col = collect("leduc", "", arm, g, seed=3, continuation=_always_call(), device="cpu", budget=k,
                  keep_draws=True, engine=engine)
    hidden = 1 if arm == "full" else b
    chance = k if arm == "full" else b * k
    assert col.group_draws.tolist() == [1 + hidden + chance + 3 * b * k] * g
    assert col.physical_draws == {"root": g, "hidden": g * hidden, "chance": g * chance, "policy": g * 3 * b * k}
    assert col.logical_keys == {"root": g, "hidden": g * hidden, "chance": g * chance, "policy": g * b * k}


# ----- exact moments against a pyspiel enumeration ---------------------------
@lru_cache(maxsize=None)
def _leduc():
    return pyspiel.load_game("leduc_poker")


def _return_moments(state, public, player):
    """E[X], E[X^2] of `player`'s return from `state`: uniform actions, public card forced to `public`."""
    if state.is_terminal():
        x = state.returns()[player]
        return x, x * x
    if state.is_chance_node():
        return _return_moments(state.child(public), public, player)
    actions = state.legal_actions()
    firsts, seconds = zip(*(_return_moments(state.child(a), public, player) for a in actions))
    return sum(firsts) / len(actions), sum(seconds) / len(actions)


@lru_cache(maxsize=None)
def _enumeration(history):
    """Root law and per-situation, per-bin single-rollout moments from pyspiel.

    `history` is a root such as "2" or "121|2" ("|" marks the public card, dealt by chance).
    Returns actions, situations [(own, public or -1, opp)], weights, m[b, s, k], q[b, s, k]:
    bin k deals the k-th remaining card in id order (one bin when the public card is out)."""
    game = _leduc()
    first, _, second = history.partition("|")
    publics = [None] if "|" not in history else list(range(6))
    situations, weights, m, q = [], [], [], []
    for c0, c1 in itertools.permutations(range(6), 2):
        for pub in publics:
            if pub in (c0, c1):
                continue
            state, reach = game.new_initial_state(), 1.0
            for step in [("chance", c0), ("chance", c1)] + [("act", int(a)) for a in first] + \
                    ([("chance", pub)] if pub is not None else []) + [("act", int(a)) for a in second]:
                kind, a = step
                if kind == "chance":
                    reach *= dict(state.chance_outcomes())[a]
                else:
                    reach /= len(state.legal_actions())         # uniform behaviour policy
                state.apply_action(a)
            player, actions = state.current_player(), state.legal_actions()
            own, opp = (c0, c1) if player == 0 else (c1, c0)
            bins = [c for c in range(6) if c not in (c0, c1)] if pub is None else [pub]
            situations.append((own, -1 if pub is None else pub, opp))
            weights.append(reach)
            per = [[_return_moments(state.child(a), p, player) for p in bins] for a in actions]
            m.append([[x for x, _ in row] for row in per])
            q.append([[y for _, y in row] for row in per])
    w = np.array(weights) / sum(weights)
    return actions, situations, w, np.array(m).transpose(1, 0, 2), np.array(q).transpose(1, 0, 2)


def _expected_moments(history, arm, budget):
    """Mean and covariance of the K-rollout branch sums under the arm's sharing rules.

    Given the deal, rollouts and branches are independent except that branches share the
    opponent card (root_only, full) and the chance uniform, hence the bin, of rollouts with
    the same index (continuation_only, full).  An unshared opponent card is drawn per branch
    from its posterior given the acting player's information state (own and public card)."""
    actions, situations, w, m, q = _enumeration(history)
    K, B = budget, len(actions)
    share_hidden = arm in ("root_only", "full")
    share_chance = arm in ("continuation_only", "full")
    mbar = m.mean(2)                                          # [B, S]
    mean = K * mbar @ w
    second = np.zeros((B, B))
    infos = sorted({(own, pub) for own, pub, _ in situations})
    for i, j in itertools.product(range(B), range(B)):
        if i == j:
            second[i, i] = w @ (K * q[i].mean(1) + K * (K - 1) * mbar[i] ** 2)
        elif share_hidden:
            same_rollout = (m[i] * m[j]).mean(1) if share_chance else mbar[i] * mbar[j]
            second[i, j] = w @ (K * same_rollout + K * (K - 1) * mbar[i] * mbar[j])
        else:
            total = 0.0
            for info in infos:
                idx = [s for s, (own, pub, _) in enumerate(situations) if (own, pub) == info]
                p_info = w[idx].sum()
                post = w[idx] / p_info
                a_i, a_j = post @ m[i][idx], post @ m[j][idx]        # [bins]: opponent card averaged out
                same_rollout = (a_i * a_j).mean() if share_chance else a_i.mean() * a_j.mean()
                total += p_info * (K * same_rollout + K * (K - 1) * a_i.mean() * a_j.mean())
            second[i, j] = total
    return mean, second - np.outer(mean, mean)


@pytest.mark.parametrize("budget", [1, 3])
@pytest.mark.parametrize("root", ["", "1", "2", "11|", "121|2"])
def test_arm_moments_equal_a_pyspiel_enumeration_of_every_arm(root, budget):
    got = arm_moments("leduc", root, budget=budget)
    for arm in ("independent", "root_only", "continuation_only", "full"):
        mean, cov = _expected_moments(root, arm, budget)
        np.testing.assert_allclose(got[arm].mean, mean, rtol=0, atol=1e-9, err_msg=arm)
        np.testing.assert_allclose(got[arm].cov, cov, rtol=0, atol=1e-9, err_msg=arm)
    np.testing.assert_allclose(got["policy_namespace"].cov, _expected_moments(root, "independent", budget)[1],
                               rtol=0, atol=1e-9)


def test_infostate_weights_are_the_probabilities_of_the_own_card():
    weights = {(s.own_card, s.public_card): s.weight for s in infostate_moments("leduc", "2")}
    assert weights == pytest.approx({(c, -1): 1 / 6 for c in range(6)}, abs=1e-12)


def test_infostate_means_are_the_pyspiel_means_given_the_own_card():
    _, situations, w, m, _ = _enumeration("1")
    for s in infostate_moments("leduc", "1"):
        idx = [i for i, (own, _, _) in enumerate(situations) if own == s.own_card]
        expected = m.mean(2)[:, idx] @ (w[idx] / w[idx].sum())
        np.testing.assert_allclose(s.moments["full"].mean, expected, rtol=0, atol=1e-9)


def test_a_where_mask_of_the_wrong_length_is_one_sentence_giving_both_sizes():
    with pytest.raises(ValueError) as err:
        arm_moments("leduc", "", where=lambda s: np.ones(3, dtype=bool))
    assert str(err.value) == "where must return one boolean per root situation (30), got (3,)."


# ----- CFR+ -----------------------------------------------------------------
def test_regret_matching_is_proportional_to_positive_regrets_even_when_they_sum_below_one():
    regrets = np.array([[0.2, 0.0, -0.4], [0.1, 0.3, 0.0], [-1.0, 0.0, -2.0]])
    uniform = np.array([[1 / 3] * 3, [0.5, 0.5, 0.0], [0.5, 0.0, 0.5]])
    np.testing.assert_allclose(regret_matching(regrets, uniform),
                               [[1.0, 0.0, 0.0], [0.25, 0.75, 0.0], [0.5, 0.0, 0.5]], rtol=0, atol=1e-15)


def test_the_average_policy_after_one_iteration_is_uniform():
    """The first iteration plays the uniform policy, so the average of one iteration is uniform."""
    solver = CFRPlus("leduc")
    solver.iterate()
    legal = np.array([np.asarray(p) > 0 for p in uniform_policy("leduc").values()])
    got = np.array(list(solver.average_policy().values()))
    np.testing.assert_allclose(got, legal / legal.sum(1, keepdims=True), rtol=0, atol=1e-12)


def test_zero_iterations_of_cfr_plus_give_the_uniform_policy():
    policy = cfr_plus("kuhn", 0)
    assert sorted(policy) == sorted(uniform_policy("kuhn"))
    assert all(list(probs) == [0.5, 0.5] for probs in policy.values())


def test_the_paper_order_is_independent_root_only_continuation_only_full():
    from oscc_core.engine.arms import in_paper_order

    falling = {"independent": 4.0, "root_only": 3.0, "continuation_only": 2.0, "full": 1.0}
    assert in_paper_order(falling)
    assert not in_paper_order(falling, decreasing=False)
    assert in_paper_order({a: -v for a, v in falling.items()}, decreasing=False)
    assert not in_paper_order({**falling, "root_only": 1.5})      # continuation_only above root_only
    assert not in_paper_order({**falling, "full": 2.0})           # a tie is not an ordering
