"""One row of a paper-beside-reproduction table: the paper's value, ours, and the verdict.

`Row` is the single row type of the book.  Each kind of comparison has a
named constructor that applies its rule (the verdict rule of
`oscc_core.reporting.claims` for estimates; exact equality for counts; a
bound for the numbers the paper prints as "< x").  A row reads like the
dict the tables and results files were built from (`row["verdict"]`), in a
fixed column order.

The verdict rule of DESIGN.md section 10 lives here and in `claims.verdict`:

* a row is *partly* only when it declares the relation it tests (a
  `Relation`, e.g. ``Relation("full < independent", ours_full < ours_ind)``,
  stating what the paper claims for the number) and the relation holds on our
  numbers while the size does not; the relation's text is shown in the row;
* *impossible under the rules* (`Row.impossible`): the paper's value breaks a
  bound the game's rules impose, named in the row's reason;
* *not compared* (`Row.not_compared`): with a one-sentence reason;
* every row carries its relative deviation, ours / paper - 1, where both are
  numbers and the paper's is not zero.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from numbers import Real

from oscc_core.reporting import claims
from oscc_core.reporting.claims import Relation
from oscc_core.reporting.results import residual_text

NO_PAPER = "no paper value"          # verdict of a row the paper gives no number for
NOT_COMPARED = claims.NOT_COMPARED   # verdict of a row whose paper value we do not compare, with the reason
IMPOSSIBLE = claims.IMPOSSIBLE       # verdict of a row whose paper value breaks a bound of the game's rules

__all__ = ["IMPOSSIBLE", "NOT_COMPARED", "NO_PAPER", "Relation", "Row", "parse_fraction", "relative_deviation"]


def relative_deviation(paper, ours) -> float | None:
    """ours / paper - 1 when both are (finite) numbers and the paper's is not zero, else None."""
    def number(x):
        return isinstance(x, Real) and not isinstance(x, bool) and math.isfinite(float(x))
    if not (number(paper) and number(ours)) or float(paper) == 0.0:
        return None
    return float(ours) / float(paper) - 1.0


def _declared(relation: Relation | None) -> dict:
    """The Row fields of a declared relation (its text and whether it holds); empty when none is declared."""
    if relation is None:
        return {}
    if not isinstance(relation, Relation):
        raise TypeError(f"relation must be a Relation(text, holds) or None, got {relation!r}.")
    return {"relation": relation.text, "relation_holds": relation.holds}


def parse_fraction(value) -> tuple[int, int]:
    """'k/n' -> (k, n)."""
    num, den = str(value).split("/")
    return int(num), int(den)


@dataclass(frozen=True)
class Row(Mapping):
    """quantity, paper value, our value (with its 95% interval and exact value), verdict and claim id.

    Values are in the quantity's own units (chips, chips squared, a ratio or a
    count); `ours` and `paper` may also be text where the paper prints text
    ("< 1e-12", "7/7").  `relation` is the text of the relation the row
    declares (None unless declared) and `relation_holds` whether it holds on
    our numbers (kept on the row, not in its record); `relative_deviation`
    (ours / paper - 1) is derived from `paper` and `ours`.  A partly row must declare a
    relation; an impossible or not-compared row must give its reason.
    """

    quantity: str
    paper: object
    ours: object
    verdict: str
    claim_id: str | None = None
    interval: tuple | None = None
    exact: object = None
    paper_interval: tuple | None = None
    reason: str | None = None
    relation: str | None = None
    relation_holds: bool | None = None
    relative_deviation: float | None = field(init=False, default=None)

    def __post_init__(self):
        object.__setattr__(self, "relative_deviation", relative_deviation(self.paper, self.ours))
        if self.verdict == claims.PARTLY and not (self.relation and self.relation_holds):
            raise ValueError(f"{self.quantity!r}: a row is partly only when it declares a relation that holds.")
        if self.verdict in (claims.IMPOSSIBLE, claims.NOT_COMPARED) and not (self.reason and self.reason.strip()):
            raise ValueError(f"{self.quantity!r}: a row that is {self.verdict!r} needs its reason.")

    # --- constructors, one per kind of comparison ------------------------------------
    @classmethod
    def compare(cls, quantity: str, claim_id: str, ours: float, low: float | None = None,
                high: float | None = None, relation: Relation | None = None, exact: float | None = None) -> "Row":
        """An estimate (or exact value) against the paper's number, by the verdict rule of `claims.verdict`.

        `relation` is the qualitative relation the paper states for this number,
        evaluated on our numbers; without one the row cannot be partly.
        """
        paper = claims.claim(claim_id)
        return cls(quantity, paper, ours, claims.verdict(paper, ours, low, high, relation=relation), claim_id,
                   None if low is None else (low, high), exact, **_declared(relation))

    @classmethod
    def estimate(cls, quantity: str, claim_id: str | None, est, relation: Relation | None = None) -> "Row":
        """A `method.stats.Estimate` against a claim; without a claim id, a row with no paper value."""
        if claim_id is None:
            return cls.no_paper(quantity, est.value, (est.low, est.high), est.exact)
        return cls.compare(quantity, claim_id, est.value, est.low, est.high, relation, est.exact)

    @classmethod
    def no_paper(cls, quantity: str, ours, interval: tuple | None = None, exact=None) -> "Row":
        """A quantity we report that the paper gives no number for."""
        return cls(quantity, None, ours, NO_PAPER, None, interval, exact)

    @classmethod
    def below(cls, quantity: str, claim_id: str, ours: float) -> "Row":
        """The paper prints an upper bound '< x': reproduced when ours < x."""
        paper = claims.claim(claim_id)
        ok = ours < float(paper)
        return cls(quantity, f"< {paper:g}", ours, claims.REPRODUCED if ok else claims.NOT_REPRODUCED, claim_id)

    @classmethod
    def residual(cls, quantity: str, claim_id: str, ours: float) -> "Row":
        """A residual the paper bounds by '< x': reproduced when |ours| < x; shown against the bound."""
        bound = float(claims.claim(claim_id))
        ok = abs(ours) < bound
        return cls(quantity, f"< {bound:g}", residual_text(ours, bound),
                   claims.REPRODUCED if ok else claims.NOT_REPRODUCED, claim_id, exact=0.0)

    @classmethod
    def identity(cls, quantity: str, paper_text: str, residual: float, tolerance: float) -> "Row":
        """An identity that holds up to rounding: reproduced when |residual| < tolerance, shown against it."""
        ok = abs(residual) < tolerance
        return cls(quantity, paper_text, residual_text(residual, tolerance),
                   claims.REPRODUCED if ok else claims.NOT_REPRODUCED)

    @classmethod
    def any_of(cls, quantity: str, claim_id: str, estimates: list, relation: Relation | None = None) -> "Row":
        """A paper value against several estimates, when the paper does not say which one it is.

        Reproduced when the paper's value lies in the 95% interval of at least
        one estimate; partly when the declared `relation` holds (for every
        estimate); shown as the range of our values and intervals.
        """
        paper = float(claims.claim(claim_id))
        inside = any(e.low <= paper <= e.high for e in estimates)
        holds = relation is not None and relation.holds
        verdict = claims.REPRODUCED if inside else (claims.PARTLY if holds else claims.NOT_REPRODUCED)
        return cls(quantity, paper, f"{min(e.value for e in estimates):.4f} to {max(e.value for e in estimates):.4f}",
                   verdict, claim_id, (min(e.low for e in estimates), max(e.high for e in estimates)),
                   f"{min(e.exact for e in estimates):.4f} to {max(e.exact for e in estimates):.4f}",
                   **_declared(relation))

    @classmethod
    def same_text(cls, quantity: str, paper: str, ours: str, source: str, exact=None) -> "Row":
        """A value the paper prints as text (an arm's name) without a claim id: reproduced when ours is the same.

        `source` names where the paper prints it (table and column); it stands in the claim-id column.
        """
        return cls(quantity, paper, ours, claims.REPRODUCED if ours == paper else claims.NOT_REPRODUCED, source,
                   exact=exact)

    @classmethod
    def covers(cls, quantity: str, paper_text: str, est, target: float = 0.0) -> "Row":
        """A quantity whose expectation is `target` (the paper states it as an identity): reproduced when
        the estimate's 95% interval covers `target`."""
        ok = est.low <= target <= est.high
        return cls(quantity, paper_text, est.value, claims.REPRODUCED if ok else claims.NOT_REPRODUCED,
                   interval=(est.low, est.high), exact=target)

    @classmethod
    def quantile_pair(cls, quantity: str, claim_id: str, low: float, high: float,
                      relation: Relation | None = None) -> "Row":
        """A pair of quantiles (low, high) against the paper's pair: reproduced when both lie within 5% of the
        paper's, partly when the declared `relation` holds."""
        p_lo, p_hi = (float(x) for x in claims.claim(claim_id))
        close = abs(low - p_lo) <= 0.05 * abs(p_lo) and abs(high - p_hi) <= 0.05 * abs(p_hi)
        holds = relation is not None and relation.holds
        verdict = claims.REPRODUCED if close else (claims.PARTLY if holds else claims.NOT_REPRODUCED)
        return cls(quantity, f"[{p_lo:g}, {p_hi:g}]", f"[{low:.4f}, {high:.4f}]", verdict, claim_id,
                   **_declared(relation))

    @classmethod
    def not_compared(cls, quantity: str, claim_id: str, reason: str) -> "Row":
        """A paper value we do not compare, with the one-sentence reason."""
        return cls(quantity, claims.claim(claim_id), "—", NOT_COMPARED, claim_id, reason=reason)

    @classmethod
    def impossible(cls, quantity: str, claim_id: str, ours, bound_text: str, interval: tuple | None = None,
                   exact=None) -> "Row":
        """The paper's value breaks a bound the game's rules impose (`bound_text` names it, e.g.
        "|contrast| <= 26 chips"): the verdict is "impossible under the rules", whatever ours is."""
        if not (isinstance(bound_text, str) and bound_text.strip()):
            raise ValueError(f"{quantity!r}: an impossible row names the bound the paper's value breaks.")
        paper = claims.claim(claim_id)
        reason = f"the paper's value {claims.format_value(paper)} breaks a bound of the game's rules: {bound_text}"
        return cls(quantity, paper, ours, IMPOSSIBLE, claim_id, interval, exact, reason=reason)

    @classmethod
    def count(cls, quantity: str, claim_id: str, ours: int, exact: int | None = None) -> "Row":
        """An exact count: reproduced when it equals the paper's count."""
        paper = claims.claim(claim_id)
        ok = int(paper) == int(ours)
        return cls(quantity, paper, int(ours), claims.REPRODUCED if ok else claims.NOT_REPRODUCED, claim_id,
                   exact=exact)

    @classmethod
    def fraction(cls, quantity: str, claim_id: str, num: int, den: int) -> "Row":
        """A claim printed as 'k/n': the verdict compares the rates k/n by the verdict rule."""
        paper = claims.claim(claim_id)
        pn, pd_ = parse_fraction(paper)
        if den <= 0 or pd_ <= 0:
            raise ValueError(f"{quantity}: a fraction needs a positive denominator, got {num}/{den} "
                             f"against the paper's {paper}.")
        verdict = claims.verdict(float(Fraction(pn, pd_)), float(Fraction(num, den)))  # no relation: never partly
        return cls(quantity, paper, f"{num}/{den}", verdict, claim_id)

    @classmethod
    def all_finite(cls, quantity: str, claim_id: str, finite: int, total: int) -> "Row":
        """The paper prints 'k/k' finite values: reproduced when all of ours are finite too."""
        text = str(claims.claim(claim_id))
        paper_all = True
        if "/" in text:
            a, b = parse_fraction(text)
            paper_all = a == b
        ok = paper_all and finite == total
        return cls(quantity, text if "/" in text else f"{int(float(text)):,}", f"{finite:,}/{total:,}",
                   claims.REPRODUCED if ok else claims.NOT_REPRODUCED, claim_id)

    @property
    def declared_relation(self) -> Relation | None:
        """The relation the row declares (text and whether it holds), or None."""
        return None if self.relation is None else Relation(self.relation, bool(self.relation_holds))

    def with_paper_interval(self, low: float, high: float) -> "Row":
        """The same row with the paper's own 95% interval beside its value."""
        return replace(self, paper_interval=(float(low), float(high)))

    # --- the row as a table record -----------------------------------------------------
    def as_dict(self) -> dict:
        out = {"quantity": self.quantity, "paper": self.paper, "ours": self.ours, "95% interval": self.interval,
               "exact": self.exact, "relative deviation": self.relative_deviation, "relation": self.relation,
               "relation holds": self.relation_holds if self.relation is not None else None,
               "verdict": self.verdict, "claim id": self.claim_id}
        if self.paper_interval is not None:
            out["paper 95% interval"] = self.paper_interval
        if self.reason is not None:
            out["reason"] = self.reason
        return out

    def __getitem__(self, key):
        return self.as_dict()[key]

    def __iter__(self):
        return iter(self.as_dict())

    def __len__(self) -> int:
        return len(self.as_dict())


def unshown_impossible(impossible: dict, groups: dict) -> list[Row]:
    """The rows of `impossible` (claim id -> impossible row) that no table of `groups` (name -> rows) showed.

    Refuses a claim id named by two rows: the claims ledger takes one row per entry.
    """
    ids = [r.claim_id for g in groups.values() for r in g if r.claim_id]
    doubled = sorted({c for c in ids if ids.count(c) > 1})
    if doubled:
        raise ValueError(f"claim ids named by two rows: {doubled[:5]}")
    return [r for cid, r in impossible.items() if cid not in set(ids)]


def impossible_instead(row: Row, impossible: dict) -> Row:
    """`row` with verdict impossible under the rules when `impossible` (claim id -> impossible row) holds its
    claim: our value, interval and exact value stay, the reason names the bound the paper's value breaks."""
    bound = impossible.get(row.claim_id)
    if bound is None:
        return row
    return Row(row.quantity, row.paper, row.ours, IMPOSSIBLE, row.claim_id, row.interval, row.exact,
               reason=bound.reason)
