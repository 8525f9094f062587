"""The operating point: one frozen object whose digest changes with every field, shared by chapters 05 and 06."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from notebook_runs import parameter_defaults

from oscc_core.learning.operating_point import FIELDS, operating_point

ROOT = Path(__file__).resolve().parents[1]
DEFAULTS = dict(decision_points=128, epochs=4, epsilon=0.2, group_size=4, budget=61440, gae_lambda=0.95,
                value_rate=0.5, eta_grid=[2.0, 4.0], dev_seeds=[1001, 1002], learning_rate=0.0, opponent="uniform",
                contrast_root="", contrast_groups=4096, update_replicates=32, leduc_cfr_iterations=300)
#: A different value for every field of the notebooks' parameters that enters the operating point.
CHANGED = dict(decision_points=64, epochs=3, epsilon=0.25, group_size=5, budget=61441, gae_lambda=0.9,
               value_rate=0.4, eta_grid=[2.0, 8.0], dev_seeds=[1001, 1003], learning_rate=1.0, opponent="other",
               contrast_root="2", contrast_groups=4095, update_replicates=31, leduc_cfr_iterations=301)


def test_changed_covers_every_field():
    assert set(CHANGED) == set(DEFAULTS) == set(FIELDS)


@pytest.mark.parametrize("field", FIELDS)
def test_the_digest_changes_with_every_parameter_field(field):
    base = operating_point(SimpleNamespace(**DEFAULTS), 4.0)
    changed = operating_point(SimpleNamespace(**{**DEFAULTS, field: CHANGED[field]}), 4.0)
    assert base.digest != changed.digest


def test_the_digest_changes_with_the_chosen_step_size_and_the_source_game():
    p = SimpleNamespace(**DEFAULTS)
    base = operating_point(p, 4.0)
    assert operating_point(p, 8.0).digest != base.digest
    assert operating_point(p, 4.0, source_game="kuhn").digest != base.digest


def test_the_digest_changes_with_an_arms_construction():
    base = operating_point(SimpleNamespace(**DEFAULTS), 4.0)
    arms = list(base.arms)
    first = dict(arms[0])
    arms[0] = tuple(sorted({**first, "share_hidden": not first["share_hidden"]}.items()))
    assert replace(base, arms=tuple(arms)).digest != base.digest


def test_the_digest_is_the_same_for_equal_parameters():
    assert operating_point(SimpleNamespace(**DEFAULTS), 4.0).digest == \
        operating_point(SimpleNamespace(**dict(DEFAULTS)), 4.0).digest


def test_the_solver_and_transfer_notebooks_share_the_operating_point_defaults():
    solver, transfer = parameter_defaults("05_solver"), parameter_defaults("06_transfer")
    assert {f: solver[f] for f in FIELDS} == {f: transfer[f] for f in FIELDS}


def test_the_committed_solver_and_transfer_results_record_one_operating_point():
    digests = [json.loads((ROOT / "results" / f"{stem}.json").read_text())["operating_point"]["digest"]
               for stem in ("05_solver", "06_transfer")]
    assert digests[0] == digests[1]


def test_the_committed_solver_and_transfer_results_record_one_converging_operating_point():
    solver = json.loads((ROOT / "results" / "05_solver.json").read_text())
    transfer = json.loads((ROOT / "results" / "06_transfer.json").read_text())
    assert solver["learning_study"]["converging_operating_point"]["digest"] == \
        transfer["converging"]["operating_point"]["digest"]
