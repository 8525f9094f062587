"""The random-stream contract: one entry per namespace of `rng.NAMESPACES`.

It plays the paper's RNG dependency table (tab:rng-dependency) and namespace
checklist (tab:app-p1-rng).  The book shows it twice: a narrow table of short
cells (key fields, the arms whose branches share the stream, the failure codes
of its audit: `rng_dependency_table`) and a list with the longer facts of each
namespace (the paper's row, what it draws, what the policy may see of it, what
its audit checks: `rng_dependency_list`).  `rng_dependency_records` holds every
field for the results file.
"""
from __future__ import annotations

import inspect

from oscc_core.engine import rng
from oscc_core.engine.arms import ARMS, PAPER_ARMS
from oscc_core.reporting.paper_refs import readable

# The paper's RNG dependency table (tab:rng-dependency) row that each namespace implements.
PAPER_ROW = {"root": "replay/root", "hidden": "environment (hidden root deal)",
             "chance": "continuation (environment event counter)", "policy": "policy action",
             "bootstrap": f"bootstrap ({readable('tab:app-p1-rng')})"}
#: namespace -> (the failure codes its audit raises, what the audit checks).
AUDIT_OF = {"root": (("ROOT_DRIFT",), "root hash equal across branches"),
            "hidden": (("OBS_DRIFT",), "observation hash invariant when the hidden card changes"),
            "chance": (("STREAM_GAP",), "address = semantic event at counter 0, no collision"),
            "policy": (("HIDDEN_LEAK", "STREAM_GAP"),
                       "address free of hidden fields, branch-specific, counters 0, 1, 2, … in order"),
            "bootstrap": ((), "regenerated from (run, purpose, replicate)")}
#: The stream coordinates a policy key may take (C3: no game state).
STREAM_COORDINATES = {"run", "split", "group", "branch", "rollout", "stream"}
#: namespace -> whether an arm's branches share it (the root always; the hidden deal and the continuation chance
#: by the arm's flags; policy draws never).  The bootstrap stream draws nothing in a rollout.
SHARED_BY = {"root": lambda arm: True, "hidden": lambda arm: arm.share_hidden,
             "chance": lambda arm: arm.share_chance, "policy": lambda arm: False}


def policy_visibility(namespace: str, policy_params: list[str]) -> str:
    """What the acting policy may see of a namespace's draws."""
    if namespace == "policy":
        return f"the action draw only, from a key of ({', '.join(policy_params)}) and no game state"
    if namespace == "root":
        return "own card and public root (the information state)"
    if namespace == "chance":
        return "through the public card once dealt"
    if namespace == "hidden":
        return "never (opponent's card)"
    return "no effect on rollouts"


def shared_by(namespace: str) -> str:
    """The paper's arms whose branches share the namespace's stream (from `engine.arms.ARMS`), in short."""
    if namespace not in SHARED_BY:
        return "—"
    arms = [a for a in PAPER_ARMS if SHARED_BY[namespace](ARMS[a])]
    return "every arm" if len(arms) == len(PAPER_ARMS) else ", ".join(arms) or "none"


def _policy_params() -> list[str]:
    return list(inspect.signature(rng.policy_key).parameters)


def rng_dependency_records() -> list[dict]:
    """One record per namespace of `rng.NAMESPACES` with every field: the paper's row, key fields, the field an
    arm leaves out to share (the branch), the sharing arms, the contract's words, draws, visibility, audit."""
    return [{"namespace": ns.name, "paper row": PAPER_ROW[ns.name], "key fields": ", ".join(ns.fields),
             "dropped to share": "branch" if "branch" in ns.optional else "-",
             "shared by": shared_by(ns.name), "shared across branches": ns.shared_across_branches,
             "draws": ns.draws, "policy visibility": policy_visibility(ns.name, _policy_params()),
             "audit": AUDIT_OF[ns.name][1], "failure codes": ", ".join(AUDIT_OF[ns.name][0]) or "—"}
            for ns in rng.NAMESPACES.values()]


def rng_dependency_table():
    """The narrow table: per namespace its key fields, the arms whose branches share it and its failure codes."""
    import pandas as pd

    columns = {"key fields": "key fields", "shared by": "branches share it in", "failure codes": "audit codes"}
    frame = pd.DataFrame(rng_dependency_records()).set_index("namespace")
    return frame[list(columns)].rename(columns=columns)


def rng_dependency_list() -> str:
    """The longer facts of each namespace as a Markdown list: the paper's row, what it draws, what the policy may
    see of it and what its audit checks."""
    return "\n".join(f"* **{r['namespace']}** (paper row *{r['paper row']}*): draws the {r['draws']}; "
                     f"policy visibility: {r['policy visibility']}; audit: {r['audit']}."
                     for r in rng_dependency_records())


def policy_key_takes_no_state() -> bool:
    """C3 by construction: the policy key's parameters are stream coordinates only."""
    return set(inspect.signature(rng.policy_key).parameters) <= STREAM_COORDINATES
