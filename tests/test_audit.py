"""The contract audit: each predicate passes on the real engine and catches its injected break."""
import pytest
import torch

from oscc_core.chapters.contract import failure_ledger, observation, run_audit, stream_table, swaps, violation_controls
from oscc_core.engine import violations as V
from oscc_core.engine.arms import ARMS
from oscc_core.engine.collector import collect
from oscc_core.engine.failures import FAILURE_CODES
from oscc_core.games import LEDUC
from oscc_core.reporting.rows import Row

N = 256


def test_observation_audit_finds_no_drift_on_the_real_engine():
    oa = observation.observation_audit(LEDUC)
    assert oa.states == 936 and oa.states_by_player == [468, 468]
    assert oa.exposures == 0 and oa.projection_errors == 0 and oa.verified == 936


def test_observation_audit_catches_a_hidden_field_in_the_observation():
    oa = observation.observation_audit(LEDUC, V.EXAMPLES["OBS_DRIFT"])
    assert oa.obs_drift_states == 936


def test_observation_audit_catches_the_opponent_card_in_the_policy_key():
    oa = observation.observation_audit(LEDUC, V.CONTROLS["opponent_card_in_policy_key"])
    assert oa.key_drift_states == 936 and oa.action_drift_states > 0


def test_policy_key_takes_no_game_state():
    assert stream_table.policy_key_takes_no_state()


def test_run_audit_of_the_real_engine_has_no_failure_and_no_drifting_transition():
    run = run_audit.audit_run(LEDUC, "", "full", N, seed=13)
    assert run.valid == N and sum(run.failures.values()) == 0
    assert run.counts["transitions"] > 0 and run.counts["obs_drift_transitions"] == 0
    assert run.counts["gap_events"] == 0 and run.counts["unique_group_keys"] == N


@pytest.mark.parametrize("name", list(V.CONTROLS))
def test_every_violation_control_is_rejected_with_its_code(name):
    row = violation_controls.violation_control(LEDUC, "", "full", N, 13, V.CONTROLS[name])
    assert row["decision"] == "reject" and row["rejected"] == N
    assert row["expected_code_groups"] > 0


@pytest.mark.parametrize("arm", list(ARMS))
def test_every_admissible_arm_is_accepted(arm):
    row = violation_controls.admissible_check(LEDUC, "", arm, N, 13)
    assert row["decision"] == "accept" and row["rejected"] == 0 and row["replay_failure_rate"] == 0.0


def test_branch_swap_reverses_the_contrast_sign_in_every_group():
    sw = swaps.branch_swap(LEDUC, "", "full", 2_000, 13)
    assert sw["reversed"] == 2_000 and sw["columns_permuted"] and sw["variance_residual"] == 0.0


def test_a_positional_policy_address_would_break_the_branch_swap():
    # control: without the branch field following its action, reordering is not a pure relabelling
    a = collect(LEDUC, "", "full", 2_000, seed=13, device="cpu", violation=V.CONTROLS["shared_policy_side_draw"])
    b = collect(LEDUC, "", "full", 2_000, seed=13, device="cpu")
    assert not torch.equal(a.returns, b.returns)


def test_seat_swapped_duplicate_reverses_the_sign_and_conserves_chips():
    ss = swaps.seat_swap(LEDUC, "", "full", 2_000, 13)
    assert ss["reversed"] == 2_000 and ss["conserved_lanes"] == ss["lanes"] == ss["terminal_lanes"]
    assert ss["replay_matches_engine"] == 2_000 and ss["variance_rel_drift"] == 0.0


@pytest.mark.parametrize("code", [FAILURE_CODES[c][0] for c in sorted(FAILURE_CODES)])
def test_each_failure_code_is_produced_by_its_injected_example(code):
    rows = {r["code"]: r for r in failure_ledger.failure_ledger(LEDUC, "", "full", N, 13, V.EXAMPLES, 1, 0.01)}
    assert rows[code]["caught with its code"] > 0 and rows[code]["other codes"] == 0


def test_nothing_is_dropped_silently():
    """Each injected fault excludes groups, and every excluded group is counted under a code."""
    rows = failure_ledger.failure_ledger(LEDUC, "", "full", N, 13, V.EXAMPLES, 1, 0.01)
    assert len(rows) == len(FAILURE_CODES)
    for row in rows:
        assert row["groups"] == N
        excluded = N - row["valid"]
        assert excluded > 0, row["code"]
        assert sum(row["failures"].values()) == excluded, row["code"]
        assert row["caught with its code"] + row["other codes"] == excluded, row["code"]


def test_solver_with_enough_budget_does_not_time_out():
    run = run_audit.audit_run(LEDUC, "", "full", N, 13)
    info = run_audit.join_solver_values(run, 100, 0.05)
    assert not info["timed_out"] and run.valid == N


def test_violation_hooks_change_nothing_when_unused():
    a = collect(LEDUC, "", "full", 4_000, seed=3, device="cpu")
    b = collect(LEDUC, "", "full", 4_000, seed=3, device="cpu", violation=V.Violation(), trace=[])
    assert torch.equal(a.returns, b.returns) and a.stats == b.stats


def test_fraction_rows_compare_rates():
    row = Row.fraction("unique group key", "impl_checks.unique_group_key.paired", 10, 10)
    assert row["verdict"] == "reproduced"
    row = Row.fraction("unique group key", "impl_checks.unique_group_key.paired", 5, 10)
    assert row["verdict"] == "not reproduced"
