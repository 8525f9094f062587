"""Coupling arms: which random streams the branches of one comparison group share.

Every arm shares the root (the acting player's information state): the
comparison is between actions at the same information state.  Arms differ in
whether the hidden root deal and the continuation chance events are shared
(DESIGN.md section 5).  Policy draws are never shared.
"""
from __future__ import annotations

from dataclasses import dataclass

POLICY_NAMESPACE_STREAM = 1   # the extra policy-stream field of the namespace ablation


@dataclass(frozen=True)
class Arm:
    name: str
    share_hidden: bool                 # one opponent card per group instead of per branch
    share_chance: bool                 # continuation chance shared by semantic event
    policy_stream: int | None = None   # extra policy-key field (ablation: must change nothing)
    description: str = ""


ARMS: dict[str, Arm] = {arm.name: arm for arm in (
    Arm("independent", False, False, description="hidden deal and chance drawn per branch"),
    Arm("root_only", True, False, description="hidden deal shared, chance per branch"),
    Arm("continuation_only", False, True, description="hidden deal per branch, chance shared by semantic event"),
    Arm("full", True, True, description="CP-GRPO: hidden deal and chance shared"),
    Arm("policy_namespace", False, False, POLICY_NAMESPACE_STREAM,
        description="independent with namespaced policy streams (ablation)"),
)}

PAPER_ARMS = ("independent", "root_only", "continuation_only", "full")


def get_arm(arm: "str | Arm") -> Arm:
    if isinstance(arm, Arm):
        return arm
    if arm not in ARMS:
        raise ValueError(f"arm must be one of {list(ARMS)}, got {arm!r}.")
    return ARMS[arm]


#: The relation the paper states for the four fixed arms, in its ablation prose ("both partial-coupling arms reduce
#: contrast variance, and their combination gives the lowest value"): (arm, arm it lies below) pairs.  The two
#: partial arms are not ordered against each other: the paper's tables print them in one order, its text states none.
STATED_BELOW = (("root_only", "independent"), ("continuation_only", "independent"), ("full", "root_only"),
                ("full", "continuation_only"))
#: That relation in a few symbols, for a noise or variance (lower is better).
STATED_TEXT = "root_only, continuation_only < independent; full lowest"


def in_stated_order(values: dict, decreasing: bool = True) -> bool:
    """Whether `values` (arm -> number) keep the relation the paper states (`STATED_BELOW`): each partial arm below
    the independent arm and the full arm below both (`decreasing`, e.g. variances), or each above (covariances)."""
    return all(values[a] < values[b] if decreasing else values[a] > values[b] for a, b in STATED_BELOW)


def in_paper_order(values: dict, decreasing: bool = True) -> bool:
    """Whether `values` (arm -> number) are strictly ordered along PAPER_ARMS, the paper's ordering
    independent, root_only, continuation_only, full (decreasing, e.g. variances; or increasing)."""
    v = [values[a] for a in PAPER_ARMS]
    return all((x > y) if decreasing else (x < y) for x, y in zip(v, v[1:]))
