"""Unit tests of the contract chapter package, each against a value found independently of it
(OpenSpiel's own game tree, a closed form, or a small enumeration written here)."""
import hashlib
from collections import Counter

import matplotlib
import pandas as pd
import pyspiel
import pytest
import torch

from oscc_core.chapters.contract import (
    figures,
    observation,
    parameters,
    rows,
    run_audit,
    stream_table,
    swaps,
    tables,
)
from oscc_core.engine import probe as engine_probe
from oscc_core.engine import rng
from oscc_core.engine.failures import FAILURE_CODES
from oscc_core.engine.violations import CONTROLS
from oscc_core.games import KUHN, LEDUC, get_game
from oscc_core.reporting.params import ParameterError

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


def test_the_stream_table_has_one_row_per_namespace_of_the_paper():
    table = stream_table.rng_dependency_table()
    assert sorted(table["namespace"]) == sorted(["root", "hidden", "chance", "policy", "bootstrap"])
    policy = table.set_index("namespace").loc["policy"]
    assert "branch" in policy["key fields"] and "branch" not in policy["dropped to share"]   # never shared


def test_the_worst_condition_row_reports_the_smallest_rejected_fraction():
    base = {"groups": 512, "rejected": 512, "affected_groups": 1, "marginal_shift": 0.0, "marginal_shift_se": 0.1,
            "replay_failure_rate": 0.5, "variance_change_pct": -1.0, "variance_change_pct_se": 1.0}
    controls = {name: dict(base) for name in CONTROLS}
    worst = list(CONTROLS)[2]
    controls[worst].update(rejected=500)
    out = rows.violation_rows(controls)
    assert out[1]["ours"] == "500/512"
    assert len(out) == 2 + 4 * len(CONTROLS)


def test_verdict_glue_counts_every_verdict_with_zeros():
    frame = pd.DataFrame({"verdict": ["reproduced", "reproduced", "partly", "no paper value"]})
    assert tables.verdict_glue(frame) == {"n_reproduced": 2, "n_partly": 1, "n_not_reproduced": 0,
                                          "n_impossible_under_the_rules": 0, "n_not_compared": 0}


def test_the_violations_figure_draws_one_bar_per_control_at_its_change():
    controls = {name: {"variance_change_pct": float(i) - 2, "variance_change_pct_se": 1.0}
                for i, name in enumerate(CONTROLS)}
    fig = figures.violations_figure(controls, -30.0)
    bars = fig.axes[0].patches
    assert [b.get_width() for b in bars] == [float(i) - 2 for i in range(len(CONTROLS))]
    assert fig.axes[0].lines[-1].get_xdata()[0] == -30.0


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
