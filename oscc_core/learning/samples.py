"""Each learner arm's samples at the drawn decision points, as lanes for `engine.rollout.play`.

A lane is one branch rollout (or one whole episode for PPO).  Every uniform
comes from the counter-based streams, addressed by (run, split, group) and,
where the arm does not share it, by the branch field:

- hidden card: `hidden` stream, shared by the group (cp_grpo, grpo) or per
  branch (independent, uniform), from its posterior given the state;
- continuation chance: `chance` stream by semantic event, shared (cp_grpo)
  or per branch;
- continuation actions: `policy` stream per branch (never shared);
- grpo's sampled root action: the branch's policy stream with the field
  `stream = ROOT_ACTION_STREAM`, so it never reuses a continuation draw.

The branch field of an enumerated branch is its action id; of a sampled
action, its sample index.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from oscc_core.engine import rng
from oscc_core.engine.rollout import chance_event_of_nodes, draw_index
from oscc_core.games import NO_PUBLIC_CARD, Game
from oscc_core.learning.visitation import DecisionPoints, draw_hidden

ROOT_ACTION_STREAM = 2      # policy-key field of grpo's sampled root action (1 is the namespace ablation's)
ROLLOUT = 0                 # continuation budget 1: every branch is rolled out once


@dataclass(frozen=True)
class Context:
    """What an arm needs to build its lanes for a subset of the batch's runs (`rows`, global run rows)."""

    game: Game
    rows: torch.Tensor          # [R'] rows of these runs in the stacked tables
    runs: torch.Tensor          # [R'] stream run ids (seeds)
    split: int
    groups: torch.Tensor        # [R', N] global group ids
    keep: torch.Tensor          # [R', N] groups within the run's budget
    points: DecisionPoints      # restricted to these runs
    cdf: torch.Tensor           # [R * n_info, A] all runs' draw thresholds
    last: torch.Tensor          # [R * n_info]
    num_infostates: int

    @property
    def event(self) -> int:
        return continuation_event(self.game)

    def table_rows(self, info: torch.Tensor) -> torch.Tensor:
        """Rows of `cdf` for information states info [R', ...] of these runs."""
        shape = (-1,) + (1,) * (info.dim() - 1)
        return self.rows.view(shape) * self.num_infostates + info


@dataclass
class Lanes:
    """Flat lanes [L] for `play`, with where each came from (run row, group index, slot, root action)."""

    node: torch.Tensor
    cards: torch.Tensor
    public: torch.Tensor
    policy_keys: torch.Tensor
    chance_keys: torch.Tensor
    offset: torch.Tensor
    run: torch.Tensor           # [L] index into the context's runs (0..R'-1)
    group: torch.Tensor         # [L] group index 0..N-1
    slot: torch.Tensor          # [L] branch (action id) or sample index
    action: torch.Tensor        # [L] root action (-1 for episodes)
    mask: torch.Tensor          # [R', N, S] which (run, group, slot) cells are lanes


def continuation_event(game: Game) -> int:
    """The semantic address of the game's continuation chance event (0 when it has none).

    Both games have at most one event type after the root (Leduc's public card); a game with several would
    need one chance key per event, so it is refused rather than silently given one key.
    """
    events = sorted(set(chance_event_of_nodes(game).values()))
    if len(events) > 1:
        raise NotImplementedError(f"{game.name} has {len(events)} continuation chance events; one is supported.")
    return events[0] if events else 0


def _cards(points: DecisionPoints, opp: torch.Tensor) -> torch.Tensor:
    own = points.own_card.unsqueeze(-1).expand_as(opp)
    acting_one = (points.player == 1).unsqueeze(-1).expand_as(opp)
    return torch.stack([torch.where(acting_one, opp, own), torch.where(acting_one, own, opp)], dim=-1)


def _flat(ctx: Context, mask, node, cards, public, policy_keys, chance_keys, offset, slot, action) -> Lanes:
    r, n, s = mask.shape
    index = [torch.arange(d, device=mask.device) for d in (r, n, s)]
    grid = torch.meshgrid(*index, indexing="ij")
    pick = [x.expand(r, n, s)[mask] for x in (node, public, policy_keys, chance_keys, offset, slot, action)]
    return Lanes(pick[0], cards.expand(r, n, s, 2)[mask], pick[1], pick[2], pick[3], pick[4],
                 grid[0][mask], grid[1][mask], pick[5], pick[6], mask)


def branch_lanes(ctx: Context, share_hidden: torch.Tensor, share_chance: torch.Tensor) -> Lanes:
    """Every legal action at each kept decision point is one branch (cp_grpo, independent, uniform).

    share_hidden, share_chance [R']: each run's arm shares the opponent card / the chance stream by group.
    """
    game, p = ctx.game, ctx.points
    t = game.tables(ctx.groups.device)
    actions = torch.arange(game.num_actions, device=ctx.groups.device)
    mask = t["legal"][p.node] & ctx.keep.unsqueeze(-1)                          # [R', N, A]
    shared = draw_hidden(p, ctx.runs, ctx.split, ctx.groups, None).unsqueeze(-1).expand_as(mask)
    opp = torch.where(share_hidden.view(-1, 1, 1), shared, draw_hidden(p, ctx.runs, ctx.split, ctx.groups, actions))
    chance = torch.where(share_chance.view(-1, 1, 1), _chance_keys(ctx, None).expand(mask.shape),
                         _chance_keys(ctx, actions).expand(mask.shape))
    node = t["child"][p.node.unsqueeze(-1), actions.view(1, 1, -1)]
    return _flat(ctx, mask, node, _cards(p, opp), p.public_card.unsqueeze(-1), _policy_keys(ctx, actions), chance,
                 ctx.table_rows(torch.zeros_like(p.infostate)).unsqueeze(-1), actions.view(1, 1, -1),
                 actions.view(1, 1, -1))


def sampled_lanes(ctx: Context, group_size: int) -> Lanes:
    """`group_size` root actions sampled from pi0 at each kept decision point, sharing the deal (grpo)."""
    p = ctx.points
    dev = ctx.groups.device
    samples = torch.arange(group_size, device=dev)
    key = rng.policy_key(ctx.runs.view(-1, 1, 1), ctx.split, ctx.groups.unsqueeze(-1), samples.view(1, 1, -1),
                         ROLLOUT, ROOT_ACTION_STREAM)
    rows = ctx.table_rows(p.infostate).unsqueeze(-1).expand(-1, -1, group_size)
    m = rng.uniform_bits(key, 0)
    action = (ctx.cdf[rows] <= m.unsqueeze(-1)).sum(-1)
    action = torch.minimum(action, ctx.last[rows])
    opp = draw_hidden(p, ctx.runs, ctx.split, ctx.groups, None).unsqueeze(-1).expand_as(action)
    node = ctx.game.tables(dev)["child"][p.node.unsqueeze(-1), action]
    mask = ctx.keep.unsqueeze(-1).expand_as(action)
    return _flat(ctx, mask, node, _cards(p, opp), p.public_card.unsqueeze(-1), _policy_keys(ctx, samples),
                 _chance_keys(ctx, samples), ctx.table_rows(torch.zeros_like(p.infostate)).unsqueeze(-1),
                 samples.view(1, 1, -1), action)


def episode_lanes(ctx: Context) -> Lanes:
    """One whole self-play hand per kept group (ppo): player 0's card from the `root` stream, player 1's from
    the `hidden` stream, uniform over the cards left (deals are uniform), the public card by semantic event."""
    game = ctx.game
    dev = ctx.groups.device
    c = game.num_cards
    ones = torch.ones(ctx.groups.shape + (c,), dtype=torch.float64, device=dev)
    c0 = draw_index(ones, rng.uniform(rng.derive_key("root", run=ctx.runs[:, None], split=ctx.split,
                                                     group=ctx.groups), 0))
    rest = ones.scatter(-1, c0.unsqueeze(-1), 0.0)
    c1 = draw_index(rest, rng.uniform(rng.derive_key("hidden", run=ctx.runs[:, None], split=ctx.split,
                                                     group=ctx.groups), 0))
    cards = torch.stack([c0, c1], dim=-1).unsqueeze(2)
    zero = torch.zeros_like(ctx.groups).unsqueeze(-1)
    first = torch.zeros((1, 1, 1), dtype=torch.int64, device=dev)
    return _flat(ctx, ctx.keep.unsqueeze(-1), zero, cards, torch.full_like(zero, NO_PUBLIC_CARD),
                 _policy_keys(ctx, first.view(-1)), _chance_keys(ctx, None),
                 ctx.table_rows(torch.zeros_like(ctx.groups)).unsqueeze(-1), first, first - 1)


def _policy_keys(ctx: Context, branches: torch.Tensor) -> torch.Tensor:
    return rng.policy_key(ctx.runs.view(-1, 1, 1), ctx.split, ctx.groups.unsqueeze(-1), branches.view(1, 1, -1),
                          ROLLOUT)


def _chance_keys(ctx: Context, branches: torch.Tensor | None) -> torch.Tensor:
    fields = {"run": ctx.runs.view(-1, 1, 1), "split": ctx.split, "group": ctx.groups.unsqueeze(-1),
              "event": ctx.event, "rollout": ROLLOUT}
    if branches is not None:
        fields["branch"] = branches.view(1, 1, -1)
    return rng.derive_key("chance", **fields)
