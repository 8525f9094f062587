"""The transfer chapter's results file: every reported quantity, with the keys the issue fixes.

Keys (arms cp_grpo, independent, grpo, ppo; seeds as strings): operating_point.digest (the literal learner's);
converging.operating_point.digest and converging.summary.<budget> (the converging learner's Kuhn study, whose
runs are in 06_transfer_study.json);
kuhn.<arm>.<seed>.exploitability, .nash_conv, .player0_value, .contrast_variance_exact, .seat_return,
.contrast_by_root, .contrast_pooled (pooled over every decision point, the paper's reading), .pool_weights,
.root_values; leduc.<arm>.<seed>.exploitability, .contrast_pooled; besides the structural facts (with every
reading's bound), the selector, the checkpoints, the rows and the chapter's findings.
"""
from __future__ import annotations

from oscc_core.reporting.tables import rows_record

VOLATILE = ("runtime_s", "seconds")     # wall times: they differ from run to run and stay out of results files


def _stable(obj):
    if isinstance(obj, dict):
        return {k: _stable(v) for k, v in obj.items() if k not in VOLATILE}
    if isinstance(obj, list):
        return [_stable(v) for v in obj]
    return obj


def payload(p, *, op, eta, leduc, kuhn, four, maxima, bounds, selector, checkpoints, tables, findings,
            converging, update_by_eta=None) -> dict:
    """The whole results file body (the manifest is added by `reporting.results.write_results`);
    `update_by_eta` ({game: {eta: {arm: {seed: {"update_variance": v}}}}}) is stored with its step sizes as text."""
    body = {"operating_point": {"digest": op.digest, "record": op.record()}, "eta": eta, "leduc": leduc,
            "converging": converging,
            "kuhn": kuhn, "kuhn_structure": {"four_arm_contrast_variances": four, "certified_maxima": _stable(maxima),
                                             "bounds": bounds},
            "selector": _stable(selector), "checkpoints": checkpoints,
            "rows": {name: rows_record(rows) for name, rows in tables.items()}, "findings": findings.record()}
    if update_by_eta is not None:
        body["update_variance_by_eta"] = {game: {f"{e:g}": at for e, at in by.items()}
                                          for game, by in update_by_eta.items()}
    return body
