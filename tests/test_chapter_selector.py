"""The selector chapter package (`oscc_core.chapters.selector`), piece by piece, against independent values:
closed forms, an OpenSpiel enumeration (tests/test_arm_moments_openspiel.py) and constructed score samples."""
from __future__ import annotations

import ast
import math
from collections import Counter, defaultdict
from pathlib import Path

import nbformat
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from oscc_core.chapters.selector import findings as sfindings
from oscc_core.chapters.selector import parameters, prose, regimes, tables
from oscc_core.chapters.selector.action_support import action_support_settings
from oscc_core.chapters.selector.calibration import calibrate, label, natural_bound, sufficient_groups
from oscc_core.chapters.selector.exact_root import exact_root
from oscc_core.chapters.selector.pools import Pool, estimated_noise, pool_size_for
from oscc_core.chapters.selector.root_policy import resolve_root_policy
from oscc_core.chapters.selector.rule_bounds import branch_return_sets, fold_heavy_stratum, rule_score_bound
from oscc_core.chapters.selector.scan import policy_scan, simplex_grid
from oscc_core.chapters.selector.sweep import below_delta, clopper_pearson_upper, sweep
from oscc_core.reporting import claims
from oscc_core.reporting.params import ParameterError
from oscc_core.reporting.rows import Relation, Row

ARMS = ("independent", "root_only", "continuation_only", "full")
NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "04_selector.ipynb"


@pytest.fixture(scope="module")
def binary():
    """The two-action root (player 0's first decision) under a uniform continuation."""
    return exact_root("", "uniform")


@pytest.fixture(scope="module")
def three():
    """The three-action root '2' (player 1 facing a raise) under a uniform continuation."""
    return exact_root("2", "uniform")


def _policy(root: str, probs, floor: float = 1e-6):
    return resolve_root_policy("root_policy", list(probs), root, "uniform", 10, floor=floor)


def _synthetic_pool(exact, returns: dict, info_of_group: np.ndarray) -> Pool:
    """A pool whose group g sits at information state exact.infos[info_of_group[g]], with the given returns."""
    own = np.array([exact.infos[k].own_card for k in info_of_group])
    public = np.array([exact.infos[k].public_card for k in info_of_group])
    n = len(info_of_group)
    return Pool(exact.root, "semantic", "calibration", returns, {a: np.ones(n, dtype=np.int64) for a in returns},
                own, public, np.ones(n, dtype=bool), {})


# --- root policy --------------------------------------------------------------------------------

def test_g1_norm2_is_two_p1_squared_p2_squared_at_a_two_action_root():
    # G = diag(p) - p p^T has first column (p1 p2, -p1 p2)
    assert _policy("", [0.3, 0.7]).g1_norm2() == pytest.approx(2 * (0.3 * 0.7) ** 2, rel=1e-12)


def test_cfr_root_policy_is_floored_at_the_given_floor():
    loose = resolve_root_policy("root_policy", "cfr_plus", "2", "uniform", 50, floor=1e-2)
    assert loose.floored > 0
    assert min(min(p) for p in loose.probs.values()) >= 1e-2 / (1 + 3 * 1e-2) - 1e-15
    assert all(abs(sum(p) - 1) < 1e-12 for p in loose.probs.values())


def test_a_list_valued_root_policy_is_labelled_in_tables_by_its_probabilities_alone():
    policy = _policy("2", [0.8, 0.1, 0.1])
    assert policy.label == "[Fold 0.8, Call 0.1, Raise 0.1]" and policy.short == "(0.8, 0.1, 0.1)"
    assert _policy("2", [1 / 4, 1 / 4, 1 / 2]).short == "(0.25, 0.25, 0.5)"
    assert resolve_root_policy("root_policy", "uniform", "2", "uniform", 10, floor=1e-6).short == "uniform"


# --- the tables the chapter shows (cells short enough for the text column) --------------------------

def test_the_regime_comparison_is_one_table_per_regime_whose_rows_leave_the_regime_out():
    rows = [Row.compare("negative (antithetic), full: covariance", "selector_stress.negative.full.covariance", -1.0),
            Row.compare("positive (semantic), independent: covariance",
                        "selector_stress.positive.independent.covariance", 0.5),
            Row.same_text("positive (semantic): OSCC-Select's coupling", "full", "full", "tab:selector-stress")]
    parts = regimes.by_regime(rows)
    assert list(parts) == ["positive (semantic)", "negative (antithetic)"]          # the maps' order
    assert [r.quantity for r in parts["positive (semantic)"]] == ["independent: covariance", "OSCC-Select's coupling"]
    assert [(r.quantity, r.claim_id, r.verdict) for r in parts["negative (antithetic)"]] == \
        [("full: covariance", "selector_stress.negative.full.covariance", rows[0].verdict)]


def test_restatements_are_grouped_by_the_place_in_the_paper_that_states_them():
    ids = ["abstract.rv_select.gradient_noise_trace", "selector_axes_text.calibration.regret_2048",
           "abstract.calibration.certification_rate_64"]
    groups = prose.by_source([Row.compare("q", cid, 1.0) for cid in ids])
    assert {caption: [r.claim_id for r in rows] for caption, rows in groups.items()} == {
        "Claims of the abstract": [ids[0], ids[2]],
        "Claims of the text, section “Action-support and calibration-size stress”": [ids[1]]}


def test_a_restatement_shows_its_tables_quantity_without_its_source():
    cid = "calibration.64.certification_rate"
    base = Row.compare("64 groups: certification rate (positive)", cid, 0.0)
    restated = {r.claim_id: r for r in prose.prose_rows({cid: base}, VALUES)}
    assert restated["abstract.calibration.certification_rate_64"].quantity == base.quantity


SWEEP_ROW = {"groups per stratum": 64, "blocks": 4, "radius r_n": 9.7, "certification rate": 0.0,
             "false-selection rate": 0.0, "family-wise false-selection rate": 0.0, "family-wise false selections": 0,
             "family-wise upper 95%": 0.0099, "median full gain LCB": -7.6, "median full gain LCB low": -8.1,
             "median full gain LCB high": -7.2, "noise regret": 1.86,
             "physical draws": 8004.3, "physical draws per stratum and arm": 667.0, "modal selection": "independent",
             "repetitions": 300, "map": "semantic", "regime": "positive"}


def test_the_sweep_shows_every_measured_column_once_over_two_tables_under_short_headers():
    certificate, false_selection = tables.sweep_tables([SWEEP_ROW])
    shown = [c for t in (certificate, false_selection) for c in t.columns]
    assert len(shown) == len(SWEEP_ROW) - 4                  # all but the index (2), the map and the repetitions
    assert max(len(name) for _, name in shown) <= 22
    assert certificate.index[0] == ("positive (semantic)", 64)
    assert false_selection.loc[("positive (semantic)", 64), ("false selection", "family-wise upper 95%")] == "0.0099"


REGIME_ROW = {"regime": "near-zero", "arm": "continuation_only", "map": "relabelled", "marginal difference": 0.041,
              "marginal difference 95% bound": 0.0778, "covariance": 0.7114, "exact covariance": 0.6544,
              "exact conditional covariance": 0.0, "contrast variance": 32.0712, "exact contrast variance": 32.1748,
              "noise trace": 4.0091, "exact noise trace": 4.0218, "exact gain": 0.0, "physical draws per group": 16.5675,
              "physical draws (calibration)": 50817, "gain LCB J": -2.18, "gain LCB Q": -2.1643, "gain LCB K": -2.6192}


def test_the_regimes_show_every_measured_column_once_over_two_tables_under_short_headers():
    coupling, noise = tables.regime_tables([REGIME_ROW])
    shown = [c for t in (coupling, noise) for c in t.columns]
    assert len(shown) == len(set(shown)) == len(REGIME_ROW) - 3      # all but the index (2) and the map
    assert max(len(name) for _, name in shown) <= 17
    assert coupling.index[0] == ("near-zero (relabelled)", "continuation-only")
    assert noise.loc[("near-zero (relabelled)", "continuation-only"), ("gain LCB", "K")] == "-2.6192"


def test_the_held_out_and_other_policy_tables_group_their_columns_under_short_headers():
    support = {"action support": "2 actions", "row": "full", "choice": {}, "selected arm": "full",
               "contrast variance (mean pairwise)": 17.2, "exact contrast variance": 17.3,
               "gradient-noise trace": 2.1, "exact noise trace": 2.2, "physical draws": 29802,
               "held-out draws per group": 9.7}
    other = {"root policy": "uniform", "stratum": "J", **{f"N({a})": 1.0 for a in ARMS},
             "OSCC-Select": "independent", "RV-Select": "full", "Oracle-Select": "full"}
    for table, record in ((tables.support_table([support]), support), (tables.others_table([other]), other)):
        assert len(table.columns) == len(record) - 2 - ("choice" in record)
        assert max(len(name) for _, name in table.columns) <= 18


# --- exact objectives ------------------------------------------------------------------------------

@pytest.mark.parametrize("arm", ARMS)
def test_exact_stratum_noise_at_a_two_action_root_is_g1_norm2_times_the_enumerated_contrast_variance(binary, arm):
    from test_arm_moments_openspiel import enumerated_moments, root_law

    p1, p2 = 0.3, 0.7
    policy = _policy("", [p1, p2])
    own_weight = defaultdict(float)
    for (own, _), w in root_law("")[2].items():
        own_weight[own] += w
    for z, cards in (("J", (0, 1)), ("Q", (2, 3)), ("K", (4, 5))):
        covs = {c: enumerated_moments("", arm, own_card=c)[1] for c in cards}
        contrast = {c: cov[0, 0] + cov[1, 1] - 2 * cov[0, 1] for c, cov in covs.items()}
        expected = 2 * (p1 * p2) ** 2 * sum(own_weight[c] * contrast[c] for c in cards) / sum(
            own_weight[c] for c in cards)
        assert binary.noise(arm, policy, z) == pytest.approx(expected, rel=1e-9)


def test_natural_bound_at_a_uniform_three_action_root_is_one_ninth_times_three_times_thirteen_squared(three):
    # G = I/3 - 11^T/9 has eigenvalues 1/3, 1/3, 0: ||G||_2^2 = 1/9; |R| <= 13 on each of 3 branches
    assert natural_bound(three, _policy("2", [1 / 3] * 3)) == pytest.approx(3 * 169 / 9, rel=1e-12)


# --- the score bound the rules allow (rule_bounds.py) ------------------------------------------------

def _openspiel_return_sets(history: str) -> dict:
    """OpenSpiel enumeration: own card -> per legal root action, the acting player's terminal returns over
    every opponent card, public card and continuation (any play the rules allow)."""
    pyspiel = pytest.importorskip("pyspiel")
    game = pyspiel.load_game("leduc_poker")

    def returns(state, player):
        if state.is_terminal():
            return {state.returns()[player] + 0.0}
        kids = [c for c, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
        return set().union(*(returns(state.child(k), player) for k in kids))

    out = defaultdict(lambda: None)
    start = game.new_initial_state()
    for c0, _ in start.chance_outcomes():
        for c1, _ in start.child(c0).chance_outcomes():
            state = start.child(c0).child(c1)
            for a in history:
                state = state.child(int(a))
            player = state.current_player()
            own = (c0, c1)[player]
            sets = [returns(state.child(a), player) for a in state.legal_actions()]
            prev = out[own] or [set() for _ in sets]
            out[own] = [x | y for x, y in zip(prev, sets)]
    return {own: tuple(tuple(sorted(x)) for x in v) for own, v in out.items()}


@pytest.mark.parametrize("root", ["", "2"])
def test_branch_return_sets_match_an_openspiel_enumeration(root):
    pi = _policy(root, [0.8, 0.1, 0.1] if root == "2" else [0.5, 0.5])
    ours = branch_return_sets(root, pi)
    theirs = _openspiel_return_sets(root)
    assert len(ours) == len(theirs) == 6
    for s, sets in ours.items():
        own = int(s.split("[Private: ")[1].split("]")[0])
        assert sets == theirs[own]


def test_rule_score_bound_at_the_three_action_root_is_fold_minus_one_call_eleven_raise_thirteen():
    # by hand: pi = (0.8, 0.1, 0.1), R = (-1, 11, 13), pi.R = 1.6, G R = pi * (R - pi.R) = (-2.08, 0.94, 1.14)
    pi = _policy("2", [0.8, 0.1, 0.1])
    got = rule_score_bound("2", pi)
    assert got["bound"] == pytest.approx(2.08 ** 2 + 0.94 ** 2 + 1.14 ** 2, rel=1e-12)
    assert got["returns"] == {"Fold": -1.0, "Call": 11.0, "Raise": 13.0}
    assert got["ranges"] == {"Fold": (-1.0, -1.0), "Call": (-11.0, 11.0), "Raise": (-13.0, 13.0)}
    # brute force over the box the OpenSpiel sets span, and below the natural bound
    sets = next(iter(_openspiel_return_sets("2").values()))
    q = np.array([0.8, 0.1, 0.1])
    jac = np.diag(q) - np.outer(q, q)
    brute = max(float(np.sum((jac @ np.array([f, c, r])) ** 2)) for f in sets[0] for c in sets[1] for r in sets[2])
    assert got["bound"] == pytest.approx(brute, rel=1e-12)
    assert got["bound"] < natural_bound(exact_root("2", "uniform"), pi)


def test_rule_score_bound_equals_the_natural_bound_at_the_uniform_two_action_root(binary):
    # both returns reach -13 and +13, and G = (1/4)[[1, -1], [-1, 1]]: ||G R||^2 = (R1 - R2)^2 / 8 = 26^2 / 8
    pi = _policy("", [0.5, 0.5])
    assert rule_score_bound("", pi)["bound"] == pytest.approx(26 ** 2 / 8, rel=1e-12)
    assert rule_score_bound("", pi)["bound"] == pytest.approx(natural_bound(binary, pi), rel=1e-12)


def test_fold_heavy_stratum_picks_the_folding_stratum_and_the_exact_noise_minimiser(three):
    probs = {s: np.array([0.85, 0.1, 0.05]) if "[Private: 0]" in s or "[Private: 1]" in s
             else np.array([0.1, 0.5, 0.4]) for s in _policy("2", [1 / 3] * 3).probs}
    pi = type(_policy("2", [1 / 3] * 3))("test", ["Fold", "Call", "Raise"], probs)
    got = fold_heavy_stratum(three, pi)
    assert got["stratum"] == "J" and got["fold"] == pytest.approx(0.85)
    noise = {a: three.noise(a, pi, "J") for a in ARMS}
    assert got["noise"] == pytest.approx(noise) and got["oracle"] == min(noise, key=noise.get)
    assert got["cov"]["independent"] == pytest.approx(0.0, abs=1e-12)
    # N(arm) - N(independent) = 2 <g_C, g_R> E_I Cov(R_C, R_R | I) (Fold's return is constant)
    q = np.array([0.85, 0.1, 0.05])
    jac = np.diag(q) - np.outer(q, q)
    for a in ARMS:
        assert noise[a] - noise["independent"] == pytest.approx(2 * (jac[:, 1] @ jac[:, 2]) * got["cov"][a], abs=1e-12)


# --- the root-policy scan ---------------------------------------------------------------------------

def test_simplex_grid_holds_the_interior_points_of_the_step_lattice():
    grid = simplex_grid(0.1)
    assert len(grid) == 36                       # (k - 1)(k - 2) / 2 for k = 10
    assert all(abs(sum(p) - 1) < 1e-12 and min(p) >= 0.1 - 1e-12 for p in grid)


def test_policy_scan_argmin_follows_the_sign_of_the_call_raise_gradient_product(three):
    # Fold's return is constant, so N(arm) = const + 2 <g_C, g_R> E_I Cov(R_C, R_R | I); the conditional covariance
    # is 0 for independent and largest for full, so a positive product picks independent and a negative one full.
    scan = policy_scan(three, 0.1)
    for _, row in scan.iterrows():
        f, c, r = row["pi(Fold)"], row["pi(Call)"], row["pi(Raise)"]
        product = c * r * (f * f + c * c + r * r - c - r)
        assert row["<g_Call, g_Raise>"] == pytest.approx(product, abs=1e-14)
        if abs(product) > 1e-12:
            assert row["noise argmin"] == ("independent" if product > 0 else "full")
    assert set(scan["contrast-variance argmin"]) == {"full"}
    row = scan[(scan["pi(Fold)"].round(9) == 0.8) & (scan["pi(Call)"].round(9) == 0.1)].iloc[0]
    assert row["noise argmin"] == "independent" and bool(row["differ"])


# --- estimated noise, scores and the certificate ----------------------------------------------------

@pytest.mark.parametrize("weights", ["empirical", "root_law"])
def test_estimated_noise_weights_information_states_as_asked(binary, weights):
    rng = np.random.default_rng(0)
    counts = {0: 30, 3: 90}                       # two information states, unequal sample sizes
    info = np.concatenate([np.full(n, k) for k, n in counts.items()])
    rets = rng.normal(size=(len(info), 2)) * np.where(info == 0, 1.0, 3.0)[:, None]
    pool = _synthetic_pool(binary, {a: rets for a in ARMS}, info)
    policy = _policy("", [0.5, 0.5])
    per_info = {k: 0.125 * np.var(rets[info == k, 0] - rets[info == k, 1], ddof=1) for k in counts}  # ||g1||^2 = 1/8
    omega = counts if weights == "empirical" else {k: binary.infos[k].weight for k in counts}
    expected = sum(omega[k] * per_info[k] for k in counts) / sum(omega.values())
    assert estimated_noise(pool, binary, policy, "full", weights=weights) == pytest.approx(expected, rel=1e-12)


def test_estimated_noise_refuses_an_unknown_weighting(binary):
    pool = _synthetic_pool(binary, {a: np.zeros((4, 2)) for a in ARMS}, np.array([0, 0, 1, 1]))
    with pytest.raises(ValueError, match="weights"):
        estimated_noise(pool, binary, _policy("", [0.5, 0.5]), "full", weights="uniform")


def test_certificate_of_a_stratum_is_the_clipped_block_mean_minus_the_hoeffding_radius(binary):
    rng = np.random.default_rng(1)
    n, block, bound, delta = 64, 8, 1.5, 0.05
    info = np.repeat(np.arange(6), n)                                   # n groups in each of J, J, Q, Q, K, K
    rets = {a: rng.normal(scale=2.0 if a == "independent" else 1.0, size=(len(info), 2)) for a in ARMS}
    pool = _synthetic_pool(binary, rets, info)
    cal = calibrate(pool, binary, _policy("", [0.5, 0.5]), n, block, bound, delta, noise_weights="empirical")
    radius = bound * math.sqrt(2 * math.log(2 * 9 / delta) / (n // block))       # M = 3 candidates x 3 strata
    for z, first in (("J", 0), ("Q", 2 * n), ("K", 4 * n)):
        groups = np.arange(first, first + n)                            # the stratum's first n groups, in id order
        d = {a: rets[a][groups, 0] - rets[a][groups, 1] for a in ARMS}
        for c in cal.certificates[z]:
            scores = (d["independent"] ** 2 - d[c.arm] ** 2) / 8        # ||G R||^2 = (R_1 - R_2)^2 / 8 at p = (1/2, 1/2)
            blocks = scores.reshape(-1, block).mean(1)
            assert c.lower_bound == pytest.approx(np.clip(blocks, -bound, bound).mean() - radius, rel=1e-12)
            assert c.certified == (c.lower_bound > 0)


def test_sweep_certifies_a_constant_large_gain_at_every_size(binary):
    n_per_info, block, bound, delta = 1024, 8, 1.0, 0.05
    info = np.repeat(np.arange(6), n_per_info)
    ones = np.tile([[4.0, 0.0]], (len(info), 1))                        # independent: R_1 - R_2 = 4, score 2 > B = 1
    rets = {"independent": ones, "root_only": ones, "continuation_only": ones, "full": np.zeros_like(ones)}
    pool = _synthetic_pool(binary, rets, info)
    rows = sweep(pool, binary, _policy("", [0.5, 0.5]), [256, 512], 4, block, bound, delta)   # r_n < B = 1
    for row in rows:
        assert row["radius r_n"] == pytest.approx(bound * math.sqrt(2 * math.log(18 / delta) / (row["groups per stratum"]
                                                                                             // block)))
        assert row["certification rate"] == 1.0 and row["modal selection"] == "full"


# --- sizes and bounds ---------------------------------------------------------------------------------

def test_sufficient_groups_is_block_times_eight_b_squared_log_two_m_over_delta_over_d_squared():
    assert sufficient_groups(2.0, 9, 0.05, 0.5, 16) == pytest.approx(16 * 8 * 4 * math.log(360) / 0.25, rel=1e-14)
    assert sufficient_groups(2.0, 9, 0.05, 0.0, 16) == math.inf


def test_clopper_pearson_upper_with_no_event_is_one_minus_alpha_to_the_one_over_n():
    assert clopper_pearson_upper(0, 300) == pytest.approx(1 - 0.05 ** (1 / 300), abs=1e-12)
    assert clopper_pearson_upper(5, 5) == 1.0


def test_pool_size_covers_the_rarest_stratum_of_the_root_law():
    from test_arm_moments_openspiel import root_law

    strata = defaultdict(float)
    for (own, _), w in root_law("2")[2].items():
        strata[own // 2] += w
    n = pool_size_for("2", "uniform", 100, 3)
    rarest = min(strata.values())
    # the rarest stratum's count is Binomial(n, rarest): four standard deviations below its mean
    # must still hold 3 disjoint ranges of 100 groups
    assert n * rarest - 4 * math.sqrt(n * rarest * (1 - rarest)) >= 100 * 3


def test_label_names_one_arm_or_each_stratum():
    assert label({"J": "full", "Q": "full", "K": "full"}) == "full"
    assert label({"J": "independent", "Q": "full"}) == "J: independent, Q: full"


# --- parameters -------------------------------------------------------------------------------------------

def _defaults() -> dict:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    values = {node.target.id: ast.literal_eval(node.value) for node in ast.parse(cell.source).body}
    return {**values, "continuation": "uniform", "output_dir": "."}


def test_parameters_record_holds_every_notebook_parameter_but_the_device_and_output_dir():
    p = parameters.validate(_defaults())
    assert set(p.record) == set(parameters.NAMES) - {"device", "output_dir"} | {"game"}
    assert p.record["root_policy_floor"] == 1e-6 and p.record["noise_weights"] == "empirical"
    assert p.pi3.actions == ["Fold", "Call", "Raise"] and p.pi2.actions == ["Call", "Raise"]


@pytest.mark.parametrize("name, value", [("noise_weights", "uniform"), ("root_policy_floor", 0.0),
                                         ("root_policy_floor", 0.5)])
def test_parameters_refuse_a_bad_value_naming_it(name, value):
    with pytest.raises(ParameterError, match=name):
        parameters.validate({**_defaults(), name: value})


# --- settings, relations and findings (the verdict rule of the book) ------------------------------------------

SELECTOR_ROWS = ("independent", "full", "rv_select", "oscc_select", "oracle_select")


def test_calibration_groups_at_the_papers_size_are_adopted_settings_of_every_selector_row():
    rows = action_support_settings(1024)            # the paper's tab:multi-action-selector: 1,024 per stratum
    assert [r.claim_id for r in rows] == [f"multi_action.{n}_actions.{k}.groups_per_stratum"
                                          for n in (2, 3) for k in SELECTOR_ROWS]
    assert {r["status"] for r in rows} == {"adopted"} and not any("verdict" in r.as_dict() for r in rows)


def test_calibration_groups_other_than_the_papers_differ_and_say_why():
    rows = action_support_settings(512)
    assert {r["status"] for r in rows} == {"differs"}
    assert all("512" in r["reason"] and "1,024" in r["reason"] for r in rows)


#: our values of the paper's setup entries and of the size where the median bound turns positive (prose.setup_values)
VALUES = {"action_count": (3, None), "groups_min": (64, None), "groups_max": (1024, None),
          "groups_per_stratum": (1024, None), "group_counts": (6, None),
          "lcb_positive_at": (128, Relation("the median full-arm bound turns positive", True))}


def test_the_papers_setup_entries_in_prose_are_settings_and_its_results_keep_a_verdict():
    rows = {r.claim_id: r for r in prose.prose_rows({}, VALUES)}
    kinds = {cid: claims.claim_entry(cid)["kind"] for cid in rows}
    assert {cid for cid, r in rows.items() if r.is_setting} == {cid for cid, k in kinds.items() if k == "setup"}
    assert rows["abstract.calibration.groups_min"]["status"] == "adopted"            # the paper's 64
    assert rows["abstract.calibration.groups_max"]["status"] == "differs"            # 1,024 is not the paper's 2,048
    assert rows["fig_calibration_size.lcb_positive_at"]["verdict"] == "reproduced"   # a result: 128 is the paper's


@given(rate=st.floats(0.0, 1.0), extra=st.floats(0.0, 1.0), delta=st.floats(0.001, 0.5))
def test_a_false_selection_rate_is_resolved_below_delta_only_when_its_upper_bound_is(rate, extra, delta):
    upper = min(1.0, rate + extra)
    rel = below_delta(rate, upper, delta)
    assert rel.holds == (rate <= delta) and rel.resolved == (upper <= delta)


def test_a_restatement_keeps_the_unresolved_relation_of_its_table_row():
    cid = "calibration.2048.false_selection_rate"            # restated as selector_axes_text...false_selection_rate_2048
    paper = claims.claim(cid)
    base = Row.compare("false selection", cid, paper, 0.0, 10 * paper,
                       relation=Relation("false-selection rate <= delta", True, resolved=False))
    assert base.verdict == "inconclusive"                    # the size agrees, the interval reaches past delta
    restated = prose.prose_rows({cid: base}, VALUES)
    again = next(r for r in restated if r.claim_id == "selector_axes_text.calibration.false_selection_rate_2048")
    assert again.verdict == "inconclusive" and again.relation_resolved is False


def test_result_counts_leave_out_settings_detail_rows_and_rows_without_a_claim_of_the_paper():
    claim_row = Row.compare("certification", "calibration.64.certification_rate", 0.0)       # not reproduced
    detail = claim_row.as_sensitivity()
    setting = Row.setting("groups", "multi_action.2_actions.full.groups_per_stratum", 1024)
    named = Row.same_text("selected arm", "full", "full", "tab:multi-action-selector (selected arm column)")
    counts = sfindings.result_counts([claim_row, detail, setting, named])
    # the section's other measured values have no row here: not compared, as the ledger counts them
    assert {v: n for v, n in counts.items() if v != "not compared" and n} == {"not reproduced": 1}
