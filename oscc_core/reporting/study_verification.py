"""Rerun one seed of a committed learning study at every learner, arm and budget, and compare each record bit for bit.

The chapters' live reruns check their committed studies at small budgets
only; this check reruns one seed at full depth (`make verify-studies`,
`scripts/verify_studies.py`, in CI).  Everything it reruns is read from the
committed file, not from the code's defaults, so it keeps working after a
study is regenerated with another design: the game, the shared schedule
(``design.base``), each learner's and arm's choices (``choices``), and, for
the chosen seed, every budget at which a record was kept (``runs``).  A
study file of the transfer chapter (one with an ``operating_point``) keeps
its runs without the learner level: they are the converging learner's, and
its Kuhn-tuned control (``kuhn_tuned``) is rerun beside them at its own
choices.

The seed is drawn from the study's own seeds by the commit being checked
(`draw_seed`: the commit hash, read as a number, modulo the number of seeds),
so successive commits cover every seed.  Each rerun record must be the same
bytes as the committed one (canonical JSON: every number, and every field);
a record that is missing on either side is a difference too.  A run's
records never depend on which other budgets or seeds its task holds
(`learning.study`), so one seed alone reproduces the study's records.

Where a checkpoints file lies beside the study file (``<stem>_checkpoints.json.gz``: the solver study's converging
runs, keys ``converging/<arm>/<seed>``; the transfer study's, ``kuhn/<arm>/<seed>``; and its control's,
``<stem>_control_checkpoints.json.gz``, keys ``kuhn_tuned/<arm>/<seed>``), the converging reruns keep their
average policy at the largest budget, and each of the seed's committed checkpoints must be that policy, byte for
byte, with pyspiel's exploitability of it the committed record's (`checkpoint_differences`).  A part without a
file is said to have none (the transfer studies committed before issue 33 kept none for the control).
"""
from __future__ import annotations

import math
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

from oscc_core.digest import canonical_json, source_digest
from oscc_core.learning import study_design as design
from oscc_core.learning.loop import Schedule
from oscc_core.learning.study import Task

#: The key of the transfer study's Kuhn-tuned control (`chapters.transfer.kuhn_tuned.KEY`).
CONTROL_KEY = "kuhn_tuned"
#: Where a study file's checkpoints lie, beside it: the study's own, and its control's
#: (`chapters.transfer.kuhn_tuned.CHECKPOINTS_FILE`; a test keeps the two names equal).
CHECKPOINTS, CONTROL_CHECKPOINTS = "{stem}_checkpoints.json.gz", "{stem}_control_checkpoints.json.gz"
#: chips: pyspiel's exploitability of a committed checkpoint against the committed record at the largest budget.
CHECKPOINT_TOLERANCE = 1e-8


@dataclass(frozen=True)
class Part:
    """One study in a committed file: what its runs are and what they recorded."""

    label: str          # e.g. "05_solver_study", "06_transfer_study/kuhn_tuned"
    game: str
    base: Schedule      # what every run shares (its step size and options are each arm's choice)
    choices: dict       # {learner: {arm: {"eta", "alpha", "kappa"}}}
    runs: dict          # {learner: {arm: {seed: {budget: record}}}}
    seeds: tuple
    checkpoints: str | None = None    # the committed checkpoints file of its converging runs (None: none committed)
    key_prefix: str | None = None     # a checkpoint's key is "<prefix>/<arm>/<seed>" ("<learner>/..." when None)


def parts_of(body: dict, name: str, directory: Path | None = None) -> list[Part]:
    """The studies a committed study file holds (module docstring), each as a `Part`, with the checkpoints files
    that lie beside it in `directory` (none looked for when None)."""
    def part(label, block, learner=None, file=CHECKPOINTS, prefix=None):
        d = block["design"]
        choices, runs = block["choices"], block["runs"]
        if learner is not None:
            choices, runs = {learner: choices}, {learner: runs}
        path = None if directory is None else Path(directory) / file.format(stem=name)
        return Part(label, d["game"], Schedule(**d["base"]), choices, runs, tuple(int(s) for s in d["seeds"]),
                    str(path) if path is not None and path.is_file() else None, prefix)

    if "operating_point" not in body:
        return [part(name, body)] + grid_parts(body, name)
    out = [part(name, body, design.CONVERGING, prefix=body["design"]["game"])]
    if CONTROL_KEY in body:
        out.append(part(f"{name}/{CONTROL_KEY}", body[CONTROL_KEY], design.CONVERGING, CONTROL_CHECKPOINTS,
                        CONTROL_KEY))
    return out


def grid_parts(body: dict, name: str) -> list[Part]:
    """One `Part` per cell of a study's coupling 2 x 2 (``coupling_grid.cells.<owner>.<baseline>``: both arms at
    the owner's choice, with the history baseline on or off; `learning.study_design.coupling_grid_tasks`)."""
    grid = body.get("coupling_grid")
    if not grid:
        return []
    d, out = body["design"], []
    for owner, by_baseline in grid["cells"].items():
        for baseline, cell in by_baseline.items():
            out.append(Part(f"{name}/coupling_grid/{owner}/{baseline}", d["game"], Schedule(**cell["base"]),
                            {design.GRID_LEARNER: {arm: cell["choice"] for arm in cell["runs"]}},
                            {design.GRID_LEARNER: cell["runs"]}, tuple(int(s) for s in d["seeds"])))
    return out


def commit_of(repo: Path) -> tuple[str, str]:
    """(a hexadecimal name of the code being checked, what it is): the commit at `repo`'s HEAD, or, outside a git
    checkout (or without git), the library's source digest."""
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True, timeout=30).stdout.strip()
        int(head, 16)
        return head, f"commit {head[:12]}"
    except (OSError, subprocess.SubprocessError, ValueError):
        digest = source_digest()
        return digest, f"not a git checkout: the library's source digest {digest[:12]} instead of a commit"


def draw_seed(seeds, commit: str) -> int:
    """The seed of `seeds` (in their recorded order) that the hexadecimal `commit` draws: commit mod len(seeds)."""
    seeds = tuple(seeds)
    if not seeds:
        raise ValueError("seeds must hold at least one seed to draw from, got none.")
    return int(seeds[int(commit, 16) % len(seeds)])


def recorded(part: Part, seed: int, up_to: int | None = None) -> dict:
    """{(learner, arm, seed, budget): record} the committed study kept for `seed` (budgets up to `up_to` calls)."""
    out = {}
    for learner, arms in part.runs.items():
        for arm, seeds in arms.items():
            for budget, rec in seeds.get(str(seed), {}).items():
                if up_to is None or int(budget) <= up_to:
                    out[(learner, arm, int(seed), int(budget))] = rec
    return out


def tasks_of(part: Part, seed: int, up_to: int | None = None) -> list[Task]:
    """One task per learner and arm of `choices`: `seed` alone, recorded at every budget the committed study kept
    for it (up to `up_to` calls)."""
    if seed not in part.seeds:
        raise ValueError(f"seed must be one of {part.label}'s seeds {list(part.seeds)}, got {seed!r}.")
    kept = recorded(part, seed, up_to)
    if up_to is not None and not kept and recorded(part, seed):
        smallest = min(budget for *_, budget in recorded(part, seed))
        raise ValueError(f"up_to must be at least {smallest:,} calls, the smallest budget {part.label} recorded for "
                         f"seed {seed}, got {up_to:,}: below it there is nothing to compare.")
    out = []
    for learner, arms in part.choices.items():
        for arm, c in arms.items():
            budgets = sorted(b for (ln, a, _, b) in kept if (ln, a) == (learner, arm))
            if budgets:
                schedule = design.learner_schedule(design.CONVERGING if learner == design.GRID_LEARNER else learner,
                                                   part.base, c["eta"], c.get("alpha", 0.0), c.get("kappa", 0.0))
                keep = part.checkpoints is not None and learner == design.CONVERGING and up_to is None
                out.append(Task.make(part.game, learner, arm, (seed,), schedule, budgets, keep_table=keep))
    return out


def ulps_apart(a: float, b: float) -> int:
    """How many doubles lie between a and b, plus one (0: the same double)."""
    def ordered(x: float) -> int:
        i = struct.unpack("<q", struct.pack("<d", x))[0]
        return i if i >= 0 else -(i & 0x7FFFFFFFFFFFFFFF)
    return abs(ordered(a) - ordered(b))


def differences(committed: dict, rerun: dict) -> list[str]:
    """One line per record that differs: missing on one side, or a field whose bytes differ (with both values and,
    for numbers, how many units in the last place apart, or that they are zeros of opposite sign)."""
    out = []
    for key in sorted(set(committed) | set(rerun)):
        where = "/".join(map(str, key))
        if key not in rerun:
            out.append(f"{where}: committed, but the rerun did not record it")
        elif key not in committed:
            out.append(f"{where}: recorded by the rerun, but not in the committed study")
        elif canonical_json(committed[key]) != canonical_json(rerun[key]):
            a, b = committed[key], rerun[key]
            for field in sorted(set(a) | set(b)):
                x, y = a.get(field), b.get(field)
                if canonical_json(x) == canonical_json(y):
                    continue
                apart = ""
                if isinstance(x, float) and isinstance(y, float) and math.isfinite(x) and math.isfinite(y):
                    n = ulps_apart(x, y)
                    apart = " (zeros of opposite sign)" if x == y else \
                        f" ({n} unit{'' if n == 1 else 's'} in the last place)"
                out.append(f"{where} {field}: committed {x!r}, rerun {y!r}{apart}")
    return out


def checkpoint_differences(part: Part, seed: int, results: list[dict]) -> tuple[int, list[str]]:
    """(checkpoints compared, one line per difference) of `seed`'s committed checkpoints: each must be the rerun's
    average policy at the largest budget, the same bytes, and pyspiel's exploitability of it must be the committed
    record's at that budget (within `CHECKPOINT_TOLERANCE` chips).  Only the results that kept their table
    (`tasks_of`: a committed checkpoints file, the full depth) are compared."""
    from oscc_core.digest import canonical_json as canon
    from oscc_core.learning.checkpoints import load_checkpoints, openspiel_exploitability
    from oscc_core.policy import table_to_policy

    kept = [r for r in results if r.get("tables")]
    if not kept:
        return 0, []
    saved, lines = load_checkpoints(part.checkpoints), []
    for r in kept:
        learner, arm = r["task"]["learner"], r["task"]["arm"]
        key = f"{part.key_prefix or learner}/{arm}/{seed}"
        if key not in saved:
            lines.append(f"checkpoint {key}: the rerun kept it, but {Path(part.checkpoints).name} does not hold it")
            continue
        if canon(saved[key]) != canon(table_to_policy(part.game, r["tables"][str(seed)])):
            lines.append(f"checkpoint {key}: the committed policy differs from the rerun's average policy")
        curve = part.runs[learner][arm][str(seed)]
        ours = curve[str(max(int(b) for b in curve))]["exploitability_average"]
        theirs = openspiel_exploitability(part.game, saved[key])
        if not abs(ours - theirs) <= CHECKPOINT_TOLERANCE:
            lines.append(f"checkpoint {key}: pyspiel gives {theirs!r} chips, the committed record {ours!r}")
    return len(kept), lines


def compare(part: Part, seed: int, results: list[dict], up_to: int | None = None) -> dict:
    """The rerun of `part`'s `seed` (`results` of its `tasks_of`) against the committed records and checkpoints:
    {"label", "seed", "records": committed records compared, "checkpoints": committed checkpoints compared (None:
    no file committed), "differences": lines, "nothing_to_compare": neither side holds a record, "agrees": no
    difference among at least one record (a check that compared nothing does not agree)}."""
    runs = design.runs_table(results)
    rerun = {(learner, arm, int(seed), int(budget)): rec for learner, arms in runs.items()
             for arm, seeds in arms.items() for budget, rec in seeds.get(str(seed), {}).items()}
    committed = recorded(part, seed, up_to)
    lines = differences(committed, rerun)
    saved = None
    if part.checkpoints is not None:
        saved, more = checkpoint_differences(part, seed, results)
        lines += more
    nothing = not committed and not rerun
    return {"label": part.label, "seed": seed, "records": len(committed), "checkpoints": saved,
            "differences": lines, "nothing_to_compare": nothing, "agrees": not lines and not nothing}


def text(check: dict) -> str:
    """One line on a compared part (and one more per difference)."""
    head = f"{check['label']}: seed {check['seed']}, "
    if check.get("nothing_to_compare"):
        return head + "nothing to compare: neither the committed study nor the rerun holds a record"
    saved = check.get("checkpoints")
    tail = ("; no checkpoints file committed" if saved is None else
            f"; its {saved} checkpoints equal the rerun's policies and pyspiel's recheck" if saved else
            "; its checkpoints not compared (a rerun below the largest budget)")
    if check["agrees"]:
        return head + f"each of its {check['records']} records at every learner, arm and budget equals the " \
                      f"committed one bit for bit" + tail
    return "\n".join([head + f"{len(check['differences'])} differences in its {check['records']} committed "
                      f"records:"] + [f"  {line}" for line in check["differences"]])
