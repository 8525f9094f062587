"""Unit tests of the contract chapter package, each against a value found independently of it
(OpenSpiel's own game tree, a closed form, or a small enumeration written here)."""
import dataclasses
import hashlib
import math
from collections import Counter

import matplotlib
import pandas as pd
import pyspiel
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from oscc_core.chapters.contract import (
    figures,
    observation,
    parameters,
    rows,
    run_audit,
    stream_table,
    swaps,
    tables,
    violation_controls,
)
from oscc_core.chapters.contract import findings as cfindings
from oscc_core.engine import probe as engine_probe
from oscc_core.engine import rng
from oscc_core.engine.failures import FAILURE_CODES
from oscc_core.engine.violations import CONTROLS
from oscc_core.games import KUHN, LEDUC, get_game
from oscc_core.reporting import claims
from oscc_core.reporting.params import ParameterError
from oscc_core.reporting.rows import Row

matplotlib.use("Agg")


def openspiel_states(name="leduc_poker"):
    """Every non-chance decision state and every terminal state of an OpenSpiel game, by depth-first walk."""
    decisions, terminals = [], []
    stack = [pyspiel.load_game(name).new_initial_state()]
    while stack:
        s = stack.pop()
        if s.is_terminal():
            terminals.append(s)
            continue
        if not s.is_chance_node():
            decisions.append(s)
        stack += [s.child(a) for a in s.legal_actions()]
    return decisions, terminals


@pytest.fixture(scope="module")
def leduc_openspiel():
    return openspiel_states()


def test_observation_hashes_are_the_sha256_of_openspiels_information_state_strings(leduc_openspiel):
    decisions, _ = leduc_openspiel
    strings = {s.information_state_string() for s in decisions}
    expected = {rng.signed(int.from_bytes(hashlib.sha256(x.encode()).digest()[:8], "little")) for x in strings}
    table = engine_probe.observation_hash_table(LEDUC).tolist()
    assert set(table) == expected and len(table) == len(expected)


def test_full_states_are_every_hidden_completion_of_every_information_state(leduc_openspiel):
    # OpenSpiel: histories per information state; in round one the undealt public card adds 4 choices
    decisions, _ = leduc_openspiel
    per_state = Counter(s.information_state_string() for s in decisions)
    completions = sum(n * (4 if "[Round 1]" in x else 1) for x, n in per_state.items())
    oa = observation.observation_audit(LEDUC)
    assert oa.full_states == 2 * completions          # both branch labels
    assert oa.states == len(per_state)


def test_kuhn_observation_audit_counts_twelve_states_of_four_full_states_each():
    # Kuhn: 12 information states; the opponent holds one of the 2 other cards; 2 branch labels
    oa = observation.observation_audit(KUHN)
    assert (oa.states, oa.full_states, oa.exposures) == (12, 48, 0)


@pytest.mark.parametrize("root, first_action", [("", None), ("1", 1), ("2", 2)])
def test_reachable_states_match_openspiels_subtree(leduc_openspiel, root, first_action):
    decisions, _ = leduc_openspiel
    expected = {s.information_state_string() for s in decisions
                if first_action is None or s.history()[2:3] == [first_action]}
    assert observation.reachable_states(LEDUC, root) == len(expected)


def engine_node_of(history):
    """An OpenSpiel Leduc history -> (public history string, private cards, public card or -1)."""
    state = pyspiel.load_game("leduc_poker").new_initial_state()
    public, acts = -1, []
    for a in history:
        if state.is_chance_node() and len(state.history()) >= 2:     # the public card, after the two private ones
            public = a
            acts.append("|")
        elif not state.is_chance_node():
            acts.append(str(a))
        state.apply_action(a)
    return "".join(acts), history[:2], public


def test_seat_utilities_equal_openspiels_returns_on_every_terminal_history(leduc_openspiel):
    _, terminals = leduc_openspiel
    game = get_game(LEDUC)
    found = [engine_node_of(s.history()) for s in terminals]
    nodes = torch.tensor([game.tree.node_of_history(h) for h, _, _ in found])
    cards = torch.tensor([c for _, c, _ in found])
    public = torch.tensor([p for _, _, p in found])
    assert int(nodes.min()) >= 0
    u = swaps.seat_utilities(game, nodes, cards, public)
    assert torch.equal(u.to(torch.float64), torch.tensor([s.returns() for s in terminals], dtype=torch.float64))


def test_contrast_variance_is_the_unbiased_variance_of_first_minus_last_branch():
    returns = torch.tensor([[3, 0, 1], [-1, 2, 2], [5, 1, -4], [0, 0, 0], [2, -3, 7]])
    d = [3 - 1, -1 - 2, 5 + 4, 0, 2 - 7]
    mean = sum(d) / 5
    var = sum((x - mean) ** 2 for x in d) / 4
    m = run_audit.contrast_var(returns)
    assert m["contrast_mean"] == pytest.approx(mean) and m["contrast_var"] == pytest.approx(var)


def test_a_group_ends_with_the_first_raised_code_in_code_order():
    names = [FAILURE_CODES[c][0] for c in sorted(FAILURE_CODES)]
    flags = {n: torch.zeros(3, dtype=torch.bool) for n in names}
    flags["STREAM_GAP"][1] = flags["OBS_DRIFT"][1] = True
    flags["SOLVER_TIMEOUT"][2] = True
    code = {name: c for c, (name, *_) in FAILURE_CODES.items()}
    expected = [0, min(code["STREAM_GAP"], code["OBS_DRIFT"]), code["SOLVER_TIMEOUT"]]
    assert run_audit.group_codes(flags, 3).tolist() == expected


def test_any_by_and_drift_by_reduce_per_index():
    index = torch.tensor([0, 0, 1, 1, 2, 2])
    values = torch.tensor([5, 5, 3, 4, 7, 7])
    flag = torch.tensor([False, False, False, True, False, False])
    assert engine_probe.drift_by(index, values, 4).tolist() == [False, True, False, False]
    assert engine_probe.any_by(index, flag, 4).tolist() == [False, True, False, False]


def test_the_stream_records_have_one_entry_per_namespace_of_the_paper():
    records = {r["namespace"]: r for r in stream_table.rng_dependency_records()}
    assert sorted(records) == sorted(["root", "hidden", "chance", "policy", "bootstrap"])
    policy = records["policy"]
    assert "branch" in policy["key fields"] and policy["dropped to share"] == "-"   # never shared
    assert records["hidden"]["dropped to share"] == records["chance"]["dropped to share"] == "branch"


def test_the_stream_table_names_the_arms_whose_branches_share_each_stream():
    # the paper's arms: root-only shares the hidden deal, continuation-only the chance events, full both
    shared = stream_table.rng_dependency_table()["branches share it in"]
    assert shared.to_dict() == {"root": "every arm", "hidden": "root_only, full",
                                "chance": "continuation_only, full", "policy": "none", "bootstrap": "—"}


def test_the_stream_table_keeps_its_cells_short_and_lists_the_long_facts_below_it():
    table = stream_table.rng_dependency_table()
    assert max(len(str(x)) for x in table.to_numpy().ravel()) <= 45
    items = stream_table.rng_dependency_list().splitlines()
    assert [item.split("**")[1] for item in items] == list(table.index)
    assert all("draws the" in item and "audit:" in item for item in items)


CONTROL = {"groups": 512, "rejected": 512, "affected_groups": 1, "marginal_shift": 0.0, "marginal_shift_se": 0.1,
           "replay_failure_rate": 0.5, "variance_change_pct": -1.0, "variance_change_pct_se": 1.0,
           "variance_change_pct_low": -3.0, "variance_change_pct_high": 1.0}


def test_the_worst_condition_row_reports_the_smallest_rejected_fraction():
    controls = {name: dict(CONTROL) for name in CONTROLS}
    worst = list(CONTROLS)[2]
    controls[worst].update(rejected=500)
    out = rows.violation_rows(controls)
    assert out[0]["ours"] == "500/512"
    assert len(out) == 1 + 4 * len(CONTROLS)


def test_the_closing_counts_are_of_values_each_once_and_match_the_box():
    from oscc_core.reporting.rows import Row

    exposures = Row.count("exposures", "method_obs.observation_audit.opponent_card_exposures", 0)
    again = exposures.printed_as("release.observation_boundary.states_verified", "states verified", "the same audit")
    shift = Row.compare("shift", "safety.chance_counter_reuse.marginal_shift", 0.5, 0.4, 0.6)   # -0.0027 outside
    glued = tables.verdict_glue([exposures, again, shift], [])      # the section's other entries have no row here
    assert (glued["n_reproduced"], glued["n_not_reproduced"]) == (1, 1)         # the printing counted once
    assert glued["n_depends_on_the_reading"] == 0 and glued["n_reading_dependent"] == 0
    frame = tables.verdict_counts([exposures, again, shift], [])
    box = cfindings.chapter_counts([exposures, again, shift], [])
    assert frame.loc["checks", "reproduced"] == box["checks"]["reproduced"] == 1
    assert frame.loc["measured values", "not reproduced"] == box["measurements"]["not reproduced"] == 1
    assert frame.loc["all values", "total"] == box["values"]


def test_the_violations_figure_draws_one_bar_per_control_at_its_change_with_its_asymmetric_interval():
    controls = {name: {"variance_change_pct": float(i) - 2, "variance_change_pct_low": float(i) - 5,
                       "variance_change_pct_high": float(i) - 1} for i, name in enumerate(CONTROLS)}
    fig = figures.violations_figure(controls, -30.0)
    ax = fig.axes[0]
    assert [b.get_width() for b in ax.patches] == [float(i) - 2 for i in range(len(CONTROLS))]
    assert ax.lines[-1].get_xdata()[0] == -30.0
    segments = ax.collections[0].get_segments()          # the error bars, one segment per control
    assert [tuple(seg[:, 0]) for seg in segments] == [(float(i) - 5, float(i) - 1) for i in range(len(CONTROLS))]


# --- settings, relations and findings (the verdict rule of the book) -----------------------------------------

STATES_CLAIM = "method_obs.observation_audit.states"


def test_auditing_a_state_count_other_than_the_papers_is_a_setting_that_differs_and_says_why():
    kuhn = observation.observation_audit(KUHN)          # 12 information states, not the paper's Leduc count
    states, _ = rows.settings_rows(kuhn, dict.fromkeys(CONTROLS), {"": 12}, [10, 11])
    record = states.as_dict()
    assert record["status"] == "differs" and "verdict" not in record
    assert record["claim id"] == STATES_CLAIM
    assert "12" in record["reason"] and f"{claims.claim(STATES_CLAIM):,}" in record["reason"]


def test_auditing_the_papers_state_count_adopts_the_setting():
    paper = claims.claim(STATES_CLAIM)
    oa = dataclasses.replace(observation.observation_audit(KUHN), states=paper)
    states, conditions = rows.settings_rows(oa, dict.fromkeys(CONTROLS), {"": paper}, [paper])
    assert states["status"] == "adopted"
    assert conditions["status"] == ("adopted" if len(CONTROLS) == 5 else "differs")   # five conditions, C1-C5


def test_running_fewer_controls_than_the_paper_differs_and_names_the_controls_run():
    one = dict.fromkeys(list(CONTROLS)[:1])
    _, conditions = rows.settings_rows(observation.observation_audit(KUHN), one, {"": 12}, [12])
    assert conditions["status"] == "differs" and list(CONTROLS)[0] in conditions["reason"]


@given(change=st.floats(-99.0, 99.0), below=st.floats(0.0, 50.0), above=st.floats(0.0, 50.0))
def test_a_fake_reduction_is_resolved_only_when_the_whole_interval_lies_below_zero(change, below, above):
    c = {"variance_change_pct": change, "variance_change_pct_low": change - below,
         "variance_change_pct_high": change + above}
    rel = rows.fakes_a_reduction(c)
    assert rel.holds == (change < 0)
    assert rel.resolved == (change + above < 0)


@given(v_bad=st.floats(0.5, 100.0), v_ind=st.floats(0.5, 100.0), rel_bad=st.floats(0.0, 2.0),
       rel_ind=st.floats(0.0, 2.0))
def test_the_variance_change_interval_is_the_log_scale_interval_of_the_ratio_and_never_reaches_minus_100(
        v_bad, v_ind, rel_bad, rel_ind):
    bad = {"contrast_var": v_bad, "contrast_var_se": rel_bad * v_bad}
    ind = {"contrast_var": v_ind, "contrast_var_se": rel_ind * v_ind}
    ratio, _, low, high = violation_controls._variance_ratio(bad, ind)
    half = 1.959963984540054 * math.hypot(rel_bad, rel_ind)           # se of log(ratio), delta method
    assert ratio == pytest.approx(v_bad / v_ind, rel=1e-12)
    assert math.log(low) == pytest.approx(math.log(ratio) - half, abs=1e-9)
    assert math.log(high) == pytest.approx(math.log(ratio) + half, abs=1e-9)
    assert low > 0.0                                                  # the change stays above -100%


@pytest.mark.parametrize("high, expected", [(5.0, "not reproduced"), (-1.0, "partly")])
def test_a_variance_change_of_the_wrong_size_is_partly_only_when_its_interval_lies_below_zero(high, expected):
    name = "chance_counter_reuse"
    paper = claims.claim(f"safety.{name}.apparent_variance_change")            # a reduction (< 0)
    c = dict(CONTROL, variance_change_pct=paper / 4, variance_change_pct_low=paper / 2, variance_change_pct_high=high)
    change = rows.control_rows(name, c)[3]
    assert change["95% interval"] == (paper / 2, high) and change.verdict == expected


def test_findings_count_primary_rows_by_the_kind_of_the_papers_entry_and_skip_settings_and_detail_rows():
    check = Row.fraction("drift", "impl_checks.observation_hash_drift.paired", 0, 10)          # kind: check
    failed = Row.fraction("keys", "impl_checks.unique_group_key.paired", 1, 2)                 # kind: check
    result = Row.compare("shift", "safety.chance_counter_reuse.marginal_shift", 1.0, 0.5, 1.5)  # kind: result
    setting = Row.setting("states", STATES_CLAIM, 1, reason="a test")
    detail = Row.fraction("drift again", "impl_checks.observation_hash_drift.paired", 0, 10).as_sensitivity()
    counts = cfindings.counts_by_kind([check, failed, result, setting, detail])
    # the section's other entries have no row here: not compared, as the ledger counts them
    compared = {kind: {v: n for v, n in c.items() if v != "not compared" and n} for kind, c in counts.items()}
    assert compared == {"check": {"reproduced": 1, "not reproduced": 1}, "result": {"not reproduced": 1}}


DEFAULTS = {"seeds": [13, 17], "groups_per_seed": 5120, "violation_groups": 512, "swap_groups": 100_000, "root": "",
            "solver_budget": 1, "solver_tolerance": 0.01, "device": "cpu", "output_dir": "results"}


def test_validated_parameters_record_what_the_results_file_holds(tmp_path):
    p = parameters.validate({**DEFAULTS, "output_dir": str(tmp_path), "unrelated": 1})
    assert p.record == {"seeds": [13, 17], "groups_per_seed": 5120, "violation_groups": 512, "swap_groups": 100_000,
                        "root": "", "solver_budget": 1, "solver_tolerance": 0.01, "game": "leduc"}
    assert p.device == "cpu" and p.game == "leduc"


@pytest.mark.parametrize("name, value", [("seeds", [13, 2 ** 63]), ("groups_per_seed", 15), ("root", "9"),
                                         ("solver_tolerance", 0.0), ("device", "tpu")])
def test_a_bad_parameter_stops_with_a_sentence_naming_it(tmp_path, name, value):
    with pytest.raises(ParameterError, match=name):
        parameters.validate({**DEFAULTS, "output_dir": str(tmp_path), name: value})


def test_a_missing_parameter_is_named():
    with pytest.raises(ParameterError, match="swap_groups"):
        parameters.validate({k: v for k, v in DEFAULTS.items() if k != "swap_groups"})
