"""Results files: every reported quantity of a notebook, with its run manifest, rounded to be portable.

Every notebook writes `results/<stem>.json`: its manifest plus every
reported quantity.  The JSON is canonical (sorted keys).

Portability: numpy, BLAS, torch and numba pick kernels by CPU, and those
kernels round differently in the last bits.  So every float that leaves the
library (a results file, a glued value, a printed table) is rounded to
`SIGNIFICANT_DIGITS`; a float below `ZERO_TOLERANCE` in magnitude is zero up
to rounding and is stored and glued as 0.0, and shown in a table against its
tolerance (`residual_text`, "< 1e-12"), never as raw rounding noise.  The
bytes are then the same on every CPU unless a last-bit difference lands on a
rounding boundary of the tenth digit (rare; `make portability` checks it).
"""
from __future__ import annotations

import json
import math
import platform
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import torch

from oscc_core.digest import digest, source_digest

SIGNIFICANT_DIGITS = 10      # DESIGN section 6: what a results file, a glue value or a table may show
ZERO_TOLERANCE = 1e-12       # |x| below this is "zero up to rounding" in residual columns


def round_sig(x: float, digits: int = SIGNIFICANT_DIGITS) -> float:
    """x rounded to `digits` significant digits; |x| < ZERO_TOLERANCE is zero up to rounding and becomes 0.0.

    NaN and infinities are returned unchanged.
    """
    x = float(x)
    if not math.isfinite(x):
        return x
    return 0.0 if abs(x) < ZERO_TOLERANCE else float(f"{x:.{digits}g}")


def residual_text(value: float, tolerance: float = ZERO_TOLERANCE) -> str:
    """An identity residual as text: "< tolerance" when below it, else the value itself (a failure to see)."""
    return f"< {tolerance:.0e}" if abs(float(value)) < tolerance else f"{float(value):.2e}"


def portable(value):
    """A value as a notebook may show it: floats (also inside containers) rounded to SIGNIFICANT_DIGITS."""
    if isinstance(value, (float, np.floating)):
        return round_sig(value)
    if isinstance(value, (list, tuple)):
        return type(value)(portable(v) for v in value)
    if isinstance(value, dict):
        return {k: portable(v) for k, v in value.items()}
    return value


def glue(name: str, value, display: bool = False):
    """myst_nb.glue of `portable(value)`: the glued text is the same on every CPU."""
    from myst_nb import glue as myst_glue

    return myst_glue(name, portable(value), display=display)


def clean(obj):
    """JSON-ready copy: numpy -> Python, floats rounded to SIGNIFICANT_DIGITS, NaN -> None."""
    if isinstance(obj, Mapping):
        return {str(k): clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return clean(obj.tolist())
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        return round_sig(x) if math.isfinite(x) else None
    return obj


def write_results(output_dir, stem: str, parameters: dict, payload: dict, device) -> Path:
    """Write `<output_dir>/<stem>.json` = {"manifest": ..., **payload}; return its path."""
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{stem}.json"
    body = {"manifest": manifest(clean(parameters), device), **clean(payload)}
    path.write_text(json.dumps(body, sort_keys=True, indent=1, allow_nan=False) + "\n")
    return path


#: The numeric packages whose versions a manifest records (the lock pins them; README "Locked environment").
NUMERIC_PACKAGES = ("numpy", "numba", "llvmlite", "scipy", "torch")


def package_versions() -> dict:
    """{package: installed version} of the numeric packages (torch with its build label, e.g. 2.13.0+cpu)."""
    from importlib.metadata import version

    return {name: version(name) for name in NUMERIC_PACKAGES}


def manifest(parameters: dict, device: str) -> dict:
    """Parameters, library version, source digest, device and numeric package versions, sealed by a SHA-256."""
    from oscc_core import __version__

    body = {"parameters": parameters, "library_version": __version__, "source_digest": source_digest(),
            "device": str(device), "torch_version": torch.__version__.split("+")[0],
            "package_versions": package_versions(), "python_version": platform.python_version()}
    return {**body, "sha256": digest(body)}


def save_figure(fig, output_dir, name: str) -> Path:
    """Write `fig` as PNG `name` into `output_dir` (created if missing), without matplotlib's software stamp,
    so that the bytes do not depend on the installed version; returns the path."""
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / name, metadata={"Software": None})
    return out / name
