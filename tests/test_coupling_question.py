"""The coupling question in one summary (`oscc_core.learning.coupling_question`): independent over CP-GRPO calls to
a threshold, paired by seed, and the paired exploitability difference at every budget.

Expected values are worked by hand: curves between budgets 100 and 1000 whose log-log crossings of 0.2 chips lie
at 100 * 10^(1/2) (0.4 -> 0.1 or 0.8 -> 0.05) and 100 * 10^(2/3) (0.8 -> 0.1), so the per-seed log ratios are
+ln(10)/6, 0 and -ln(10)/6; the t quantile t(0.975, 2) = 4.302652729749464 and t(0.975, 3) = 3.182446305284263
are read from a table (scipy's agrees); the exploitability differences are subtracted by hand.
"""
from __future__ import annotations

import math
import statistics

import pytest

from oscc_core.learning import coupling_question as cq

T2, T3 = 4.302652729749464, 3.182446305284263


#: The other fields of a study record (`study_design.summary` reads them; they play no part here).
OTHER = {"exploitability_last": 0.5, "never_updated": 0.0, "physical_calls": 1, "transitions": 1, "decisions": 1}


def curve(first: float, last: float) -> dict:
    return {"100": {"exploitability_average": first, **OTHER}, "1000": {"exploitability_average": last, **OTHER}}


#: seed: (independent, CP-GRPO).  Crossings of 0.2: (0.4, 0.1) and (0.8, 0.05) at 10^(1/2), (0.8, 0.1) at 10^(2/3).
PAIRS = {"1": (curve(0.8, 0.1), curve(0.4, 0.1)),      # ratio 10^(1/6): CP-GRPO faster
         "2": (curve(0.4, 0.1), curve(0.4, 0.1)),      # ratio 1
         "3": (curve(0.5, 0.3), curve(0.4, 0.1)),      # independent never reaches 0.2: no pair
         "4": (curve(0.8, 0.05), curve(0.8, 0.1))}     # ratio 10^(-1/6): independent faster
IND = {s: a for s, (a, _) in PAIRS.items()}
CP = {s: b for s, (_, b) in PAIRS.items()}


def test_the_paired_calls_ratio_by_hand():
    got = cq.calls_ratio(IND, CP, 0.2)
    half = T2 * (math.log(10) / 6) / math.sqrt(3)      # logs +-ln10/6 and 0: sd = ln10/6, n = 3
    assert got["ratio"] == pytest.approx(1.0, abs=1e-12)
    assert got["low"] == pytest.approx(math.exp(-half), rel=1e-9)
    assert got["high"] == pytest.approx(math.exp(half), rel=1e-9)
    assert (got["pairs"], got["seeds"], got["only_arm"], got["only_reference"], got["reference_faster"]) == \
        (3, 4, 0, 1, 1)


def test_seeds_not_shared_by_both_arms_are_left_out():
    got = cq.calls_ratio({"1": IND["1"], "9": IND["2"]}, {"1": CP["1"], "8": CP["2"]}, 0.2)
    assert (got["pairs"], got["seeds"], got["low"]) == (1, 1, None)          # one pair: no interval
    assert got["ratio"] == pytest.approx(10 ** (1 / 6), rel=1e-12)


def test_the_coupling_summary_by_hand():
    got = cq.coupling_summary({"independent": IND, "cp_grpo": CP}, [0.2])
    assert set(got["calls_ratio"]) == {repr(0.2)}
    assert sorted(got["differences"]) == [100, 1000]
    d = [0.1 - 0.1, 0.1 - 0.1, 0.3 - 0.1, 0.05 - 0.1]      # independent - CP-GRPO at 1000 calls, seeds 1-4
    at = got["differences"][1000]
    half = T3 * statistics.stdev(d) / 2
    assert at["mean"] == pytest.approx(0.0375, abs=1e-12)
    assert (at["low"], at["high"]) == (pytest.approx(0.0375 - half, abs=1e-12), pytest.approx(0.0375 + half, abs=1e-12))
    assert (at["n"], at["cp_grpo_lower"]) == (4, 1)
    first = got["differences"][100]                         # 0.4, 0, 0.1, 0: CP-GRPO lower on 2
    assert first["mean"] == pytest.approx(0.125, abs=1e-12) and first["cp_grpo_lower"] == 2


def test_only_budgets_every_seed_of_both_arms_holds_are_compared():
    ind = {**IND, "1": {**IND["1"], "500": {"exploitability_average": 0.3}}}
    assert cq.shared_budgets(ind, CP) == [100, 1000]
