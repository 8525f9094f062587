"""Paper-beside-ours rows of the chapter's tables, one builder per paper table, and the settings of the paper's
runs in a table of their own.

Every number is the seed mean of exact per-checkpoint values (chips, unless
a row says otherwise) with its 95% t-interval over seeds (variances: on the
log scale, so it never reaches 0).  A relation is declared where the paper
states one for the number (an ordering of arms or a sign): it *holds* when our
seed means satisfy it and is *resolved* when every paired per-seed difference
it involves has a 95% t-interval on the stated side of 0.  A value the paper
prints for one seed is compared with the 95% prediction interval over our
seeds.  Paper quantities whose meaning the paper leaves open are compared
under every reading the chapter computes (`readings.Readings.combine`), and a
reading whose rule bound the paper's number breaks (`feasibility`) is
impossible under the rules.
"""
from __future__ import annotations

from dataclasses import replace

from oscc_core.chapters.solver.readings import POOLED_ARMS, Readings
from oscc_core.chapters.solver.training import LEARNED_ARMS
from oscc_core.games import get_game
from oscc_core.games.leduc import MAX_RAISES
from oscc_core.learning import summary
from oscc_core.method.stats import t_interval
from oscc_core.reporting import claims, printings, reading_sets
from oscc_core.reporting.claims import Relation
from oscc_core.reporting.numbers import mean_count_text
from oscc_core.reporting.rows import NO_REFERENCE_RATIO, Row, unshown_impossible

#: The paper's row label of each arm in its policy and solver tables.
POLICY_ROW = {"cp_grpo": "cp_grpo_paired", "independent": "independent", "grpo": "standard_grpo",
              "ppo": "standard_ppo", "uniform": "uniform_policy"}
CONSTRUCTION_ROW = {"cp_grpo": "cp_grpo_paired", "independent": "independent_rollouts", "grpo": "standard_grpo"}
COST_REFERENCE = "independent"        # the arm each cost is divided by (the paper's baseline)
NO_SOLVER_QUERIES = ("our evaluation is exact over the whole game tree: it issues no solver queries, so there are "
                     "no queries, joins or timeouts to count")
NO_STRATA = ("our learners draw decision points from the whole game and every checkpoint is evaluated exactly over "
             "every deal, so no root strata are set aside")
NO_HELD_OUT = ("every checkpoint is evaluated exactly over all 30 private-card deals (and every public card), "
               "not on a sample of held-out roots; the chapter computes the held-out reading from the exact "
               "per-deal values")
HELD_OUT_CLAIM = "learning_boundary.policy_solver.heldout_roots_per_seed"
#: Why a cost ratio of two arms trained at the same budget of physical calls agrees by construction.
MATCHED_BUDGET = ("every arm trains at the same budget of physical calls, so their ratio is 1 up to the last group "
                  "by construction: it shows that they cost the same work, it measures nothing about the paper's "
                  "seconds")
__all__ = ["unshown_impossible"]


def _estimate(quantity, claim_id, records, arm, key, relation=None) -> Row:
    iv = summary.interval(records, arm, key)
    return Row.compare(quantity, claim_id, iv.mean, iv.low, iv.high, relation, positive=key in summary.POSITIVE)


def mean_ledger(records, arm: str, key: str) -> float:
    """The seed mean of one ledger count (`key`: physical_calls, transitions, ...) of an arm's runs."""
    values = [rec["ledger"][key] for rec in records[arm].values()]
    return sum(values) / len(values)


def cost_ratio_row(quantity: str, claim_id: str, reference_id: str, records, arm: str) -> Row:
    """The paper's wall time of `arm` divided by the reference arm's (`COST_REFERENCE`), against our ratio of their
    mean physical calls (exact and portable; the budget matches them, so a ratio near 1 says the arms cost the
    same work); the ratio of transitions stands in the reason beside it."""
    if arm == COST_REFERENCE:
        return Row.not_compared(quantity, claim_id, NO_REFERENCE_RATIO)
    calls = mean_ledger(records, arm, "physical_calls") / mean_ledger(records, COST_REFERENCE, "physical_calls")
    steps = mean_ledger(records, arm, "transitions") / mean_ledger(records, COST_REFERENCE, "transitions")
    row = Row.ratio(quantity, claim_id, reference_id, calls)
    own = f"ratio to {COST_REFERENCE} in physical calls (seconds are not portable); in transitions it is {steps:.3f}"
    # a wall time is not compared in size (`reporting.comparability`): its family's reason stays first
    return replace(row, reason=own if row.reason is None else f"{row.reason}; {own}"
                   ).true_by_construction(MATCHED_BUDGET)


# ----- the three-seed diagnostic ------------------------------------------------------------------
def diagnostic_rows(p, exploit: dict) -> list[Row]:
    """The three-seed diagnostic; exploit[arm][seed] = final exploitability of the average policy (chips).

    The paper prints one number per seed: each is compared with the 95% prediction interval of one more seed
    over our seeds (`Row.one_seed`; our value at the same seed label beside it).  Every per-seed row declares the
    relation the paper states for them, "the independent arm is lower on all three seeds", decided on our exact
    per-seed exploitabilities; the mean difference declares the sign the paper prints for it, below 0, on our
    seed mean with its 95% t-interval."""
    seeds = p.diagnostic_seeds
    diff = {s: exploit["independent"][s] - exploit["cp_grpo"][s] for s in seeds}
    iv = t_interval([diff[s] for s in seeds])
    sign = Relation(f"independent < paired on all {len(seeds)} seeds (exact per seed)",
                    all(diff[s] < 0 for s in seeds))
    rows = []
    for arm, label in (("cp_grpo", "paired"), ("independent", "independent")):
        spread = [exploit[arm][s] for s in seeds]
        for s in seeds:
            rows.append(Row.one_seed(f"{label} final exploitability, seed {s} (chips)",
                                     f"text_bounded.three_seed.{label}.final_exploitability_seed{s}",
                                     exploit[arm][s], spread, relation=sign))
    for s in seeds:
        rows.append(Row.one_seed(f"independent - paired, seed {s} (chips)", f"fig_three_seed.seed{s}.difference",
                                 diff[s], [diff[t] for t in seeds], relation=sign))
    rows.append(Row.compare("mean independent - paired (chips)", "fig_three_seed.mean_difference", iv.mean, iv.low,
                            iv.high, Relation.side("mean difference < 0", iv.mean, iv.low, iv.high, below=0.0)))
    return rows


# ----- orderings ----------------------------------------------------------------------------------
def _means_order(records, arm, others, key, better: str) -> bool:
    """Whether `arm`'s seed mean of `key` beats every arm of `others` (`better` "high" or "low")."""
    mine = summary.values(records, arm, key).mean()
    theirs = [summary.values(records, o, key).mean() for o in others]
    return all(mine > t if better == "high" else mine < t for t in theirs)


def ordering(records, arm, key, better: str) -> Relation:
    """The paper's ordering for `key` (CP-GRPO best among the learned arms, the uniform policy worst): holds on
    our seed means, resolved only when every paired per-seed difference's 95% interval lies on the stated side of
    0 (`summary.resolved_order`)."""
    high = better == "high"
    if arm == "cp_grpo":
        others, subject, text = [a for a in LEARNED_ARMS if a != "cp_grpo"], "cp_grpo", \
            f"cp_grpo {'highest' if high else 'lowest'} among learned arms (paired, 95%)"
    elif arm == "uniform":
        better = "low" if high else "high"
        others, subject, text = list(LEARNED_ARMS), "uniform", \
            f"uniform {'lowest' if high else 'highest'} of all arms (paired, 95%)"
    else:
        others, subject, text = [arm], "cp_grpo", f"cp_grpo {'>' if high else '<'} {arm} (paired, 95%)"
    return Relation(text, _means_order(records, subject, others, key, better),
                    summary.resolved_order(records, subject, others, key, better))


#: The orderings the paper's policy and solver tables state (bold marks, table notes): (arm, key, better).
PAPER_ORDERINGS = (("cp_grpo", "mean_return", "high"), ("cp_grpo", "task_success", "high"),
                   ("cp_grpo", "update_variance", "low"), ("cp_grpo", "player0_value", "high"),
                   ("cp_grpo", "nash_conv", "low"), ("cp_grpo", "exploitability", "low"),
                   ("cp_grpo", "contrast_variance_exact", "low"), ("uniform", "mean_return", "high"),
                   ("uniform", "task_success", "high"), ("uniform", "exploitability", "low"))


def orderings(records) -> list[dict]:
    """Each ordering the paper states: {quantity, relation, holds on seed means, resolved at 95%}."""
    out = []
    for arm, key, better in PAPER_ORDERINGS:
        rel = ordering(records, arm, key, better)
        out.append({"quantity": key.replace("_", " "), "relation": rel.text,
                    "holds on seed means": "yes" if rel.holds else "no",
                    "resolved (every paired difference, 95%)": "yes" if rel.resolved else "no"})
    return out


# ----- the paper's tables -------------------------------------------------------------------------
#: The reading of an update variance at one step size, in the words every chapter uses (`reporting.reading_sets`).
eta_reading = reading_sets.eta_reading


def update_variance_row(records, arm: str, by_eta: dict | None = None, etas: dict | None = None) -> Row:
    """tab:measured-grpo-ppo's update variance of a learned arm (logits^2, seed mean with its 95% interval on the log
    scale) and the paper's ordering (CP-GRPO lowest, paired, 95%).  The paper gives no step size, and an update
    variance grows with eta squared, so with `by_eta` ({eta: {arm: {seed: {"update_variance": v}}}}) it is
    compared under one reading per eta: the arm's own eta first (`etas`), then every eta of `by_eta`, each with
    the ordering at that eta (`Row.under_readings`, no reading the paper's text fixes)."""
    cid = f"grpo_ppo.{POLICY_ROW[arm]}.update_variance"
    quantity = f"{arm}: update variance (logits^2)"
    own = _estimate(quantity, cid, records, arm, "update_variance", ordering(records, arm, "update_variance", "low"))
    if not by_eta:
        return own
    listed = [replace(own, reading=eta_reading(arm=arm, etas=etas))]
    for eta, at in by_eta.items():
        row = _estimate(quantity, cid, at, arm, "update_variance", ordering(at, arm, "update_variance", "low"))
        listed.append(replace(row, reading=eta_reading(eta)))
    return Row.under_readings(listed)


def policy_rows(records, readings: Readings | None = None, by_eta: dict | None = None,
                etas: dict | None = None) -> list[Row]:
    """tab:measured-grpo-ppo: return and success (mean and SD), update variance (under each eta of `by_eta`:
    `update_variance_row`), value, exploitability, cost."""
    rows = []
    for arm, label in POLICY_ROW.items():
        cid = f"grpo_ppo.{label}"
        # the paper states no ordering of the uniform policy's update variance (only its "weakest decision quality")
        update = (update_variance_row(records, arm, by_eta, etas) if arm in LEARNED_ARMS else
                  _estimate(f"{arm}: update variance (logits^2)", f"{cid}.update_variance", records, arm,
                            "update_variance"))
        rows += [_estimate(f"{arm}: return vs opponent (chips)", f"{cid}.return_mean", records, arm, "mean_return",
                           ordering(records, arm, "mean_return", "high")),
                 Row.compare(f"{arm}: return SD over seeds (chips)", f"{cid}.return_sd",
                             summary.sd(records, arm, "mean_return")),
                 _estimate(f"{arm}: task success", f"{cid}.success_mean", records, arm, "task_success",
                           ordering(records, arm, "task_success", "high")),
                 Row.compare(f"{arm}: task success SD over seeds", f"{cid}.success_sd",
                             summary.sd(records, arm, "task_success")),
                 update,
                 _estimate(f"{arm}: player-0 value (chips)", f"{cid}.value", records, arm, "player0_value",
                           ordering(records, arm, "player0_value", "high")),
                 _estimate(f"{arm}: exploitability (chips)", f"{cid}.exploitability", records, arm,
                           "exploitability", ordering(records, arm, "exploitability", "low")),
                 cost_ratio_row(f"{arm}: cost ratio", f"{cid}.cost",
                                f"grpo_ppo.{POLICY_ROW[COST_REFERENCE]}.cost", records, arm)]
    return _combined(rows, readings)


def unify_tables(tables: dict) -> dict:
    """The chapter's tables (name -> rows) with every printing of one paper quantity taking the verdict of the
    printing that decides its `same_as` group (`reporting.printings.unify`, over all the chapter's rows at once),
    each table keeping its rows in order."""
    names = list(tables)
    flat = printings.unify([r for name in names for r in tables[name]])
    out, at = {}, 0
    for name in names:
        out[name] = flat[at:at + len(tables[name])]
        at += len(tables[name])
    return out


def one_row_per_claim(tables: dict) -> None:
    """Raise when two rows of the chapter's tables (name -> rows) name one claim id: the ledger takes one primary
    row per claim."""
    unshown_impossible({}, tables)


def chapter_tables(tables: dict) -> dict:
    """The chapter's closing tables (name -> rows): every printing of one paper quantity with its group's verdict
    (`unify_tables`), refused when two rows name one claim id (`one_row_per_claim`)."""
    out = unify_tables(tables)
    one_row_per_claim(out)
    return out


def flat(tables: dict) -> list[Row]:
    """Every row of the chapter's tables (name -> rows), table by table in order."""
    return [r for rows in tables.values() for r in rows]


def _combined(rows: list[Row], readings: Readings | None) -> list[Row]:
    return rows if readings is None else [readings.combine(r) for r in rows]


def construction_arm(claim_id: str | None) -> str | None:
    """The arm of a tab:measured-independent claim id, or None."""
    by_label = {f"measured_independent.{label}.": arm for arm, label in CONSTRUCTION_ROW.items()}
    return next((arm for prefix, arm in by_label.items() if (claim_id or "").startswith(prefix)), None)


def contrast_row(records, arm: str, key: str = "contrast_variance_exact") -> Row:
    """tab:measured-independent's contrast variance of `arm`'s construction (exact, chips^2, seed mean with its
    log-scale interval; record `key`: at the chapter's root, or "contrast_pooled") and its ordering against the
    paired arm, resolved on paired per-seed differences."""
    other = "independent" if arm == "cp_grpo" else arm
    rel = Relation("paired < independent" if arm == "cp_grpo" else f"cp_grpo < {arm}",
                   _means_order(records, "cp_grpo", [other], key, "low"),
                   summary.resolved_order(records, "cp_grpo", [other], key, "low"))
    return _estimate(f"{arm}: contrast variance (chips^2)", f"measured_independent.{CONSTRUCTION_ROW[arm]}"
                     ".contrast_variance", records, arm, key, rel)


def contrast_readings(rows: list[Row], records: dict, readings: Readings, root: str = "") -> list[Row]:
    """`rows` (tab:measured-independent's) with each contrast-variance row read both ways the book reads a
    contrast variance (`reporting.reading_sets`): pooled over every decision point (the paper's reading, which
    decides) and at the decision point `root` (the row as the screen computed it), each with its ordering on its
    own values; other rows unchanged.  Without pooled values (a readings record written before them) unchanged."""
    pooled = {arm: {seed: rec["contrast_pooled"] for seed, rec in readings.records[arm].items()}
              for arm in POOLED_ARMS if arm in readings.records
              and all("contrast_pooled" in rec for rec in readings.records[arm].values())}
    if set(pooled) != set(POOLED_ARMS):
        return rows
    # the pooled value under the screen's key, so that it gets a variance's log-scale interval
    by_seed = {arm: {seed: {**records[arm][seed], "contrast_variance_exact": v} for seed, v in pooled[arm].items()}
               for arm in POOLED_ARMS}
    out = []
    for row in rows:
        arm = construction_arm(row.claim_id)
        if arm is None or not row.claim_id.endswith(".contrast_variance"):
            out.append(row)
            continue
        pooled_row = contrast_row(by_seed, arm)
        out.append(Row.under_readings([replace(pooled_row, reading=reading_sets.CONTRAST_POOLED),
                                       replace(row, reading=reading_sets.contrast_at(root))],
                                      paper_reading=reading_sets.CONTRAST_POOLED))
    return out


def construction_rows(records, readings: Readings | None = None, root: str = "") -> list[Row]:
    """tab:measured-independent: contrast variance of each arm's construction (exact, chips^2; its ordering
    resolved on paired per-seed differences; with `readings`, read pooled over every decision point, the paper's
    reading, and at the chapter's contrast root `root`: `readings.contrast_readings`), invalid actions and wall
    time (the matched policy calls are settings: `budget_settings`)."""
    rows = []
    for arm, label in CONSTRUCTION_ROW.items():
        cid = f"measured_independent.{label}"
        illegal = sum(rec["ledger"]["illegal"] for rec in records[arm].values())
        rows += [contrast_row(records, arm),
                 Row.count(f"{arm}: invalid actions", f"{cid}.invalid_actions", illegal),
                 cost_ratio_row(f"{arm}: wall-time ratio", f"{cid}.wall_time",
                                f"measured_independent.{CONSTRUCTION_ROW[COST_REFERENCE]}.wall_time", records, arm)]
    return rows if readings is None else contrast_readings(rows, records, readings, root)


def solver_rows(records, cfr: dict, readings: Readings | None = None) -> list[Row]:
    """tab:measured-solver: value, best-response value, NashConv, exploitability, success, the value's interval;
    `cfr` holds the exact CFR+ reference's numbers (a single deterministic policy: no interval).  The value, the
    best-response value and the interval are compared under every reading (`readings`)."""
    rows = []
    for arm in LEARNED_ARMS:
        cid = f"measured_solver.{POLICY_ROW[arm]}"
        iv = summary.interval(records, arm, "player0_value")
        rows += [_estimate(f"{arm}: player-0 value (chips)", f"{cid}.player0_value", records, arm, "player0_value",
                           ordering(records, arm, "player0_value", "high")),
                 _estimate(f"{arm}: best-response value (chips)", f"{cid}.best_response_value", records,
                           arm, "best_response_0"),
                 _estimate(f"{arm}: NashConv (chips)", f"{cid}.nashconv", records, arm, "nash_conv",
                           ordering(records, arm, "nash_conv", "low")),
                 _estimate(f"{arm}: exploitability (chips)", f"{cid}.exploitability", records, arm, "exploitability",
                           ordering(records, arm, "exploitability", "low")),
                 _estimate(f"{arm}: task success", f"{cid}.task_success", records, arm, "task_success",
                           ordering(records, arm, "task_success", "high")),
                 Row.quantile_pair(f"{arm}: player-0 value, seed interval (chips)", f"{cid}.seed_interval",
                                   iv.low, iv.high)]
    cid = "measured_solver.exact_cfr_plus"
    # CFR+'s numbers are exact (one deterministic policy): "ours" is the exact value, no interval
    rows += [Row.compare("CFR+: player-0 value (chips)", f"{cid}.player0_value", cfr["player0_value"]),
             Row.compare("CFR+: best-response value (chips)", f"{cid}.best_response_value", cfr["best_response_0"]),
             Row.compare("CFR+: NashConv (chips)", f"{cid}.nashconv", cfr["nash_conv"]),
             Row.compare("CFR+: exploitability (chips)", f"{cid}.exploitability", cfr["exploitability"]),
             Row.compare("CFR+: task success", f"{cid}.task_success", cfr["task_success"]),
             Row.quantile_pair("CFR+: player-0 value, seed interval (one point)",
                               f"{cid}.seed_interval", cfr["player0_value"], cfr["player0_value"])]
    return _combined(rows, readings)


#: Why the legal-action rate is 1 whatever the learner does (the count still checks it).
LEGAL_BY_CONSTRUCTION = ("the tabular policy gives every illegal action probability zero (a softmax masked to the "
                         "legal actions), so every transition is legal")


def appendix_rows(records, readings: Readings | None = None) -> list[Row]:
    """tab:app-p1-solver: CP-GRPO's intervals, the legal-action rate, and the solver-query ledger."""
    legal, total = summary.legal_action_rate(records)
    rows = []
    for key, name, text in (("best_response_0", "best_response_value", "best-response value"),
                            ("nash_conv", "nashconv", "NashConv"), ("exploitability", "exploitability", "exploitability"),
                            ("player0_value", "player_value", "player value")):
        iv = summary.interval(records, "cp_grpo", key)
        rows.append(Row.quantile_pair(f"cp_grpo: {text}, seed interval (chips)", f"app_solver.{name}.interval",
                                      iv.low, iv.high))
    rows.append(Row.compare("legal-action rate over all transitions", "app_solver.legal_action_rate.reported_value",
                            legal / total).true_by_construction(LEGAL_BY_CONSTRUCTION))
    for cid in ("app_solver.solver_queries.reported_value", "app_solver.solver_queries.successful",
                "app_solver.solver_queries.timeouts", "failures.solver_timeout.timeout_records",
                "failures.solver_timeout.successful_joins", "release.solver_evaluation.joins"):
        rows.append(Row.not_compared(cid.split(".", 1)[1].replace("_", " "), cid, NO_SOLVER_QUERIES))
    return _combined(rows, readings)


# ----- settings of the paper's runs ---------------------------------------------------------------
def diagnostic_settings(p, groups_per_seed: int) -> list[Row]:
    """The diagnostic's and the screen's design numbers, from our parameters and the game's rules."""
    game = get_game(p.game)
    diag = ", ".join(str(s) for s in p.diagnostic_seeds)
    policy = ", ".join(str(s) for s in p.policy_seeds)
    n = len(p.policy_seeds)
    rows = [Row.setting("iterations T", "setup.tabular_screen.iterations", p.iterations),
            Row.setting("decision points per iteration N", "setup.tabular_screen.decision_points_per_iteration",
                        p.decision_points),
            Row.setting("most legal actions at a decision point (rules)", "setup.tabular_screen.max_legal_root_actions",
                        int(game.tree.legal.sum(axis=1).max())),
            Row.setting("raises per betting round (rules)", "setup.tabular_screen.raises_per_round", MAX_RAISES),
            Row.setting("logical groups per seed (T x N)", "setup.tabular_screen.logical_groups_per_seed",
                        groups_per_seed),
            Row.setting("diagnostic seeds", "setup.tabular_screen.seeds", diag),
            Row.setting("diagnostic seeds", "text_bounded.three_seed.seeds", diag),
            Row.setting("diagnostic seeds (count)", "intro.bounded_diagnostic.seeds", len(p.diagnostic_seeds)),
            Row.setting("policy-screen seeds", "measured_eval_text.seeds", policy)]
    for cid in ("text_precision.learning_endpoints.seeds", "text_bounded.policy_screen.seeds",
                "learning_boundary.policy_solver.seeds", "learning_config.training_seeds",
                "grpo_ppo.caption.seeds_per_arm"):
        rows.append(Row.setting("policy-screen seeds (count)", cid, n))
    rows.append(Row.setting("held-out roots per seed", HELD_OUT_CLAIM, "all deals, exact", reason=NO_HELD_OUT))
    for cid, what in (("development", "development"), ("validation", "validation"), ("test", "sealed test")):
        rows.append(Row.setting(f"{what} root strata", f"measured_eval_text.{cid}_strata", 0, reason=NO_STRATA))
    return rows


def budget_settings(records, budget: int) -> list[Row]:
    """The matched policy calls of tab:measured-independent: our budget is the paper's (per seed), and the row shows
    the physical calls each arm realised (seed mean; a run stops when its next group would pass the budget)."""
    rows = []
    for arm, label in CONSTRUCTION_ROW.items():
        realised = summary.values(records, arm, "physical_calls")
        rows.append(Row.setting(f"{arm}: physical calls per seed (budget {budget:,})",
                                f"measured_independent.{label}.policy_calls", float(realised.mean()),
                                adopted=budget == int(claims.claim(f"measured_independent.{label}.policy_calls")),
                                reason=f"our budget is {budget:,} physical calls per seed; the runs realised "
                                       f"{mean_count_text(realised.mean())} on average ({realised.min():,.0f} to "
                                       f"{realised.max():,.0f}): a run stops when its next group would pass the "
                                       f"budget"))
    return rows
