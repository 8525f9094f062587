"""Sums by destination row with one fixed order of the terms, the same on every device.

Floating-point addition is not associative, so a sum's last bits depend on
the order of its terms.  `torch.Tensor.index_add_` on the CPU adds the terms
of each destination row one after the other, in term order; on CUDA it adds
them with atomic operations, whose order changes from launch to launch.  A
learner's trajectory is chaotic: one unit in the last place of a gradient
moves it somewhere else within a few thousand iterations.

`ordered_index_add` therefore adds every row's terms in term order on every
device.  On the CPU it is `index_add_` itself (so the CPU's numbers are the
ones they always were); elsewhere it ranks each term within its row and adds
rank slices one after the other: slice j holds the j-th term of every row
that has one, so no row occurs twice in a slice and each slice is a plain
indexed addition.  Row r then receives ((target_r + s_0) + s_1) + ...,
exactly the CPU's sequence of roundings.

Sums of small integers held in floats (counts of 0s and 1s) are exact in any
order; they go through the same function so that no reader has to check.
"""
from __future__ import annotations

import torch


def ordered_index_add(target: torch.Tensor, index: torch.Tensor, source: torch.Tensor,
                      ranked: bool | None = None) -> torch.Tensor:
    """target[index[k]] += source[k] along dim 0, each row's terms added in increasing k; in place, returns target.

    target [M, ...], index [K] int64 rows of target, source [K, ...] (target's trailing shape).
    `ranked` picks the formulation: False is `index_add_` (the CPU's order), True the rank slices
    (any device, the same bits as the CPU's `index_add_`); None (default) takes `index_add_` on the
    CPU and the rank slices elsewhere.
    """
    if ranked is None:
        ranked = target.device.type != "cpu"
    if not ranked:
        return target.index_add_(0, index, source)
    if index.numel() == 0:
        return target
    order, rank = _rank_within_rows(index, target.shape[0])
    sorted_rows = index.index_select(0, order)
    for j in range(int(rank.max()) + 1):          # a host sync per call: the number of slices
        pick = order[rank == j]                   # term ids of slice j, one per row at most
        rows = sorted_rows[rank == j]
        target[rows] = target[rows] + source.index_select(0, pick)
    return target


def _rank_within_rows(index: torch.Tensor, num_rows: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Term ids sorted by (row, term id) and, for each of them, its rank among its row's terms (0, 1, ...)."""
    order = torch.argsort(index, stable=True)     # stable: a row's terms stay in term order
    counts = torch.bincount(index, minlength=num_rows)
    starts = torch.cumsum(counts, dim=0) - counts  # exclusive prefix sums (integers: exact)
    position = torch.arange(index.numel(), dtype=torch.int64, device=index.device)
    return order, position - starts.index_select(0, index.index_select(0, order))
