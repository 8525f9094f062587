"""Exact evaluation, best response, NashConv and exploitability for Kuhn and Leduc.

Every function takes a policy in the book's dict format (information-state
string -> probabilities over action ids, see `oscc_core.policy`), validates it
with `policy_table`, and works on the sequence-form layout of
`oscc_core.sequence_form` (tensorised passes, no recursion over histories).
Values are in chips, from the named player's point of view.

Definitions (as in OpenSpiel):
  - counterfactual value of (I, a) for I's owner i:
        sum over histories h in I of chance(h) * pi_{-i}(h) * E[u_i | h, a];
  - best-response value of player i: max over i's policies of E[u_i] with the
    opponent fixed, found by maximising counterfactual values at i's
    information states from the deepest to the shallowest;
  - NashConv = sum_i (best-response value_i - value_i); exploitability is
    NashConv / 2 (two players).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .games import Game, get_game
from .policy import policy_table, table_to_policy
from .reductions import sum_last_axis
from .sequence_form import SequenceForm, sequence_form

NUM_PLAYERS = 2


@dataclass(frozen=True)
class Evaluation:
    """Exact quantities of one policy profile.

    `values[i]`: player i's expected utility (chips).  Per information state I
    (game.infostates order), for I's owner: `own_reach[I]` (product of the
    owner's action probabilities on the way to I), `opponent_chance_reach[I]`
    (sum over h in I of chance(h) times the opponent's reach of h),
    `action_values[I, a]` (counterfactual value of a at I, chips; 0 for
    illegal a) and `state_values[I]` (policy-weighted sum of action_values).
    """

    values: np.ndarray
    own_reach: np.ndarray
    opponent_chance_reach: np.ndarray
    action_values: np.ndarray
    state_values: np.ndarray


@dataclass(frozen=True)
class BestResponse:
    """A best response of `player` to a fixed opponent.

    `value`: the best responder's expected utility (chips).  `policy`: a full
    policy dict in which `player`'s information states play the best
    response (deterministic) and the opponent's states keep the given policy.
    """

    player: int
    value: float
    policy: dict


def evaluate(game: "str | Game", policy: dict) -> Evaluation:
    """Expected utilities, reaches and counterfactual values of a policy profile."""
    game = get_game(game)
    return evaluate_table(sequence_form(game), policy_table(game, policy))


def expected_utilities(game: "str | Game", policy: dict) -> np.ndarray:
    """[2] each player's expected utility in chips when both follow `policy`."""
    return evaluate(game, policy).values


def evaluate_table(sf: SequenceForm, table: np.ndarray) -> Evaluation:
    """`evaluate` for a validated policy table [n_info, A] (both players' passes)."""
    x = sf.realisation_plan(table)
    action_values = np.zeros_like(table)
    values = np.zeros(NUM_PLAYERS)
    for ps in sf.players:
        g = sf.sweep_expected(ps, sf.direct_payoffs(ps, x), table[ps.infosets])
        action_values[ps.infosets] = np.where(ps.legal, g[ps.seq_of], 0.0)
        values[ps.player] = g[ps.empty_sequence]
    return Evaluation(values=values,
                      own_reach=x[sf.parent_seq],
                      opponent_chance_reach=sf.opponent_chance_reach(x),
                      action_values=action_values,
                      state_values=sum_last_axis(table * action_values))


def best_response_value_table(sf: SequenceForm, table: np.ndarray, player: int,
                              x: "np.ndarray | None" = None) -> tuple[float, np.ndarray]:
    """Best-response value (chips) of `player` against `table`, and its local action choices."""
    x = sf.realisation_plan(table) if x is None else x
    ps = sf.players[player]
    g, choice = sf.sweep_best(ps, sf.direct_payoffs(ps, x))
    return float(g[ps.empty_sequence]), choice


def nash_conv_table(sf: SequenceForm, table: np.ndarray) -> float:
    """NashConv (chips) of a validated policy table [n_info, A]."""
    x = sf.realisation_plan(table)
    # The on-policy values sum to zero (zero-sum), so NashConv is the sum of best-response values.
    return sum(best_response_value_table(sf, table, p, x)[0] for p in range(NUM_PLAYERS))


def best_response(game: "str | Game", policy: dict, player: int) -> BestResponse:
    """Best response of `player` (0 or 1) to the opponent's part of `policy`."""
    game = get_game(game)
    if isinstance(player, bool) or not isinstance(player, (int, np.integer)) or player not in range(NUM_PLAYERS):
        raise ValueError(f"player must be the integer 0 or 1, got {player!r}.")
    player = int(player)
    sf = sequence_form(game)
    table = policy_table(game, policy)
    value, choice = best_response_value_table(sf, table, player)
    ps = sf.players[player]
    response = table.copy()
    response[ps.infosets] = 0.0
    response[ps.infosets, choice] = 1.0
    return BestResponse(player=player, value=value, policy=table_to_policy(game, response))


def nash_conv(game: "str | Game", policy: dict) -> float:
    """Sum over players of (best-response value - on-policy value), in chips."""
    game = get_game(game)
    return nash_conv_table(sequence_form(game), policy_table(game, policy))


def exploitability(game: "str | Game", policy: dict) -> float:
    """NashConv / 2 (two players), in chips."""
    return nash_conv(game, policy) / NUM_PLAYERS
