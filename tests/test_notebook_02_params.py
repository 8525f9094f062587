"""notebooks/02_covariance.ipynb: bad parameters stop it with one sentence; a small run writes its results."""
import json
from pathlib import Path

import papermill as pm
import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOK = NOTEBOOKS / "02_covariance.ipynb"
ARMS = ("independent", "root_only", "continuation_only", "full", "policy_namespace")
ARM_FIELDS = ("groups", "valid_groups", "contrast_mean", "contrast_var", "contrast_var_se", "cov", "branch_means",
              "branch_vars", "exact_contrast_var", "logical_keys", "physical_draws")
SMALL = {"n_groups": 2_000, "n_bootstrap": 50, "seeds": [13, 17], "seed_groups": 512, "budgets": [1, 2],
         "budget_groups": 512, "cfr_iterations": 20}


def _run(tmp_path, **parameters):
    parameters.setdefault("output_dir", str(tmp_path / "results"))
    return pm.execute_notebook(str(NOTEBOOK), str(tmp_path / "out.ipynb"), parameters=parameters,
                               cwd=str(NOTEBOOKS), progress_bar=False, kernel_name="python3")


@pytest.mark.parametrize("parameters, name", [
    ({"n_groups": -5}, "n_groups"),
    ({"root": "9"}, "root"),
    ({"continuation": "no_such_policy.json"}, "continuation"),
])
def test_bad_parameter_stops_the_notebook_naming_it(tmp_path, parameters, name):
    with pytest.raises(pm.PapermillExecutionError) as info:
        _run(tmp_path, **parameters)
    assert info.value.ename == "ParameterError"
    assert name in info.value.evalue


def test_small_run_writes_every_arm_with_its_fields(tmp_path):
    _run(tmp_path, **SMALL)
    results = json.loads((tmp_path / "results" / "02_covariance.json").read_text())
    assert set(results["arms"]) == set(ARMS)
    for arm in ARMS:
        missing = [f for f in ARM_FIELDS if f not in results["arms"][arm]]
        assert not missing, f"{arm} lacks {missing}"
        assert results["arms"][arm]["groups"] == SMALL["n_groups"]
    assert results["manifest"]["parameters"]["n_groups"] == SMALL["n_groups"]
