"""Exact evaluation of a checkpoint: values, best responses, NashConv, play against an opponent, feasibility.

Everything here is exact (no sampling) and in chips, the unit of the games'
utilities; probabilities and task success are unitless.  A *profile* is a
policy table [n_info, A] in which player 0's information states hold player
0's policy and player 1's states hold player 1's; a checkpoint of the
learners is one tabular policy used by both seats (self-play).

The one primitive is the **terminal-outcome distribution** of a profile: the
probability of every (deal, terminal public node), found by a forward pass
over the public tree vectorised over profiles, deals and the nodes of a depth
(`terminal_probabilities`).  Every reported quantity is an expectation under
such a distribution, so it splits exactly over the **ordered private-card rank
pairs** (P0 rank, P1 rank), ranks J=0, Q=1, K=2 (Leduc: rank = card // 2;
Kuhn: the card).  A per-pair number is the *conditional* expectation given
that the deal has that pair, so averaging the per-pair numbers with the deal
law (`RankPairs.probability`: Kuhn 1/6 per pair; Leduc 1/15 for equal ranks,
2/15 otherwise) gives back the whole-game number (to rounding).

Quantities of `evaluate_checkpoint` (`CheckpointEvaluation`):

- player-0 value v_0 = E[u_0] under self-play (chips); v_1 = -v_0.
- best-response value of player i: E[u_i] when i plays a best response
  (computed once for the whole game by `exact.exploitability`'s
  sequence-form sweep, deterministic, ties broken towards the first legal
  action) and the other player keeps the checkpoint.  **Per pair** it is that
  same whole-game best-response profile's expected u_i restricted to the
  deals of the pair; it is *not* a best response chosen per pair (a player
  cannot see the opponent's card).  Where the best response has ties
  (counterfactual values within 1e-12 chips) the whole-game value is unique
  but the split over pairs depends on the tie-break.
- NashConv = sum_i (BR_i - v_i) = BR_0 + BR_1 (zero-sum), exploitability =
  NashConv / 2; per pair the same formulas applied to the per-pair values.
  The whole-game numbers equal `exact.exploitability.nash_conv` to rounding.
  Exploitability is a property of the whole checkpoint: the per-pair
  numbers are only its decomposition over deals (they average back to it),
  they are dominated by the luck of the pair (near an equilibrium they are of
  order one chip, of both signs) and are not the exploitability of anything.
- against a declared evaluation opponent (default: the uniform policy), for
  each seat s the checkpoint plays seat s and the opponent the other seat:
  the checkpoint's expected utility (return, chips) and its task success
  P(u > 0) + P(u = 0) / 2, each averaged over the two seats.  Per seat, pairs
  are (P0 rank, P1 rank) of that game; the seat average is keyed by (the
  checkpoint's rank, the opponent's rank), which is (P0 rank, P1 rank) in
  seat 0 and (P1 rank, P0 rank) in seat 1.

Feasibility: for any profile, -BR_1 <= v* <= BR_0 (v* player 0's equilibrium
value), hence v_0 lies in [v* - NashConv, v* + NashConv]
(`feasibility_band`).  v* is -1/18 exactly in Kuhn; in Leduc
`equilibrium_value` brackets it by the certified interval [-BR_1, BR_0] of a
long CFR+ average policy, whose width is that policy's NashConv.

Intervals over seeds (mean +- t * sd / sqrt(n)) are applied by callers with
`oscc_core.method.stats.t_interval` (a higher layer than this one).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from oscc_core.exact.cfr import CFRPlus
from oscc_core.exact.exploitability import NUM_PLAYERS, best_response_value_table
from oscc_core.exact.sequence_form import sequence_form
from oscc_core.games import CHANCE, TERMINAL, Game, get_game
from oscc_core.games.deal_tables import acting_infostates, terminal_utilities
from oscc_core.policy import policy_table, resolve_policy

RANK_NAMES = ("J", "Q", "K")
CARDS_PER_RANK = {"kuhn": 1, "leduc": 2}
KUHN_EQUILIBRIUM_VALUE = -1.0 / 18.0          # player 0's game value in chips (Kuhn 1950)
LEDUC_EQUILIBRIUM_ITERATIONS = 2000            # CFR+ iterations behind Leduc's bracket of v*
FEASIBILITY_ROUNDING = 1e-9                    # chips: rounding slack of `FeasibilityBand.contains`


# ----- rank pairs ------------------------------------------------------------
@dataclass(frozen=True)
class RankPairs:
    """The ordered private-card rank pairs of a game and the deal law over them.

    `pairs[k]` = (P0 rank, P1 rank), ranks 0=J, 1=Q, 2=K, only pairs that can
    be dealt (Kuhn has no equal ranks); `labels[k]` e.g. "JQ";
    `probability[k]` the chance of the pair (sums to 1); `deal_pair[d]` the
    pair index of deal d of `game.deals`; `swap[k]` the index of the reversed
    pair (P1 rank, P0 rank).
    """

    pairs: tuple[tuple[int, int], ...]
    labels: tuple[str, ...]
    probability: np.ndarray
    deal_pair: np.ndarray
    swap: np.ndarray


def card_rank(game: "str | Game", cards) -> np.ndarray:
    """Rank (0=J, 1=Q, 2=K) of card ids: card // 2 in Leduc, the card itself in Kuhn."""
    game = get_game(game)
    return np.asarray(cards) // CARDS_PER_RANK[game.name]


@lru_cache(maxsize=None)
def _rank_pairs(game: Game) -> RankPairs:
    ranks = card_rank(game, game.deals[:, :2])
    codes = ranks[:, 0] * len(RANK_NAMES) + ranks[:, 1]
    present, deal_pair = np.unique(codes, return_inverse=True)
    pairs = tuple((int(c) // len(RANK_NAMES), int(c) % len(RANK_NAMES)) for c in present)
    probability = np.bincount(deal_pair, minlength=len(pairs)) / len(game.deals)
    swap = np.array([pairs.index((b, a)) for a, b in pairs], dtype=np.int64)
    for array in (probability, deal_pair, swap):
        array.setflags(write=False)
    return RankPairs(pairs, tuple(RANK_NAMES[a] + RANK_NAMES[b] for a, b in pairs), probability,
                     deal_pair, swap)


def rank_pairs(game: "str | Game") -> RankPairs:
    """The game's ordered rank pairs (Kuhn: 6, Leduc: 9) and their deal law."""
    return _rank_pairs(get_game(game))


@dataclass(frozen=True)
class PairSplit:
    """One quantity for the whole game and per ordered rank pair (units: those of the quantity).

    `whole`: the whole-game value; `pair[k]`: the value conditional on the
    deal's rank pair being `labels[k]`; `probability[k]`: the deal law, so
    `whole` equals sum_k probability[k] * pair[k] to rounding.
    """

    whole: float
    pair: np.ndarray
    labels: tuple[str, ...]
    probability: np.ndarray

    def by_pair(self) -> dict[str, float]:
        """{pair label: per-pair value}."""
        return {label: float(v) for label, v in zip(self.labels, self.pair)}

    def pair_average(self) -> float:
        """sum_k probability[k] * pair[k]: the deal-law average of the per-pair values."""
        return float(np.dot(self.probability, self.pair))

    def as_dict(self) -> dict:
        return {"whole": float(self.whole), "pairs": self.by_pair()}


def _split(pairs: RankPairs, whole: float, per_pair: np.ndarray) -> PairSplit:
    per_pair = np.array(per_pair, dtype=np.float64)
    per_pair.setflags(write=False)
    return PairSplit(float(whole), per_pair, pairs.labels, pairs.probability)


def _combine(pairs: RankPairs, splits, weights, swap=None) -> PairSplit:
    """sum_j weights[j] * splits[j], per pair; `swap[j]` re-keys split j by the reversed pair first."""
    whole = sum(w * s.whole for w, s in zip(weights, splits))
    per_pair = sum(w * (s.pair[pairs.swap] if swap and swap[j] else s.pair)
                   for j, (w, s) in enumerate(zip(weights, splits)))
    return _split(pairs, whole, per_pair)


# ----- the terminal-outcome distribution ---------------------------------------
@dataclass(frozen=True)
class OutcomeDistribution:
    """The probability of every (deal, terminal node) under one profile.

    `probability[d, t]`: chance of deal d (`game.deals`, all equally likely)
    times both players' reach of terminal public node `terminal_nodes[t]`
    (sums to 1); `utility[d, t]`: player 0's utility there (chips);
    `pairs`: the rank pairs, `pairs.deal_pair[d]` the pair of deal d.
    """

    game: str
    probability: np.ndarray
    utility: np.ndarray
    terminal_nodes: np.ndarray
    pairs: RankPairs

    def expectation(self, f: np.ndarray) -> PairSplit:
        """E[f] for f [D, T] over (deal, terminal): whole game and conditional on each rank pair."""
        return _expectations(self.pairs, self.probability[None], f)[0]

    def player0_value(self) -> PairSplit:
        """E[u_0] in chips."""
        return self.expectation(self.utility)

    def success(self, player: int) -> PairSplit:
        """P(u_player > 0) + P(u_player = 0) / 2 (unitless)."""
        u = self.utility if player == 0 else -self.utility
        return self.expectation((u > 0) + 0.5 * (u == 0))


def terminal_probabilities(game: "str | Game", tables: np.ndarray) -> np.ndarray:
    """[K, D, T] probability of (deal, terminal node) for K profile tables [K, n_info, A].

    Forward pass over the public tree, one depth at a time, vectorised over
    profiles, deals and the nodes of the depth: a child's reach is its
    parent's times the acting player's probability of the action at the
    deal's information state; at the public-card chance node the deal already
    fixes the card (deals are equally likely, 1 / D each).  Terminals in
    `_terminal_nodes(game)` order.
    """
    game = get_game(game)
    tree = game.tree
    tables = np.asarray(tables, dtype=np.float64)
    ids = acting_infostates(game)                                      # [D, N]
    reach = np.zeros((tables.shape[0], len(game.deals), tree.num_nodes))
    reach[:, :, 0] = 1.0
    for depth in range(int(tree.depth.max())):
        at = np.flatnonzero(tree.depth == depth)
        chance = at[tree.player[at] == CHANCE]
        reach[:, :, tree.chance_child[chance]] = reach[:, :, chance]
        decision = at[tree.player[at] >= 0]
        for action in range(game.num_actions):
            parents = decision[tree.legal[decision, action]]
            if parents.size:
                reach[:, :, tree.child[parents, action]] = reach[:, :, parents] * tables[:, ids[:, parents], action]
    return reach[:, :, _terminal_nodes(game)] / len(game.deals)


def _terminal_nodes(game: Game) -> np.ndarray:
    return np.flatnonzero(game.tree.player == TERMINAL)


def _expectations(pairs: RankPairs, probability: np.ndarray, f: np.ndarray) -> list[PairSplit]:
    """E[f] under each of K distributions [K, D, T]: whole game and conditional on each pair."""
    per_deal = np.einsum("kdt,dt->kd", probability, np.broadcast_to(f, probability.shape[1:]))
    joint = np.stack([np.bincount(pairs.deal_pair, weights=row, minlength=len(pairs.pairs)) for row in per_deal])
    return [_split(pairs, float(per_deal[k].sum()), joint[k] / pairs.probability) for k in range(len(joint))]


def outcome_distribution(game: "str | Game", policy: dict, player1_policy: "dict | None" = None
                         ) -> OutcomeDistribution:
    """The terminal-outcome distribution when player 0 plays `policy` and player 1 `player1_policy`.

    `player1_policy` defaults to `policy` (self-play).  Policies are dicts
    keyed by OpenSpiel information-state strings (see `oscc_core.policy`).
    """
    game = get_game(game)
    table = policy_table(game, policy)
    other = table if player1_policy is None else policy_table(game, player1_policy, "player1_policy")
    probability = terminal_probabilities(game, profile_table(game, table, other)[None])[0]
    nodes = _terminal_nodes(game)
    return OutcomeDistribution(game.name, probability, terminal_utilities(game)[:, nodes], nodes, rank_pairs(game))


def profile_table(game: "str | Game", player0_table: np.ndarray, player1_table: np.ndarray) -> np.ndarray:
    """[n_info, A] player 0's states from `player0_table`, player 1's from `player1_table`."""
    game = get_game(game)
    return np.where((game.infostates.player == 0)[:, None], player0_table, player1_table)


# ----- evaluation of a checkpoint ----------------------------------------------
@dataclass(frozen=True)
class VersusOpponent:
    """The checkpoint against a declared evaluation opponent, both seats.

    `opponent`: the opponent's label ("uniform" or "given").
    `seat_return[s]`: the checkpoint's expected utility (chips) when it plays
    seat s and the opponent the other seat; `seat_success[s]`: its task
    success P(u > 0) + P(u = 0) / 2 there (unitless); per pair keyed by
    (P0 rank, P1 rank) of that game.
    `mean_return`, `task_success`: the average over the two seats; per pair
    keyed by (checkpoint's rank, opponent's rank).
    """

    opponent: str
    seat_return: tuple[PairSplit, PairSplit]
    seat_success: tuple[PairSplit, PairSplit]
    mean_return: PairSplit
    task_success: PairSplit

    def as_dict(self) -> dict:
        return {"opponent": self.opponent,
                "seat_return": [s.as_dict() for s in self.seat_return],
                "seat_success": [s.as_dict() for s in self.seat_success],
                "mean_return": self.mean_return.as_dict(), "task_success": self.task_success.as_dict()}


@dataclass(frozen=True)
class CheckpointEvaluation:
    """Exact evaluation of one self-play checkpoint (see the module docstring for definitions).

    `player0_value`: E[u_0] under self-play (chips).
    `best_response_values[i]`: player i's expected utility (chips) with a
    whole-game best response against the checkpoint's other seat; per pair,
    that profile's value restricted to the pair's deals.
    `nash_conv`: BR_0 + BR_1 (chips); `exploitability`: NashConv / 2 (chips);
    per pair these are decompositions of the whole-game gap (can be negative).
    `versus`: return and task success against the evaluation opponent.
    `pairs`: the rank pairs and deal law behind every `PairSplit`.
    """

    game: str
    pairs: RankPairs
    player0_value: PairSplit
    best_response_values: tuple[PairSplit, PairSplit]
    nash_conv: PairSplit
    exploitability: PairSplit
    versus: VersusOpponent

    def as_dict(self) -> dict:
        return {"game": self.game, "player0_value": self.player0_value.as_dict(),
                "best_response_values": [b.as_dict() for b in self.best_response_values],
                "nash_conv": self.nash_conv.as_dict(), "exploitability": self.exploitability.as_dict(),
                "versus": self.versus.as_dict()}


def evaluate_checkpoint(game: "str | Game", policy: dict, opponent: "dict | str" = "uniform"
                        ) -> CheckpointEvaluation:
    """Exact evaluation of a self-play policy dict against `opponent` ('uniform' or a policy dict)."""
    game = get_game(game)
    label = opponent if isinstance(opponent, str) else "given"
    return evaluate_checkpoint_table(game, policy_table(game, policy), resolve_policy(game, opponent, "opponent"),
                                     opponent_label=label)


def best_response_tables(game: "str | Game", table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(profile 0, profile 1) [n_info, A]: profile i is `table` with player i's states replaced by i's whole-game
    best response against it (deterministic, ties towards the first legal action), the profiles behind
    `CheckpointEvaluation.best_response_values`."""
    game = get_game(game)
    sf = sequence_form(game)
    x = sf.realisation_plan(table)
    responses = []
    for player in range(NUM_PLAYERS):
        _, choice = best_response_value_table(sf, table, player, x)
        response = table.copy()
        local = sf.players[player].infosets
        response[local] = 0.0
        response[local, choice] = 1.0
        responses.append(response)
    return responses[0], responses[1]


def private_deals(game: "str | Game") -> tuple[np.ndarray, np.ndarray]:
    """(roots [M, 2], root of each deal [D]): the ordered private-card deals (P0 card, P1 card) of the game, all
    equally likely, and the index of each deal of `game.deals` (which also fix the public card) among them."""
    game = get_game(game)
    roots, deal_root = np.unique(game.deals[:, :2], axis=0, return_inverse=True)
    return roots, deal_root.ravel()


def root_values(game: "str | Game", tables: np.ndarray) -> np.ndarray:
    """[K, M] E[u_0 | private-card deal] (chips) of K profile tables [K, n_info, A]: player 0's value given each
    ordered deal of private cards (`private_deals` order; all equally likely, so the plain mean over the M deals
    is the whole-game value)."""
    game = get_game(game)
    probability = terminal_probabilities(game, np.asarray(tables, dtype=np.float64))      # [K, D, T]
    per_deal = np.einsum("kdt,dt->kd", probability, terminal_utilities(game)[:, _terminal_nodes(game)])
    roots, deal_root = private_deals(game)
    totals = np.stack([np.bincount(deal_root, weights=row, minlength=len(roots)) for row in per_deal])
    chance = np.bincount(deal_root, minlength=len(roots)) / len(game.deals)                # P(private deal)
    return totals / chance[None]


def evaluate_checkpoint_table(game: "str | Game", table: np.ndarray, opponent_table: np.ndarray,
                              opponent_label: str = "given") -> CheckpointEvaluation:
    """`evaluate_checkpoint` for validated tables [n_info, A] (the learners' fast path).

    Five profiles share one batched forward pass: self-play, best response of
    player 0 against the checkpoint, best response of player 1 against it,
    the checkpoint in seat 0 against the opponent, and the opponent against
    the checkpoint in seat 1.
    """
    game = get_game(game)
    pairs = rank_pairs(game)
    responses = best_response_tables(game, table)
    profiles = np.stack([table, responses[0], responses[1], profile_table(game, table, opponent_table),
                         profile_table(game, opponent_table, table)])
    probability = terminal_probabilities(game, profiles)
    u0 = terminal_utilities(game)[:, _terminal_nodes(game)]
    value0, br0, br1_as_p0, seat0_return, seat1_as_p0 = _expectations(pairs, probability, u0)   # E[u_0]
    br1 = _combine(pairs, [br1_as_p0], [-1.0])
    nash_conv = _combine(pairs, [br0, br1], [1.0, 1.0])
    seat_return = (seat0_return, _combine(pairs, [seat1_as_p0], [-1.0]))
    tie = 0.5 * (u0 == 0)
    seat_success = (_expectations(pairs, probability[3:4], (u0 > 0) + tie)[0],
                    _expectations(pairs, probability[4:5], (u0 < 0) + tie)[0])
    half = 1.0 / NUM_PLAYERS
    versus = VersusOpponent(opponent_label, seat_return, seat_success,
                            _combine(pairs, seat_return, [half, half], swap=[False, True]),
                            _combine(pairs, seat_success, [half, half], swap=[False, True]))
    return CheckpointEvaluation(game.name, pairs, value0, (br0, br1), nash_conv,
                                _combine(pairs, [nash_conv], [half]), versus)


# ----- feasibility ---------------------------------------------------------------
@dataclass(frozen=True)
class EquilibriumValue:
    """Player 0's equilibrium value v* (chips), bracketed: low <= v* <= high.

    `value`: the midpoint; `tolerance`: (high - low) / 2, so |v* - value| <=
    tolerance; `source`: how it was obtained (exact, or CFR+ with its
    iteration count; the bracket [-BR_1, BR_0] of the CFR+ average policy
    has width equal to its NashConv).
    """

    value: float
    low: float
    high: float
    tolerance: float
    source: str


@lru_cache(maxsize=None)
def _cfr_plus_bracket(game: Game, iterations: int) -> EquilibriumValue:
    solver = CFRPlus(game)
    for _ in range(iterations):
        solver.iterate()
    sf, table = sequence_form(game), solver.average_table()
    x = sf.realisation_plan(table)
    high = best_response_value_table(sf, table, 0, x)[0]
    low = -best_response_value_table(sf, table, 1, x)[0]
    return EquilibriumValue((low + high) / 2, low, high, (high - low) / 2, f"CFR+ {iterations} iterations")


def equilibrium_value(game: "str | Game", iterations: "int | None" = None) -> EquilibriumValue:
    """Player 0's equilibrium value: Kuhn exactly -1/18; Leduc bracketed by a CFR+ run.

    `iterations` (default `LEDUC_EQUILIBRIUM_ITERATIONS` for Leduc) forces a
    CFR+ bracket in either game.  Results are cached per (game, iterations).
    """
    game = get_game(game)
    if iterations is None and game.name == "kuhn":
        return EquilibriumValue(KUHN_EQUILIBRIUM_VALUE, KUHN_EQUILIBRIUM_VALUE, KUHN_EQUILIBRIUM_VALUE, 0.0,
                                "exact (-1/18)")
    if iterations is None:
        iterations = LEDUC_EQUILIBRIUM_ITERATIONS
    if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)) or iterations < 1:
        raise ValueError(f"iterations must be a positive integer, got {iterations!r}.")
    return _cfr_plus_bracket(game, int(iterations))


@dataclass(frozen=True)
class FeasibilityBand:
    """Where any profile's player-0 value must lie: [v* - NashConv, v* + NashConv] (chips).

    `low`, `high`: the band, widened by the uncertainty of v*
    (`equilibrium.low - nash_conv`, `equilibrium.high + nash_conv`);
    `nash_conv`: the profile's NashConv; `equilibrium`: v* with its bracket.
    """

    low: float
    high: float
    nash_conv: float
    equilibrium: EquilibriumValue

    def violation(self, value: float) -> float:
        """Chips by which `value` lies outside the band (0 inside)."""
        return float(max(self.low - value, value - self.high, 0.0))

    def contains(self, value: float, rounding: float = FEASIBILITY_ROUNDING) -> bool:
        """True when `value` lies in the band up to `rounding` chips."""
        return self.violation(value) <= rounding


def feasibility_band(game: "str | Game", nash_conv: float, equilibrium: "EquilibriumValue | float | None" = None
                     ) -> FeasibilityBand:
    """The band for a profile with this NashConv (chips); v* from `equilibrium_value(game)` unless given.

    A float `equilibrium` is taken as exact (tolerance 0).
    """
    if equilibrium is None:
        equilibrium = equilibrium_value(game)
    elif not isinstance(equilibrium, EquilibriumValue):
        v = float(equilibrium)
        equilibrium = EquilibriumValue(v, v, v, 0.0, "given")
    if not np.isfinite(nash_conv) or nash_conv < -FEASIBILITY_ROUNDING:
        raise ValueError(f"nash_conv must be a finite non-negative number of chips, got {nash_conv!r}.")
    return FeasibilityBand(equilibrium.low - nash_conv, equilibrium.high + nash_conv, float(nash_conv), equilibrium)


def check_player0_value(game: "str | Game", value: float, nash_conv: float,
                        equilibrium: "EquilibriumValue | float | None" = None) -> bool:
    """Whether a reported player-0 value (chips) is possible for a profile with this NashConv."""
    return feasibility_band(game, nash_conv, equilibrium).contains(value)
