"""The sources that make stored study runs stale (`reporting.study_runner.RUN_SOURCES`) cover every module a run
can execute, derived from the code: the static import closure of `learning.study` (every `import` and `from ...
import` in each module, the ones inside functions too, so a kernel file imported only on a GPU counts).  The
derivation itself is tested on a small package written here, whose closure is known by construction.
"""
from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from oscc_core.reporting.study_runner import RUN_SOURCES

ROOT = Path(__file__).resolve().parents[1]


def module_file(root: Path, name: str) -> Path | None:
    """The file of module `name` under `root` (a package's __init__.py), or None outside it."""
    path = root.joinpath(*name.split("."))
    for candidate in (path / "__init__.py", path.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def imports_of(root: Path, name: str) -> set[str]:
    """Every module name `name`'s source imports, anywhere in it (a function's body too), relative ones resolved;
    `from package import name` names both the package and package.name (which may be a module)."""
    path = module_file(root, name)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            found |= {base} | {f"{base}.{alias.name}" for alias in node.names}
    return found


def import_closure(root: Path, start: str) -> set[Path]:
    """The files of every module under `root` that `start` reaches through imports (and their packages)."""
    seen, todo = set(), [start]
    while todo:
        name = todo.pop()
        if name in seen or module_file(root, name) is None:
            continue
        seen.add(name)
        parts = name.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]          # the packages it lives in
        todo += [m for m in imports_of(root, name) if m.split(".")[0] == start.split(".")[0]]
    return {module_file(root, name) for name in seen}


def covered(rel: str) -> bool:
    """Whether `rel` (a path inside oscc_core) is hashed into the stored runs' digest (`digest.source_digest`)."""
    return "/" not in rel or any(rel == p or rel.startswith(p.rstrip("/") + "/") for p in RUN_SOURCES)


# ----- the derivation, on a package whose closure is known --------------------------------------------------------
def test_the_closure_follows_imports_inside_functions_relative_imports_and_from_imports_of_modules(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/a.py": "from pkg import b\nimport pkg.c as c\n",
        "pkg/b.py": "def gpu():\n    from .sub import kernel\n    return kernel\n",
        "pkg/c.py": "import os\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/kernel.py": "from ..d import x\n",
        "pkg/d.py": "x = 1\n",
        "pkg/never.py": "import pkg.a\n",                   # imports a, but nothing imports it
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(textwrap.dedent(text))
    got = {p.relative_to(tmp_path).as_posix() for p in import_closure(tmp_path, "pkg.a")}
    assert got == {"pkg/__init__.py", "pkg/a.py", "pkg/b.py", "pkg/c.py", "pkg/sub/__init__.py", "pkg/sub/kernel.py",
                   "pkg/d.py"}


# ----- the list ---------------------------------------------------------------------------------------------------
def test_every_module_a_study_run_can_import_is_in_the_stored_runs_digest():
    closure = import_closure(ROOT, "oscc_core.learning.study")
    rels = sorted(p.relative_to(ROOT / "oscc_core").as_posix() for p in closure)
    assert "learning/fused_cuda.py" in rels and "learning/fused_cuda_functions.py" in rels   # imported on a GPU only
    assert [rel for rel in rels if not covered(rel)] == []
