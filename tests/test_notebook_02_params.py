"""notebooks/02_covariance.ipynb: bad parameters stop it with one sentence; a small run writes its results."""
import json

import pytest
from notebook_runs import assert_stops_naming, run_notebook

STEM = "02_covariance"
ARMS = ("independent", "root_only", "continuation_only", "full", "policy_namespace")
ARM_FIELDS = ("groups", "valid_groups", "contrast_mean", "contrast_var", "contrast_var_se", "cov", "branch_means",
              "branch_vars", "exact_contrast_var", "logical_keys", "physical_draws")
SMALL = {"n_groups": 2_000, "n_bootstrap": 50, "seeds": [13, 17], "seed_groups": 512, "budgets": [1, 2],
         "budget_groups": 512, "cfr_iterations": 20}


@pytest.mark.parametrize("parameters, name", [
    ({"n_groups": -5}, "n_groups"),
    ({"root": "9"}, "root"),
    ({"continuation": "no_such_policy.json"}, "continuation"),
])
def test_bad_parameter_stops_the_notebook_naming_it(tmp_path, parameters, name):
    assert_stops_naming(STEM, tmp_path, name, **parameters)


def test_small_run_writes_every_arm_with_its_fields(tmp_path):
    run_notebook(STEM, tmp_path, **SMALL)
    results = json.loads((tmp_path / "results" / "02_covariance.json").read_text())
    assert set(results["arms"]) == set(ARMS)
    for arm in ARMS:
        missing = [f for f in ARM_FIELDS if f not in results["arms"][arm]]
        assert not missing, f"{arm} lacks {missing}"
        assert results["arms"][arm]["groups"] == SMALL["n_groups"]
    assert results["manifest"]["parameters"]["n_groups"] == SMALL["n_groups"]
