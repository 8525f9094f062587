"""The study check's parts, checkpoints and one-line report (`oscc_core.reporting.study_verification`), on small
studies written here; the checkpoint comparison with its loading and pyspiel's recheck replaced by stand-ins whose
answers the test sets."""
from __future__ import annotations

import pytest

from oscc_core.learning.loop import Schedule
from oscc_core.reporting import study_verification as sv

DESIGN = {"game": "kuhn", "base": Schedule(iterations=3).as_dict(), "seeds": [13, 17]}
RUNS = {"cp_grpo": {"13": {"100": {"exploitability_average": 0.5}, "1000": {"exploitability_average": 0.25}}}}
CHOICES = {"cp_grpo": {"eta": 2.0, "alpha": 0.5, "kappa": 0.1}}


def test_a_solver_study_is_one_part_and_its_checkpoints_file_is_found_beside_it(tmp_path):
    body = {"design": DESIGN, "choices": {"converging": CHOICES}, "runs": {"converging": RUNS}}
    (part,) = sv.parts_of(body, "05_x", tmp_path)
    assert (part.label, part.game, part.seeds, part.checkpoints, part.key_prefix) == ("05_x", "kuhn", (13, 17), None,
                                                                                     None)
    (tmp_path / "05_x_checkpoints.json.gz").write_bytes(b"")
    assert sv.parts_of(body, "05_x", tmp_path)[0].checkpoints == str(tmp_path / "05_x_checkpoints.json.gz")
    assert sv.parts_of(body, "05_x")[0].checkpoints is None                       # no directory: none looked for
    assert part.base == Schedule(iterations=3) and part.runs == {"converging": RUNS}


def test_a_transfer_study_is_its_converging_runs_and_its_control_each_with_its_own_checkpoints(tmp_path):
    body = {"design": DESIGN, "operating_point": {}, "choices": CHOICES, "runs": RUNS,
            sv.CONTROL_KEY: {"design": DESIGN, "choices": CHOICES, "runs": RUNS}}
    (tmp_path / "06_x_control_checkpoints.json.gz").write_bytes(b"")
    frozen, control = sv.parts_of(body, "06_x", tmp_path)
    assert (frozen.label, frozen.key_prefix, frozen.checkpoints) == ("06_x", "kuhn", None)
    assert (control.label, control.key_prefix) == ("06_x/kuhn_tuned", "kuhn_tuned")
    assert control.checkpoints == str(tmp_path / "06_x_control_checkpoints.json.gz")
    assert frozen.choices == {"converging": CHOICES} and frozen.runs == {"converging": RUNS}
    assert len(sv.parts_of({k: v for k, v in body.items() if k != sv.CONTROL_KEY}, "06_x")) == 1


def test_the_records_of_a_seed_up_to_a_budget():
    part = sv.Part("p", "kuhn", Schedule(), {"converging": CHOICES}, {"converging": RUNS}, (13, 17))
    assert sv.recorded(part, 13) == {("converging", "cp_grpo", 13, 100): {"exploitability_average": 0.5},
                                     ("converging", "cp_grpo", 13, 1000): {"exploitability_average": 0.25}}
    assert list(sv.recorded(part, 13, 999)) == [("converging", "cp_grpo", 13, 100)]
    assert list(sv.recorded(part, 13, 1000)) == [("converging", "cp_grpo", 13, 100), ("converging", "cp_grpo", 13,
                                                                                      1000)]
    assert sv.recorded(part, 17) == {}


def test_a_seed_with_records_is_rerun_at_exactly_those_budgets_keeping_its_table_only_with_a_checkpoints_file():
    part = sv.Part("p", "kuhn", Schedule(), {"converging": CHOICES, "literal": {"grpo": {"eta": 1.0}}},
                   {"converging": RUNS}, (13, 17), checkpoints="c.json.gz")
    (task,) = sv.tasks_of(part, 13)                       # the literal learner recorded nothing for seed 13
    assert (task.learner, task.arm, task.seeds, task.budgets, task.keep_table) == (
        "converging", "cp_grpo", (13,), (100, 1000), True)
    s = dict(task.schedule)
    assert (s["learning_rate"], s["proximal_alpha"], s["proximal_kappa"]) == (2.0, 0.5, 0.1)
    assert sv.tasks_of(part, 13, 100)[0].keep_table is False      # below the largest budget: no checkpoint
    assert sv.tasks_of(part, 17) == []


# ----- checkpoints -----------------------------------------------------------------------------------------------
@pytest.fixture
def stand_ins(monkeypatch):
    """Saved checkpoints, the policy a rerun's table becomes, and pyspiel's value of a saved policy: all set here."""
    import oscc_core.learning.checkpoints as checkpoints
    import oscc_core.policy as policy

    state = {"saved": {"converging/cp_grpo/13": "P"}, "pyspiel": 0.25}
    monkeypatch.setattr(checkpoints, "load_checkpoints", lambda path: state["saved"])
    monkeypatch.setattr(checkpoints, "openspiel_exploitability", lambda game, saved: state["pyspiel"])
    monkeypatch.setattr(policy, "table_to_policy", lambda game, table: {"T": "P"}.get(table, "other"))
    return state


PART = sv.Part("05_x", "kuhn", Schedule(), {"converging": CHOICES}, {"converging": RUNS}, (13,),
               checkpoints="/nowhere/05_x_checkpoints.json.gz")
KEPT = [{"task": {"learner": "converging", "arm": "cp_grpo"}, "tables": {"13": "T"}}]


def test_a_kept_table_equal_to_its_checkpoint_with_pyspiels_value_on_the_record_is_no_difference(stand_ins):
    assert sv.checkpoint_differences(PART, 13, KEPT) == (1, [])


def test_pyspiels_value_exactly_the_tolerance_away_is_no_difference_and_beyond_it_is(stand_ins):
    stand_ins["pyspiel"] = 0.25 + sv.CHECKPOINT_TOLERANCE / 2
    assert sv.checkpoint_differences(PART, 13, KEPT) == (1, [])
    stand_ins["pyspiel"] = 0.25 + 2 * sv.CHECKPOINT_TOLERANCE
    assert sv.checkpoint_differences(PART, 13, KEPT)[1] == [
        f"checkpoint converging/cp_grpo/13: pyspiel gives {0.25 + 2 * sv.CHECKPOINT_TOLERANCE!r} chips, the committed "
        f"record 0.25"]


def test_a_checkpoint_missing_or_of_another_policy_is_a_difference(stand_ins):
    stand_ins["saved"] = {}
    assert sv.checkpoint_differences(PART, 13, KEPT)[1] == [
        "checkpoint converging/cp_grpo/13: the rerun kept it, but 05_x_checkpoints.json.gz does not hold it"]
    stand_ins["saved"] = {"converging/cp_grpo/13": "Q"}
    assert sv.checkpoint_differences(PART, 13, KEPT)[1] == [
        "checkpoint converging/cp_grpo/13: the committed policy differs from the rerun's average policy"]


def test_a_parts_key_prefix_names_its_checkpoints_and_without_kept_tables_none_are_compared(stand_ins):
    stand_ins["saved"] = {"kuhn_tuned/cp_grpo/13": "P"}
    control = sv.Part("06_x/kuhn_tuned", "kuhn", Schedule(), {"converging": CHOICES}, {"converging": RUNS}, (13,),
                      checkpoints="c.json.gz", key_prefix="kuhn_tuned")
    assert sv.checkpoint_differences(control, 13, KEPT) == (1, [])
    assert sv.checkpoint_differences(control, 13, [{"task": KEPT[0]["task"], "tables": {}}]) == (0, [])


# ----- the report line -------------------------------------------------------------------------------------------
def check(**kw) -> dict:
    return {"label": "05_x", "seed": 13, "records": 8, "checkpoints": None, "differences": [],
            "nothing_to_compare": False, "agrees": True, **kw}


def test_the_report_says_how_many_records_agree_and_what_became_of_the_checkpoints():
    head = "05_x: seed 13, each of its 8 records at every learner, arm and budget equals the committed one bit for bit"
    assert sv.text(check()) == head + "; no checkpoints file committed"
    assert sv.text(check(checkpoints=0)) == head + "; its checkpoints not compared (a rerun below the largest budget)"
    assert sv.text(check(checkpoints=4)) == head + "; its 4 checkpoints equal the rerun's policies and pyspiel's recheck"


def test_the_report_lists_each_difference_under_its_count():
    assert sv.text(check(agrees=False, differences=["a: x", "b: y"])) == \
        "05_x: seed 13, 2 differences in its 8 committed records:\n  a: x\n  b: y"


def test_the_compare_counts_the_committed_records_and_lists_differences(stand_ins):
    part = sv.Part("05_x", "kuhn", Schedule(), {"converging": CHOICES}, {"converging": RUNS}, (13,))
    rerun = [{"task": {"learner": "converging", "arm": "cp_grpo"}, "runs": {"13": {
        "100": {"exploitability_average": 0.5}, "1000": {"exploitability_average": 0.25}}}}]
    got = sv.compare(part, 13, rerun)
    assert got == {"label": "05_x", "seed": 13, "records": 2, "checkpoints": None, "differences": [],
                   "nothing_to_compare": False, "agrees": True}
    rerun[0]["runs"]["13"]["1000"] = {"exploitability_average": 0.5}
    got = sv.compare(part, 13, rerun, up_to=1000)
    assert (got["records"], got["agrees"]) == (2, False)
    assert got["differences"] == ["converging/cp_grpo/13/1000 exploitability_average: committed 0.25, rerun 0.5 "
                                  "(4503599627370496 units in the last place)"]


# ----- what mutation testing found unpinned --------------------------------------------------------------------------
def test_a_choice_without_alpha_or_kappa_is_rerun_without_them():
    part = sv.Part("p", "kuhn", Schedule(), {"converging": {"cp_grpo": {"eta": 2.0}}}, {"converging": RUNS}, (13,))
    s = dict(sv.tasks_of(part, 13)[0].schedule)
    assert (s["proximal_alpha"], s["proximal_kappa"]) == (0.0, 0.0)


@pytest.mark.parametrize("a, b, line", [
    ({"x": 1.0, "y": 2.0}, {"x": 1.0}, "k y: committed 2.0, rerun None"),
    ({"n": 1}, {"n": 2}, "k n: committed 1, rerun 2"),
    ({"v": 1}, {"v": 2.0}, "k v: committed 1, rerun 2.0"),
    ({"v": 1.0}, {"v": 2}, "k v: committed 1.0, rerun 2"),
])
def test_a_field_on_one_side_only_or_not_two_finite_floats_is_named_without_units_in_the_last_place(a, b, line):
    assert sv.differences({("k",): a}, {("k",): b}) == [line]


def test_the_checkpoints_are_read_from_the_parts_file_for_its_game_and_every_kept_table_is_checked(monkeypatch):
    import oscc_core.learning.checkpoints as checkpoints
    import oscc_core.policy as policy

    calls = []
    monkeypatch.setattr(checkpoints, "load_checkpoints", lambda path: calls.append(path) or {"converging/grpo/13": "P"})
    monkeypatch.setattr(checkpoints, "openspiel_exploitability",
                        lambda game, saved: calls.append((game, saved)) or 1e-8)
    monkeypatch.setattr(policy, "table_to_policy", lambda game, table: calls.append((game, table)) or "P")
    runs = {"grpo": {"13": {"100": {"exploitability_average": 0.0}}}}
    part = sv.Part("05_x", "kuhn", Schedule(), {"converging": CHOICES}, {"converging": {**RUNS, **runs}}, (13,),
                   checkpoints="/x/05_x_checkpoints.json.gz")
    kept = [{"task": {"learner": "converging", "arm": "cp_grpo"}, "tables": {"13": "T"}},
            {"task": {"learner": "converging", "arm": "grpo"}, "tables": {"13": "U"}}]
    count, lines = sv.checkpoint_differences(part, 13, kept)
    # cp_grpo's is missing, and grpo's still checked after it: pyspiel exactly the tolerance (1e-8) from 0.0
    assert (count, lines) == (2, ["checkpoint converging/cp_grpo/13: the rerun kept it, but 05_x_checkpoints.json.gz "
                                  "does not hold it"])
    assert calls == ["/x/05_x_checkpoints.json.gz", ("kuhn", "U"), ("kuhn", "P")]


def test_a_compare_adds_the_checkpoint_differences_to_the_record_differences(stand_ins):
    stand_ins["saved"] = {}
    rerun = [{"task": {"learner": "converging", "arm": "cp_grpo"}, "tables": {"13": "T"}, "runs": {"13": {
        "100": {"exploitability_average": 0.5}, "1000": {"exploitability_average": 0.5}}}},
             {"task": {"learner": "converging", "arm": "cp_grpo"}, "runs": {"17": {}}}]
    got = sv.compare(PART, 13, rerun)
    assert got["checkpoints"] == 1 and got["differences"] == [
        "converging/cp_grpo/13/1000 exploitability_average: committed 0.25, rerun 0.5 (4503599627370496 units in "
        "the last place)",
        "checkpoint converging/cp_grpo/13: the rerun kept it, but 05_x_checkpoints.json.gz does not hold it"]
