"""OpenSpiel's sampled MCCFR beside the learners, on the same axis: sampled terminal histories, counted in every run.

Two anchors, both OpenSpiel's own Python solvers (`open_spiel.python.algorithms`), subclassed only to count what
they touch:

* **ES-MCCFR** (external sampling): one iteration is one traversal per player; the traverser takes every action,
  chance and the other player are sampled.  How many terminal histories an iteration reaches depends on the
  policies it samples from (about 13 in Leduc at the uniform start, 13.5 to 14.5 later), so it is counted, never
  converted at a fixed rate;
* **OS-MCCFR** (outcome sampling, exploration `OS_EXPLORATION`): one iteration is one episode per player, and an
  episode samples one path to one terminal history.

Every history a solver recurses into is counted by kind (terminal, decision, chance): *terminal histories* are
the axis the learners' physical calls share (one branch rollout reaches one terminal history), and *decision and
terminal histories* are the nodes touched that the learners' ledgers count too (`histories_touched`; chance
histories are left out of both, since the learners' ledgers do not count chance events).

A run is recorded after the first iteration at which its terminal histories reach each budget: the counts so
far and the exact exploitability (NashConv / 2, chips) of the solver's average policy, by the book's exact engine
(the engine the learners' records use; the largest budget's policy is rechecked by `pyspiel.exploitability`).

OpenSpiel's Python solvers draw from numpy's *global* generator, so a seed can only be given there:
`numpy_global_seed` seeds it for the run and puts the caller's state back afterwards, so nothing else in the
process sees the draws.  A run is a pure function of (solver, seed, budgets).
"""
from __future__ import annotations

from contextlib import contextmanager

import numpy as np

ES, OS = "es_mccfr", "os_mccfr"
#: The anchors, external sampling first.
SOLVERS = (ES, OS)
LABELS = {ES: "ES-MCCFR", OS: "OS-MCCFR"}
#: Outcome sampling's exploration (OpenSpiel's default).
OS_EXPLORATION = 0.6
#: The counts a record keeps (exact integers), besides its budget's exploitability.
COUNTS = ("terminal_histories", "decision_histories", "chance_histories", "iterations")


@contextmanager
def numpy_global_seed(seed: int):
    """numpy's global generator seeded with `seed` inside the block, the caller's state restored after it."""
    saved = np.random.get_state()
    np.random.seed(int(seed))
    try:
        yield
    finally:
        np.random.set_state(saved)


class _Counts:
    """Counts of the histories a solver recursed into, by kind."""

    def __init__(self):
        self.terminal = self.decision = self.chance = 0

    def add(self, state) -> None:
        if state.is_terminal():
            self.terminal += 1
        elif state.is_chance_node():
            self.chance += 1
        else:
            self.decision += 1


def counting_solver(kind: str, game):
    """OpenSpiel's Python ES- or OS-MCCFR solver for the pyspiel `game`, counting every history it recurses into
    (attribute `counts`: terminal, decision, chance)."""
    if kind == ES:
        from open_spiel.python.algorithms import external_sampling_mccfr as es

        class CountingES(es.ExternalSamplingSolver):
            def __init__(self, game):
                super().__init__(game, es.AverageType.SIMPLE)
                self.counts = _Counts()

            def _update_regrets(self, state, player):
                self.counts.add(state)
                return super()._update_regrets(state, player)

        return CountingES(game)
    if kind == OS:
        from open_spiel.python.algorithms import outcome_sampling_mccfr as osm

        class CountingOS(osm.OutcomeSamplingSolver):
            def __init__(self, game):
                super().__init__(game)
                self._expl = OS_EXPLORATION
                self.counts = _Counts()

            def _episode(self, state, update_player, my_reach, opp_reach, sample_reach):
                self.counts.add(state)
                return super()._episode(state, update_player, my_reach, opp_reach, sample_reach)

        return CountingOS(game)
    raise ValueError(f"solver must be one of {', '.join(SOLVERS)}, got {kind!r}.")


def average_table(game_name: str, solver, tabular) -> np.ndarray:
    """[n_info, A] the solver's average policy in the book's information-state order (`tabular`: an OpenSpiel
    `TabularPolicy` of the game, reused as the list of one state per information state)."""
    from oscc_core.interop.openspiel import from_openspiel
    from oscc_core.policy import policy_table

    average = solver.average_policy()
    for row, state in enumerate(tabular.states):
        probs = average.action_probabilities(state)
        tabular.action_probability_array[row] = 0.0
        for action, p in probs.items():
            tabular.action_probability_array[row, action] = p
    return policy_table(game_name, from_openspiel(game_name, tabular))


def run_anchor(kind: str, game_name: str, seed: int, budgets) -> dict:
    """{"records": {budget: record}, "table": the average policy at the largest budget}: one run of OpenSpiel's
    `kind` solver on `game_name` with numpy's global generator seeded `seed`, recorded after the first iteration at
    which its terminal histories reach each budget (ascending).  A record: the counts of `COUNTS` so far and
    "exploitability_average" (chips)."""
    from open_spiel.python.policy import TabularPolicy

    from oscc_core.interop.openspiel import load_openspiel_game
    from oscc_core.learning.study import exploitability

    budgets = sorted(int(b) for b in budgets)
    game = load_openspiel_game(game_name)
    tabular = TabularPolicy(game)
    records, iterations, table = {}, 0, None
    with numpy_global_seed(seed):
        solver = counting_solver(kind, game)
        for budget in budgets:
            while solver.counts.terminal < budget:
                solver.iteration()
                iterations += 1
            table = average_table(game_name, solver, tabular)
            c = solver.counts
            records[str(budget)] = {"terminal_histories": c.terminal, "decision_histories": c.decision,
                                    "chance_histories": c.chance, "iterations": iterations,
                                    "exploitability_average": exploitability(game_name, table)}
    return {"records": records, "table": table}


def histories_touched(record: dict, samples: str) -> int:
    """Decision and terminal histories a learner's run touched, from its ledger record: every decision point
    (`groups`), every decision its lanes drew after it and every terminal history (one per physical call).
    `samples` is the arm's kind (`learning.arms`): "enumerate" lanes draw only continuation decisions; "sample"
    lanes count their sampled root action among their decisions, at the decision point already counted; an
    "episode" (ppo) plays a whole hand, every decision of it counted, with no separate decision point."""
    from oscc_core.learning.arms import ENUMERATE, EPISODE, SAMPLE

    if samples == ENUMERATE:
        return record["groups"] + record["decisions"] + record["physical_calls"]
    if samples == SAMPLE:
        return record["groups"] + record["decisions"]
    if samples == EPISODE:
        return record["decisions"] + record["physical_calls"]
    raise ValueError(f"samples must be one of {ENUMERATE}, {SAMPLE}, {EPISODE}, got {samples!r}.")
