"""The gradient-noise chapter's readings, orderings and counts: the frontier's contrast variances on the all-roots
pool (the paper's reading) beside one root (a sensitivity reading), relations decided on exact values, values not
compared in size, one verdict per printing, and one basis for the box and the closing table.  Each test checks a
rule against a value worked out independently (a direct mixture, a hand count, the law of total variance)."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from oscc_core import collect
from oscc_core.chapters.gradient_noise import findings as gfindings
from oscc_core.chapters.gradient_noise import geometry, pooled, prose, rows
from oscc_core.chapters.gradient_noise.arms import PAPER_KEY, ROW_ARMS, SELECT
from oscc_core.chapters.gradient_noise.frontier import FrontierArm
from oscc_core.engine.arms import PAPER_ARMS
from oscc_core.exact.arm_moments import arm_moments
from oscc_core.method import pooling
from oscc_core.method.stats import Estimate
from oscc_core.reporting import claims, comparability, reading_sets
from oscc_core.reporting.rows import Row

SELECTION = {0: "independent", 1: "full", 2: "root_only"}      # J falls back, Q full, K root-only


# --- OSCC-Select on the pool ----------------------------------------------------------------------------------

def test_a_composite_group_takes_the_returns_of_the_arm_its_own_card_class_selects():
    returns = {a: torch.full((6, 2), k, dtype=torch.int64) for k, a in enumerate(PAPER_ARMS)}
    own = torch.tensor([0, 1, 2, 3, 4, 5])                         # J J Q Q K K
    got = pooled.composite_returns(returns, own, SELECTION)
    # independent = 0, root_only = 1, full = 3
    assert got[:, 0].tolist() == [0, 0, 3, 3, 1, 1]


def test_the_exact_composite_at_the_first_root_is_the_law_of_total_variance_of_the_frontiers_geometry():
    # geometry.exact_composite splits Var(D) into E[Var(D | I)] + Var(E[D | I]); the pool mixes the states' moments
    geom = geometry.geometry("", "uniform", "uniform", 10, 1e-3)
    _, cov = pooled.exact_composite("leduc", "", "uniform", SELECTION)
    assert pooled.contrast_var(cov) == pytest.approx(geom.exact_composite(SELECTION)[1], rel=1e-12)


@pytest.mark.parametrize("root", ["", "1"])
def test_an_exact_composite_of_one_arm_everywhere_is_that_arms_exact_moments(root):
    for arm in ("independent", "full"):
        mean, cov = pooled.exact_composite("leduc", root, "uniform", {0: arm, 1: arm, 2: arm})
        exact = arm_moments("leduc", root, "uniform")[arm]
        np.testing.assert_allclose(mean, exact.mean, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(cov, exact.cov, rtol=1e-12, atol=1e-12)


@pytest.fixture(scope="module")
def pool():
    # 24 roots of 100 groups: the smallest pool the parameters accept
    return pooled.pooled_contrast(SELECTION, pooled.min_groups("uniform"), 5, "uniform", "cpu", 20)


def test_the_pooled_contrast_variance_is_the_mixture_of_every_roots_call_and_raise_moments(pool):
    # written out: each root's sample moments of (Call, Raise), collected with its own seed, mixed by the root weights
    histories = pooling.pool_histories("uniform")
    assert pool.histories == histories and pool.groups.tolist() == [100] * len(histories)
    means, covs = [], []
    for h in histories:
        c = collect("leduc", h, "independent", 100, pooling.root_seed(5, h), continuation="uniform", device="cpu")
        r = c.returns.numpy().astype(float)[:, [c.actions.index("Call"), c.actions.index("Raise")]]
        means.append(r.mean(0))
        covs.append(np.cov(r, rowvar=False, ddof=1))
    w = pool.weights
    m = w @ np.array(means)
    total = sum(wh * (ch + np.outer(mh - m, mh - m)) for wh, mh, ch in zip(w, means, covs))
    assert pool.values["independent"][0] == pytest.approx(total[0, 0] + total[1, 1] - 2 * total[0, 1], rel=1e-10)


def test_the_pooled_exact_value_mixes_every_roots_exact_moments(pool):
    parts = [arm_moments("leduc", h, "uniform")["full"] for h in pool.histories]
    idx = [[p.actions.index("Call"), p.actions.index("Raise")] for p in parts]
    m = np.array([p.mean[i] for p, i in zip(parts, idx)])
    c = np.array([p.cov[np.ix_(i, i)] for p, i in zip(parts, idx)])
    mean = pool.weights @ m
    total = sum(w * (ch + np.outer(mh - mean, mh - mean)) for w, mh, ch in zip(pool.weights, m, c))
    assert pool.exact["full"] == pytest.approx(total[0, 0] + total[1, 1] - 2 * total[0, 1], rel=1e-12)


def test_every_arm_of_the_pool_has_an_interval_around_its_estimate(pool):
    assert set(pool.values) == set(ROW_ARMS)
    for arm in ROW_ARMS:
        est = pool.contrast_var(arm)
        assert est.low <= est.value <= est.high and est.exact > 0


# --- the frontier's contrast variances under two readings -----------------------------------------------------

def _estimate(value: float, half: float = 0.5, exact: float | None = None) -> Estimate:
    return Estimate(value, value - half, value + half, value if exact is None else exact, half / 2)


def _front(contrast: dict, noise: dict | None = None) -> dict:
    noise = noise or {a: _estimate(1.0 - 0.1 * k) for k, a in enumerate(ROW_ARMS)}
    return {a: FrontierArm(a, 100, 1000, 1000, contrast[a], noise[a], noise[a], 10.0) for a in ROW_ARMS}


def _pool(contrast: dict) -> pooled.PooledContrast:
    values = {a: np.concatenate([[e.value], np.linspace(e.low, e.high, 41)]) for a, e in contrast.items()}
    return pooled.PooledContrast([""], np.ones(1), np.array([100]), "visits", values,
                                 {a: e.exact for a, e in contrast.items()})


PAPER = {a: float(claims.claim(f"cost_frontier.{PAPER_KEY[a]}.contrast_variance")) for a in ROW_ARMS}


def _contrast_row(front, pool, arm="independent"):
    return next(r for r in rows.frontier_rows(front, pool, "") if r.claim_id == f"cost_frontier.{PAPER_KEY[arm]}"
                f".contrast_variance")


def test_where_the_readings_disagree_the_pooled_reading_gives_the_verdict_and_the_row_says_so():
    # one root holds the paper's values (reproduced); the pool is far above them, in the paper's order (partly)
    at_root = {a: _estimate(PAPER[a]) for a in ROW_ARMS}
    on_pool = {a: _estimate(PAPER[a] + 10.0) for a in ROW_ARMS}
    row = _contrast_row(_front(at_root), _pool(on_pool))
    # in the words every chapter reads a contrast variance in (`reporting.reading_sets`)
    assert row.verdict == claims.PARTLY and row.reading == reading_sets.CONTRAST_POOLED and row.reading_dependent
    assert {r["reading"]: r["verdict"] for r in row.readings} == {
        reading_sets.CONTRAST_POOLED: claims.PARTLY,
        "per-group budget-1 variance at the decision point ''": claims.REPRODUCED}
    assert row.ours == pytest.approx(PAPER["independent"] + 10.0)        # the table shows the pooled value


def test_where_the_readings_agree_the_verdict_is_not_reading_dependent():
    same = {a: _estimate(PAPER[a]) for a in ROW_ARMS}
    row = _contrast_row(_front(same), _pool(same))
    assert row.verdict == claims.REPRODUCED and not row.reading_dependent


def test_the_reading_rows_are_sensitivity_rows_that_name_their_reading():
    same = {a: _estimate(PAPER[a]) for a in ROW_ARMS}
    found = rows.reading_sensitivity_rows(rows.contrast_reading_rows(_front(same), _pool(same), ""))
    assert len(found) == 2 * len(ROW_ARMS) and not any(r.primary for r in found)
    # each quantity leads with its reading in a few words; the row keeps the whole reading
    assert {r.quantity.split(": ")[0] for r in found} == {"all roots pooled (the paper's reading)", "root '' alone"}
    assert {r.reading for r in found} == {reading_sets.CONTRAST_POOLED,
                                          "per-group budget-1 variance at the decision point ''"}


# --- relations decided on exact values ---------------------------------------------------------------------------

@settings(deadline=None, max_examples=30)
@given(exact=st.permutations([4.0, 3.0, 2.0, 1.0]))
def test_the_noise_trace_ordering_is_decided_on_the_exact_values_not_the_estimates(exact):
    # the estimates are always in the paper's order; only the exact values decide
    noise = {a: _estimate(10.0 - k, exact=exact[k] if k < 4 else 0.5) for k, a in enumerate(ROW_ARMS)}
    same = {a: _estimate(PAPER[a]) for a in ROW_ARMS}
    row = next(r for r in rows.frontier_rows(_front(same, noise), _pool(same), "")
               if r.claim_id == "cost_frontier.root_only.gradient_noise_trace")
    ind, root, cont, full = exact                      # the paper's prose: partial arms below independent, full lowest
    stated = root < ind and cont < ind and full < min(root, cont)
    assert row.relation_holds == stated and row.relation_resolved is None
    assert row.verdict == claims.NOT_COMPARED and "root ''" in row.quantity
    assert row.relation_verdict == (claims.REPRODUCED if row.relation_holds else claims.NOT_REPRODUCED)


def test_oscc_select_is_lowest_only_when_its_exact_value_is_below_every_fixed_arms():
    exact = {"independent": 4.0, "root_only": 3.0, "continuation_only": 2.0, "full": 1.0}
    assert rows.exact_relation("x", {**exact, SELECT: 0.9}, SELECT).holds
    assert not rows.exact_relation("x", {**exact, SELECT: 1.0}, SELECT).holds       # a tie is not below
    assert rows.exact_relation("x", {**exact, SELECT: 0.9}, SELECT).resolved is None


# --- values not compared in size, and the counts ----------------------------------------------------------------

def test_the_chapters_prose_quotes_each_familys_reason_as_the_comparability_module_declares_it():
    values = prose.comparability_values()
    assert values["why_traces"] == comparability.reason_of("gradient-noise traces")
    assert values["why_update_variance"] == comparability.reason_of("update variances")
    assert set(values) == set(prose.FAMILY_GLUE)


def _rows_for_counts() -> list[Row]:
    """Hand-made rows of the chapter: a value printed twice (same_as), a trace not compared with its ordering, a
    reading-dependent value and a check."""
    ratio = Row("a", 0.6, 0.8, claims.PARTLY, "noise_transfer.oscc_select.gradient_ratio", relation="r",
                relation_holds=True)
    printed = ratio.printed_as("text_rootbudget.oscc_select.gradient_noise_ratio", "b", "the same number")
    trace = Row("c", 0.1, 5.0, claims.PARTLY, "cost_frontier.root_only.gradient_noise_trace", relation="order",
                relation_holds=True)
    readings = tuple({"reading": k, "verdict": v, "ours": 1.0, "interval": None, "reason": None}
                     for k, v in (("p", claims.NOT_REPRODUCED), ("q", claims.REPRODUCED)))
    dependent = Row("d", 41.0, 49.0, claims.NOT_REPRODUCED, "cost_frontier.root_only.contrast_variance",
                    readings=readings, reading_dependent=True)
    check = Row("e", "1600/1600", "10/10", claims.REPRODUCED, "noise_transfer.full.finite_gradients".replace(
        "full", "cp_grpo_full"))
    return [ratio, printed, trace, dependent, check]


def _entries() -> dict:
    """The claims entries the hand-made rows name, and one entry with no row (not compared: "no row")."""
    ids = [r.claim_id for r in _rows_for_counts()] + ["cost_frontier.full.transitions".replace("full", "cp_grpo_full")]
    return {cid: claims.claim_entry(cid) for cid in ids}


def test_the_closing_table_counts_each_value_once_as_the_box_does():
    frame = gfindings.counts_frame(_rows_for_counts(), _entries())
    # by hand: 4 measured values (the ratio once, the trace, the contrast variance, the transitions without a row),
    # 1 check, 1 printing
    assert frame.loc["measured values", "total"] == 4
    assert frame.loc["measured values", claims.PARTLY] == 1 and frame.loc["measured values", claims.NOT_COMPARED] == 2
    assert frame.loc["checks", "total"] == 1
    assert frame.loc["orderings of values not compared in size", claims.REPRODUCED] == 1
    assert frame.loc["verdicts that depend on the reading", "total"] == 1
    assert frame.loc["further printings, not counted again", "total"] == 1
    counted = gfindings.counts(_rows_for_counts(), _entries())
    assert sum(counted["measurements"].values()) == frame.loc["measured values", "total"]


def test_the_not_compared_values_are_listed_by_family_with_their_orderings():
    assert gfindings.not_compared_text(_rows_for_counts(), _entries()) == \
        "1 gradient-noise traces (1 of 1 orderings the paper states hold); 1 transitions"


def test_two_printings_of_one_quantity_with_different_verdicts_across_tables_are_refused():
    a = Row("a", 0.152, 0.46, claims.PARTLY, "clipping.activated_stress.clip_selected_fraction", relation="r",
            relation_holds=True)
    b = Row("b", 15.2, 46.0, claims.NOT_REPRODUCED, "clipping.footnote.activated_stress.clip_percent")
    with pytest.raises(ValueError, match="clip_percent"):
        rows.one_verdict({"clipping": [a], "footnote": [b]})
    rows.one_verdict({"clipping": [a], "footnote": [replace_verdict(b, a)]})


def replace_verdict(row: Row, like: Row) -> Row:
    from dataclasses import replace
    return replace(row, verdict=like.verdict, relation=like.relation, relation_holds=like.relation_holds)


# --- the noise-transfer and clipping rows, on a stub audit ------------------------------------------------------

class _Stub:
    """The few audit methods the row builders read: ratio values [R+1] per quantity and arm, their exact values
    (None for the update ratio, which has none), clip fractions, update noises and per-setting updates."""

    def __init__(self, ratios: dict, exact: dict, noise: dict | None = None, clip: dict | None = None):
        from types import SimpleNamespace
        self._ratios, self._exact, self._noise, self._clip = ratios, exact, noise or {}, clip or {}
        ok = SimpleNamespace(finite=np.ones(8, bool), ratio=np.ones((8, 2)))
        self.updates = {a: {s: ok for s in ("main", "c", "l", "r", "s")} for a in ROW_ARMS}

    def ratio_values(self, q, a, setting=None):
        return self._ratios[q][a]

    def ratio(self, q, a, setting=None):
        v = self._ratios[q][a]
        return Estimate(float(v[0]), float(v[1:].min()), float(v[1:].max()), self._exact[q][a], 0.01)

    def clip_fraction(self, a, s):
        return self._clip.get(s, np.full(41, 0.1))

    def update_noise(self, a, s):
        return self._noise[s]

    def exact_noise(self, a):
        return 1.0


def _spread(value: float) -> np.ndarray:
    return np.concatenate([[value], value + np.linspace(-0.01, 0.01, 40)])


def test_the_return_ratio_ordering_is_decided_on_exact_values_and_the_update_ratios_by_the_bootstrap():
    estimates = {"independent": 1.0, "root_only": 0.9, "continuation_only": 0.8, "full": 0.7, SELECT: 0.6}
    ratios = {q: {a: _spread(v) for a, v in estimates.items()} for q in ("return", "gradient", "update")}
    # exact values: root-only below full, against the relation the paper states (full lowest), which the
    # estimates follow
    exact_values = {"independent": 1.0, "root_only": 0.65, "continuation_only": 0.8, "full": 0.7, SELECT: 0.6}
    exact = {"return": exact_values, "gradient": exact_values, "update": {a: None for a in ROW_ARMS}}
    found = {r.claim_id: r for r in rows.noise_transfer_rows(_Stub(ratios, exact), "main")}
    ret = found["noise_transfer.root_only.return_ratio"]
    assert ret.relation_holds is False and ret.relation_resolved is None
    upd = found["noise_transfer.root_only.update_ratio"]
    assert upd.relation_holds is True and upd.relation_resolved is True          # paired differences of 0.1
    assert found["noise_transfer.oscc_select.gradient_ratio"].relation_holds is True


def _clipping(noise: dict) -> list[Row]:
    groups = {"connectivity control": ["c"], "behaviour-lag grid": ["l"], "learning-rate grid": ["r"],
              "activated stress": ["s"]}
    clip = {"c": np.zeros(41)}
    return {r.claim_id: r for r in rows.clipping_rows(_Stub({}, {}, {k: _spread(v) for k, v in noise.items()}, clip),
                                                      groups)}


def test_the_zero_clipping_control_is_true_by_construction_and_its_relation_decides_nothing():
    found = _clipping({"c": 1.0, "l": 2.0, "r": 3.0, "s": 4.0})
    row = found["clipping.connectivity_control.clip_selected_fraction"]
    assert row.verdict == claims.NOT_COMPARED and row["by construction"] == rows.ONE_STEP_CONTROL
    assert row.relation_constructed and row.relation_verdict is None


@pytest.mark.parametrize("stress, rises", [(4.0, True), (2.5, True), (1.5, False), (0.5, False)])
def test_the_activated_stress_update_variance_must_rise_above_the_lag_grid_and_the_control(stress, rises):
    # the paper: the control lowest (bold), and the variance rising from the lag grid (0.1437) to the stress (0.1814);
    # here the control is 1 and the lag grid 2, so the stress rises only above 2
    row = _clipping({"c": 1.0, "l": 2.0, "r": 3.0, "s": stress})["clipping.activated_stress.update_variance"]
    assert row.relation_holds is rises
    assert row.verdict == claims.NOT_COMPARED
    assert comparability.reason_of("update variances") in row.reason
