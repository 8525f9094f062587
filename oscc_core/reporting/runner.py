"""Run one chapter notebook with checked parameters: ``python -m oscc_core run <chapter> -p name value ...``.

The runner is the safe front door to the papermill-parameterised notebooks:

- ``<chapter>`` is a notebook's stem (``02_covariance``) or its short name
  (``covariance``, the stem without its number prefix);
- every ``-p name value`` is checked against the parameters the notebook
  declares: every name assigned in its cell tagged ``parameters``, read with
  ``ast`` (`read_parameters_cell`; papermill's own line parser gives up on a
  comment that holds a second ``=``); an unknown name stops the run before
  anything is computed, naming it and the allowed names;
- a value is converted by the parameter's declared type, the way a user
  types it: a ``str`` parameter gets the raw text (``-p root 2`` is the
  history "2"; text in brackets, ``[0.5, 0.5]``, is a list, for the
  parameters that accept one), ``int`` and ``float`` are parsed, a ``list``
  is read as YAML (``-p seeds "[13, 17]"``) or as comma-separated values
  (``-p seeds 13,17``);
- results and the executed notebook go to a fresh directory
  (``runs/<stem>-<n>/`` under the current directory, the first n not yet
  used) or to ``-o outdir``; never into the committed ``results/``;
- when stderr is a terminal, papermill's cell progress bar is shown there and
  the kernel gets ``OSCC_PROGRESS`` (the terminal's device), so that a long
  computation inside the notebook can report its own progress there
  (`oscc_core.reporting.progress`); otherwise (CI, tests, a pipe) the run is
  quiet;
- the kernel talks to the runner over IPC sockets in a private temporary
  directory (on POSIX), not over local TCP, so ipykernel has no reason to
  warn that the connection is unencrypted.

Exit status: 0 on success, 2 on a bad command line or a parameter the
notebook refuses (one sentence on stderr; the refused notebook is removed, and
so is an output directory the runner made for it), 1 when the notebook fails.
A value may start with a minus sign (``-p seeds -211,223``): the two words
after ``-p`` are always its name and value, and the notebook then says
whether it allows them (seeds are integers from 0).
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import io
import json
import logging
import os
import shutil
import sys
import tempfile
import tokenize
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


def _assigned_names(target: ast.expr) -> list[str]:
    """The plain names an assignment target binds (``a``, ``a, b``, ``[a, *b]``); attributes and items bind none."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Starred):
        return _assigned_names(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for element in target.elts for name in _assigned_names(element)]
    return []


def read_parameters_cell(source: str) -> dict[str, dict]:
    """Every name a parameters cell assigns: name -> {name, inferred_type_name, default, help}.

    The cell is parsed with `ast`: each top-level assignment (``x = 1``, ``x: int = 1``, ``a, b = 1, 2``)
    declares its names, in the order they first appear (a name assigned twice keeps its last value).
    ``inferred_type_name`` is the annotation's source text (``"int"``, ``"list"``) or ``"None"`` when there is
    none, ``default`` the value's source text (``100_000``, ``""``), ``help`` the comment that ends the
    statement's last line (found with `tokenize`, so ``#`` inside a string is not a comment). These are the
    fields papermill's inspection gives, without its line parser's failures on a comment with ``=`` in it.
    Raises SyntaxError when the cell is not plain Python (an IPython magic, say).
    """
    tree = ast.parse(source)
    comments = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.string[1:].strip()

    def text(node: "ast.expr | None") -> str:
        if node is None:
            return "None"
        return ast.get_source_segment(source, node) or ast.unparse(node)

    found: dict[str, dict] = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign):
            if node.value is None:                  # ``x: int`` declares a type but assigns nothing
                continue
            pairs = [(name, node.value) for name in _assigned_names(node.target)]
            type_name = text(node.annotation)
        elif isinstance(node, ast.Assign):
            pairs = []
            for target in node.targets:
                names = _assigned_names(target)
                values = node.value.elts if (isinstance(target, (ast.Tuple, ast.List))
                                             and isinstance(node.value, (ast.Tuple, ast.List))
                                             and len(node.value.elts) == len(target.elts)
                                             and not any(isinstance(e, ast.Starred) for e in target.elts)) \
                    else [node.value] * len(names)
                pairs += list(zip(names, values))
            type_name = "None"
        else:
            continue
        for name, value in pairs:
            found[name] = {"name": name, "inferred_type_name": type_name, "default": text(value),
                           "help": comments.get(node.end_lineno, "")}
    return found


def parameters_cell_source(notebook: Path) -> "str | None":
    """The source of the notebook's first cell tagged ``parameters`` (papermill's choice), or None."""
    nb = json.loads(Path(notebook).read_text(encoding="utf-8"))
    for cell in nb.get("cells", []):
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            source = cell.get("source", "")
            return "".join(source) if isinstance(source, list) else source
    return None


def declared_parameters(notebook: Path) -> dict[str, dict]:
    """The notebook's declared parameters: name -> {name, inferred_type_name, default, help}
    (`read_parameters_cell` of its parameters cell; empty when it has none)."""
    source = parameters_cell_source(notebook)
    if source is None:
        return {}
    try:
        return read_parameters_cell(source)
    except SyntaxError as e:
        raise UsageError(f"the parameters cell of {Path(notebook).name} is not plain Python "
                         f"(line {e.lineno}: {e.msg}), so its parameters cannot be read.") from None


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


class _PapermillParseNoise(logging.Filter):
    """Drop papermill's warnings about the parameters cell: its line parser fails on a comment holding ``=``
    ("Unable to parse line ...") and then calls the names it missed unknown ("Passed unknown parameter ...").
    The runner has already checked every name with `read_parameters_cell`. A logger's filter sees only the
    records logged on it, so it goes on both loggers that say these things."""

    LOGGERS = ("papermill", "papermill.translators")

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not message.startswith(("Unable to parse line", "Passed unknown parameter"))


def _ipc_kernel_manager(socket_dir: str):
    """A kernel manager that connects to the kernel over IPC sockets in `socket_dir` (an absolute path:
    papermill changes the working directory, and relative sockets would land in notebooks/)."""
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import default

    class IPCKernelManager(AsyncKernelManager):
        @default("transport")
        def _ipc_transport(self):
            return "ipc"

        @default("ip")
        def _ipc_path(self):
            return os.path.join(socket_dir, "kernel")

        # On a busy machine a kernel may need more than jupyter_client's 2.5 s to exit after its shutdown
        # request; it is then signalled, and logs an error to the terminal for nothing.
        @default("shutdown_wait_time")
        def _patient_shutdown(self):
            return 60.0

        # jupyter_client interrupts a kernel (SIGINT) before asking it to shut down.  A kernel still busy with
        # its last message on a loaded machine then logs "KeyboardInterrupt caught in kernel" and
        # "IOStream.flush timed out" to the terminal.  papermill shuts a kernel down only once every cell has
        # finished, so the shutdown request alone suffices; interrupts at any other time are kept.
        async def _async_interrupt_kernel(self):
            if not self.shutting_down:
                await super()._async_interrupt_kernel()

    return IPCKernelManager


def progress_terminal(stream=None) -> "str | None":
    """The terminal device behind `stream` (stderr by default), or None when it is not a terminal."""
    stream = sys.stderr if stream is None else stream
    try:
        if not stream.isatty():
            return None
        return os.ttyname(stream.fileno()) if hasattr(os, "ttyname") else ""
    except (AttributeError, OSError, ValueError):
        return None


@contextlib.contextmanager
def _kernel_environment(progress: "str | None"):
    """Set (or clear) OSCC_PROGRESS for the kernel started inside, and restore the caller's value after."""
    from oscc_core.reporting.progress import PROGRESS_ENV

    saved = os.environ.get(PROGRESS_ENV)
    if progress:
        os.environ[PROGRESS_ENV] = progress
    else:
        os.environ.pop(PROGRESS_ENV, None)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(PROGRESS_ENV, None)
        else:
            os.environ[PROGRESS_ENV] = saved


def run(chapter: str, pairs, output_dir: "str | None" = None) -> Path:
    """Execute a chapter with checked parameters; return the output directory.

    Raises UsageError (bad command line, or a parameter the notebook refuses)
    or papermill's PapermillExecutionError (the notebook failed later).
    """
    import papermill as pm

    from oscc_core.reporting.params import OUTPUT_DIR_OVERRIDE

    if os.environ.get(OUTPUT_DIR_OVERRIDE):
        raise UsageError(f"{OUTPUT_DIR_OVERRIDE} is set, so the notebook would write there and not where the runner "
                         f"says; unset it (it is for the test targets) and give -o instead.")
    notebook = find_chapter(chapter)
    parameters = build_parameters(declared_parameters(notebook), pairs)
    out = check_output_dir(Path(output_dir)) if output_dir else fresh_output_dir(notebook.stem)
    made = [d for d in (out, *out.parents) if not d.exists()]      # the directories this run creates
    out.mkdir(parents=True, exist_ok=True)
    parameters["output_dir"] = str(out.resolve())
    try:
        execute(notebook, out / notebook.name, parameters)
    except pm.PapermillExecutionError as e:
        if e.ename == "ParameterError":
            _remove_refused(out / notebook.name, made)
            raise UsageError(e.evalue) from None
        raise
    return out


def _remove_refused(partial: Path, made: list[Path]) -> None:
    """A notebook that refused its parameters leaves nothing behind: its partial copy, and the directories the run
    made for it (innermost first) while they are empty."""
    partial.unlink(missing_ok=True)
    for directory in made:
        try:
            directory.rmdir()
        except OSError:                 # not empty (something else is there) or already gone: leave it
            break


def execute(notebook: Path, target: Path, parameters: "dict | None" = None) -> None:
    """Execute `notebook` with papermill into `target` (which may be the notebook itself), from notebooks/.

    The kernel is reached over IPC sockets in a private temporary directory (no TCP, so ipykernel has
    no unencrypted connection to warn about); papermill's cell bar and the kernel's progress channel are
    shown only when stderr is a terminal.  Raises papermill's PapermillExecutionError when a cell fails.
    """
    import papermill as pm

    terminal = progress_terminal()
    logging.getLogger("papermill").setLevel(logging.WARNING)
    noise = _PapermillParseNoise()
    noisy = [logging.getLogger(name) for name in _PapermillParseNoise.LOGGERS]
    for log in noisy:
        log.addFilter(noise)
    engine = {}
    socket_dir = None
    if os.name == "posix":                          # zmq's IPC transport: Unix domain sockets
        socket_dir = tempfile.mkdtemp(prefix="oscc-kernel-")
        engine["kernel_manager_class"] = _ipc_kernel_manager(socket_dir)
    try:
        with _kernel_environment(terminal):
            pm.execute_notebook(str(notebook), str(target), parameters=parameters or {},
                                cwd=str(NOTEBOOKS), progress_bar=terminal is not None, log_output=False,
                                kernel_name="python3", **engine)
    finally:
        for log in noisy:
            log.removeFilter(noise)
        if socket_dir is not None:
            shutil.rmtree(socket_dir, ignore_errors=True)


def execute_in_place(names) -> int:
    """`make notebooks`: execute each named chapter in place at its defaults; 1 at the first failure."""
    for name in names:
        notebook = find_chapter(name)
        print(f"executing {notebook.relative_to(NOTEBOOKS.parent)}", flush=True)
        try:
            execute(notebook, notebook)
        except Exception as e:  # noqa: BLE001 - one line, not papermill's traceback
            print(f"error: {notebook.name} failed: {getattr(e, 'ename', type(e).__name__)}: "
                  f"{getattr(e, 'evalue', str(e))}", file=sys.stderr)
            return 1
    return 0


def list_parameters(chapter: str) -> str:
    """One line per declared parameter: name, type, default and help."""
    notebook = find_chapter(chapter)
    lines = [f"{notebook.stem} parameters (-p NAME VALUE):"]
    for name, p in declared_parameters(notebook).items():
        if name in RESERVED:
            continue
        default = " ".join(str(p.get("default")).split("\n"))      # a value written over several lines
        lines.append(f"  {name} ({p.get('inferred_type_name')}, default {default}): {p.get('help', '')}")
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
    x = sub.add_parser("execute", help="execute chapter notebooks in place at their defaults (make notebooks)",
                       description="Execute each chapter notebook in place, at its default parameters, writing "
                                   "the committed results/ (what `make notebooks` and `make book` do).")
    x.add_argument("chapters", nargs="+", help="notebook stems or short names, or notebook paths")
    return top


def split_parameters(argv) -> tuple[list[str], list[tuple[str, str]]]:
    """(the command line without its ``-p NAME VALUE`` triples, the (NAME, VALUE) pairs): the two words after -p
    are taken as they are, so a value may start with "-" (argparse would read ``-211,223`` as an option)."""
    rest, pairs, i = [], [], 0
    while i < len(argv):
        if argv[i] in ("-p", "--parameter"):
            if len(argv) - i < 3:
                raise UsageError(f"{argv[i]} takes a NAME and a VALUE (-p NAME VALUE), got "
                                 f"{' '.join(argv[i + 1:]) or 'nothing'} after it.")
            pairs.append((argv[i + 1], argv[i + 2]))
            i += 3
        else:
            rest.append(argv[i])
            i += 1
    return rest, pairs


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        argv, pairs = split_parameters(argv)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    args = parser().parse_args(argv)
    if args.command == "run":
        args.parameter = pairs
    elif pairs:
        print("error: -p belongs to the run command (python -m oscc_core run CHAPTER -p NAME VALUE).", file=sys.stderr)
        return 2
    if args.command == "execute":
        try:
            return execute_in_place(args.chapters)
        except UsageError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
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
