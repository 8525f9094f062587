"""The paper's reported numbers and the book's verdict rule.

Paper values live in ``book/paper_claims.yaml`` (the project's own copy of the
paper's numbers, one entry per place where a number is printed). Notebooks read
them through :func:`claim` at run time and never type a paper number.

Verdict rule, implemented by :func:`verdict`.  The size test: the paper's
value lies in our 95% interval (*containment*) or, where we have no interval
(an exact value, a count) or one of zero width (every seed gave the same value:
an exact value too), the paper's value is within 5% of our value,
``|paper - ours| <= 0.05 |ours|`` (*within 5% of ours*).  Then:

* ``"inconclusive"``: the size test passes, but the relation the paper states
  for the number (a :class:`Relation`) fails on our estimate, or our interval
  also holds a value that contradicts it (the other sign of a difference, the
  reversed ordering; for a quantity positive by definition, a variance or a
  ratio, an interval reaching 0).  Never reproduced;
* ``"reproduced"``: the size test passes and nothing above applies;
* ``"partly"``: the size test fails, but the row declares the relation the
  paper states and it holds on our numbers (and is not contradicted inside our
  interval).  A row that declares no relation cannot be partly;
* ``"not reproduced"``: otherwise.

A quantity compared under several readings of the paper's words whose verdicts
differ is ``"depends on the reading"`` (`reporting.readings`); a quantity whose
size the book declares not comparable (`reporting.comparability`) is not
compared, and the relation it declares is judged on its own.  A relation that
holds by construction (``Relation.by_construction``) decides nothing.

Two verdicts are not reached by comparing sizes, and each carries a reason
(see `oscc_core.reporting.rows.Row`): ``"impossible under the rules"`` (the
paper's value breaks a bound the game's rules impose under every reading of
the quantity the row lists; the row names the bound and the readings) and
``"not compared"``.  Settings of the paper's runs (sample sizes, grids, seeds)
get a status, not a verdict: ``"adopted"`` (our run uses the paper's setting)
or ``"differs"`` (with the reason).
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
INCONCLUSIVE = "inconclusive"
PARTLY = "partly"
NOT_REPRODUCED = "not reproduced"
IMPOSSIBLE = "impossible under the rules"
NOT_COMPARED = "not compared"
#: The verdict of a quantity whose verdict differs between the readings of the paper's words that the book
#: measures, where the paper's text does not fix one (the line lists each reading's verdict).
DEPENDS = "depends on the reading"
#: Verdicts of results and checks, from the most to the least favourable to the paper (a reading-dependent
#: verdict between the favourable and the unfavourable ones).
VERDICTS = (REPRODUCED, INCONCLUSIVE, PARTLY, DEPENDS, NOT_REPRODUCED, IMPOSSIBLE, NOT_COMPARED)
#: Verdicts reached by comparing sizes, most favourable first (a reading's verdict is one of these).
COMPARED = (REPRODUCED, INCONCLUSIVE, PARTLY, NOT_REPRODUCED)

ADOPTED = "adopted"
DIFFERS = "differs"
#: The status of a setting of the paper's run (a sample size, a grid, a seed list): never a verdict.
STATUSES = (ADOPTED, DIFFERS)

#: Relative tolerance used when no interval is available, as a fraction of our value.
RELATIVE_TOLERANCE = 0.05

#: The names of the size tests, as ledger lines and rows record which one decided ("test").
CONTAINMENT = "containment: the paper's value in our 95% interval"
WITHIN_TOLERANCE = "within 5% of our value"

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
    ``holds`` says whether it holds on our point estimates; ``by_construction``
    that it holds whatever we measure (so it never makes a row partly); ``resolved`` whether
    our 95% intervals decide it: True when no value inside them contradicts it,
    False when one does (an interval of a difference that spans 0, orderings
    whose paired differences are not all resolved), None when the relation is
    between exact numbers or the row has no interval-level test.  A relation
    that fails, or holds but is not resolved, makes a row whose size agrees
    *inconclusive*; one that holds (and is not unresolved) makes a row whose
    size disagrees *partly*.
    """

    text: str
    holds: bool
    resolved: bool | None = None
    by_construction: bool = False

    def __post_init__(self):
        if not isinstance(self.text, str) or not self.text.strip():
            raise ValueError("A relation needs its text, e.g. 'full < independent'.")
        if self.holds is None:
            raise TypeError(f"Relation {self.text!r}: holds must be true or false, not None.")
        object.__setattr__(self, "holds", bool(self.holds))  # numpy booleans -> bool
        if self.resolved is not None:
            object.__setattr__(self, "resolved", bool(self.resolved))

    @property
    def established(self) -> bool:
        """Holds on our estimate and no value inside our intervals contradicts it (never for a relation that
        holds by construction: it could not have failed, so it shows nothing)."""
        return self.holds and self.resolved is not False and not self.by_construction

    def constructed(self) -> "Relation":
        """The same relation declared true by construction (physical draws that grow with the calibration size
        because each size draws more groups): shown beside the number, but it never makes a verdict partly."""
        return Relation(self.text, self.holds, self.resolved, by_construction=True)

    @classmethod
    def side(cls, text: str, value: float, low: float | None = None, high: float | None = None, *,
             above: float | None = None, below: float | None = None) -> "Relation":
        """``value > above`` or ``value < below`` (give one), resolved when the interval [low, high] lies
        wholly on that side; without an interval, ``resolved`` is None."""
        if (above is None) == (below is None):
            raise ValueError("Give exactly one of above= or below= for a one-sided relation.")
        if above is not None:
            holds, resolved = value > above, (None if low is None else low > above)
        else:
            holds, resolved = value < below, (None if high is None else high < below)
        return cls(text, bool(holds), resolved)


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


def size_agrees(paper_value: float, estimate: float | None = None, low: float | None = None,
                high: float | None = None) -> bool:
    """The size test of the verdict rule: ``low <= paper <= high`` or, without an interval,
    ``|paper - estimate| <= 0.05 |estimate|`` (5% of our value).  An interval of zero width (``low == high``:
    every seed gave one value) is that exact value, and gets the 5% test on it.  A NaN estimate or bound never
    agrees."""
    p = _finite(paper_value, "paper_value")
    if (low is None) != (high is None):
        raise ValueError("Give both ends of the 95% interval (low and high) or neither.")
    if low is not None:
        lo, hi = _finite(low, "low"), _finite(high, "high")
        if lo > hi:
            raise ValueError(f"The interval is reversed: low={lo} > high={hi}.")
        if lo == hi:
            return abs(p - lo) <= RELATIVE_TOLERANCE * abs(lo)
        return lo <= p <= hi  # False when any side is NaN
    if estimate is None:
        raise ValueError("Give an estimate or a 95% interval.")
    e = _finite(estimate, "estimate")
    return (not math.isnan(e)) and abs(p - e) <= RELATIVE_TOLERANCE * abs(e)


def size_test(low: float | None = None, high: float | None = None) -> str:
    """The name of the size test :func:`size_agrees` applies: containment with an interval of some width, else
    (no interval, or one of zero width) 5% of ours."""
    if low is None and high is None:
        return WITHIN_TOLERANCE
    return WITHIN_TOLERANCE if low is not None and high is not None and float(low) == float(high) else CONTAINMENT


def verdict(
    paper_value: float,
    estimate: float | None = None,
    low: float | None = None,
    high: float | None = None,
    *,
    relation: Relation | None = None,
    positive: bool = False,
) -> str:
    """Classify one reproduced quantity against the paper's value (the rule of the module docstring).

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
        :class:`Relation`), or ``None`` when the row declares none; then the
        verdict cannot be partly, and only `positive` can make it inconclusive.
    positive:
        The quantity is positive by definition (a variance, a ratio of
        variances): an interval that reaches 0 holds a value that contradicts it.

    Returns
    -------
    str
        ``"inconclusive"``, ``"reproduced"``, ``"partly"`` or ``"not reproduced"``.
    """
    if relation is not None and not isinstance(relation, Relation):
        raise TypeError(f"relation must be a Relation(text, holds) or None, got {relation!r}.")
    agrees = size_agrees(paper_value, estimate, low, high)
    missing = any(x is not None and math.isnan(_finite(x, "value")) for x in (estimate, low, high)) or \
        (low is None and estimate is None)
    if relation is not None and relation.by_construction:
        relation = None                     # it could not have failed: it decides nothing
    if agrees:
        contradicted = positive and low is not None and float(low) <= 0.0
        if contradicted or (relation is not None and not relation.established):
            return INCONCLUSIVE
        return REPRODUCED
    if relation is not None and relation.established and not missing:   # no number, no size to miss
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
