"""The tabular connectivity loop of chapter 03: the lagged learner, the seat endpoints, the ledger's counts and
the rows built from them, each against a value computed independently."""
import numpy as np
import pytest
import torch

from oscc_core.chapters.gradient_noise import connectivity as c
from oscc_core.chapters.gradient_noise import connectivity_rows as cr
from oscc_core.learning.lagged import LaggedLearners, train_lagged
from oscc_core.learning.loop import Learners, RunSpec, Schedule
from oscc_core.method.stats import t_interval

SCHEDULE = Schedule(iterations=3, decision_points=4, epochs=2, learning_rate=0.5)
RUNS = [RunSpec(a, s) for a in ("cp_grpo", "independent") for s in (13, 17)]


def test_lag_zero_is_the_plain_learner():
    lagged = train_lagged("leduc", RUNS, SCHEDULE, lag=0)
    plain = Learners("leduc", RUNS, SCHEDULE, engine="torch")
    while bool(plain.active().any()):
        plain.step()
    assert torch.equal(lagged.logits, plain.logits)


def test_a_lagged_behaviour_starts_the_update_away_from_ratio_one():
    # at the second iteration the behaviour is still the uniform start while the logits have moved: the first
    # epoch's ratios differ from 1, so the learner that lags collects with other probabilities than pi_t
    learners = LaggedLearners("leduc", RUNS, SCHEDULE, lag=1)
    learners.step()
    moved = learners.logits.clone()
    behaviour = learners.behaviour_logits()
    assert torch.equal(behaviour, torch.zeros_like(behaviour))
    assert not torch.equal(moved, behaviour)


def test_a_negative_lag_is_refused():
    with pytest.raises(ValueError, match="lag"):
        LaggedLearners("leduc", RUNS, SCHEDULE, lag=-1)


def test_seat_returns_match_kuhn_closed_form_for_always_bet():
    # Kuhn, the policy "always bet / always call" in seat 0 against the uniform opponent: P1 folds to a bet
    # with probability 1/2 (+1 for P0), otherwise calls and the higher card wins 2: E = 1/2 * 1 + 1/2 * 0 = 0.5
    from oscc_core.games import get_game
    from oscc_core.policy import uniform_table
    game = get_game("kuhn")
    table = np.zeros_like(uniform_table(game))
    table[:, 1] = 1.0       # action 1 is bet / call in every Kuhn information state
    ret = c.seat_returns("kuhn", table[None])
    assert ret[0, 0] == pytest.approx(0.5, abs=1e-12)


def test_seat_one_return_matches_kuhn_closed_form_for_always_bet():
    # seat 1 always bets / calls against the uniform P0: P0 checks (1/2), P1 bets, P0 folds (1/2): +1 for P1;
    # every showdown is worth 0 on average over the deals: E = 1/2 * 1/2 * 1 = 0.25
    from oscc_core.games import get_game
    from oscc_core.policy import uniform_table
    table = np.zeros_like(uniform_table(get_game("kuhn")))
    table[:, 1] = 1.0
    assert c.seat_returns("kuhn", table[None])[0, 1] == pytest.approx(0.25, abs=1e-12)


def _loop(seeds=(13, 17, 23)):
    conds = c.loop_conditions(0.05, [1], [0.5])
    return c.run_loops(conds, list(seeds), Schedule(iterations=2, decision_points=4, epochs=2, learning_rate=0.05))


def test_paired_arm_draws_one_root_per_decision_point():
    control = _loop()["connectivity_control"][0]
    assert control.count("root_draws", ("cp_grpo",)).tolist() == [2 * 4] * 3


def test_i_minus_p_is_the_independent_run_minus_the_paired_run_of_the_same_seed():
    control = _loop()["connectivity_control"][0]
    by_run = {(r.arm, r.seed): control.endpoint[k] for k, r in enumerate(control.runs)}
    for k, s in enumerate(control.seeds):
        assert control.i_minus_p(1)[k] == by_run[("independent", s)][1] - by_run[("cp_grpo", s)][1]


def test_sampling_calls_of_a_seed_count_root_and_policy_draws_of_both_arms():
    control = _loop()["connectivity_control"][0]
    led = {(r.arm, r.seed): k for k, r in enumerate(control.runs)}
    from oscc_core.learning.ledger import FIELDS
    root, dec = FIELDS.index("root_draws"), FIELDS.index("decisions")
    want = [sum(control.ledger[root, led[(a, s)]] + control.ledger[dec, led[(a, s)]]
                for a in ("cp_grpo", "independent")) for s in control.seeds]
    assert control.sampling_calls().tolist() == want


def test_total_sampling_calls_row_is_five_times_the_seed_mean_and_its_t_interval():
    control = _loop()["connectivity_control"][0]
    calls = control.sampling_calls()
    total = next(r for r in cr.cost_rows(control) if r.claim_id == "runtime_text.sampling_calls_total")
    iv = t_interval(calls)
    assert total.ours == pytest.approx(5 * float(np.mean(calls)))
    assert total.interval == pytest.approx((5 * iv.low, 5 * iv.high))


def test_endpoint_rows_declare_the_interval_covers_zero():
    rows = cr.endpoint_rows(_loop())
    seat0 = rows[0]
    lo, hi = seat0.interval
    assert seat0.relation_holds == (lo <= 0 <= hi)


def test_clip_percent_is_one_hundred_times_the_fraction():
    values = {"connectivity_control": np.zeros(3), "behavior_lag_grid": np.array([0.1, 0.09, 0.11]),
              "learning_rate_grid": np.array([0.2, 0.19, 0.21]), "activated_stress": np.array([0.3, 0.28, 0.33])}
    rows = cr.clip_percent_rows(values)
    assert [r.ours for r in rows] == pytest.approx([10.0, 20.0, 30.0, 30.0])


def test_settings_give_a_reason_only_when_they_differ():
    control = _loop(seeds=(13, 17, 23, 29, 31))["connectivity_control"][0]
    for r in cr.loop_settings(control, batches=8, epochs=4, decision_points=8):
        assert (r.reason is None) == (r.verdict == "adopted"), r.quantity


def test_wall_time_is_not_compared_with_a_reason():
    row = cr.wall_time_row()
    assert row.verdict == "not compared" and "ratio" in row.reason
