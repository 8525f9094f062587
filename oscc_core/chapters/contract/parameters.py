"""The chapter's notebook parameters: checked in one call before any computation or file write.

`validate(globals())` reads exactly the names the notebook's parameters cell
declares, checks each (a bad value raises `ParameterError` naming it) and
returns them as a frozen `ContractParameters`, whose `record` is the
parameter dict the results file records.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from oscc_core.engine.roots import parse_root
from oscc_core.games import LEDUC
from oscc_core.reporting import params as P

#: the names the parameters cell declares, in its order
NAMES = ("seeds", "groups_per_seed", "violation_groups", "swap_groups", "root", "solver_budget",
         "solver_tolerance", "device", "output_dir")
MIN_GROUPS = 16
MAX_SOLVER_TOLERANCE = 13.0     # upper bound of solver_tolerance (chips)


@dataclass(frozen=True)
class ContractParameters:
    seeds: list                 # audit seeds for the implementation checks
    groups_per_seed: int        # comparison groups per seed and arm in the implementation checks
    violation_groups: int       # groups per violation control and per admissible arm
    swap_groups: int            # groups in the branch-swap and seat-swap checks
    root: str                   # public history of the audited root
    solver_budget: int          # CFR+ iterations allowed to the solver join (SOLVER_TIMEOUT example)
    solver_tolerance: float     # exploitability (chips) the solver join must reach within its budget
    device: str                 # the resolved device ("cpu" or "cuda...")
    out_dir: Path               # the checked output directory
    game: str = LEDUC

    @property
    def record(self) -> dict:
        """The parameters as the results file records them."""
        return {"seeds": self.seeds, "groups_per_seed": self.groups_per_seed,
                "violation_groups": self.violation_groups, "swap_groups": self.swap_groups, "root": self.root,
                "solver_budget": self.solver_budget, "solver_tolerance": self.solver_tolerance, "game": self.game}


def check_root(name: str, value, game: str = LEDUC) -> str:
    """A public history the game can be rooted at."""
    try:
        parse_root(game, value)
    except ValueError as err:
        raise P.ParameterError(str(err)) from None
    return value


def validate(namespace: Mapping) -> ContractParameters:
    """Check every declared parameter of notebook 01 (read from `namespace`, e.g. `globals()`)."""
    missing = [n for n in NAMES if n not in namespace]
    if missing:
        raise P.ParameterError(f"notebook parameters missing: {', '.join(missing)}.")
    v = {n: namespace[n] for n in NAMES}
    seeds = P.check_seeds("seeds", v["seeds"])
    groups_per_seed = P.check_size("groups_per_seed", v["groups_per_seed"], MIN_GROUPS)
    violation_groups = P.check_size("violation_groups", v["violation_groups"], MIN_GROUPS)
    swap_groups = P.check_size("swap_groups", v["swap_groups"], MIN_GROUPS)
    solver_budget = P.check_int("solver_budget", v["solver_budget"], 0)
    solver_tolerance = P.check_float("solver_tolerance", v["solver_tolerance"], 0.0, MAX_SOLVER_TOLERANCE,
                                     open_low=True)
    device = P.check_device("device", v["device"])
    root = check_root("root", v["root"])
    out_dir = P.check_output_dir("output_dir", v["output_dir"])
    return ContractParameters(seeds=seeds, groups_per_seed=groups_per_seed, violation_groups=violation_groups,
                              swap_groups=swap_groups, root=root, solver_budget=solver_budget,
                              solver_tolerance=solver_tolerance, device=str(device), out_dir=out_dir)
