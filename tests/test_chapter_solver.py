"""Chapter 05 (solver): parameters, checkpoints, update and contrast variances, records, rows, CFR+ reference.

Every expected value is independent of the module under test: pyspiel (tree
enumeration, TabularPolicy, exploitability, CFRPlusSolver), closed forms,
enumerations of the deal law, slow unbatched re-computations written here,
scipy's Student t for intervals, or the paper's numbers read from the claims
file with the verdict rule applied in the test.
"""
from __future__ import annotations

import gzip
import itertools
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

pyspiel = pytest.importorskip("pyspiel")
scipy_stats = pytest.importorskip("scipy.stats")
from notebook_runs import runnable_defaults
from open_spiel.python.policy import TabularPolicy, python_policy_to_pyspiel_policy
from openspiel_reference import information_states

from oscc_core.chapters.solver import parameters, rows, screen, training
from oscc_core.engine import rng
from oscc_core.exact.evaluation import rank_pairs
from oscc_core.learning import summary
from oscc_core.learning.loop import Learners, RunSpec, Schedule
from oscc_core.learning.update_variance import update_variances
from oscc_core.policy import table_to_policy
from oscc_core.reporting import claims
from oscc_core.reporting.params import ParameterError
from oscc_core.reporting.rows import Row

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "05_solver.ipynb"
RUNS = [RunSpec("cp_grpo", 13), RunSpec("cp_grpo", 17), RunSpec("independent", 13)]
SCHEDULE = Schedule(iterations=3, decision_points=16, learning_rate=4.0)
REPLICATES = 4
MATCH = 1e-9                 # chips: ours against pyspiel
RANKS = "JQK"


# ----- shared fixtures ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def defaults(tmp_path_factory) -> dict:
    """The notebook's defaults, its study file's path read from the notebooks' folder as the notebook does."""
    d = runnable_defaults("05_solver")
    return {**d, "output_dir": str(tmp_path_factory.mktemp("solver_results")),
            "study_file": str(NOTEBOOK.parent / d["study_file"])}


@pytest.fixture(scope="module")
def p(defaults):
    return parameters.validate({**defaults, "device": "cpu"})


@pytest.fixture(scope="module")
def batch():
    return training.train("leduc", RUNS, SCHEDULE, "cpu")


@pytest.fixture(scope="module")
def os_game():
    return pyspiel.load_game("leduc_poker")


def pyspiel_exploitability(game, policy: dict) -> float:
    tab = TabularPolicy(game)
    for state, probs in policy.items():
        tab.action_probability_array[tab.state_lookup[state]] = probs
    return float(pyspiel.exploitability(game, python_policy_to_pyspiel_policy(tab)))


# ----- 1. parameters ---------------------------------------------------------------------------
def test_the_notebook_defaults_validate(defaults):
    p = parameters.validate(defaults)
    assert p.budget == defaults["budget"] and p.contrast_root == defaults["contrast_root"]
    assert set(defaults) == set(parameters.NAMES)


@pytest.mark.parametrize("name, value", [
    ("dev_seeds", [13, 1001]),                 # 13 is a reporting seed
    ("dev_seeds", [1001, 37]),                 # 37 is a sensitivity (reporting) seed
    ("eta_grid", []),
    ("eta_grid", [2.0, -1.0]),
    ("budget", 999),
    ("contrast_root", "9"),                    # not a Leduc decision point
    ("contrast_root", 2),                      # an int, not a history string
    ("epsilon", 0),
    ("epsilon", 0.0),
    ("policy_seeds", [13, 17, 13]),
    ("diagnostic_seeds", [13, 13, 23]),
])
def test_a_bad_value_stops_naming_the_parameter(defaults, name, value):
    with pytest.raises(ParameterError, match=name):
        parameters.validate({**defaults, name: value})


def test_the_smallest_budget_validates(defaults):
    assert parameters.validate({**defaults, "budget": 1000}).budget == 1000


# ----- 2. checkpoints ------------------------------------------------------------------------
def test_saved_checkpoints_hold_every_leduc_infostate_with_a_distribution(batch, tmp_path, os_game):
    path = screen.save_checkpoints("leduc", batch, tmp_path)
    with gzip.open(path, "rt") as fh:
        body = json.load(fh)
    assert set(body) == {f"{r.arm}/{r.seed}" for r in RUNS}
    states = information_states("leduc_poker")
    assert len(states) == 936
    for policy in body.values():
        assert set(policy) == states
        for probs in policy.values():
            assert len(probs) == 3 and min(probs) >= 0 and sum(probs) == pytest.approx(1.0, abs=1e-12)


def test_pyspiel_exploitability_of_the_saved_file_equals_ours(batch, tmp_path, os_game):
    path = screen.save_checkpoints("leduc", batch, tmp_path)
    with gzip.open(path, "rt") as fh:
        body = json.load(fh)
    theirs = {key: pyspiel_exploitability(os_game, pol) for key, pol in body.items()}
    ours = training.exploitabilities("leduc", batch.average)
    for r, run in enumerate(RUNS):
        assert ours[r] == pytest.approx(theirs[run.key], abs=MATCH)
    reported = screen.openspiel_exploitabilities("leduc", path)
    assert set(reported) == set(theirs)
    for key in theirs:
        assert reported[key] == pytest.approx(theirs[key], abs=MATCH)


def test_saving_twice_writes_identical_bytes(batch, tmp_path):
    first = screen.save_checkpoints("leduc", batch, tmp_path / "a").read_bytes()
    second = screen.save_checkpoints("leduc", batch, tmp_path / "b").read_bytes()
    assert first == second
    assert first[4:8] == b"\x00\x00\x00\x00"      # gzip header mtime field


# ----- 3. update variance --------------------------------------------------------------------
def slow_update_variance(run, logits, values, schedule, k_reps) -> float:
    """K separate one-run Learners (the torch engine) from the same state, group_base k*N on the validation
    split; trace of the displacement covariance by numpy."""
    one = replace(schedule, budget=None, iterations=1)
    n = schedule.decision_points
    d = []
    for k in range(k_reps):
        start = logits.clone()
        lrn = Learners("leduc", [run], one, device="cpu", logits=start.clone(), values=values.clone(),
                       engine="torch")
        lrn.step(group_base=torch.tensor([k * n], dtype=torch.int64), split=rng.SPLITS["validation"])
        d.append((lrn.logits - start).reshape(-1).numpy().copy())
    d = np.array(d)
    return float(np.trace(np.cov(d, rowvar=False, ddof=1)))


def test_update_variance_equals_separate_replicate_learners(batch):
    logits, values = batch.learners.logits, batch.learners.values
    got = update_variances("leduc", RUNS, logits, values, SCHEDULE, REPLICATES, "cpu")
    for r, run in enumerate(RUNS):
        want = slow_update_variance(run, logits[r:r + 1], values[r:r + 1], SCHEDULE, REPLICATES)
        assert want > 0
        assert got[r] == pytest.approx(want, abs=1e-12, rel=1e-12)


def test_update_variance_of_grpo_and_ppo_equals_separate_replicate_learners():
    runs = [RunSpec("grpo", 13), RunSpec("ppo", 13)]
    trained = training.train("leduc", runs, SCHEDULE, "cpu")
    logits, values = trained.learners.logits, trained.learners.values
    assert float(values[1].abs().sum()) > 0                   # ppo's value table has moved
    got = update_variances("leduc", runs, logits, values, SCHEDULE, REPLICATES, "cpu")
    for r, run in enumerate(runs):
        want = slow_update_variance(run, logits[r:r + 1], values[r:r + 1], SCHEDULE, REPLICATES)
        assert want > 0
        assert got[r] == pytest.approx(want, abs=1e-12, rel=1e-12)


def test_update_variance_of_the_uniform_arm_is_zero(batch):
    logits, values = batch.learners.logits[:1].clone(), batch.learners.values[:1].clone()
    got = update_variances("leduc", [RunSpec("uniform", 13)], logits, values, SCHEDULE, REPLICATES, "cpu")
    assert got.tolist() == [0.0]


# ----- 4. contrast variance --------------------------------------------------------------------
class Enumerator:
    """First and second moments of player 0's return under a tabular self-play policy, by pyspiel's tree."""

    def __init__(self, game, policy: dict):
        self.game, self.policy, self.memo = game, policy, {}

    def moments(self, state, pub=None) -> tuple[float, float]:
        """(E[u0], E[u0^2]) from `state`; `pub` fixes the public card when it is dealt (full coupling)."""
        key = (tuple(state.history()), pub)
        if key in self.memo:
            return self.memo[key]
        if state.is_terminal():
            u = state.returns()[0]
            out = (u, u * u)
        elif state.is_chance_node():
            outcomes = state.chance_outcomes()
            if pub is not None:
                outcomes = [(pub, 1.0)]
            out = tuple(sum(pr * m for (a, pr) in outcomes
                            for m in [self.moments(state.child(a), pub)[i]]) for i in (0, 1))
        else:
            probs = self.policy[state.information_state_string(state.current_player())]
            parts = [(probs[a], self.moments(state.child(a), pub)) for a in state.legal_actions()]
            out = tuple(sum(pr * m[i] for pr, m in parts) for i in (0, 1))
        self.memo[key] = out
        return out


def pyspiel_contrast_variance(game, policy: dict, arm: str) -> float:
    """Var(R_Call - R_Raise) at Leduc's root "" (player 0 acts), pooled over the root law.

    full: the branches share the opponent card and the public card, so given the deal (own, opp, public) they
    are independent; independent: they share only player 0's card (the information state), and given it each
    redraws the opponent card (uniform posterior: no action precedes the root) and its public card.
    """
    enum = Enumerator(game, policy)
    root = game.new_initial_state()
    second = mean = 0.0
    names = None
    for own in range(6):
        dealt = root.child(own)
        per_opp = []
        for opp in (c for c in range(6) if c != own):
            s = dealt.child(opp)
            if names is None:
                names = {s.action_to_string(0, a): a for a in s.legal_actions()}
            call, raise_ = s.child(names["Call"]), s.child(names["Raise"])
            if arm == "full":
                for pub in (c for c in range(6) if c not in (own, opp)):
                    (m_c, q_c), (m_r, q_r) = enum.moments(call, pub), enum.moments(raise_, pub)
                    w = 1 / (6 * 5 * 4)
                    second += w * (q_c + q_r - 2 * m_c * m_r)
                    mean += w * (m_c - m_r)
            else:
                per_opp.append((enum.moments(call), enum.moments(raise_)))
        if arm == "independent":
            m_c = np.mean([c[0] for c, _ in per_opp])
            q_c = np.mean([c[1] for c, _ in per_opp])
            m_r = np.mean([r[0] for _, r in per_opp])
            q_r = np.mean([r[1] for _, r in per_opp])
            second += (q_c + q_r - 2 * m_c * m_r) / 6
            mean += (m_c - m_r) / 6
    return second - mean * mean


def test_exact_contrast_variance_equals_a_pyspiel_enumeration(p, batch, os_game):
    out = screen.contrast_variances(p, batch)
    assert [o["arm"] for o in out] == ["full", "full", "independent"]
    for r, o in enumerate(out):
        assert o["actions"] == ["Call", "Raise"]
        policy = {k: list(v) for k, v in table_to_policy("leduc", batch.average[r]).items()}
        assert o["exact"] == pytest.approx(pyspiel_contrast_variance(os_game, policy, o["arm"]), abs=1e-9)


def test_sampled_contrast_variance_is_within_four_se_of_the_exact(p, batch):
    for o in screen.contrast_variances(p, batch):
        assert o["sampled_se"] > 0
        assert abs(o["sampled"] - o["exact"]) < 4 * o["sampled_se"]


# ----- 5. records and their per-pair split ---------------------------------------------------
def leduc_deal_law() -> dict[str, float]:
    """P(rank pair) by enumerating ordered deals of two distinct cards out of J J Q Q K K."""
    law: dict[str, float] = {}
    deals = list(itertools.permutations(range(6), 2))
    for a, b in deals:
        label = RANKS[a // 2] + RANKS[b // 2]
        law[label] = law.get(label, 0.0) + 1 / len(deals)
    return law


@pytest.fixture(scope="module")
def records(batch):
    evaluations = screen.evaluate_runs("leduc", batch.average, "uniform")
    zeros = np.zeros(len(RUNS))
    contrast = [{"exact": 0.0, "independent_exact": 0.0, "sampled": 0.0, "sampled_se": 0.0}] * len(RUNS)
    return summary.run_records(batch, evaluations, zeros, zeros, contrast)


def test_the_deal_law_is_the_enumerated_one():
    law = leduc_deal_law()
    pairs = rank_pairs("leduc")
    assert dict(zip(pairs.labels, pairs.probability.tolist())) == pytest.approx(law, abs=1e-15)


def test_record_per_pair_values_average_to_the_whole_game_value(records):
    law = leduc_deal_law()
    for arm, by_seed in records.items():
        for rec in by_seed.values():
            for key in summary.EVALUATED:
                split = rec["per_pair"][key]
                assert set(split) == set(law)
                assert sum(law[lab] * v for lab, v in split.items()) == pytest.approx(rec[key], abs=1e-10)


def test_pair_means_average_to_the_seed_mean_of_the_whole_game_value(records):
    law = leduc_deal_law()
    assert len(records["cp_grpo"]) == 2
    for key in summary.EVALUATED:
        means = summary.pair_means(records, "cp_grpo", key)
        whole = np.mean([rec[key] for rec in records["cp_grpo"].values()])
        assert sum(law[lab] * v for lab, v in means.items()) == pytest.approx(whole, abs=1e-10)


def test_record_exploitability_is_pyspiels(records, batch, os_game):
    for r, run in enumerate(RUNS):
        want = pyspiel_exploitability(os_game, table_to_policy("leduc", batch.average[r]))
        assert records[run.arm][str(run.seed)]["exploitability"] == pytest.approx(want, abs=MATCH)


# ----- 6. rows --------------------------------------------------------------------------------
def t975(n: int) -> float:
    return float(scipy_stats.t.ppf(0.975, n - 1))


def rule(paper: float, low: float, high: float, established: bool) -> str:
    """The verdict rule: size by the interval, then the declared relation."""
    if low <= paper <= high:
        return claims.REPRODUCED if established else claims.INCONCLUSIVE
    return claims.PARTLY if established else claims.NOT_REPRODUCED


@pytest.mark.parametrize("independent", [
    {13: 2.00, 17: 2.06, 23: 2.09},          # independent lower on every seed: the sign is resolved
    {13: 2.40, 17: 2.06, 23: 2.09},          # one seed the other way: the mean's interval spans 0
    {13: 2.15, 17: 1.90, 23: 2.00},          # lower on average, but not on every seed as the paper states
])
def test_one_seed_values_are_compared_with_the_prediction_interval_over_our_seeds(p, independent):
    exploit = {"cp_grpo": {13: 2.10, 17: 2.15, 23: 2.20}, "independent": independent}
    seeds = p.diagnostic_seeds
    diff = [independent[s] - exploit["cp_grpo"][s] for s in seeds]
    n = len(seeds)
    half = t975(n) * np.std(diff, ddof=1) / np.sqrt(n)
    established = np.mean(diff) < 0 and np.mean(diff) + half < 0
    every_seed = all(d < 0 for d in diff)       # the paper: "the independent arm is lower on all three seeds"
    out = {r.claim_id: r for r in rows.diagnostic_rows(p, exploit)}
    for arm, label in (("cp_grpo", "paired"), ("independent", "independent")):
        values = [exploit[arm][s] for s in seeds]
        wide = t975(n) * np.std(values, ddof=1) * np.sqrt(1 + 1 / n)      # one more seed
        low, high = np.mean(values) - wide, np.mean(values) + wide
        for s in seeds:
            row = out[f"text_bounded.three_seed.{label}.final_exploitability_seed{s}"]
            assert row.ours == exploit[arm][s]                               # our seed of the same label, shown
            assert row.interval == pytest.approx((low, high), rel=1e-12)
            assert row.verdict == rule(row.paper, low, high, every_seed)
            assert row.relation_holds == every_seed and row.relation_resolved is None    # exact per seed
    mean = out["fig_three_seed.mean_difference"]
    assert mean.interval == pytest.approx((np.mean(diff) - half, np.mean(diff) + half), rel=1e-12)
    assert mean.verdict == rule(mean.paper, *mean.interval, established)


def test_the_committed_mean_difference_is_inconclusive_because_its_interval_spans_zero(p):
    # seed values of the committed diagnostic (independent - paired = +0.44, -0.04, +0.31 chips)
    exploit = {"cp_grpo": {13: 1.6563, 17: 2.1634, 23: 1.9334}, "independent": {13: 2.0956, 17: 2.1237, 23: 2.2460}}
    row = {r.claim_id: r for r in rows.diagnostic_rows(p, exploit)}["fig_three_seed.mean_difference"]
    assert row.interval[0] < row.paper < row.interval[1] and row.interval[0] < 0 < row.interval[1]
    assert row.verdict == claims.INCONCLUSIVE


def test_unshown_impossible_refuses_two_rows_naming_one_claim():
    cid = "fig_three_seed.mean_difference"
    groups = {"a": [Row.compare("x", cid, 1.0)], "b": [Row.compare("y", cid, 2.0)]}
    with pytest.raises(ValueError, match=cid):
        rows.unshown_impossible({}, groups)


def test_unshown_impossible_returns_only_the_rows_no_table_showed():
    shown = Row.compare("x", "fig_three_seed.mean_difference", 1.0)
    hidden = Row.compare("y", "fig_three_seed.seed13.difference", 1.0)
    impossible = {shown.claim_id: shown, hidden.claim_id: hidden}
    assert rows.unshown_impossible(impossible, {"t": [shown]}) == [hidden]


def hand_records(best_return: str) -> dict:
    """Two seeds per arm; `best_return` has the highest mean return (cp_grpo's relation must follow it)."""
    out = {}
    for i, arm in enumerate(rows.POLICY_ROW):
        ret = 1.0 if arm == best_return else -0.1 * (i + 1)
        out[arm] = {str(s): {"mean_return": ret + 0.01 * s, "task_success": 0.5, "update_variance": 1.0,
                             "player0_value": 0.0, "exploitability": 1.0,
                             "ledger": {"physical_calls": 61440, "transitions": 160000}} for s in (1, 2)}
    return out


@pytest.mark.parametrize("best, holds", [("cp_grpo", True), ("grpo", False), ("ppo", False)])
def test_policy_rows_mark_cp_grpo_highest_return_exactly_when_it_is(best, holds):
    out = {r.claim_id: r for r in rows.policy_rows(hand_records(best))}
    row = out["grpo_ppo.cp_grpo_paired.return_mean"]
    assert row.relation_holds is holds
    assert "highest" in row.relation


# ----- 7. the CFR+ reference -------------------------------------------------------------------
def test_cfr_reference_exploitability_equals_pyspiel_cfr_plus_after_50_iterations(defaults, tmp_path, os_game):
    p = parameters.validate({**defaults, "leduc_cfr_iterations": 50, "output_dir": str(tmp_path)})
    solver = pyspiel.CFRPlusSolver(os_game)
    for _ in range(50):
        solver.evaluate_and_update_policy()
    want = pyspiel.exploitability(os_game, solver.average_policy())
    got = screen.cfr_reference(p)
    assert got["iterations"] == 50
    assert got["exploitability"] == pytest.approx(want, abs=MATCH)
    assert got["nash_conv"] == pytest.approx(pyspiel.nash_conv(os_game, solver.average_policy()), abs=MATCH)


# ----- 8. orderings: resolved on every paired per-seed difference ---------------------------------------------
def ordering_records(differences: dict[str, list[float]], key: str = "mean_return") -> dict:
    """Per arm and seed: cp_grpo at 0, every other arm at -difference (cp_grpo - arm = the given difference);
    arms without a list sit far below on every seed."""
    n = len(next(iter(differences.values())))
    out = {"cp_grpo": {str(s): {key: 0.0} for s in range(n)}}
    for arm in rows.POLICY_ROW:
        if arm != "cp_grpo":
            d = differences.get(arm, [100.0 + s for s in range(n)])
            out[arm] = {str(s): {key: -d[s]} for s in range(n)}
    return out


def t_low_above_zero(d) -> bool:
    d = np.asarray(d, dtype=float)
    return bool(d.mean() - t975(d.size) * d.std(ddof=1) / np.sqrt(d.size) > 0)


def test_an_ordering_whose_mean_holds_but_one_paired_difference_spans_zero_is_not_resolved():
    diff = [1.0, -0.5, 1.0]                                   # mean +0.5, its 95% t-interval spans 0
    assert not t_low_above_zero(diff)
    rel = rows.ordering(ordering_records({"independent": diff}), "cp_grpo", "mean_return", "high")
    assert rel.holds is True and rel.resolved is False and not rel.established


def test_an_ordering_every_paired_difference_resolves_is_established():
    diff = [1.0, 1.1, 0.9]
    assert t_low_above_zero(diff)
    rel = rows.ordering(ordering_records({"independent": diff}), "cp_grpo", "mean_return", "high")
    assert rel.holds and rel.resolved


@given(st.lists(st.floats(min_value=-2.0, max_value=2.0, allow_nan=False), min_size=2, max_size=6)
       .filter(lambda d: np.ptp(d) > 1e-6))
def test_resolved_order_is_the_paired_t_interval_on_the_stated_side_and_swaps_with_the_arms(diff):
    records = ordering_records({"independent": diff})
    want = t_low_above_zero(diff)
    assert summary.resolved_order(records, "cp_grpo", ["independent"], "mean_return", "high") is want
    assert summary.resolved_order(records, "independent", ["cp_grpo"], "mean_return", "low") is want
    assert summary.resolved_order(records, "independent", ["cp_grpo"], "mean_return", "high") is \
        t_low_above_zero(-np.asarray(diff))


def test_a_row_whose_size_agrees_but_whose_ordering_is_unresolved_is_inconclusive():
    paper = claims.claim("grpo_ppo.cp_grpo_paired.return_mean")
    records = ordering_records({"independent": [1.0, -0.5, 1.0]})
    for arm in records:
        for rec in records[arm].values():
            rec["mean_return"] += paper                       # cp_grpo's mean is the paper's value
    iv = summary.interval(records, "cp_grpo", "mean_return")
    row = Row.compare("return", "grpo_ppo.cp_grpo_paired.return_mean", iv.mean, iv.low, iv.high,
                      rows.ordering(records, "cp_grpo", "mean_return", "high"))
    assert row.verdict == claims.INCONCLUSIVE


# ----- 9. settings apart from results ---------------------------------------------------------------------------
def kind(claim_id: str) -> str:
    return claims.claim_entry(claim_id)["kind"]


def test_the_settings_rows_are_exactly_the_setup_entries_they_name(p):
    settings = rows.diagnostic_settings(p, p.iterations * p.decision_points)
    assert settings and all(r.is_setting and kind(r.claim_id) == "setup" for r in settings)
    statuses = {r.claim_id: r.verdict for r in settings}
    assert statuses["setup.tabular_screen.seeds"] == claims.ADOPTED          # "13, 17, 23", as the paper
    assert statuses[rows.HELD_OUT_CLAIM] == claims.DIFFERS                    # exact over every deal, not 512
    assert all(r.reason for r in settings if r.verdict == claims.DIFFERS)


def test_no_result_row_of_the_paper_tables_names_a_setup_entry(records):
    full = {arm: {seed: {**rec, "update_variance": 1.0, "contrast_variance_exact": 1.0}
                  for seed, rec in records["cp_grpo"].items()} for arm in rows.POLICY_ROW}
    shown = rows.policy_rows(full) + rows.construction_rows(full)
    assert all(kind(r.claim_id) != "setup" for r in shown if r.claim_id)


@pytest.fixture(scope="module")
def grpo_on_a_budget():
    """GRPO with G = 4 on a budget of 160 physical calls: a multiple of its group, so it spends all of it."""
    schedule = Schedule(iterations=40, decision_points=16, epochs=1, learning_rate=1.0, group_size=4, budget=160)
    return training.train("leduc", [RunSpec("grpo", 13), RunSpec("cp_grpo", 13), RunSpec("independent", 13)],
                          schedule, "cpu")


def test_realised_physical_calls_are_the_ledgers_physical_calls_not_its_transitions(grpo_on_a_budget):
    batch = grpo_on_a_budget
    evaluations = screen.evaluate_runs("leduc", batch.average, "uniform")
    zeros = np.zeros(len(batch.runs))
    contrast = [{"exact": 1.0, "independent_exact": 1.0, "sampled": 1.0, "sampled_se": 0.0}] * len(batch.runs)
    recs = summary.run_records(batch, evaluations, zeros, zeros, contrast)
    assert recs["grpo"]["13"]["physical_calls"] == 160                        # 40 groups of 4 branch rollouts
    assert recs["grpo"]["13"]["ledger"]["transitions"] > 160                  # a rollout is several transitions
    settings = {r.claim_id: r for r in rows.budget_settings(recs, 160)}
    row = settings["measured_independent.standard_grpo.policy_calls"]
    assert row.ours == 160 and "160" in row.reason
    assert row.verdict == claims.DIFFERS                                      # our budget is not the paper's


# ----- 10. readings --------------------------------------------------------------------------------------------
@given(st.lists(st.floats(min_value=-1.0, max_value=1.0, allow_nan=False), min_size=2, max_size=6)
       .filter(lambda v: np.ptp(v) > 1e-6),
       st.floats(min_value=0.0, max_value=3.0), st.integers(min_value=1, max_value=1024))
def test_the_held_out_interval_adds_the_per_root_variance_over_the_roots_to_the_seed_variance(values, sd, roots):
    from oscc_core.method.stats import held_out_interval

    n = len(values)
    half = t975(n) * np.sqrt((np.var(values, ddof=1) + sd ** 2 / roots) / n)
    mean, low, high = held_out_interval(values, [sd ** 2] * n, roots)
    assert (mean, low, high) == pytest.approx((np.mean(values), np.mean(values) - half, np.mean(values) + half),
                                              rel=1e-9, abs=1e-12)


def test_the_held_out_interval_of_a_deterministic_policy_is_the_normal_one_over_every_root():
    from oscc_core.method.stats import held_out_interval

    mean, low, high = held_out_interval([0.5], [1.2 ** 2], roots=512, seeds=5)
    half = scipy_stats.norm.ppf(0.975) * 1.2 / np.sqrt(512 * 5)
    assert (low, high) == pytest.approx((0.5 - half, 0.5 + half), rel=1e-12)


def test_a_claim_impossible_as_a_whole_game_value_takes_the_verdict_under_the_held_out_roots_the_paper_fixes(batch):
    from oscc_core.chapters.solver import feasibility, readings

    evaluations = screen.evaluate_runs("leduc", batch.average, "uniform")
    recs = readings.reading_records("leduc", batch.runs, batch.average, evaluations)
    read = readings.Readings.build(recs, feasibility.feasibility_table("leduc"))
    cid = "measured_solver.cp_grpo_paired.player0_value"           # breaks v* + NashConv as a whole-game value
    v = [rec["player0_value"] for rec in recs["cp_grpo"].values()]
    whole = Row.compare("cp_grpo: player-0 value", cid, float(np.mean(v)), min(v), max(v))
    row = read.combine(whole)
    verdicts = {r["reading"]: r["verdict"] for r in row.readings}
    assert verdicts[feasibility.READINGS["whole_p0"]] == claims.IMPOSSIBLE
    assert verdicts[feasibility.READINGS["held_out"]] in claims.COMPARED
    assert verdicts[feasibility.READINGS["pairs"]] == claims.NOT_COMPARED
    assert row.verdict != claims.IMPOSSIBLE and feasibility.READINGS["whole_p0"] in row.reason
    # the readings disagree (impossible against a size verdict); the appendix's "held-out roots" decides
    assert row.reading == feasibility.READINGS["held_out"] and row.reading_dependent
    assert row.verdict == verdicts[feasibility.READINGS["held_out"]]
    assert "held-out roots" in row.reason


def test_every_quantity_lists_the_whole_game_reading_then_the_held_out_roots_and_the_rank_pairs_last():
    from oscc_core.chapters.solver.readings import READING_CLAIMS

    held_out = {"whole_p0": "held_out", "br0": "br0_held_out", "exploitability": "expl_held_out"}
    for claim_id, (_, kind, _, keys) in READING_CLAIMS.items():
        if kind == "row":       # the uniform policy's other numbers: the fixed policy, then a learned arm
            assert keys == ("fixed_uniform", "learned_uniform"), claim_id
            continue
        assert keys[0] in held_out, claim_id                        # the book's whole-game reading first
        assert keys[1] == held_out[keys[0]], claim_id               # then the paper's appendix reading
        assert keys[-1] in ("pairs", "br_pairs", "expl_pairs"), claim_id   # a rule check only, last


def test_a_more_favourable_later_reading_never_gives_the_verdict():
    from oscc_core.chapters.solver import feasibility, readings

    paper = float(claims.claim("measured_solver.cp_grpo_paired.player0_value"))        # 0.2136
    seeds = ("13", "17", "23", "29", "31")
    recs = {"cp_grpo": {s: {"player0_value": -0.5 + 0.01 * i, "seat0_return": paper + 0.01 * (i - 2),
                            "seat_mean_return": 0.8, "root_sd": {"player0_value": 1.0},
                            "pairs": {"player0_value": {"J,Q": 0.0}}}
                        for i, s in enumerate(seeds)}}
    read = readings.Readings.build(recs, feasibility.feasibility_table("leduc"))
    cid = "measured_solver.cp_grpo_paired.player0_value"
    v = [-0.5 + 0.01 * i for i in range(5)]
    whole = Row.compare("cp_grpo: player-0 value", cid, float(np.mean(v)), min(v), max(v))
    row = read.combine(whole)
    verdicts = {r["reading"]: r["verdict"] for r in row.readings}
    # against the evaluation opponent the paper's number is our seed mean: reproduced, and listed after held-out
    assert verdicts[feasibility.READINGS["versus"]] == claims.REPRODUCED
    # held-out roots: mean -0.48, half-width t_4 sqrt((s^2 + 1 / 512) / 5) < 0.1, far from 0.2136
    half = t975(5) * np.sqrt((np.var(v, ddof=1) + 1.0 / 512) / 5)
    assert not np.mean(v) - half <= paper <= np.mean(v) + half
    assert (row.verdict, row.reading) == (claims.NOT_REPRODUCED, feasibility.READINGS["held_out"])


def test_the_readings_table_has_one_line_per_reading_and_marks_the_reading_that_decides():
    from oscc_core.chapters.solver import readings, tables
    from oscc_core.chapters.solver.feasibility import READINGS, SHORT

    cid = "measured_solver.cp_grpo_paired.player0_value"
    paper = float(claims.claim(cid))
    keys = ("whole_p0", "held_out", "versus", "pairs")
    listed = [Row.impossible("value", cid, -0.1, "a bound", READINGS["whole_p0"]),
              replace(Row.compare("value", cid, 0.0, -0.1, 0.1), reading=READINGS["held_out"]),
              replace(Row.compare("value", cid, paper, paper - 0.1, paper + 0.1), reading=READINGS["versus"]),
              replace(Row.not_compared("value", cid, "no pair named"), reading=READINGS["pairs"])]
    fixed = readings.combine_readings(listed, ("held_out",), "the appendix says so")
    table = tables.readings_table([fixed])
    assert list(table.index.get_level_values("reading")) == [SHORT[k] for k in keys]
    assert list(table["verdict"]) == [claims.IMPOSSIBLE, claims.NOT_REPRODUCED, claims.REPRODUCED,
                                      claims.NOT_COMPARED]
    assert list(table["decides"]) == ["", "the paper's", "", ""]   # held-out roots, not the favourable 'vs uniform'
    assert table.notes == [(SHORT[k], "reading", READINGS[k]) for k in keys]
    open_ = readings.combine_readings(listed)                       # no reading fixed by the text
    assert open_.verdict == claims.DEPENDS and list(tables.readings_table([open_])["decides"]) == [""] * 4
    every = Row.under_readings([Row.impossible("value", cid, -0.1, "a bound", READINGS[k]) for k in keys[:2]])
    assert list(tables.readings_table([every])["decides"]) == ["all", "all"]


# ----- 11. the findings box -------------------------------------------------------------------------------------
def test_the_findings_box_states_the_chapters_own_numbers_and_only_the_rows_impossible_under_every_reading(p):
    from oscc_core.chapters.solver.findings import findings

    keys = ("mean_return", "task_success", "update_variance", "player0_value", "nash_conv", "exploitability",
            "contrast_variance_exact")
    exploit = {"cp_grpo": 1.25, "independent": 1.5, "grpo": 1.53, "ppo": 1.3, "uniform": 2.37}
    recs = {arm: {str(s): {**dict.fromkeys(keys, 1.0), "exploitability": e + 0.01 * s} for s in (1, 2, 3)}
            for arm, e in exploit.items()}
    cal = {game: {"targets": {"paper": {"first_reach": reach}}} for game, reach in (("kuhn", 91), ("leduc", 93))}
    diag = rows.diagnostic_rows(p, {"cp_grpo": {13: 1.66, 17: 2.16, 23: 1.93}, "independent": {13: 2.10, 17: 2.12,
                                                                                              23: 2.25}})
    impossible = Row.impossible("uniform: exploitability (chips)", "grpo_ppo.uniform_policy.exploitability", 2.3736,
                                "fixed by the rules", "NashConv / 2 of the whole game")
    box = findings(cal, recs, diag, diag + [impossible], 61440).record()["box"]
    assert "1.270 to 1.550 chips" in box["does not hold"]                    # seed means 1.27 ... 1.55
    assert "after 93 iterations in Leduc" in box["holds"]
    # the three-seed diagnostic is inconclusive (its interval spans zero): filed with what is open, not as a failure
    assert "The three-seed diagnostic" in box["impossible or open"]
    assert "0.4926" in box["impossible or open"] and box["impossible or open"].count(" = ") == 1


def _ledger_records(calls: dict, transitions: dict) -> dict:
    return {arm: {"13": {"ledger": {"physical_calls": calls[arm], "transitions": transitions[arm]}}} for arm in calls}


def test_a_cost_is_shown_as_its_ratio_to_independents_in_physical_calls_and_not_compared_in_size():
    from oscc_core.reporting import comparability

    records = _ledger_records({"cp_grpo": 61440, "independent": 61440}, {"cp_grpo": 170000, "independent": 160000})
    row = rows.cost_ratio_row("cost", "grpo_ppo.cp_grpo_paired.cost", "grpo_ppo.independent.cost", records,
                              "cp_grpo")
    assert row.paper == pytest.approx(108.73 / 108.19, abs=1e-4)     # the paper's seconds, CP-GRPO over independent
    assert row.ours == 1.0 and row.verdict == claims.NOT_COMPARED          # wall times: 1 by construction
    assert comparability.reason_of("wall times") in row.reason
    assert "1.062" in row.reason                                 # 170,000 / 160,000 transitions


def test_a_cost_ratio_of_twice_the_calls_is_shown_but_not_compared_in_size():
    records = _ledger_records({"cp_grpo": 122880, "independent": 61440}, {"cp_grpo": 1, "independent": 1})
    row = rows.cost_ratio_row("cost", "grpo_ppo.cp_grpo_paired.cost", "grpo_ppo.independent.cost", records,
                              "cp_grpo")
    assert row.ours == 2.0 and row.verdict == claims.NOT_COMPARED


def test_the_reference_arms_own_cost_is_not_compared_with_a_reason():
    records = _ledger_records({"independent": 61440}, {"independent": 1})
    row = rows.cost_ratio_row("cost", "grpo_ppo.independent.cost", "grpo_ppo.independent.cost", records,
                              "independent")
    assert row.verdict == "not compared" and "by definition" in row.reason


# --- the cost ledger as the page shows it ---------------------------------------------------------------------

@pytest.mark.parametrize("value, text", [(61_440.0, "61,440"), (61_439.6, "61,439.6"), (0.0, "0"),
                                         (245_758.4, "245,758.4"), (6_321.0, "6,321"), (211.96, "212")])
def test_a_seed_mean_of_counts_is_a_whole_number_without_decimals_or_one_decimal(value, text):
    from oscc_core.reporting.numbers import mean_count_text
    assert mean_count_text(value) == text


def test_the_cost_ledger_has_a_column_per_arm_and_a_row_per_count():
    from oscc_core.chapters.solver import tables
    ledger = {"physical_calls": 61_440, "unused_hands": 0, "terms": 100, "clipped_terms": 5}
    records = {arm: {seed: {"ledger": {**ledger, "physical_calls": 61_440 - (arm == "independent") * seed % 2}}
                     for seed in (13, 17)} for arm in ("cp_grpo", "independent")}
    frame = tables.ledger_table(records)
    assert list(frame.columns) == ["cp_grpo", "independent"]
    assert list(frame.index) == ["physical calls", "unused hands", "terms", "clipped terms", "clip fraction"]
    assert frame.loc["physical calls"].tolist() == ["61,440", "61,439"]     # 61,440 - 13 % 2 and - 17 % 2
    assert frame.loc["clip fraction", "cp_grpo"] == "0.0500"
