"""notebooks/02_covariance.ipynb: bad parameters stop it with one sentence; a small run writes its results, with
one primary row per claim id and every setting of the paper's runs as a status."""
import json
from collections import Counter

import pytest
from notebook_runs import assert_stops_naming, run_notebook

from oscc_core.reporting import claims
from oscc_core.reporting.params import OUTPUT_DIR_OVERRIDE

STEM = "02_covariance"
ARMS = ("independent", "root_only", "continuation_only", "full", "policy_namespace")
ARM_FIELDS = ("groups", "valid_groups", "contrast_mean", "contrast_var", "contrast_var_se", "cov", "branch_means",
              "branch_vars", "exact_contrast_var", "logical_keys", "physical_draws")
SMALL = {"n_groups": 2_000, "n_bootstrap": 50, "seeds": [13, 17], "seed_groups": 2_400, "budgets": [1, 2],
         "budget_groups": 512, "cfr_iterations": 20, "pooled_groups": 4_800}


@pytest.fixture(scope="module")
def small_results(tmp_path_factory):
    """The results file of one small run of the notebook.  A module fixture is made before the function fixture
    that clears OSCC_OUTPUT_DIR (conftest's `_explicit_output_dirs`), so it clears the variable itself: exported
    (as the test targets export it), it would send the results elsewhere."""
    out = tmp_path_factory.mktemp("covariance")
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(OUTPUT_DIR_OVERRIDE, raising=False)
        run_notebook(STEM, out, **SMALL)
    return json.loads((out / "results" / "02_covariance.json").read_text())


def records(obj):
    """Every comparison record (a dict naming a claim as "claim id" or "sensitivity of") in a results tree."""
    if isinstance(obj, dict):
        if "claim id" in obj or "sensitivity of" in obj:
            yield obj
        for value in obj.values():
            yield from records(value)
    elif isinstance(obj, list):
        for value in obj:
            yield from records(value)


@pytest.mark.parametrize("parameters, name", [
    ({"n_groups": -5}, "n_groups"),
    ({"root": "9"}, "root"),
    ({"continuation": "no_such_policy.json"}, "continuation"),
    ({"pooled_weighting": "by pot"}, "pooled_weighting"),
])
def test_bad_parameter_stops_the_notebook_naming_it(tmp_path, parameters, name):
    assert_stops_naming(STEM, tmp_path, name, **parameters)


def test_small_run_writes_every_arm_with_its_fields(small_results):
    assert set(small_results["arms"]) == set(ARMS)
    for arm in ARMS:
        missing = [f for f in ARM_FIELDS if f not in small_results["arms"][arm]]
        assert not missing, f"{arm} lacks {missing}"
        assert small_results["arms"][arm]["groups"] == SMALL["n_groups"]
    assert small_results["manifest"]["parameters"]["n_groups"] == SMALL["n_groups"]


def test_every_claim_id_has_exactly_one_primary_row_in_the_results_file(small_results):
    body = {k: v for k, v in small_results.items() if k != "manifest"}
    primary = Counter(r["claim id"] for r in records(body) if r.get("claim id") in claims.load_claims())
    assert [cid for cid, n in primary.items() if n > 1] == []
    # the headline claims the CFR+ alternative also measures are the pooled audit's
    assert body["cfr_plus_alternative"] and all("claim id" not in r for r in body["cfr_plus_alternative"])
    full = next(r for r in records(body) if r.get("claim id") == "main.cp_grpo_paired.variance")
    assert full["ours"] == body["pooled_roots"]["arms"]["full"]["contrast_var"]


#: Claims the paper labels all roots (its headline audit, the six-root ablations, the strata's aggregate rows):
#: their primary row is the pooled audit's, the one-root audit's row beside it a sensitivity row.
ALL_ROOTS = ("main.cp_grpo_paired.variance", "main.independent.variance", "main_uncertainty.variance_ratio.cp_grpo_paired",
             "main.caption.variance_reduction", "main_uncertainty.check_bet_covariance.cp_grpo_paired",
             "coupling_factors.root_only.contrast", "ablations.continuation.variance",
             "strata.all_roots.paired_variance", "strata.round_one.variance_ratio", "strata.two_actions.covariance")


@pytest.mark.parametrize("cid", ALL_ROOTS)
def test_all_roots_claims_take_the_pooled_audit_and_keep_the_one_root_audit_as_sensitivity(small_results, cid):
    body = {k: v for k, v in small_results.items() if k != "manifest"}
    [primary] = [r for r in records(body) if r.get("claim id") == cid]
    sensitivity = [r for r in records(body) if r.get("sensitivity of") == cid and r["quantity"].startswith("root ''")]
    assert "root ''" not in primary["quantity"] and sensitivity
    assert primary["ours"] != sensitivity[0]["ours"]


def test_the_pooled_audit_records_its_roots_weights_and_exact_values(small_results):
    pooled = small_results["pooled_roots"]
    assert pooled["weighting"] == "visits" and len(pooled["roots"]) == 24
    assert sum(r["groups"] for r in pooled["roots"]) == pooled["groups"] == SMALL["pooled_groups"]
    for arm in ARMS:
        rec = pooled["arms"][arm]
        assert rec["contrast_var_interval"][0] <= rec["contrast_var"] <= rec["contrast_var_interval"][1]
        assert rec["exact_contrast_var"] > 0
    assert small_results["manifest"]["parameters"]["pooled_weighting"] == "visits"


def test_every_row_of_a_setting_has_a_status_and_every_other_row_a_verdict(small_results):
    body = {k: v for k, v in small_results.items() if k != "manifest"}
    kinds = {cid: e["kind"] for cid, e in claims.load_claims().items()}
    named = [r for r in records(body) if r.get("claim id") in kinds]
    settings = [r for r in named if kinds[r["claim id"]] == "setup"]
    assert settings and all("status" in r and "verdict" not in r for r in settings)
    assert all("verdict" in r and "status" not in r for r in named if kinds[r["claim id"]] != "setup")


def test_the_results_file_keeps_the_chapters_findings(small_results):
    f = small_results["findings"]
    assert set(f["box"]) == {"holds", "does not hold", "impossible or open"} and 2 <= len(f["landing"]) <= 3


def test_the_result_box_and_the_closing_table_give_the_same_counts(small_results):
    from oscc_core.reporting.tally import VERDICTS, tally_text

    counted = dict(small_results["verdict_counts"])          # the results file sorts keys: restore the verdict order
    for cls in ("measurements", "checks", "intervals", "by construction"):
        counted[cls] = {v: counted[cls][v] for v in VERDICTS}
    counted["orderings"] = {v: counted["orderings"][v] for v in claims.COMPARED}
    assert small_results["findings"]["counts"] == tally_text(counted)


def test_every_printing_of_one_paper_number_reads_one_verdict(small_results):
    from oscc_core.reporting.printings import groups

    body = {k: v for k, v in small_results.items() if k != "manifest"}
    verdict = {r["claim id"]: r.get("verdict") for r in records(body) if r.get("claim id") in claims.load_claims()}
    linked = groups(claims.load_claims())
    for cid, v in verdict.items():
        assert {verdict[m] for m in linked[cid] if m in verdict} == {v}, cid


def test_the_seed_rows_carry_the_pooled_reading_and_the_one_root_reading(small_results):
    rows = [r for r in small_results["seed_precision"] if r.get("claim id", "").startswith("seed_precision.seed13.")]
    assert rows and all([x["reading"] for x in r["readings"]] == ["all roots pooled", "root '' alone"] for r in rows)
    dependent = [r for r in rows if r.get("reading dependent")]
    assert all(r["verdict"] == r["readings"][0]["verdict"] for r in dependent)     # the pooled reading decides


def test_the_update_rows_carry_one_reading_per_step_size(small_results):
    rows = small_results["update_variance"]["rows"]
    assert all([x["reading"] for x in r["readings"]] == ["step size eta = 1", "step size eta = 0.1",
                                                         "step size eta = 10"] for r in rows)
    assert set(small_results["update_variance"]["by_eta"]) == {"0.1", "1", "10"}
