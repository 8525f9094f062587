"""The solver chapter's readings and counts: which reading the paper's text fixes, the learned uniform arm, the
step size of the update variances, the clip range of the frozen screen, the calls to a threshold and their rule,
the counts of the box and the closing table, and the chapter's imports (no cycle)."""
from __future__ import annotations

import ast
import json
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from oscc_core.chapters.solver import feasibility, frozen_screen, readings, rows, screen, study_view, tables, training
from oscc_core.chapters.solver.feasibility import READINGS
from oscc_core.learning.loop import RunSpec, Schedule
from oscc_core.learning.study_design import calls_to as study_calls_to
from oscc_core.reporting import claims
from oscc_core.reporting.rows import Row
from oscc_core.reporting.tally import chapter_tally

ROOT = Path(__file__).resolve().parent.parent
STUDY = ROOT / "results" / "05_solver_study.json"
VALUE = "measured_solver.cp_grpo_paired.player0_value"     # 0.2136 in the paper


# ----- which reading the paper's text fixes -----------------------------------------------------------------
def test_the_paper_fixes_the_held_out_roots_for_values_and_leaves_the_seat_of_a_best_response_open():
    assert feasibility.paper_readings(VALUE)[0] == ("held_out",)
    assert feasibility.paper_readings("measured_solver.exact_cfr_plus.seed_interval")[0] == ("held_out",)
    assert feasibility.paper_readings("app_solver.player_value.interval")[0] == ("held_out",)
    assert feasibility.paper_readings("measured_solver.standard_ppo.best_response_value")[0] == (
        "br0_held_out", "br1_held_out")
    assert feasibility.paper_readings("grpo_ppo.uniform_policy.value")[0] == ("held_out", "learned_uniform")
    assert feasibility.paper_readings("grpo_ppo.uniform_policy.exploitability") == ((), "")   # "evaluator summary"
    assert "held-out roots" in feasibility.paper_readings(VALUE)[1]


def _reading(verdict: str, key: str) -> Row:
    """A row of `VALUE` under reading `key` with the given verdict (its numbers chosen to give it)."""
    paper = float(claims.claim(VALUE))
    if verdict == claims.IMPOSSIBLE:
        return Row.impossible("value", VALUE, -0.1, "a bound", READINGS[key])
    if verdict == claims.NOT_COMPARED:
        return replace(Row.not_compared("value", VALUE, "no number"), reading=READINGS[key])
    centre = paper if verdict == claims.REPRODUCED else paper + 10.0
    return replace(Row.compare("value", VALUE, centre, centre - 0.01, centre + 0.01), reading=READINGS[key])


KEYS = ("whole_p0", "held_out", "versus", "pairs")
VERDICTS = (claims.IMPOSSIBLE, claims.REPRODUCED, claims.NOT_REPRODUCED, claims.NOT_COMPARED)


@given(st.lists(st.sampled_from(VERDICTS), min_size=4, max_size=4), st.sets(st.sampled_from(KEYS)))
def test_readings_that_disagree_take_the_verdict_the_text_fixes_or_depend_on_the_reading(verdicts, fixed):
    listed = [_reading(v, k) for v, k in zip(verdicts, KEYS)]
    fixed = tuple(k for k in KEYS if k in fixed)
    row = readings.combine_readings(listed, fixed, "the text")
    compared = {v for v in verdicts if v != claims.NOT_COMPARED}
    left = {v for v, k in zip(verdicts, KEYS) if k in fixed and v != claims.NOT_COMPARED}
    if set(verdicts) == {claims.IMPOSSIBLE}:
        assert row.verdict == claims.IMPOSSIBLE                  # impossible only under every reading
    elif not compared or compared == {claims.IMPOSSIBLE}:
        assert row.verdict == claims.NOT_COMPARED               # nothing of ours to compare where the rules allow it
    elif len(compared) == 1:
        assert row.verdict == compared.pop() and not row.reading_dependent
    elif len(left) == 1:                                         # the text's readings agree: theirs
        assert row.verdict == left.pop() and row.reading_dependent
        assert row.reading == readings.READING_SEPARATOR.join(      # every compared reading the text leaves
            READINGS[k] for k, v in zip(KEYS, verdicts) if k in fixed and v != claims.NOT_COMPARED)
    else:                                                        # no reading fixed, or the fixed ones disagree
        assert row.verdict == claims.DEPENDS


def test_the_uniform_policys_exploitability_is_not_impossible_when_its_arm_may_be_learned():
    checks = feasibility.feasibility_table("leduc")
    read = readings.Readings.build({"uniform": {}}, checks)
    cid = "grpo_ppo.uniform_policy.exploitability"
    whole = Row.compare("uniform: exploitability", cid, 2.3736)
    listed = [read._checked(replace(whole, reading=READINGS["exploitability"]), "exploitability")]
    listed += [read._checked(read.reading_row(cid, k, whole.quantity), k) if k in ("learned_uniform",) else
               read._checked(replace(whole, reading=READINGS[k]), k)
               for k in feasibility.UNIFORM_EXPLOITABILITY_READINGS[1:]]
    verdicts = {r.reading: r.verdict for r in listed}
    assert verdicts[READINGS["learned_uniform"]] == claims.NOT_COMPARED
    assert all(v == claims.IMPOSSIBLE for k, v in verdicts.items() if k != READINGS["learned_uniform"])
    row = readings.combine_readings(listed, *feasibility.paper_readings(cid))
    assert row.verdict == claims.NOT_COMPARED and "no such arm" in row.reason


def test_every_number_of_the_uniform_row_is_also_read_as_a_learned_arm():
    for key in ("return_mean", "return_sd", "success_mean", "success_sd", "update_variance", "value",
                "exploitability"):
        assert "learned_uniform" in readings.READING_CLAIMS[f"grpo_ppo.uniform_policy.{key}"][3], key


# ----- the step size of the update variances ----------------------------------------------------------------
def _variance_records(values: dict) -> dict:
    return {arm: {str(s): {"update_variance": v} for s, v in zip((13, 17, 23), vs)} for arm, vs in values.items()}


def test_an_update_variance_is_compared_under_each_step_size_its_own_first():
    paper = float(claims.claim("grpo_ppo.cp_grpo_paired.update_variance"))            # 0.0917
    own = _variance_records({"cp_grpo": [0.60, 0.62, 0.58], "independent": [1.9, 2.0, 1.8], "grpo": [4, 5, 4.5],
                             "ppo": [0.9, 1.0, 0.95]})
    by_eta = {2.0: _variance_records({"cp_grpo": [paper * 0.9, paper, paper * 1.1], "independent": [0.2, 0.21, 0.22],
                                      "grpo": [0.3, 0.31, 0.32], "ppo": [0.05, 0.06, 0.07]}),
              8.0: _variance_records({"cp_grpo": [2.4, 2.5, 2.3], "independent": [7, 8, 7.5], "grpo": [16, 17, 18],
                                      "ppo": [3.5, 3.6, 3.7]})}
    row = rows.update_variance_row(own, "cp_grpo", by_eta, {"cp_grpo": 4.0})
    assert [x["reading"] for x in row.readings] == [rows.eta_reading(arm="cp_grpo", etas={"cp_grpo": 4.0}),
                                                    rows.eta_reading(2.0), rows.eta_reading(8.0)]
    assert "4" in row.readings[0]["reading"]
    # the size of an update variance follows the step size, which the paper does not give: not compared under any
    # reading (at eta 2 the paper's value would lie inside our interval); the ordering at its own eta is judged
    assert [x["verdict"] for x in row.readings] == [claims.NOT_COMPARED] * 3
    assert row.verdict == claims.NOT_COMPARED and not row.reading_dependent and "eta" in row.reason
    assert row.relation_verdict == claims.REPRODUCED         # CP-GRPO lowest at its own eta (0.60 against 0.95)


def test_the_update_variance_of_one_plain_step_grows_with_the_square_of_the_step_size():
    # one epoch: the step is eta times the gradient at the current logits (every ratio 1, nothing clipped), so the
    # displacement scales with eta and its variance with eta squared
    runs = [RunSpec("cp_grpo", 13, 4.0), RunSpec("independent", 17, 8.0)]     # each run at its own eta, as trained
    batch = training.train("leduc", runs, Schedule(iterations=2, decision_points=16, learning_rate=4.0), "cpu")
    p = SimpleNamespace(game="leduc", update_replicates=4, torch_device="cpu",
                        schedule=lambda eta: Schedule(iterations=1, decision_points=16, epochs=1, learning_rate=eta))
    got = screen.eta_update_variances(p, batch, [1.0, 3.0])
    for run in runs:
        one, three = (got[e][run.arm][str(run.seed)]["update_variance"] for e in (1.0, 3.0))
        assert one > 0 and three == pytest.approx(9.0 * one, rel=1e-6)


# ----- the clip range of the frozen screen --------------------------------------------------------------------
@pytest.fixture(scope="module")
def screen_result():
    return frozen_screen.run_screen(13, 4096)        # the chapter's size: the margin's sign is clear


def test_the_held_out_change_is_compared_under_each_clip_range_of_the_grid_ours_first(screen_result):
    listed = frozen_screen.delta_rows(screen_result)
    grid = screen_result["parameters"]["epsilon_grid"]
    assert [r.reading for r in listed] == [frozen_screen.epsilon_reading(e, 0.2) for e in
                                           [0.2] + [e for e in grid if e != 0.2]]
    paired = screen_result["modes"]["paired"]
    assert paired["clear"]
    sign = np.sign(paired["pooled_margin"])
    for r, e in zip(listed, [0.2] + [e for e in grid if e != 0.2]):
        _, law = frozen_screen.exact_value_change([0.5 + sign * e / 2])    # the exact change at that clip
        assert r.ours == pytest.approx(float(law[0]), abs=1e-12) and r.exact == r.ours
    by = {r.reading: r.verdict for r in listed}
    paper = float(claims.claim("text_bounded.frozen_opponent.heldout_exact_value_delta"))
    assert by[frozen_screen.epsilon_reading(0.25, 0.2)] == claims.REPRODUCED                       # 0.035851
    assert abs(listed[0].ours - paper) > 0.05 * abs(listed[0].ours)                         # ours at 0.2 is not
    combined = frozen_screen.screen_rows(screen_result)[-1]
    assert combined.verdict == claims.DEPENDS and combined.reading == frozen_screen.epsilon_reading(0.2, 0.2)


def test_the_margin_se_ordering_is_resolved_by_the_standard_error_of_its_difference():
    n = 400
    sd = {"paired": 1.0, "independent": 1.0}
    result = {"parameters": {"n_per_pair": n},
              "modes": {mode: {"ses": {str(k): s / np.sqrt(n) for k in range(6)},
                               "m4": {str(k): 3.0 * s ** 4 for k in range(6)}} for mode, s in sd.items()}}
    # normal contrasts (fourth moment 3 sd^4): Var(SE of one pair) = sd^2 / (2 n^2); six pairs, two modes
    expected = np.sqrt(2 * 6 * (1.0 / (2 * n ** 2)) / 36)
    assert frozen_screen.se_difference_se(result) == pytest.approx(expected, rel=1e-12)
    del result["modes"]["paired"]["m4"]
    assert frozen_screen.se_difference_se(result) is None


def test_the_screens_se_ordering_is_resolved_only_beyond_two_standard_errors_of_its_difference(screen_result):
    paired, independent = (screen_result["modes"][m]["margin_se_mean"] for m in ("paired", "independent"))
    spread = frozen_screen.se_difference_se(screen_result)
    row = frozen_screen.screen_rows(screen_result)[0]
    assert row.relation_holds == (paired < independent)
    assert row.relation_resolved == (independent - paired > 1.96 * spread)
    tight = json.loads(json.dumps(screen_result))
    for mode in ("paired", "independent"):            # the same SEs, but fourth moments 400 times as large
        tight["modes"][mode]["m4"] = {k: 400 * v for k, v in tight["modes"][mode]["m4"].items()}
    assert frozen_screen.screen_rows(tight)[0].relation_resolved is False


# ----- calls to a threshold -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def study():
    return json.loads(STUDY.read_text(encoding="utf-8"))


def test_calls_to_a_threshold_follow_the_studys_stored_rule(study):
    for learner, arms in study["thresholds"].items():
        for arm, ths in arms.items():
            for th, stored in ths.items():
                got = study_view.calls_to(study, learner, arm, float(th))
                assert (got["reached"], got["seeds"]) == (stored["reached"], stored["seeds"])
                for mine, theirs in (("calls", "geometric_mean"), ("low", "low"), ("high", "high")):
                    assert (got[mine] is None) == (stored[theirs] is None)
                    if got[mine] is not None:
                        assert got[mine] == pytest.approx(stored[theirs], rel=1e-9)


def test_a_crossing_is_interpolated_in_log_log_by_default_and_linearly_on_request():
    curve = {"100": {"exploitability_average": 0.4}, "400": {"exploitability_average": 0.1}}
    log, b0, b1 = study_view.crossing(curve, 0.2)
    assert (b0, b1) == (100, 400) and log == pytest.approx(200.0)               # half way in log: sqrt(100 * 400)
    assert log == pytest.approx(study_calls_to(curve, 0.2))
    assert study_view.crossing(curve, 0.2, "linear")[0] == pytest.approx(300.0)   # 100 + 2/3 * 300
    assert study_view.crossing(curve, 0.05) is None
    assert study_view.crossing(curve, 0.5) == (100.0, 100, 100)


def crossing_by_hand(curve: dict, threshold: float, log: bool):
    """(calls, lower budget, upper budget) where a seed's recorded curve first falls to `threshold`, interpolated
    between the two budgets around it (in log calls and log exploitability, or linearly), written out here."""
    budgets = sorted(int(b) for b in curve)
    values = [curve[str(b)]["exploitability_average"] for b in budgets]
    for i, (b, v) in enumerate(zip(budgets, values)):
        if v <= threshold:
            if i == 0:
                return float(b), b, b
            b0, v0 = budgets[i - 1], values[i - 1]
            if log:
                w = (np.log(threshold) - np.log(v0)) / (np.log(v) - np.log(v0))
                return float(np.exp(np.log(b0) + w * (np.log(b) - np.log(b0)))), b0, b
            return b0 + (threshold - v0) / (v - v0) * (b - b0), b0, b
    return None


def three_figures(x: float) -> str:
    return f"{round(x, 2 - int(np.floor(np.log10(x)))):,.0f}"


def test_the_calls_figures_and_the_rules_sensitivity(study):
    to = study_view.calls_to(study, "converging", "cp_grpo", 0.2)
    plain = study_view.calls_to(study, "converging", "cp_grpo", 0.2, "linear", "arithmetic")
    curves = list(study["runs"]["converging"]["cp_grpo"].values())
    logs = [crossing_by_hand(c, 0.2, True) for c in curves]
    lines = [crossing_by_hand(c, 0.2, False) for c in curves]
    assert to["calls"] == pytest.approx(np.exp(np.mean(np.log([x[0] for x in logs]))), rel=1e-12)
    assert plain["calls"] == pytest.approx(np.mean([x[0] for x in lines]), rel=1e-12)
    assert study_view.calls_text(to["calls"]) == three_figures(to["calls"])        # three significant figures
    gaps = [(b0, b1) for _, b0, b1 in logs]
    (b0, b1), n = max(((g, gaps.count(g)) for g in set(gaps)), key=lambda gn: (gn[1], -gn[0][0]))
    assert study_view.gap_text(to) == f"{n} of {len(curves)} between {b0:,} and {b1:,}"
    assert study_view.gap_cell(to) == f"{n} of {len(curves)}: {b0:,}–{b1:,}"   # the table's shorter cell
    found = [study_view.crossing(s, 0.2) for s in study["runs"]["converging"]["cp_grpo"].values()]
    logs = np.log([c[0] for c in found if c is not None])
    half = scipy_stats.t.ppf(0.975, len(logs) - 1) * logs.std(ddof=1) / np.sqrt(len(logs))
    assert (to["low"], to["high"]) == pytest.approx((np.exp(logs.mean() - half), np.exp(logs.mean() + half)))
    frame = study_view.thresholds_frame(study)
    assert frame.loc[("converging", "cp_grpo", "0.2"), "first crossing"] == three_figures(to["calls"])
    assert ("literal", "cp_grpo", "0.2") not in frame.index                     # no seed gets there
    rules = study_view.calls_rules_frame(study)
    assert rules.loc[("converging", "cp_grpo", "0.2"), "arithmetic mean, linear"] == f"{plain['calls']:,.0f}"


@pytest.mark.parametrize("x,text", [(473340.297, "473,000"), (1830026.4, "1,830,000"), (None, "never"),
                                    (98765.0, "98,800")])
def test_calls_are_printed_to_three_significant_figures(x, text):
    assert study_view.calls_text(x) == text


# ----- one verdict per quantity, and the counts --------------------------------------------------------------
def test_printings_across_the_chapters_tables_share_the_deciding_rows_verdict():
    root = Row.compare("CP-GRPO value", VALUE, 0.2136, 0.2, 0.23)                        # reproduced
    printing = Row.compare("CP-GRPO value (policy table)", "grpo_ppo.cp_grpo_paired.value", 0.2136, 0.1, 0.11)
    out = rows.unify_tables({"policy": [printing], "solver": [root]})
    assert [len(t) for t in out.values()] == [1, 1]
    assert out["policy"][0].verdict == root.verdict == claims.REPRODUCED
    assert out["policy"][0].printing_of == VALUE and out["solver"][0] == root


def test_the_closing_table_counts_values_as_the_box_does():
    root = Row.compare("CP-GRPO value", VALUE, 0.2136, 0.2, 0.23)
    printing = root.printed_as("grpo_ppo.cp_grpo_paired.value", "CP-GRPO value (policy table)", "the same value")
    other = Row.compare("independent value", "measured_solver.independent.player0_value", 5.0, 4.0, 6.0)
    alone, both = tables.verdict_counts("05_solver", [root, other]), tables.verdict_counts("05_solver",
                                                                                          [root, printing, other])
    counted = chapter_tally("05_solver", [root, printing, other])
    for name, label in (("measurements", "measured values"), ("intervals", "the paper's intervals")):
        assert both.loc[label, "total"] == sum(counted[name].values())           # the box's numbers
        assert all(both.loc[label, v] == n for v, n in counted[name].items() if n)
    # one value printed twice is counted once: the printing's own row changes no count (the ledger already takes
    # the printing from its root's row), where counting rows would add a second reproduced value
    assert both.equals(alone) and both.loc["measured values", claims.REPRODUCED] == 1


# ----- the chapter's imports ---------------------------------------------------------------------------------
def _imports(path: Path) -> set[str]:
    """The modules of the solver package that `path` imports (at the top or inside a function)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module == "oscc_core.chapters.solver":
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("oscc_core.chapters.solver."):
            out.add(node.module.rsplit(".", 1)[1])
    return out


def test_the_chapters_modules_import_each_other_without_a_cycle():
    package = ROOT / "oscc_core" / "chapters" / "solver"
    graph = {p.stem: _imports(p) for p in package.glob("*.py")}
    state: dict[str, int] = {}

    def visit(node, path):
        state[node] = 1
        for nxt in graph.get(node, ()):
            assert state.get(nxt) != 1, f"import cycle: {' -> '.join(path + [nxt])}"
            if nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for module in graph:
        if module not in state:
            visit(module, [module])


# --- a contrast variance read pooled over every decision point (the paper's reading) and at the root -------------
def _construction_records(root: dict, pooled: dict):
    ledger = {"illegal": 0, "physical_calls": 100, "transitions": 50}
    screen_records = {arm: {str(s): {"contrast_variance_exact": v, "ledger": ledger} for s, v in zip((13, 17, 23), vs)}
                      for arm, vs in root.items()}
    read = readings.Readings({arm: {str(s): {"contrast_pooled": v} for s, v in zip((13, 17, 23), vs)}
                              for arm, vs in pooled.items()}, {}, 512, 5)
    return screen_records, read


def test_a_learned_arms_contrast_variance_is_read_pooled_first_and_at_the_root_in_the_transfer_chapters_words():
    from oscc_core.reporting import reading_sets

    root = {"cp_grpo": [32.0, 33.0, 31.0], "independent": [36.0, 37.0, 35.0], "grpo": [46.0, 47.0, 45.0]}
    pooled = {"cp_grpo": [18.0, 18.5, 18.2], "independent": [41.0, 41.5, 40.9], "grpo": [50.0, 51.0, 49.0]}
    got = {r.claim_id: r for r in rows.construction_rows(*_construction_records(root, pooled))}
    row = got["measured_independent.cp_grpo_paired.contrast_variance"]          # the paper's 18.3269
    assert [x["reading"] for x in row.readings] == [reading_sets.CONTRAST_POOLED, reading_sets.contrast_at("")]
    assert [x["verdict"] for x in row.readings] == [claims.REPRODUCED, claims.PARTLY]
    assert row.verdict == claims.REPRODUCED and row.reading == reading_sets.CONTRAST_POOLED and row.reading_dependent
    assert row.ours == pytest.approx(np.exp(np.mean(np.log(pooled["cp_grpo"]))), rel=1e-2)


def test_without_pooled_values_a_contrast_variance_keeps_its_one_reading_at_the_root():
    root = {"cp_grpo": [32.0, 33.0, 31.0], "independent": [36.0, 37.0, 35.0], "grpo": [46.0, 47.0, 45.0]}
    screen_records, _ = _construction_records(root, {})
    row = {r.claim_id: r for r in rows.construction_rows(screen_records)}[
        "measured_independent.cp_grpo_paired.contrast_variance"]
    assert row.readings is None and row.ours == pytest.approx(32.0)
