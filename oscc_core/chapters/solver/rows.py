"""Paper-beside-ours rows of the chapter's tables (DESIGN section 10), one builder per paper table.

Every number is the seed mean of exact per-checkpoint values (chips, unless
a row says otherwise) with its 95% t-interval over seeds.  A relation is
declared where the paper states one for the number (an ordering of arms or a
sign); paper numbers that no profile can produce under the rules come from
`feasibility` and replace the ordinary row (verdict impossible under the
rules).
"""
from __future__ import annotations

from oscc_core.chapters.solver.training import LEARNED_ARMS
from oscc_core.games import get_game
from oscc_core.games.leduc import MAX_RAISES
from oscc_core.learning import summary
from oscc_core.method.stats import t_interval
from oscc_core.reporting import claims
from oscc_core.reporting.claims import Relation
from oscc_core.reporting.rows import Row, impossible_instead, unshown_impossible

#: The paper's row label of each arm in its policy and solver tables.
POLICY_ROW = {"cp_grpo": "cp_grpo_paired", "independent": "independent", "grpo": "standard_grpo",
              "ppo": "standard_ppo", "uniform": "uniform_policy"}
CONSTRUCTION_ROW = {"cp_grpo": "cp_grpo_paired", "independent": "independent_rollouts", "grpo": "standard_grpo"}
NO_WALL_TIME = "wall time depends on the machine; benchmarks/ measures speed as ratios, results files never hold it"
NO_SOLVER_QUERIES = ("our evaluation is exact over the whole game tree: it issues no solver queries, so there are "
                     "no queries, joins or timeouts to count")


def _pick(row: Row, impossible: dict) -> Row:
    """`row` with the verdict impossible under the rules (and the bound as its reason) when the rules exclude
    the paper's number; our measured value and interval stay in the row."""
    return impossible_instead(row, impossible)


def _estimate(quantity, claim_id, records, arm, key, relation=None) -> Row:
    iv = summary.interval(records, arm, key)
    return Row.compare(quantity, claim_id, iv.mean, iv.low, iv.high, relation)


def diagnostic_rows(p, exploit: dict) -> list[Row]:
    """The three-seed diagnostic; exploit[arm][seed] = final exploitability of the average policy (chips)."""
    seeds = p.diagnostic_seeds
    diff = {s: exploit["independent"][s] - exploit["cp_grpo"][s] for s in seeds}
    rows = []
    for arm, label in (("cp_grpo", "paired"), ("independent", "independent")):
        for s in seeds:
            rel = Relation(f"independent < paired at seed {s}", diff[s] < 0)
            rows.append(Row.compare(f"{label} final exploitability, seed {s} (chips)",
                                    f"text_bounded.three_seed.{label}.final_exploitability_seed{s}",
                                    exploit[arm][s], relation=rel, exact=exploit[arm][s]))
    for s in seeds:
        rows.append(Row.compare(f"independent - paired, seed {s} (chips)", f"fig_three_seed.seed{s}.difference",
                                diff[s], relation=Relation("difference < 0", diff[s] < 0)))
    iv = t_interval([diff[s] for s in seeds])
    rows.append(Row.compare("mean independent - paired (chips)", "fig_three_seed.mean_difference", iv.mean, iv.low,
                            iv.high, Relation("mean difference < 0", iv.mean < 0)))
    return rows


def diagnostic_setup_rows(p, groups_per_seed: int) -> list[Row]:
    """The diagnostic's design numbers, from our parameters and the game's rules."""
    game = get_game(p.game)
    seeds = ", ".join(str(s) for s in p.diagnostic_seeds)
    return [Row.count("iterations T", "setup.tabular_screen.iterations", p.iterations),
            Row.count("decision points per iteration N", "setup.tabular_screen.decision_points_per_iteration",
                      p.decision_points),
            Row.count("most legal actions at a decision point (rules)", "setup.tabular_screen.max_legal_root_actions",
                      int(game.tree.legal.sum(axis=1).max())),
            Row.count("raises per betting round (rules)", "setup.tabular_screen.raises_per_round", MAX_RAISES),
            Row.count("logical groups per seed (T x N)", "setup.tabular_screen.logical_groups_per_seed",
                      groups_per_seed),
            Row.same_text("diagnostic seeds", str(claims.claim("setup.tabular_screen.seeds")), seeds,
                          "setup.tabular_screen.seeds"),
            Row.count("diagnostic seeds", "intro.bounded_diagnostic.seeds", len(p.diagnostic_seeds)),
            Row.count("policy-screen seeds", "text_precision.learning_endpoints.seeds", len(p.policy_seeds)),
            Row.count("seeds per arm", "grpo_ppo.caption.seeds_per_arm", len(p.policy_seeds))]


def ordering(records, arm, key, better: str) -> Relation:
    """The paper's ordering for `key` (CP-GRPO best among the learned arms, the uniform policy worst),
    held only when every paired per-seed difference's 95% interval lies on the stated side of 0."""
    high = better == "high"
    if arm == "cp_grpo":
        others = [a for a in LEARNED_ARMS if a != "cp_grpo"]
        return Relation(f"cp_grpo {'highest' if high else 'lowest'} among learned arms (paired, 95%)",
                        summary.resolved_order(records, "cp_grpo", others, key, better))
    if arm == "uniform":
        worse = "low" if high else "high"
        return Relation(f"uniform {'lowest' if high else 'highest'} of all arms (paired, 95%)",
                        summary.resolved_order(records, "uniform", LEARNED_ARMS, key, worse))
    return Relation(f"cp_grpo {'>' if high else '<'} {arm} (paired, 95%)",
                    summary.resolved_order(records, "cp_grpo", [arm], key, better))


def policy_rows(records, impossible: dict) -> list[Row]:
    """tab:measured-grpo-ppo: return and success (mean and SD), update variance, value, exploitability, cost."""
    rows = []
    for arm, label in POLICY_ROW.items():
        cid = f"grpo_ppo.{label}"
        rows += [_estimate(f"{arm}: return vs opponent (chips)", f"{cid}.return_mean", records, arm, "mean_return",
                           ordering(records, arm, "mean_return", "high")),
                 Row.compare(f"{arm}: return SD over seeds (chips)", f"{cid}.return_sd",
                             summary.sd(records, arm, "mean_return")),
                 _estimate(f"{arm}: task success", f"{cid}.success_mean", records, arm, "task_success",
                           ordering(records, arm, "task_success", "high")),
                 Row.compare(f"{arm}: task success SD over seeds", f"{cid}.success_sd",
                             summary.sd(records, arm, "task_success")),
                 _estimate(f"{arm}: update variance (logits^2)", f"{cid}.update_variance", records, arm,
                           "update_variance", ordering(records, arm, "update_variance", "low")),
                 _estimate(f"{arm}: player-0 value (chips)", f"{cid}.value", records, arm, "player0_value",
                           ordering(records, arm, "player0_value", "high")),
                 _estimate(f"{arm}: exploitability (chips)", f"{cid}.exploitability", records, arm,
                           "exploitability", ordering(records, arm, "exploitability", "low")),
                 Row.not_compared(f"{arm}: cost (s)", f"{cid}.cost", NO_WALL_TIME)]
    return [_pick(r, impossible) for r in rows]


def construction_rows(records, p, impossible: dict) -> list[Row]:
    """tab:measured-independent: contrast variance of each arm's construction (exact, chips^2), invalid actions,
    matched policy calls, wall time."""
    rows = []
    paired = float(summary.values(records, "cp_grpo", "contrast_variance_exact").mean())
    for arm, label in CONSTRUCTION_ROW.items():
        cid = f"measured_independent.{label}"
        mine = float(summary.values(records, arm, "contrast_variance_exact").mean())
        rel = (Relation("paired < independent", paired < float(summary.values(
            records, "independent", "contrast_variance_exact").mean())) if arm == "cp_grpo"
               else Relation(f"cp_grpo < {arm}", paired < mine))
        illegal = sum(rec["ledger"]["illegal"] for rec in records[arm].values())
        rows += [_estimate(f"{arm}: contrast variance (chips^2)",
                           f"{cid}.contrast_variance", records, arm, "contrast_variance_exact", rel),
                 Row.count(f"{arm}: invalid actions", f"{cid}.invalid_actions", illegal),
                 Row.compare(f"{arm}: physical calls per seed, realised (budget {p.budget:,})", f"{cid}.policy_calls",
                             float(summary.values(records, arm, "physical_calls").mean())),
                 Row.not_compared(f"{arm}: wall time (s)", f"{cid}.wall_time", NO_WALL_TIME)]
    return [_pick(r, impossible) for r in rows]


def solver_rows(records, cfr: dict, impossible: dict) -> list[Row]:
    """tab:measured-solver: value, best-response value, NashConv, exploitability, success, the value's interval;
    `cfr` holds the exact CFR+ reference's numbers (a single deterministic policy: zero-width interval)."""
    rows = []
    for arm in LEARNED_ARMS:
        cid = f"measured_solver.{POLICY_ROW[arm]}"
        iv = summary.interval(records, arm, "player0_value")
        rows += [_estimate(f"{arm}: player-0 value (chips)", f"{cid}.player0_value", records, arm, "player0_value",
                           ordering(records, arm, "player0_value", "high")),
                 _estimate(f"{arm}: player 0's best-response value (chips)", f"{cid}.best_response_value", records,
                           arm, "best_response_0"),
                 _estimate(f"{arm}: NashConv (chips)", f"{cid}.nashconv", records, arm, "nash_conv",
                           ordering(records, arm, "nash_conv", "low")),
                 _estimate(f"{arm}: exploitability (chips)", f"{cid}.exploitability", records, arm, "exploitability",
                           ordering(records, arm, "exploitability", "low")),
                 _estimate(f"{arm}: task success", f"{cid}.task_success", records, arm, "task_success",
                           ordering(records, arm, "task_success", "high")),
                 Row.quantile_pair(f"{arm}: 95% seed interval of the player-0 value (chips)", f"{cid}.seed_interval",
                                   iv.low, iv.high)]
    cid = "measured_solver.exact_cfr_plus"
    # CFR+'s numbers are exact (one deterministic policy): "ours" is the exact value, no interval
    rows += [Row.compare("CFR+: player-0 value (chips)", f"{cid}.player0_value", cfr["player0_value"]),
             Row.compare("CFR+: player 0's best-response value (chips)", f"{cid}.best_response_value",
                         cfr["best_response_0"]),
             Row.compare("CFR+: NashConv (chips)", f"{cid}.nashconv", cfr["nash_conv"]),
             Row.compare("CFR+: exploitability (chips)", f"{cid}.exploitability", cfr["exploitability"]),
             Row.compare("CFR+: task success", f"{cid}.task_success", cfr["task_success"]),
             Row.quantile_pair("CFR+: seed interval of the player-0 value (deterministic: one point)",
                               f"{cid}.seed_interval", cfr["player0_value"], cfr["player0_value"])]
    return [_pick(r, impossible) for r in rows]


def appendix_rows(records, impossible: dict) -> list[Row]:
    """tab:app-p1-solver: CP-GRPO's intervals, the legal-action rate, and the solver-query ledger."""
    legal, total = summary.legal_action_rate(records)
    rows = []
    for key, name in (("best_response_0", "best_response_value"), ("nash_conv", "nashconv"),
                      ("exploitability", "exploitability"), ("player0_value", "player_value")):
        iv = summary.interval(records, "cp_grpo", key)
        rows.append(Row.quantile_pair(f"cp_grpo: 95% interval of {key} (chips)", f"app_solver.{name}.interval",
                                      iv.low, iv.high))
    rows.append(Row.compare("legal-action rate over all transitions", "app_solver.legal_action_rate.reported_value",
                            legal / total))
    for cid in ("app_solver.solver_queries.reported_value", "app_solver.solver_queries.successful",
                "app_solver.solver_queries.timeouts", "failures.solver_timeout.timeout_records",
                "failures.solver_timeout.successful_joins", "release.solver_evaluation.joins"):
        rows.append(Row.not_compared(cid.split(".", 1)[1].replace("_", " "), cid, NO_SOLVER_QUERIES))
    return [_pick(r, impossible) for r in rows]


#: The orderings the paper's policy and solver tables state (bold marks, table notes): (arm, key, better).
PAPER_ORDERINGS = (("cp_grpo", "mean_return", "high"), ("cp_grpo", "task_success", "high"),
                   ("cp_grpo", "update_variance", "low"), ("cp_grpo", "player0_value", "high"),
                   ("cp_grpo", "nash_conv", "low"), ("cp_grpo", "exploitability", "low"),
                   ("cp_grpo", "contrast_variance_exact", "low"), ("uniform", "mean_return", "high"),
                   ("uniform", "task_success", "high"), ("uniform", "exploitability", "low"))


def orderings(records) -> list[dict]:
    """Each ordering the paper states, evaluated on our seed means: {quantity, relation, holds}."""
    out = []
    for arm, key, better in PAPER_ORDERINGS:
        rel = ordering(records, arm, key, better)
        out.append({"quantity": key.replace("_", " "), "relation": rel.text, "holds": "yes" if rel.holds else "no"})
    return out


__all__ = ["unshown_impossible"]


def impossible_rows(feasibility_rows) -> dict:
    """{claim id: row} of the paper numbers the rules exclude."""
    return {r.claim_id: r for r in feasibility_rows}
