"""Seed precision: the independent and full arms audited at several seeds, under two readings of the paper's design.

Rows of tab:seed-precision (contrast variances and covariance in chips^2,
ratio unitless, valid groups) and the prose range of the seed ratios.

The paper prints each number for ONE of its seeds.  Its seed 13 and ours
share no random numbers (the label names a stream of the paper's code, not
ours), so a paper value is compared with the spread of our seeds: the 95%
prediction interval of one more seed's value over our seeds' values
(`Row.one_seed`), never with the bootstrap interval of our seed of the same
label, which measures only the noise within that one seed.  Our value at the
seed of the same label is shown beside it.

Readings.  The paper's seed rows count "5,120 valid groups" per seed and its
design uses six roots per seed, but it does not say over which roots a seed's
contrast variance is taken.  The book reads a contrast variance as the paper's
headline does, pooled over all roots (`POOLED_READING`, the paper's reading:
each seed is a pooled all-roots audit, `pooled_seed_audits`), and keeps the
audited root alone as a sensitivity reading (`root_reading`, `seed_audits`).
Each claim gets one row per reading, combined by `Row.under_readings` with the
pooled reading as the paper's: where the two disagree the row takes the pooled
verdict and says that it depends on the reading.

The relation the paper states for its seeds ("each paired variance is below
its independent counterpart", bold in every seed) is about each seed's own
sample, so it is decided on our per-seed estimates (not the exact values, which
are the same for every seed) and resolved by each seed's paired bootstrap.
"""
from __future__ import annotations

from dataclasses import replace

from oscc_core.chapters.covariance.pair_rows import POSITIVE, every, pair_relation
from oscc_core.chapters.covariance.paired_audit import HEADLINE_ARMS, PairedAudit, paired_audit
from oscc_core.chapters.covariance.pooled import pooled_roots
from oscc_core.reporting import claims
from oscc_core.reporting.rows import Relation, Row

#: The quantities of tab:seed-precision: (claim-id suffix, text, estimate of a paired audit).
SEED_QUANTITIES = (("paired_variance", "paired variance", lambda a: a.contrast_var("full")),
                   ("independent_variance", "independent variance", lambda a: a.contrast_var("independent")),
                   ("covariance", "covariance", lambda a: a.covariance("full")),
                   ("ratio", "ratio", lambda a: a.ratio()))
#: The paper's reading of a seed's contrast variance: every root of the pooled audit, as its headline.
POOLED_READING = "all roots pooled"
#: The claims of the prose's range of seed ratios: claim id -> (min or max, its words).
RANGE_CLAIMS = {"seed_precision_text.ratio_min": (min, "smallest"), "seed_precision_text.ratio_max": (max, "largest")}


def root_reading(root: str) -> str:
    """The sensitivity reading of a seed's contrast variance: the audited root alone."""
    return f"root {root!r} alone"


def seed_audits(root: str, seeds, n_groups: int, continuation, device: str, n_bootstrap: int) -> dict[int, PairedAudit]:
    """One paired audit of the independent and full arms per seed at `root` alone (bootstrap purpose
    ``seed/<seed>``): the sensitivity reading."""
    return {s: paired_audit(root, HEADLINE_ARMS, n_groups, s, continuation, device, n_bootstrap, f"seed/{s}")
            for s in seeds}


def pooled_seed_audits(seeds, n_groups: int, continuation, device: str, n_bootstrap: int,
                       weighting: str = "visits") -> dict[int, PairedAudit]:
    """One pooled all-roots audit of the independent and full arms per seed (`pooled.pooled_roots`: `n_groups`
    groups over every root, weighted as the headline pool; bootstrap purpose ``seed/<seed>/pooled/<root>``):
    the paper's reading."""
    return {s: pooled_roots(HEADLINE_ARMS, n_groups, s, continuation, device, n_bootstrap, weighting,
                            purpose=f"seed/{s}/pooled/{{root}}").audit() for s in seeds}


def every_seed(q: str, audits: dict[int, PairedAudit]) -> Relation:
    """The relation the paper states for quantity `q` in every seed (bold: paired below independent; covariance
    positive; ratio below 1), on each seed's own estimates: holds when it holds in each of our seeds, resolved
    when each seed's paired bootstrap interval resolves it."""
    relations = [pair_relation(q, a, exact=False) for a in audits.values()]
    return every(relations, f"{relations[0].text} in every seed")


def one_seed(quantity: str, claim_id: str, q: str, ours: float, values: list[float], relation: Relation) -> Row:
    """`Row.one_seed`, and for a quantity positive by definition (`pair_rows.POSITIVE`) the verdict rule with
    ``positive=True``: a prediction interval is symmetric, and over few seeds it can reach 0."""
    out = Row.one_seed(quantity, claim_id, ours, values, relation)
    if q not in POSITIVE:
        return out
    low, high = out.interval
    return replace(out, verdict=claims.verdict(out.paper, ours, low, high, relation=relation, positive=True))


def reading_rows(audits: dict[int, PairedAudit], reading: str) -> list[Row]:
    """tab:seed-precision under one reading (`audits`: seed -> its paired audit under that reading): per paper
    seed, paired and independent variance, covariance and ratio against the 95% prediction interval over our
    seeds, valid groups as exact counts, then the prose's smallest and largest ratio; every row names
    `reading`.

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
    for cid, (pick, word) in RANGE_CLAIMS.items():
        rows.append(one_seed(f"seed ratios: the {word}", cid, "ratio", pick(values["ratio"]), values["ratio"],
                             relations["ratio"]))
    return [replace(r, reading=reading) for r in rows]


def seed_rows(by_reading: dict[str, dict[int, PairedAudit]], paper_reading: str = POOLED_READING) -> list[Row]:
    """tab:seed-precision and the prose's ratio range, each claim under every reading of `by_reading` (reading
    -> seed -> paired audit), combined by `Row.under_readings` with `paper_reading` as the paper's reading.

    The prose's smallest and largest ratio are the ratios of two of the paper's seeds (the claims file links
    each to its seed's entry, `same_as`): where we run that seed, the row is a printing of that seed's row
    (`Row.printed_as`), so one paper quantity has one comparison; otherwise it compares our smallest (largest)
    seed ratio's prediction interval."""
    per_reading = {name: reading_rows(audits, name) for name, audits in by_reading.items()}
    order = [r.claim_id for r in next(iter(per_reading.values()))]
    combined = {cid: Row.under_readings([next(r for r in rows if r.claim_id == cid)
                                         for rows in per_reading.values()], paper_reading) for cid in order}
    for cid, (_, word) in RANGE_CLAIMS.items():
        linked = claims.claim_entry(cid).get("same_as")
        if linked in combined:
            combined[cid] = combined[linked].printed_as(
                cid, f"seed ratios: the {word} ({combined[linked].quantity.split(':')[0]})",
                f"the paper's {word} seed ratio is the ratio of its {combined[linked].quantity.split(':')[0]}")
    return [combined[cid] for cid in order]


def ratio_range(audits: dict[int, PairedAudit]) -> tuple[float, float]:
    """Smallest and largest variance ratio full / independent over the seeds."""
    ratios = [a.ratio().value for a in audits.values()]
    return min(ratios), max(ratios)


def glue_values(rows: list[Row], readings: dict[str, str]) -> dict:
    """Per quantity of tab:seed-precision and per reading (`readings`: glue prefix -> reading name, e.g.
    {"seed": "all roots pooled", "root_seed": "root '' alone"}): how many of the paper's seeds lie inside our
    prediction interval (``<prefix>_inside_<q>``) out of how many were compared (``seed_compared``), and the
    interval itself (``<prefix>_pi_<q>_low`` / ``_high``); and how many verdicts depend on the reading
    (``seed_reading_dependent``)."""
    out = {}
    seed_rows_ = [r for r in rows if r.claim_id and r.claim_id.startswith("seed_precision.seed")]
    for q, _, _ in SEED_QUANTITIES:
        mine = [r for r in seed_rows_ if r.claim_id.endswith(f".{q}")]
        out["seed_compared"] = len(mine)
        for prefix, name in readings.items():
            under = [next(x for x in r.readings if x["reading"] == name) for r in mine]
            out[f"{prefix}_inside_{q}"] = sum(x["interval"][0] <= float(r.paper) <= x["interval"][1]
                                              for r, x in zip(mine, under))
            if under:
                out[f"{prefix}_pi_{q}_low"], out[f"{prefix}_pi_{q}_high"] = under[0]["interval"]
    out["seed_reading_dependent"] = sum(bool(r.reading_dependent) for r in rows if r.printing_of is None)
    return out
