"""The C1-C5 predicates and the safety certificate of a run audit.

C1 compares every branch mean with its exact value (in standard errors); C2
to C5 read the run audit's per-group flags and the observation audit's
state counts.  The certificate accepts a run only when all five hold; a
rejected coupling is quarantined as a whole (all its groups count as rejected).
"""
from __future__ import annotations

from oscc_core.chapters.contract.observation import ObservationAudit
from oscc_core.chapters.contract.run_audit import RunAudit
from oscc_core.chapters.contract.stream_table import policy_key_takes_no_state
from oscc_core.engine.collector import Collection
from oscc_core.exact.arm_moments import arm_moments

Z_MARGINAL = 4.0          # C1: |branch mean - exact mean| must stay within this many standard errors


def marginal_check(col: Collection, continuation="uniform") -> dict:
    """C1: every branch mean against its exact value, in standard errors."""
    exact = arm_moments(col.game, col.root, continuation)["independent"]   # marginals are the same in every arm
    s = col.summary()
    n = s["valid_groups"]
    z, shift = {}, {}
    for a in col.actions:
        j = exact.actions.index(a)
        mean, var = s["branch_means"][a], s["branch_vars"][a]
        shift[a] = mean - float(exact.mean[j])
        z[a] = shift[a] / (var / n) ** 0.5 if var > 0 else 0.0
    return {"shift": shift, "z": z, "passed": all(abs(v) <= Z_MARGINAL for v in z.values())}


def predicates(audit: RunAudit, state_audit: ObservationAudit, c1: dict) -> dict[str, bool]:
    """C1-C5 on the run's flags and the state-space audit (C1 also needs the marginal check `c1`)."""
    f = audit.flags
    return {
        "C1 marginal preservation": c1["passed"] and not bool(f["ROOT_DRIFT"].any() | f["ILLEGAL"].any()),
        "C2 information-state safety": state_audit.obs_drift_states == 0 and not bool(f["OBS_DRIFT"].any()),
        "C3 policy-randomness separation": state_audit.key_drift_states == 0 and state_audit.action_drift_states == 0
        and not bool(f["HIDDEN_LEAK"].any()) and policy_key_takes_no_state(),
        "C4 semantic event alignment": not bool(f["STREAM_GAP"].any() | f["EARLY_END"].any()),
        "C5 trace order": not bool(f["JOIN_ORDER"].any() | f["SOLVER_TIMEOUT"].any()),
    }


def certificate(audit: RunAudit, state_audit: ObservationAudit, continuation="uniform") -> dict:
    """The safety gate: accept only when C1-C5 hold on the run and on the state space."""
    c1 = marginal_check(audit.collection, continuation)
    preds = predicates(audit, state_audit, c1)
    accept = all(preds.values())
    # a rejected coupling is quarantined as a whole: none of its groups reaches an estimate
    return {"predicates": preds, "decision": "accept" if accept else "reject",
            "groups": audit.groups, "rejected_groups": 0 if accept else audit.groups,
            "flagged_groups": audit.groups - audit.valid, "marginal": c1}
