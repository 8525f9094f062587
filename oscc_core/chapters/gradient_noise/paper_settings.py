"""The settings of the paper's runs that this chapter uses or deliberately changes (`Row.setting`): each gets a
status, adopted (our run uses the paper's setting) or differs (with the reason), never a verdict.

* the matched budget of physical calls per arm (tab:physical-cost-frontier): our `physical_budget`; the reason
  states the draws each arm's matched prefix really consumed;
* the scalar clipped-surrogate screen: its iterations, groups per iteration, epochs and seeds;
* the clipping study: the four coupling arms it covers, and its seeds per row (we run one seed with a paired
  bootstrap over groups instead).
"""
from __future__ import annotations

from oscc_core.chapters.gradient_noise.arms import LABELS, PAPER_KEY, ROW_ARMS
from oscc_core.chapters.gradient_noise.frontier import FrontierArm
from oscc_core.chapters.gradient_noise.rows import CLIPPING_ROWS
from oscc_core.engine.arms import PAPER_ARMS
from oscc_core.reporting import claims
from oscc_core.reporting.paper_refs import readable
from oscc_core.reporting.rows import Row

#: claim id of a screen setting -> (quantity, the parameter that sets it)
SCREEN_SETTINGS = {
    "learning_boundary.scalar_clipped.iterations": ("scalar screen: iterations per seed and arm", "screen_iterations"),
    "learning_boundary.scalar_clipped.groups": ("scalar screen: groups per iteration", "screen_groups"),
    "learning_boundary.scalar_clipped.epochs": ("scalar screen: epochs per iteration", "epochs"),
    "setup.connectivity.seeds": ("scalar screen: seeds (the scalar connectivity manifest)", "screen_seeds"),
    "extended_controls.scalar_clipped.seeds": (f"scalar screen: seeds ({readable('tab:extended-controls')})", "screen_seeds"),
    "retained_evidence.scalar_clipped.seeds": (f"scalar screen: seeds ({readable('tab:retained-evidence')})", "screen_seeds"),
}


def _differs(ours, cid: str, why: str) -> str | None:
    """`why` when `ours` is not the paper's value of `cid` (a setting that differs needs its reason), else None."""
    return None if float(ours) == float(claims.claim(cid)) else why


def frontier_settings(front: dict[str, FrontierArm], budget: int) -> list[Row]:
    """The paper's physical calls per arm (one budget for every arm) against ours; the reason gives the draws
    and groups of the arm's matched prefix (the largest that fits the budget)."""
    out = []
    for a in ROW_ARMS:
        f, cid = front[a], f"cost_frontier.{PAPER_KEY[a]}.physical_calls"
        realised = f"{f.groups:,} groups use {f.draws:,} draws, the largest prefix that fits the budget"
        if float(budget) != float(claims.claim(cid)):
            realised = f"the notebook's physical_budget parameter sets {budget:,} draws per arm; {realised}"
        out.append(Row.setting(f"{LABELS[a]}: physical-draw budget per arm", cid, budget, reason=realised))
    return out


def screen_settings(p) -> list[Row]:
    """The scalar screen's iterations, groups, epochs and seeds against the notebook's parameters `p`."""
    out = []
    for cid, (quantity, name) in SCREEN_SETTINGS.items():
        value = getattr(p, name)
        ours = len(value) if isinstance(value, (list, tuple)) else value
        out.append(Row.setting(quantity, cid, ours,
                               reason=_differs(ours, cid, f"the notebook's {name} parameter gives {ours}")))
    return out


def clipping_settings(seed: int, n_groups: int) -> list[Row]:
    """The clipping study's arms (all four: its update-noise table has one column per arm) and its seeds per row
    (ours: one run seed, with intervals from a paired bootstrap over the groups)."""
    cid = "coupling_stress_text.clipping_arms"
    out = [Row.setting("clipping study: coupling arms", cid, len(PAPER_ARMS),
                       reason=_differs(len(PAPER_ARMS), cid, "the study covers the book's coupling arms"))]
    for label, key in CLIPPING_ROWS.items():
        cid = f"clipping.{key}.seeds"
        out.append(Row.setting(f"clipping study, {label}: seeds", cid, 1,
                               reason=_differs(1, cid, f"one run seed ({seed}) with {n_groups:,} groups per arm; "
                                               "the intervals come from a paired bootstrap over the groups, "
                                               "not from a spread over seeds")))
    return out
