"""Bad input to the library and to the notebook checks in `oscc_core.reporting.params`: one clear ValueError, up front."""
import hashlib
import json
import os

import pytest

import oscc_core
from oscc_core import exact
from oscc_core.device import resolve_device
from oscc_core.engine.collector import collect
from oscc_core.exact.cfr import cfr_plus
from oscc_core.exact.exploitability import best_response, exploitability, nash_conv
from oscc_core.policy import uniform_policy
from oscc_core.reporting import params

GAME = "kuhn"


def one_line(info) -> str:
    message = str(info.value)
    assert "\n" not in message
    return message


def kuhn_policy_with(row):
    policy = uniform_policy(GAME)
    policy[next(iter(policy))] = row
    return policy


@pytest.mark.parametrize("row", [["0.5", "0.5"], [[0.5], [0.5]], [{"a": 1}, 0.5]])
@pytest.mark.parametrize("call", [nash_conv, exploitability, lambda g, p: best_response(g, p, 0)])
def test_policy_rows_must_be_flat_numbers(call, row):
    with pytest.raises(ValueError, match="policy at .* must be a flat list of 2 numbers") as info:
        call(GAME, kuhn_policy_with(row))
    one_line(info)


def test_continuation_rows_of_strings_name_the_continuation():
    policy = uniform_policy("leduc")
    policy = {k: [str(x) for x in v] for k, v in policy.items()}
    with pytest.raises(ValueError, match="^continuation at .* must be a flat list of 3 numbers") as info:
        collect("leduc", "", "full", 16, 1, continuation=policy, device="cpu")
    one_line(info)


@pytest.mark.parametrize("budget", [-1, 0, 2.5, True])
def test_arm_moments_budget_must_be_a_positive_integer(budget):
    with pytest.raises(ValueError, match=r"^budget must be an integer >= 1") as info:
        exact.arm_moments(GAME, "", budget=budget)
    one_line(info)


def test_cfr_plus_curve_at_must_be_integers():
    with pytest.raises(ValueError, match=r"^curve_at must list integer iteration counts.*\[1\.5\]") as info:
        cfr_plus(GAME, 3, curve_at=[1.5])
    one_line(info)


def test_branch_order_must_be_integers():
    with pytest.raises(ValueError, match=r"^branch_order must be a permutation of the integers 0\.\.1") as info:
        collect(GAME, "", "full", 16, 1, device="cpu", branch_order=[1.7, 0.2])
    one_line(info)


def test_best_response_player_must_be_an_integer():
    with pytest.raises(ValueError, match=r"^player must be the integer 0 or 1, got 1\.0") as info:
        best_response(GAME, uniform_policy(GAME), 1.0)
    one_line(info)


def test_device_auto_colon_is_refused():
    with pytest.raises(ValueError, match=r"^device must be 'auto', 'cpu', 'cuda' or 'cuda:N'.*'auto:1'") as info:
        resolve_device("auto:1")
    one_line(info)
    with pytest.raises(ValueError, match="^device"):
        collect(GAME, "", "full", 16, 1, device="auto:1")


def test_collect_refuses_a_size_beyond_memory_up_front():
    with pytest.raises(ValueError, match=r"^n_groups=1,000,000,000,000 needs about .* more than the limit of") as info:
        oscc_core.collect("leduc", "", "full", 10**12, 1, device="cpu")
    one_line(info)


# --- the checks the notebooks' validation cells call ------------------------------------------

@pytest.mark.parametrize("seeds", [[13, 2**63], [-1]])
def test_seeds_must_fit_in_63_bits(seeds):
    with pytest.raises(params.ParameterError, match=r"^screen_seeds must be a non-empty list of integers in \[0, 2\*\*63 - 1\]"):
        params.check_seeds("screen_seeds", seeds)


def test_seed_must_fit_in_63_bits():
    with pytest.raises(params.ParameterError, match=r"^seed must be an integer in \[0, 2\*\*63 - 1\]"):
        params.check_seed("seed", 2**63)


@pytest.mark.parametrize("name", ["n_groups", "swap_groups", "calibration_groups"])
def test_sizes_beyond_memory_are_refused_with_estimate_and_limit(name):
    with pytest.raises(params.ParameterError, match=rf"^{name}=1,000,000,000,000 needs about .* of memory "
                                                     r"\(4,096 bytes per group\), more than the limit of .*; use at most"):
        params.check_size(name, 10**12, 16)
    assert params.check_size(name, 100_000, 16) == 100_000


def test_physical_budget_beyond_memory_is_refused():
    with pytest.raises(params.ParameterError, match=r"^physical_budget=1,000,000,000,000 needs about .* per physical draw"):
        params.check_memory("physical_budget", 10**12, 1024, unit="physical draw")


def test_output_dir_below_a_file_is_refused_up_front(tmp_path):
    (tmp_path / "a_file").write_text("")
    with pytest.raises(params.ParameterError, match=r"^output_dir must be a writable directory, but .* is not") as info:
        params.check_output_dir("output_dir", str(tmp_path / "a_file" / "results"))
    one_line(info)


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_unwritable_output_dir_is_refused_up_front(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(params.ParameterError, match=r"^output_dir must be a writable directory"):
            params.check_output_dir("output_dir", str(locked / "results"))
        with pytest.raises(params.ParameterError, match=r"^output_dir must be a writable directory"):
            params.check_output_dir("output_dir", str(locked))
    finally:
        locked.chmod(0o700)


def test_writable_output_dir_check_leaves_no_trace(tmp_path):
    params.check_output_dir("output_dir", str(tmp_path / "a" / "b"))
    params.check_output_dir("output_dir", str(tmp_path))
    assert not any(tmp_path.iterdir())


def test_root_as_a_number_is_refused():
    with pytest.raises(params.ParameterError, match=r"^root must be a public history string .* -r root"):
        params.check_root("root", 2, "uniform")


def test_pilot_blocks_beyond_the_calibration_are_refused():
    from oscc_core.chapters.gradient_noise.calibration import check_pilot_blocks
    from oscc_core.chapters.gradient_noise.geometry import geometry
    geom = geometry("", "uniform", "uniform", 1, 1e-3)
    with pytest.raises(params.ParameterError, match=r"^pilot_blocks must be at most \d+ \(calibration_groups=3,000"):
        check_pilot_blocks("pilot_blocks", 1000, geom, 3000, 8)
    assert check_pilot_blocks("pilot_blocks", 16, geom, 3000, 8) == 16


def test_policy_file_is_recorded_by_content_not_path(tmp_path):
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(uniform_policy(GAME)))
    record = params.policy_source_record(str(path))
    assert record == {"source": "file", "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    assert str(tmp_path) not in json.dumps(record)
    assert params.policy_source_record("uniform") == "uniform"
    assert params.policy_source_record("cfr_plus") == "cfr_plus"


def test_output_dir_override_replaces_the_checked_output_dir(tmp_path, monkeypatch):
    target = tmp_path / "redirected"
    monkeypatch.setenv(params.OUTPUT_DIR_OVERRIDE, str(target))
    assert params.check_output_dir("output_dir", "../results") == target
