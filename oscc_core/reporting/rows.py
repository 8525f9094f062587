"""One row of a paper-beside-reproduction table: the paper's value, ours, and the verdict.

`Row` is the single row type of the book.  Each kind of comparison has a
named constructor that applies its rule (the verdict rule of
`oscc_core.reporting.claims` for estimates; exact equality for counts; a
bound for the numbers the paper prints as "< x").  A row reads like the
dict the tables and results files were built from (`row["verdict"]`), in a
fixed column order.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from fractions import Fraction

from oscc_core.reporting import claims
from oscc_core.reporting.results import residual_text

NO_PAPER = "no paper value"     # verdict of a row the paper gives no number for


def parse_fraction(value) -> tuple[int, int]:
    """'k/n' -> (k, n)."""
    num, den = str(value).split("/")
    return int(num), int(den)


@dataclass(frozen=True)
class Row(Mapping):
    """quantity, paper value, our value (with its 95% interval and exact value), verdict and claim id.

    Values are in the quantity's own units (chips, chips squared, a ratio or a
    count); `ours` and `paper` may also be text where the paper prints text
    ("< 1e-12", "7/7").
    """

    quantity: str
    paper: object
    ours: object
    verdict: str
    claim_id: str | None = None
    interval: tuple | None = None
    exact: object = None
    paper_interval: tuple | None = None

    # --- constructors, one per kind of comparison ------------------------------------
    @classmethod
    def compare(cls, quantity: str, claim_id: str, ours: float, low: float | None = None,
                high: float | None = None, direction_agrees: bool | None = None, exact: float | None = None) -> "Row":
        """An estimate (or exact value) against the paper's number, by the verdict rule of `claims.verdict`."""
        paper = claims.claim(claim_id)
        return cls(quantity, paper, ours, claims.verdict(paper, ours, low, high, direction_agrees), claim_id,
                   None if low is None else (low, high), exact)

    @classmethod
    def estimate(cls, quantity: str, claim_id: str | None, est, direction: bool | None = None) -> "Row":
        """A `method.stats.Estimate` against a claim; without a claim id, a row with no paper value."""
        if claim_id is None:
            return cls.no_paper(quantity, est.value, (est.low, est.high), est.exact)
        return cls.compare(quantity, claim_id, est.value, est.low, est.high, direction, est.exact)

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
        verdict = claims.verdict(float(Fraction(pn, pd_)), float(Fraction(num, den)))
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

    def with_paper_interval(self, low: float, high: float) -> "Row":
        """The same row with the paper's own 95% interval beside its value."""
        return replace(self, paper_interval=(float(low), float(high)))

    # --- the row as a table record -----------------------------------------------------
    def as_dict(self) -> dict:
        out = {"quantity": self.quantity, "paper": self.paper, "ours": self.ours, "95% interval": self.interval,
               "exact": self.exact, "verdict": self.verdict, "claim id": self.claim_id}
        if self.paper_interval is not None:
            out["paper 95% interval"] = self.paper_interval
        return out

    def __getitem__(self, key):
        return self.as_dict()[key]

    def __iter__(self):
        return iter(self.as_dict())

    def __len__(self) -> int:
        return len(self.as_dict())
