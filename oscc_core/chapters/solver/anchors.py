"""OpenSpiel's ES- and OS-MCCFR beside the learning study, on its axis: sampled terminal histories, counted.

The anchors are runs of OpenSpiel's own solvers (`learning.mccfr_anchor`) on the study's first `ANCHOR_SEEDS`
reporting seeds, recorded at the study's budgets (in terminal histories): ES-MCCFR up to the study's largest
budget, OS-MCCFR, far slower per terminal history, up to `OS_MULTIPLES` of the paper's budget.  They are
committed in their own file (`ANCHORS_FILE`), since they do not depend on the book's learners: regenerating a
learning study leaves them as they are.  `run` makes the file (the chapter with `anchors_file = ""`,
`make regenerate-studies`), `load` reads it; `verify` reruns one seed up to a budget and compares every record
bit for bit (`scripts/verify_studies.py`).

Units: budgets and counts in histories (terminal histories: one per physical call of a learner's branch
rollout), exploitability in chips (NashConv / 2 of the average policy).
"""
from __future__ import annotations

import json
from pathlib import Path

from oscc_core.learning import mccfr_anchor as mccfr
from oscc_core.learning import study_design as design
from oscc_core.reporting.results import clean

ANCHORS_STEM = "05_solver_mccfr_study"
ANCHORS_FILE = f"{ANCHORS_STEM}.json"
#: How many of the study's reporting seeds the anchors run on (the first ones, in the study's order).
ANCHOR_SEEDS = 10
#: OS-MCCFR's largest budget, as multiples of the paper's budget (it stays far behind every learner there).
OS_MULTIPLES = (1, 10, 16)


def budgets_of(study_design: dict) -> dict[str, tuple[int, ...]]:
    """{solver: recorded budgets}: the study's own recorded budgets (ES-MCCFR), and those up to `OS_MULTIPLES`
    of its budget at the same density (OS-MCCFR)."""
    per_decade = study_design.get("curve_per_decade", design.DEFAULT_PER_DECADE)
    return {mccfr.ES: tuple(int(b) for b in study_design["recorded_budgets"]),
            mccfr.OS: design.curve_budgets(int(study_design["budget"]), OS_MULTIPLES, per_decade)}


def _one(job: tuple) -> tuple:
    kind, game, seed, budgets = job
    out = mccfr.run_anchor(kind, game, seed, budgets)
    return kind, seed, out["records"], out["table"].tolist()


def run(study_design: dict, workers: int = 2, scheduler: str | None = None, seeds=None) -> dict:
    """The anchors of the study whose design record is `study_design` (its game, seeds and budgets): {"design",
    "runs": {solver: {seed: {budget: record}}}, "checkpoints": {"<solver>/<seed>": {"ours", "pyspiel"}}} (the
    largest budget's average policy rechecked by `pyspiel.exploitability`)."""
    from oscc_core.learning.checkpoints import openspiel_exploitability
    from oscc_core.policy import table_to_policy
    from oscc_core.reporting.dask_cluster import client

    game = study_design["game"]
    seeds = tuple(seeds or study_design["seeds"][:ANCHOR_SEEDS])
    budgets = budgets_of(study_design)
    jobs = [(kind, game, int(seed), budgets[kind]) for kind in mccfr.SOLVERS for seed in seeds]
    with client(workers, scheduler) as c:
        done = c.gather(c.map(_one, jobs, pure=False))
    runs, checks = {}, {}
    for kind, seed, records, table in done:
        runs.setdefault(kind, {})[str(seed)] = records
        top = records[str(max(budgets[kind]))]["exploitability_average"]
        import numpy as np

        checks[f"{kind}/{seed}"] = {"ours": top, "pyspiel": openspiel_exploitability(
            game, table_to_policy(game, np.asarray(table)))}
    return clean({"design": design_record(study_design, seeds, budgets), "runs": runs, "checkpoints": checks})


def design_record(study_design: dict, seeds, budgets: dict) -> dict:
    """What the anchors ran: game, seeds, each solver's budgets and OpenSpiel's version."""
    from importlib.metadata import version

    return {"game": study_design["game"], "seeds": [int(s) for s in seeds],
            "budgets": {kind: list(b) for kind, b in budgets.items()}, "os_exploration": mccfr.OS_EXPLORATION,
            "open_spiel": version("open_spiel")}


def write(out_dir, parameters: dict, anchors: dict) -> Path:
    """`05_solver_mccfr_study.json` (`ANCHORS_FILE`) in `out_dir`, with its manifest."""
    from oscc_core.reporting.results import write_results

    return write_results(out_dir, ANCHORS_STEM, parameters, anchors, "cpu")


def load(path) -> dict:
    """The committed anchors file."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def verify(anchors: dict, seed: int, up_to: int) -> dict:
    """Rerun both solvers for `seed` up to `up_to` terminal histories and compare every record bit for bit:
    {"records": compared, "differences": lines, "agrees"}."""
    from oscc_core.digest import canonical_json

    game, lines, compared = anchors["design"]["game"], [], 0
    for kind, budgets in anchors["design"]["budgets"].items():
        kept = [b for b in budgets if b <= up_to]
        committed = anchors["runs"][kind].get(str(seed))
        if not kept or committed is None:
            continue
        rerun = clean(mccfr.run_anchor(kind, game, seed, kept)["records"])
        for b in kept:
            compared += 1
            if canonical_json(committed.get(str(b))) != canonical_json(rerun.get(str(b))):
                lines.append(f"{ANCHORS_STEM}/{kind}/{seed}/{b}: committed {committed.get(str(b))}, rerun "
                             f"{rerun.get(str(b))}")
    return {"records": compared, "differences": lines, "agrees": compared > 0 and not lines}
