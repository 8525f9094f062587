"""One verdict per paper quantity: every printing of a quantity shares the verdict of the printing that decides.

The claims file keeps one entry per place a number is printed and links the printings of one quantity with
`same_as` (the abstract's contrast variance of independent sampling is the main table's).  The links form trees; a *group* is one tree,
and its *root* is the entry the others name, directly or through another: the place where the paper states the
quantity with the relation it claims for it (the main table's "paired variance < independent variance").

`unify(rows)` gives every primary row of a group the verdict of the group's *deciding* row (the root's row
when the rows hold it, else the first printing in the order of the claims file): the row keeps its own paper
value, our value and interval (a percentage stays a percentage), and takes the deciding row's verdict, relation,
test and readings, naming it under "printing of".  Two printings whose values of ours differ (beyond the ratio
of the paper's printed values, which may differ by rounding or a percent) are two quantities: `unify` refuses
them, and the claims file must not link them.
"""
from __future__ import annotations

import math
from dataclasses import replace
from numbers import Real

from oscc_core.reporting import claims

#: How far two printings' values of ours (scaled by the paper's printed values) may differ and be one quantity.
SAME_VALUE_TOLERANCE = 1e-3

__all__ = ["SAME_VALUE_TOLERANCE", "deciding_id", "groups", "root_of", "same_quantity", "unify"]


def groups(entries: dict[str, dict]) -> dict[str, list[str]]:
    """Claim id -> every id of its `same_as` group (the union of the links), in claims-file order."""
    parent = {cid: cid for cid in entries}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for cid, e in entries.items():
        target = e.get("same_as")
        if target in parent:
            parent[find(cid)] = find(target)
    members: dict[str, list[str]] = {}
    for cid in entries:
        members.setdefault(find(cid), []).append(cid)
    return {cid: members[find(cid)] for cid in entries}


def root_of(group: list[str], entries: dict[str, dict]) -> str:
    """The entry of `group` that names no other (`same_as` absent or outside the group): the printing the others
    repeat.  A tree has exactly one; a group with none (a cycle) or several is an error of the claims file."""
    roots = [c for c in group if entries[c].get("same_as") not in group]
    if len(roots) != 1:
        raise ValueError(f"the same_as group of {group[0]!r} has {len(roots)} roots ({roots}); links must form a tree.")
    return roots[0]


def deciding_id(group: list[str], entries: dict[str, dict], present) -> str | None:
    """The claim id whose row decides the group's verdict, among the ids in `present`: the root when present,
    else the first in claims-file order; None when no member is present."""
    root = root_of(group, entries)
    if root in present:
        return root
    return next((c for c in group if c in present), None)


def _number(x) -> bool:
    return isinstance(x, Real) and not isinstance(x, bool) and math.isfinite(float(x))


def same_quantity(paper_a, ours_a, paper_b, ours_b, tolerance: float = SAME_VALUE_TOLERANCE) -> bool:
    """Whether two printings' values of ours measure one quantity: equal once scaled by the ratio of the
    paper's printed values (a percentage against a fraction, a rounding), within `tolerance` relative; values
    that are not numbers must be equal."""
    if not (_number(ours_a) and _number(ours_b)):
        return str(ours_a) == str(ours_b)
    a, b = float(ours_a), float(ours_b)
    if _number(paper_a) and _number(paper_b) and float(paper_a) != 0 and float(paper_b) != 0:
        b = b * float(paper_a) / float(paper_b)
    return abs(a - b) <= tolerance * max(abs(a), abs(b)) or a == b


def unify(rows: list, entries: dict[str, dict] | None = None) -> list:
    """`rows` (`reporting.rows.Row`) with every primary row of a `same_as` group taking the verdict of the group's
    deciding row (module docstring); rows of no group, sensitivity rows and rows naming no claim stay as they are.
    Raises when two printings of a group carry different values of ours."""
    entries = claims.load_claims() if entries is None else entries
    linked = groups(entries)
    by_id = {r.claim_id: r for r in rows if r.primary and r.claim_id in entries}
    out = []
    for row in rows:
        cid = row.claim_id if row.primary else None
        group = linked.get(cid) if cid in by_id else None
        decider = deciding_id(group, entries, by_id) if group and len(group) > 1 else None
        if decider is None or decider == cid:
            out.append(row)
            continue
        first = by_id[decider]
        if not same_quantity(first.paper, first.ours, row.paper, row.ours):
            raise ValueError(f"{cid!r} and {decider!r} are linked as one quantity (same_as) but our values differ "
                             f"({row.ours!r} and {first.ours!r}): if they are two constructions, the claims file "
                             "must not link them.")
        note = f"a printing of {decider}, whose verdict it shares"
        out.append(replace(first, quantity=row.quantity, claim_id=cid, paper=row.paper, ours=row.ours,
                           interval=row.interval, exact=row.exact, paper_interval=row.paper_interval,
                           printing_of=decider,
                           reason=note + (f"; {first.reason}" if first.reason else "")))
    return out
