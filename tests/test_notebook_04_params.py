"""notebooks/04_selector.ipynb: bad parameters stop it with one sentence; a small run writes its results."""
import json

import pytest

from notebook_runs import assert_stops_naming, run_notebook

STEM = "04_selector"
ARMS = ("independent", "root_only", "continuation_only", "full")
SMALL = {"calibration_groups": 128, "eval_groups": 4_000, "pilot_groups": 4_000, "block_size": 8,
         "sweep_sizes": [64, 128], "sweep_repetitions": 10, "scan_step": 0.25, "cfr_iterations": 20}


@pytest.mark.parametrize("parameters, name", [
    ({"root_policy": [0.5, 0.6, 0.1]}, "root_policy"),
    ({"root_policy": [0.5, 0.5]}, "root_policy"),
    ({"root": ""}, "root"),
    ({"binary_root": "2"}, "binary_root"),
    ({"delta": 0.0}, "delta"),
    ({"calibration_groups": 100}, "calibration_groups"),
    ({"sweep_sizes": [64, 100]}, "sweep_sizes"),
    ({"continuation": "no_such_policy.json"}, "continuation"),
])
def test_bad_parameter_stops_the_notebook_naming_it(tmp_path, parameters, name):
    assert_stops_naming(STEM, tmp_path, name, **parameters)


def test_small_run_writes_the_three_action_fields(tmp_path):
    run_notebook(STEM, tmp_path, **SMALL)
    results = json.loads((tmp_path / "results" / "04_selector.json").read_text())
    three = results["three_action"]
    assert three["root"] == "2"
    assert set(three["exact_noise"]) == set(ARMS) and set(three["estimated_noise"]) == set(ARMS)
    assert set(three["selected"]) == {"oscc", "rv", "oracle"}
    assert three["root_policy"]["actions"] == ["Fold", "Call", "Raise"]
    # the default root policy folds often: the noise prefers independent sampling, the return variance full coupling
    assert three["exact_noise_argmin"] == "independent"
    assert three["exact_contrast_variance_argmin"] == "full"
    assert results["manifest"]["parameters"]["calibration_groups"] == SMALL["calibration_groups"]
    assert len(results["calibration_sweep"]) == 3 * len(SMALL["sweep_sizes"])
