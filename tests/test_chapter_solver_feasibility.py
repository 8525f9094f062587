"""The rule bounds of chapter 05 (solver) that decide which paper numbers no profile can produce, under each
reading of the number.

Values of random profiles come from OpenSpiel at test time (expected game
score, best-response improvements of `exploitability.nash_conv`); the
uniform policy's numbers from pyspiel, tree walks over pyspiel states or closed
forms (Kuhn uniform NashConv 11/12; return 0 and success 1/2 by the symmetry of
the two seats); the expected flags from the bounds' closed forms written here
with the literature's Leduc value (-0.0856, four decimals).  Rules are
property-tested with hypothesis.
"""
from __future__ import annotations

import numpy as np
import pytest
from openspiel_reference import deal_values
from hypothesis import given
from hypothesis import strategies as st

pyspiel = pytest.importorskip("pyspiel")
from open_spiel.python import policy as os_policy
from open_spiel.python.algorithms import expected_game_score
from open_spiel.python.algorithms import exploitability as os_exploitability

from oscc_core.chapters.solver.feasibility import (
    READINGS,
    best_response_ranges,
    feasibility_rows,
    feasibility_table,
    outside,
    set_means,
    uniform_reference,
    value_range,
)
from oscc_core.exact.evaluation import EquilibriumValue, equilibrium_value
from oscc_core.reporting import claims

ROUNDING = 1e-9                      # chips
NUM_PROFILES = 20
KUHN_UNIFORM_NASH_CONV = 11 / 12     # chips (literature; also OpenSpiel's)
CFR_PLUS_WITNESS_ITERATIONS = 150    # enough for OpenSpiel's CFR+ to come within the reference row's NashConv


def random_profile(game, rng: np.random.Generator, deterministic_share: float = 0.3):
    """An OpenSpiel TabularPolicy with random rows over legal actions; some rows play one action only."""
    tabular = os_policy.TabularPolicy(game)
    for index, legal in enumerate(tabular.legal_actions_mask.astype(bool)):
        weights = rng.exponential(size=legal.size) * legal
        if rng.random() < deterministic_share:
            weights = np.zeros(legal.size)
            weights[rng.choice(np.flatnonzero(legal))] = 1.0
        tabular.action_probability_array[index] = weights / weights.sum()
    return tabular


def openspiel_numbers(game, tabular) -> tuple[float, float, float, float]:
    """(v_0, BR_0, BR_1, NashConv) of a profile by OpenSpiel (chips)."""
    v0 = float(expected_game_score.policy_value(game.new_initial_state(), [tabular, tabular])[0])
    result = os_exploitability.nash_conv(game, tabular, return_only_nash_conv=False)
    improvement = result.player_improvements
    return v0, v0 + float(improvement[0]), -v0 + float(improvement[1]), float(result.nash_conv)


@pytest.mark.parametrize("name", ["kuhn", "leduc"])
def test_value_and_best_response_ranges_hold_for_random_profiles(name):
    game = pyspiel.load_game(f"{name}_poker")
    star = equilibrium_value(name)
    rng = np.random.default_rng(2024)
    for _ in range(NUM_PROFILES):
        v0, br0, br1, nash_conv = openspiel_numbers(game, random_profile(game, rng))
        assert not outside(v0, [value_range(star, nash_conv)], ROUNDING)
        for value in (None, v0):
            (lo0, hi0), (lo1, hi1) = best_response_ranges(star, nash_conv, value)
            assert lo0 - ROUNDING <= br0 <= hi0 + ROUNDING
            assert lo1 - ROUNDING <= br1 <= hi1 + ROUNDING


def test_a_kuhn_value_far_above_the_band_is_flagged():
    assert outside(0.5, [value_range(equilibrium_value("kuhn"), 0.01)])


def test_a_kuhn_value_inside_the_band_is_not_flagged():
    assert not outside(-1 / 18 + 0.009, [value_range(equilibrium_value("kuhn"), 0.01)])


def test_a_number_inside_one_reading_is_not_flagged_and_outside_both_is():
    readings = [(0.0, 1.0), (2.0, 3.0)]
    assert not outside(2.5, readings)
    assert outside(1.5, readings)
    assert not outside([0.9, 1.5], readings)       # an interval is flagged only when no point of it is allowed


def test_printed_rounding_is_half_a_unit_in_the_last_decimal():
    assert claims.printed_rounding(0.2368) == pytest.approx(5e-5)
    assert claims.printed_rounding(0.332) == pytest.approx(5e-4)
    assert claims.printed_rounding(26) == pytest.approx(0.5)


def test_uniform_leduc_exploitability_and_value_are_openspiels():
    game = pyspiel.load_game("leduc_poker")
    uniform = os_policy.UniformRandomPolicy(game)
    ours = uniform_reference("leduc")
    assert ours["exploitability"] == pytest.approx(pyspiel.exploitability(game, os_policy.python_policy_to_pyspiel_policy(
        os_policy.tabular_policy_from_callable(game, uniform))), abs=ROUNDING)
    assert ours["value"] == pytest.approx(
        expected_game_score.policy_value(game.new_initial_state(), [uniform, uniform])[0], abs=ROUNDING)


def test_uniform_kuhn_exploitability_is_half_the_literature_nash_conv():
    assert uniform_reference("kuhn")["exploitability"] == pytest.approx(KUHN_UNIFORM_NASH_CONV / 2, abs=ROUNDING)


def test_uniform_return_is_zero_and_success_one_half_against_a_uniform_opponent():
    ours = uniform_reference("leduc")
    assert ours["return_mean"] == pytest.approx(0.0, abs=ROUNDING)
    assert ours["success_mean"] == pytest.approx(0.5, abs=ROUNDING)


def test_a_cfr_plus_profile_within_the_reference_rows_nash_conv_lands_inside_its_allowed_value_range():
    game = pyspiel.load_game("leduc_poker")
    solver = pyspiel.CFRPlusSolver(game)
    for _ in range(CFR_PLUS_WITNESS_ITERATIONS):
        solver.evaluate_and_update_policy()
    witness = os_policy.pyspiel_policy_to_python_policy(game, solver.tabular_average_policy())
    v0, _, _, nash_conv = openspiel_numbers(game, witness)
    entry = {c["claim_id"]: c for c in feasibility_table("leduc")}["measured_solver.exact_cfr_plus.player0_value"]
    assert nash_conv <= float(claims.claim("measured_solver.exact_cfr_plus.nashconv"))
    (low, high), = entry["allowed"]
    assert low <= v0 <= high


# ----- the rules as properties --------------------------------------------------------------------------------
LITERATURE_V_STAR = (-0.08565, -0.08555)       # Leduc game value -0.0856 printed to four decimals
chips = st.floats(min_value=-5.0, max_value=5.0, allow_nan=False)
nash_convs = st.floats(min_value=0.0, max_value=5.0, allow_nan=False)
margins = st.floats(min_value=1e-6, max_value=3.0, allow_nan=False)


def exact_star(v: float) -> EquilibriumValue:
    return EquilibriumValue(v, v, v, 0.0, "given")


@given(v_star=chips, nash_conv=nash_convs, margin=margins, above=st.booleans())
def test_a_value_outside_v_star_plus_minus_nash_conv_is_always_flagged(v_star, nash_conv, margin, above):
    value = v_star + nash_conv + margin if above else v_star - nash_conv - margin
    assert outside(value, [value_range(exact_star(v_star), nash_conv)], slack=margin / 2)


@given(v_star=chips, nash_conv=nash_convs, share=st.floats(min_value=-1.0, max_value=1.0))
def test_a_value_inside_v_star_plus_minus_nash_conv_is_never_flagged(v_star, nash_conv, share):
    value = v_star + share * nash_conv
    assert not outside(value, [value_range(exact_star(v_star), nash_conv)])


@given(v_star=chips, nash_conv=nash_convs, share=st.floats(min_value=-1.0, max_value=1.0), margin=margins)
def test_best_response_ranges_are_the_closed_form_and_a_number_past_them_is_flagged(v_star, nash_conv, share,
                                                                                    margin):
    # BR_0 >= max(v_0, v*), BR_1 >= max(-v_0, -v*) and BR_0 + BR_1 = NashConv
    value = v_star + share * nash_conv
    (lo0, hi0), (lo1, hi1) = best_response_ranges(exact_star(v_star), nash_conv, value)
    want0 = (max(value, v_star), nash_conv - max(-value, -v_star))
    want1 = (max(-value, -v_star), nash_conv - max(value, v_star))
    assert (lo0, hi0) == pytest.approx(want0, abs=1e-12) and (lo1, hi1) == pytest.approx(want1, abs=1e-12)
    for low, high in ((lo0, hi0), (lo1, hi1)):
        assert outside(high + margin, [(low, high)], slack=margin / 2)
        assert outside(low - margin, [(low, high)], slack=margin / 2)
        assert not outside((low + high) / 2, [(low, high)])


def literature_flags() -> set[tuple[str, str]]:
    """(claim id, reading) of every whole-game reading of the paper's solver and appendix tables that its own
    numbers break, by the closed forms with v* in the literature's bracket and each number's printed rounding."""
    lo, hi = LITERATURE_V_STAR
    half = claims.printed_rounding
    out = set()

    def past(x, low, high, slack):
        a, b = (x, x) if np.isscalar(x) else x
        return b < low - slack or a > high + slack

    for row in ("cp_grpo_paired", "independent", "standard_grpo", "standard_ppo", "exact_cfr_plus"):
        base = f"measured_solver.{row}"
        v, br, nc, ex = (claims.claim(f"{base}.{k}") for k in
                         ("player0_value", "best_response_value", "nashconv", "exploitability"))
        if abs(ex - nc / 2) > half(ex) + half(nc) / 2:
            out.add((f"{base}.exploitability", "exploitability"))
        value_broken = past(v, lo - nc, hi + nc, half(v) + half(nc))
        if value_broken:
            out.add((f"{base}.player0_value", "whole_p0"))
        known = None if value_broken else v
        br0 = (lo if known is None else max(known, lo), nc + (hi if known is None else min(known, hi)))
        br1 = (-hi if known is None else max(-known, -hi), nc - (lo if known is None else max(known, lo)))
        slack = half(br) + half(nc) + (0 if value_broken else half(v))
        for reading, (a, b) in (("br0", br0), ("br1", br1)):
            if past(br, a, b, slack):
                out.add((f"{base}.best_response_value", reading))
        interval = claims.claim(f"{base}.seed_interval")
        if row in ("cp_grpo_paired", "exact_cfr_plus"):   # a printed NashConv interval, or one deterministic policy
            nc_hi = claims.claim("app_solver.nashconv.interval")[1] if row == "cp_grpo_paired" else nc
            if past(interval, lo - nc_hi, hi + nc_hi, max(map(half, interval)) + half(nc_hi)):
                out.add((f"{base}.seed_interval", "whole_p0"))
    nc_lo, nc_hi = claims.claim("app_solver.nashconv.interval")
    value = claims.claim("app_solver.player_value.interval")
    slack = max(map(half, value)) + half(nc_hi)
    if past(value, lo - nc_hi, hi + nc_hi, slack):
        out.add(("app_solver.player_value.interval", "whole_p0"))
    if past(value, -hi - nc_hi, -lo + nc_hi, slack):
        out.add(("app_solver.player_value.interval", "whole_p1"))
    brs = claims.claim("app_solver.best_response_value.interval")
    slack = max(map(half, brs)) + half(nc_hi)
    if past(brs, lo, hi + nc_hi, slack):
        out.add(("app_solver.best_response_value.interval", "br0"))
    if past(brs, -hi, nc_hi - lo, slack):
        out.add(("app_solver.best_response_value.interval", "br1"))
    ex = claims.claim("app_solver.exploitability.interval")
    if max(abs(ex[0] - nc_lo / 2), abs(ex[1] - nc_hi / 2)) > max(map(half, ex)) + max(half(nc_lo), half(nc_hi)) / 2:
        out.add(("app_solver.exploitability.interval", "exploitability"))
    return out


def test_the_flagged_solver_numbers_are_those_the_closed_form_bounds_exclude():
    flagged = {(c["claim_id"], c["reading"]) for c in feasibility_table("leduc") if c["impossible"]
               and c["claim_id"].startswith(("measured_solver.", "app_solver."))}
    assert flagged == literature_flags()


def test_a_deterministic_policys_seed_interval_is_checked_like_a_point():
    entry = {(c["claim_id"], c["reading"]): c for c in feasibility_table("leduc")}
    cfr = entry[("measured_solver.exact_cfr_plus.seed_interval", "whole_p0")]
    (low, high), = cfr["allowed"]
    interval = claims.claim("measured_solver.exact_cfr_plus.seed_interval")
    assert interval[0] > high or interval[1] < low           # the whole printed interval lies outside
    assert cfr["impossible"]
    assert not entry[("measured_solver.independent.seed_interval", "whole_p0")]["impossible"]   # a seed mean


def test_every_impossible_row_names_its_reading_and_bound():
    for row in feasibility_rows("leduc"):
        assert row.verdict == claims.IMPOSSIBLE and row.reading in READINGS.values()
        assert "breaks a bound" in row.reason


# ----- the uniform policy under every reading ---------------------------------------------------------------
def uniform_walk() -> dict:
    """Per ordered private-card deal (P0 card, P1 card): player 0's value under uniform self-play, by a walk over
    pyspiel states."""
    return deal_values("leduc_poker", lambda player, info, legal: {a: 1.0 / len(legal) for a in legal})


def test_uniform_value_per_deal_and_per_pair_are_a_pyspiel_walks():
    walk = uniform_walk()
    ours = uniform_reference("leduc")
    assert sorted(ours["roots"]["value"]) == pytest.approx(sorted(walk.values()), abs=ROUNDING)
    pairs = {}
    for (c0, c1), v in walk.items():
        pairs.setdefault((c0 // 2, c1 // 2), []).append(v)
    want = [np.mean(pairs[(a, b)]) for a in range(3) for b in range(3)]
    assert ours["pairs"]["value"] == pytest.approx(want, abs=ROUNDING)


@given(st.lists(st.floats(min_value=-3, max_value=3, allow_nan=False), min_size=1, max_size=6), st.data())
def test_set_means_hold_every_single_value_and_the_whole_mean_and_stay_between_the_extremes(values, data):
    weights = data.draw(st.lists(st.floats(min_value=0.05, max_value=1.0), min_size=len(values),
                                 max_size=len(values)))
    got = set_means(values, weights)
    whole = float(np.dot(weights, values) / np.sum(weights))
    for want in [*values, whole]:
        assert np.min(np.abs(got - want)) <= 1e-9
    assert got.min() >= min(values) - 1e-9 and got.max() <= max(values) + 1e-9
    assert len(got) <= 2 ** len(values) - 1


def test_the_uniform_policys_exploitability_is_impossible_under_every_reading_and_its_value_is_not():
    table = [c for c in feasibility_table("leduc") if c["claim_id"].startswith("grpo_ppo.uniform_policy.")]
    expl = {c["reading"]: c["impossible"] for c in table if c["claim_id"].endswith(".exploitability")}
    value = {c["reading"]: c["impossible"] for c in table if c["claim_id"].endswith(".value")}
    assert set(expl) == {"exploitability", "nash_conv", "gain0", "gain1", "expl_pairs", "expl_held_out"}
    assert all(expl.values())
    # a mean over sampled roots reaches any number between the smallest and the largest per-deal value
    assert value.pop("held_out") is False and all(value.values())
