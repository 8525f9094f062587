"""Where numba keeps the compiled CPU kernels: one directory per version of the kernels' source.

numba's on-disk cache is keyed by the file of the function it compiled.  A
kernel that inlines functions of other modules (`learning.fused.collect`
inlines `fused_kernels`', `fused_baseline`'s and `fused_episodes`'
functions) is not recompiled when only those modules change, and would go
on running the old code.  The
kernels' sources are therefore hashed into the cache directory's name: a
change to any of them starts a fresh cache, and a checkout of an older
commit finds its own.  The directory lies outside the package, so running
the book never writes into the source tree; NUMBA_CACHE_DIR, when set, wins.
Each use marks its directory; only the `KEEP_VERSIONS` most recently used
stay, so switching between commits does not fill the disk.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
from pathlib import Path

#: Every module that numba compiles, whose functions a compiled kernel inlines, or whose constants it freezes
#: into the compiled code (the streams' mixing constants, the ledger's fields, node codes, failure codes).
KERNEL_SOURCES = ("fixed_math.py", "engine/fused.py", "learning/fused.py", "learning/fused_kernels.py",
                  "learning/fused_baseline.py", "learning/fused_episodes.py", "engine/rng.py", "learning/ledger.py",
                  "games/tree.py", "engine/failures.py")
_ROOT = Path(__file__).resolve().parent
#: Cache directories (kernel versions) kept: the most recently used.
KEEP_VERSIONS = 8
_VERSION_NAME = re.compile(r"[0-9a-f]{16}")


def kernel_digest(root: Path = _ROOT, sources=KERNEL_SOURCES) -> str:
    """The first 16 hex digits of SHA-256 over the kernel modules' paths and bytes."""
    h = hashlib.sha256()
    for rel in sources:
        h.update(rel.encode())
        h.update((Path(root) / rel).read_bytes())
    return h.hexdigest()[:16]


def kernel_cache_dir() -> str:
    """~/.cache/oscc_core/numba/<kernel digest> (under XDG_CACHE_HOME when set)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(base, "oscc_core", "numba", kernel_digest())


def configure() -> None:
    """Point numba's cache at `kernel_cache_dir` unless NUMBA_CACHE_DIR is set (call before any `cache=True`),
    mark it used and remove the versions used least recently."""
    import numba

    if not os.environ.get("NUMBA_CACHE_DIR"):
        numba.config.CACHE_DIR = kernel_cache_dir()
        prune(Path(numba.config.CACHE_DIR))


def prune(current: Path, keep: int = KEEP_VERSIONS) -> list[Path]:
    """Mark `current` used (its modification time) and delete all but the `keep` most recently used version
    directories beside it (only names of 16 hex digits, which this module makes); returns those deleted.  A
    directory that cannot be removed (another process, permissions) is left: the cache is only an optimisation."""
    try:
        current.mkdir(parents=True, exist_ok=True)
        os.utime(current)
        names = [d.name for d in current.parent.iterdir() if _VERSION_NAME.fullmatch(d.name)]
    except OSError:
        return []
    used = {}
    for name in names:                     # another process may remove one meanwhile: it is then skipped
        try:
            used[name] = (name != current.name, -(current.parent / name).stat().st_mtime)
        except OSError:
            continue
    stale = [current.parent / name for name in sorted(used, key=used.get)[keep:]]
    for old in stale:
        shutil.rmtree(old, ignore_errors=True)
    return [old for old in stale if not old.exists()]
