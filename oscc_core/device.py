"""Device choice: CPU by default, CUDA when present and asked for."""
from __future__ import annotations

import re

import torch

DEVICES = ("auto", "cpu", "cuda")
#: Where host-side work runs whatever the run's device: the audits' replays, exact integer sums, bootstraps.
#: Tensors there are created on it by name, never on torch's default device.
HOST = torch.device("cpu")


def resolve_device(device: str = "auto") -> torch.device:
    """'auto' -> CUDA when available else CPU; 'cuda' without CUDA is a ValueError.

    Accepted: "auto", "cpu", "cuda" and "cuda:N" (N the index of a visible GPU).
    """
    if not isinstance(device, str) or not re.fullmatch(r"auto|cpu|cuda(:[0-9]+)?", device):
        raise ValueError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N' (N a GPU index), got {device!r}.")
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError("device='cuda' was requested but CUDA is not available on this machine; use 'cpu' or 'auto'.")
    if device.startswith("cuda:") and int(device[5:]) >= torch.cuda.device_count():
        raise ValueError(f"device must name a visible GPU, but {device!r} is out of range "
                         f"(this machine has {torch.cuda.device_count()}).")
    return torch.device(device)
