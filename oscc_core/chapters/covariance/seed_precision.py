"""Seed precision: the independent and full arms audited at several seeds, one bootstrap per seed.

Rows of tab:seed-precision (contrast variances and covariance in chips^2,
ratio unitless, valid groups) and the prose range of the seed ratios.
"""
from __future__ import annotations

from oscc_core.chapters.covariance.pair_rows import pair_relation, row
from oscc_core.chapters.covariance.paired_audit import HEADLINE_ARMS, PairedAudit, paired_audit
from oscc_core.reporting import claims
from oscc_core.reporting.rows import Relation, Row


def seed_audits(root: str, seeds, n_groups: int, continuation, device: str, n_bootstrap: int) -> dict[int, PairedAudit]:
    """One paired audit of the independent and full arms per seed (bootstrap purpose ``seed/<seed>``)."""
    return {s: paired_audit(root, HEADLINE_ARMS, n_groups, s, continuation, device, n_bootstrap, f"seed/{s}")
            for s in seeds}


def seed_rows(audits: dict[int, PairedAudit]) -> list[Row]:
    """tab:seed-precision: per seed paired and independent variance, covariance, ratio, valid groups."""
    rows = []
    known = claims.load_claims()
    for seed, a in audits.items():
        base = f"seed_precision.seed{seed}"
        for q, est in (("paired_variance", a.contrast_var("full")),
                       ("independent_variance", a.contrast_var("independent")),
                       ("covariance", a.covariance("full")), ("ratio", a.ratio())):
            cid = f"{base}.{q}" if f"{base}.{q}" in known else None
            rows.append(row(f"seed {seed}: {q.replace('_', ' ')}", cid, est, pair_relation(q, a)))
        if f"{base}.valid_groups" in known:
            rows.append(Row.count(f"seed {seed}: valid groups", f"{base}.valid_groups", a.valid))
    return rows


def ratio_range(audits: dict[int, PairedAudit]) -> tuple[float, float]:
    """Smallest and largest variance ratio full / independent over the seeds."""
    ratios = [a.ratio().value for a in audits.values()]
    return min(ratios), max(ratios)


def seed_range_rows(audits: dict[int, PairedAudit]) -> list[Row]:
    """The prose range of the seed ratios (min and max), no interval (5% rule)."""
    exact = audits[next(iter(audits))].ratio().exact
    out = []
    for q, v in zip(("ratio_min", "ratio_max"), ratio_range(audits)):
        out.append(Row.compare(f"seed ratios: {q.split('_')[1]}imum", f"seed_precision_text.{q}", v,
                               relation=Relation("variance ratio paired / independent < 1 (every seed)", v < 1),
                               exact=exact))
    return out
