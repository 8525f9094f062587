"""Regenerate both committed learning studies, chapter 05's (Leduc) and then chapter 06's (Kuhn), in one command.

    make regenerate-studies                                     # steady options, 24 recorded budgets per decade
    .venv/bin/python scripts/regenerate_studies.py --converging-options steady --per-decade 24
    .venv/bin/python scripts/regenerate_studies.py --dry-run    # print the commands and change nothing

What it does, in order (each step stops the script when it fails):

1. runs the solver chapter with `study_file ""` (the whole study: tuning on the development seeds, then every
   learner, arm and seed) at the chosen converging options and recorded budgets per decade, into
   `runs/regenerate/05` (finished runs kept in `runs/regenerate/05-store`, so a stopped run resumes), and copies
   `05_solver_study.json` and its checkpoints into `results/`;
2. sets the solver notebook's defaults of `converging_options` and `curve_per_decade` to the chosen ones (the
   chapter refuses to show a study run with other options than its parameters say);
3. runs the transfer chapter the same way (its converging operating point is frozen from the new Leduc study in
   `results/`, so the old Kuhn study is stale), into `runs/regenerate/06`, and copies `06_transfer_study.json`,
   its checkpoints and the Kuhn-tuned control's checkpoints into `results/`;
4. prints each study's wall time.

It does not re-execute the notebooks: do that next (every chapter, since the library's source digest is in each
manifest): `make notebooks` (or `.venv/bin/python -m oscc_core execute 05_solver 06_transfer` and then the rest),
then `make verify-studies` and `make test`.  On this book's two cores the committed studies took 20 and 6 minutes
(README: regenerating both studies).
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from oscc_core.chapters.solver.parameters import MAX_PER_DECADE
from oscc_core.learning.study_design import CONVERGING_OPTIONS

ROOT = Path(__file__).resolve().parent.parent
RESULTS, NOTEBOOKS = ROOT / "results", ROOT / "notebooks"
#: The committed studies' reporting seeds and multiples (README: the learning study, the converging learner on Kuhn).
SEEDS = "13,17,19,23,29,31,37,41,43,47,53,59,61,67,71,73,79,83,89,97,101,103,107,109,113,127,131,137,139,149"
SOLVER_MULTIPLES, TRANSFER_MULTIPLES = "1,10,100,160", "1,10,100"
SOLVER_FILES = ("05_solver_study.json", "05_solver_study_checkpoints.json.gz")
TRANSFER_FILES = ("06_transfer_study.json", "06_transfer_study_checkpoints.json.gz",
                  "06_transfer_study_control_checkpoints.json.gz")


def chapter_command(chapter: str, out: Path, store: Path, seeds: str, multiples: str, workers: int,
                    scheduler: str, extra: list[str]) -> list[str]:
    """`python -m oscc_core run <chapter>` running its whole study into `out`, finished runs kept in `store`."""
    cmd = [sys.executable, "-m", "oscc_core", "run", chapter, "-p", "study_file", "", "-p", "study_seeds", seeds,
           "-p", "study_multiples", multiples, "-p", "study_store", str(store), "-p", "workers", str(workers),
           *extra, "-o", str(out)]
    return cmd + (["-p", "scheduler", scheduler] if scheduler else [])


def set_defaults(notebook: Path, values: dict[str, str]) -> None:
    """Rewrite `name: type = value` lines of the notebook's parameters cell (their comments kept), in the
    notebook's own JSON layout."""
    text = notebook.read_text(encoding="utf-8")
    nb = json.loads(text)
    cell = next(c for c in nb["cells"] if "parameters" in c["metadata"].get("tags", []))
    source = "".join(cell["source"])
    for name, value in values.items():
        source, n = re.subn(rf"^({name}: \w+ = )[^#\n]*?(\s+#)", rf"\g<1>{value}\g<2>", source, flags=re.M)
        if n != 1:
            raise SystemExit(f"error: {notebook.name}'s parameters cell has no single line for {name}.")
    lines = source.split("\n")
    cell["source"] = [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    notebook.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def step(label: str, cmd: list[str], dry: bool) -> float:
    """Run one chapter (or print it when `dry`); its wall time in seconds."""
    print(f"{label}: {' '.join(repr(c) if c == '' else c for c in cmd)}", flush=True)
    if dry:
        return 0.0
    start = time.perf_counter()
    if subprocess.run(cmd, cwd=ROOT).returncode != 0:
        raise SystemExit(f"error: {label} failed; finished runs are kept in its store, so rerunning resumes.")
    return time.perf_counter() - start


def copy(names, source: Path, dry: bool) -> None:
    for name in names:
        print(f"  copy {source / name} -> results/{name}", flush=True)
        if not dry:
            if not (source / name).is_file():
                raise SystemExit(f"error: {source / name} was not written.")
            shutil.copyfile(source / name, RESULTS / name)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--converging-options", default="steady", choices=tuple(CONVERGING_OPTIONS),
                    help="the converging learner's option set (default steady: issue 38's learner)")
    ap.add_argument("--per-decade", type=int, default=24, help="recorded budgets per decade (default 24)")
    ap.add_argument("--seeds", default=SEEDS, help="reporting seeds of both studies (default: the committed 30)")
    ap.add_argument("--workers", type=int, default=2, help="local Dask worker processes (default 2)")
    ap.add_argument("--scheduler", default="", help="address of an existing Dask scheduler instead")
    ap.add_argument("--work", type=Path, default=ROOT / "runs" / "regenerate", help="outputs and run stores")
    ap.add_argument("--only", choices=("05", "06"), help="regenerate one study only (06 reads results/' 05)")
    ap.add_argument("--anchors", action="store_true",
                    help="also rerun OpenSpiel's MCCFR anchors after the Leduc study (scripts/run_anchors.py; about "
                         "40 minutes on two cores; they do not depend on the learners)")
    ap.add_argument("--dry-run", action="store_true", help="print the commands, run and change nothing")
    args = ap.parse_args(argv)
    if not 1 <= args.per_decade <= MAX_PER_DECADE:
        ap.error(f"--per-decade must be an integer from 1 to {MAX_PER_DECADE}, got {args.per_decade}.")
    options = ["-p", "converging_options", args.converging_options, "-p", "curve_per_decade", str(args.per_decade)]
    seconds = {}
    if args.only in (None, "05"):
        out = args.work / "05"
        seconds["05_solver_study"] = step("05 (Leduc study)", chapter_command(
            "solver", out, args.work / "05-store", args.seeds, SOLVER_MULTIPLES, args.workers, args.scheduler,
            options + ["-p", "anchors_file", ""]), args.dry_run)
        copy(SOLVER_FILES, out, args.dry_run)
        print(f"  set notebooks/05_solver.ipynb defaults: converging_options {args.converging_options!r}, "
              f"curve_per_decade {args.per_decade}", flush=True)
        if not args.dry_run:
            set_defaults(NOTEBOOKS / "05_solver.ipynb", {"converging_options": json.dumps(args.converging_options),
                                                         "curve_per_decade": str(args.per_decade)})
    if args.anchors and args.only in (None, "05"):
        seconds["05_solver_mccfr_study"] = step("05 anchors (OpenSpiel's MCCFR beside the study)", [
            sys.executable, str(ROOT / "scripts" / "run_anchors.py"), "--workers", str(args.workers),
            *(["--scheduler", args.scheduler] if args.scheduler else [])], args.dry_run)
    if args.only in (None, "06"):
        out = args.work / "06"
        seconds["06_transfer_study"] = step("06 (Kuhn study at the operating point frozen from results/' 05)",
                                            chapter_command("transfer", out, args.work / "06-store", args.seeds,
                                                            TRANSFER_MULTIPLES, args.workers, args.scheduler, []),
                                            args.dry_run)
        copy(TRANSFER_FILES, out, args.dry_run)
    for name, s in seconds.items():
        print(f"{name}: {s / 60:.1f} min wall time")
    print("Next: re-execute every chapter (make notebooks), then make verify-studies and make test.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
