"""The policy screen's evaluation: exact checkpoint quantities, update and contrast variances, saved checkpoints.

Per run (arm, seed) of the screen, on its average policy at T (the last
iterate beside it): `exact.evaluation.evaluate_checkpoint_table` against
the declared opponent; the update variance from its final state
(`learning.update_variance`); the contrast variance of the arm's
construction at `contrast_root` with the checkpoint as continuation and
behaviour policy, exact (`exact.arm_moments`) and sampled beside it
(`engine.collector.collect`, validation split).
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np

from oscc_core.engine.collector import collect
from oscc_core.exact.arm_moments import arm_moments
from oscc_core.exact.evaluation import evaluate_checkpoint_table
from oscc_core.games import get_game
from oscc_core.interop.openspiel import load_openspiel_game, to_openspiel
from oscc_core.learning.arms import get_learner_arm
from oscc_core.learning.update_variance import update_variances
from oscc_core.method.stats import contrast_pair
from oscc_core.policy import resolve_policy, table_to_policy

CHECKPOINTS = "05_solver_checkpoints.json.gz"


def evaluate_runs(game: str, tables: np.ndarray, opponent: str) -> list:
    """One `CheckpointEvaluation` per table [R, n_info, A] against `opponent` ("uniform")."""
    opponent_table = resolve_policy(get_game(game), opponent, "opponent")
    return [evaluate_checkpoint_table(game, t, opponent_table, opponent_label=opponent) for t in tables]


def contrast_variances(p, batch) -> list[dict]:
    """Per run: Var(R_i - R_j) (chips^2) of its arm's construction at `p.contrast_root`, exact and sampled."""
    out = []
    for r, run in enumerate(batch.runs):
        policy = table_to_policy(p.game, batch.average[r])
        arm = get_learner_arm(run.arm).coupling_arm
        exact = arm_moments(p.game, p.contrast_root, policy)[arm]
        i, j = contrast_pair(exact.actions)
        sample = collect(p.game, p.contrast_root, arm, p.contrast_groups, run.seed, continuation=policy,
                         device=p.device, split="validation").summary()
        key = f"{i}-{j}"
        out.append({"arm": arm, "actions": [exact.actions[i], exact.actions[j]], "exact": exact.contrast_var(i, j),
                    "sampled": sample["pairwise_contrasts"][key]["contrast_var"],
                    "sampled_se": sample["pairwise_contrasts"][key]["contrast_var_se"]})
    return out


def screen_update_variances(p, batch, eta: float) -> np.ndarray:
    """[R] update variance (logits^2) of each run from its final state, `p.update_replicates` replicates."""
    learners = batch.learners
    return update_variances(p.game, batch.runs, learners.logits, learners.values, p.schedule(eta),
                            p.update_replicates, p.torch_device)


def save_checkpoints(game: str, batch, out_dir, name: str = CHECKPOINTS) -> Path:
    """Average policies at T as OpenSpiel-keyed JSON (gzip): {"<arm>/<seed>": {state: [probabilities]}}."""
    body = {run.key: table_to_policy(game, batch.average[r]) for r, run in enumerate(batch.runs)}
    path = Path(out_dir) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    with gzip.GzipFile(path, "wb", mtime=0) as fh:     # mtime 0: the same bytes on every run
        fh.write(text.encode())
    return path


def openspiel_exploitabilities(game: str, path) -> dict[str, float]:
    """Each saved checkpoint's exploitability (chips) recomputed by `pyspiel.exploitability` from the file."""
    import pyspiel
    from open_spiel.python.policy import python_policy_to_pyspiel_policy

    with gzip.open(path, "rt") as fh:
        body = json.load(fh)
    os_game = load_openspiel_game(game)
    return {key: float(pyspiel.exploitability(os_game, python_policy_to_pyspiel_policy(to_openspiel(game, policy))))
            for key, policy in body.items()}


def cfr_reference(p) -> dict:
    """The exact CFR+ reference row: CFR+'s average policy after `p.leduc_cfr_iterations` iterations, evaluated
    like a checkpoint (chips; success unitless)."""
    from oscc_core.chapters.solver.summary import EVALUATED
    from oscc_core.exact.cfr import CFRPlus

    solver = CFRPlus(p.game)
    for _ in range(p.leduc_cfr_iterations):
        solver.iterate()
    e = evaluate_runs(p.game, solver.average_table()[None], p.opponent)[0]
    return {"iterations": p.leduc_cfr_iterations, **{key: float(f(e).whole) for key, f in EVALUATED.items()}}


def checkpoint_check(p, batch, records: dict) -> dict:
    """Save the screen's checkpoints, recompute each one's exploitability with pyspiel from the file, and
    compare with ours (chips)."""
    path = save_checkpoints(p.game, batch, p.out_dir)
    theirs = openspiel_exploitabilities(p.game, path)
    ours = {run.key: records[run.arm][str(run.seed)]["exploitability"] for run in batch.runs}
    return {"file": path.name, "ours": ours, "pyspiel": theirs,
            "max_abs_difference": max(abs(ours[k] - theirs[k]) for k in ours)}
