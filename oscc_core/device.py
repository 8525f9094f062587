"""Device choice: CPU by default, CUDA when present and asked for."""
from __future__ import annotations

import torch

DEVICES = ("auto", "cpu", "cuda")


def resolve_device(device: str = "auto") -> torch.device:
    """'auto' -> CUDA when available else CPU; 'cuda' without CUDA is a ValueError."""
    if not isinstance(device, str) or device.split(":")[0] not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES} (or 'cuda:N'), got {device!r}.")
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError("device='cuda' was requested but CUDA is not available on this machine; use 'cpu' or 'auto'.")
    return torch.device(device)
