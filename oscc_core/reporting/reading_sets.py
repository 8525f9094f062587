"""The readings of each family of quantities that more than one chapter measures, declared once for the book.

Where two chapters measure one quantity on the same checkpoints (the learning chapter's Leduc policies are the
transfer chapter's Leduc policies: one operating point, the same seeds, bit for bit), they must list the same
readings, in the same words, and give one verdict where the paper prints one value.  Each family's readings are
declared here, once, and both chapters take their words (and the order in which a row lists them) from here:

* a **contrast variance** of a checkpoint: pooled over every decision point with a check-bet contrast, each
  weighted by its share of the decisions the checkpoint's hands reach (the paper's reading: its headline is "a
  weighted summary over all root IDs"), and at one decision point (a sensitivity reading); computed in one place,
  `method.pooled_contrast`;
* an **update variance**: one reading per step size the book measures (each arm's own step size, chosen on the
  development seeds, then every step size of the grid); the paper gives none, so none is "the paper's", and the
  size is not compared (`reporting.comparability`: it grows with the square of the step size);
* a **player-0 value**: the whole-game self-play value, the mean over the paper's held-out roots (the paper's
  reading: its appendix aggregates the value over them), the value against the uniform opponent (both seats, then
  seat 0) and one private-card pair (the paper names none);
* a **continuation**: a reading taken under another continuation than the chapter's (the CFR+ average policy
  beside the uniform default, where a chapter measures both) says so (`under_continuation`); it is the same
  quantity on another checkpoint.
"""
from __future__ import annotations

__all__ = ["AT_ROOT", "CONTRAST_AT_ROOT", "CONTRAST_POOLED", "OTHER_CONTINUATION", "POOLED_ROOTS", "VALUE_HELD_OUT",
           "VALUE_PAIR", "VALUE_SELF_PLAY", "VALUE_VERSUS_SEAT0", "VALUE_VERSUS_SEATS", "at_root", "contrast_at",
           "eta_reading", "held_out_value", "on_other_continuation", "short", "under_continuation"]

# ----- contrast variances -----------------------------------------------------------------------------------------
POOLED_ROOTS = ("pooled over every decision point with a check-bet contrast, each weighted by its share of the "
                "decisions the playing policy's hands reach (the paper's reading)")
AT_ROOT = "at the decision point {root!r} alone"
CONTRAST_POOLED = "per-group budget-1 variance " + POOLED_ROOTS
CONTRAST_AT_ROOT = "per-group budget-1 variance at the decision point {root!r}"
#: What a reading adds when it is taken under another continuation than the chapter's (another checkpoint: the
#: same quantity, but not on the same checkpoints).
OTHER_CONTINUATION = ", continuation {policy}"


def short(reading: str) -> str:
    """A few words for a contrast variance's reading, where a table cell shows it (the whole reading stays in the
    row and in the ledger): 'all roots pooled (the paper's reading)' or "root '' alone"; any other reading as it
    is."""
    if reading == CONTRAST_POOLED:
        return "all roots pooled (the paper's reading)"
    head = CONTRAST_AT_ROOT.split("{")[0]
    if reading.startswith(head):
        return f"root {reading[len(head):]} alone"
    return reading


def contrast_at(root: str) -> str:
    """The sensitivity reading of a contrast variance at one decision point `root`."""
    return CONTRAST_AT_ROOT.format(root=root)


def at_root(root: str) -> str:
    """The sensitivity reading of any quantity of an audit at one decision point `root`."""
    return AT_ROOT.format(root=root)


def under_continuation(reading: str, policy: str) -> str:
    """`reading` taken under the continuation `policy` (words) instead of the chapter's."""
    return reading + OTHER_CONTINUATION.format(policy=policy)


def on_other_continuation(reading: str) -> bool:
    """Whether `reading` is taken under another continuation than its chapter's (`under_continuation`)."""
    return OTHER_CONTINUATION.split("{")[0] in reading


# ----- update variances -------------------------------------------------------------------------------------------
def eta_reading(eta: float | None = None, arm: str | None = None, etas: dict | None = None) -> str:
    """The reading of an update variance at one step size: the arm's own eta (chosen on the development seeds, the
    one it trained with; `etas`: {arm: eta}) or one eta for every learned arm (one iteration from the state the run
    trained to).  None of them is the paper's: it gives no step size."""
    if eta is None:
        return f"eta chosen per arm on the development seeds ({arm}: {etas[arm]:g}), the step size it trained with"
    return f"eta = {eta:g} for every learned arm, one iteration from the state each run trained to"


# ----- player-0 values --------------------------------------------------------------------------------------------
VALUE_SELF_PLAY = "whole-game self-play value of player 0"
#: (no "; " inside a reading: a line that rests on several readings joins them with it)
VALUE_HELD_OUT = ("mean of player 0's self-play value over {roots:,} held-out roots per seed (private-card deals "
                  "drawn from the deal law, the paper's reading)")
VALUE_VERSUS_SEATS = "value of the checkpoint against the uniform opponent, mean of both seats"
VALUE_VERSUS_SEAT0 = "value of the checkpoint in seat 0 against the uniform opponent"
VALUE_PAIR = ("self-play value of player 0 on one ordered private-card pair, or the deal-law mean over a set of pairs "
              "(the paper names none)")


def held_out_value(roots: int) -> str:
    """The paper's reading of a player-0 value: the mean over its `roots` held-out roots per seed."""
    return VALUE_HELD_OUT.format(roots=roots)


