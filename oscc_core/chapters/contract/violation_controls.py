"""Controlled violations of the contract and the admissible arms, each through the certificate.

A control breaks one condition on purpose (`engine.violations.CONTROLS`) on
the groups of a clean run; beside the certificate's decision it measures the
affected groups, the marginal shift of the branch returns (chips), the replay
failure rate and the apparent change of the contrast variance against the
independent arm (percent, with a 95% interval computed on the log scale of
the variance ratio).  The admissible arms (`engine.arms.ARMS`) must all
be accepted.
"""
from __future__ import annotations

import math

import torch

from oscc_core.chapters.contract.predicates import certificate
from oscc_core.chapters.contract.run_audit import audit_run, contrast_var
from oscc_core.engine.arms import ARMS
from oscc_core.engine.collector import collect
from oscc_core.engine.observation_audit import observation_audit
from oscc_core.engine.violations import CONTROLS, Violation
from oscc_core.exact.arm_moments import arm_moments

#: The two-sided 95% normal quantile, for every normal and log-scale interval of the chapter.
Z95 = 1.959963984540054


def _variance_ratio(bad: dict, independent: dict) -> tuple[float, float, float, float]:
    """Contrast-variance ratio faulty / independent, its delta-method standard error, and its 95% interval on
    the log scale: ratio * exp(+-Z95 se(log ratio)), with se(log ratio)^2 the sum of the two squared relative
    standard errors (the two variance estimates treated as independent).  A ratio of variances is positive,
    so its interval never reaches 0 (the change never reaches -100%)."""
    ratio = bad["contrast_var"] / independent["contrast_var"]
    rel = ((bad["contrast_var_se"] / bad["contrast_var"]) ** 2
           + (independent["contrast_var_se"] / independent["contrast_var"]) ** 2) ** 0.5
    return ratio, ratio * rel, ratio * math.exp(-Z95 * rel), ratio * math.exp(Z95 * rel)


def violation_control(game, root: str, arm: str, n_groups: int, seed: int, violation: Violation,
                      device: str = "cpu") -> dict:
    """One controlled violation beside the clean arm and the independent arm on the same groups."""
    bad = audit_run(game, root, arm, n_groups, seed, violation, device=device)
    clean = audit_run(game, root, arm, n_groups, seed, None, device=device)
    ind = collect(game, root, "independent", n_groups, seed, device=device)
    cert = certificate(bad, observation_audit(game, violation))
    rb, rc = bad.collection.returns.to(torch.float64), clean.collection.returns.to(torch.float64)
    diff = (rb - rc).mean(1)
    shift, shift_se = float(diff.mean()), float(diff.std() / len(diff) ** 0.5)
    vb, vi, vc = contrast_var(bad.collection.returns), contrast_var(ind.returns), contrast_var(clean.collection.returns)
    ratio, ratio_se, ratio_low, ratio_high = _variance_ratio(vb, vi)
    replay_fail = bad.sealed_digest != clean.sealed_digest
    affected = replay_fail | (bad.address_digest != clean.address_digest)
    return {"name": violation.name, "condition": violation.condition, "expected_code": violation.expected_code,
            "groups": n_groups, "affected_groups": int(affected.sum()), "decision": cert["decision"],
            "rejected": cert["rejected_groups"], "flagged": cert["flagged_groups"], "predicates": cert["predicates"],
            "failures": bad.failures, "expected_code_groups": int(bad.flags[violation.expected_code].sum()),
            "marginal_shift": shift, "marginal_shift_se": shift_se,
            "replay_failure_rate": float(replay_fail.double().mean()),
            "contrast_var": vb["contrast_var"], "contrast_var_clean": vc["contrast_var"],
            "contrast_var_independent": vi["contrast_var"],
            "variance_change_pct": 100 * (ratio - 1), "variance_change_pct_se": 100 * ratio_se,
            "variance_change_pct_low": 100 * (ratio_low - 1), "variance_change_pct_high": 100 * (ratio_high - 1),
            "variance_change_vs_clean_pct": 100 * (vb["contrast_var"] / vc["contrast_var"] - 1)}


def violation_controls(game, root: str, arm: str, n_groups: int, seed: int, device: str = "cpu",
                       controls: dict[str, Violation] = CONTROLS) -> dict[str, dict]:
    """`violation_control` for every control, by name."""
    return {name: violation_control(game, root, arm, n_groups, seed, v, device) for name, v in controls.items()}


def admissible_check(game, root: str, arm: str, n_groups: int, seed: int, device: str = "cpu") -> dict:
    """An admissible arm through the certificate, and its replay against a second run of the same streams."""
    run = audit_run(game, root, arm, n_groups, seed, None, device=device)
    cert = certificate(run, observation_audit(game))
    replay = audit_run(game, root, arm, n_groups, seed, None, device=device)
    return {"arm": arm, "groups": n_groups, "decision": cert["decision"], "rejected": cert["rejected_groups"],
            "flagged": cert["flagged_groups"], "failures": run.failures,
            "replay_failure_rate": float((run.sealed_digest != replay.sealed_digest).double().mean()),
            "max_abs_z": max(abs(z) for z in cert["marginal"]["z"].values())}


def admissible_checks(game, root: str, n_groups: int, seed: int, device: str = "cpu", arms=tuple(ARMS)) -> dict:
    """`admissible_check` for every arm (all five by default), by arm name."""
    return {arm: admissible_check(game, root, arm, n_groups, seed, device) for arm in arms}


def exact_variance_change_pct(game, root: str, arm: str = "full") -> float:
    """Exact contrast-variance change of a clean arm against the independent arm, in percent."""
    m = arm_moments(game, root)
    return 100 * (m[arm].contrast_var() / m["independent"].contrast_var() - 1)
