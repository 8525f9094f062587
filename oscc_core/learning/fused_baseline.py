"""The history baseline on the fused engines (`learning.baseline`): one lane's corrected play, the root's
correction and the baseline's update, as per-item functions.

`fused_kernels._collect_point` plays a lane with `_play_corrected` instead
of `engine.fused._play_pair` when a schedule has a baseline, and adds the
hidden card's `_root_correction` ("history"); `_baseline_updates` then moves
a run's table from the path records its points wrote (`learning.fused`
once a run's points are collected, `learning.fused_cuda` in a run's block).
They do `baseline.corrected`'s, `baseline.root_correction`'s and
`baseline.update`'s operations in the same order, bit for bit.  Like
`fused_kernels`, they keep to what numba compiles for the CPU and, from the
same source, for CUDA (`SHARED_FUNCTIONS`).
"""
from __future__ import annotations

import numpy as np

from oscc_core.engine.fused import _jit, _step
from oscc_core.fixed_math import product
from oscc_core.games import CHANCE, TERMINAL


@_jit(inline="always")
def _bl_cell(node, c0, c1, public, n_cards):
    """`baseline.cell`: the flat cell of history (node, c0, c1, public card or -1)."""
    return ((node * n_cards + c0) * n_cards + c1) * (n_cards + 1) + public + 1


@_jit(inline="always")
def _bl_value(values, r, cell, terminal, cell_utility):
    """V of a cell: the exact utility at a terminal history, run r's baseline elsewhere (player 0's chips)."""
    return cell_utility[cell] if terminal[cell] else values[r, cell]


@_jit(inline="always")
def _play_corrected(r, node, c0, c1, key, card, public, steps, player, chance_child, child, legal, info_index, cdf,
                    last_action, utility, behaviour, row0, n_cards, values, terminal, cell_utility, rec_cell,
                    rec_target, rec_len, rec_row, slot, chance_on):
    """One lane played as `_play_pair` plays it (`_step` by step, the same draws), with `baseline.corrected`'s
    corrections: returns (player 0's utility, policy draws, chance events, illegal, unfinished, corrected value v)
    and writes the lane's path records (cell, target T_k) at [rec_row, slot, k] and their number at
    [rec_row, slot].  behaviour: pi_t of every table row (run r's from `row0`); cdf, last_action: run r's;
    chance_on False: a chance step's correction is 0 (its record is kept)."""
    pub, used, dealt, illegal = public, 0, 0, False
    corr = 0.0
    k = 0
    for _ in range(steps):
        p = player[node]
        if p == TERMINAL:
            break
        here = node
        if p == CHANCE:                          # the public card: E over the cards left, minus the dealt one's
            nxt = chance_child[node]
            total = 0.0
            for q in range(n_cards):
                total = total + (_bl_value(values, r, _bl_cell(nxt, c0, c1, q, n_cards), terminal, cell_utility)
                                 if (q != c0 and q != c1) else 0.0)
            d = total / np.float64(n_cards - 2) - _bl_value(values, r, _bl_cell(nxt, c0, c1, card, n_cards),
                                                             terminal, cell_utility)
            if not chance_on:
                d = 0.0
            corr = corr + d
            rec_cell[rec_row, slot, k] = _bl_cell(node, c0, c1, pub, n_cards)
            rec_target[rec_row, slot, k] = d
            k += 1
            here = nxt
        node, pub, used, dealt, illegal, info, action = _step(
            node, c0, c1, pub, key, card, used, dealt, illegal, player, chance_child, child, legal, info_index, cdf,
            last_action)
        if info >= 0:                            # the decision: E under pi_t, minus the drawn action's
            total = 0.0
            for a in range(legal.shape[1]):
                total = total + (product(behaviour[row0 + info, a],
                                         _bl_value(values, r, _bl_cell(child[here, a], c0, c1, pub, n_cards),
                                                   terminal, cell_utility)) if legal[here, a] else 0.0)
            d = total - _bl_value(values, r, _bl_cell(node, c0, c1, pub, n_cards), terminal, cell_utility)
            corr = corr + d
            rec_cell[rec_row, slot, k] = _bl_cell(here, c0, c1, pub, n_cards)
            rec_target[rec_row, slot, k] = d
            k += 1
    done = player[node] == TERMINAL
    value = utility[node, c0, c1, pub + 1] if done else 0
    v = np.float64(value) + corr
    prefix = 0.0
    for j in range(k):                           # targets T_j = v - (d_0 + ... + d_{j-1})
        d = rec_target[rec_row, slot, j]
        rec_target[rec_row, slot, j] = v - prefix
        prefix = prefix + d
    rec_len[rec_row, slot] = k
    return value, used, dealt, illegal, not done, v


@_jit(inline="always")
def _root_correction(weights, row, r, node, own, actor, c0, c1, public, n_cards, values, terminal, cell_utility):
    """`baseline.root_correction` of a lane starting at `node`: (sum_c w_c V(h_0(c))) / (sum_c w_c) - V(h_0), w the
    hidden card's posterior weights (row `row` of `weights`)."""
    total, mass = 0.0, 0.0
    for c in range(n_cards):
        o0, o1 = (own, c) if actor == 0 else (c, own)
        term = product(weights[row, c], _bl_value(values, r, _bl_cell(node, o0, o1, public, n_cards), terminal,
                                                  cell_utility))
        total = term if c == 0 else total + term
        mass = weights[row, c] if c == 0 else mass + weights[row, c]
    return total / mass - _bl_value(values, r, _bl_cell(node, c0, c1, public, n_cards), terminal, cell_utility)


@_jit(inline="always")
def _baseline_updates(values, counts, r, rec_cell, rec_target, rec_len, t0, n_points, floor):
    """`baseline.update` of run r: the records of its points t0 .. t0 + n_points - 1, slot by slot, each lane's in
    path order: n <- n + 1, B <- B + max(1 / n, floor) (T - B)."""
    for t in range(t0, t0 + n_points):
        for s in range(rec_len.shape[1]):
            for j in range(rec_len[t, s]):
                cell = rec_cell[t, s, j]
                counts[r, cell] += 1.0
                w = max(1.0 / counts[r, cell], floor)
                values[r, cell] += product(w, rec_target[t, s, j] - values[r, cell])


#: The per-item functions, callees first: compiled here for the CPU, and from the same source for the GPU by
#: `learning.fused_cuda_functions` (before `fused_kernels`', whose `_collect_point` calls them).
SHARED_FUNCTIONS = ("_bl_cell", "_bl_value", "_play_corrected", "_root_correction", "_baseline_updates")
