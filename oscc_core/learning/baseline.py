"""History baselines: a control variate on every sampled step of a branch rollout (`Schedule.baseline`).

A branch's return R (the acting player's chips) is one sample of Q(I, a): the
hidden card, the public card and every continuation action on its path are
drawn.  The option ``baseline = "history"`` keeps, per run, a table B of
values per *history* (public-tree node, both private cards, the public card
or none; player 0's chips, as in `engine.fused`'s utility table) and corrects
each sampled step along the lane's path h_0, h_1, ..., h_K = z (h_0: the node
after the root action), as variance-reduced MCCFR does (Schmid et al., AAAI
2019):

    v = u(z) + (d_0 + d_1 + ... + d_{K-1}),    d_k = E_{x ~ P(. | h_k)} V(h_k x) - V(h_{k+1}),

with P the public card's law (uniform over the cards left) at a chance node
and pi_t at the acting player's information state at a decision node; V is
B, except at a terminal history, where it is the exact utility.  At the
decision point the hidden card c is a sampled step too (from its posterior
p(c | I), the weights it was drawn with):

    R = sign * (v + (sum_c w_c V(h_0(c))) / (sum_c w_c) - V(h_0)).

Each correction has mean zero given the history it starts from, so R stays
an unbiased sample of Q(I, a) for any table B, and the closer B is to the
values under pi_t, the smaller its variance (with exact values, R = Q(I, a)).
The arm's lanes, their draws, the centring and the clipped surrogate are
unchanged, and so is the coupling: the corrections are applied lane by lane,
whichever streams the lanes share.  The option ``baseline = "policy"``
corrects only the decision steps (no chance step, no hidden card: d = 0
there), leaving to the arm's coupling the draws it can share.

B learns from the same rollouts, after the iteration's returns are frozen:
every non-terminal history h_k on every lane's path moves toward its own
corrected value T_k = v - (d_0 + ... + d_{k-1}),

    n <- n + 1,   B <- B + max(1 / n, floor) * (T_k - B),

one sample after another: a run's lanes in (decision point, slot) order,
each lane's histories in path order (a chance step before the decision taken
in the same step of `rollout.play`).

Arithmetic (DESIGN section 13): IEEE basic operations in this order, sums
from 0.0 term by term (the posterior's from its first card), and the fused
kernels (`fused_baseline._play_corrected`, `_root_correction`,
`_baseline_updates`) do the same operations in the same order, bit for bit.
"""
from __future__ import annotations

from functools import cache

import numpy as np
import torch

from oscc_core.engine.fused import _game_arrays
from oscc_core.engine.rollout import ChanceEvent
from oscc_core.games import Game, TERMINAL
from oscc_core.learning.tabular import sum_last

NONE, HISTORY, POLICY = "none", "history", "policy"
#: The baselines a schedule can ask for, the default (no correction) first: "history" corrects every sampled step
#: (the hidden card, the public card, every action), "policy" only the actions (the steps no coupling can share).
BASELINES = (NONE, HISTORY, POLICY)
#: The kernels' code of each baseline.
MODE = {NONE: 0, HISTORY: 1, POLICY: 2}


def check_baseline(name: str, value: str) -> str:
    if value not in BASELINES:
        raise ValueError(f"{name} must be one of {', '.join(BASELINES)}, got {value!r}.")
    return value


def table_size(game: Game) -> int:
    """Cells of a run's table: nodes x cards x cards x (cards + 1), `engine.fused`'s utility layout."""
    c = game.num_cards
    return game.tree.num_nodes * c * c * (c + 1)


@cache
def cell_tables(game: Game) -> tuple[np.ndarray, np.ndarray]:
    """(utility [M] float64 chips of player 0 at terminal cells, 0 elsewhere; terminal [M] bool), flat in the
    cell order of `cell`."""
    utility = _game_arrays(game)["utility"].astype(np.float64).reshape(-1)
    terminal = np.repeat(game.tree.player == TERMINAL, table_size(game) // game.tree.num_nodes)
    return utility, terminal


def kernel_buffers(game: Game, baseline: str, rows: int, width: int, steps: int, alloc=np.zeros) -> tuple:
    """The fused kernels' inputs for a schedule's `baseline`: its code (`MODE`, 0: none), the path records made by
    `alloc` (cells and targets [rows, width, 2 * steps]: a chance and a decision per step of a lane; their lengths
    [rows, width]; one element each without a baseline) and the cells' utilities and terminal flags
    (`cell_tables`)."""
    mode = MODE[baseline]
    shape = (rows, width, 2 * steps) if mode else (1, 1, 1)
    utility, terminal = cell_tables(game) if mode else (np.zeros(1), np.zeros(1, bool))
    return (mode, alloc(shape, np.int64), alloc(shape, np.float64), alloc(shape[:2], np.int64),
            np.ascontiguousarray(utility), np.ascontiguousarray(terminal))


def cell(game: Game, node, c0, c1, public):
    """The flat cell of histories (node, c0, c1, public card or -1): ((node * C + c0) * C + c1) * (C + 1) + public + 1."""
    c = game.num_cards
    return ((node * c + c0) * c + c1) * (c + 1) + public + 1


class Tables:
    """Torch views of the static cell tables on a device."""

    def __init__(self, game: Game, device) -> None:
        utility, terminal = cell_tables(game)
        self.game = game
        self.utility = torch.as_tensor(utility, device=device)
        self.terminal = torch.as_tensor(terminal, device=device)
        t = game.tables(device)
        self.chance_child, self.child, self.legal = t["chance_child"], t["child"], t["legal"]

    def value(self, values: torch.Tensor, run: torch.Tensor, cells: torch.Tensor) -> torch.Tensor:
        """V at cells of runs: the exact utility at a terminal history, the run's table elsewhere."""
        return torch.where(self.terminal[cells], self.utility[cells], values[run, cells])


def corrected(tables: Tables, values: torch.Tensor, run, c0, c1, public, node, utility, trace, behaviour, offset,
              chance: bool = True):
    """The lanes' corrected values v (player 0's chips, [L]) and their path records.

    run [L] rows of `values` [R, M]; c0, c1, public, node [L] the lanes' start (after the root action); utility
    [L] int64 (`play`'s); trace: `play`'s events, in step order; behaviour [R * n_info, A] pi_t; offset [L] each
    lane's row offset in it; `chance` False: a chance step's correction is 0 (the "policy" baseline; its history
    is still recorded, so the table still learns it).  Records: (lane, step, cell, d) per step, lanes in event
    order (tensors).
    """
    game = tables.game
    cur, pub = node.clone(), public.clone()
    corr = torch.zeros(len(node), dtype=torch.float64, device=node.device)
    step = torch.zeros(len(node), dtype=torch.int64, device=node.device)
    records = []
    for ev in trace:
        lanes = ev.lanes
        r, a0, a1, here, before = run[lanes], c0[lanes], c1[lanes], cur[lanes], pub[lanes]
        if isinstance(ev, ChanceEvent):
            nxt = tables.chance_child[here]
            total = torch.zeros(len(lanes), dtype=torch.float64, device=node.device)
            for q in range(game.num_cards):
                ok = (a0 != q) & (a1 != q)
                v = tables.value(values, r, cell(game, nxt, a0, a1, torch.full_like(a0, q)))
                total = total + torch.where(ok, v, torch.zeros_like(v))
            expected = total / torch.full_like(total, float(game.num_cards - 2))   # a tensor: CUDA's
            # division by a Python number is a product with its reciprocal
            pub[lanes] = ev.card
            new = nxt
        else:
            probs = behaviour[offset[lanes] + ev.infostate]
            total = torch.zeros(len(lanes), dtype=torch.float64, device=node.device)
            for a in range(game.num_actions):
                ok = tables.legal[here, a]
                child = tables.child[here, a].clamp(min=0)
                v = tables.value(values, r, cell(game, child, a0, a1, before))
                total = total + torch.where(ok, probs[:, a] * v, torch.zeros_like(v))
            expected = total
            legal = tables.legal[here, ev.action]
            new = torch.where(legal, tables.child[here, ev.action], here)
        sampled = tables.value(values, r, cell(game, new, a0, a1, pub[lanes]))
        d = expected - sampled
        if isinstance(ev, ChanceEvent) and not chance:
            d = torch.zeros_like(d)
        corr[lanes] = corr[lanes] + d
        records.append((lanes, step[lanes].clone(), cell(game, here, a0, a1, before), d))
        step[lanes] += 1
        cur[lanes] = new
    return utility.to(torch.float64) + corr, records


def root_correction(tables: Tables, values, run, player, own, c0, c1, public, node, weights):
    """[L] (sum_c w_c V(h_0(c))) / (sum_c w_c) - V(h_0) at each lane's start (player 0's chips): the hidden card
    (the opponent's, `weights` [L, C] its posterior weights) as a sampled step."""
    game = tables.game
    products = []
    for c in range(game.num_cards):
        o0 = torch.where(player == 0, own, torch.full_like(own, c))
        o1 = torch.where(player == 0, torch.full_like(own, c), own)
        products.append(weights[:, c] * tables.value(values, run, cell(game, node, o0, o1, public)))
    expected = sum_last(torch.stack(products, dim=-1)) / sum_last(weights)
    return expected - tables.value(values, run, cell(game, node, c0, c1, public))


def update(values: torch.Tensor, counts: torch.Tensor, run, records, v, lanes_total: int, floor: float) -> None:
    """Move the tables toward the path records' targets T_k = v - (d_0 + ... + d_{k-1}), one sample after another
    in (lane, step) order (`run` [L]: the lanes' rows; lanes are in their canonical order).  Every record is of a
    history where something was drawn: never a terminal one."""
    if not records:
        return
    prefix = torch.zeros(lanes_total, dtype=torch.float64, device=v.device)
    lane, stp, cells, targets = [], [], [], []
    for lanes, k, c, d in records:
        targets.append(v[lanes] - prefix[lanes])
        prefix[lanes] = prefix[lanes] + d
        lane.append(lanes), stp.append(k), cells.append(c)
    lane, stp, cells, targets = (torch.cat(x) for x in (lane, stp, cells, targets))
    order = torch.argsort(lane * (int(stp.max()) + 1) + stp, stable=True)
    flat = run[lane[order]] * values.shape[1] + cells[order]
    targets = targets[order]
    # rank slices: slice j holds each flat cell's j-th sample (one per cell), applied in turn
    sorted_cells, by_cell = torch.sort(flat, stable=True)
    counts_per = torch.bincount(sorted_cells)
    starts = torch.cumsum(counts_per, 0) - counts_per
    rank = torch.arange(len(flat), device=flat.device) - starts[sorted_cells]
    b, n = values.view(-1), counts.view(-1)
    for j in range(int(rank.max()) + 1):
        pick = by_cell[rank == j]
        idx = flat[pick]
        n[idx] = n[idx] + 1.0
        w = torch.clamp(1.0 / n[idx], min=floor)
        b[idx] = b[idx] + w * (targets[pick] - b[idx])

