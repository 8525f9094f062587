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


def source_digest() -> str:
    """SHA-256 over the library's own source files, in path order."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()
