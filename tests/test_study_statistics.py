"""Every statistic a chapter prints from a learning study, against a value computed here independently.

The independent values: scipy's Student t quantile and the sample standard deviation written out with the
n - 1 divisor (for means and 95% intervals), differences of matched seeds taken by hand, the closed form
b0 (b1 / b0) ** (log(e0 / th) / log(e0 / e1)) of the log-log interpolation, geometric means and their
intervals from logs by hand, and the documented rules of orderings and resolution (an ordering holds on
paired differences strictly above 0; it is resolved only when every 95% interval lies strictly above 0).
Boundaries (a value exactly at a threshold, a zero difference, n = 2 so n - 1 = 1) are hypothesis properties.
"""
import copy
import math

import numpy as np
import pytest
import scipy.stats
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from oscc_core.chapters.solver import study_view as solver_view
from oscc_core.chapters.transfer import readings as transfer_readings
from oscc_core.chapters.transfer import study as transfer_study
from oscc_core.chapters.transfer import study_view as transfer_view
from oscc_core.learning import study_design as design
from oscc_core.learning import summary as screen
from oscc_core.method import stats
from oscc_core.reporting import study_tables as tables

LEVEL = 0.95
QUANTITIES = ("exploitability_average", "exploitability_last", "never_updated", "physical_calls", "transitions",
              "decisions")


# ----- independent references ----------------------------------------------------------------------------
def reference_interval(values, level=LEVEL):
    """(mean, low, high): mean +- scipy's t_{(1+level)/2, n-1} x s / sqrt(n), s with the n - 1 divisor."""
    v = [float(x) for x in values]
    n = len(v)
    mean = math.fsum(v) / n
    s = math.sqrt(math.fsum((x - mean) ** 2 for x in v) / (n - 1))
    half = scipy.stats.t.ppf((1 + level) / 2, n - 1) * s / math.sqrt(n)
    return mean, mean - half, mean + half


def assert_interval(got: dict, values, level=LEVEL):
    mean, low, high = reference_interval(values, level)
    scale = 1.0 + max(abs(float(x)) for x in values)
    assert got["n"] == len(values)
    for name, want in (("mean", mean), ("low", low), ("high", high)):
        assert got[name] == pytest.approx(want, rel=1e-9, abs=1e-12 * scale), name


def crossing(b0, e0, b1, e1, th):
    """Calls at which the line through (log b0, log e0) and (log b1, log e1) reaches log th."""
    return b0 * (b1 / b0) ** (math.log(e0 / th) / math.log(e0 / e1))


def record(e: float) -> dict:
    """A run record at one budget: the exploitability given, the other quantities fixed."""
    return {"exploitability_average": e, "exploitability_last": 2 * e, "never_updated": 0.25,
            "physical_calls": 100, "transitions": 300, "decisions": 200}


# ----- means and 95% t-intervals ---------------------------------------------------------------------------
values_lists = st.lists(st.floats(min_value=-4.0, max_value=4.0, allow_nan=False, allow_subnormal=False),
                        min_size=2, max_size=30)


@given(values_lists)
def test_the_t_interval_is_the_mean_plus_minus_scipys_975_quantile_times_the_n_minus_1_standard_error(values):
    iv = stats.t_interval(values)
    assert_interval({"mean": iv.mean, "low": iv.low, "high": iv.high, "n": iv.n}, values)
    assert iv.level == LEVEL


def test_with_two_seeds_the_interval_uses_one_degree_of_freedom():
    iv = stats.t_interval([1.0, 3.0])                     # mean 2, s = sqrt(2), se = 1
    assert iv.sd == pytest.approx(math.sqrt(2.0), rel=1e-15)
    assert iv.t == pytest.approx(12.706204736174707, rel=1e-12)     # t_{0.975, 1} = tan(0.475 pi)
    assert (iv.low, iv.high) == (pytest.approx(2.0 - 12.706204736174707), pytest.approx(2.0 + 12.706204736174707))


@pytest.mark.parametrize("df", [1, 2, 3, 4, 5, 9, 10, 29, 59])
def test_the_student_quantile_is_scipys(df):
    for p in (0.9, 0.95, 0.975, 0.995):
        assert stats.student_t_quantile(p, df) == pytest.approx(scipy.stats.t.ppf(p, df), rel=1e-10)


@given(st.lists(st.floats(min_value=1e-3, max_value=50.0), min_size=2, max_size=20))
def test_a_variance_interval_is_the_mean_times_exp_plus_minus_t_se_over_mean(values):
    assume(np.ptp(values) > 1e-9)
    mean, low, _ = reference_interval(values)
    factor = math.exp((mean - low) / mean)                 # (mean - low) = t se
    iv = stats.log_t_interval(values)
    assert (iv.low, iv.high) == (pytest.approx(mean / factor, rel=1e-9), pytest.approx(mean * factor, rel=1e-9))


def test_the_screens_standard_deviation_divides_by_n_minus_1():
    records = {"a": {"1": {"x": 1.0}, "2": {"x": 2.0}, "3": {"x": 6.0}}}     # mean 3, squares 4 + 1 + 9 = 14
    assert screen.sd(records, "a", "x") == pytest.approx(math.sqrt(14 / 2), rel=1e-15)


@given(values_lists)
def test_the_screens_interval_of_a_signed_quantity_is_the_t_interval(values):
    records = {"a": {str(s): {"x": v} for s, v in enumerate(values)}}
    iv = screen.interval(records, "a", "x")
    assert_interval({"mean": iv.mean, "low": iv.low, "high": iv.high, "n": iv.n}, values)


def test_the_screens_paired_difference_matches_seeds_by_name_not_by_position():
    records = {"a": {"1": {"x": 5.0}, "2": {"x": 1.0}, "3": {"x": 4.0}},
               "b": {"3": {"x": 3.0}, "1": {"x": 2.0}, "2": {"x": 1.5}}}
    iv = screen.paired_difference(records, "a", "b", "x")
    assert_interval({"mean": iv.mean, "low": iv.low, "high": iv.high, "n": iv.n}, [3.0, -0.5, 1.0])


# ----- the study summary: means, intervals, paired differences -------------------------------------------
grid_values = st.integers(min_value=0, max_value=8).map(lambda k: k / 8)   # ties and zero differences are common


@settings(max_examples=60)
@given(st.lists(st.tuples(grid_values, grid_values), min_size=2, max_size=12))
def test_the_summary_holds_each_arms_t_interval_and_the_paired_difference_arm_minus_cp_grpo(pairs):
    cp = {str(100 + s): {"100": record(a)} for s, (a, _) in enumerate(pairs)}
    ind = {str(100 + s): {"100": record(pairs[s][1])} for s in reversed(range(len(pairs)))}   # seeds reversed
    out = design.summary({"literal": {"cp_grpo": cp, "independent": ind}}, [100], [0.2])["by_budget"]["literal"]
    entry = out["100"]
    for arm, values in (("cp_grpo", [a for a, _ in pairs]), ("independent", [b for _, b in pairs])):
        assert_interval(entry["arms"][arm]["exploitability_average"], values)
        assert_interval(entry["arms"][arm]["exploitability_last"], [2 * v for v in values])
    diffs = [b - a for a, b in pairs]
    d = entry["differences"]["independent - cp_grpo"]
    assert_interval(d, diffs)
    assert d["cp_grpo_lower"] == sum(1 for x in diffs if x > 0)           # a tie is not "cp_grpo lower"


def test_a_seed_without_a_partner_is_left_out_of_the_paired_difference():
    cp = {"1": {"100": record(0.5)}, "2": {"100": record(0.4)}, "3": {"100": record(0.3)}}
    ind = {"2": {"100": record(0.6)}, "3": {"100": record(0.35)}, "4": {"100": record(9.0)}}
    d = design.summary({"literal": {"cp_grpo": cp, "independent": ind}}, [100], [])["by_budget"]["literal"]["100"]
    assert_interval(d["differences"]["independent - cp_grpo"], [0.2, 0.05])
    assert d["differences"]["independent - cp_grpo"]["cp_grpo_lower"] == 2


def test_one_seed_gives_a_mean_without_an_interval():
    entry = design.summary({"literal": {"cp_grpo": {"1": {"100": record(0.5)}}}}, [100], [])["by_budget"]["literal"]
    assert entry["100"]["arms"]["cp_grpo"]["exploitability_average"] == {"mean": 0.5, "low": None, "high": None,
                                                                         "n": 1}


def test_a_budget_an_arm_did_not_reach_on_every_seed_shows_no_entry_for_it():
    cp = {"1": {"100": record(0.5), "1000": record(0.2)}, "2": {"100": record(0.4)}}
    out = design.summary({"literal": {"cp_grpo": cp}}, [100, 1000], [])["by_budget"]["literal"]
    assert "1000" not in out and out["100"]["arms"]["cp_grpo"]["exploitability_average"]["n"] == 2


# ----- calls to a threshold ------------------------------------------------------------------------------
def curve(points):
    return {str(b): {"exploitability_average": e} for b, e in points}


def test_the_crossing_is_interpolated_from_the_last_budget_above_the_threshold():
    # log(0.4/0.3) / log(0.4/0.1) = 0.2075 of the way from 100 to 1000 in log calls: 161.3 calls, not 620
    got = design.calls_to(curve([(100, 0.4), (1000, 0.1)]), 0.3)
    assert got == pytest.approx(100 * 10 ** (math.log(4 / 3) / math.log(4)), rel=1e-12)
    assert got == pytest.approx(crossing(100, 0.4, 1000, 0.1, 0.3), rel=1e-12)


def test_the_first_crossing_counts_even_when_the_curve_rises_again():
    c = curve([(100, 0.4), (200, 0.1), (400, 0.5), (800, 0.05)])
    assert design.calls_to(c, 0.2) == pytest.approx(crossing(100, 0.4, 200, 0.1, 0.2), rel=1e-12)


def test_a_budget_exactly_at_the_threshold_reaches_it():
    assert design.calls_to(curve([(100, 0.4), (1000, 0.2)]), 0.2) == pytest.approx(1000.0, rel=1e-12)
    assert design.calls_to(curve([(100, 0.2), (1000, 0.3)]), 0.2) == 100.0
    assert design.calls_to(curve([(100, 0.2)]), 0.2) == 100.0


def test_a_curve_that_stays_above_the_threshold_never_reaches_it():
    assert design.calls_to(curve([(100, 0.4), (1000, 0.21)]), 0.2) is None


budgets_st = st.lists(st.integers(min_value=1, max_value=10 ** 7), min_size=1, max_size=8, unique=True).map(sorted)
levels = st.floats(min_value=1e-3, max_value=2.0, allow_subnormal=False)


@given(budgets_st, st.data())
def test_calls_to_is_the_first_crossing_by_log_log_interpolation(budgets, data):
    es = [data.draw(levels) for _ in budgets]
    th = data.draw(st.one_of(levels, st.sampled_from(es)))          # often exactly a recorded value
    first = next((j for j, e in enumerate(es) if e <= th), None)
    got = design.calls_to(curve(zip(budgets, es)), th)
    if first is None:
        assert got is None
    elif first == 0:
        assert got == float(budgets[0])
    else:
        want = crossing(budgets[first - 1], es[first - 1], budgets[first], es[first], th)
        assert got == pytest.approx(want, rel=1e-9)
        assert budgets[first - 1] * (1 - 1e-12) <= got <= budgets[first] * (1 + 1e-12)


@given(budgets_st, st.data())
def test_a_curve_that_first_touches_the_threshold_at_a_budget_reaches_it_there(budgets, data):
    j = data.draw(st.integers(min_value=0, max_value=len(budgets) - 1))
    th = data.draw(levels)
    es = [th * (1 + data.draw(st.floats(min_value=1e-3, max_value=5.0))) for _ in budgets[:j]] + [th] + \
         [data.draw(levels) for _ in budgets[j + 1:]]
    assume(all(e > th for e in es[:j]))
    assert design.calls_to(curve(zip(budgets, es)), th) == pytest.approx(float(budgets[j]), rel=1e-12)


# ----- geometric means of the calls and their intervals --------------------------------------------------
def test_two_seeds_give_the_geometric_mean_and_exp_of_the_one_degree_of_freedom_interval_of_log_calls():
    seeds = {"1": curve([(1000, 0.2)]), "2": curve([(4000, 0.2)]), "3": curve([(1000, 0.5)])}
    row = design.summary({"converging": {"cp_grpo": seeds}}, [], [0.2])["thresholds"]["converging"]["cp_grpo"]["0.2"]
    assert (row["reached"], row["seeds"]) == (2, 3)
    assert row["geometric_mean"] == pytest.approx(2000.0, rel=1e-12)
    # log calls: mean log 2000, s = log(4) / sqrt(2), se = log(2): the interval is 2000 x 2 ** (-+ t_{0.975, 1})
    t1 = scipy.stats.t.ppf(0.975, 1)
    assert row["low"] == pytest.approx(2000.0 * 2.0 ** -t1, rel=1e-9)
    assert row["high"] == pytest.approx(2000.0 * 2.0 ** t1, rel=1e-9)


@settings(max_examples=40)
@given(st.lists(st.integers(min_value=10, max_value=10 ** 6), min_size=2, max_size=10))
def test_the_calls_interval_is_exp_of_the_t_interval_of_log_calls(calls):
    assume(len(set(calls)) > 1)
    seeds = {str(s): curve([(c, 0.1)]) for s, c in enumerate(calls)}
    row = design.summary({"literal": {"ppo": seeds}}, [], [0.1])["thresholds"]["literal"]["ppo"]["0.1"]
    mean, low, high = reference_interval([math.log(c) for c in calls])
    assert row["geometric_mean"] == pytest.approx(math.exp(mean), rel=1e-9)
    assert (row["low"], row["high"]) == (pytest.approx(math.exp(low), rel=1e-9),
                                         pytest.approx(math.exp(high), rel=1e-9))


def test_seeds_that_reach_the_threshold_at_the_same_calls_have_no_interval():
    seeds = {"1": curve([(500, 0.1)]), "2": curve([(500, 0.1)])}
    row = design.summary({"literal": {"ppo": seeds}}, [], [0.1])["thresholds"]["literal"]["ppo"]["0.1"]
    assert row["geometric_mean"] == pytest.approx(500.0, rel=1e-12) and row["low"] is None
    assert tables.calls_text(row) == "500 (2/2)"


def test_the_calls_text_shows_the_geometric_mean_its_interval_and_the_seeds_that_got_there():
    row = {"geometric_mean": 2000.0, "low": 1500.0, "high": 2700.0, "reached": 7, "seeds": 10}
    assert tables.calls_text(row) == "2,000 [1,500, 2,700] (7/10)"
    assert tables.calls_text({**row, "geometric_mean": None, "reached": 0}) == "never (0/10)"


@pytest.mark.parametrize("calls, text", [(107_913.4, "108,000"), (501_234.0, "501,000"), (61_440.0, "61,400"),
                                         (999.6, "1,000"), (1_120.0, "1,120"), (14_321.0, "14,300")])
def test_a_count_of_calls_has_three_significant_figures_and_separators(calls, text):
    assert tables.calls_number(calls) == text


# ----- orderings and resolution --------------------------------------------------------------------------
diff_means = st.sampled_from([-0.25, 0.0, 0.25])
diff_lows = st.sampled_from([None, -0.5, 0.0, 0.125])
OTHERS = ("independent", "grpo", "ppo")


@given(st.tuples(diff_means, diff_means, diff_means), st.tuples(diff_lows, diff_lows, diff_lows))
def test_cp_grpo_lowest_holds_on_strictly_positive_mean_differences_and_resolves_on_strictly_positive_lows(
        means, lows):
    entry = {"differences": {f"{a} - cp_grpo": {"mean": m, "low": lo, "high": 1.0, "n": 5}
                             for a, m, lo in zip(OTHERS, means, lows)}}
    rel = tables.order_relation(entry, "cp_grpo", "cp_grpo lowest")
    assert rel.holds == all(m > 0 for m in means)
    assert rel.resolved == all(lo is not None and lo > 0 for lo in lows)
    for arm, m, lo in zip(OTHERS, means, lows):
        one = tables.order_relation(entry, arm, "cp_grpo lowest")
        assert (one.holds, one.resolved) == (m > 0, lo is not None and lo > 0)


def test_a_zero_mean_difference_is_not_an_ordering():
    entry = {"differences": {"independent - cp_grpo": {"mean": 0.0, "low": -0.1, "high": 0.1, "n": 30}}}
    assert not tables.order_relation(entry, "independent", "x").holds


@given(st.lists(st.tuples(grid_values, grid_values), min_size=2, max_size=12), st.sampled_from(["low", "high"]))
def test_the_transfer_ordering_holds_on_the_sign_of_the_mean_paired_difference_and_resolves_on_its_interval(
        pairs, better):
    values = {"cp_grpo": {str(s): a for s, (a, _) in enumerate(pairs)},
              "ppo": {str(s): b for s, (_, b) in enumerate(pairs)}}
    mean, low, high = reference_interval([a - b for a, b in pairs])
    scale = 1e-9 * (1 + abs(mean))
    assume(min(abs(mean), abs(low), abs(high)) > scale or mean == 0)     # away from rounding at 0
    rel = transfer_readings.order_relation(values, "ppo", better)
    assert rel.holds == (mean > 0 if better == "high" else mean < 0)
    assert rel.resolved == (low > 0 if better == "high" else high < 0)


def test_the_transfer_ordering_does_not_hold_when_every_seed_ties():
    values = {"cp_grpo": {"1": 0.5, "2": 0.25}, "ppo": {"1": 0.5, "2": 0.25}}
    for better in ("low", "high"):
        rel = transfer_readings.order_relation(values, "ppo", better)
        assert not rel.holds and not rel.resolved


def test_the_screens_ordering_does_not_resolve_when_every_seed_ties():
    records = {"a": {"1": {"x": 0.5}, "2": {"x": 0.25}}, "b": {"1": {"x": 0.5}, "2": {"x": 0.25}}}
    assert not screen.resolved_order(records, "a", ["b"], "x", "low")
    assert not screen.resolved_order(records, "a", ["b"], "x", "high")


def _study_of_differences(lows_and_means):
    budget = 100
    bs = [budget * (i + 1) for i in range(len(lows_and_means))]
    return {"design": {"budget": budget, "budgets": bs},
            "summary": {"converging": {str(b): {"differences": {"independent - cp_grpo":
                                                                {"mean": m, "low": lo, "high": m + 1, "n": 5}}}
                                       for b, (lo, m) in zip(bs, lows_and_means)}}}


@given(st.lists(st.tuples(diff_lows, st.sampled_from([0.0, 0.25, 1.0])), min_size=1, max_size=4))
def test_a_budget_counts_as_resolved_only_when_its_interval_lies_strictly_above_zero(lows_and_means):
    study = _study_of_differences(lows_and_means)
    above = [i for i, (lo, _) in enumerate(lows_and_means) if lo is not None and lo > 0]
    text = solver_view.resolved_text(study, "converging", "independent - cp_grpo")
    if len(above) == len(lows_and_means):
        assert text == "above 0 at every budget"
    elif not above:
        assert text == "above 0 at no budget"
    else:
        assert text == (f"above 0 at {len(above)} of {len(lows_and_means)} budgets ("
                        + ", ".join(f"{i + 1}x" for i in above) + ")")


def test_budgets_whose_interval_lies_below_zero_are_named_too():
    study = _study_of_differences([(0.1, 0.5), (-2.0, -1.5), (-0.5, 0.0), (-3.0, -2.5)])   # high = mean + 1
    assert solver_view.resolved_text(study, "converging", "independent - cp_grpo") == \
        "above 0 at 1 of 4 budgets (1x); below 0 at 2 of 4 budgets (2x, 4x)"


def test_a_positive_mean_whose_interval_reaches_below_zero_is_not_resolved():
    study = _study_of_differences([(-0.01, 0.5), (0.0, 0.5)])
    assert solver_view.resolved_text(study, "converging", "independent - cp_grpo") == "above 0 at no budget"


# ----- what the chapters glue ----------------------------------------------------------------------------
def test_an_interval_cell_reads_mean_low_high_in_that_order():
    assert tables.interval_cell({"mean": 0.5, "low": 0.25, "high": 0.75, "n": 3}) == "0.500 [0.250, 0.750]"
    assert tables.interval_cell({"mean": 0.5, "low": None, "high": None, "n": 1}) == "0.500"


def _solver_study():
    """Literal and converging runs of three arms on four seeds, summarised by the study's own summary.

    Converging: CP-GRPO is at 0.2 at the paper's budget on every seed (100 calls to reach it); independent
    gets there only at the largest budget, at 2000 or 8000 calls (geometric mean 4000): 40 times the calls."""
    seeds = ("11", "12", "13", "14")
    lit = {"cp_grpo": [0.50, 0.55, 0.60, 0.52], "independent": [0.70, 0.55, 0.90, 0.61],
           "ppo": [0.80, 0.75, 0.95, 0.99]}
    runs = {"literal": {arm: {s: {"100": record(v), "2000": record(v), "8000": record(v)}
                              for s, v in zip(seeds, vals)} for arm, vals in lit.items()},
            "converging": {"cp_grpo": {s: {"100": record(0.2), "2000": record(0.1), "8000": record(0.05)}
                                       for s in seeds},
                           "independent": {s: {"100": record(0.5), "2000": record(0.2 if i % 2 else 0.3),
                                               "8000": record(0.2)} for i, s in enumerate(seeds)},
                           "ppo": {s: {"100": record(0.9), "2000": record(0.9), "8000": record(0.9)}
                                   for s in seeds}}}
    out = design.summary(runs, [100, 2000, 8000], [0.2])
    design_ = {"budget": 100, "budgets": [100, 2000, 8000], "seeds": list(seeds), "thresholds": [0.2]}
    return {"design": design_, "runs": runs, "summary": out["by_budget"], "thresholds": out["thresholds"]}, lit


def test_the_solver_chapter_glues_the_calls_ratio_as_independents_calls_over_cp_grpos():
    study, _ = _solver_study()
    g = solver_view.glue_values(study, None)
    # independent: 2000 on two seeds, 8000 on two: geometric mean 4000; cp_grpo: 100
    # its 95% t-interval on log calls over the four seeds: exp(ln 4000 +- 3.182 * 0.8006 / 2) = [1,118, 14,306]
    assert g["study_conv_ind_to_02"] == "4,000 (95% interval 1,120 to 14,300)" and g["study_conv_to_02"] == "100"
    assert g["study_conv_call_ratio"] == "40.0"


def test_the_solver_chapter_glues_independent_minus_cp_grpo_with_its_seeds_where_cp_grpo_is_lower():
    study, lit = _solver_study()
    g = solver_view.glue_values(study, None)
    diffs = [b - a for a, b in zip(lit["cp_grpo"], lit["independent"])]     # 0.2, 0, 0.3, 0.09: one tie
    mean, low, high = reference_interval(diffs)
    assert g["study_literal_diff"] == f"{mean:.3f} [{low:.3f}, {high:.3f}]"
    assert g["study_literal_lower"] == "3 of 4"
    ppo = [b - a for a, b in zip(lit["cp_grpo"], lit["ppo"])]
    mean, low, high = reference_interval(ppo)
    assert g["study_lit_ppo_diff"] == f"{mean:.3f} [{low:.3f}, {high:.3f}]"


def test_the_solver_chapter_glues_the_live_checks_count_and_largest_difference():
    study, _ = _solver_study()
    exact = {"records": 1234, "max_abs_difference": 0.0, "mode": "bit for bit"}
    assert solver_view.glue_values(study, exact)["study_check_difference"].startswith("0 (the check is bit for bit")
    g = solver_view.glue_values(study, {**exact, "max_abs_difference": 2.5e-7})
    assert g["study_check_records"] == "1,234" and g["study_check_difference"].startswith("2.5e-07 ")


def test_the_transfer_chapter_glues_the_difference_at_the_largest_budget_and_the_live_agreement():
    values = {"cp_grpo": [0.10, 0.12, 0.08], "independent": [0.15, 0.12, 0.20], "grpo": [0.3, 0.3, 0.3],
              "ppo": [0.2, 0.25, 0.22]}
    runs = {arm: {str(s): {"100": record(1.0), "1000": record(v)} for s, v in enumerate(vals)}
            for arm, vals in values.items()}
    out = design.summary({"converging": runs}, [100, 1000], transfer_study.thresholds())
    study = {"design": {"budget": 100, "budgets": [100, 1000], "recorded_budgets": [100, 1000],
                        "seeds": [0, 1, 2]},
             "runs": runs, "summary": out["by_budget"]["converging"], "thresholds": out["thresholds"]["converging"]}
    contrast = {arm: {"largest": 1.0} for arm in values}
    bitwise = {"records": 24, "max_abs_difference": 0.0, "mode": "bit for bit"}
    exact = transfer_view.glue_values(study, bitwise, ((1, 2), (1, 10)), contrast)
    mean, low, high = reference_interval([b - a for a, b in zip(values["cp_grpo"], values["independent"])])
    assert exact["study_ind_minus_cp_top"] == f"{mean:.4f} [{low:.4f}, {high:.4f}]"
    assert exact["study_cp_lower_top"] == "2 of 3"                       # seed 1 ties
    assert exact["study_live"].endswith("compared bit for bit: each of the 24 records both hold agrees exactly")
    off = transfer_view.glue_values(study, {**bitwise, "max_abs_difference": 3e-4}, ((1, 2), (1, 10)), contrast)
    assert off["study_live"].endswith("DIFFERS by up to 3.0e-04")


# ----- the live check: a rerun against the committed study -----------------------------------------------
@pytest.fixture(scope="module")
def real_runs():
    """A study holding runs as a study writes them: every field of a real record (Kuhn, two seeds, two
    budgets), under runs.<learner>.<arm>.<seed>.<budget>."""
    from oscc_core.learning import study as study_runs
    from oscc_core.learning.loop import Schedule

    task = study_runs.Task.make("kuhn", "literal", "cp_grpo", (5, 6), Schedule(decision_points=8), (40, 80))
    return {"runs": {"literal": {"cp_grpo": study_runs.run_task(task)["runs"]}}}


def _copy(runs):
    return copy.deepcopy(runs)


def test_a_rerun_equal_to_the_committed_study_agrees_on_every_record(real_runs):
    from oscc_core.reporting.learning_study import live_check

    got = live_check(real_runs, _copy(real_runs), bitwise=True)
    assert (got["records"], got["max_abs_difference"], got["agrees"]) == (4, 0.0, True)


RECORD_FIELDS = ("exploitability_average", "exploitability_last", "never_updated", "physical_calls", "transitions",
                 "decisions", "groups", "iterations")


def test_a_record_holds_the_fields_the_live_check_must_compare(real_runs):
    for seeds in real_runs["runs"]["literal"]["cp_grpo"].values():
        assert all(set(rec) == set(RECORD_FIELDS) for rec in seeds.values())


@settings(max_examples=25)
@given(st.data(), st.floats(min_value=-1e3, max_value=1e3, allow_nan=False).filter(lambda x: abs(x) > 1e-6),
       st.booleans())
def test_a_change_in_any_single_field_of_any_record_is_reported(real_runs, data, delta, in_committed):
    from oscc_core.reporting.learning_study import live_check

    seed = data.draw(st.sampled_from(sorted(real_runs["runs"]["literal"]["cp_grpo"])))
    budget = data.draw(st.sampled_from(["40", "80"]))
    for field in RECORD_FIELDS:                                   # every field, each changed alone
        committed, live = _copy(real_runs), _copy(real_runs)
        changed = committed if in_committed else live
        old = float(changed["runs"]["literal"]["cp_grpo"][seed][budget][field])
        changed["runs"]["literal"]["cp_grpo"][seed][budget][field] = old + delta
        got = live_check(committed, live)
        assert got["records"] == 4
        assert got["max_abs_difference"] == abs((old + delta) - old) > 0, field


def test_records_only_one_study_holds_are_not_compared(real_runs):
    from oscc_core.reporting.learning_study import live_check

    live = _copy(real_runs)
    live["runs"]["literal"]["cp_grpo"]["99"] = {"40": {k: -1.0 for k in live["runs"]["literal"]["cp_grpo"]["5"]["40"]}}
    del live["runs"]["literal"]["cp_grpo"]["5"]["80"]
    got = live_check(real_runs, live, bitwise=True)
    assert (got["records"], got["max_abs_difference"]) == (3, 0.0)
