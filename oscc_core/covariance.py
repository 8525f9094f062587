"""The covariance chapter's computations: paired audits, strata, budgets, comparison rows.

Everything the notebook ``02_covariance.ipynb`` reports is computed here, so
the notebook only chooses parameters, calls these functions and shows their
tables.  Units: returns and means in chips, variances and covariances in
chips^2, ratios unitless, reductions in percent.

A *paired audit* collects several coupling arms at one root with the same
seed (so group g has the same root in every arm), computes each arm's branch
means and covariance from exact integer sums, the exact values by
enumeration (``exact.arm_moments``) and a paired root bootstrap
(``stats.paired_bootstrap``) that resamples the groups of all arms jointly.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from oscc_core.engine.collector import Collection, collect
from oscc_core.exact.arm_moments import Moments, arm_moments
from oscc_core.games import get_game
from oscc_core.method import stats
from oscc_core.method.stats import Estimate, contrast_pair, estimate_from_replicates
from oscc_core.policy import resolve_policy, table_to_policy
from oscc_core.reporting import claims
from oscc_core.reporting.rows import Row

GAME = "leduc"
ARMS = ("independent", "root_only", "continuation_only", "full", "policy_namespace")
#: Leduc ranks by card id // 2.
CARD_CLASSES = {"J": 0, "Q": 1, "K": 2}
#: Roots that define the round and action-count strata (DESIGN.md section 5).
ROUND_ROOTS = {"round one": "", "round two": "11|"}
ACTION_ROOTS = {"two actions": "", "three actions": "2"}
#: Paper wording for our action names at two-action roots.
PAPER_BRANCH = {"Call": "check", "Raise": "bet"}


# --- parameters ---------------------------------------------------------------

# --- paired audits --------------------------------------------------------------

@dataclass
class PairedAudit:
    """Arms collected at one root with one seed, paired by group.

    ``scale`` converts summed budget-k returns to per-rollout means (1/k):
    means are multiplied by it and (co)variances by its square, so rows with
    different budgets are on the same chips scale; ratios do not change.
    """

    root: str
    actions: list[str]
    pair: tuple[int, int]
    groups: int
    valid: int
    budget: int
    mean: dict[str, np.ndarray]
    cov: dict[str, np.ndarray]
    exact: dict[str, Moments]
    boot: stats.BootstrapMoments
    collections: dict[str, Collection] = field(default_factory=dict)
    scale: float = 1.0

    @property
    def pair_names(self) -> tuple[str, str]:
        return self.actions[self.pair[0]], self.actions[self.pair[1]]

    def contrast_var(self, arm: str) -> Estimate:
        """Var(R_i - R_j) in chips^2 for the reported pair."""
        i, j = self.pair
        s2 = self.scale ** 2
        return estimate_from_replicates(stats.contrast_var(self.cov[arm], i, j) * s2, self.boot.contrast_var(arm, i, j) * s2,
                         self.exact[arm].contrast_var(i, j) * s2)

    def contrast_sd(self, arm: str) -> Estimate:
        """SD of the contrast (chips); its interval is the square root of the variance interval."""
        v = self.contrast_var(arm)
        i, j = self.pair
        reps = np.sqrt(self.boot.contrast_var(arm, i, j)) * self.scale
        return Estimate(math.sqrt(v.value), math.sqrt(v.low), math.sqrt(v.high), math.sqrt(v.exact),
                        stats.bootstrap_se(reps))

    def contrast_mean(self, arm: str) -> Estimate:
        """E[R_i - R_j] in chips."""
        i, j = self.pair
        m = self.mean[arm]
        reps = (self.boot.mean[arm][:, i] - self.boot.mean[arm][:, j]) * self.scale
        return estimate_from_replicates((m[i] - m[j]) * self.scale, reps, self.exact[arm].contrast_mean(i, j) * self.scale)

    def covariance(self, arm: str) -> Estimate:
        """Cov(R_i, R_j) in chips^2."""
        i, j = self.pair
        s2 = self.scale ** 2
        return estimate_from_replicates(self.cov[arm][i, j] * s2, self.boot.covariance(arm, i, j) * s2,
                         self.exact[arm].cov[i, j] * s2)

    def branch_mean(self, arm: str, branch: int) -> Estimate:
        return estimate_from_replicates(self.mean[arm][branch] * self.scale, self.boot.mean[arm][:, branch] * self.scale,
                         self.exact[arm].mean[branch] * self.scale)

    def ratio(self, numerator: str = "full", denominator: str = "independent") -> Estimate:
        """Contrast-variance ratio numerator / denominator (unitless)."""
        i, j = self.pair
        value = stats.contrast_var(self.cov[numerator], i, j) / stats.contrast_var(self.cov[denominator], i, j)
        ex = self.exact[numerator].contrast_var(i, j) / self.exact[denominator].contrast_var(i, j)
        return estimate_from_replicates(value, self.boot.variance_ratio(numerator, denominator, i, j), ex)

    def reduction(self, numerator: str = "full", denominator: str = "independent") -> Estimate:
        """Variance reduction 100 (1 - ratio), percent; interval from the ratio's replicates."""
        r = self.ratio(numerator, denominator)
        i, j = self.pair
        reps = 100 * (1 - self.boot.variance_ratio(numerator, denominator, i, j))
        return estimate_from_replicates(100 * (1 - r.value), reps, 100 * (1 - r.exact))

    def equivalence(self, branch: int, margin: float, arm: str = "full", reference: str = "independent") -> dict:
        """Marginal equivalence of one branch mean: arm minus reference, TOST at 90% and 95% interval."""
        diff = (self.mean[arm][branch] - self.mean[reference][branch]) * self.scale
        out = stats.equivalence_test(diff, self.boot.mean_difference(arm, reference, branch) * self.scale, margin)
        out["exact"] = float(self.exact[arm].mean[branch] - self.exact[reference].mean[branch]) * self.scale
        out["branch"] = self.actions[branch]
        return out


def _valid_returns(cols: dict[str, Collection], keep: torch.Tensor | None) -> tuple[dict, int]:
    ok = torch.ones_like(next(iter(cols.values())).codes, dtype=torch.bool)
    for c in cols.values():
        ok &= c.codes == 0
    if keep is not None:
        ok &= keep
    return {a: c.returns[ok] for a, c in cols.items()}, int(ok.sum())


def collect_arms(root: str, arms, n_groups: int, seed: int, continuation, device: str, budget: int = 1) -> dict:
    """One `collect` per arm at the same root and seed (the arms are paired by group id)."""
    return {a: collect(GAME, root, a, n_groups, seed, continuation, device, budget=budget) for a in arms}


def paired_audit(root: str, arms, n_groups: int, seed: int, continuation, device: str, n_bootstrap: int,
                 purpose: str, budget: int = 1, own_class: int | None = None,
                 collections: dict[str, Collection] | None = None, per_rollout: bool = False) -> PairedAudit:
    """Collect (or reuse) paired arms at `root` and estimate their moments with a paired bootstrap.

    own_class    restrict to groups whose acting player holds this rank (0 J, 1 Q, 2 K);
                 the exact values are then conditioned on the same stratum
    per_rollout  report means and (co)variances of the per-rollout average (divide by the budget)
    """
    cols = collections if collections is not None else collect_arms(root, arms, n_groups, seed, continuation,
                                                                     device, budget)
    cols = {a: cols[a] for a in arms}
    first = next(iter(cols.values()))
    keep = None if own_class is None else (first.own_card // 2 == own_class)
    returns, valid = _valid_returns(cols, keep)
    mean, cov = {}, {}
    for a, r in returns.items():
        mean[a], cov[a] = stats.sample_moments(r)
    where = None if own_class is None else (lambda s, c=own_class: s[:, 0] // 2 == c)
    exact = arm_moments(GAME, root, continuation, budget=budget, where=where)
    boot = stats.paired_bootstrap(returns, n_bootstrap, seed, purpose)
    groups = len(first.codes) if keep is None else int(keep.sum())
    return PairedAudit(root=root, actions=list(first.actions), pair=contrast_pair(list(first.actions)),
                       groups=groups, valid=valid, budget=budget, mean=mean, cov=cov, exact=exact, boot=boot,
                       collections=cols, scale=1.0 / budget if per_rollout else 1.0)


# --- comparison rows --------------------------------------------------------------

def row(quantity: str, claim_id: str | None, est: Estimate, direction_agrees: bool | None = None,
        paper_interval_id: str | None = None) -> dict:
    """A paper-beside-ours row from an Estimate; no claim id -> no paper value."""
    out = Row.estimate(quantity, claim_id, est, direction_agrees)
    if paper_interval_id is not None:
        out = out.with_paper_interval(*claims.claim(paper_interval_id))
    return out


def fixed_root_rows(audit: PairedAudit) -> list[dict]:
    """tab:main, tab:main-uncertainty and the branch-mean prose of 'Return-contrast precision'."""
    ind_v, full_v = audit.contrast_var("independent"), audit.contrast_var("full")
    lower = full_v.value < ind_v.value
    ind_m, full_m = audit.contrast_mean("independent"), audit.contrast_mean("full")
    rows = [
        Row.count("independent: pairs", "main.independent.pairs", audit.valid),
        Row.count("full: pairs", "main.cp_grpo_paired.pairs", audit.valid),
        Row.count("failed or filtered groups (all arms)", "text_precision.both_arms.failed_or_filtered_groups",
                  audit.groups - audit.valid, 0),
        row("independent: contrast mean", "main.independent.reported_mean", ind_m,
            ind_m.value * claims.claim("main.independent.reported_mean") > 0),
        row("full: contrast mean", "main.cp_grpo_paired.reported_mean", full_m,
            full_m.value * claims.claim("main.cp_grpo_paired.reported_mean") > 0),
        row("independent: contrast variance", "main.independent.variance", ind_v, lower),
        row("full: contrast variance", "main.cp_grpo_paired.variance", full_v, lower,
            "main_uncertainty.contrast_variance.interval"),
        row("independent: contrast SD", "main.independent.sd", audit.contrast_sd("independent"), lower),
        row("full: contrast SD", "main.cp_grpo_paired.sd", audit.contrast_sd("full"), lower),
        row("variance ratio full / independent", "main_uncertainty.variance_ratio.cp_grpo_paired",
            audit.ratio(), audit.ratio().value < 1, "main_uncertainty.variance_ratio.interval"),
        row("variance reduction (%)", "main.caption.variance_reduction", audit.reduction(),
            audit.reduction().value > 0),
    ]
    ind_c, full_c = audit.covariance("independent"), audit.covariance("full")
    rows += [
        row("independent: check-bet covariance", "main_uncertainty.check_bet_covariance.independent", ind_c,
            full_c.value > ind_c.value),
        row("full: check-bet covariance", "main_uncertainty.check_bet_covariance.cp_grpo_paired", full_c,
            full_c.value > ind_c.value, "main_uncertainty.check_bet_covariance.interval"),
    ]
    if audit.actions == ["Call", "Raise"]:
        for arm, label in (("full", "cp_grpo"), ("independent", "independent")):
            for b, word in ((0, "check"), (1, "bet")):
                est = audit.branch_mean(arm, b)
                paper = claims.claim(f"text_precision.{label}.{word}_mean")
                rows.append(row(f"{arm}: branch mean, {word} ({audit.actions[b]})",
                                f"text_precision.{label}.{word}_mean", est, est.value * paper > 0))
    return rows


def equivalence_rows(audit: PairedAudit, margin: float) -> tuple[list[dict], list[dict]]:
    """tab:marginal-equivalence: (comparison rows, decision records) for each branch of a two-action root."""
    rows, records = [], []
    for b, name in enumerate(audit.actions):
        rec = audit.equivalence(b, margin)
        records.append(rec)
        word = PAPER_BRANCH.get(name)
        est = Estimate(rec["difference"], rec["ci95_low"], rec["ci95_high"], rec["exact"], rec["se"])
        if word is None or audit.actions != ["Call", "Raise"]:
            rows.append(row(f"{name}: mean difference full - independent", None, est))
            continue
        rows.append(row(f"{word} ({name}): mean difference full - independent",
                        f"marginal_equivalence.{word}.mean_difference", est, rec["equivalent"],
                        f"text_precision.{word}.bootstrap_interval"))
    return rows, records


def equivalence_frame(records: list[dict], digits: int = 4):
    import pandas as pd

    return pd.DataFrame([{
        "branch": r["branch"], "difference (chips)": f"{r['difference']:.{digits}f}",
        "95% interval": f"[{r['ci95_low']:.{digits}f}, {r['ci95_high']:.{digits}f}]",
        f"{r['tost_level']:.0%} interval (TOST)": f"[{r['tost_low']:.{digits}f}, {r['tost_high']:.{digits}f}]",
        "exact": f"{r['exact']:.{digits}f}", "margin": f"{r['margin']:g}",
        "decision": "equivalent" if r["equivalent"] else "not shown equivalent"} for r in records])


def identity_rows(collections: dict[str, Collection], pair: tuple[int, int]) -> tuple[list[dict], dict]:
    """Variance-identity residual of every arm against the paper's '< 1e-12' bound."""
    rows, records = [], {}
    for arm, c in collections.items():
        rec = stats.variance_identity(c.summary(), *pair)
        records[arm] = rec
        rows.append(Row.residual(f"{arm}: Var(R1-R2) - (Var R1 + Var R2 - 2 Cov)",
                              "text_precision.both_arms.variance_identity_residual", rec["residual"]))
    return rows, records


# --- seeds, strata, budgets, coupling factors -------------------------------------

def seed_rows(audits: dict[int, PairedAudit]) -> list[dict]:
    """tab:seed-precision: per seed paired and independent variance, covariance, ratio, valid groups."""
    rows = []
    known = claims.load_claims()
    for seed, a in audits.items():
        base = f"seed_precision.seed{seed}"
        lower = a.contrast_var("full").value < a.contrast_var("independent").value
        for q, est, direction in (("paired_variance", a.contrast_var("full"), lower),
                                  ("independent_variance", a.contrast_var("independent"), lower),
                                  ("covariance", a.covariance("full"), a.covariance("full").value > 0),
                                  ("ratio", a.ratio(), a.ratio().value < 1)):
            cid = f"{base}.{q}" if f"{base}.{q}" in known else None
            rows.append(row(f"seed {seed}: {q.replace('_', ' ')}", cid, est, direction))
        if f"{base}.valid_groups" in known:
            rows.append(Row.count(f"seed {seed}: valid groups", f"{base}.valid_groups", a.valid))
    return rows


def seed_range_rows(audits: dict[int, PairedAudit]) -> list[dict]:
    """The prose range of the five seed ratios (min and max), no interval (5% rule)."""
    ratios = [a.ratio().value for a in audits.values()]
    out = []
    for q, v in (("ratio_min", min(ratios)), ("ratio_max", max(ratios))):
        cid = f"seed_precision_text.{q}"
        r = Row.compare(f"seed ratios: {q.split('_')[1]}imum", cid, v, direction_agrees=v < 1,
                           exact=audits[next(iter(audits))].ratio().exact)
        out.append(r)
    return out


STRATUM_CLAIMS = {"round one": "round_one", "round two": "round_two", "two actions": "two_actions",
                  "three actions": "three_actions", "all roots": "all_roots"}
STRATUM_QUANTITIES = (("paired_variance", "paired variance"), ("independent_variance", "independent variance"),
                      ("covariance", "covariance"), ("variance_ratio", "variance ratio"))


def _stratum_estimates(a: PairedAudit) -> dict[str, Estimate]:
    return {"paired_variance": a.contrast_var("full"), "independent_variance": a.contrast_var("independent"),
            "covariance": a.covariance("full"), "variance_ratio": a.ratio()}


def _direction(q: str, a: PairedAudit) -> bool:
    if q == "covariance":
        return a.covariance("full").value > 0
    return a.contrast_var("full").value < a.contrast_var("independent").value


def strata_rows(card_audits: dict[str, PairedAudit], root_audits: dict[str, PairedAudit]) -> list[dict]:
    """tab:app-p1-strata.

    Our own-card strata (J, Q, K) have no paper counterpart of their own: the
    paper's "private-card A" and "B" rows do not say which cards they hold.
    Each of those paper rows is therefore compared with all three card
    classes: reproduced when the paper's value lies in the 95% interval of at
    least one class, partly when the paper's direction holds in every class.
    """
    rows = []
    for label, a in card_audits.items():
        for q, text in STRATUM_QUANTITIES:
            rows.append(row(f"own card {label}: {text}", None, _stratum_estimates(a)[q]))
    for paper_label in ("a", "b"):
        for q, text in STRATUM_QUANTITIES:
            cid = f"strata.private_card_{paper_label}.{q}"
            ests = [_stratum_estimates(a)[q] for a in card_audits.values()]
            paper = float(claims.claim(cid))
            inside = any(e.low <= paper <= e.high for e in ests)
            direction = all(_direction(q, a) for a in card_audits.values())
            verdict = claims.REPRODUCED if inside else (claims.PARTLY if direction else claims.NOT_REPRODUCED)
            rows.append({"quantity": f"private-card {paper_label.upper()} (paper) vs J/Q/K: {text}", "paper": paper,
                         "ours": f"{min(e.value for e in ests):.4f} to {max(e.value for e in ests):.4f}",
                         "95% interval": (min(e.low for e in ests), max(e.high for e in ests)),
                         "exact": f"{min(e.exact for e in ests):.4f} to {max(e.exact for e in ests):.4f}",
                         "verdict": verdict, "claim id": cid})
    for label, a in root_audits.items():
        for q, text in STRATUM_QUANTITIES:
            cid = f"strata.{STRATUM_CLAIMS[label]}.{q}"
            rows.append(row(f"{label} (root {a.root!r}): {text}", cid, _stratum_estimates(a)[q], _direction(q, a)))
    return rows


BUDGET_ROWS = {1: "private_card_group_a", 4: "private_card_group_b", 8: "public_round_split"}


def budget_rows(audits: dict[int, PairedAudit]) -> list[dict]:
    """tab:app-p1-root-budget, matched to the paper's rows by budget (per-rollout-mean scale)."""
    rows = []
    for k, a in audits.items():
        label = BUDGET_ROWS.get(k)
        if label:
            rows.append(Row.count(f"budget {k}: pairs", f"root_budget.{label}.pairs", a.valid))
        for q, text in STRATUM_QUANTITIES:
            cid = f"root_budget.{label}.{q}" if label else None
            rows.append(row(f"budget {k}: {text}", cid, _stratum_estimates(a)[q], _direction(q, a)))
    return rows


COUPLING_CLAIMS = {
    "independent": ("ablations.ind.variance", "coupling_factors.ind.covariance"),
    "root_only": ("ablations.root_only.variance", "coupling_factors.root_only.covariance"),
    "continuation_only": ("ablations.continuation.variance", "coupling_factors.stream_only.covariance"),
    "full": ("ablations.cp_grpo_full.variance", "coupling_factors.cp_grpo.covariance"),
    "policy_namespace": ("ablations.policy_namespace.variance", None),
}
PAPER_ORDER = ("independent", "root_only", "continuation_only", "full")


def coupling_rows(audit: PairedAudit) -> list[dict]:
    """tab:app-p1-coupling-factors and tab:app-p1-ablations: contrast variance and covariance per arm.

    Direction: the paper's ordering independent > root_only > continuation_only > full
    of contrast variance (and the reverse for covariance); for the policy-namespace
    ablation, that its interval contains the independent arm's exact value.
    """
    v = {a: audit.contrast_var(a) for a in ARMS}
    order_ok = all(v[x].value > v[y].value for x, y in zip(PAPER_ORDER, PAPER_ORDER[1:]))
    rows = []
    for arm in ARMS:
        var_id, cov_id = COUPLING_CLAIMS[arm]
        if arm == "policy_namespace":
            d = v[arm].low <= v["independent"].exact <= v[arm].high
        else:
            d = order_ok
        rows.append(row(f"{arm}: contrast variance", var_id, v[arm], d))
        cov = audit.covariance(arm)
        rows.append(row(f"{arm}: covariance", cov_id, cov, d if cov_id else None))
    return rows


def ledger_frame(audit: PairedAudit):
    """Logical keys and physical draws per arm, beside the paper's logical keys and calls."""
    import pandas as pd

    paper = {"independent": "ind", "root_only": "root_only", "continuation_only": "stream_only", "full": "cp_grpo"}
    out = []
    for arm, c in audit.collections.items():
        rec = {"arm": arm, "groups": f"{audit.groups:,}"}
        for cat in ("root", "hidden", "chance", "policy"):
            rec[f"keys: {cat}"] = f"{c.logical_keys[cat]:,}"
        for cat in ("hidden", "chance", "policy"):
            rec[f"draws: {cat}"] = f"{c.physical_draws[cat]:,}"
        p = paper.get(arm)
        rec["paper keys"] = f"{claims.claim(f'coupling_factors.{p}.logical_keys'):,}" if p else "—"
        rec["paper calls"] = f"{claims.claim(f'coupling_factors.{p}.calls'):,}" if p else "—"
        out.append(rec)
    return pd.DataFrame(out)


def arm_records(audit: PairedAudit) -> dict:
    """The results file's ``arms.<arm>`` objects (DESIGN.md section 6)."""
    out = {}
    i, j = audit.pair
    key = f"{i}-{j}"
    for arm, c in audit.collections.items():
        s = c.summary()
        pc = s["pairwise_contrasts"][key]
        ex = audit.exact[arm]
        cv = audit.contrast_var(arm)
        out[arm] = {
            "groups": s["groups"], "valid_groups": s["valid_groups"], "failures": s["failures"],
            "contrast": list(audit.pair_names),
            "contrast_mean": pc["contrast_mean"], "contrast_var": pc["contrast_var"],
            "contrast_var_se": pc["contrast_var_se"], "contrast_var_interval": [cv.low, cv.high],
            "cov": s["cov"], "cov_pair": s["cov"][i][j], "cov_pair_interval": [audit.covariance(arm).low,
                                                                             audit.covariance(arm).high],
            "branch_means": s["branch_means"], "branch_vars": s["branch_vars"],
            "exact_contrast_var": ex.contrast_var(i, j), "exact_contrast_mean": ex.contrast_mean(i, j),
            "exact_cov": ex.cov.tolist(), "exact_branch_means": dict(zip(audit.actions, ex.mean.tolist())),
            "logical_keys": c.logical_keys, "physical_draws": c.physical_draws, "digest": c.digest,
        }
    return out


# --- explaining the gap: how the reduction moves with the construction ----------

def deterministic_policies(base_policy, game: str = GAME) -> dict:
    """Two deterministic continuations: the argmax of `base_policy` and 'always check/call'."""
    g = get_game(game)
    table = resolve_policy(g, base_policy)
    argmax = np.zeros_like(table)
    argmax[np.arange(len(table)), table.argmax(1)] = 1.0
    call = np.zeros_like(table)
    call[:, 1] = 1.0                       # Call (check) is legal at every Leduc decision
    return {"argmax of CFR+": table_to_policy(g, argmax), "always check/call": table_to_policy(g, call)}


def exact_reduction(root: str, continuation, budget: int = 1) -> dict | None:
    """Exact contrast variances of the four paper arms and the full/independent ratio; None if unreachable."""
    try:
        m = arm_moments(GAME, root, continuation, budget=budget)
    except ValueError:
        return None
    i, j = contrast_pair(m["full"].actions)
    v = {a: m[a].contrast_var(i, j) for a in PAPER_ORDER}
    ratio = v["full"] / v["independent"] if v["independent"] > 0 else float("nan")
    return {"contrast": f"{m['full'].actions[i]} - {m['full'].actions[j]}", **v, "ratio": ratio,
            "reduction_percent": 100 * (1 - ratio)}


#: The paper's contrast variance of the four coupling arms (tab:main and tab:app-p1-ablations).
PAPER_ARM_VARIANCE = {"independent": "main.independent.variance", "root_only": "ablations.root_only.variance",
                      "continuation_only": "ablations.continuation.variance", "full": "main.cp_grpo_paired.variance"}
PAPER_RATIO = "main_uncertainty.variance_ratio.cp_grpo_paired"


def level_distance(variances: dict) -> float:
    """Mean |log(ours / paper)| over the four arms' contrast variances (0 = the paper's four numbers)."""
    terms = []
    for arm, cid in PAPER_ARM_VARIANCE.items():
        v = variances[arm]
        terms.append(abs(math.log(v / float(claims.claim(cid)))) if v > 0 else float("inf"))
    return float(np.mean(terms))


def construction_grid(continuations: dict, roots=("", "1", "2", "11|"), budget: int = 1):
    """Exact reduction for every (continuation, root), with its distance to the paper's numbers.

    Columns: the four arms' exact contrast variances (chips^2), the ratio full /
    independent, the reduction (percent), the gap |ratio - paper ratio| and the
    level distance (``level_distance``).  Unreachable roots are listed as such.
    """
    import pandas as pd

    paper_ratio = float(claims.claim(PAPER_RATIO))
    out = []
    for name, policy in continuations.items():
        for root in roots:
            r = exact_reduction(root, policy, budget)
            if r is None:
                out.append({"continuation": name, "root": repr(root), "contrast": "unreachable"})
                continue
            out.append({"continuation": name, "root": repr(root), **r,
                        "ratio gap": abs(r["ratio"] - paper_ratio), "level distance": level_distance(r)})
    return pd.DataFrame(out)


def nearest(grid, column: str) -> dict:
    """The grid row with the smallest value of `column` (ties: first), as a plain dict."""
    valid = grid[grid[column].notna()]
    return valid.loc[valid[column].idxmin()].to_dict()


def budget_grid(root: str, continuations: dict, budgets) -> "object":
    """Exact reduction as the continuation budget k grows, for each continuation."""
    import pandas as pd

    out = []
    for name, policy in continuations.items():
        for k in budgets:
            r = exact_reduction(root, policy, k)
            if r is not None:
                out.append({"continuation": name, "budget": k, "independent (per rollout)": r["independent"] / k ** 2,
                            "full (per rollout)": r["full"] / k ** 2, "ratio": r["ratio"],
                            "reduction_percent": r["reduction_percent"],
                            "ratio gap": abs(r["ratio"] - float(claims.claim(PAPER_RATIO)))})
    return pd.DataFrame(out)


# --- figure -----------------------------------------------------------------------

PAPER_VARIANCE_FIGURE = {"independent": "main.independent.variance", "root_only": "ablations.root_only.variance",
                         "continuation_only": "ablations.continuation.variance",
                         "full": "main.cp_grpo_paired.variance",
                         "policy_namespace": "ablations.policy_namespace.variance"}


def plot_contrast_variance(audit: PairedAudit, title: str):
    """Bar chart of contrast variance by arm: ours with 95% bootstrap intervals, exact and paper markers."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.2), dpi=100)
    x = np.arange(len(ARMS))
    est = [audit.contrast_var(a) for a in ARMS]
    vals = np.array([e.value for e in est])
    err = np.array([[e.value - e.low for e in est], [e.high - e.value for e in est]])
    ax.bar(x, vals, color="#7aa6c2", label="ours (Monte Carlo, 95% paired bootstrap)")
    ax.errorbar(x, vals, yerr=err, fmt="none", ecolor="black", capsize=4, lw=1)
    ax.scatter(x, [e.exact for e in est], marker="D", color="black", zorder=3, label="exact (enumeration)")
    ax.scatter(x, [claims.claim(PAPER_VARIANCE_FIGURE[a]) for a in ARMS], marker="x", s=70, color="#c0392b",
               zorder=3, label="paper")
    ax.set_xticks(x, [a.replace("_", "\n") for a in ARMS])
    ax.set_xlabel("coupling arm")
    ax.set_ylabel("contrast variance Var(R1 - R2) (chips$^2$)")
    ax.set_title(title)
    ax.set_ylim(0, max(max(vals), 45) * 1.15)
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    return fig


def mixed_construction_grid(root: str, continuations: dict, top: int | None = None):
    """Exact variances when the independent arm and the coupled arms use *different* continuations.

    A properly paired experiment uses one continuation for every arm.  This
    table asks which mismatched combination (independent arm under
    continuation X, root_only / continuation_only / full under Y) comes
    closest to the paper's four variances; rows sorted by level distance,
    the first `top` kept.
    """
    import pandas as pd

    exact = {name: exact_reduction(root, policy) for name, policy in continuations.items()}
    exact = {k: v for k, v in exact.items() if v is not None}
    out = []
    for x, ex in exact.items():
        for y, ey in exact.items():
            v = {"independent": ex["independent"], "root_only": ey["root_only"],
                 "continuation_only": ey["continuation_only"], "full": ey["full"]}
            ratio = v["full"] / v["independent"] if v["independent"] > 0 else float("nan")
            out.append({"independent arm under": x, "coupled arms under": y, **v, "ratio": ratio,
                        "reduction_percent": 100 * (1 - ratio), "level distance": level_distance(v)})
    df = pd.DataFrame(out).sort_values(["level distance", "independent arm under", "coupled arms under"],
                                       kind="mergesort").reset_index(drop=True)
    return df if top is None else df.head(top)
