"""A chapter's live check (`oscc_core.reporting.learning_study.live_check`): a rerun that shares nothing with the
committed study compared nothing, and says so; it never "agrees"."""
from __future__ import annotations

from oscc_core.reporting.learning_study import live_check, live_check_text

COMMITTED = {"runs": {"converging": {"cp_grpo": {"13": {"100": {"a": 1.0}}, "17": {"100": {"a": 3.0}}}}}}
NEW_SEEDS = {"runs": {"converging": {"cp_grpo": {"211": {"100": {"a": 2.0}}, "223": {"100": {"a": 2.5}}}}}}
OTHER_ARM = {"runs": {"converging": {"ppo": {"13": {"100": {"a": 2.0}}}}}}


def test_a_bit_for_bit_check_of_new_seeds_compared_nothing_and_does_not_agree():
    got = live_check(COMMITTED, NEW_SEEDS, bitwise=True)
    assert (got["records"], got["nothing_to_compare"], got["agrees"]) == (0, True, False)
    assert live_check_text(got).startswith("nothing to compare: the rerun and the committed study share no record")


def test_a_range_check_of_an_arm_the_study_did_not_run_compared_nothing_and_does_not_agree():
    got = live_check(COMMITTED, OTHER_ARM, bitwise=False)
    assert (got["fields"], got["nothing_to_compare"], got["agrees"]) == (0, True, False)
    assert live_check_text(got).startswith("nothing to compare: the committed study records no seed's range")


def test_new_seeds_within_the_committed_range_are_compared_by_range_and_agree():
    got = live_check(COMMITTED, NEW_SEEDS, bitwise=False)
    assert (got["fields"], got["fields_within_range"], got["nothing_to_compare"], got["agrees"]) == (2, 2, False, True)


def test_one_shared_record_is_something_to_compare():
    got = live_check(COMMITTED, {"runs": {"converging": {"cp_grpo": {"13": {"100": {"a": 1.0}}}}}}, bitwise=True)
    assert (got["records"], got["nothing_to_compare"], got["agrees"]) == (1, False, True)
    assert live_check_text(got) == "compared bit for bit: each of the 1 records both hold agrees exactly"
