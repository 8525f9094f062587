"""Per-run records of a screen of learner runs and their summaries over seeds (mean, SD, 95% t-interval).

A record holds, for one (arm, seed), the whole-game numbers of its average
policy at T (chips; success and probabilities unitless; contrast variance
in chips^2: of the arm's construction and, beside it, of the independent
construction at the same checkpoint), its last iterate's exploitability,
its update variance (logits^2; one iteration's update from the run's final
state, i.e. from its last iterate, which is what the learner updates), its
ledger, and the per-pair split of every evaluated quantity.
"""
from __future__ import annotations

import numpy as np

from oscc_core.engine.collector import collect
from oscc_core.exact.arm_moments import arm_moments
from oscc_core.exact.evaluation import evaluate_checkpoint_table
from oscc_core.games import get_game
from oscc_core.learning.arms import get_learner_arm
from oscc_core.method.stats import contrast_pair, log_t_interval, t_interval
from oscc_core.policy import resolve_policy, table_to_policy

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


def evaluate_runs(game: str, tables: np.ndarray, opponent: str) -> list:
    """One exact `CheckpointEvaluation` per table [R, n_info, A] against `opponent` ("uniform")."""
    opponent_table = resolve_policy(get_game(game), opponent, "opponent")
    return [evaluate_checkpoint_table(game, t, opponent_table, opponent_label=opponent) for t in tables]


def contrast_variances(game: str, root: str, runs, tables: np.ndarray, groups: int, device) -> list[dict]:
    """Per run: Var(R_i - R_j) (chips^2) of its arm's construction at `root` with its table as continuation
    and behaviour policy: exact (`exact.arm_moments`) and sampled from `groups` groups (validation split)."""
    out = []
    for run, table in zip(runs, tables):
        policy = table_to_policy(game, table)
        arm = get_learner_arm(run.arm).coupling_arm
        moments = arm_moments(game, root, policy)
        exact = moments[arm]
        i, j = contrast_pair(exact.actions)
        sample = collect(game, root, arm, groups, run.seed, continuation=policy, device=device,
                         split="validation").summary()["pairwise_contrasts"][f"{i}-{j}"]
        out.append({"arm": arm, "actions": [exact.actions[i], exact.actions[j]], "exact": exact.contrast_var(i, j),
                    "independent_exact": moments["independent"].contrast_var(i, j),
                    "sampled": sample["contrast_var"], "sampled_se": sample["contrast_var_se"]})
    return out


def run_records(batch, evaluations, last_exploitability, update_variance, contrast) -> dict:
    """{arm: {seed (string): record}} for every run of the screen batch."""
    out: dict = {}
    for r, run in enumerate(batch.runs):
        e = evaluations[r]
        record = {key: float(f(e).whole) for key, f in EVALUATED.items()}
        record.update({"exploitability_last": float(last_exploitability[r]),
                       "update_variance": float(update_variance[r]),
                       "contrast_variance_exact": contrast[r]["exact"],
                       "contrast_variance_independent_exact": contrast[r]["independent_exact"],
                       "contrast_variance_sampled": contrast[r]["sampled"],
                       "contrast_variance_sampled_se": contrast[r]["sampled_se"],
                       "physical_calls": batch.ledger(r)["physical_calls"],
                       "ledger": batch.ledger(r),
                       "per_pair": {key: f(e).by_pair() for key, f in EVALUATED.items()}})
        out.setdefault(run.arm, {})[str(run.seed)] = record
    return out


def values(records: dict, arm: str, key: str) -> np.ndarray:
    """[seeds] one quantity of one arm, in seed order."""
    return np.array([rec[key] for rec in records[arm].values()], dtype=np.float64)


#: Record keys of quantities positive by definition (variances): their intervals over seeds are on the log scale.
POSITIVE = ("update_variance", "contrast_variance_exact", "contrast_variance_independent_exact",
            "contrast_variance_sampled")


def interval(records: dict, arm: str, key: str):
    """Mean and 95% t-interval over the arm's seeds (a constant quantity gives a zero-width interval); for a
    variance (`POSITIVE`) the interval is on the log scale (`method.stats.log_t_interval`), so it never
    reaches 0."""
    v = values(records, arm, key)
    if key in POSITIVE and v.mean() > 0 and np.ptp(v) > 0:
        return log_t_interval(v)
    return t_interval(v)


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


def paired_difference(records: dict, a: str, b: str, key: str):
    """95% t-interval of the per-seed difference a - b of one quantity, seeds matched by name."""
    return t_interval([records[a][s][key] - records[b][s][key] for s in records[a]])


def resolved_order(records: dict, arm: str, others, key: str, better: str) -> bool:
    """Whether `arm` beats every arm of `others` on `key` with the per-seed paired difference's 95% interval
    entirely on the better side of 0 (`better` "high" or "low"); a tie in every seed counts as not better."""
    for other in others:
        iv = paired_difference(records, arm, other, key)
        if not (iv.low > 0 if better == "high" else iv.high < 0):
            return False
    return True


def pair_rows(records: dict, keys) -> list[dict]:
    """One row per (quantity, arm): the seed means of the quantity's per-pair values, keyed by rank pair."""
    return [{"quantity": key, "arm": arm, **pair_means(records, arm, key)} for key in keys for arm in records]
