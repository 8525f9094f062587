"""The random-stream contract as a table: one row per namespace of `rng.NAMESPACES`.

It plays the paper's RNG dependency table (tab:rng-dependency) and namespace
checklist (tab:app-p1-rng): key fields, the field dropped to share, sharing
across branches, draws, what the policy may see, and the audit that checks it.
"""
from __future__ import annotations

import inspect

from oscc_core.engine import rng

# The paper's RNG dependency table (tab:rng-dependency) row that each namespace implements.
PAPER_ROW = {"root": "replay/root", "hidden": "environment (hidden root deal)",
             "chance": "continuation (environment event counter)", "policy": "policy action",
             "bootstrap": "bootstrap (tab:app-p1-rng)"}
AUDIT_OF = {"root": "root hash equal across branches (ROOT_DRIFT)",
            "hidden": "observation hash invariant when the hidden card changes (OBS_DRIFT)",
            "chance": "address = semantic event at counter 0, no collision (STREAM_GAP)",
            "policy": "address free of hidden fields (HIDDEN_LEAK), branch-specific, counters 0,1,2,... (STREAM_GAP)",
            "bootstrap": "regenerated from (run, purpose, replicate)"}
#: The stream coordinates a policy key may take (C3: no game state).
STREAM_COORDINATES = {"run", "split", "group", "branch", "rollout", "stream"}


def policy_visibility(namespace: str, policy_params: list[str]) -> str:
    """What the acting policy may see of a namespace's draws."""
    if namespace == "policy":
        return f"action draw only; key takes ({', '.join(policy_params)}), no game state"
    if namespace == "root":
        return "own card and public root (the information state)"
    if namespace == "chance":
        return "through the public card once dealt"
    if namespace == "hidden":
        return "never (opponent's card)"
    return "no effect on rollouts"


def rng_dependency_table():
    """One row per namespace of `rng.NAMESPACES`: key fields, sharing, visibility and audit."""
    import pandas as pd

    policy_params = list(inspect.signature(rng.policy_key).parameters)
    return pd.DataFrame([{"namespace": ns.name, "paper row": PAPER_ROW[ns.name],
                          "key fields": ", ".join(ns.fields),
                          "dropped to share": ", ".join(ns.optional) or "-",
                          "shared across branches": ns.shared_across_branches,
                          "draws": ns.draws, "policy visibility": policy_visibility(ns.name, policy_params),
                          "audit": AUDIT_OF[ns.name]}
                         for ns in rng.NAMESPACES.values()])


def policy_key_takes_no_state() -> bool:
    """C3 by construction: the policy key's parameters are stream coordinates only."""
    return set(inspect.signature(rng.policy_key).parameters) <= STREAM_COORDINATES
