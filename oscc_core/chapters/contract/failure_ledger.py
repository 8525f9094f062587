"""The failure ledger: one injected fault per failure code, and where every group of the run ends.

Each row counts groups: valid, caught with the fault's own code, caught with
another code, and whether valid plus coded groups equal all groups (nothing
leaves a denominator silently).
"""
from __future__ import annotations

from oscc_core.chapters.contract.run_audit import CODE_NAMES, audit_run, join_solver_values


def failure_ledger(game, root: str, arm: str, n_groups: int, seed: int, examples: dict, solver_iterations: int,
                   solver_tolerance: float, device: str = "cpu") -> list[dict]:
    """One injected fault per failure code: which code each group ends with, and the denominator."""
    rows = []
    for code in CODE_NAMES:
        if code == "SOLVER_TIMEOUT":
            run = audit_run(game, root, arm, n_groups, seed, None, device=device)
            join_solver_values(run, solver_iterations, solver_tolerance)
            what = f"CFR+ value joined with a budget of {solver_iterations} iteration(s), tolerance {solver_tolerance}"
            name = "solver_timeout"
        else:
            v = examples[code]
            run = audit_run(game, root, arm, n_groups, seed, v, device=device)
            what, name = v.description, v.name
        fails = run.failures
        rows.append({"code": code, "example": name, "injected fault": what, "groups": run.groups,
                     "valid": run.valid, "caught with its code": fails[code],
                     "other codes": sum(fails.values()) - fails[code],
                     "accounted": run.valid + sum(fails.values()) == run.groups, "failures": fails})
    return rows
