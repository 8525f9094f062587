"""Failure codes: why a comparison group left a denominator.

Nothing leaves a denominator silently: every excluded group carries one of
these codes and the counts are reported beside the statistics.
"""
from __future__ import annotations

import torch

OK = 0
FAILURE_CODES = {
    1: ("ROOT_DRIFT", "branches of a group disagree on the root information state"),
    2: ("OBS_DRIFT", "the observation hash changed under a hidden-field perturbation"),
    3: ("HIDDEN_LEAK", "a policy key or input depends on a hidden field"),
    4: ("STREAM_GAP", "a stream counter skipped, repeated or collided with another address"),
    5: ("EARLY_END", "a branch stopped before reaching a terminal state"),
    6: ("ILLEGAL", "a sampled action was not legal at its state"),
    7: ("JOIN_ORDER", "an oracle or solver field was joined before the trace was frozen"),
    8: ("SOLVER_TIMEOUT", "an exact evaluation did not finish within its budget"),
}
CODE_OF = {name: code for code, (name, _) in FAILURE_CODES.items()}


def code_histogram(codes: torch.Tensor) -> torch.Tensor:
    """Groups per code 0 (OK) .. 8, int64, counted where the codes lie without waiting for a GPU."""
    size = len(FAILURE_CODES) + 1
    if not codes.is_cuda:
        return torch.bincount(codes.to(torch.int64), minlength=size)[:size]
    # torch's CUDA bincount first copies the codes' min and max to the host: compare with every code instead
    return (codes.view(-1, 1) == torch.arange(size, dtype=codes.dtype, device=codes.device)).sum(0)


def named_failures(histogram) -> dict[str, int]:
    """Number of groups per failure code name (OK groups are not listed), from `code_histogram`'s counts."""
    return {FAILURE_CODES[c][0]: int(histogram[c]) for c in FAILURE_CODES}


def failure_counts(codes: torch.Tensor) -> dict[str, int]:
    """Number of groups per failure code name (OK groups are not listed)."""
    return named_failures(code_histogram(codes.cpu()))
