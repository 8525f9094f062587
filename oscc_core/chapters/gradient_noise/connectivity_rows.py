"""Rows of the tabular connectivity loop (tab:extended-controls, tab:seed-cost, the one-seed control and the
I - P column of tab:app-p1-clipping), the clipping percentages of the clipping table's note, and the scalar
screen's wall time; the loop's settings (`Row.setting`).

Readings, stated here and in the chapter:

* I - P endpoint: independent minus paired exact expected return (chips) of the run's endpoint policy against
  the uniform opponent, per seat, seed by seed; a row pools its conditions seed by seed.  Compared as the mean
  over seeds with its Student-t interval; the paper says the connectivity intervals include zero, declared as
  the relation of the two seat rows.
* sampling calls of a seed: the draws its paired and independent runs consume (root draws plus policy draws of
  the learner's ledger); the paper's per-seed value is one more seed (`Row.one_seed`), its total of five seeds
  is five times our seed mean with five times its interval.
* episodes of a seed: its branch rollouts (each a hand played to its end), both arms.
"""
from __future__ import annotations

import numpy as np

from oscc_core.chapters.gradient_noise.connectivity import INDEPENDENT, PAIRED, LoopRun, pooled_i_minus_p
from oscc_core.chapters.gradient_noise.rows import CLIPPING_ROWS
from oscc_core.method.stats import t_interval
from oscc_core.reporting import claims
from oscc_core.reporting.rows import Relation, Row

PAPER_SEEDS = (13, 17, 23, 29, 31)    # the seeds of tab:seed-cost (claim ids seed_cost.seed<N>.*)
LABEL = {"connectivity_control": "connectivity control", "behavior_lag_grid": "behaviour-lag grid",
         "learning_rate_grid": "learning-rate grid", "activated_stress": "activated stress"}
WALL_TIME_REASON = ("one machine's seconds for the whole screen, both arms and every seed together: no second "
                    "arm of the same run to divide by, so no portable ratio exists")


def _mean_row(quantity: str, claim_id: str, values, relation_text: str | None = None) -> Row:
    iv = t_interval(values)
    rel = None if relation_text is None else Relation(relation_text, bool(iv.low <= 0.0 <= iv.high))
    return Row.compare(quantity, claim_id, iv.mean, iv.low, iv.high, relation=rel)


def endpoint_rows(loops: dict[str, list[LoopRun]]) -> list[Row]:
    """Seat-0 and seat-1 I - P of the connectivity control (tab:extended-controls; the clipping table's control
    row prints the seat-0 value) and the seat-0 I - P of each stress row (tab:app-p1-clipping)."""
    control = loops["connectivity_control"]
    rows = [_mean_row(f"connectivity: seat-{s} I − P", f"extended_controls.tabular_ppo_connectivity.seat{s}_i_minus_p",
                      pooled_i_minus_p(control, s), "the seed interval includes 0") for s in (0, 1)]
    for key in ("behavior_lag_grid", "learning_rate_grid", "activated_stress"):
        rows.append(_mean_row(f"{LABEL[key]}: seat-0 I − P", f"clipping.{key}.i_minus_p_endpoint",
                              pooled_i_minus_p(loops[key], 0)))
    return rows


def _at_seed(run: LoopRun, values: np.ndarray, seed: int) -> float:
    """Our value at `seed` when we ran it, else the mean over our seeds."""
    return float(values[run.seeds.index(seed)]) if seed in run.seeds else float(np.mean(values))


def cost_rows(control: LoopRun) -> list[Row]:
    """tab:seed-cost's sampling calls per seed (one seed each), their total, and the one-seed control's
    transitions and selected clipping (seed `one_seed_connectivity.seed`)."""
    calls = control.sampling_calls()
    rows = [Row.one_seed(f"seed {s}: sampling calls", f"seed_cost.seed{s}.sampling_calls", _at_seed(control, calls, s),
                         calls) for s in PAPER_SEEDS]
    n = len(PAPER_SEEDS)
    iv = t_interval(calls)
    rows.append(Row.compare(f"sampling calls of {n} seeds", "runtime_text.sampling_calls_total", n * iv.mean,
                            n * iv.low, n * iv.high))
    seed = int(claims.claim("one_seed_connectivity.seed"))
    for field, cid in (("transitions", "one_seed_connectivity.transitions"),
                       ("clipped_terms", "one_seed_connectivity.selected_clipping")):
        values = control.count(field)
        # transitions are not compared in size (`reporting.comparability`, family "transitions"): the row says why
        rows.append(Row.one_seed(f"seed {seed}: {field.replace('_', ' ')}", cid, _at_seed(control, values, seed),
                                 values))
    return rows


def clip_fraction_values(audit, groups: dict[str, list[str]], arm: str = "full") -> dict[str, np.ndarray]:
    """Row key -> bootstrap replicates of the clip-selected fraction of the clipping table's row, both arms
    (independent and `arm`) over the row's settings pooled, as `rows.clipping_rows` computes it."""
    return {key: np.mean([audit.clip_fraction(a, s) for a in ("independent", arm) for s in groups[label]], axis=0)
            for label, key in CLIPPING_ROWS.items()}


def clip_percent_rows(cf_values: dict[str, np.ndarray]) -> list[Row]:
    """The clipping table's note: the stress rows' clip-selected fractions in percent, and their largest (the
    stress grid's maximum clipping).  `cf_values`: row key -> bootstrap replicates of the clip fraction
    (replicate 0 the sample, `bootstrap.estimate`)."""
    from oscc_core.chapters.gradient_noise.bootstrap import estimate

    stress = [k for k in CLIPPING_ROWS.values() if k != "connectivity_control"]
    rows = [Row.estimate(f"{LABEL[k]}: clip-selected %", f"clipping.footnote.{k}.clip_percent",
                         estimate(100.0 * cf_values[k])) for k in stress]
    top = np.max([100.0 * cf_values[k] for k in stress], axis=0)
    rows.append(Row.estimate("stress grid: largest clip-selected %", "learning_boundary_text.stress_grid.max_clipping",
                             estimate(top)))
    return rows


def wall_time_row() -> Row:
    """The scalar screen's seconds (tab:retained-evidence): not compared (`WALL_TIME_REASON`)."""
    return Row.not_compared("scalar screen: wall time", "retained_evidence.scalar_clipped.wall_time", WALL_TIME_REASON)


def _setting(quantity: str, claim_id: str, ours, why: str) -> Row:
    """`Row.setting` with the reason `why` only when ours differs from the paper's value."""
    same = str(ours) == str(claims.claim(claim_id))
    return Row.setting(quantity, claim_id, ours, reason=None if same else why)


def loop_settings(control: LoopRun, batches: int, epochs: int, decision_points: int) -> list[Row]:
    """The loop's settings against tab:seed-cost, the one-seed control and tab:extended-controls."""
    seeds = control.seeds
    rollouts = control.count("physical_calls")
    why_episodes = (f"ours are the seed's branch rollouts, both arms, from {batches} batches of {decision_points} "
                    "decision points per arm")
    rows = [_setting("connectivity loop: seeds", "extended_controls.tabular_ppo_connectivity.seeds", len(seeds),
                     f"we run {len(seeds)} seeds")]
    for s in PAPER_SEEDS:
        key = f"seed_cost.seed{s}"
        if s not in seeds:
            for col in ("episodes", "optimizer_epochs", "logical_batches"):
                rows.append(_setting(f"seed {s}: {col.replace('_', ' ')}", f"{key}.{col}", "—",
                                     f"seed {s} is not among our seeds"))
            continue
        rows += [_setting(f"seed {s}: episodes", f"{key}.episodes", int(rollouts[seeds.index(s)]),
                          why_episodes),
                 _setting(f"seed {s}: optimizer epochs", f"{key}.optimizer_epochs", batches * epochs,
                          f"{batches} batches of {epochs} epochs"),
                 _setting(f"seed {s}: logical batches", f"{key}.logical_batches", batches,
                          f"we run {batches} batches")]
    one = int(claims.claim("one_seed_connectivity.seed"))
    at = seeds.index(one) if one in seeds else None
    rows.append(_setting("one-seed control: seed", "one_seed_connectivity.seed", one if at is not None else "—",
                         f"seed {one} is not among our seeds"))
    rows.append(_setting("one-seed control: optimizer updates", "one_seed_connectivity.optimizer_updates",
                         batches * epochs, f"{batches} batches of {epochs} epochs"))
    if at is not None:
        paired = control.count("root_draws", (PAIRED,))[at]
        independent = control.count("root_draws", (INDEPENDENT,))[at]
        rows += [_setting("one-seed control: episodes", "one_seed_connectivity.episodes", int(rollouts[at]),
                          why_episodes),
                 _setting("one-seed control: paired root draws", "one_seed_connectivity.paired_root_draws",
                          int(paired), "one root draw per decision point"),
                 _setting("one-seed control: independent root draws",
                          "one_seed_connectivity.independent_root_draws", int(independent),
                          "one root draw per decision point, as for the paired arm")]
    return rows

