"""Chapter 05 (solver): parameters, checkpoints, update and contrast variances, records, rows, CFR+ reference.

Every expected value is independent of the module under test: pyspiel (tree
enumeration, TabularPolicy, exploitability, CFRPlusSolver), closed forms,
enumerations of the deal law, slow unbatched re-computations written here,
or the paper's numbers read from the claims file with the 5% rule of
DESIGN section 10 applied in the test.
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

pyspiel = pytest.importorskip("pyspiel")
from notebook_runs import parameter_defaults
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
    return {**parameter_defaults("05_solver"), "output_dir": str(tmp_path_factory.mktemp("solver_results"))}


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
def expected_verdict(claim_id: str, ours: float, relation_holds: bool) -> str:
    paper = claims.claim(claim_id)
    if abs(ours - paper) <= 0.05 * abs(paper):
        return claims.REPRODUCED
    return claims.PARTLY if relation_holds else claims.NOT_REPRODUCED


def test_diagnostic_rows_declare_independent_below_paired_exactly_when_it_holds(p):
    paired13 = claims.claim("text_bounded.three_seed.paired.final_exploitability_seed13")
    indep17 = claims.claim("text_bounded.three_seed.independent.final_exploitability_seed17")
    exploit = {"cp_grpo": {13: paired13, 17: 1.0, 23: 1.0},         # 13: holds, size met for paired
               "independent": {13: 1.5, 17: indep17, 23: 1.0}}     # 17: fails, size met; 23: equal, fails
    holds = {13: True, 17: False, 23: False}
    out = {r.claim_id: r for r in rows.diagnostic_rows(p, exploit)}
    for arm, label in (("cp_grpo", "paired"), ("independent", "independent")):
        for s in p.diagnostic_seeds:
            row = out[f"text_bounded.three_seed.{label}.final_exploitability_seed{s}"]
            assert row.relation == f"independent < paired at seed {s}"
            assert row.relation_holds is holds[s]
            assert row.verdict == expected_verdict(row.claim_id, exploit[arm][s], holds[s])
    assert out["text_bounded.three_seed.paired.final_exploitability_seed13"].verdict == claims.REPRODUCED
    assert out["text_bounded.three_seed.independent.final_exploitability_seed13"].verdict == claims.PARTLY
    assert out["text_bounded.three_seed.paired.final_exploitability_seed17"].verdict == claims.NOT_REPRODUCED
    assert out["text_bounded.three_seed.independent.final_exploitability_seed17"].verdict == claims.REPRODUCED
    for s in p.diagnostic_seeds:
        row = out[f"fig_three_seed.seed{s}.difference"]
        diff = exploit["independent"][s] - exploit["cp_grpo"][s]
        assert row.ours == pytest.approx(diff) and row.relation_holds is holds[s]
        assert row.verdict == expected_verdict(row.claim_id, diff, holds[s])


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
                             "player0_value": 0.0, "exploitability": 1.0} for s in (1, 2)}
    return out


@pytest.mark.parametrize("best, holds", [("cp_grpo", True), ("grpo", False), ("ppo", False)])
def test_policy_rows_mark_cp_grpo_highest_return_exactly_when_it_is(best, holds):
    out = {r.claim_id: r for r in rows.policy_rows(hand_records(best), {})}
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
