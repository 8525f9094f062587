"""The solver chapter's results file: every reported quantity, with the keys the issue fixes.

Keys (arms cp_grpo, independent, grpo, ppo, uniform; seeds as strings):
operating_point.digest; calibration.<game>.exploitability; diagnostic.<arm>.<seed>.exploitability_last / _average;
frozen_screen.epsilon, frozen_screen.delta.paired / .independent;
policy_screen.<arm>.<seed>.exploitability, .nash_conv, .player0_value (whole game, average policy),
besides the rows of every table (`rows.<table>`), the curves, and the ledgers per arm and iteration
(`ledgers_per_iteration.<diagnostic|policy_screen>.<arm>.<field>`: what the arm's runs spent in each iteration).
"""
from __future__ import annotations

from pathlib import Path

from oscc_core.chapters.solver.tables import sensitivity_records
from oscc_core.chapters.solver.training import exploitabilities
from oscc_core.reporting import results
from oscc_core.reporting.findings import RESULTS_KEY
from oscc_core.reporting.tables import rows_record


def calibration_payload(cal: dict) -> dict:
    return {game: {"exploitability": res["max_exploitability"], "iterations": res["iterations"],
                   "labels": res["labels"], "identical": res["identical"], "openspiel": res["openspiel"],
                   "first_reach": {k: v["first_reach"] for k, v in res["targets"].items()},
                   "curve": res["curve"]} for game, res in cal.items()}


def diagnostic_payload(batch, seeds) -> dict:
    avg, last = exploitabilities(batch.game, batch.average), exploitabilities(batch.game, batch.last)
    out: dict = {}
    for arm in ("cp_grpo", "independent"):
        for s in seeds:
            r = batch.index(arm, s)
            out.setdefault(arm, {})[str(s)] = {
                "exploitability_average": float(avg[r]), "exploitability_last": float(last[r]),
                "curve_average": [float(batch.curve_average[t][r]) for t in sorted(batch.curve_average)],
                "ledger": batch.ledger(r)}
    return out


def frozen_payload(screen: dict) -> dict:
    return {"epsilon": screen["parameters"]["epsilon"],
            "delta": {mode: m["exact_delta"]["law_average"] for mode, m in screen["modes"].items()},
            "screen": screen}


def scale_payload(batch, seeds) -> dict:
    return {"iterations": sorted(batch.curve_average),
            "runs": {run.key: {"average": [float(batch.curve_average[t][r]) for t in sorted(batch.curve_average)],
                               "last": [float(batch.curve_last[t][r]) for t in sorted(batch.curve_last)]}
                     for r, run in enumerate(batch.runs)}}


def payload(p, *, op, eta, cal, diag, panel, frozen, screen, records, cfr, scale, checkpoints, tables,
            findings=None, readings=None, learning=None, converging_op=None, update_by_eta=None) -> dict:
    """The whole results file body (the manifest is added by `reporting.results.write_results`): `findings` (a
    `reporting.findings.Findings`) under "findings", the readings' numbers under "readings", and of the learning
    study (`chapters.solver.study.run`) the choices, the summary at the paper's budget and the live check (the
    study itself is its own results file, `05_solver_study.json`), with the converging learner's frozen operating
    point `converging_op` built from it, and the update variances under every step size (`update_by_eta`).  The
    coupling question's 2 x 2 lies in the study file itself (``coupling_grid``)."""
    ledgers = {"diagnostic": {arm: diag.ledger_per_iteration(arm) for arm in sorted({r.arm for r in diag.runs})},
               "policy_screen": {arm: screen.ledger_per_iteration(arm) for arm in sorted({r.arm for r in screen.runs})}}
    body = {"ledgers_per_iteration": ledgers, "operating_point": {"digest": op.digest, "record": op.record()},
            "eta": eta, "calibration": calibration_payload(cal), "diagnostic": diagnostic_payload(diag,
                                                                                                 p.diagnostic_seeds),
            "sensitivity": sensitivity_records(panel), "frozen_screen": frozen_payload(frozen),
            "policy_screen": records, "cfr_reference": cfr, "scale_curve": scale_payload(scale, p.scale_seeds),
            "checkpoints": checkpoints, "rows": {name: rows_record(rows) for name, rows in tables.items()}}
    if readings is not None:
        body["readings"] = readings.records
    if update_by_eta is not None:   # {eta: {arm: {seed: {"update_variance": v}}}}, JSON keys as text
        body["update_variance_by_eta"] = {f"{e:g}": at for e, at in update_by_eta.items()}
    if learning is not None:
        st = learning["study"]
        body["learning_study"] = {"choices": st["choices"], "seeds": st["design"]["seeds"],
                                  "summary_at_budget": {lr: per[str(st["design"]["budget"])]
                                                        for lr, per in st["summary"].items()},
                                  "live_check": learning["live_check"], "checkpoints": learning["checkpoints"]}
        if converging_op is not None:
            body["learning_study"]["converging_operating_point"] = {"digest": converging_op.digest,
                                                                    "record": converging_op.record()}
    if findings is not None:
        body[RESULTS_KEY] = findings.record()
    return body


def write(p, **parts) -> Path:
    """Write the chapter's results file `05_solver.json` into `p.out_dir` (`payload`'s body, `parts` its keyword
    arguments, with the run manifest) and return its path."""
    return results.write_results(p.out_dir, "05_solver", p.record, payload(p, **parts), p.torch_device)
