"""Gathering a collection's chunks: exact running sums and the kept per-group columns.

`collect` runs chunk after chunk; each chunk's moment sums and draw counts
are reduced where its returns lie and added up in int64 there
(`Accumulator`), and the columns the collection keeps are copied into host
tensors of all groups (`KeptColumns`).  On CUDA neither waits for the
device per chunk: the sums reach the host once (or every `chunks_per_flush`
chunks, before an int64 sum could overflow) and the columns go to pinned
memory on a side stream.  Integer sums are exact in any order, so the
totals are those of the chunk-by-chunk Python-int sums, on every device
and for any chunk size.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import torch

from oscc_core.engine import fused
from oscc_core.engine.failures import FAILURE_CODES, OK, code_histogram, named_failures
from oscc_core.games import Game


def moment_vector(returns: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """`fused.moment_sums` computed where the returns lie (torch int64 ops, exact in any order), packed into
    one int64 vector there: n, sums [B], products [B, B], contrast power sums [pairs, 4] (row order)."""
    b = returns.shape[1]
    r = returns * valid.view(-1, 1)             # invalid groups add zero to every sum below
    i, j = torch.triu_indices(b, b, 1, device=returns.device)   # pairs (i, j), i < j, in row order
    d = r[:, i] - r[:, j]
    d2 = d * d
    powers = torch.stack([d.sum(0), d2.sum(0), (d2 * d).sum(0), (d2 * d2).sum(0)], dim=1)
    return torch.cat([valid.sum().view(1), r.sum(0), (r.unsqueeze(2) * r.unsqueeze(1)).sum(0).view(-1),
                      powers.view(-1)])


def device_moment_sums(returns: torch.Tensor, valid: torch.Tensor) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """`fused.moment_sums` computed where the returns lie, with one copy of the reduced sums to the host:
    (n, sums [B], products [B, B], contrast power sums [pairs, 4])."""
    b = returns.shape[1]
    packed = moment_vector(returns, valid).cpu().numpy()
    return int(packed[0]), packed[1:1 + b], packed[1 + b:1 + b + b * b].reshape(b, b), \
        packed[1 + b + b * b:].reshape(-1, 4)


def chunks_per_flush(game: Game, branches: int, budget: int, chunk_size: int) -> int:
    """How many chunks' int64 sums `Accumulator` may add up before folding them into Python ints with no
    running sum able to overflow int64.  Every per-group term -- a contrast's fourth power, a product of two
    returns, a draw count -- is at most x**4, x = 2 (max |utility| + hand length) budget branches."""
    x = 2 * (int(np.abs(game.tree.contributions).max()) + int(game.tree.depth.max()) + 1) * budget * branches
    return max(1, (2 ** 63 - 1) // (x ** 4 * chunk_size))


#: The chunk counts `Accumulator` sums as tensors (kind, category), in the order they follow the moment sums.
SUMMED = (("_keys", "chance"), ("_keys", "policy"), ("_draws", "chance"), ("_draws", "policy"))


class Accumulator:
    """Exact integer sums over valid groups, and the key and draw counts, added chunk by chunk.

    Each chunk's sums are reduced where its returns lie into one int64 vector (moment sums, the `SUMMED`
    counts, then the groups per failure code) and added there to a pending vector, so on CUDA no chunk
    waits for the device.  The pending vector is folded into the Python-int totals every `flush_every`
    chunks (`chunks_per_flush`: before it could overflow, so the totals are the exact sums of the
    chunks' sums) and at the end.
    """

    def __init__(self, branches: int, flush_every: int = 1) -> None:
        self.b, self.flush_every = branches, flush_every
        self.groups = self.n = 0
        self.sum = [0] * branches
        self.products = [[0] * branches for _ in range(branches)]
        self.contrast = {f"{i}-{j}": [0, 0, 0, 0] for i in range(branches) for j in range(i + 1, branches)}
        self.logical = {c: 0 for c in ("root", "hidden", "chance", "policy")}
        self.physical = dict(self.logical)
        self.codes = [0] * (len(FAILURE_CODES) + 1)      # groups per failure code, OK first
        self.pending, self.pending_chunks = None, 0

    def add(self, chunk: dict) -> None:
        """Add one chunk's sums and counts (the int ones at once, the reduced ones to the pending vector)."""
        returns, valid = chunk["returns"], chunk["codes"] == OK
        self.groups += len(chunk["codes"])
        for totals, kind in ((self.logical, "_keys"), (self.physical, "_draws")):
            for c, value in chunk[kind].items():
                if (kind, c) not in SUMMED:
                    totals[c] += value
        counts = torch.cat([torch.stack([chunk[kind][c] for kind, c in SUMMED]).to(torch.int64),
                            code_histogram(chunk["codes"])])
        if returns.is_cuda:
            vector = torch.cat([moment_vector(returns, valid), counts])
        else:
            n, sums, products, powers = fused.moment_sums(returns, valid)
            vector = np.concatenate([[n], sums, products.ravel(), powers.ravel(), counts.numpy()])
        self.pending = vector if self.pending is None else self.pending + vector
        self.pending_chunks += 1
        if self.pending_chunks == self.flush_every:
            self.flush()

    def flush(self) -> None:
        """Fold the pending sums into the totals (one copy from the device)."""
        if self.pending is None:
            return
        values = iter(self.pending.tolist())        # Python ints, in the order `add` packs them
        self.pending, self.pending_chunks = None, 0
        self.n += next(values)
        for i in range(self.b):
            self.sum[i] += next(values)
        for row in self.products:
            for j in range(self.b):
                row[j] += next(values)
        for sums_of_pair in self.contrast.values():   # pairs (i, j), i < j, in row order
            for p in range(4):
                sums_of_pair[p] += next(values)
        for kind, c in SUMMED:
            (self.logical if kind == "_keys" else self.physical)[c] += next(values)
        for code in range(len(self.codes)):
            self.codes[code] += next(values)

    def stats(self) -> dict:
        """The moment sums of every chunk added (folding the pending ones first)."""
        self.flush()
        return {"groups": self.groups, "n": self.n, "sum": self.sum, "sum_products": self.products,
                "contrast": self.contrast}

    def failures(self) -> dict[str, int]:
        """Groups per failure code name over every chunk added (`failures.failure_counts` of all codes)."""
        self.flush()
        return named_failures(self.codes)


class KeptColumns:
    """The per-group columns a collection keeps, gathered chunk by chunk into host tensors of all groups.

    Each chunk's columns are copied into their rows of tensors allocated at the first chunk (a collection
    of one CPU chunk keeps that chunk's tensors as they are).  On CUDA those tensors are pinned and the
    copies are queued on a side stream: pinned memory is copied at the link's full speed (pageable memory
    goes through a slow staging copy), and the side stream overlaps a chunk's copies with the next chunk's
    kernel.  `columns()` waits for them, once.  Pinning fresh memory costs more than the rest of a large
    collection (about 3 GB/s on an H100 machine); torch's pinned allocator keeps freed blocks, so later
    collections of a similar size reuse them.  Where pinning fails (more than the system lets one process
    lock), the columns go to pageable memory, with a warning: the same numbers, copied more slowly.
    """

    def __init__(self, names: tuple, n_groups: int, device: torch.device) -> None:
        self.names, self.n_groups, self.host = names, n_groups, None
        self.stream = torch.cuda.Stream(device) if device.type == "cuda" else None

    def add(self, start: int, chunk: dict) -> None:
        """Copy (on CUDA: queue the copy of) the chunk's kept columns into rows start.. of the host tensors."""
        columns = {k: chunk[k] for k in self.names}
        if self.host is None and self.stream is None and len(chunk["codes"]) == self.n_groups:
            self.host = columns
            return
        if self.host is None:
            self.host = self.allocate(columns)
        if self.stream is not None:     # the copies read what the current stream's kernels write
            self.stream.wait_stream(torch.cuda.current_stream(self.stream.device))
        with torch.cuda.stream(self.stream):        # no-op when None
            for k, column in columns.items():
                self.host[k][start:start + len(column)].copy_(column, non_blocking=self.stream is not None)
                if self.stream is not None:     # the allocator keeps the chunk's memory until its copy is done
                    column.record_stream(self.stream)

    def allocate(self, columns: dict) -> dict:
        """Empty host tensors of every group for the chunk's `columns` (pinned on CUDA, where the system allows)."""
        def empty(pin: bool) -> dict:
            return {k: torch.empty((self.n_groups, *v.shape[1:]), dtype=v.dtype, device="cpu", pin_memory=pin)
                    for k, v in columns.items()}
        if self.stream is None:
            return empty(False)
        try:
            return empty(True)
        except RuntimeError as error:
            size = sum(math.prod(v.shape[1:]) * v.element_size() for v in columns.values()) * self.n_groups
            warnings.warn(f"pinning {size / 2 ** 20:,.0f} MiB of host memory for the kept columns failed "
                          f"({str(error).splitlines()[0]}); they are copied to pageable memory instead (the same "
                          "numbers, more slowly).", RuntimeWarning, stacklevel=2)
            return empty(False)

    def columns(self) -> dict:
        """The kept columns of all groups, as CPU tensors (waiting for the last copy)."""
        if self.stream is not None:
            self.stream.synchronize()
        return self.host
