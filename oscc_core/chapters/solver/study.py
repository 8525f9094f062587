"""The learning study of the chapter: both learners, every learned arm, many seeds, budgets up to 160 x the
paper's, exploitability (chips) against physical calls.

Two ways to run it (`run`):

* with `study_file` (the default): the committed study is shown, and a small
  live study (the parameters' seeds and multiples, the committed study's
  step sizes) is rerun on Dask and checked against it run by run: every
  shared (learner, arm, seed, budget) record must be the same number;
* with `study_file = ""`: the whole study is run (tuning on the development
  seeds included) and written to `05_solver_study.json`, with the
  converging runs' checkpoints at the largest budget in
  `05_solver_study_checkpoints.json.gz` (OpenSpiel-keyed, "<learner>/<arm>/
  <seed>"), each recomputed by pyspiel.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

from oscc_core.learning import study_design as design
from oscc_core.learning.checkpoints import openspiel_check, save_checkpoints
from oscc_core.reporting import claims, learning_study
from oscc_core.reporting.learning_study import CONVERGING_GRIDS, LearningStudy
from oscc_core.reporting.results import clean

STUDY_STEM, CHECKPOINTS_FILE = "05_solver_study", "05_solver_study_checkpoints.json.gz"
#: The paper's exploitability of each arm's average policy at its matched budget (tab:measured-grpo-ppo).
PAPER_EXPLOITABILITY = {arm: f"grpo_ppo.{label}.exploitability" for arm, label in
                        (("cp_grpo", "cp_grpo_paired"), ("independent", "independent"), ("grpo", "standard_grpo"),
                         ("ppo", "standard_ppo"))}
#: Round thresholds of exploitability (chips) the calls-to-threshold table asks about, beside the paper's value
#: for CP-GRPO (`thresholds`).
ROUND_THRESHOLDS = (0.2, 0.17)


def thresholds() -> tuple[float, ...]:
    """0.2 and 0.17 chips, and the paper's exploitability of CP-GRPO."""
    return ROUND_THRESHOLDS + (float(claims.claim(PAPER_EXPLOITABILITY["cp_grpo"])),)


def design_of(p, seeds=None, multiples=None) -> LearningStudy:
    """The study the parameters `p` describe (seeds and multiples default to the parameters'): the converging
    learner with the named options of `p.converging_options` and their starting grid, every run recorded at
    `p.curve_per_decade` budgets per decade."""
    return LearningStudy(p.game, p.budget, tuple(multiples or p.study_multiples), tuple(seeds or p.study_seeds),
                         tuple(p.dev_seeds), thresholds(), design.with_options(p.base_schedule(), p.converging_options),
                         grids=(("literal", design.Grid(eta=tuple(p.eta_grid))),
                                ("converging", CONVERGING_GRIDS[p.converging_options])),
                         converging_options=p.converging_options, curve_per_decade=p.curve_per_decade)


def store(p) -> str:
    """The directory that keeps every finished run: `p.study_store`, or a fresh temporary one."""
    return learning_study.study_store(p.study_store, "oscc-study-")


live_check = learning_study.live_check
bit_equality_expected = learning_study.bit_equality_expected


def run(p) -> dict:
    """The study to show, and what was run: {"study", "live_check" or None, "checkpoints" or None, "seconds",
    "workers", "ran", "stored"} (module docstring)."""
    where, start = store(p), time.perf_counter()
    if p.study_file:
        committed = json.loads(Path(p.study_file).read_text(encoding="utf-8"))
        choices = {learner: arms for learner, arms in committed["choices"].items()}
        live = design_of(p).run(where, choices, p.workers, p.scheduler or None, p.torch_device)
        return {"study": committed, "live_check": live_check(committed, live["study"]), "checkpoints": None,
                "seconds": time.perf_counter() - start, "workers": live["workers"], "ran": live["ran"],
                "stored": live["stored"]}
    code = learning_study.writer_commit()        # the code as it stands when the runs start
    done = design_of(p).run(where, None, p.workers, p.scheduler or None, p.torch_device, coupling_grid=True)
    path = Path(p.out_dir) / CHECKPOINTS_FILE
    save_checkpoints(path, {key: (p.game, table) for key, table in done["tables"].items()})
    ours = {key: done["study"]["runs"][key.split("/")[0]][key.split("/")[1]][key.split("/")[2]][
        str(max(done["study"]["design"]["recorded_budgets"]))]["exploitability_average"] for key in done["tables"]}
    check = openspiel_check(path, ours, lambda key: p.game)
    return {"study": done["study"], "live_check": None, "checkpoints": clean(check), "code": code,
            "seconds": time.perf_counter() - start, "workers": done["workers"], "ran": done["ran"],
            "stored": done["stored"]}


def write(p, result: dict) -> Path | None:
    """`05_solver_study.json` in the output directory when the whole study ran (its manifest: the design's
    parameters, the library's source digest, the wall time and the workers)."""
    if result["checkpoints"] is None:
        return None
    from oscc_core.reporting.results import write_results

    body = {**result["study"], "checkpoints": result["checkpoints"],
            "run": {"seconds": round(result["seconds"], 1), "workers": result["workers"], "ran": result["ran"],
                    "stored": result["stored"], **result["code"]}}
    return write_results(p.out_dir, STUDY_STEM, p.record, body, "cpu")


def converging_operating_point(p, shown: dict):
    """The converging learner's frozen operating point, from the study's choices and design (the transfer
    chapter builds the same object from the same file and prints the same digest)."""
    from oscc_core.learning.operating_point import study_operating_point

    rule = learning_study.rule_of_design(shown["design"])
    return study_operating_point(p.game, learning_study.rule_base(p.base_schedule(), rule), "converging",
                                 shown["choices"]["converging"], rule)


def load_anchors(p) -> dict | None:
    """The MCCFR anchors shown beside the study (`p.anchors_file`), or None when none is named."""
    from oscc_core.chapters.solver import anchors

    return anchors.load(p.anchors_file) if p.anchors_file else None
