"""The body of results/01_contract.json: every reported quantity of the chapter, by section."""
from __future__ import annotations

from oscc_core.chapters.contract.observation import ObservationAudit
from oscc_core.chapters.contract.rows import comparisons_record


def results_payload(rng_records: list[dict], obs: ObservationAudit, obs_leak: ObservationAudit,
                    key_leak: ObservationAudit, seeds, visited, paired: dict, independent: dict, bs: dict, ss: dict,
                    controls: dict, admissible: dict, ledger: list[dict], rows: list, settings: list, findings) -> dict:
    """The results-file payload: stream table, observation audit, checks, swaps, controls, ledger, comparisons
    (results and checks), settings (adopted or differs) and the chapter's findings."""
    return {
        "rng_dependency": rng_records,
        "observation_audit": {"engine": obs.as_dict(), "hidden_field_in_observation": obs_leak.as_dict(),
                              "opponent_card_in_policy_key": key_leak.as_dict(),
                              "states_visited_per_seed": dict(zip(map(str, seeds), visited))},
        "implementation_checks": {"paired": paired, "independent": independent},
        "branch_swap": bs, "seat_swap": ss,
        "violations": controls, "admissible": admissible,
        "failure_ledger": {r["code"]: r for r in ledger},
        "comparisons": comparisons_record(rows),
        "paper_settings": comparisons_record(settings),
        "findings": findings.record(),
    }
