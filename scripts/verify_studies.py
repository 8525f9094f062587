"""Rerun one seed of each committed learning study at every learner, arm and budget, and compare each record with
the committed file bit for bit (`make verify-studies`, run by CI).

    .venv/bin/python scripts/verify_studies.py                 # both committed studies, the seed the commit draws
    .venv/bin/python scripts/verify_studies.py --seed 149      # another seed
    .venv/bin/python scripts/verify_studies.py FILE --up-to 61440   # one study file, budgets up to 61,440 calls

The seed is drawn from each study's own seeds by the commit's hash (`git rev-parse HEAD`; outside a git checkout,
by the library's source digest, and the script says so), so successive commits cover every seed.  The runs go to
a local Dask cluster of `--workers` processes (or to `--scheduler`), their store is a temporary directory, and
nothing is written into the repository.  Where a study's checkpoints file lies beside it (the control's too), the
seed's checkpoints must be the rerun's average policies and pyspiel's recheck must give the committed values.
Exit status: 0 when every record agrees, 1 when any record or checkpoint differs (each difference is printed),
2 on a usage error (one sentence on stderr, before anything runs: a file that is not a committed study, a seed the
study did not run, --up-to below the smallest recorded budget, --workers below 1, a scheduler address where no
Dask scheduler answers), so CI tells a typo from a moved study.  The last line says how many records were
compared, and how many checkpoints.
See `oscc_core.reporting.study_verification`.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from oscc_core.reporting.dask_cluster import SchedulerUnreachable, check_scheduler
from oscc_core.reporting.results import package_versions
from oscc_core.reporting.study_runner import run_tasks
from oscc_core.reporting.study_verification import commit_of, compare, draw_seed, parts_of, tasks_of, text

ROOT = Path(__file__).resolve().parent.parent
STUDIES = (ROOT / "results" / "05_solver_study.json", ROOT / "results" / "06_transfer_study.json")
#: OpenSpiel's MCCFR runs beside the Leduc study (`oscc_core.chapters.solver.anchors`), checked with the default
#: studies: one of their seeds (the asked one when they ran it, else drawn by the commit) up to this many terminal
#: histories (the paper's budget: OpenSpiel's Python solvers take about 15 s to get there).
ANCHORS = ROOT / "results" / "05_solver_mccfr_study.json"
ANCHOR_UP_TO = 61_440


class UsageError(Exception):
    """A bad command line: one sentence on stderr, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):              # argparse's usage errors: one sentence, exit 2 (not usage + message)
        raise UsageError(f"{message} (see --help).")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def parser() -> argparse.ArgumentParser:
    ap = _Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("studies", nargs="*", type=Path, default=list(STUDIES), help="committed study files")
    ap.add_argument("--seed", type=int, help="rerun this seed instead of the one the commit draws")
    ap.add_argument("--up-to", type=_positive, help="only the budgets up to this many physical calls (a quick check)")
    ap.add_argument("--workers", type=_positive, default=2, help="local Dask worker processes (default 2)")
    ap.add_argument("--scheduler", default=None, help="address of an existing Dask scheduler instead")
    return ap


def plan_of(args, commit: str, how: str) -> tuple[list, dict, list[str]]:
    """Every (part, seed, tasks) to rerun, the package versions each study records, and the lines saying which seed
    and why; raises UsageError (one sentence) on a file that is not a study, a seed it did not run or an --up-to
    below its smallest recorded budget.  Nothing runs here."""
    plan, versions, lines = [], {}, []
    for path in args.studies:
        try:
            body = json.loads(path.read_text(encoding="utf-8"))
            parts = parts_of(body, path.stem, path.parent)
        except FileNotFoundError:
            raise UsageError(f"{path} does not exist: give committed study files such as "
                             f"results/05_solver_study.json.") from None
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            raise UsageError(f"{path} is not a committed learning study file ({type(e).__name__}: {e}).") from None
        seed = args.seed if args.seed is not None else draw_seed(parts[0].seeds, commit)
        why = "given by --seed" if args.seed is not None else \
            f"drawn by {how} from the study's {len(parts[0].seeds)} seeds"
        for part in parts:
            try:
                plan.append((part, seed, tasks_of(part, seed, args.up_to)))
            except ValueError as e:
                raise UsageError(f"--{str(e).replace('up_to', 'up-to', 1)}") from None
        lines.append(f"{path.stem}: seed {seed} ({why})")
        versions[path.stem] = body.get("manifest", {}).get("package_versions")
    return plan, versions, lines


def main(argv=None) -> int:
    try:
        args = parser().parse_args(argv)
        commit, how = commit_of(ROOT)
        plan, versions, lines = plan_of(args, commit, how)
        if args.scheduler:
            check_scheduler(args.scheduler)
    except (UsageError, SchedulerUnreachable) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print("\n".join(lines), flush=True)

    tasks = [t for _, _, ts in plan for t in ts]
    order = sorted(range(len(tasks)), key=lambda i: (-max(tasks[i].budgets), tasks[i].game != "leduc"))
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="oscc-verify-studies-") as store:
        done = run_tasks([tasks[i] for i in order], store, args.workers, args.scheduler)
    results = dict(zip(order, done["results"]))
    seconds = time.perf_counter() - start

    agrees, first, records, checkpoints = True, 0, 0, 0
    for part, seed, ts in plan:
        check = compare(part, seed, [results[i] for i in range(first, first + len(ts))], args.up_to)
        first += len(ts)
        agrees &= check["agrees"]
        records += check["records"]
        checkpoints += check["checkpoints"] or 0
        print(text(check))
    print(f"{len(tasks)} runs in {seconds:.0f} s on {done['workers']} worker(s): {records:,} records and "
          f"{checkpoints} checkpoints compared")
    if ANCHORS.is_file() and list(args.studies) == list(STUDIES):
        agrees &= check_anchors(commit, how, args.seed, min(args.up_to or ANCHOR_UP_TO, ANCHOR_UP_TO))
    if not agrees:
        here = package_versions()
        for stem, recorded in versions.items():
            if recorded is not None and recorded != here:
                print(f"{stem} was written with {recorded}, but this environment has {here}: install the lock "
                      f"(make setup) before concluding that the code moved the study.")
        print("A change that moves a study's numbers regenerates that study in the same change (README: the "
              "learning study).")
    return 0 if agrees else 1


def check_anchors(commit: str, how: str, asked: int | None, up_to: int) -> bool:
    """Rerun one seed of the committed MCCFR anchors up to `up_to` terminal histories and compare every record bit
    for bit; prints one line (and one per difference); whether they agree."""
    from oscc_core.chapters.solver import anchors

    body = anchors.load(ANCHORS)
    seeds = body["design"]["seeds"]
    seed = asked if asked in seeds else draw_seed(seeds, commit)
    why = "given by --seed" if asked in seeds else f"drawn by {how} from the anchors' {len(seeds)} seeds"
    check = anchors.verify(body, seed, up_to)
    found = "bit for bit" if check["agrees"] else ("nothing to compare" if not check["records"] else "DIFFERS")
    print(f"{ANCHORS.stem}: seed {seed} ({why}), {check['records']} records up to {up_to:,} terminal "
          f"histories: {found}")
    for line in check["differences"]:
        print(f"  {line}")
    return check["agrees"]


if __name__ == "__main__":
    sys.exit(main())
