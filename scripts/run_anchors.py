"""Run OpenSpiel's ES- and OS-MCCFR beside the committed Leduc learning study and write their file.

    .venv/bin/python scripts/run_anchors.py                       # results/05_solver_mccfr_study.json
    .venv/bin/python scripts/run_anchors.py --seeds 13,17 --out /tmp/anchors

The anchors run on the study's first 10 reporting seeds at its recorded budgets (ES-MCCFR up to its largest,
OS-MCCFR up to 16 times the paper's budget), counting every history they touch
(`oscc_core.chapters.solver.anchors`, `oscc_core.learning.mccfr_anchor`).  They do not depend on the book's
learners, so regenerating a study leaves them as they are; `make regenerate-studies REGENERATE_ARGS=--anchors`
reruns them too.  On two cores they take about 40 minutes.  The chapter shows the file; `make verify-studies`
reruns one seed of it up to a budget and compares every record bit for bit.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv=None) -> int:
    from oscc_core.chapters.solver import anchors

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--study", type=Path, default=ROOT / "results" / "05_solver_study.json",
                    help="the learning study whose game, seeds and budgets the anchors take")
    ap.add_argument("--seeds", default="", help="comma-separated seeds (default: the study's first 10)")
    ap.add_argument("--workers", type=int, default=2, help="local Dask worker processes (default 2)")
    ap.add_argument("--scheduler", default="", help="address of an existing Dask scheduler instead")
    ap.add_argument("--out", type=Path, default=ROOT / "results", help="directory the file is written to")
    args = ap.parse_args(argv)
    if args.workers < 1:
        ap.error(f"--workers must be at least 1, got {args.workers}.")
    design = json.loads(args.study.read_text(encoding="utf-8"))["design"]
    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()] or None
    except ValueError:
        ap.error(f"--seeds must be comma-separated whole numbers, got {args.seeds!r}.")
    start = time.perf_counter()
    body = anchors.run(design, args.workers, args.scheduler or None, seeds)
    path = anchors.write(args.out, {"study": args.study.name, "seeds": body["design"]["seeds"],
                                    "os_multiples": list(anchors.OS_MULTIPLES)}, body)
    print(f"wrote {path} in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
