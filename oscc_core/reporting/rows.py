"""One row of a paper-beside-reproduction table: the paper's value, ours, and the verdict.

`Row` is the single row type of the book.  Each kind of comparison has a named constructor that applies its rule
(the verdict rule of `oscc_core.reporting.claims` for estimates; exact equality for counts; a bound for the numbers
the paper prints as "< x").  A row reads like the dict the tables and results files were built from
(`row["verdict"]`), in a fixed column order.

The verdict rule lives here and in `claims.verdict`:

* a row is *partly* only when it declares the relation it tests (a `Relation`, e.g. ``Relation("full < independent",
  ours_full < ours_ind)``, stating what the paper claims for the number) and the relation holds on our numbers while
  the size does not; the relation's text is shown in the row;
* a row whose size agrees is *inconclusive* when its declared relation fails or is not resolved by our intervals
  (`claims.verdict`);
* *impossible under the rules* (`Row.impossible`): the paper's value breaks a bound the game's rules impose under
  the reading the row names; `Row.under_readings` (`reporting.readings.combine`) keeps that verdict only when every
  reading the chapter lists is impossible, and gives *depends on the reading* where the readings' verdicts differ
  and the paper's text fixes none;
* a claim whose family `reporting.comparability` declares not comparable in size is not compared whatever verdict
  the constructor reached (`__post_init__` applies the declaration); its relation stays and gets a verdict of its
  own;
* *not compared* (`Row.not_compared`): with a one-sentence reason; a row that shows our value beside a paper number
  of another quantity declares the quantity not comparable (`Row.incomparable`, with its reason), and the claims
  ledger refuses it any other verdict;
* a value true by construction (a matched-budget cost ratio, a count fixed by an adopted setting, an arm against
  itself) says so (`Row.true_by_construction`, with the reason, or through a comparability family whose basis is
  "true by construction"): it is not compared in size, whatever its size, its relation is judged on its own, and it
  is counted apart from the measurements;
* a gap (not reproduced, partly, inconclusive, depends on the reading) names its cause
  (`reporting.causes.attribute`: the registry's, or the row's own with `Row.with_cause`), with the evidence in its
  numbers;
* one comparison printed as several entries of the claims file (an interval the prose prints whole and a table
  prints end by end) has one row per entry, all but one naming the entry whose comparison they repeat
  (`Row.printed_as`): the comparison is counted once;
* each row names the size test that decided it (`test`: containment, within 5% of ours, the midpoint test of two
  intervals, equality, a bound);
* a setting of the paper's run (`Row.setting`) has a status, adopted or differs, and no verdict;
* a value the paper prints for one seed (`Row.one_seed`) is compared with a 95% prediction interval over our seeds;
* each claim id has one primary row; sensitivity, alternative-construction and detail rows (`Row.as_sensitivity`)
  name it under "sensitivity of" and never give the ledger its verdict;
* every row carries its relative deviation, ours / paper - 1, where both are numbers and the paper's is not zero.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from numbers import Real

from oscc_core.reporting import causes, claims, comparability, readings
from oscc_core.reporting.readings import impossible_instead, unshown_impossible  # noqa: F401  (the rows' helpers)
from oscc_core.reporting.claims import Relation
from oscc_core.reporting.results import residual_text
from oscc_core.reporting.why import why_text

NO_PAPER = "no paper value"          # verdict of a row the paper gives no number for
RATIO_DECIMALS = 4      # decimals of the paper's cost ratios (`Row.ratio`)
#: The reason of a cost row of the arm every other arm's cost is divided by (`Row.ratio`).
NO_REFERENCE_RATIO = ("the reference arm's cost divided by itself is 1 by definition; its seconds themselves depend "
                      "on the machine, which no ratio captures")
NOT_COMPARED = claims.NOT_COMPARED   # verdict of a row whose paper value we do not compare, with the reason
IMPOSSIBLE = claims.IMPOSSIBLE       # verdict of a row whose paper value breaks a bound of the game's rules
#: The record key that names a primary row's claim, and the one a sensitivity or detail row names it under.
CLAIM_KEY, SENSITIVITY_KEY = "claim id", "sensitivity of"
#: The names of the tests of the rows that do not apply the verdict rule's size test (`claims.size_test`).
MIDPOINT_TEST = "midpoint test: the midpoints differ by at most sqrt(h_paper^2 + h_ours^2)"
PREDICTION_TEST = "containment: the paper's value in our 95% prediction interval of one more seed"
ANY_OF_TEST = "containment: the paper's value in the 95% interval of at least one of our estimates"
BOUND_TEST = "bound: ours below the paper's bound"
EQUALITY_TEST = "equality of counts"
ALL_FINITE_TEST = "every one of our values finite"

__all__ = ["CLAIM_KEY", "IMPOSSIBLE", "NOT_COMPARED", "NO_PAPER", "Relation", "Row", "SENSITIVITY_KEY",
           "parse_fraction", "relative_deviation"]


def relative_deviation(paper, ours, interval: tuple | None = None) -> float | None:
    """ours / paper - 1 where it means something: both are finite numbers of one sign, neither is zero, and our
    95% interval (when given) does not reach zero.  Beside a value near zero (an interval that covers 0, a sign
    that differs) a ratio measures only how small the paper's number is, so there is none (None)."""
    def number(x):
        return isinstance(x, Real) and not isinstance(x, bool) and math.isfinite(float(x))
    if not (number(paper) and number(ours)):
        return None
    p, o = float(paper), float(ours)
    if p == 0.0 or o == 0.0 or (p > 0) != (o > 0):
        return None
    if interval is not None and all(number(x) for x in interval) and float(interval[0]) <= 0.0 <= float(interval[1]):
        return None
    return o / p - 1.0


def _declared(relation: Relation | None) -> dict:
    """The Row fields of a declared relation (its text, whether it holds and whether our intervals resolve it);
    empty when none is declared."""
    if relation is None:
        return {}
    if not isinstance(relation, Relation):
        raise TypeError(f"relation must be a Relation(text, holds) or None, got {relation!r}.")
    return {"relation": relation.text, "relation_holds": relation.holds, "relation_resolved": relation.resolved,
            "relation_constructed": relation.by_construction}


def _is_number(x) -> bool:
    return isinstance(x, Real) and not isinstance(x, bool)


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
    relation_resolved: bool | None = None
    primary: bool = True
    reading: str | None = None
    readings: tuple | None = None
    test: str | None = None
    not_comparable: str | None = None
    by_construction_reason: str | None = None
    printing_of: str | None = None
    relation_constructed: bool = False
    reading_dependent: bool = False
    cause: str | None = None
    cause_evidence: str | None = None
    relative_deviation: float | None = field(init=False, default=None)

    def __post_init__(self):
        self._apply_comparability()
        object.__setattr__(self, "relative_deviation", None if self.not_comparable else
                           relative_deviation(self.paper, self.ours, self.interval))   # no size set beside the paper's
        if self.verdict == claims.PARTLY and not (self.relation and self.relation_holds and not self.relation_constructed
                                                  and self.relation_resolved is not False):
            raise ValueError(f"{self.quantity!r}: a row is partly only when it declares a relation that holds "
                             "(and could have failed).")
        if self.verdict == claims.DEPENDS and not (self.readings and self.reading_dependent and
                                                   len({r["verdict"] for r in self.readings}) > 1):
            raise ValueError(f"{self.quantity!r}: a row depends on the reading only when its readings' verdicts "
                             "differ.")
        if self.verdict in (claims.IMPOSSIBLE, claims.NOT_COMPARED, claims.DIFFERS) and \
                not (self.reason and self.reason.strip()):
            raise ValueError(f"{self.quantity!r}: a row that is {self.verdict!r} needs its reason.")
        if self.verdict == claims.IMPOSSIBLE and not (self.reading and self.reading.strip()):
            raise ValueError(f"{self.quantity!r}: an impossible row names the reading under which it is impossible.")
        if self.not_comparable is not None and self.verdict != claims.NOT_COMPARED:
            raise ValueError(f"{self.quantity!r}: a row that declares its quantity not comparable is not compared, "
                             f"not {self.verdict!r}.")

    def _apply_comparability(self) -> None:
        """A size verdict for a claim whose family is declared not comparable (`reporting.comparability`), or for a
        value true by construction (`true_by_construction`, the one treatment of such values everywhere: its
        size says nothing about the paper's), becomes not compared, with the family's (or the construction's)
        reason before the row's own; the relation stays and is judged on its own (`relation_verdict`)."""
        reason = comparability.incomparable_reason(self.claim_id)
        if reason is None and self.by_construction_reason:
            reason = f"true by construction: not compared in size: {self.by_construction_reason}"
        if reason is None:
            return
        if self.verdict == NOT_COMPARED and self.not_comparable == reason and reason not in (self.reason or ""):
            # a reason replaced after the declaration applied: the family's sentence stays first
            object.__setattr__(self, "reason", reason + (f"; {self.reason}" if self.reason else ""))
            return
        if self.verdict not in comparability.SIZE_VERDICTS:
            return
        own = self.reason if self.reason and self.reason not in reason else None
        object.__setattr__(self, "verdict", NOT_COMPARED)
        object.__setattr__(self, "not_comparable", reason)
        object.__setattr__(self, "reason", reason + (f"; {own}" if own else ""))
        object.__setattr__(self, "test", None)
        object.__setattr__(self, "reading_dependent", False)

    @property
    def relation_verdict(self) -> str | None:
        """The verdict of the relation the row declares, judged on its own (what is left to judge of a quantity
        whose size is not compared): `comparability.relation_verdict`; None without a relation or for one that
        holds by construction."""
        if self.relation is None or self.relation_constructed:
            return None
        return comparability.relation_verdict(self.relation_holds, self.relation_resolved)

    # --- constructors, one per kind of comparison ------------------------------------
    @classmethod
    def compare(cls, quantity: str, claim_id: str, ours: float, low: float | None = None,
                high: float | None = None, relation: Relation | None = None, exact: float | None = None,
                positive: bool = False) -> "Row":
        """An estimate (or exact value) against the paper's number, by the verdict rule of `claims.verdict`.

        `relation` is the qualitative relation the paper states for this number,
        evaluated on our numbers; without one the row cannot be partly.  `positive`:
        the quantity is positive by definition (a variance, a ratio), so an interval
        reaching 0 makes an agreeing size inconclusive.
        """
        paper = claims.claim(claim_id)
        verdict = claims.verdict(paper, ours, low, high, relation=relation, positive=positive)
        return cls(quantity, paper, ours, verdict, claim_id, None if low is None else (low, high), exact,
                   test=claims.size_test(low, high), **_declared(relation))

    @classmethod
    def estimate(cls, quantity: str, claim_id: str | None, est, relation: Relation | None = None,
                 positive: bool = False) -> "Row":
        """A `method.stats.Estimate` against a claim; without a claim id, a row with no paper value."""
        if claim_id is None:
            return cls.no_paper(quantity, est.value, (est.low, est.high), est.exact)
        return cls.compare(quantity, claim_id, est.value, est.low, est.high, relation, est.exact, positive)

    @classmethod
    def one_seed(cls, quantity: str, claim_id: str, ours: float, seed_values, relation: Relation | None = None
                 ) -> "Row":
        """A value the paper prints for one seed, against the 95% prediction interval of one more seed over
        our seeds' values `seed_values` (`method.stats.prediction_interval`); `ours` is our value for the
        seed of the same label, shown beside it.  Our seed and the paper's share no random numbers, so the
        comparison is with the spread of seeds, never seed to seed."""
        from oscc_core.method.stats import prediction_interval

        iv = prediction_interval(seed_values)
        paper = claims.claim(claim_id)
        verdict = claims.verdict(paper, ours, iv.low, iv.high, relation=relation)
        return cls(quantity, paper, ours, verdict, claim_id, (iv.low, iv.high), test=PREDICTION_TEST,
                   **_declared(relation))

    @classmethod
    def setting(cls, quantity: str, claim_id: str, ours, reason: str | None = None,
                adopted: bool | None = None) -> "Row":
        """A setting of the paper's run (a sample size, a grid, a seed list): status adopted when our run uses
        the paper's setting (by default: `ours` equals the paper's value), differs otherwise, with `reason`."""
        paper = claims.claim(claim_id)
        same = str(ours) == str(paper) or (_is_number(ours) and _is_number(paper) and float(ours) == float(paper))
        adopted = same if adopted is None else bool(adopted)
        if not adopted and not (reason and reason.strip()):
            raise ValueError(f"{quantity!r}: a setting that differs from the paper's ({paper!r} vs ours {ours!r}) "
                             "needs the reason.")
        return cls(quantity, paper, ours, claims.ADOPTED if adopted else claims.DIFFERS, claim_id, reason=reason)

    @classmethod
    def under_readings(cls, rows: list["Row"], paper_reading: str | None = None) -> "Row":
        """One quantity under each reading the book measures, one row each (`reporting.readings.combine`)."""
        return readings.combine(rows, paper_reading)

    def as_sensitivity(self) -> "Row":
        """The same comparison as a sensitivity, alternative or detail row ("sensitivity of"; never the verdict)."""
        return replace(self, primary=False)

    @classmethod
    def no_paper(cls, quantity: str, ours, interval: tuple | None = None, exact=None) -> "Row":
        """A quantity we report that the paper gives no number for."""
        return cls(quantity, None, ours, NO_PAPER, None, interval, exact)

    @classmethod
    def below(cls, quantity: str, claim_id: str, ours: float) -> "Row":
        """The paper prints an upper bound '< x': reproduced when ours < x."""
        paper = claims.claim(claim_id)
        ok = ours < float(paper)
        return cls(quantity, f"< {paper:g}", ours, claims.REPRODUCED if ok else claims.NOT_REPRODUCED, claim_id,
                   test=BOUND_TEST)

    @classmethod
    def residual(cls, quantity: str, claim_id: str, ours: float) -> "Row":
        """A residual the paper bounds by '< x': reproduced when |ours| < x; shown against the bound."""
        bound = float(claims.claim(claim_id))
        ok = abs(ours) < bound
        return cls(quantity, f"< {bound:g}", residual_text(ours, bound),
                   claims.REPRODUCED if ok else claims.NOT_REPRODUCED, claim_id, exact=0.0, test=BOUND_TEST)

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
                   test=ANY_OF_TEST, **_declared(relation))

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
        """A pair of quantiles (low, high) against the paper's pair: reproduced when each of the paper's lies
        within 5% of ours (`claims.size_agrees`, end by end), partly when the declared `relation` holds."""
        p_lo, p_hi = (float(x) for x in claims.claim(claim_id))
        close = claims.size_agrees(p_lo, low) and claims.size_agrees(p_hi, high)
        holds = relation is not None and relation.holds
        verdict = claims.REPRODUCED if close else (claims.PARTLY if holds else claims.NOT_REPRODUCED)
        return cls(quantity, f"[{p_lo:g}, {p_hi:g}]", f"[{low:.4f}, {high:.4f}]", verdict, claim_id,
                   test=f"each end {claims.WITHIN_TOLERANCE}", **_declared(relation))

    @classmethod
    def interval_pair(cls, quantity: str, claim_id: str, low: float, high: float, ours: float | None = None,
                      relation: Relation | None = None, exact: float | None = None) -> "Row":
        """An interval the paper prints ([a, b], its 95% interval of a quantity) against ours ([low, high]), by the
        midpoint test: reproduced when the two estimates agree at 95%, i.e. their midpoints differ by at most
        sqrt(h_paper^2 + h_ours^2) (h: a half-width; the 95% interval of the difference of two independent
        estimates); partly when they do not but a declared `relation` holds; otherwise not reproduced.  Not a
        containment test: an end the paper prints may lie outside our interval while the two agree.  The reason
        gives both intervals, the test's numbers and its outcome, and whether the intervals overlap and whether
        one contains the other.  `exact`: the exact value of our estimate, where the relation was decided on it."""
        a, b = (float(x) for x in claims.claim(claim_id))
        lo, hi = float(low), float(high)
        if not (a <= b and lo <= hi):
            raise ValueError(f"{quantity!r}: both intervals need low <= high, got [{a}, {b}] and [{lo}, {hi}].")
        mid_p, mid_o = (a + b) / 2, (lo + hi) / 2
        distance, allowed = abs(mid_p - mid_o), math.hypot((b - a) / 2, (hi - lo) / 2)
        agree = distance <= allowed
        overlap = not (hi < a or b < lo)
        contains = ("the paper's interval contains ours" if a <= lo and hi <= b else
                    "ours contains the paper's" if lo <= a and b <= hi else "neither contains the other")
        verdict = claims.REPRODUCED if agree else (claims.PARTLY if relation is not None and relation.established
                                                   else claims.NOT_REPRODUCED)
        reason = (f"midpoint test, not containment: the paper's [{a:.4g}, {b:.4g}] and our [{lo:.4g}, {hi:.4g}] "
                  f"have midpoints {distance:.3g} apart, {'within' if agree else 'beyond'} the allowed "
                  f"{allowed:.3g} = sqrt(h_paper^2 + h_ours^2), so they {'agree' if agree else 'disagree'}; "
                  f"the intervals {'overlap' if overlap else 'do not overlap'}; {contains}")
        return cls(quantity, (a, b), mid_o if ours is None else ours, verdict, claim_id, (lo, hi), exact,
                   reason=reason, test=MIDPOINT_TEST, **_declared(relation))

    @classmethod
    def ratio(cls, quantity: str, claim_id: str, reference_id: str, ours: float,
              relation: Relation | None = None) -> "Row":
        """A cost the paper prints for one arm (wall seconds) as its ratio to the reference arm's
        (claim / reference claim), against our ratio of the same arms in a portable unit (physical calls), by
        the 5% rule: seconds depend on the machine, a ratio of costs need not."""
        # the paper prints seconds to 0.01 s (about 100 s), so its ratio carries four decimals, no more
        paper = round(float(claims.claim(claim_id)) / float(claims.claim(reference_id)), RATIO_DECIMALS)
        verdict = claims.verdict(paper, ours, relation=relation)
        return cls(quantity, paper, float(ours), verdict, claim_id, test=claims.WITHIN_TOLERANCE,
                   **_declared(relation))

    @classmethod
    def not_compared(cls, quantity: str, claim_id: str, reason: str) -> "Row":
        """A paper value we do not compare, with the one-sentence reason."""
        return cls(quantity, claims.claim(claim_id), "—", NOT_COMPARED, claim_id, reason=reason)

    def incomparable(self, reason: str) -> "Row":
        """The same row declaring that our quantity is not the paper's (another design, a count the paper never
        defines): not compared, with the one-sentence `reason`; our value and interval stay beside the paper's
        for the reader, and no size test decides anything (`test` is dropped)."""
        if not (isinstance(reason, str) and reason.strip()):
            raise ValueError(f"{self.quantity!r}: a quantity declared not comparable needs its one-sentence reason.")
        return replace(self, verdict=NOT_COMPARED, reason=reason, not_comparable=reason, test=None,
                       reading_dependent=False)

    def true_by_construction(self, reason: str) -> "Row":
        """The same row declaring that our value is what it is by construction (a ratio of budgets we match, a
        count an adopted setting fixes, an arm against itself), with the one-sentence `reason`: its size says
        nothing about the paper's, so it is not compared (the one treatment of such values, everywhere), its
        relation is judged on its own, and the ledger counts it apart from the measurements."""
        if not (isinstance(reason, str) and reason.strip()):
            raise ValueError(f"{self.quantity!r}: a value true by construction needs the reason it is.")
        return replace(self, by_construction_reason=reason)

    def with_cause(self, cause: "causes.Cause", evidence: str) -> "Row":
        """The same row naming its gap's cause (`reporting.causes.CAUSES`) with `evidence` in numbers the row alone
        does not hold: it replaces the registry's, and counts only while the verdict is a gap."""
        if cause not in causes.CAUSES:
            raise ValueError(f"{self.quantity!r}: the cause must be one of reporting.causes.CAUSES, got {cause!r}.")
        if not (isinstance(evidence, str) and evidence.strip()):
            raise ValueError(f"{self.quantity!r}: a cause needs its evidence, in the row's numbers.")
        return replace(self, cause=cause.name, cause_evidence=evidence)

    def printed_as(self, claim_id: str, quantity: str, note: str) -> "Row":
        """The row of another entry of the claims file that prints this row's comparison again (an end of an
        interval, the same number under another label): the same comparison and verdict under `claim_id`, naming
        this row's claim as the comparison it repeats ("printing of"), so that the comparison is counted once;
        `note` (e.g. "the low end of the interval the prose prints") leads its reason."""
        if not self.claim_id or not self.primary:
            raise ValueError(f"{self.quantity!r}: only a primary row with a claim id can be printed again.")
        reason = f"{note}; a printing of {self.claim_id}, counted there" + (f"; {self.reason}" if self.reason else "")
        return replace(self, quantity=quantity, claim_id=claim_id, printing_of=self.claim_id, reason=reason)

    @classmethod
    def impossible(cls, quantity: str, claim_id: str, ours, bound_text: str, reading: str,
                   interval: tuple | None = None, exact=None) -> "Row":
        """The paper's value breaks a bound the game's rules impose (`bound_text` names it, e.g.
        "|contrast| <= 26 chips") when the quantity is read as `reading` (e.g. "whole-game self-play value of
        player 0"): the verdict is "impossible under the rules", whatever ours is.  Combine the readings a
        chapter lists with `under_readings`."""
        if not (isinstance(bound_text, str) and bound_text.strip()):
            raise ValueError(f"{quantity!r}: an impossible row names the bound the paper's value breaks.")
        paper = claims.claim(claim_id)
        reason = f"the paper's value {claims.format_value(paper)} breaks a bound of the game's rules: {bound_text}"
        return cls(quantity, paper, ours, IMPOSSIBLE, claim_id, interval, exact, reason=reason, reading=reading)

    @classmethod
    def count(cls, quantity: str, claim_id: str, ours: int, exact: int | None = None) -> "Row":
        """An exact count: reproduced when it equals the paper's count."""
        paper = claims.claim(claim_id)
        ok = int(paper) == int(ours)
        return cls(quantity, paper, int(ours), claims.REPRODUCED if ok else claims.NOT_REPRODUCED, claim_id,
                   exact=exact, test=EQUALITY_TEST)

    @classmethod
    def fraction(cls, quantity: str, claim_id: str, num: int, den: int) -> "Row":
        """A claim printed as 'k/n': the verdict compares the rates k/n by the verdict rule."""
        paper = claims.claim(claim_id)
        pn, pd_ = parse_fraction(paper)
        if den <= 0 or pd_ <= 0:
            raise ValueError(f"{quantity}: a fraction needs a positive denominator, got {num}/{den} "
                             f"against the paper's {paper}.")
        verdict = claims.verdict(float(Fraction(pn, pd_)), float(Fraction(num, den)))  # no relation: never partly
        return cls(quantity, paper, f"{num}/{den}", verdict, claim_id, test=claims.WITHIN_TOLERANCE)

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
                   claims.REPRODUCED if ok else claims.NOT_REPRODUCED, claim_id, test=ALL_FINITE_TEST)

    @property
    def declared_relation(self) -> Relation | None:
        """The relation the row declares (text and whether it holds), or None."""
        return None if self.relation is None else Relation(self.relation, bool(self.relation_holds),
                                                           self.relation_resolved, self.relation_constructed)

    def with_paper_interval(self, low: float, high: float) -> "Row":
        """The same row with the paper's own 95% interval beside its value."""
        return replace(self, paper_interval=(float(low), float(high)))

    @property
    def is_setting(self) -> bool:
        """A setting of the paper's run: it has a status (adopted or differs), not a verdict."""
        return self.verdict in claims.STATUSES

    def as_dict(self) -> dict:
        out = {"quantity": self.quantity, "paper": self.paper, "ours": self.ours, "95% interval": self.interval,
               "exact": self.exact, "relative deviation": self.relative_deviation, "relation": self.relation,
               "relation holds": self.relation_holds if self.relation is not None else None,
               "relation resolved": self.relation_resolved if self.relation is not None else None,
               "status" if self.is_setting else "verdict": self.verdict,
               CLAIM_KEY if self.primary else SENSITIVITY_KEY: self.claim_id}
        if self.paper_interval is not None:
            out["paper 95% interval"] = self.paper_interval
        if self.reason is not None:
            out["reason"] = self.reason
        if self.reading is not None:
            out["reading"] = self.reading
        if self.readings is not None:
            out["readings"] = [dict(r, interval=None if r["interval"] is None else list(r["interval"]))
                               for r in self.readings]
        for key, value in (("test", self.test), ("not comparable", self.not_comparable),
                           ("by construction", self.by_construction_reason), ("printing of", self.printing_of),
                           ("relation verdict", self.relation_verdict)):
            if value is not None:
                out[key] = value
        if self.relation_constructed:
            out["relation by construction"] = True
        if self.reading_dependent:
            out["reading dependent"] = True
        causes.stamp(out, self.cause, self.cause_evidence)   # a gap's cause, the row's own where it names one
        out["why"] = why_text(out)
        return out

    def __getitem__(self, key):                   # a row reads like its record
        return self.as_dict()[key]

    def __iter__(self):
        return iter(self.as_dict())

    def __len__(self) -> int:
        return len(self.as_dict())
