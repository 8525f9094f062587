"""Per-run records of the policy screen and their summaries over seeds (mean, SD, 95% t-interval).

A record holds, for one (arm, seed), the whole-game numbers of its average
policy at T (chips; success and probabilities unitless; update variance in
logits^2; contrast variance in chips^2), its last iterate's exploitability,
its ledger, and the per-pair split of every evaluated quantity.
"""
from __future__ import annotations

import numpy as np

from oscc_core.method.stats import t_interval

#: Whole-game quantities of a `CheckpointEvaluation`, by record key.
EVALUATED = {
    "player0_value": lambda e: e.player0_value,
    "best_response_0": lambda e: e.best_response_values[0],
    "best_response_1": lambda e: e.best_response_values[1],
    "nash_conv": lambda e: e.nash_conv,
    "exploitability": lambda e: e.exploitability,
    "mean_return": lambda e: e.versus.mean_return,
    "task_success": lambda e: e.versus.task_success,
}


def run_records(batch, evaluations, last_exploitability, update_variance, contrast) -> dict:
    """{arm: {seed (string): record}} for every run of the screen batch."""
    out: dict = {}
    for r, run in enumerate(batch.runs):
        e = evaluations[r]
        record = {key: float(f(e).whole) for key, f in EVALUATED.items()}
        record.update({"exploitability_last": float(last_exploitability[r]),
                       "update_variance": float(update_variance[r]),
                       "contrast_variance_exact": contrast[r]["exact"],
                       "contrast_variance_sampled": contrast[r]["sampled"],
                       "contrast_variance_sampled_se": contrast[r]["sampled_se"],
                       "ledger": batch.ledger(r),
                       "per_pair": {key: f(e).by_pair() for key, f in EVALUATED.items()}})
        out.setdefault(run.arm, {})[str(run.seed)] = record
    return out


def values(records: dict, arm: str, key: str) -> np.ndarray:
    """[seeds] one quantity of one arm, in seed order."""
    return np.array([rec[key] for rec in records[arm].values()], dtype=np.float64)


def interval(records: dict, arm: str, key: str):
    """Mean and 95% t-interval over the arm's seeds (a constant quantity gives a zero-width interval)."""
    return t_interval(values(records, arm, key))


def sd(records: dict, arm: str, key: str) -> float:
    return float(values(records, arm, key).std(ddof=1))


def pair_means(records: dict, arm: str, key: str) -> dict[str, float]:
    """Seed mean of the per-pair values of one quantity: {pair label: mean}."""
    runs = list(records[arm].values())
    labels = list(runs[0]["per_pair"][key])
    return {label: float(np.mean([rec["per_pair"][key][label] for rec in runs])) for label in labels}


def legal_action_rate(records: dict) -> tuple[int, int]:
    """(transitions with a legal action, all transitions) over every run of the screen."""
    ledgers = [rec["ledger"] for arm in records.values() for rec in arm.values()]
    total = sum(led["transitions"] for led in ledgers)
    return total - sum(led["illegal"] for led in ledgers), total
