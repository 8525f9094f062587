"""Per-run cost ledger of the learners: every count is an exact int64, summed over iterations.

physical_calls   the budget's unit: branch rollouts (ppo: hands played from the deal)
transitions      environment steps: forced root actions plus every drawn decision
decisions        policy draws (continuation actions, grpo's sampled root actions, ppo's actions)
root_draws       uniforms of the `root` stream (one per decision point or hand)
groups           decision points (ppo: hands) that entered an update
unused_hands     ppo hands left out because they would pass the budget (the fused engines never play them)
illegal          illegal actions drawn (0 in every admissible run)
terms            surrogate terms times epochs
clipped_terms    of those, clip-selected
iterations       iterations the run took part in
"""
from __future__ import annotations

import numpy as np
import torch

FIELDS = ("physical_calls", "transitions", "decisions", "root_draws", "groups", "unused_hands", "illegal", "terms",
          "clipped_terms", "iterations")


class Ledger:
    """Counts [R] per field; `add(field, run, amount)` adds lane- or term-level amounts by run row."""

    def __init__(self, num_runs: int, device) -> None:
        self.counts = {f: torch.zeros(num_runs, dtype=torch.int64, device=device) for f in FIELDS}

    def add(self, field: str, run: torch.Tensor, amount: torch.Tensor | int = 1) -> None:
        amount = torch.as_tensor(amount, dtype=torch.int64, device=run.device).expand_as(run)
        self.counts[field].index_add_(0, run, amount)

    def row(self, r: int) -> dict[str, int]:
        return {f: int(v[r]) for f, v in self.counts.items()}

    def array(self) -> np.ndarray:
        """[fields, R] the counts as a NumPy array, fields in `FIELDS` order."""
        return np.stack([self.counts[f].cpu().numpy() for f in FIELDS])
