"""Memory estimates: a computation whose kept data would not fit is refused before it starts.

The limit is MEMORY_FRACTION of the machine's physical memory.  Callers give
the number of units (groups, draws) and an upper estimate of the bytes each
keeps; the error sentence gives the estimate, the limit and the largest
count that fits.
"""
from __future__ import annotations

import os

#: A computation may use at most this share of the machine's physical memory.
MEMORY_FRACTION = 0.5


def physical_memory() -> int:
    """Bytes of physical memory on this machine (0 when the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # pragma: no cover - non-POSIX systems
        return 0


def memory_limit() -> int:
    """Bytes a computation may hold: MEMORY_FRACTION of physical memory (16 GiB when unknown)."""
    total = physical_memory()
    return int(total * MEMORY_FRACTION) if total > 0 else 16 << 30


def format_bytes(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"  # pragma: no cover


def check_memory(name: str, value: int, bytes_each: int, unit: str = "group", limit: int | None = None,
                 hint: str = "") -> int:
    """`value` when `value` units of `bytes_each` bytes fit the limit; else a ValueError giving both."""
    limit = memory_limit() if limit is None else limit
    need = int(value) * int(bytes_each)
    if need > limit:
        raise ValueError(
            f"{name}={value:,} needs about {format_bytes(need)} of memory ({bytes_each:,} bytes per {unit}), "
            f"more than the limit of {format_bytes(limit)} (half of this machine's memory); "
            f"use at most {limit // bytes_each:,}{hint}.")
    return value
