"""Seed precision: the independent and full arms audited at several seeds, one bootstrap per seed.

Rows of tab:seed-precision (contrast variances and covariance in chips^2,
ratio unitless, valid groups) and the prose range of the seed ratios.

The paper prints each number for ONE of its seeds.  Its seed 13 and ours
share no random numbers (the label names a stream of the paper's code, not
ours), so a paper value is compared with the spread of our seeds: the 95%
prediction interval of one more seed's value over our seeds' values
(`Row.one_seed`), never with the bootstrap interval of our seed of the same
label, which measures only the noise within that one seed.  Our value at the
seed of the same label is shown beside it.
"""
from __future__ import annotations

from dataclasses import replace

from oscc_core.chapters.covariance.pair_rows import POSITIVE, every, pair_relation
from oscc_core.chapters.covariance.paired_audit import HEADLINE_ARMS, PairedAudit, paired_audit
from oscc_core.reporting import claims
from oscc_core.reporting.rows import Relation, Row

#: The quantities of tab:seed-precision: (claim-id suffix, text, estimate of a paired audit).
SEED_QUANTITIES = (("paired_variance", "paired variance", lambda a: a.contrast_var("full")),
                   ("independent_variance", "independent variance", lambda a: a.contrast_var("independent")),
                   ("covariance", "covariance", lambda a: a.covariance("full")),
                   ("ratio", "ratio", lambda a: a.ratio()))


def seed_audits(root: str, seeds, n_groups: int, continuation, device: str, n_bootstrap: int) -> dict[int, PairedAudit]:
    """One paired audit of the independent and full arms per seed (bootstrap purpose ``seed/<seed>``)."""
    return {s: paired_audit(root, HEADLINE_ARMS, n_groups, s, continuation, device, n_bootstrap, f"seed/{s}")
            for s in seeds}


def every_seed(q: str, audits: dict[int, PairedAudit]) -> Relation:
    """The relation the paper states for quantity `q` in every seed (bold: paired below independent; covariance
    positive; ratio below 1): holds when it holds in each of our seeds, resolved when each seed's paired
    bootstrap interval resolves it."""
    relations = [pair_relation(q, a) for a in audits.values()]
    return every(relations, f"{relations[0].text} in every seed")


def one_seed(quantity: str, claim_id: str, q: str, ours: float, values: list[float], relation: Relation) -> Row:
    """`Row.one_seed`, and for a quantity positive by definition (`pair_rows.POSITIVE`) the verdict rule with
    ``positive=True``: a prediction interval is symmetric, and over few seeds it can reach 0."""
    out = Row.one_seed(quantity, claim_id, ours, values, relation)
    if q not in POSITIVE:
        return out
    low, high = out.interval
    return replace(out, verdict=claims.verdict(out.paper, ours, low, high, relation=relation, positive=True))


def seed_rows(audits: dict[int, PairedAudit]) -> list[Row]:
    """tab:seed-precision: per paper seed, paired and independent variance, covariance and ratio against the 95%
    prediction interval over our seeds; valid groups as exact counts.

    Valid groups per seed is a check, not a setting: the run asks for a number of groups per seed (the setting
    of the table's caption) and this counts those that pass every audit predicate, exactly; a failed or
    filtered group would lower it."""
    rows = []
    known = claims.load_claims()
    values = {q: [f(a).value for a in audits.values()] for q, _, f in SEED_QUANTITIES}
    relations = {q: every_seed(q, audits) for q, _, _ in SEED_QUANTITIES}
    for seed, a in audits.items():
        base = f"seed_precision.seed{seed}"
        for q, text, f in SEED_QUANTITIES:
            if f"{base}.{q}" in known:
                rows.append(one_seed(f"seed {seed}: {text}", f"{base}.{q}", q, f(a).value, values[q], relations[q]))
        if f"{base}.valid_groups" in known:
            rows.append(Row.count(f"seed {seed}: valid groups", f"{base}.valid_groups", a.valid))
    return rows


def ratio_range(audits: dict[int, PairedAudit]) -> tuple[float, float]:
    """Smallest and largest variance ratio full / independent over the seeds."""
    ratios = [a.ratio().value for a in audits.values()]
    return min(ratios), max(ratios)


def seed_range_rows(audits: dict[int, PairedAudit]) -> list[Row]:
    """The prose range of the seed ratios (min and max).  Each end of the paper's range is the ratio of one of
    its seeds, so it is compared like a one-seed value: with the 95% prediction interval over our seeds; our
    smallest (largest) ratio is shown beside it."""
    ratios = [a.ratio().value for a in audits.values()]
    relation = every_seed("ratio", audits)
    return [one_seed(f"seed ratios: {q.split('_')[1]}imum", f"seed_precision_text.{q}", "ratio", v, ratios, relation)
            for q, v in zip(("ratio_min", "ratio_max"), ratio_range(audits))]


def glue_values(rows: list[Row]) -> dict:
    """Per quantity of tab:seed-precision, how many of the paper's seeds lie inside our prediction interval
    (``seed_inside_<q>``) out of how many were compared (``seed_compared``), and the interval itself
    (``seed_pi_<q>_low`` / ``_high``)."""
    out = {}
    for q, _, _ in SEED_QUANTITIES:
        mine = [r for r in rows if r.claim_id and r.claim_id.startswith("seed_precision.seed")
                and r.claim_id.endswith(f".{q}")]
        out[f"seed_inside_{q}"] = sum(r.interval[0] <= float(r.paper) <= r.interval[1] for r in mine)
        out["seed_compared"] = len(mine)
        if mine:
            out[f"seed_pi_{q}_low"], out[f"seed_pi_{q}_high"] = mine[0].interval
    return out
