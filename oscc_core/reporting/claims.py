"""The paper's reported numbers and the book's verdict rule.

Paper values live in ``book/paper_claims.yaml`` (the project's own copy of the
paper's numbers, one entry per place where a number is printed). Notebooks read
them through :func:`claim` at run time and never type a paper number.

Verdict rule (DESIGN.md section 10), implemented by :func:`verdict`:

* ``"reproduced"``: the paper's value lies in our 95% interval, or, where we
  have no interval, our estimate (an exact value included) is within 5% of the
  paper's value;
* ``"partly"``: not reproduced in size, but the row declares a qualitative
  relation the paper states for this number (a :class:`Relation`, such as
  ``full < independent`` or ``reduction > 0``) and the relation holds on our
  numbers.  A row that declares no relation cannot be partly;
* ``"not reproduced"``: otherwise.

Two verdicts are not reached by comparing sizes, and each carries a reason
(see `oscc_core.reporting.rows.Row`): ``"impossible under the rules"`` (the
paper's value breaks a bound the game's rules impose; the row names the bound)
and ``"not compared"``.
"""
from __future__ import annotations

import math
from decimal import Decimal
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

REPRODUCED = "reproduced"
PARTLY = "partly"
NOT_REPRODUCED = "not reproduced"
IMPOSSIBLE = "impossible under the rules"
NOT_COMPARED = "not compared"
VERDICTS = (REPRODUCED, PARTLY, NOT_REPRODUCED, IMPOSSIBLE, NOT_COMPARED)

#: Relative tolerance used when no interval is available.
RELATIVE_TOLERANCE = 0.05

#: Repository root: the parent of the ``oscc_core`` package directory.
REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_PATH = REPO_ROOT / "book" / "paper_claims.yaml"


@lru_cache(maxsize=None)
def _load(path: str) -> dict[str, dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        entries = yaml.safe_load(fh)
    if not isinstance(entries, list):
        raise ValueError(f"{path} must hold a YAML list of claim entries.")
    out: dict[str, dict[str, Any]] = {}
    for entry in entries:
        cid = entry["id"]
        if cid in out:
            raise ValueError(f"Claim id {cid!r} appears twice in {path}.")
        out[cid] = entry
    return out


def load_claims(path: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """Return every claim entry keyed by its id.

    ``path`` defaults to ``book/paper_claims.yaml`` under the repository root.
    Each entry is a dict with ``id, source, section, game, row, column, value,
    unit, kind, note`` and optionally ``same_as``. The result is cached; treat
    it as read-only (a shallow copy of the mapping is returned).
    """
    p = Path(path) if path is not None else DEFAULT_PATH
    return dict(_load(str(p.resolve())))


def claim(claim_id: str, path: str | Path | None = None) -> Any:
    """Return the paper's value for ``claim_id`` (a number, [low, high] or a string)."""
    claims = load_claims(path)
    if claim_id not in claims:
        raise KeyError(f"No paper claim has the id {claim_id!r}; see book/paper_claims.yaml.")
    return claims[claim_id]["value"]


def claim_entry(claim_id: str, path: str | Path | None = None) -> dict[str, Any]:
    """Return the whole entry (value, unit, source, row, column, note) for ``claim_id``."""
    claims = load_claims(path)
    if claim_id not in claims:
        raise KeyError(f"No paper claim has the id {claim_id!r}; see book/paper_claims.yaml.")
    return dict(claims[claim_id])


@dataclass(frozen=True)
class Relation:
    """A qualitative relation the paper states for a number, evaluated on our numbers.

    ``text`` states the paper's claim in a few symbols ("full < independent",
    "reduction > 0", "value <= bound", "independent > root_only > full");
    ``holds`` says whether it holds on our numbers.  A row that declares a
    holding relation and misses the paper's size is *partly*.
    """

    text: str
    holds: bool

    def __post_init__(self):
        if not isinstance(self.text, str) or not self.text.strip():
            raise ValueError("A relation needs its text, e.g. 'full < independent'.")
        if self.holds is None:
            raise TypeError(f"Relation {self.text!r}: holds must be true or false, not None.")
        object.__setattr__(self, "holds", bool(self.holds))  # numpy booleans -> bool


def printed_rounding(value) -> float:
    """Half a unit in the last decimal of a paper number as stored: the most its printing can hide
    (same units as the number)."""
    return 0.5 * 10.0 ** Decimal(repr(float(value))).normalize().as_tuple().exponent


def _finite(x: Any, name: str) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number, got {x!r}.") from None
    return v


def verdict(
    paper_value: float,
    estimate: float | None = None,
    low: float | None = None,
    high: float | None = None,
    *,
    relation: Relation | None = None,
) -> str:
    """Classify one reproduced quantity against the paper's value.

    Parameters
    ----------
    paper_value:
        The number the paper reports (read it with :func:`claim`).
    estimate:
        Our point estimate (or exact value). Required when no interval is given.
    low, high:
        Our 95% interval. Give both or neither.
    relation:
        The qualitative relation the paper states for this number (a
        :class:`Relation`: its text and whether it holds on our numbers), or
        ``None`` when the row declares none; then the verdict cannot be partly.

    Returns
    -------
    str
        ``"reproduced"`` when ``low <= paper_value <= high`` or, without an
        interval, when ``|estimate - paper_value| <= 0.05 * |paper_value|``;
        otherwise ``"partly"`` when a declared ``relation`` holds; otherwise
        ``"not reproduced"``. A NaN estimate or bound never reproduces.
    """
    if relation is not None and not isinstance(relation, Relation):
        raise TypeError(f"relation must be a Relation(text, holds) or None, got {relation!r}.")
    p = _finite(paper_value, "paper_value")
    if (low is None) != (high is None):
        raise ValueError("Give both ends of the 95% interval (low and high) or neither.")
    if low is not None:
        lo, hi = _finite(low, "low"), _finite(high, "high")
        if lo > hi:
            raise ValueError(f"The interval is reversed: low={lo} > high={hi}.")
        ok = lo <= p <= hi  # False when any side is NaN
        missing = math.isnan(lo) or math.isnan(hi)
    else:
        if estimate is None:
            raise ValueError("Give an estimate or a 95% interval.")
        e = _finite(estimate, "estimate")
        ok = (not math.isnan(e)) and abs(e - p) <= RELATIVE_TOLERANCE * abs(p)
        missing = math.isnan(e)
    if ok:
        return REPRODUCED
    if relation is not None and relation.holds and not missing:   # no number, no size to miss: never partly
        return PARTLY
    return NOT_REPRODUCED


# --- Sphinx role: {claim}`id` prints the paper's value in the book's prose --

def format_value(value: Any) -> str:
    """Format a claim value as the prose shows it (thousands separators for counts)."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:g}" if value.is_integer() else repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    return str(value)


def _claim_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{claim}`id``` inserts the paper's value for ``id`` from book/paper_claims.yaml."""
    from docutils import nodes

    cid = text.strip()
    try:
        value = claim(cid)
    except KeyError as exc:
        msg = inliner.reporter.error(str(exc.args[0]), line=lineno)
        return [inliner.problematic(rawtext, rawtext, msg)], [msg]
    node = nodes.inline(rawtext, format_value(value), classes=["paper-claim"])
    return [node], []


def setup(app):  # pragma: no cover - exercised by the book build
    """Sphinx extension entry point (listed in _config.yml ``sphinx.extra_extensions``)."""
    app.add_role("claim", _claim_role)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
