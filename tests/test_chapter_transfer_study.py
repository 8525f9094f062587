"""The transfer chapter's converging study: the operating point frozen on Leduc, the Kuhn study, its file, its
checkpoints, its live check and its rows.

Expected values come from outside the code under test: the solver chapter's own builder of the converging
operating point (the two chapters must print one digest), the claims file read with yaml, a run of one task
trained alone (`learning.study.run_task`), pyspiel's exploitability of the checkpoints file read back with
gzip + json, an enumeration of Kuhn's contrast variance over pyspiel's tree (`test_chapter_transfer`), the proved
maxima 4 and 50/9 (full coupling and independent branches at Kuhn's root), and the verdict rule written out.
"""
from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

pyspiel = pytest.importorskip("pyspiel")
from notebook_runs import parameter_defaults, runnable_defaults
from test_chapter_transfer import kuhn_contrast_variance, pyspiel_exploitability, read_checkpoints

from oscc_core.chapters.transfer import kuhn_tuned, parameters, study, study_view
from oscc_core.learning import study_design
from oscc_core.learning.study import Task, run_task
from oscc_core.reporting import claims

ROOT = Path(__file__).resolve().parent.parent
ARMS = ("cp_grpo", "independent", "grpo", "ppo")
CHOICES = {"literal": {arm: {"eta": 4.0, "alpha": 0.0, "kappa": 0.0} for arm in ARMS},
           "converging": {"cp_grpo": {"eta": 16.0, "alpha": 0.5, "kappa": 0.1},
                          "independent": {"eta": 16.0, "alpha": 0.5, "kappa": 0.1},
                          "grpo": {"eta": 8.0, "alpha": 0.5, "kappa": 0.01},
                          "ppo": {"eta": 4.0, "alpha": 0.5, "kappa": 0.01}}}
SEEDS, MULTIPLES, BUDGET = [13, 17], [1, 10], 1000
MATCH = 1e-8                 # chips: pyspiel against the study's value (the study rounds to 10 digits)
#: A small rule of a Leduc study file (its design's rule fields): the control's tuning runs 8 choices per arm (plus
#: one extension where a choice sits at an edge) at 10 x BUDGET on two development seeds.
DEV_SEEDS = [1001, 1002]
RULE = {"dev_seeds": DEV_SEEDS, "budget": BUDGET, "tune_multiples": {"literal": 1, "converging": 10},
        "grids": {"converging": {"eta": [8.0, 16.0], "alpha": [0.0, 0.5], "kappa": [0.0, 0.1], "max_extensions": 1}}}


@pytest.fixture(scope="module")
def where(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("transfer_study")
    (out / "choices.json").write_text(json.dumps(CHOICES))
    (out / "small_rule.json").write_text(json.dumps({"choices": CHOICES, "design": RULE}))
    return out


def with_file(p, path: Path):
    """The parameters `p` with another Leduc study file."""
    return parameters.validate({**{n: getattr(p, n) for n in parameters.NAMES if n != "output_dir"},
                                "output_dir": str(p.out_dir), "leduc_study": str(path)})


@pytest.fixture(scope="module")
def p(where):
    """A tiny Kuhn study: two seeds, budgets 1000 and 10,000 calls, one worker, run whole (study_file ""), its
    Leduc file holding the converging choices and a small rule (the control's tuning)."""
    return parameters.validate({**parameter_defaults("06_transfer"), "output_dir": str(where / "out"),
                                "leduc_study": str(where / "small_rule.json"), "study_file": "",
                                "study_store": str(where / "store"), "study_seeds": SEEDS,
                                "study_multiples": MULTIPLES, "budget": BUDGET, "workers": 1, "device": "cpu"})


@pytest.fixture(scope="module")
def op(p):
    return study.converging_operating_point(p, study.leduc_choices(p))


@pytest.fixture(scope="module")
def whole(p, op):
    result = study.run(p, op)
    check = study.check_checkpoints(result)
    control_check = study.check_control_checkpoints(result)
    study.write(p, result, check, control_check)
    return result, check, control_check


# ----- the converging operating point -----------------------------------------------------------
def test_the_converging_operating_point_is_the_solver_chapters_for_the_same_leduc_study(p, op, where):
    """The solver chapter builds its converging operating point from the study file's choices and design; a study
    file of that shape gives this chapter the same digest, and so does a file of the choices alone."""
    from oscc_core.chapters.solver import parameters as solver_parameters
    from oscc_core.chapters.solver import study as solver_study

    # a file of choices alone names no learner options: the solver chapter's study without them
    q = solver_parameters.validate({**runnable_defaults("05_solver"), "study_file": "", "budget": BUDGET,
                                    "converging_options": "none", "curve_per_decade": 4,
                                    "output_dir": str(where / "solver")})
    shown = json.loads(json.dumps({"design": solver_study.design_of(q).record(), "choices": CHOICES}))
    expected = solver_study.converging_operating_point(q, shown).digest
    choices_only = with_file(p, where / "choices.json")
    assert study.converging_operating_point(choices_only, study.leduc_choices(choices_only)).digest == expected
    (where / "study_shaped.json").write_text(json.dumps(shown))
    from_study = with_file(p, where / "study_shaped.json")
    leduc = study.leduc_choices(from_study)
    assert leduc["design_from"] == "the study file"
    assert study.converging_operating_point(from_study, leduc).digest == expected


def test_the_converging_operating_point_holds_every_arms_choices_and_the_counterfactual_law(op):
    assert op.arm_choices() == CHOICES["converging"]
    assert op.schedule.decision_law == "counterfactual"
    assert (op.schedule.learning_rate, op.schedule.proximal_alpha, op.schedule.proximal_kappa) == (16.0, 0.5, 0.1)


def test_the_digest_changes_with_any_arms_choice(p, op):
    leduc = study.leduc_choices(p)
    for arm in ARMS:
        for key in ("eta", "alpha", "kappa"):
            changed = {**leduc, "choices": {**leduc["choices"], arm: {**leduc["choices"][arm],
                                                                       key: leduc["choices"][arm][key] * 2 + 0.5}}}
            assert study.converging_operating_point(p, changed).digest != op.digest, (arm, key)


def test_a_file_with_neither_a_study_nor_converging_choices_is_refused(p, where):
    (where / "literal_only.json").write_text(json.dumps({"literal": CHOICES["literal"]}))
    bad = parameters.validate({**{n: getattr(p, n) for n in parameters.NAMES if n != "output_dir"},
                               "output_dir": str(p.out_dir), "leduc_study": str(where / "literal_only.json")})
    with pytest.raises(ValueError, match="converging"):
        study.leduc_choices(bad)


# ----- the Kuhn study ---------------------------------------------------------------------------
def test_the_calls_to_table_asks_about_the_papers_kuhn_values_for_cp_grpo_and_ppo():
    body = yaml.safe_load((ROOT / "book" / "paper_claims.yaml").read_text())
    entries = {e["id"]: e for e in (body["claims"] if isinstance(body, dict) and "claims" in body else body)}
    expected = tuple(float(entries[f"measured_transfer.kuhn.{row}.exploitability"]["value"])
                     for row in ("cp_grpo_paired", "standard_ppo"))
    assert study.thresholds() == expected


def test_the_study_file_keys_runs_by_arm_seed_and_integer_budget_with_the_summary_beside(p, whole):
    body = json.loads((p.out_dir / f"{study.STUDY_STEM}.json").read_text())
    budgets = [BUDGET * m for m in MULTIPLES]
    assert set(body["runs"]) == set(ARMS)
    for arm in ARMS:
        assert set(body["runs"][arm]) == {str(s) for s in SEEDS}
        for seed in body["runs"][arm].values():
            assert {str(b) for b in budgets} <= set(seed)
            assert all(str(int(b)) == b for b in seed)
            assert all(0 < rec["exploitability_average"] < 1 for rec in seed.values())
    assert set(body["summary"]) == {str(b) for b in budgets}
    assert body["operating_point"]["digest"] == whole[0]["study"]["operating_point"]["digest"]
    assert "manifest" in body and "grids" not in body["design"]


def test_each_record_is_the_run_trained_alone_at_the_arms_choices(p, whole):
    """Every arm's seed-17 record at 10,000 calls equals one task of that seed alone, recorded there only."""
    for arm in ARMS:
        c = CHOICES["converging"][arm]
        schedule = study_design.learner_schedule("converging", p.base_schedule(), c["eta"], c["alpha"], c["kappa"])
        alone = run_task(Task.make("kuhn", "converging", arm, (17,), schedule, [10 * BUDGET]))
        ours = whole[0]["study"]["runs"][arm]["17"][str(10 * BUDGET)]["exploitability_average"]
        assert ours == pytest.approx(alone["runs"]["17"][str(10 * BUDGET)]["exploitability_average"], abs=1e-9), arm


def test_the_summary_is_the_seed_mean_and_the_paired_difference_against_cp_grpo(whole):
    s = whole[0]["study"]
    top = str(10 * BUDGET)
    values = {arm: [s["runs"][arm][str(seed)][top]["exploitability_average"] for seed in SEEDS] for arm in ARMS}
    for arm in ARMS:
        assert s["summary"][top]["arms"][arm]["exploitability_average"]["mean"] == pytest.approx(np.mean(values[arm]))
    d = s["summary"][top]["differences"]["ppo - cp_grpo"]
    assert d["mean"] == pytest.approx(np.mean(np.subtract(values["ppo"], values["cp_grpo"])))
    assert d["cp_grpo_lower"] == sum(a > b for a, b in zip(values["ppo"], values["cp_grpo"]))


# ----- the Kuhn-tuned control ----------------------------------------------------------------------
def stored_tasks(p) -> list[dict]:
    """The task of every run the study's store holds (the tuning's and the reporting runs')."""
    return [json.loads(path.read_text())["task"] for path in Path(p.study_store).glob("*.json")]


def test_the_kuhn_tuned_control_tunes_on_the_rules_development_seeds_only(p, whole):
    tuning = [t for t in stored_tasks(p) if t["learner"] == "tune-converging"]
    assert tuning and all(t["game"] == "kuhn" for t in tuning)
    assert {s for t in tuning for s in t["seeds"]} == set(DEV_SEEDS)
    assert not {s for t in tuning for s in t["seeds"]} & set(SEEDS)
    assert {tuple(t["budgets"]) for t in tuning} == {(BUDGET * RULE["tune_multiples"]["converging"],)}
    control = whole[0]["study"]["kuhn_tuned"]
    assert control["design"]["dev_seeds"] == DEV_SEEDS and control["design"]["grids"] == RULE["grids"]


def test_the_kuhn_tuned_control_runs_the_frozen_studys_seeds_and_budgets(whole):
    frozen, control = whole[0]["study"], whole[0]["study"]["kuhn_tuned"]
    assert control["design"]["seeds"] == frozen["design"]["seeds"] == SEEDS
    assert control["design"]["budgets"] == frozen["design"]["budgets"]
    for arm in ARMS:
        assert set(control["runs"][arm]) == {str(s) for s in SEEDS}
        assert all(set(control["runs"][arm][s]) == set(frozen["runs"][arm][s]) for s in control["runs"][arm])


def test_each_kuhn_tuned_choice_is_the_lowest_development_score_tried_ties_to_the_smaller_values(whole):
    control = whole[0]["study"]["kuhn_tuned"]
    for arm in ARMS:
        grid = control["tuning"][arm]["grid"]
        low = min(g["score"] for g in grid)
        first = sorted((g["eta"], g["alpha"], g["kappa"]) for g in grid if g["score"] == low)[0]
        assert (control["choices"][arm]["eta"], control["choices"][arm]["alpha"],
                control["choices"][arm]["kappa"]) == first, arm


def test_each_kuhn_tuned_record_is_the_run_trained_alone_at_the_arms_kuhn_choices(p, whole):
    control = whole[0]["study"]["kuhn_tuned"]
    for arm in ("cp_grpo", "ppo"):
        c = control["choices"][arm]
        schedule = study_design.learner_schedule("converging", p.base_schedule(), c["eta"], c["alpha"], c["kappa"])
        alone = run_task(Task.make("kuhn", "converging", arm, (13,), schedule, [10 * BUDGET]))
        ours = control["runs"][arm]["13"][str(10 * BUDGET)]["exploitability_average"]
        assert ours == pytest.approx(alone["runs"]["13"][str(10 * BUDGET)]["exploitability_average"], abs=1e-9), arm


def test_the_chapter_record_keeps_the_controls_choices_and_summary(p, whole, op):
    leduc = study.leduc_choices(p)
    kept = study.record(whole[0], whole[1], {}, {}, leduc, "")["kuhn_tuned"]
    control = whole[0]["study"]["kuhn_tuned"]
    assert kept["choices"] == control["choices"] and kept["summary"] == control["summary"]
    assert set(kept["tuning"]) == set(ARMS) and "grid" not in kept["tuning"]["cp_grpo"]


# ----- checkpoints ------------------------------------------------------------------------------
def assert_checkpoints_recomputed_by_pyspiel(path, prefix: str, runs: dict, checked: dict) -> None:
    """Every checkpoint in `path` is keyed `prefix/arm/seed` for the study's arms and seeds, and pyspiel's
    exploitability of it equals the study's value at the largest budget (`runs`) and the chapter's recheck
    (`checked`)."""
    game = pyspiel.load_game("kuhn_poker")
    body = read_checkpoints(path)
    assert set(body) == {f"{prefix}/{arm}/{seed}" for arm in ARMS for seed in SEEDS}
    top = str(10 * BUDGET)
    for key, policy in body.items():
        _, arm, seed = key.split("/")
        theirs = pyspiel_exploitability(game, policy)
        assert runs[arm][seed][top]["exploitability_average"] == pytest.approx(theirs, abs=MATCH)
        assert checked[key] == pytest.approx(theirs, abs=MATCH)


def test_every_checkpoint_is_keyed_kuhn_arm_seed_and_recomputed_by_pyspiel_equals_the_studys_value(p, whole):
    assert_checkpoints_recomputed_by_pyspiel(p.out_dir / study.CHECKPOINTS_FILE, "kuhn", whole[0]["study"]["runs"],
                                             whole[1]["pyspiel"])
    assert whole[1]["max_abs_difference"] < MATCH


def test_the_kuhn_tuned_controls_checkpoints_are_kept_and_recomputed_by_pyspiel_equal_its_values(p, whole):
    assert_checkpoints_recomputed_by_pyspiel(p.out_dir / kuhn_tuned.CHECKPOINTS_FILE, "kuhn_tuned",
                                             whole[0]["study"]["kuhn_tuned"]["runs"], whole[2]["pyspiel"])
    assert whole[2]["agrees"] and whole[2]["missing"] == [] and whole[2]["max_abs_difference"] < MATCH
    written = json.loads((p.out_dir / f"{study.STUDY_STEM}.json").read_text())
    assert written["kuhn_tuned"]["checkpoints"]["file"] == kuhn_tuned.CHECKPOINTS_FILE
    assert study_view.control_checkpoint_text(whole[2], MATCH).startswith("8 checkpoints of the control rechecked")


def corrupted(p, tmp_path, change) -> Path:
    """A copy of the control's checkpoints file with `change(body)` applied."""
    body = read_checkpoints(p.out_dir / kuhn_tuned.CHECKPOINTS_FILE)
    change(body)
    path = tmp_path / kuhn_tuned.CHECKPOINTS_FILE
    with gzip.open(path, "wt") as fh:
        json.dump(body, fh)
    return path


def test_a_corrupted_or_missing_control_checkpoint_fails_the_recheck(p, whole, tmp_path):
    def flip(body):                       # player 0's jack bets for sure instead of what it learned
        policy = body["kuhn_tuned/cp_grpo/13"]
        state = next(s for s in policy if s.startswith("0"))
        policy[state] = [0.0, 1.0]
    control = whole[0]["study"]["kuhn_tuned"]
    check = kuhn_tuned.check_checkpoints(control, corrupted(p, tmp_path, flip), "kuhn", MATCH)
    assert not check["agrees"] and check["max_abs_difference"] > MATCH
    dropped = kuhn_tuned.check_checkpoints(control, corrupted(p, tmp_path, lambda b: b.pop("kuhn_tuned/ppo/17")),
                                           "kuhn", MATCH)
    assert not dropped["agrees"] and dropped["missing"] == ["kuhn_tuned/ppo/17"]
    assert "MISSING for kuhn_tuned/ppo/17" in study_view.control_checkpoint_text(dropped, MATCH)


def test_a_committed_study_without_control_checkpoints_says_so_and_still_shows(p, op, whole, tmp_path):
    shutil.copyfile(p.out_dir / f"{study.STUDY_STEM}.json", tmp_path / f"{study.STUDY_STEM}.json")
    shutil.copyfile(p.out_dir / study.CHECKPOINTS_FILE, tmp_path / study.CHECKPOINTS_FILE)
    shown = study.run(committed_parameters(p, tmp_path / f"{study.STUDY_STEM}.json"), op)
    assert shown["control_checkpoints_file"] is None and study.check_control_checkpoints(shown) is None
    text = study_view.control_checkpoint_text(None, MATCH)
    assert text.startswith("no checkpoints committed for the control")
    assert study_view.control_checkpoint_frame(None, MATCH).iloc[0, 0] == text


def test_verify_studies_reruns_a_seed_and_compares_its_checkpoints_and_a_corrupted_one_fails(p, whole, tmp_path):
    from oscc_core.reporting import study_verification as sv
    from oscc_core.reporting.results import clean

    assert sv.CONTROL_CHECKPOINTS.format(stem=study.STUDY_STEM) == kuhn_tuned.CHECKPOINTS_FILE
    body = json.loads((p.out_dir / f"{study.STUDY_STEM}.json").read_text())
    parts = sv.parts_of(body, study.STUDY_STEM, p.out_dir)
    assert [Path(part.checkpoints).name for part in parts] == [study.CHECKPOINTS_FILE, kuhn_tuned.CHECKPOINTS_FILE]
    for part in parts:
        results = [clean(run_task(t)) for t in sv.tasks_of(part, 17)]     # as the study's store keeps them
        check = sv.compare(part, 17, results)
        assert check["agrees"] and check["checkpoints"] == len(ARMS), check["differences"]
    flipped = corrupted(p, tmp_path, lambda b: b["kuhn_tuned/grpo/17"].update(
        {s: [1.0, 0.0] for s in list(b["kuhn_tuned/grpo/17"])[:2]}))
    control = sv.Part(**{**parts[1].__dict__, "checkpoints": str(flipped)})
    check = sv.compare(control, 17, [clean(run_task(t)) for t in sv.tasks_of(control, 17)])
    assert not check["agrees"]
    assert any(line.startswith("checkpoint kuhn_tuned/grpo/17: the committed policy differs") for line in
               check["differences"])
    assert sv.parts_of(body, study.STUDY_STEM, tmp_path / "empty")[1].checkpoints is None    # none committed


@pytest.mark.parametrize("arm, share_opponent", [("cp_grpo", True), ("independent", False), ("ppo", False)])
def test_each_checkpoints_exact_contrast_variance_equals_a_pyspiel_enumeration(p, whole, arm, share_opponent):
    game = pyspiel.load_game("kuhn_poker")
    contrast = study.checkpoint_contrast(whole[0], "")
    for seed in SEEDS:
        key = f"kuhn/{arm}/{seed}"
        policy = read_checkpoints(p.out_dir / study.CHECKPOINTS_FILE)[key]
        assert contrast[key] == pytest.approx(kuhn_contrast_variance(game, policy, share_opponent), abs=1e-9)


def test_the_proved_maxima_at_kuhns_root_are_4_for_full_coupling_and_50_9_for_independent_branches():
    maxima = study.proved_maxima("")
    assert {arm: c for arm, (c, _) in maxima.items()} == {"cp_grpo": "full", "independent": "independent",
                                                         "grpo": "root_only", "ppo": "independent"}
    for arm, expected in (("cp_grpo", 4.0), ("grpo", 4.0), ("independent", 50 / 9), ("ppo", 50 / 9)):
        assert maxima[arm][1] == pytest.approx(expected, abs=1e-6), arm


# ----- the committed study and its live check ----------------------------------------------------
def committed_parameters(p, path: Path, seeds=(17,), multiples=(1,)):
    return parameters.validate({**{n: getattr(p, n) for n in parameters.NAMES if n != "output_dir"},
                                "output_dir": str(p.out_dir / "live"), "study_file": str(path),
                                "study_seeds": list(seeds) + [13], "study_multiples": list(multiples)})


def test_a_live_rerun_reproduces_the_committed_study_record_for_record(p, op, whole):
    q = committed_parameters(p, p.out_dir / f"{study.STUDY_STEM}.json")
    shown = study.run(q, op)
    assert shown["live_check"]["max_abs_difference"] == 0
    per_run = len(study_design.curve_budgets(BUDGET, [1]))
    assert shown["live_check"]["frozen"]["records"] == len(ARMS) * 2 * per_run
    assert (shown["live_check"]["kuhn_tuned"]["records"], shown["live_check"]["kuhn_tuned"]["max_abs_difference"],
            shown["live_check"]["mode"]) == (len(ARMS) * 2 * per_run, 0, "bit for bit")
    assert shown["live_check"]["records"] == 2 * len(ARMS) * 2 * per_run
    assert shown["study"]["runs"] == json.loads((p.out_dir / f"{study.STUDY_STEM}.json").read_text())["runs"]


def test_the_live_check_reports_a_changed_committed_number(p, op, whole, tmp_path):
    body = json.loads((p.out_dir / f"{study.STUDY_STEM}.json").read_text())
    body["runs"]["grpo"]["13"][str(BUDGET)]["exploitability_average"] += 0.125
    path = tmp_path / "changed.json"
    path.write_text(json.dumps(body))
    assert study.run(committed_parameters(p, path), op)["live_check"]["max_abs_difference"] == \
        pytest.approx(0.125, abs=1e-9)


def test_the_live_check_reports_a_changed_number_of_the_kuhn_tuned_control(p, op, whole, tmp_path):
    body = json.loads((p.out_dir / f"{study.STUDY_STEM}.json").read_text())
    body["kuhn_tuned"]["runs"]["ppo"]["17"][str(BUDGET)]["exploitability_last"] -= 0.25
    path = tmp_path / "changed_control.json"
    path.write_text(json.dumps(body))
    check = study.run(committed_parameters(p, path), op)["live_check"]
    assert check["kuhn_tuned"]["max_abs_difference"] == pytest.approx(0.25, abs=1e-9)
    assert check["frozen"]["max_abs_difference"] == 0
    assert check["max_abs_difference"] == pytest.approx(0.25, abs=1e-9)


def test_a_committed_study_without_the_kuhn_tuned_control_stops_the_chapter(p, op, whole, tmp_path):
    body = json.loads((p.out_dir / f"{study.STUDY_STEM}.json").read_text())
    del body["kuhn_tuned"]
    path = tmp_path / "no_control.json"
    path.write_text(json.dumps(body))
    with pytest.raises(study.StaleStudy, match="Kuhn-tuned control"):
        study.run(committed_parameters(p, path), op)


def test_a_committed_study_of_another_operating_point_stops_the_chapter(p, op, whole, tmp_path):
    body = json.loads((p.out_dir / f"{study.STUDY_STEM}.json").read_text())
    body["operating_point"]["digest"] = "0" * 64
    path = tmp_path / "stale.json"
    path.write_text(json.dumps(body))
    with pytest.raises(study.StaleStudy, match="rerun the Kuhn study"):
        study.run(committed_parameters(p, path), op)


# ----- rows --------------------------------------------------------------------------------------
def synthetic_study(cp: tuple, others: dict) -> dict:
    """A study summary at the paper's budget: CP-GRPO's (mean, low, high) and each arm's paired difference."""
    arms = {"cp_grpo": {"exploitability_average": dict(zip(("mean", "low", "high"), cp), n=30)}}
    diffs = {}
    for arm, (mean, low, high) in others.items():
        arms[arm] = {"exploitability_average": {"mean": cp[0] + mean, "low": cp[1] + mean, "high": cp[2] + mean,
                                                "n": 30}}
        diffs[f"{arm} - cp_grpo"] = {"mean": mean, "low": low, "high": high, "n": 30, "cp_grpo_lower": 20}
    return {"design": {"budget": 100, "budgets": [100]}, "summary": {"100": {"arms": arms, "differences": diffs}}}


def test_the_study_rows_are_sensitivity_rows_of_the_kuhn_exploitability_and_nashconv_claims():
    paper = float(claims.claim("measured_transfer.kuhn.cp_grpo_paired.exploitability"))
    rows = study_view.rows(synthetic_study((paper, paper - 0.001, paper + 0.001),
                                           {a: (0.01, 0.005, 0.015) for a in ARMS[1:]}))
    assert [r.claim_id for r in rows] == [f"measured_transfer.kuhn.{row}.{col}" for row in
                                          ("cp_grpo_paired", "independent", "standard_grpo", "standard_ppo")
                                          for col in ("exploitability", "nashconv")]
    assert not any(r.primary for r in rows)
    assert all("claim id" not in r.as_dict() and "sensitivity of" in r.as_dict() for r in rows)


def test_a_study_row_follows_the_verdict_rule_with_the_papers_ordering_resolved_by_paired_intervals():
    paper = float(claims.claim("measured_transfer.kuhn.cp_grpo_paired.exploitability"))
    inside = (paper, paper - 0.001, paper + 0.001)
    resolved = study_view.rows(synthetic_study(inside, {a: (0.01, 0.005, 0.015) for a in ARMS[1:]}))[0]
    spans = study_view.rows(synthetic_study(inside, {"independent": (0.01, -0.005, 0.025), "grpo": (0.01, 0.005, 0.015),
                                                     "ppo": (0.01, 0.005, 0.015)}))[0]
    reversed_ = study_view.rows(synthetic_study((paper + 0.1, paper + 0.09, paper + 0.11),
                                                {a: (-0.01, -0.015, -0.005) for a in ARMS[1:]}))[0]
    assert resolved.verdict == claims.REPRODUCED
    assert spans.verdict == claims.INCONCLUSIVE           # the paper's value inside, the ordering unresolved
    assert reversed_.verdict == claims.NOT_REPRODUCED     # outside, and CP-GRPO not lowest
