"""The solver chapter's learning study: rows, the live check, the operating point and the committed checkpoints.

Studies are built by hand here (their numbers chosen so that the expected verdicts follow from the rule by
hand), except the last test, which recomputes committed checkpoints with pyspiel.
"""
import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from oscc_core.chapters.solver import study, study_view
from oscc_core.reporting import claims
from oscc_core.reporting.rows import Row

ARMS = ("cp_grpo", "independent", "grpo", "ppo")
RESULTS = Path(__file__).resolve().parent.parent / "results"


def iv(mean, half):
    return {"mean": mean, "low": mean - half, "high": mean + half, "n": 30}


def made_up_study(means: dict, diffs: dict) -> dict:
    """A study holding only what the rows read: the literal learner at the paper's budget."""
    budget = 61440
    arms = {arm: {"exploitability_average": iv(m, 0.05)} for arm, m in means.items()}
    differences = {f"{arm} - cp_grpo": {**iv(*diffs[arm]), "cp_grpo_lower": 20} for arm in ARMS[1:]}
    return {"design": {"budget": budget, "budgets": [budget]},
            "summary": {"literal": {str(budget): {"arms": arms, "differences": differences}}}}


def test_the_papers_exploitability_inside_our_interval_with_a_resolved_ordering_is_reproduced():
    paper = float(claims.claim("grpo_ppo.cp_grpo_paired.exploitability"))
    s = made_up_study({"cp_grpo": paper, "independent": 1.0, "grpo": 1.1, "ppo": 1.2},
                      {"independent": (0.5, 0.1), "grpo": (0.6, 0.1), "ppo": (0.7, 0.1)})
    row = next(r for r in study_view.rows(s) if r.claim_id == "grpo_ppo.cp_grpo_paired.exploitability")
    assert row.verdict == claims.REPRODUCED and row["relation resolved"] is True


def test_an_ordering_one_paired_interval_does_not_resolve_makes_an_agreeing_size_inconclusive():
    paper = float(claims.claim("grpo_ppo.cp_grpo_paired.exploitability"))
    s = made_up_study({"cp_grpo": paper, "independent": 1.0, "grpo": 1.1, "ppo": 1.2},
                      {"independent": (0.05, 0.1), "grpo": (0.6, 0.1), "ppo": (0.7, 0.1)})   # spans 0
    row = next(r for r in study_view.rows(s) if r.claim_id == "grpo_ppo.cp_grpo_paired.exploitability")
    assert row.verdict == claims.INCONCLUSIVE


def test_nashconv_rows_are_twice_the_exploitability_interval():
    s = made_up_study({arm: 1.0 + i for i, arm in enumerate(ARMS)},
                      {"independent": (1.0, 0.1), "grpo": (2.0, 0.1), "ppo": (3.0, 0.1)})
    nc = next(r for r in study_view.rows(s) if r.claim_id == "measured_solver.standard_grpo.nashconv")
    assert nc.ours == 6.0 and nc.interval == (5.9, 6.1)


def test_a_row_the_study_compares_becomes_a_sensitivity_row_of_the_screen():
    screen = [Row.compare("cp_grpo: exploitability", "grpo_ppo.cp_grpo_paired.exploitability", 1.2, 1.1, 1.3),
              Row.compare("cp_grpo: return", "grpo_ppo.cp_grpo_paired.return_mean", 0.1, 0.0, 0.2)]
    primary = [Row.compare("cp_grpo: exploitability, 30 seeds", "grpo_ppo.cp_grpo_paired.exploitability", 1.0)]
    out = study_view.defer_to(primary, screen)
    assert [r.primary for r in out] == [False, True]


def test_the_live_check_compares_only_shared_records_and_finds_a_difference():
    committed = {"runs": {"literal": {"cp_grpo": {"13": {"100": {"a": 1.0, "b": 2.0}, "200": {"a": 3.0}}}}}}
    same = {"runs": {"literal": {"cp_grpo": {"13": {"100": {"a": 1.0, "b": 2.0}}, "99": {"100": {"a": 5.0}}}}}}
    got = study.live_check(committed, same, bitwise=True)
    assert (got["records"], got["max_abs_difference"], got["agrees"]) == (1, 0.0, True)
    off = {"runs": {"literal": {"cp_grpo": {"13": {"100": {"a": 1.0, "b": 2.5}}}}}}
    got = study.live_check(committed, off, bitwise=True)
    assert (got["records"], got["max_abs_difference"], got["agrees"]) == (1, 0.5, False)


def test_a_live_check_without_bit_equality_asks_each_number_to_lie_within_the_seeds_range():
    committed = {"runs": {"cp_grpo": {"13": {"100": {"a": 1.0}}, "17": {"100": {"a": 3.0}}}}}
    inside = study.live_check(committed, {"runs": {"cp_grpo": {"19": {"100": {"a": 2.0}}}}}, bitwise=False)
    assert (inside["mode"], inside["fields_within_range"], inside["fields"], inside["agrees"]) == \
        ("within the seeds' range", 1, 1, True)
    outside = study.live_check(committed, {"runs": {"cp_grpo": {"13": {"100": {"a": 3.5}}}}}, bitwise=False)
    assert (outside["fields_within_range"], outside["agrees"]) == (0, False)


def test_bit_equality_is_expected_only_with_the_recorded_package_versions():
    from oscc_core.reporting.results import package_versions

    assert study.bit_equality_expected({"manifest": {"package_versions": package_versions()}})[0]
    other = {**package_versions(), "numpy": "0.0"}
    expected, why = study.bit_equality_expected({"manifest": {"package_versions": other}})
    assert not expected and "numpy" in why
    assert not study.bit_equality_expected({"manifest": {}})[0]


CHECKPOINTS = RESULTS / study.CHECKPOINTS_FILE


def test_committed_study_checkpoints_recomputed_by_openspiel_equal_the_studys_values():
    pyspiel = pytest.importorskip("pyspiel")
    from open_spiel.python.algorithms import exploitability as os_exploitability
    from open_spiel.python.policy import TabularPolicy

    body = json.loads((RESULTS / f"{study.STUDY_STEM}.json").read_text())
    with gzip.open(CHECKPOINTS, "rt") as fh:
        policies = json.load(fh)
    top = str(max(body["design"]["recorded_budgets"]))
    game = pyspiel.load_game("leduc_poker")
    for key in sorted(policies)[::15]:                      # a spread of them: every fifteenth key
        learner, arm, seed = key.split("/")
        tab = TabularPolicy(game)
        for state, probs in policies[key].items():
            tab.policy_for_key(state)[:] = np.asarray(probs)
        theirs = os_exploitability.exploitability(game, tab)
        assert abs(theirs - body["runs"][learner][arm][seed][top]["exploitability_average"]) < 1e-8, key


def test_the_committed_study_has_thirty_seeds_per_learner_and_arm_keyed_by_integer_budgets():
    body = json.loads((RESULTS / f"{study.STUDY_STEM}.json").read_text())
    assert set(body["runs"]) == {"literal", "converging"}
    for learner, arms in body["runs"].items():
        assert set(arms) == set(ARMS)
        for arm, seeds in arms.items():
            assert len(seeds) >= 30, (learner, arm)
            for budgets in seeds.values():
                assert all(str(int(b)) == b for b in budgets)
                assert all({"exploitability_average", "exploitability_last"} <= set(r) for r in budgets.values())
    for learner in body["runs"]:
        assert str(body["design"]["budget"]) in body["summary"][learner]


def test_a_live_check_refuses_records_with_different_fields():
    committed = {"runs": {"cp_grpo": {"13": {"100": {"a": 1.0, "b": 2.0}}}}}
    with pytest.raises(ValueError, match="different fields"):
        study.live_check(committed, {"runs": {"cp_grpo": {"13": {"100": {"a": 1.0}}}}}, bitwise=True)
