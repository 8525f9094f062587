"""Canonical JSON and SHA-256 digests: of run parameters, traces and the library's own source."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path


def canonical_json(obj) -> str:
    """JSON with sorted keys and no whitespace: the byte string digests are taken of."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)


def digest(obj) -> str:
    return hashlib.sha256(canonical_json(obj).encode()).hexdigest()


def source_digest(parts: tuple[str, ...] | None = None) -> str:
    """SHA-256 over the library's own source files, in path order; with `parts`, only the files those paths
    inside `oscc_core` name (a subpackage, "engine", or a module, "learning/loop.py") and the top-level modules."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    paths = sorted(root.rglob("*.py"))
    if parts is not None:
        def named(path: Path) -> bool:
            rel = path.relative_to(root).as_posix()
            return path.parent == root or any(rel == part or rel.startswith(part.rstrip("/") + "/")
                                              for part in parts)
        paths = [p for p in paths if named(p)]
    for path in paths:
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()
