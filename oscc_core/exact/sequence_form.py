"""Sequence-form layout of a game: the exact engine behind the solver.

A *sequence* of player p is one of p's information states together with one
of its actions; each player also has an empty sequence.  In a game with
perfect recall (Kuhn and Leduc), the product of player p's own action
probabilities along a history depends only on the last sequence of p on that
history (p's *realisation weight* of the sequence), and every terminal history
z is reached through exactly one sequence of each player.  Hence

    E[u_0] = sum_z chance(z) * u_0(z) * x_0[seq_0(z)] * x_1[seq_1(z)],

where x_p is p's realisation plan.  `SequenceForm` finds seq_0(z), seq_1(z) and
chance(z) * u_0(z) for every terminal (deal, public node) once, by one forward
pass over the public tree vectorised over deals.  Afterwards every exact
quantity (values, reaches, counterfactual values, best responses, CFR+
updates) is a gather, a bincount over terminal pairs, and a sweep over the
few *own levels* of a player (the number of the player's earlier actions:
at most 4 in Leduc, 2 in Kuhn).  Nothing recurses over histories at run time.

Sequence ids: `EMPTY_SEQUENCE[p]` is p's empty sequence; information state I
(id in `game.infostates`) with action a is sequence `NUM_EMPTY + I * A + a`.
Illegal (I, a) pairs keep an id that no plan ever weights.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from oscc_core.games import CHANCE, TERMINAL, Game, get_game
from oscc_core.games.deal_tables import acting_infostates, terminal_utilities
from oscc_core.reductions import sum_last_axis

EMPTY_SEQUENCE = (0, 1)     # one empty sequence per player
NUM_EMPTY = len(EMPTY_SEQUENCE)
TIE_TOLERANCE = 1e-12       # chips: best-response action values closer than this count as tied


@dataclass(frozen=True)
class PlayerSequences:
    """One player's information states, sorted by own level so each level is a slice.

    `infosets[k]` is the global id of the k-th local information state;
    arrays indexed by local position are `seq_of` [n, A] (sequence ids),
    `parent_seq` [n] (the sequence leading to the state), `legal` [n, A].
    `level_slices[L]` selects the local states at own level L (top-down).
    `terminal_own`, `terminal_opponent` [K] are the two sequences of each
    terminal pair and `terminal_payoff` [K] the player's utility times the
    chance probability (chips), summed over deals sharing both sequences.
    """

    player: int
    infosets: np.ndarray
    seq_of: np.ndarray
    parent_seq: np.ndarray
    legal: np.ndarray
    level_slices: tuple[slice, ...]
    terminal_own: np.ndarray
    terminal_opponent: np.ndarray
    terminal_payoff: np.ndarray

    @property
    def empty_sequence(self) -> int:
        return EMPTY_SEQUENCE[self.player]


class SequenceForm:
    """Sequence-form tables of a game (built once per game, see `sequence_form`)."""

    def __init__(self, game: Game) -> None:
        self.game = game
        info = game.infostates
        self.num_infostates = len(info)
        self.num_actions = game.num_actions
        self.num_sequences = NUM_EMPTY + self.num_infostates * self.num_actions
        self.seq_of = NUM_EMPTY + np.arange(self.num_infostates * self.num_actions).reshape(
            self.num_infostates, self.num_actions)
        last_seq, own_actions = self._forward_pass()
        self.parent_seq = self._per_infostate(last_seq)
        self.level = self._per_infostate(own_actions)
        self._hist_infoset, self._hist_opponent_seq = self._decision_histories(last_seq)
        self.chance_probability = 1.0 / len(game.deals)   # every deal is equally likely
        seq0, seq1, payoff0 = self._terminal_pairs(last_seq)
        self.players = tuple(self._player_sequences(p, seq0, seq1, payoff0) for p in (0, 1))

    # ----- construction (one forward pass over the public tree, vectorised over deals) ----
    def _forward_pass(self) -> tuple[np.ndarray, np.ndarray]:
        """[D, N, 2] each player's last sequence before every (deal, node), and its number of own actions."""
        game, tree = self.game, self.game.tree
        ids = acting_infostates(game)
        num_deals = len(game.deals)
        last = np.empty((num_deals, tree.num_nodes, 2), dtype=np.int64)
        last[:, :, 0], last[:, :, 1] = EMPTY_SEQUENCE
        count = np.zeros_like(last)
        for depth in range(int(tree.depth.max())):
            at = np.flatnonzero(tree.depth == depth)
            chance = at[tree.player[at] == CHANCE]
            for array in (last, count):
                array[:, tree.chance_child[chance]] = array[:, chance]
            decision = at[tree.player[at] >= 0]
            for action in range(self.num_actions):
                parents = decision[tree.legal[decision, action]]
                children, actor = tree.child[parents, action], tree.player[parents]
                for array in (last, count):
                    array[:, children] = array[:, parents]
                last[:, children, actor] = self.seq_of[ids[:, parents], action]
                count[:, children, actor] += 1
        return last, count

    def _per_infostate(self, per_player: np.ndarray) -> np.ndarray:
        """[n_info] the acting player's entry of a [D, N, 2] array at each information state.

        Perfect recall makes it the same at every history of the state; this is checked.
        """
        tree = self.game.tree
        ids = acting_infostates(self.game)
        acting = per_player[:, np.arange(tree.num_nodes), np.clip(tree.player, 0, 1)]   # [D, N]
        mask = ids >= 0
        out = np.full(self.num_infostates, -1, dtype=np.int64)
        out[ids[mask]] = acting[mask]
        if np.any(out[ids[mask]] != acting[mask]) or np.any(out < 0):
            raise RuntimeError(f"{self.game.name}: information states without perfect recall.")
        return out

    def _decision_histories(self, last_seq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every (deal, decision node): its information state and the opponent's last sequence."""
        tree = self.game.tree
        ids = acting_infostates(self.game)
        opponent = 1 - np.clip(tree.player, 0, 1)
        deal, node = np.nonzero(ids >= 0)
        return ids[deal, node], last_seq[deal, node, opponent[node]]

    def _terminal_pairs(self, last_seq: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Distinct (seq_0, seq_1) pairs of terminal histories with summed chance * u_0 (chips)."""
        tree = self.game.tree
        utilities = terminal_utilities(self.game)
        deal, node = np.nonzero(np.broadcast_to(tree.player == TERMINAL, utilities.shape))
        seq0, seq1 = last_seq[deal, node, 0], last_seq[deal, node, 1]
        pairs, inverse = np.unique(seq0 * self.num_sequences + seq1, return_inverse=True)
        payoff = np.bincount(inverse, weights=utilities[deal, node] * self.chance_probability)
        keep = payoff != 0.0   # split pots pay nothing and need no work
        pairs, payoff = pairs[keep], payoff[keep]
        return pairs // self.num_sequences, pairs % self.num_sequences, payoff

    def _player_sequences(self, p: int, seq0, seq1, payoff0) -> PlayerSequences:
        info = self.game.infostates
        mine = np.flatnonzero(info.player == p)
        mine = mine[np.argsort(self.level[mine], kind="stable")]
        levels = self.level[mine]
        slices = tuple(slice(int(np.searchsorted(levels, L)), int(np.searchsorted(levels, L, side="right")))
                       for L in range(int(levels.max()) + 1))
        own, opponent = (seq0, seq1) if p == 0 else (seq1, seq0)
        sign = 1.0 if p == 0 else -1.0   # zero-sum: u_1 = -u_0
        return PlayerSequences(p, mine, self.seq_of[mine], self.parent_seq[mine], info.legal[mine],
                               slices, own, opponent, sign * payoff0)

    @property
    def decision_histories(self) -> tuple[np.ndarray, np.ndarray]:
        """Every (deal, decision node) with a decision, in `np.nonzero(acting_infostates(game) >= 0)` order:
        its information state id [H] and the opponent's last sequence there [H]."""
        return self._hist_infoset, self._hist_opponent_seq

    # ----- run-time passes ----------------------------------------------------
    def new_plan(self) -> np.ndarray:
        """A realisation-plan vector [S] with both empty sequences at weight one."""
        x = np.zeros(self.num_sequences)
        x[list(EMPTY_SEQUENCE)] = 1.0
        return x

    def fill_plan(self, x: np.ndarray, ps: PlayerSequences, sigma: np.ndarray) -> np.ndarray:
        """Write player `ps.player`'s realisation plan for local policy `sigma` [n_p, A] into x, top-down."""
        for level in ps.level_slices:
            x[ps.seq_of[level]] = x[ps.parent_seq[level], None] * sigma[level]
        return x

    def realisation_plan(self, table: np.ndarray) -> np.ndarray:
        """[S] both players' realisation plans for a policy table [n_info, A]."""
        x = self.new_plan()
        for ps in self.players:
            self.fill_plan(x, ps, table[ps.infosets])
        return x

    def direct_payoffs(self, ps: PlayerSequences, x: np.ndarray) -> np.ndarray:
        """[S] per own sequence: chance- and opponent-weighted utility of terminals it ends in (chips)."""
        weights = ps.terminal_payoff * x[ps.terminal_opponent]
        return np.bincount(ps.terminal_own, weights=weights, minlength=self.num_sequences)

    def sweep_expected(self, ps: PlayerSequences, g: np.ndarray, sigma: np.ndarray) -> np.ndarray:
        """Bottom-up: add to each own sequence the expected counterfactual value of the states after it.

        On return g[seq_of[I, a]] is the counterfactual action value Q(I, a)
        when the player follows `sigma` [n_p, A] below I, and
        g[empty_sequence] is the player's expected utility (chips).
        """
        for level in reversed(ps.level_slices):
            values = sum_last_axis(sigma[level] * g[ps.seq_of[level]])   # fixed order, see reductions
            np.add.at(g, ps.parent_seq[level], values)
        return g

    def sweep_best(self, ps: PlayerSequences, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Bottom-up best response: like `sweep_expected` but the player maximises at every state.

        Returns g (g[empty_sequence] is the best-response value in chips) and
        the local index [n_p] of the chosen action: the first legal action
        whose counterfactual value is within `TIE_TOLERANCE` of the maximum.
        """
        choice = np.zeros(len(ps.infosets), dtype=np.int64)
        for level in reversed(ps.level_slices):
            q = np.where(ps.legal[level], g[ps.seq_of[level]], -np.inf)
            best = q.max(axis=1)
            choice[level] = np.argmax(q >= best[:, None] - TIE_TOLERANCE, axis=1)
            np.add.at(g, ps.parent_seq[level], best)
        return g, choice

    def opponent_chance_reach(self, x: np.ndarray) -> np.ndarray:
        """[n_info] sum over histories h in I of chance(h) * opponent's reach of h."""
        weights = x[self._hist_opponent_seq] * self.chance_probability
        return np.bincount(self._hist_infoset, weights=weights, minlength=self.num_infostates)


@lru_cache(maxsize=None)
def _sequence_form(game: Game) -> SequenceForm:
    return SequenceForm(game)


def sequence_form(game: "str | Game") -> SequenceForm:
    """The game's sequence-form layout, built on first use and cached."""
    return _sequence_form(get_game(game))
