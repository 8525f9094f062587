"""The selector claims the paper states in its abstract and prose, beside our values.

A restatement of a table value reuses that table's row (its interval and its relation, resolved or not);
a setting of the paper's run (an entry of kind ``setup``: a size or a count) is set beside our parameter as
a `Row.setting`, adopted or differing with the reason; a result (the size at which the median bound turns
positive) is compared by the verdict rule.
"""
from __future__ import annotations

from oscc_core.reporting import claims, printings
from oscc_core.reporting.paper_refs import source_name
from oscc_core.reporting.rows import Relation, Row

SECTION = "selector"

#: claim id -> (quantity, key into `setup_values`): the paper's setup values that we compare with ours.
SETUP_CLAIMS = {
    "abstract.multi_action.action_count": ("actions at the three-action root", "action_count"),
    "abstract.calibration.groups_min": ("smallest calibration size", "groups_min"),
    "abstract.calibration.groups_max": ("largest calibration size", "groups_max"),
    "setup.calibration.groups_min": ("smallest calibration size", "groups_min"),
    "setup.calibration.groups_max": ("largest calibration size", "groups_max"),
    "text_action_support.groups_per_stratum": ("calibration groups per stratum", "groups_per_stratum"),
    "text_action_support.calibration.groups_min": ("smallest calibration size", "groups_min"),
    "text_action_support.calibration.groups_max": ("largest calibration size", "groups_max"),
    "fig_action_support.groups_per_stratum": ("calibration groups per stratum", "groups_per_stratum"),
    "figures_table.action_support.groups_per_stratum": ("calibration groups per stratum", "groups_per_stratum"),
    "fig_calibration_size.group_counts": ("calibration sizes measured", "group_counts"),
    "fig_calibration_size.lcb_positive_at": ("first size with median full-arm LCB > 0", "lcb_positive_at"),
}


def setup_values(p, action_count: int, positive_at: int | None, turns: Relation) -> dict:
    """key -> (our value, the relation the paper states for it or None): the values `SETUP_CLAIMS` refers to.

    Setup values (sizes, counts) declare no relation; of the size at which the median full-arm bound turns
    positive, the paper states that it is negative at the smallest size and positive at a larger one (`turns`:
    `sweep.lcb_turns_positive`)."""
    return {"action_count": (action_count, None),
            "groups_min": (min(p.sweep_sizes), None), "groups_max": (max(p.sweep_sizes), None),
            "groups_per_stratum": (p.calibration_groups, None),
            "group_counts": (len(p.sweep_sizes), None),
            "lcb_positive_at": (positive_at if positive_at is not None else float("nan"), turns)}


def index_rows(*tables) -> dict:
    """claim id -> row, over comparison tables (for the prose claims that restate a table value)."""
    return {r["claim id"]: r for t in tables for r in t if r.get("claim id")}


def setup_reason(ours, paper) -> str:
    """Why one of our sizes differs from the paper's: the notebook's parameters set it."""
    return f"the notebook's parameters give {claims.format_value(ours)} where the paper's run has " \
           f"{claims.format_value(paper)}"


def _restated(base: Row, cid: str) -> Row:
    """The table row `base` compared with the restatement `cid` of its value (same quantity, interval and
    relation); where the paper restates it, `by_source` shows."""
    relation = base.declared_relation          # with its resolution and whether it holds by construction
    return Row.compare(base.quantity, cid, base.ours, *(base.interval or (None, None)), relation=relation,
                       exact=base.exact)


def prose_rows(index: dict, values: dict, section: str = SECTION) -> list[Row]:
    """Every claim of `section` not already in a table: a setting of kind ``setup`` (`SETUP_CLAIMS`) against
    `values`, a result of `SETUP_CLAIMS` by the verdict rule; a restatement (same_as) reuses the table's row."""
    out = []
    for cid, entry in claims.load_claims().items():
        if entry["section"] != section or cid in index:
            continue
        if cid in SETUP_CLAIMS:
            quantity, key = SETUP_CLAIMS[cid]
            ours, relation = values[key]
            if entry["kind"] == "setup":
                same = str(ours) == str(entry["value"])
                out.append(Row.setting(f"{quantity} ({source_name(entry['source'])})", cid, ours,
                                       reason=None if same else setup_reason(ours, entry["value"])))
            else:
                out.append(Row.compare(quantity, cid, ours, relation=relation))
        elif entry.get("same_as") in index:
            out.append(_restated(index[entry["same_as"]], cid))
    return out


def unified(table_rows: list[Row], prose_rows: list[Row]) -> list[Row]:
    """`prose_rows` with every printing of a quantity taking the verdict of the printing that decides it
    (`reporting.printings.unify` over the table rows and the prose rows together), so one paper quantity reads the
    same in every table of the chapter.  The tables hold the deciding printings (the paper's tables, which the
    abstract and the text restate), so their rows, already shown, must come out unchanged: raises otherwise."""
    table_rows, prose_rows = list(table_rows), list(prose_rows)
    out = printings.unify(table_rows + prose_rows)
    changed = [r.claim_id for r, u in zip(table_rows, out) if u is not r]
    if changed:
        raise ValueError(f"unifying the printings changed table rows already shown: {changed}.")
    return out[len(table_rows):]


def source_caption(source: str) -> str:
    """A caption for the claims of one place in the paper: "abstract", "text:<section>", or a figure/table label."""
    if source == "abstract":
        return "Claims of the abstract"
    if source.startswith("text:"):
        return f"Claims of the text, section “{source[len('text:'):]}”"
    return f"Claims of {source_name(source)}"


def by_source(rows: list[Row]) -> dict[str, list[Row]]:
    """The rows grouped by where the paper states them (`source_caption` of their claim's source), in order of
    first appearance."""
    entries = claims.load_claims()
    out: dict[str, list[Row]] = {}
    for r in rows:
        out.setdefault(source_caption(entries[r.claim_id]["source"]), []).append(r)
    return out


def split_settings(rows: list[Row]) -> tuple[list[Row], list[Row]]:
    """(results, settings) of a list of rows: the settings have a status (adopted or differs), not a verdict."""
    return [r for r in rows if not r.is_setting], [r for r in rows if r.is_setting]
