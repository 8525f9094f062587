"""Bad notebook parameters stop the validation cell with one sentence, before any computation or file write.

One papermill run per notebook (each costs seconds); the checks themselves are tested directly in
test_bad_input.py.
"""
from notebook_runs import assert_stops_naming


def test_01_seed_beyond_63_bits_stops_before_writing(tmp_path):
    assert_stops_naming("01_contract", tmp_path, "seeds", seeds=[13, 2**63])
    assert not (tmp_path / "results").exists()


def test_02_root_given_as_a_number_stops(tmp_path):
    assert_stops_naming("02_covariance", tmp_path, "root", root=2)
    assert not (tmp_path / "results").exists()


def test_03_pilot_blocks_beyond_the_calibration_stops(tmp_path):
    assert_stops_naming("03_gradient_noise", tmp_path, "pilot_blocks", calibration_groups=3_000, pilot_blocks=1_000)


def test_04_unwritable_output_dir_stops(tmp_path):
    (tmp_path / "a_file").write_text("")
    assert_stops_naming("04_selector", tmp_path, "output_dir", output_dir=str(tmp_path / "a_file" / "results"))


def test_05_dev_seeds_overlapping_the_reporting_seeds_stops_before_writing(tmp_path):
    assert_stops_naming("05_solver", tmp_path, "dev_seeds", dev_seeds=[13, 1001])
    assert not (tmp_path / "results").exists()


def test_05_budget_below_the_minimum_stops_before_writing(tmp_path):
    assert_stops_naming("05_solver", tmp_path, "budget", budget=10)
    assert not (tmp_path / "results").exists()


def test_05_contrast_root_given_as_a_number_stops_before_writing(tmp_path):
    assert_stops_naming("05_solver", tmp_path, "contrast_root", contrast_root=9)
    assert not (tmp_path / "results").exists()


def test_05_an_unknown_converging_option_set_stops_before_writing(tmp_path):
    assert_stops_naming("05_solver", tmp_path, "converging_options", converging_options="faster")
    assert not (tmp_path / "results").exists()


def test_06_seeds_overlapping_the_dev_seeds_stops_before_writing(tmp_path):
    assert_stops_naming("06_transfer", tmp_path, "dev_seeds", seeds=[13, 1001])
    assert not (tmp_path / "results").exists()


def test_06_budget_below_the_minimum_stops_before_writing(tmp_path):
    assert_stops_naming("06_transfer", tmp_path, "budget", budget=10)
    assert not (tmp_path / "results").exists()


def test_06_kuhn_contrast_root_given_as_a_number_stops_before_writing(tmp_path):
    assert_stops_naming("06_transfer", tmp_path, "kuhn_contrast_root", kuhn_contrast_root=9)
    assert not (tmp_path / "results").exists()
