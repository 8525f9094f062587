"""notebooks/03_gradient_noise.ipynb: bad parameters stop it with one sentence; a small run writes its results."""
import json

import pytest
from notebook_runs import assert_stops_naming, run_notebook

STEM = "03_gradient_noise"
ROW_ARMS = ("independent", "root_only", "continuation_only", "full", "oscc_select")
SMALL = {"n_groups": 3_000, "calibration_groups": 3_000, "pilot_blocks": 16, "n_bootstrap": 40,
         "physical_budget": 4_000, "screen_seeds": [13, 17], "screen_iterations": 4, "cfr_iterations": 20,
         "lag_grid": [0.2], "learning_rate_grid": [0.02]}


@pytest.mark.parametrize("parameters, name", [
    ({"root_policy": "greedy"}, "root_policy"),
    ({"root_policy": [0.2, 0.3, 0.5]}, "root_policy"),
    ({"n_groups": -5}, "n_groups"),
    ({"n_groups": 10}, "n_groups"),
    ({"lag_grid": []}, "lag_grid"),
    ({"noise_weights": "uniform"}, "noise_weights"),
    ({"root_policy_floor": 0.0}, "root_policy_floor"),
    ({"connectivity_lag_grid": [-1]}, "connectivity_lag_grid"),
    ({"connectivity_seeds": [13]}, "connectivity_seeds"),
])
def test_bad_parameter_stops_the_notebook_naming_it(tmp_path, parameters, name):
    assert_stops_naming(STEM, tmp_path, name, **parameters)


def test_small_run_writes_every_arm_and_table(tmp_path):
    run_notebook(STEM, tmp_path, **SMALL)
    results = json.loads((tmp_path / "results" / "03_gradient_noise.json").read_text())
    assert set(results["arms"]) == set(ROW_ARMS)
    assert set(results["physical_cost_frontier"]) == set(ROW_ARMS)
    for arm in ROW_ARMS:
        rec = results["arms"][arm]
        assert rec["groups"] == SMALL["n_groups"]
        for key in ("noise_trace", "return_ratio", "gradient_ratio", "update_ratio"):
            assert rec[key]["low"] <= rec[key]["value"] <= rec[key]["high"], (arm, key)
        assert results["physical_cost_frontier"][arm]["physical_draws"] <= SMALL["physical_budget"]
    control = results["settings"]["connectivity control"]["arms"]["full"]
    assert control["clip_fraction"]["value"] == 0
    assert set(results["tables"]) == {"proposition_3", "noise_transfer", "clipping", "physical_cost_frontier",
                                      "scalar_screen", "connectivity_loop"}
    assert results["manifest"]["parameters"]["physical_budget"] == SMALL["physical_budget"]
    # the budget is a setting of the paper's run: it differs here, and the reason says what sets it
    budget = {r["claim id"]: r for r in results["paper_settings"]}["cost_frontier.independent.physical_calls"]
    assert budget["status"] == "differs" and f"{SMALL['physical_budget']:,}" in budget["reason"]
    assert set(results["findings"]["box"]) == {"holds", "does not hold", "impossible or open"}
    assert results["manifest"]["parameters"]["root_policy_floor"] == 1e-3
    assert results["manifest"]["parameters"]["noise_weights"] == "root_law"
