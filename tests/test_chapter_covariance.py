"""The covariance chapter package (`oscc_core.chapters.covariance`), each piece against an independent value.

Exact values are checked against the OpenSpiel enumeration of
`test_arm_moments_openspiel` (nothing from `oscc_core`), Monte-Carlo values
against numpy computations on the collected returns and against the exact
values within a few bootstrap standard errors, decisions and verdicts on
constructed inputs whose answer is known by hand.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from oscc_core.chapters.covariance import (
    budget,
    constructions,
    coupling,
    equivalence,
    identity,
    paired_audit,
    parameters,
    strata,
)
from oscc_core.engine.arms import ARMS, PAPER_ARMS
from oscc_core.exact.arm_moments import Moments
from oscc_core.method.stats import BootstrapMoments, Estimate
from oscc_core.reporting import claims
from oscc_core.reporting.params import ParameterError
from oscc_core.reporting.rows import NO_PAPER

pyspiel = pytest.importorskip("pyspiel")

from test_arm_moments_openspiel import BINS, branch_laws, enumerated_moments, root_law  # OpenSpiel enumeration

N_GROUPS, SEED, N_BOOT = 6000, 11, 200
JACKS = (0, 1)          # Leduc card ids of the jack (two suits)


@pytest.fixture(scope="module")
def audit():
    """All five arms at the first decision, uniform continuation."""
    return paired_audit.paired_audit("", tuple(ARMS), N_GROUPS, SEED, "uniform", "cpu", N_BOOT, "test/fixed_root")


def contrast_var(cov: np.ndarray, i: int = 0, j: int = 1) -> float:
    return float(cov[i, i] + cov[j, j] - 2 * cov[i, j])


def valid_returns(c) -> np.ndarray:
    return c.returns[c.codes == 0].numpy().astype(np.int64)


# --- paired audits: exact values and estimates ---------------------------------------------

@pytest.mark.parametrize("arm", PAPER_ARMS)
def test_audit_exact_contrast_variance_and_covariance_match_the_openspiel_enumeration(audit, arm):
    _, cov = enumerated_moments("", arm)
    assert audit.contrast_var(arm).exact == pytest.approx(contrast_var(cov), rel=1e-10)
    assert audit.covariance(arm).exact == pytest.approx(cov[0, 1], rel=1e-10, abs=1e-12)


def test_audit_contrast_variance_is_the_sample_variance_of_the_return_contrast(audit):
    r = valid_returns(audit.collections["full"])
    assert audit.valid == len(r) == N_GROUPS
    d = r[:, 0] - r[:, 1]
    assert audit.contrast_var("full").value == pytest.approx(np.var(d, ddof=1), rel=1e-12)
    assert audit.contrast_mean("full").value == pytest.approx(d.mean(), rel=1e-12)


@pytest.mark.parametrize("arm", tuple(ARMS))
def test_audit_contrast_variance_lies_within_four_standard_errors_of_the_exact_value(audit, arm):
    est = audit.contrast_var(arm)
    assert abs(est.value - est.exact) < 4 * est.se
    assert est.low < est.value < est.high


def test_policy_namespace_arm_has_the_independent_arms_exact_moments(audit):
    _, cov = enumerated_moments("", "independent")
    assert audit.contrast_var("policy_namespace").exact == pytest.approx(contrast_var(cov), rel=1e-10)


def test_ratio_and_reduction_of_the_exact_values_follow_from_the_enumeration(audit):
    ratio = contrast_var(enumerated_moments("", "full")[1]) / contrast_var(enumerated_moments("", "independent")[1])
    assert audit.ratio().exact == pytest.approx(ratio, rel=1e-10)
    assert audit.reduction().exact == pytest.approx(100 * (1 - ratio), rel=1e-10)


def test_own_card_stratum_keeps_the_jack_groups_and_conditions_the_exact_values(audit):
    jack = paired_audit.paired_audit("", ("independent", "full"), N_GROUPS, SEED, "uniform", "cpu", N_BOOT,
                                     "test/jack", own_class=0, collections=audit.collections)
    own = audit.collections["full"].own_card.numpy()
    assert jack.groups == int(np.isin(own, JACKS).sum())
    # both jacks are the same rank, so conditioning on the class is conditioning on card 0
    _, cov = enumerated_moments("", "full", own_card=0)
    assert jack.contrast_var("full").exact == pytest.approx(contrast_var(cov), rel=1e-10)
    assert jack.contrast_var("full").value == pytest.approx(
        np.var(np.diff(valid_returns(audit.collections["full"])[np.isin(own, JACKS)], axis=1), ddof=1), rel=1e-12)


def test_per_rollout_budget_divides_the_within_situation_variance_by_k():
    """root_only with k rollouts per branch: given the deal s every rollout is independent, so the
    per-rollout contrast variance is E_s[v_1(s) + v_2(s)] / k + Var_s(m_1(s) - m_2(s))."""
    k = 4
    _, _, law = root_law("")
    laws = branch_laws("")

    def moments(b, own, opp, power):
        return sum(sum(p * u ** power for u, p in laws[(b, own, opp, bin_)].items()) for bin_ in range(BINS)) / BINS

    within = sum(p * sum(moments(b, *s, 2) - moments(b, *s, 1) ** 2 for b in (0, 1)) for s, p in law.items())
    gaps = {s: moments(0, *s, 1) - moments(1, *s, 1) for s in law}
    mean_gap = sum(p * gaps[s] for s, p in law.items())
    between = sum(p * (gaps[s] - mean_gap) ** 2 for s, p in law.items())
    a = paired_audit.paired_audit("", ("root_only",), 3000, SEED, "uniform", "cpu", N_BOOT, "test/budget",
                                  budget=k, per_rollout=True)
    est = a.contrast_var("root_only")
    assert est.exact == pytest.approx(within / k + between, rel=1e-10)
    d = np.diff(valid_returns(a.collections["root_only"]), axis=1)[:, 0]
    assert est.value == pytest.approx(np.var(d, ddof=1) / k ** 2, rel=1e-12)
    assert abs(est.value - est.exact) < 4 * est.se


# --- marginal equivalence (TOST) on constructed replicates ---------------------------------

def constructed_audit(replicates: np.ndarray, actions=("Call", "Raise")) -> paired_audit.PairedAudit:
    """An audit whose full-minus-independent branch-mean replicates are `replicates` (both branches)."""
    b, r = len(actions), len(replicates)
    full = np.repeat(np.asarray(replicates)[:, None], b, axis=1)
    zeros = np.zeros((r, b))
    boot = BootstrapMoments(n=100, replicates=r, seed=0, purpose="t", mean={"full": full, "independent": zeros},
                            cov={"full": np.zeros((r, b, b)), "independent": np.zeros((r, b, b))})
    exact = {a: Moments(a, list(actions), np.zeros(b), np.eye(b)) for a in ("full", "independent")}
    point = float(np.median(replicates))
    return paired_audit.PairedAudit(root="", actions=list(actions), pair=(0, 1), groups=100, valid=100, budget=1,
                                    mean={"full": np.full(b, point), "independent": np.zeros(b)},
                                    cov={"full": np.eye(b), "independent": np.eye(b)}, exact=exact, boot=boot)


def test_tost_interval_is_the_90_percent_percentile_interval_of_the_replicates():
    # 1001 evenly spaced replicates on [-0.04, 0.04]: the 5% and 95% quantiles are -0.036 and 0.036
    _, records = equivalence.equivalence_rows(constructed_audit(np.linspace(-0.04, 0.04, 1001)), 0.05)
    assert records[0]["tost_low"] == pytest.approx(-0.036)
    assert records[0]["tost_high"] == pytest.approx(0.036)
    assert records[0]["ci95_low"] == pytest.approx(-0.038)


@pytest.mark.parametrize("margin, equivalent", [(0.05, True), (0.037, True), (0.035, False), (0.01, False)])
def test_equivalence_is_declared_only_when_the_90_percent_interval_lies_inside_the_margin(margin, equivalent):
    _, records = equivalence.equivalence_rows(constructed_audit(np.linspace(-0.04, 0.04, 1001)), margin)
    assert [r["equivalent"] for r in records] == [equivalent, equivalent]


@pytest.mark.parametrize("low, high, verdict", [
    (-0.04, 0.04, claims.REPRODUCED),         # the paper's 0.02049 lies in the 95% interval
    (-0.04, 0.01, claims.PARTLY),             # interval excludes it, but the branch is equivalent
    (0.03, 0.20, claims.NOT_REPRODUCED),      # excludes it and is not equivalent at 0.05
])
def test_equivalence_row_verdict_on_constructed_intervals(low, high, verdict):
    assert claims.claim("marginal_equivalence.check.mean_difference") == pytest.approx(0.02049)
    rows, _ = equivalence.equivalence_rows(constructed_audit(np.linspace(low, high, 1001)), 0.05)
    assert rows[0]["quantity"].startswith("check (Call)")
    assert rows[0]["verdict"] == verdict


def test_equivalence_rows_at_a_three_action_root_have_no_paper_value():
    rows, records = equivalence.equivalence_rows(
        constructed_audit(np.linspace(-0.01, 0.01, 101), ("Fold", "Call", "Raise")), 0.05)
    assert len(records) == 3
    assert all(r["verdict"] == NO_PAPER and r["claim id"] is None for r in rows)


# --- variance identity ---------------------------------------------------------------------

def test_variance_identity_sides_are_the_exact_fractions_of_the_integer_sums(audit):
    rows, records = identity.identity_rows(audit.collections, audit.pair)
    r = [[int(x) for x in g] for g in valid_returns(audit.collections["root_only"])]
    n = len(r)

    def var(xs, ys):
        return Fraction(n * sum(x * y for x, y in zip(xs, ys)) - sum(xs) * sum(ys), n * (n - 1))

    r1, r2 = [g[0] for g in r], [g[1] for g in r]
    d = [a - b for a, b in zip(r1, r2)]
    rec = records["root_only"]
    assert rec["contrast_var"] == float(var(d, d))
    assert (rec["var_i"], rec["var_j"], rec["cov_ij"]) == (float(var(r1, r1)), float(var(r2, r2)), float(var(r1, r2)))
    assert abs(rec["residual"]) < 1e-12
    assert [row["verdict"] for row in rows] == [claims.REPRODUCED] * len(ARMS)


class _Summary:
    """A collection stand-in whose summary is given."""

    def __init__(self, contrast_var, cov):
        self._summary = {"pairwise_contrasts": {"0-1": {"contrast_var": contrast_var}}, "cov": cov}

    def summary(self):
        return self._summary


def test_variance_identity_row_fails_when_the_residual_exceeds_the_papers_bound():
    rows, records = identity.identity_rows({"exact": _Summary(10.0, [[6.0, 1.0], [1.0, 6.0]]),
                                            "off": _Summary(10.0 + 4e-12, [[6.0, 1.0], [1.0, 6.0]])}, (0, 1))
    assert records["exact"]["residual"] == 0.0
    assert records["off"]["residual"] == pytest.approx(4e-12, rel=0.01)
    assert [r["verdict"] for r in rows] == [claims.REPRODUCED, claims.NOT_REPRODUCED]


# --- comparison rows on constructed estimates ------------------------------------------------

class _Pair:
    """An audit stand-in with given independent and full estimates (chips^2)."""

    def __init__(self, full, independent, cov=None, valid=100, root=""):
        self.full, self.independent, self.valid, self.root = full, independent, valid, root
        self.cov = cov if cov is not None else Estimate(1.0, 0.5, 1.5, 1.0, 0.1)

    def contrast_var(self, arm):
        return self.full if arm == "full" else self.independent

    def covariance(self, arm):
        return self.cov

    def ratio(self):
        v = self.full.value / self.independent.value
        return Estimate(v, v * 0.9, v * 1.1, v, 0.01)


def est(value, half=0.5):
    return Estimate(value, value - half, value + half, value, half / 2)


@pytest.mark.parametrize("full_by_class, verdict", [
    ((19.0, 30.0, 30.0), claims.REPRODUCED),      # the paper's 19.0247 lies in the J interval [18.5, 19.5]
    ((25.0, 30.0, 30.0), claims.PARTLY),          # in no interval, but paired < independent (40) in every class
    ((25.0, 30.0, 45.0), claims.NOT_REPRODUCED),  # the direction fails for K
])
def test_private_card_row_is_reproduced_by_any_class_and_partly_by_direction_in_all(full_by_class, verdict):
    assert claims.claim("strata.private_card_a.paired_variance") == pytest.approx(19.0247)
    card = {label: _Pair(est(v), est(40.0)) for label, v in zip("JQK", full_by_class)}
    row = strata.class_range_row("a", "paired_variance", "paired variance", card)
    assert row["verdict"] == verdict
    assert row["ours"] == f"{min(full_by_class):.4f} to {max(full_by_class):.4f}"
    assert row["95% interval"] == (min(full_by_class) - 0.5, max(full_by_class) + 0.5)


def test_budget_rows_compare_only_the_budgets_the_paper_reports():
    audits = {k: _Pair(est(20.0), est(40.0)) for k in (1, 2, 4)}
    rows = budget.budget_rows(audits)
    by_budget = {k: [r for r in rows if r["quantity"].startswith(f"budget {k}:")] for k in audits}
    assert [r["claim id"] for r in by_budget[4]] == [
        "root_budget.private_card_group_b.pairs", "root_budget.private_card_group_b.paired_variance",
        "root_budget.private_card_group_b.independent_variance", "root_budget.private_card_group_b.covariance",
        "root_budget.private_card_group_b.variance_ratio"]
    assert [r["verdict"] for r in by_budget[2]] == [NO_PAPER] * 4
    assert by_budget[1][0]["claim id"] == "root_budget.private_card_group_a.pairs"


class _Arms:
    """An audit stand-in with a given contrast variance per arm."""

    def __init__(self, variances):
        self.variances = variances

    def contrast_var(self, arm):
        return self.variances[arm]

    def covariance(self, arm):
        return est(100.0)


def test_coupling_rows_lose_the_direction_when_the_papers_ordering_breaks():
    ordered = {"independent": est(40.0), "root_only": est(35.0), "continuation_only": est(30.0),
               "full": est(25.0), "policy_namespace": est(40.0)}
    swapped = {**ordered, "root_only": est(45.0)}
    ok = {r["quantity"]: r["verdict"] for r in coupling.coupling_rows(_Arms(ordered))}
    broken = {r["quantity"]: r["verdict"] for r in coupling.coupling_rows(_Arms(swapped))}
    assert ok["full: contrast variance"] == claims.PARTLY          # far from the paper's, ordering holds
    assert broken["full: contrast variance"] == claims.NOT_REPRODUCED
    assert ok["policy_namespace: contrast variance"] == claims.PARTLY   # 40 +- 0.5 contains independent's 40


def test_coupling_steps_are_differences_of_contrast_variances():
    steps = coupling.coupling_steps(_Arms({"independent": est(40.0), "root_only": est(35.5),
                                           "continuation_only": est(31.0)}))
    assert steps["root_step"] == pytest.approx(4.5)
    assert steps["cont_step"] == pytest.approx(9.0)
    paper = {a: claims.claim(c) for a, c in (("independent", "main.independent.variance"),
                                             ("root_only", "ablations.root_only.variance"))}
    assert steps["paper_root_step"] == pytest.approx(paper["independent"] - paper["root_only"])


# --- constructions ------------------------------------------------------------------------

def test_exact_reduction_at_a_three_action_root_uses_call_minus_raise():
    r = constructions.exact_reduction("2", "uniform")
    assert r["contrast"] == "Call - Raise"
    for arm in PAPER_ARMS:   # OpenSpiel's actions at "2" are Fold, Call, Raise
        assert r[arm] == pytest.approx(contrast_var(enumerated_moments("2", arm)[1], 1, 2), rel=1e-10)


def test_exact_reduction_is_none_at_a_root_the_continuation_never_reaches():
    always_call = constructions.deterministic_policies("uniform")["always check/call"]
    assert constructions.exact_reduction("2", always_call) is None      # nobody ever raises
    assert constructions.exact_reduction("", always_call) is not None


def test_always_call_policy_calls_at_every_openspiel_decision():
    policy = constructions.deterministic_policies("uniform")["always check/call"]
    game = pyspiel.load_game("leduc_poker")
    stack, seen = [game.new_initial_state()], 0
    while stack:
        state = stack.pop()
        if state.is_terminal():
            continue
        if not state.is_chance_node():
            probs = policy[state.information_state_string()]
            assert probs[1] == 1.0 and sum(probs) == 1.0
            seen += 1
        stack += [state.child(a) for a in state.legal_actions()]
    assert seen > 0


def test_level_distance_is_the_mean_absolute_log_ratio_to_the_papers_variances():
    paper = {a: float(claims.claim(c)) for a, c in (
        ("independent", "main.independent.variance"), ("root_only", "ablations.root_only.variance"),
        ("continuation_only", "ablations.continuation.variance"), ("full", "main.cp_grpo_paired.variance"))}
    assert constructions.level_distance(paper) == pytest.approx(0.0, abs=1e-15)
    assert constructions.level_distance({a: v * math.e for a, v in paper.items()}) == pytest.approx(1.0)
    assert constructions.level_distance({**paper, "full": paper["full"] / math.e ** 2}) == pytest.approx(0.5)
    assert constructions.level_distance({**paper, "full": 0.0}) == math.inf


# --- parameters ---------------------------------------------------------------------------

SMALL = {"n_groups": 2_000, "seed": 13, "root": "", "continuation": "uniform", "cfr_iterations": 20,
         "device": "cpu", "output_dir": "", "n_bootstrap": 50, "equivalence_margin": 0.05, "seeds": [13, 17],
         "seed_groups": 512, "budgets": [1, 2], "budget_groups": 512}


def test_validate_records_the_parameters_the_results_file_keeps(tmp_path):
    p = parameters.validate({**SMALL, "output_dir": str(tmp_path), "unrelated": 1})
    assert p.record == {"n_groups": 2_000, "seed": 13, "root": "", "continuation": "uniform", "cfr_iterations": 20,
                        "n_bootstrap": 50, "equivalence_margin": 0.05, "seeds": [13, 17], "seed_groups": 512,
                        "budgets": [1, 2], "budget_groups": 512, "game": "leduc"}
    assert p.policy == "uniform" and p.output_dir == tmp_path


@pytest.mark.parametrize("name, value", [("budgets", [1, 65]), ("equivalence_margin", 0.0), ("root", "9"),
                                         ("seeds", [-1])])
def test_validate_names_the_bad_parameter_before_writing_anything(tmp_path, name, value):
    out = tmp_path / "out"
    with pytest.raises(ParameterError, match=name):
        parameters.validate({**SMALL, "output_dir": str(out), name: value})
    assert not out.exists()


def test_validate_refuses_a_namespace_without_a_declared_parameter():
    with pytest.raises(ParameterError, match="budget_groups"):
        parameters.validate({k: v for k, v in SMALL.items() if k != "budget_groups"})
