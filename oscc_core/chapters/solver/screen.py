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

from pathlib import Path

import numpy as np
import torch

from oscc_core.learning import checkpoints
from oscc_core.learning.summary import contrast_variances as _contrast_variances
from oscc_core.learning.summary import evaluate_runs
from oscc_core.learning.runs import LEARNED_ARMS
from oscc_core.learning.update_variance import update_variances, update_variances_by_eta

CHECKPOINTS = "05_solver_checkpoints.json.gz"
__all__ = ["evaluate_runs"]


def contrast_variances(p, batch) -> list[dict]:
    """Per run of the screen: the contrast variance of its arm's construction at `p.contrast_root` (chips^2)."""
    return _contrast_variances(p.game, p.contrast_root, batch.runs, batch.average, p.contrast_groups, p.device)


def screen_update_variances(p, batch, eta: float) -> np.ndarray:
    """[R] update variance (logits^2) of each run from its final state, `p.update_replicates` replicates."""
    learners = batch.learners
    return update_variances(p.game, batch.runs, learners.logits, learners.values, p.schedule(eta),
                            p.update_replicates, p.torch_device)


def eta_update_variances(p, batch, grid) -> dict[float, dict]:
    """{eta: {arm: {seed: {"update_variance": v}}}} for every eta of `grid` (the chapter's step-size grid) and every
    learned run, from the state it trained to at its own eta (`learning.update_variance.update_variances_by_eta`)."""
    learned = [r for r, run in enumerate(batch.runs) if run.arm in LEARNED_ARMS]
    rows = torch.tensor(learned, device=batch.learners.logits.device)
    logits, values = (t.index_select(0, rows) for t in (batch.learners.logits, batch.learners.values))
    return update_variances_by_eta(p.game, [batch.runs[r] for r in learned], logits, values, p.schedule, grid,
                                   p.update_replicates, p.torch_device)


def save_checkpoints(game: str, batch, out_dir, name: str = CHECKPOINTS) -> Path:
    """The screen's average policies at T, keyed "<arm>/<seed>" (`learning.checkpoints.save_checkpoints`)."""
    return checkpoints.save_checkpoints(Path(out_dir) / name, {run.key: (game, batch.average[r])
                                                               for r, run in enumerate(batch.runs)})


def openspiel_exploitabilities(game: str, path) -> dict[str, float]:
    """Each saved checkpoint's exploitability (chips) recomputed by pyspiel from the file."""
    return {key: checkpoints.openspiel_exploitability(game, policy)
            for key, policy in checkpoints.load_checkpoints(path).items()}


def cfr_table(p) -> np.ndarray:
    """CFR+'s average policy [n_info, A] after `p.leduc_cfr_iterations` iterations (the reference row's policy)."""
    from oscc_core.exact.cfr import CFRPlus

    solver = CFRPlus(p.game)
    for _ in range(p.leduc_cfr_iterations):
        solver.iterate()
    return solver.average_table()


def cfr_reference(p, table: np.ndarray | None = None) -> dict:
    """The exact CFR+ reference row: CFR+'s average policy after `p.leduc_cfr_iterations` iterations (`table`, by
    default `cfr_table(p)`), evaluated like a checkpoint (chips; success unitless)."""
    from oscc_core.learning.summary import EVALUATED

    table = cfr_table(p) if table is None else table
    e = evaluate_runs(p.game, table[None], p.opponent)[0]
    return {"iterations": p.leduc_cfr_iterations, **{key: float(f(e).whole) for key, f in EVALUATED.items()}}


def readings(p, batch, evaluations, cfr: np.ndarray):
    """Our numbers under every reading (`readings.Readings`): the screen's average policies at T (`evaluations`
    their exact evaluations) and the CFR+ reference policy `cfr` (arm "cfr"), with every rule check."""
    from oscc_core.chapters.solver import feasibility
    from oscc_core.chapters.solver import readings as reading_module

    records = reading_module.reading_records(p.game, batch.runs, batch.average, evaluations)
    records["cfr"] = {"-": reading_module.evaluation_record(p.game, cfr, evaluate_runs(p.game, cfr[None],
                                                                                        p.opponent)[0])}
    return reading_module.Readings.build(records, feasibility.feasibility_table(p.game))


def checkpoint_check(p, batch, records: dict) -> dict:
    """Save the screen's checkpoints, recompute each one's exploitability with pyspiel from the file, and
    compare with ours (chips)."""
    path = save_checkpoints(p.game, batch, p.out_dir)
    ours = {run.key: records[run.arm][str(run.seed)]["exploitability"] for run in batch.runs}
    return checkpoints.openspiel_check(path, ours, lambda key: p.game)
