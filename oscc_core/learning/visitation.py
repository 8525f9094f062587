"""The law of decision points (on-policy, counterfactual or uniform), and draws from it.

Under a self-play profile pi, a decision history h (a deal and a decision
node) is reached with probability chance(h) * pi_0(h) * pi_1(h).  Grouped by
the acting player's information state I and the opponent's private card c,
these reach probabilities give `DecisionLaw.weights[I, c]`: the row over c is
the posterior of the hidden card given I (drawn from the `hidden` stream),
and `DecisionLaw.per_state[I]` is the weight of I in the law the learners
draw decision points from (the `root` stream):

* ``on_policy`` (the paper's): the sum of the row, chance x both reaches;
* ``counterfactual``: chance x the opponent's reach only (CFR's weighting);
  the actor's own reach is the same for every c given I, so the posterior is
  unchanged;
* ``uniform``: every information state alike.

No prefix rollouts are needed: the reaches come from the realisation plans of
the sequence form, for all runs at once.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
import torch

from oscc_core.engine import rng
from oscc_core.engine.rollout import draw_index
from oscc_core.exact.sequence_form import EMPTY_SEQUENCE, SequenceForm, sequence_form
from oscc_core.games import Game
from oscc_core.games.deal_tables import acting_infostates
from oscc_core.learning.proximal import ON_POLICY, UNIFORM, check_decision_law
from oscc_core.reductions import sum_last_axis


def realisation_plans(sf: SequenceForm, tables: np.ndarray) -> np.ndarray:
    """[R, S] both players' realisation plans for R policy tables [R, n_info, A] (top-down, per own level)."""
    x = np.zeros((len(tables), sf.num_sequences))
    x[:, list(EMPTY_SEQUENCE)] = 1.0
    for ps in sf.players:
        sigma = tables[:, ps.infosets]
        for level in ps.level_slices:
            x[:, ps.seq_of[level]] = x[:, ps.parent_seq[level], None] * sigma[:, level]
    return x


@dataclass(frozen=True)
class DecisionHistories:
    """Every decision history of a game: information state [H], opponent's card [H], the two sequences [H]."""

    infostate: np.ndarray
    opponent_card: np.ndarray
    own_sequence: np.ndarray
    opponent_sequence: np.ndarray
    chance: float


@cache
def decision_histories(game: Game) -> DecisionHistories:
    sf = sequence_form(game)
    deal, node = np.nonzero(acting_infostates(game) >= 0)
    infostate, opponent_sequence = sf.decision_histories
    player = game.tree.player[node]
    return DecisionHistories(infostate, game.deals[deal, 1 - player], sf.parent_seq[infostate],
                             opponent_sequence, sf.chance_probability)


@dataclass(frozen=True)
class DecisionLaw:
    """weights [R, n_info, C]: the reach of a history of I with opponent card c under each run's profile
    (chance x both players' reach on-policy; chance x the opponent's reach otherwise): the hidden card's
    posterior given I, unnormalised.  per_state [R, n_info]: the weight of I in the law decision points are
    drawn from.  own_reach [R, n_info]: the owner's reach of each state (the average policy's weights)."""

    weights: np.ndarray
    per_state: np.ndarray
    own_reach: np.ndarray

    @property
    def expected_decisions(self) -> np.ndarray:
        """[R] the sum of all weights: under the on-policy law, the expected number of decisions in one hand."""
        return self.weights.sum(axis=(1, 2))


def decision_law(game: Game, tables: np.ndarray, law: str = ON_POLICY) -> DecisionLaw:
    """The law of decision points under R self-play tables [R, n_info, A] (`law`: on_policy, counterfactual or
    uniform; module docstring)."""
    check_decision_law("decision_law", law)
    sf = sequence_form(game)
    h = decision_histories(game)
    x = realisation_plans(sf, tables)
    opponent = h.chance * x[:, h.opponent_sequence]                                # [R, H]
    reach = h.chance * x[:, h.own_sequence] * x[:, h.opponent_sequence] if law == ON_POLICY else opponent
    c = game.num_cards
    weights = np.zeros((len(tables), sf.num_infostates * c))
    np.add.at(weights, (slice(None), h.infostate * c + h.opponent_card), reach)    # in history order
    weights = weights.reshape(len(tables), sf.num_infostates, c)
    per_state = np.ones(weights.shape[:2]) if law == UNIFORM else sum_last_axis(weights)
    return DecisionLaw(weights, per_state, x[:, sf.parent_seq])



@dataclass(frozen=True)
class DecisionPoints:
    """N drawn decision points of each of R runs: information state, its node, actor and cards [R, N]."""

    infostate: torch.Tensor
    node: torch.Tensor
    player: torch.Tensor
    own_card: torch.Tensor
    public_card: torch.Tensor
    hidden_weights: torch.Tensor     # [R, N, C] posterior weights of the opponent's card


def draw_decision_points(game: Game, law: DecisionLaw, run: torch.Tensor, split: int, groups: torch.Tensor
                         ) -> DecisionPoints:
    """Draw each group's information state from the `root` stream (run, split, group), counter 0.

    run [R] the runs' stream ids (their seeds), groups [R, N] global group ids.
    Inverse CDF over the information states in id order on cumulative
    weights (summed sequentially, hence the same on every CPU).
    """
    dev = groups.device
    cum = torch.as_tensor(np.cumsum(law.per_state, axis=1), device=dev)               # [R, n_info]
    u = rng.uniform(rng.derive_key("root", run=run[:, None], split=split, group=groups), 0)
    info = torch.searchsorted(cum, u * cum[:, -1:], right=True).clamp(max=cum.shape[1] - 1)
    states = game.infostates
    table = {name: torch.as_tensor(getattr(states, name), device=dev) for name in ("node", "player", "card",
                                                                                 "public_card")}
    weights = torch.as_tensor(law.weights, device=dev)
    hidden = torch.gather(weights, 1, info.unsqueeze(-1).expand(-1, -1, weights.shape[2]))
    return DecisionPoints(info, table["node"][info], table["player"][info], table["card"][info],
                          table["public_card"][info], hidden)


def draw_hidden(points: DecisionPoints, run: torch.Tensor, split: int, groups: torch.Tensor,
                branches: torch.Tensor | None) -> torch.Tensor:
    """Opponent cards from the `hidden` stream: [R, N] shared by a group, or [R, N, B] one per branch."""
    if branches is None:
        key = rng.derive_key("hidden", run=run[:, None], split=split, group=groups)
        return draw_index(points.hidden_weights, rng.uniform(key, 0))
    key = rng.derive_key("hidden", run=run[:, None, None], split=split, group=groups[..., None],
                         branch=branches.view(1, 1, -1))
    weights = points.hidden_weights.unsqueeze(2).expand(-1, -1, len(branches), -1)
    return draw_index(weights, rng.uniform(key, 0))
