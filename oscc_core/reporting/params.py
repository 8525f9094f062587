"""Notebook parameter checks: one clear sentence before any compute starts.

Each notebook's validation cell passes its parameters through these helpers.
A bad value raises `ParameterError`, which IPython renders as the sentence
alone (no traceback), and papermill exits non-zero.  Sizes are bounded by
the memory they need (`check_size`), and the output directory is checked
for writability up front (`check_output_dir`), so that a bad value never
fails after the computation.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from oscc_core import memory
from oscc_core.device import resolve_device
from oscc_core.engine.roots import build_root
from oscc_core.exact.cfr import cfr_plus
from oscc_core.games import LEDUC
from oscc_core.policy import load_policy, resolve_policy
from oscc_core.reporting.parameter_error import ParameterError

#: Largest seed: every stream key holds the seed in 63 bits.
SEED_MAX = 2 ** 63 - 1
#: Upper estimate of the memory one comparison group costs a chapter: the returns, cards and
#: failure codes of every arm it keeps at once, plus the per-group bootstrap features (the
#: measured peak-memory growth of chapter 02's five-arm audit is about 1.8 KiB per group).
#: Chapter 03's noise audit costs more per group: see `oscc_core.chapters.gradient_noise.parameters.group_bytes`.
GROUP_BYTES = 4096
NAMED_POLICIES = ("uniform", "cfr_plus")


def declared(mapping, names) -> dict:
    """{name: value} of every declared parameter in `mapping` (a notebook's globals); ParameterError names the
    missing ones."""
    missing = [n for n in names if n not in mapping]
    if missing:
        raise ParameterError(f"the parameters {missing} are not defined (run the parameters cell first).")
    return {n: mapping[n] for n in names}


def check_int(name: str, value, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        allowed = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ParameterError(f"{name} must be an integer {allowed}, got {value!r}.")
    return value


def check_float(name: str, value, low: float, high: float, open_low: bool = False) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and \
        (low < value if open_low else low <= value) and value <= high
    if not ok:
        raise ParameterError(f"{name} must be a number in {'(' if open_low else '['}{low}, {high}], got {value!r}.")
    return float(value)


def check_choice(name: str, value, choices) -> str:
    if value not in choices:
        raise ParameterError(f"{name} must be one of {list(choices)}, got {value!r}.")
    return value


def check_ints(name: str, values, low: int, high: int | None = None) -> list[int]:
    if not isinstance(values, (list, tuple)) or not values or any(
            isinstance(v, bool) or not isinstance(v, int) or v < low or (high is not None and v > high)
            for v in values):
        allowed = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ParameterError(f"{name} must be a non-empty list of integers {allowed}, got {values!r}.")
    return list(values)


def check_seed(name: str, value) -> int:
    """A stream seed: an integer in [0, 2**63 - 1]."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= SEED_MAX:
        raise ParameterError(f"{name} must be an integer in [0, 2**63 - 1], got {value!r}.")
    return value


def check_seeds(name: str, values) -> list[int]:
    """A non-empty list of stream seeds, each an integer in [0, 2**63 - 1]."""
    if not isinstance(values, (list, tuple)) or not values or any(
            isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= SEED_MAX for v in values):
        raise ParameterError(f"{name} must be a non-empty list of integers in [0, 2**63 - 1], got {values!r}.")
    return list(values)


def check_memory(name: str, value: int, bytes_each: int, unit: str = "group", limit: int | None = None,
                 hint: str = "") -> int:
    """`memory.check_memory` as a notebook parameter check (ParameterError)."""
    try:
        return memory.check_memory(name, value, bytes_each, unit, limit, hint)
    except ValueError as e:
        raise ParameterError(str(e)) from None


def check_size(name: str, value, low: int, high: int | None = None, bytes_each: int = GROUP_BYTES,
               unit: str = "group") -> int:
    """An integer size >= low (and <= high) whose memory estimate fits the limit."""
    check_int(name, value, low, high)
    return check_memory(name, value, bytes_each, unit)


# --- devices, policies, output --------------------------------------------------------------

def check_device(name: str, value: str):
    try:
        return resolve_device(value)
    except ValueError as e:
        raise ParameterError(f"{name}: {e}") from None


def check_policy_source(name: str, value, named=NAMED_POLICIES) -> str:
    """A named policy or the path of a saved policy JSON file that exists."""
    if isinstance(value, str) and (value in named or Path(value).is_file()):
        return value
    raise ParameterError(f"{name} must be one of {list(named)} or the path of a saved policy JSON file; "
                         f"{value!r} is neither.")


def policy_source_record(value, named=NAMED_POLICIES):
    """How a run manifest records a policy source: the name of a named policy, or a file by its content.

    A file is recorded as ``{"source": "file", "sha256": <SHA-256 of its bytes>}``; its path is
    not recorded (paths are not portable, and the same path can hold another policy tomorrow).
    """
    if isinstance(value, str) and value in named:
        return value
    path = Path(value)
    if not path.is_file():
        raise ParameterError(f"policy source must be one of {list(named)} or the path of a saved policy JSON file; "
                             f"{str(value)!r} is neither.")
    return {"source": "file", "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


OUTPUT_DIR_OVERRIDE = "OSCC_OUTPUT_DIR"   # set by `make test`: test runs never write into the repository


def check_output_dir(name: str, value) -> Path:
    """A directory the results can be written to, checked by writing and removing a probe file.

    When the environment variable OSCC_OUTPUT_DIR is set (the Makefile's test
    targets set it to a fresh temporary directory), it replaces `value`, so that
    nbval's re-execution of the committed notebooks leaves `results/` untouched.
    A missing directory is not created here (the results writer creates it); the probe goes into
    its nearest existing ancestor instead, so that a refused run leaves no trace.
    """
    if not isinstance(value, str) or not value:
        raise ParameterError(f"{name} must be a directory path string, got {value!r}.")
    value = os.environ.get(OUTPUT_DIR_OVERRIDE) or value
    path = Path(value)
    if path.exists() and not path.is_dir():
        raise ParameterError(f"{name} must be a directory, but {value!r} is a file.")
    existing = path.absolute()
    while not existing.exists():
        existing = existing.parent
    probe = existing / f".oscc-write-probe-{os.getpid()}"
    try:
        if not existing.is_dir():
            raise NotADirectoryError(20, f"{str(existing)!r} is a file")
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        raise ParameterError(f"{name} must be a writable directory, but {value!r} is not "
                             f"({e.strerror or type(e).__name__}).") from None
    return path


# --- continuation policies and roots ------------------------------------------------------

def resolve_continuation(name: str, value: str, cfr_iterations: int, game: str = LEDUC):
    """'uniform' -> 'uniform'; 'cfr_plus' -> CFR+ average policy; a path -> the saved policy, validated.

    A file that is not a valid tabular policy of the game raises ParameterError naming `name`.
    """
    if value == "uniform":
        return "uniform"
    if value == "cfr_plus":
        return cfr_plus(game, cfr_iterations)
    try:
        policy = load_policy(value, name)
        resolve_policy(game, policy, name)
    except (ValueError, OSError) as exc:
        raise ParameterError(f"{name}: {exc}") from None
    return policy


def check_root(name: str, value, continuation, game: str = LEDUC) -> str:
    """A root history that is a decision point reachable under the continuation (behaviour) policy.

    The history must be a string: ``papermill -p root 2`` passes the number 2,
    which is refused (a number loses leading zeros and cannot hold ``|``);
    pass it as a string with ``papermill -r root 2`` or
    ``python -m oscc_core run <chapter> -p root 2``.
    """
    if not isinstance(value, str):
        raise ParameterError(f"{name} must be a public history string such as '', '2' or '11|' (with papermill, "
                             f"pass it with -r {name} VALUE, not -p), got {value!r}.")
    try:
        build_root(game, value, resolve_policy(game, continuation))
    except ValueError as exc:
        raise ParameterError(f"{name}: {exc}") from None
    return value


MAX_WORKERS = 64
#: Schemes of a Dask scheduler address.
SCHEDULER_SCHEMES = ("tcp://", "tls://", "inproc://", "ucx://")


def check_study(v: dict, max_budget: int, files: tuple = ("study_file",)) -> None:
    """A learning study's parameters, in place in `v` (its seeds already checked): study_seeds disjoint from
    dev_seeds, study_multiples distinct multiples of `budget` with 1 among them (sorted; at most `max_budget`
    calls), the files named in `files` ('' for none: study_file means 'run the whole study'), study_store and
    scheduler strings, a scheduler the address of a Dask scheduler that answers (`dask_cluster.check_scheduler`), 1
    to MAX_WORKERS local workers."""
    both = sorted(set(v["study_seeds"]) & set(v["dev_seeds"]))
    if both:
        raise ParameterError(f"study_seeds must be disjoint from dev_seeds (the step sizes are chosen on them), but "
                             f"{both} appear in both.")
    multiples = check_ints("study_multiples", v["study_multiples"], 1, max_budget // v["budget"])
    if 1 not in multiples or len(set(multiples)) != len(multiples):
        raise ParameterError(f"study_multiples must list distinct multiples of the budget, 1 (the paper's budget) "
                             f"among them, got {v['study_multiples']!r}.")
    v["study_multiples"] = sorted(multiples)
    for name in (*files, "study_store", "scheduler"):
        if not isinstance(v[name], str):
            raise ParameterError(f"{name} must be a string ('' for none), got {v[name]!r}.")
    for name in files:
        if v[name] and not Path(v[name]).is_file():
            raise ParameterError(f"{name} must be a results file or '' (run the whole study), but {v[name]!r} is "
                                 f"not a file.")
    if v["scheduler"] and not v["scheduler"].startswith(SCHEDULER_SCHEMES):
        raise ParameterError(f"scheduler must be '' (a local cluster) or a Dask scheduler address such as "
                             f"'tcp://host:8786', got {v['scheduler']!r}.")
    if v["scheduler"]:          # a scheduler that answers, before any run: else one sentence within 30 s
        from oscc_core.reporting.dask_cluster import check_scheduler
        check_scheduler(v["scheduler"])
    v["workers"] = check_int("workers", v["workers"], 1, MAX_WORKERS)
