"""Run one chapter notebook with checked parameters: ``python -m oscc_core run <chapter> -p name value ...``.

The runner is the safe front door to the papermill-parameterised notebooks:

- ``<chapter>`` is a notebook's stem (``02_covariance``) or its short name
  (``covariance``, the stem without its number prefix);
- every ``-p name value`` is checked against the parameters the notebook
  declares (``papermill.inspect_notebook``); an unknown name stops the run
  before anything is computed, naming it and the allowed names;
- a value is converted by the parameter's declared type, the way a user
  types it: a ``str`` parameter gets the raw text (``-p root 2`` is the
  history "2"; text in brackets, ``[0.5, 0.5]``, is a list, for the
  parameters that accept one), ``int`` and ``float`` are parsed, a ``list``
  is read as YAML (``-p seeds "[13, 17]"``) or as comma-separated values
  (``-p seeds 13,17``);
- results and the executed notebook go to a fresh directory
  (``runs/<stem>-<n>/`` under the current directory, the first n not yet
  used) or to ``-o outdir``; never into the committed ``results/``.

Exit status: 0 on success, 2 on a bad command line or a parameter the
notebook refuses (one sentence on stderr), 1 when the notebook fails.
"""
from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

import yaml

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
COMMITTED_RESULTS = Path(__file__).resolve().parents[2] / "results"
RUNS = Path("runs")
RESERVED = ("output_dir",)      # set by the runner from -o


class UsageError(ValueError):
    """A bad command line: the message is one sentence for stderr (exit status 2)."""


def chapters() -> dict[str, Path]:
    """Stem -> notebook path, for every chapter notebook, in order."""
    return {p.stem: p for p in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))}


def short_name(stem: str) -> str:
    return stem.split("_", 1)[1]


def find_chapter(name: str) -> Path:
    """A notebook by its stem (``02_covariance``) or short name (``covariance``)."""
    found = chapters()
    for stem, path in found.items():
        if name in (stem, short_name(stem), path.name):
            return path
    names = ", ".join(f"{short_name(s)} ({s})" for s in found)
    raise UsageError(f"unknown chapter {name!r}; the chapters are {names}.")


def declared_parameters(notebook: Path) -> dict[str, dict]:
    """The notebook's declared parameters: name -> {inferred_type_name, default, help}."""
    import papermill as pm

    return pm.inspect_notebook(str(notebook))


def _yaml(text: str):
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def convert(name: str, text: str, type_name: str):
    """The value of `-p name text` for a parameter declared with type `type_name`."""
    type_name = (type_name or "None").lower()
    if type_name == "str":
        if text.strip().startswith("["):          # e.g. root_policy "[0.2, 0.3, 0.5]"
            value = _yaml(text)
            if isinstance(value, list):
                return value
        return text
    if type_name == "int":
        try:
            return int(text.replace(",", ""))
        except ValueError:
            raise UsageError(f"{name} must be an integer, got {text!r}.") from None
    if type_name == "float":
        try:
            return float(text)
        except ValueError:
            raise UsageError(f"{name} must be a number, got {text!r}.") from None
    if type_name == "bool":
        value = _yaml(text)
        if not isinstance(value, bool):
            raise UsageError(f"{name} must be true or false, got {text!r}.")
        return value
    if type_name == "list":
        value = _yaml(text)
        if isinstance(value, list):
            return value
        if isinstance(value, str) and "," in value:
            return [_yaml(part.strip()) for part in value.split(",") if part.strip()]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return [value]
        return value                                # e.g. "uniform" for a list-or-name parameter
    return _yaml(text)


def build_parameters(declared: dict[str, dict], pairs) -> dict:
    """Check the names of `-p` pairs against `declared` and convert their values."""
    allowed = [n for n in declared if n not in RESERVED]
    out = {}
    for name, text in pairs:
        if name in RESERVED:
            raise UsageError(f"{name} is set by the runner; use -o DIR to choose where the results go.")
        if name not in declared:
            raise UsageError(f"unknown parameter {name!r}; the allowed names are {', '.join(allowed)}.")
        if name in out:
            raise UsageError(f"parameter {name!r} is given twice.")
        out[name] = convert(name, text, declared[name].get("inferred_type_name"))
    return out


def fresh_output_dir(stem: str, base: Path = RUNS) -> Path:
    """``runs/<stem>-<n>``: the first n = 1, 2, ... not yet taken."""
    n = 1
    while (base / f"{stem}-{n}").exists():
        n += 1
    return base / f"{stem}-{n}"


def check_output_dir(path: Path) -> Path:
    resolved = path.resolve()
    if resolved == COMMITTED_RESULTS or COMMITTED_RESULTS in resolved.parents:
        raise UsageError(f"-o must not be the committed results directory {str(COMMITTED_RESULTS)!r}; "
                         "choose another directory or leave -o out for a fresh runs/ directory.")
    if path.exists() and not path.is_dir():
        raise UsageError(f"-o must be a directory, but {str(path)!r} is a file.")
    return path


def run(chapter: str, pairs, output_dir: "str | None" = None) -> Path:
    """Execute a chapter with checked parameters; return the output directory.

    Raises UsageError (bad command line, or a parameter the notebook refuses)
    or papermill's PapermillExecutionError (the notebook failed later).
    """
    import os

    import papermill as pm

    from oscc_core.reporting.params import OUTPUT_DIR_OVERRIDE

    if os.environ.get(OUTPUT_DIR_OVERRIDE):
        raise UsageError(f"{OUTPUT_DIR_OVERRIDE} is set, so the notebook would write there and not where the runner "
                         f"says; unset it (it is for the test targets) and give -o instead.")
    notebook = find_chapter(chapter)
    parameters = build_parameters(declared_parameters(notebook), pairs)
    out = check_output_dir(Path(output_dir)) if output_dir else fresh_output_dir(notebook.stem)
    out.mkdir(parents=True, exist_ok=True)
    parameters["output_dir"] = str(out.resolve())
    logging.getLogger("papermill").setLevel(logging.WARNING)
    try:
        pm.execute_notebook(str(notebook), str(out / notebook.name), parameters=parameters,
                            cwd=str(NOTEBOOKS), progress_bar=False, log_output=False, kernel_name="python3")
    except pm.PapermillExecutionError as e:
        if e.ename == "ParameterError":
            raise UsageError(e.evalue) from None
        raise
    return out


def list_parameters(chapter: str) -> str:
    """One line per declared parameter: name, type, default and help."""
    notebook = find_chapter(chapter)
    lines = [f"{notebook.stem} parameters (-p NAME VALUE):"]
    for name, p in declared_parameters(notebook).items():
        if name in RESERVED:
            continue
        lines.append(f"  {name} ({p.get('inferred_type_name')}, default {p.get('default')}): {p.get('help', '')}")
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    names = "\n".join(f"  {short_name(s):<16} {s}" for s in chapters())
    top = argparse.ArgumentParser(
        prog="python -m oscc_core", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run a chapter notebook of the OSCC reproduction book with checked parameters.",
        epilog=f"chapters:\n{names}\n\nexample:\n  python -m oscc_core run covariance -p n_groups 2000 "
               "-p seeds 13,17 -o /tmp/cov\n  python -m oscc_core run covariance --list")
    sub = top.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="execute one chapter notebook",
                       description="Execute one chapter notebook. Results and the executed notebook go to "
                                   "-o DIR, or by default to a fresh runs/<stem>-<n>/ directory (never the "
                                   "committed results/).")
    r.add_argument("chapter", help="notebook stem (02_covariance) or short name (covariance)")
    r.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                   help="set a declared parameter; str values are passed as typed, lists as YAML "
                        "('[13, 17]') or comma-separated (13,17)")
    r.add_argument("-o", "--output-dir", default=None, help="output directory (default: runs/<stem>-<n>/)")
    r.add_argument("--list", action="store_true", help="list the chapter's parameters and exit")
    return top


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    try:
        if args.list:
            print(list_parameters(args.chapter))
            return 0
        out = run(args.chapter, args.parameter, args.output_dir)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - a failed notebook: one line, not papermill's traceback
        name = getattr(e, "ename", type(e).__name__)
        value = getattr(e, "evalue", str(e))
        print(f"error: the notebook failed: {name}: {value}", file=sys.stderr)
        return 1
    print(f"wrote {out}")
    return 0
