"""Settings of the paper's runs that this chapter uses or deliberately changes: group counts, seeds, budgets,
the equivalence margin and the interval level.

A setting gets a status, not a verdict (`Row.setting`): *adopted* when our
run uses the paper's value, *differs* with the reason otherwise.  Each row
reads what our run actually uses (the checked notebook parameters, the
interval level of the bootstrap, the design of the ablation), so a run with
other parameters reports its own settings.  Settings of experiments this
chapter does not run (the learning screens' held-out roots, iterations and
seed lists) have no row here.
"""
from __future__ import annotations

import inspect

from oscc_core.chapters.covariance.budget import BUDGET_ROWS
from oscc_core.chapters.covariance.coupling import ABLATION_NAMES, PAPER_ARM_NAMES
from oscc_core.chapters.covariance.pooled import pool_histories
from oscc_core.engine.arms import PAPER_ARMS
from oscc_core.method import stats
from oscc_core.reporting.rows import Row

#: The level of every interval of the chapter (percent): the percentile interval's default, which the
#: estimates of `paired_audit` use.
INTERVAL_LEVEL = round(100 * inspect.signature(stats.percentile_interval).parameters["level"].default)
#: Seeds of our 2x2 ablation: every arm is audited once, at the run's seed (over the pooled audit's roots).
ABLATION_SEEDS = 1


def headline_settings(p) -> list[Row]:
    """tab:main's pairs, tab:main-uncertainty's interval level and the equivalence margin of the prose and of
    tab:marginal-equivalence."""
    rows = [Row.setting(f"{arm}: pairs (groups per arm)", f"main.{cid}.pairs", p.pooled_groups,
                        reason=f"we audit {p.pooled_groups:,} groups per arm over all roots (notebook parameter "
                               f"pooled_groups)")
            for arm, cid in (("independent", "independent"), ("full", "cp_grpo_paired"))]
    rows.append(Row.setting("interval level (%)", "main_uncertainty.confidence_level", INTERVAL_LEVEL,
                            reason=f"our intervals are {INTERVAL_LEVEL}% paired bootstrap percentile intervals"))
    margin = f"our margin is {p.equivalence_margin:g} chips (notebook parameter equivalence_margin)"
    rows.append(Row.setting("equivalence margin (chips)", "text_precision.equivalence_margin", p.equivalence_margin,
                            reason=margin))
    for branch in ("check", "bet"):
        rows.append(Row.setting(f"{branch}: equivalence margin (chips)",
                                f"marginal_equivalence.{branch}.equivalence_margin", p.equivalence_margin,
                                reason=margin))
    return rows


def ablation_settings(p) -> list[Row]:
    """The 2x2 ablation's design (prose, tab:app-p1-coupling-factors, tab:app-p1-ablations) against ours: the
    four arms, but one seed, with the pooled headline audit's roots and groups in every arm."""
    roots = len(pool_histories(p.policy, p.game))
    design = (f"our ablation audits every arm once, on the pooled headline audit's {p.pooled_groups:,} groups over "
              f"{roots} roots with one seed")
    rows = [Row.setting("2x2 ablation: arms", "text_ablation.design.arms", len(PAPER_ARMS), reason=design),
            Row.setting("2x2 ablation: seeds", "text_ablation.design.seeds", ABLATION_SEEDS,
                        reason=design + "; the spread over seeds is measured for the independent and full arms in "
                                        "the five-seed table")]
    for arm, name in PAPER_ARM_NAMES.items():
        rows.append(Row.setting(f"coupling factors, {arm}: roots per seed", f"coupling_factors.{name}.roots_per_seed",
                                roots, reason=design))
        rows.append(Row.setting(f"coupling factors, {arm}: logical keys (root IDs)",
                                f"coupling_factors.{name}.logical_keys", p.pooled_groups,
                                reason=design + "; each of our groups is one root ID, and the paper's logical keys "
                                                "are its roots per seed times its held-out groups"))
    for arm, name in ABLATION_NAMES.items():
        rows.append(Row.setting(f"ablations, {arm}: pairs", f"ablations.{name}.pairs", p.pooled_groups,
                                reason=design))
    return rows


def seed_and_stratum_settings(p) -> list[Row]:
    """tab:seed-precision's caption and prose (seeds, groups per seed) and tab:app-p1-root-budget's budgets and
    pairs.  (The paper's nine-root screen is a learning screen over iterations and seeds, which this chapter does
    not run: its settings have no row here.)"""
    seeds = f"we run {len(p.seeds)} seeds (notebook parameter seeds)"
    groups = (f"we audit {p.seed_groups:,} groups per arm and seed, pooled over all roots and, as a sensitivity "
              f"reading, at the audited root alone (notebook parameter seed_groups)")
    rows = [Row.setting("five-seed table: seeds", cid, len(p.seeds), reason=seeds)
            for cid in ("seed_precision.caption.seeds", "seed_precision_text.seeds")]
    rows += [Row.setting("five-seed table: valid groups per seed", cid, p.seed_groups, reason=groups)
             for cid in ("seed_precision.caption.valid_groups_per_seed", "seed_precision_text.valid_groups_per_seed")]
    for k in p.budgets:
        label = BUDGET_ROWS.get(k)
        if label is None:
            continue
        rows.append(Row.setting(f"budget {k}: budget (rollouts per branch)", f"root_budget.{label}.budget", k,
                                reason=f"we match the paper's rows by budget; our budget is {k}"))
        rows.append(Row.setting(f"budget {k}: pairs", f"root_budget.{label}.pairs", p.budget_groups,
                                reason=f"we audit {p.budget_groups:,} groups per arm and budget (notebook parameter "
                                       "budget_groups)"))
    return rows


def setting_rows(p) -> list[Row]:
    """Every setting row of the chapter, from the checked notebook parameters `p`."""
    return headline_settings(p) + ablation_settings(p) + seed_and_stratum_settings(p)
