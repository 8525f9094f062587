"""`make mutants`: mutation testing of the rule and learner modules with mutmut, each module against its own tests.

    .venv/bin/python scripts/mutants.py                    # every module of GROUPS, 2 mutant processes at a time
    .venv/bin/python scripts/mutants.py calls_rules why    # some modules (a part of their path)
    .venv/bin/python scripts/mutants.py --children 1 --diffs /tmp/survivors.txt

For each module the script lays a scratch copy of the library, the tests, book/ and results/ in a temporary
directory outside the repository, writes mutmut's configuration there ([tool.mutmut] in that copy's
pyproject.toml: the one module to mutate, and only its own test files), and runs `mutmut run` over the module's
mutants (mutmut's name patterns: for `learning/loop.py` only the schedule's options, `Schedule`).  mutmut copies
again into the scratch directory's mutants/, so nothing it writes lands in the repository.  Property tests run
with fewer examples (`OSCC_HYPOTHESIS_PROFILE=mutants`, tests/conftest.py).

Printed: per module, its mutants, how many its tests killed (a timeout counts as caught), how many survived (a
mutant of a function no test of the module calls counts as a survivor), and the survival rate; then every
survivor by name, and with --diffs FILE each survivor's change (mutmut's diff) in FILE.  Exit status 0 (a report,
not a gate: `make mutants` is not part of CI), 2 on a usage error.
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: module -> (mutmut name patterns of its counted mutants, its own test files and pytest selection arguments).
GROUPS = {
    "oscc_core/learning/calls_rules.py": (
        ["oscc_core.learning.calls_rules.*"],
        ["tests/test_calls_rules.py", "tests/test_calls_rules_spec.py"]),
    "oscc_core/learning/study_design.py": (
        ["oscc_core.learning.study_design.*"],
        ["tests/test_study_design_spec.py", "tests/test_study_statistics.py", "tests/test_learning_options_spec.py",
         "tests/test_coupling_grid_design.py", "tests/test_curve_rise.py"]),
    "oscc_core/learning/loop.py": (
        ["oscc_core.learning.loop.xǁScheduleǁ*"],
        ["tests/test_learning_options_spec.py"]),
    "oscc_core/reporting/claims.py": (
        ["oscc_core.reporting.claims.x__finite*", "oscc_core.reporting.claims.x_size_agrees*",
         "oscc_core.reporting.claims.x_size_test*", "oscc_core.reporting.claims.x_verdict*"],
        ["tests/test_claims.py", "tests/test_verdict_properties.py", "tests/test_rule_boundaries_spec.py",
         "tests/test_claims_refusals_spec.py"]),
    "oscc_core/reporting/numbers.py": (
        ["oscc_core.reporting.numbers.*"],
        ["tests/test_rows.py", "tests/test_numbers_spec.py", "tests/test_rule_boundaries_spec.py"]),
    "oscc_core/reporting/why.py": (
        ["oscc_core.reporting.why.x_size_sentence*"],
        ["tests/test_why.py", "tests/test_why_size_sentence_spec.py", "tests/test_rule_boundaries_spec.py"]),
    "oscc_core/reporting/study_verification.py": (
        ["oscc_core.reporting.study_verification.*"],
        ["tests/test_study_verification.py", "tests/test_study_verification_spec.py",
         "tests/test_study_verification_parts_spec.py",
         # a script run in a subprocess imports the unmutated library: those tests cannot see a mutant
         "-k", "not (committed_studies_agree or moved_by_one_unit or exits_2 or scheduler_where or dashboard_like)"]),
}
KILLED = {1, 3, 36, 24, -24, 152, 255, 37}          # killed, pytest's internal error, timeouts, type check
SURVIVED = {0, 5, 33}                               # survived, no tests
COPIED = ("oscc_core", "tests", "book", "results")


def scratch_copy(root: Path, module: str, patterns: list, tests: list) -> Path:
    """A temporary directory holding `root`'s library, tests, book/ and results/, and a pyproject.toml whose
    [tool.mutmut] mutates `module` alone against `tests`."""
    here = Path(tempfile.mkdtemp(prefix="oscc-mutants-"))
    for part in COPIED:
        if (root / part).exists():
            shutil.copytree(root / part, here / part, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    config = {"source_paths": ["oscc_core"], "only_mutate": [module], "also_copy": ["book", "results"],
              "pytest_add_cli_args": ["-p", "no:cacheprovider", "-p", "no:xdist", "-q"],
              "pytest_add_cli_args_test_selection": tests, "process_isolation": "forkserver"}
    lines = ["", "[tool.mutmut]"] + [f"{k} = {json.dumps(v, ensure_ascii=False)}" for k, v in config.items()]
    text = (root / "pyproject.toml").read_text(encoding="utf-8").split("\n[tool.mutmut]")[0]
    (here / "pyproject.toml").write_text(text + "\n".join(lines) + "\n", encoding="utf-8")
    # a git checkout of its own, so the code that reads the commit (study_verification.commit_of) is tested there too
    for command in (["init", "-q"], ["add", "-A"], ["-c", "user.name=mutants", "-c", "user.email=mutants@localhost",
                                                    "commit", "-q", "-m", "scratch copy"]):
        subprocess.run(["git", *command], cwd=here, capture_output=True, check=False)
    return here


def run_module(root: Path, module: str, patterns: list, tests: list, children: int, diffs) -> dict:
    """Mutmut over one module in its scratch copy: {"mutants", "killed", "survivors": [name], "other", "seconds"}."""
    here = scratch_copy(root, module, patterns, tests)
    mutmut = Path(sys.executable).with_name("mutmut")
    env = dict(os.environ, OSCC_HYPOTHESIS_PROFILE="mutants")
    start = time.monotonic()
    try:
        done = subprocess.run([str(mutmut), "run", "--max-children", str(children), *patterns], cwd=here, env=env,
                              capture_output=True, text=True)
        meta = here / "mutants" / f"{module}.meta"
        if not meta.is_file():
            raise RuntimeError(f"mutmut did not run on {module}: {(done.stdout + done.stderr)[-2000:]}")
        codes = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
        codes = {n: c for n, c in codes.items() if any(fnmatch.fnmatchcase(n, p) for p in patterns)}
        survivors = sorted(n for n, c in codes.items() if c in SURVIVED)
        if diffs is not None:
            for name in survivors:
                shown = subprocess.run([str(mutmut), "show", name], cwd=here, capture_output=True, text=True)
                diffs.write(f"## {name} [{'no tests' if codes[name] in (5, 33) else 'survived'}]\n{shown.stdout}\n")
        return {"mutants": len(codes), "killed": sum(c in KILLED for c in codes.values()), "survivors": survivors,
                "other": sum(c not in KILLED | SURVIVED for c in codes.values()), "seconds": time.monotonic() - start}
    finally:
        shutil.rmtree(here, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("modules", nargs="*", help="only the modules whose path holds one of these words")
    ap.add_argument("--children", type=int, default=2, help="mutant processes at a time (default 2)")
    ap.add_argument("--diffs", type=Path, help="write each survivor's change to this file")
    ap.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)     # another checkout (a 'before')
    ap.add_argument("--groups", type=Path, help=argparse.SUPPRESS)                # its own GROUPS, as JSON
    args = ap.parse_args(argv)
    groups = json.loads(args.groups.read_text()) if args.groups else GROUPS
    chosen = {m: g for m, g in groups.items() if not args.modules or any(w in m for w in args.modules)}
    if not chosen or args.children < 1:
        print(f"error: modules must name some of {', '.join(groups)}, and --children be at least 1.", file=sys.stderr)
        return 2
    diffs = args.diffs.open("w", encoding="utf-8") if args.diffs else None
    print(f"{'module':<44} {'mutants':>8} {'killed':>7} {'survived':>9} {'rate':>6} {'time':>6}", flush=True)
    killed = survived = 0
    names = []
    for module, (patterns, tests) in chosen.items():
        got = run_module(args.root, module, patterns, tests, args.children, diffs)
        n = got["killed"] + len(got["survivors"])
        note = f"  ({got['other']} suspicious or not run)" if got["other"] else ""
        print(f"{module:<44} {got['mutants']:>8} {got['killed']:>7} {len(got['survivors']):>9} "
              f"{(len(got['survivors']) / n if n else 0):>6.1%} {got['seconds']:>5.0f}s{note}", flush=True)
        killed += got["killed"]
        survived += len(got["survivors"])
        names += got["survivors"]
    total = killed + survived
    print(f"{'all':<44} {total:>8} {killed:>7} {survived:>9} {(survived / total if total else 0):>6.1%}")
    if names:
        print("\nsurvivors:" + "".join(f"\n  {n}" for n in names))
    if diffs is not None:
        diffs.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
