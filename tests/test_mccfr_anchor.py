"""OpenSpiel's sampled MCCFR beside the learners (`oscc_core.learning.mccfr_anchor`), against hand counts, exact
expectations computed here by our own recursion over pyspiel's game tree, and OpenSpiel's own solvers run here.

* `histories_touched`: a learner's decision and terminal histories from its ledger record, per arm kind;
* `numpy_global_seed`: the block draws from numpy's global generator seeded, the caller's state comes back;
* `counting_solver`: an OS-MCCFR iteration is one episode per player, each reaching exactly one terminal history;
  an ES-MCCFR iteration is one traversal per player (the traverser takes every legal action, chance and the other
  player are sampled), and a fresh solver's first iteration reaches, on average over seeds, the exact expected
  counts of those traversals.  In the first traversal (player 0's) every current policy is uniform (no regret
  yet); the second (player 1's) samples player 0 from the regrets the first traversal left, which the second does
  not change, so its exact expectation is computed from the solver's state after the iteration;
* `run_anchor`: a pure function of (kind, game, seed, budgets), recorded after the first iteration at which the
  terminal histories reach each budget, with the exploitability of OpenSpiel's average policy there.
"""
from __future__ import annotations

import math

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import exploitability as os_exploitability
from open_spiel.python.algorithms import external_sampling_mccfr as es
from open_spiel.python.algorithms import outcome_sampling_mccfr as osm

from oscc_core.digest import canonical_json
from oscc_core.learning import mccfr_anchor as m


# ----- histories a learner's run touched -----------------------------------------------------------------------
def test_an_enumerating_arms_histories_are_its_decision_points_continuation_decisions_and_terminals():
    # Kuhn, one CP-GRPO decision point at player 0's first decision, both actions enumerated: "pass" then player 1
    # passes (1 decision, 1 terminal), "bet" then player 1 calls (1 decision, 1 terminal): 1 + 2 + 2 = 5 histories.
    # Its ledger: 1 group, 2 decisions (continuation draws only), 2 physical calls.
    assert m.histories_touched({"groups": 1, "decisions": 2, "physical_calls": 2}, "enumerate") == 5


def test_a_sampling_arms_root_draws_are_at_the_decision_point_already_counted():
    # GRPO with G = 4 at that decision point: 4 sampled root actions, each followed by one player-1 decision and a
    # terminal: 1 decision point + 4 continuation decisions + 4 terminals = 9 histories.  Its ledger counts the 4
    # root draws among its decisions (8 = 4 + 4) and makes 4 physical calls.
    assert m.histories_touched({"groups": 1, "decisions": 8, "physical_calls": 4}, "sample") == 9


def test_an_episode_arms_histories_are_every_decision_of_its_hands_and_their_terminals():
    # PPO, two Kuhn hands: pass-bet-call (3 decisions) and bet-fold (2 decisions), 2 terminals: 7 histories.
    # Its ledger: 5 decisions, 2 physical calls (hands), 2 groups (a hand is its own group, not a history).
    assert m.histories_touched({"groups": 2, "decisions": 5, "physical_calls": 2}, "episode") == 7


def test_an_unknown_arm_kind_is_refused_naming_the_kinds():
    with pytest.raises(ValueError, match="samples must be one of enumerate, sample, episode, got 'tree'"):
        m.histories_touched({"groups": 1, "decisions": 1, "physical_calls": 1}, "tree")


# ----- numpy's global generator ------------------------------------------------------------------------------
def test_the_block_draws_from_the_global_generator_seeded_with_the_seed():
    with m.numpy_global_seed(7):
        inside = np.random.random(3)
    assert inside.tolist() == np.random.RandomState(7).random_sample(3).tolist()


def test_the_callers_global_state_comes_back_after_the_block():
    np.random.seed(2024)
    expected = np.random.RandomState(2024).random_sample(4)
    first = np.random.random()
    with m.numpy_global_seed(7):
        np.random.random(100)
    assert [first, *np.random.random(3)] == expected.tolist()


def test_the_callers_global_state_comes_back_when_the_block_raises():
    np.random.seed(5)
    expected = np.random.RandomState(5).random_sample(2)
    with pytest.raises(RuntimeError):
        with m.numpy_global_seed(7):
            np.random.random(10)
            raise RuntimeError("inside")
    assert np.random.random(2).tolist() == expected.tolist()


# ----- what the counting solvers count -----------------------------------------------------------------------
def leduc():
    return pyspiel.load_game("leduc_poker")


@pytest.mark.parametrize("game_name", ["kuhn_poker", "leduc_poker"])
@pytest.mark.parametrize("iterations", [1, 7, 40])
def test_every_outcome_sampling_episode_reaches_exactly_one_terminal_history_two_per_iteration(game_name, iterations):
    with m.numpy_global_seed(11):
        solver = m.counting_solver(m.OS, pyspiel.load_game(game_name))
        for _ in range(iterations):
            solver.iteration()
    assert solver.counts.terminal == 2 * iterations


def test_outcome_sampling_explores_at_openspiels_default_0_6():
    assert m.counting_solver(m.OS, leduc())._expl == 0.6 == m.OS_EXPLORATION


def test_an_unknown_solver_is_refused_naming_the_solvers():
    with pytest.raises(ValueError, match="solver must be one of es_mccfr, os_mccfr, got 'cfr'"):
        m.counting_solver("cfr", leduc())


def test_a_first_external_sampling_iteration_on_kuhn_reaches_4_or_5_terminal_histories_4_5_on_average():
    # player 0's traversal: pass (player 1 passes: 1 terminal, or bets: player 0's fold and call, 2) and bet
    # (player 1 sampled: 1), so 2 or 3, each with probability 1/2; player 1's: after player 0's pass, player 1's
    # pass (1) and bet (player 0 sampled: 1); after a bet, fold and call (2): always 2.
    counts = []
    for seed in range(400):
        with m.numpy_global_seed(seed):
            solver = m.counting_solver(m.ES, pyspiel.load_game("kuhn_poker"))
            solver.iteration()
        counts.append(solver.counts.terminal)
    assert set(counts) == {4, 5}
    assert np.mean(counts) == pytest.approx(4.5, abs=4 * 0.5 / math.sqrt(len(counts)))


class Node:
    """One history of the game tree: kind ("terminal", "chance", "decision"), the acting player, its information
    state string and its children (with chance probabilities)."""

    __slots__ = ("kind", "player", "key", "children")

    def __init__(self, state):
        if state.is_terminal():
            self.kind, self.player, self.key, self.children = "terminal", None, None, []
        elif state.is_chance_node():
            self.kind, self.player, self.key = "chance", None, None
            self.children = [(p, Node(state.child(a))) for a, p in state.chance_outcomes()]
        else:
            self.kind, self.player, self.key = "decision", state.current_player(), state.information_state_string()
            self.children = [(None, Node(state.child(a))) for a in state.legal_actions()]


def regret_matching(regrets) -> np.ndarray:
    positive = np.maximum(np.asarray(regrets, dtype=np.float64), 0.0)
    return positive / positive.sum() if positive.sum() > 0 else np.full(len(positive), 1.0 / len(positive))


def expected_traversal(node: Node, traverser: int, policy) -> tuple[float, float, float]:
    """Exact expected (terminal, decision, chance) histories that one external-sampling traversal for `traverser`
    recurses into below `node`: every child of the traverser's histories, chance and the other player sampled
    (`policy(key, actions)`: the other player's current policy there)."""
    if node.kind == "terminal":
        return 1.0, 0.0, 0.0
    if node.kind == "chance":
        weighted = [(p, expected_traversal(c, traverser, policy)) for p, c in node.children]
        own = (0.0, 0.0, 1.0)
    elif node.player == traverser:
        weighted = [(1.0, expected_traversal(c, traverser, policy)) for _, c in node.children]
        own = (0.0, 1.0, 0.0)
    else:
        probs = policy(node.key, len(node.children))
        weighted = [(p, expected_traversal(c, traverser, policy)) for p, (_, c) in zip(probs, node.children) if p > 0]
        own = (0.0, 1.0, 0.0)
    return tuple(o + sum(p * below[i] for p, below in weighted) for i, o in enumerate(own))


@pytest.fixture(scope="module")
def leduc_first_iterations():
    """Over 250 seeds, a fresh counting ES solver's first iteration on Leduc: (counted, exact expectation) of
    (terminal, decision, chance) histories each."""
    game = leduc()
    root = Node(game.new_initial_state())
    uniform = np.array(expected_traversal(root, 0, lambda key, n: [1.0 / n] * n))   # player 1: no regret yet
    counted, exact = [], []
    for seed in range(250):
        with m.numpy_global_seed(seed):
            solver = m.counting_solver(m.ES, game)
            solver.iteration()
        c = solver.counts
        counted.append((c.terminal, c.decision, c.chance))
        # player 0's regrets as the first traversal left them (the second traversal, player 1's, does not change them)

        def player0(key, n, regrets=solver._infostates):
            return regret_matching(regrets[key][0]).tolist() if key in regrets else [1.0 / n] * n

        exact.append(uniform + np.array(expected_traversal(root, 1, player0)))
    return np.array(counted, dtype=np.float64), np.array(exact)


@pytest.mark.parametrize("column, kind", [(0, "terminal"), (1, "decision"), (2, "chance")])
def test_a_first_external_sampling_iteration_counts_the_exact_expected_histories_of_its_two_traversals(
        leduc_first_iterations, column, kind):
    counted, exact = leduc_first_iterations
    gap = counted[:, column] - exact[:, column]
    se = gap.std(ddof=1) / math.sqrt(len(gap))
    assert abs(gap.mean()) < 4 * se, (kind, counted[:, column].mean(), exact[:, column].mean(), se)
    assert exact[:, column].mean() > 1.0                # a count of that kind, not a vanishing one


# ----- a run of an anchor ------------------------------------------------------------------------------------
def test_a_run_is_the_same_bytes_twice_and_leaves_the_callers_generator_alone():
    np.random.seed(99)
    expected_next = np.random.RandomState(99).random_sample()
    a = m.run_anchor(m.ES, "kuhn", 13, (20, 60))
    b = m.run_anchor(m.ES, "kuhn", 13, (60, 20))
    assert canonical_json(a["records"]) == canonical_json(b["records"])
    assert a["table"].tobytes() == b["table"].tobytes()
    assert np.random.random() == expected_next


def test_another_seed_is_another_run():
    a = m.run_anchor(m.ES, "kuhn", 13, (60,))["records"]
    b = m.run_anchor(m.ES, "kuhn", 14, (60,))["records"]
    assert canonical_json(a) != canonical_json(b)


def my_es_run(game, seed: int, iterations: int):
    """OpenSpiel's Python ES-MCCFR (simple averaging) with numpy's global generator seeded `seed`: after each
    iteration, the terminal histories so far (counted here) and the exploitability of its average policy."""
    class Counted(es.ExternalSamplingSolver):
        terminals = 0

        def _update_regrets(self, state, player):
            if state.is_terminal():
                self.terminals += 1
            return super()._update_regrets(state, player)

    saved = np.random.get_state()
    np.random.seed(seed)
    try:
        solver, out = Counted(game, es.AverageType.SIMPLE), []
        for _ in range(iterations):
            solver.iteration()
            out.append((solver.terminals, os_exploitability.exploitability(game, solver.average_policy())))
    finally:
        np.random.set_state(saved)
    return out


def test_external_sampling_is_recorded_after_the_first_iteration_reaching_each_budget():
    mine = my_es_run(pyspiel.load_game("kuhn_poker"), 13, 12)
    totals = [t for t, _ in mine]
    # a budget met exactly by iteration 1, one just past iteration 2's count, one just short of iteration 6's
    budgets = (totals[0], totals[1] + 1, totals[5] - 1)
    got = m.run_anchor(m.ES, "kuhn", 13, budgets)["records"]
    for budget in budgets:
        i = next(k for k, t in enumerate(totals) if t >= budget)         # the first iteration reaching it
        assert i == 0 or totals[i - 1] < budget
        rec = got[str(budget)]
        assert (rec["iterations"], rec["terminal_histories"]) == (i + 1, totals[i])
        assert rec["exploitability_average"] == pytest.approx(mine[i][1], abs=1e-9)


def test_outcome_sampling_reaches_a_budget_after_half_of_it_rounded_up_in_iterations():
    budgets = (1, 2, 7, 30)
    got = m.run_anchor(m.OS, "kuhn", 5, budgets)["records"]
    assert [(got[str(b)]["iterations"], got[str(b)]["terminal_histories"]) for b in budgets] == [
        (1, 2), (1, 2), (4, 8), (15, 30)]


def test_outcome_sampling_records_the_exploitability_of_openspiels_own_run():
    game = pyspiel.load_game("kuhn_poker")
    saved = np.random.get_state()
    np.random.seed(5)
    try:
        solver = osm.OutcomeSamplingSolver(game)
        for _ in range(4):
            solver.iteration()
        theirs = os_exploitability.exploitability(game, solver.average_policy())
    finally:
        np.random.set_state(saved)
    assert m.run_anchor(m.OS, "kuhn", 5, (7,))["records"]["7"]["exploitability_average"] == pytest.approx(
        theirs, abs=1e-9)


def test_a_record_holds_the_counts_so_far_and_the_exploitability():
    rec = m.run_anchor(m.OS, "kuhn", 5, (7,))["records"]["7"]
    assert set(rec) == {"terminal_histories", "decision_histories", "chance_histories", "iterations",
                        "exploitability_average"}
    # Kuhn's deal is two chance histories (one card to each player), and every episode passes through both
    assert rec["chance_histories"] == 2 * 2 * rec["iterations"]
    assert rec["decision_histories"] >= 2 * rec["terminal_histories"]        # an episode decides at least twice
