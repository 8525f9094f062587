"""The library is layered (DESIGN.md section 2): a module imports only its own layer or a lower one,
and a chapter package never imports another chapter.

The imports are read from the source with `ast`, so a lazy import inside a function counts too.
"""
import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "oscc_core"
LAYERS = ("base", "engine", "exact", "method", "learning", "reporting", "chapters")
RANK = {name: i for i, name in enumerate(LAYERS)}


def layer_of(module: str) -> str:
    """'oscc_core.engine.rng' -> 'engine'; modules outside the layer packages are the base."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in RANK else "base"


def chapter_of(module: str) -> "str | None":
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "chapters" else None


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def is_module(dotted: str) -> bool:
    path = PACKAGE.parent / Path(*dotted.split("."))
    return path.is_dir() or path.with_suffix(".py").exists()


def imported_modules(source: str, me: str, is_package: bool) -> list[str]:
    """Every oscc_core module that module `me` imports (absolute, or relative resolved against its package)."""
    tree = ast.parse(source)
    here = me.split(".")
    package = here if is_package else here[:-1]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names if a.name.split(".")[0] == "oscc_core"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "oscc_core" or (target == "oscc_core" and
                                                         all(a.name == "__version__" for a in node.names)):
                continue
            # `from oscc_core.x import y` may import a submodule y: count it as the deeper module
            out += [f"{target}.{a.name}" if is_module(f"{target}.{a.name}") else target for a in node.names]
    return out


SOURCES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)
TOP_LEVEL_API = {"oscc_core"}   # the package's __init__ re-exports the public API from every layer


def violations(me: str, source: str, is_package: bool = False) -> list[str]:
    """What is wrong with the imports of module `me` (dotted name) whose source is `source`."""
    if me in TOP_LEVEL_API or me == "oscc_core.__main__":
        return []
    out = []
    for target in imported_modules(source, me, is_package):
        if target == "oscc_core":
            out.append(f"{me} imports the top-level package (import the module it needs)")
            continue
        if RANK[layer_of(target)] > RANK[layer_of(me)]:
            out.append(f"{me} ({layer_of(me)}) imports {target} ({layer_of(target)})")
        mine, theirs = chapter_of(me), chapter_of(target)
        if mine and theirs and mine != theirs:
            out.append(f"chapter {mine} imports chapter {theirs} ({target})")
    return out


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_a_module_imports_only_its_own_layer_or_a_lower_one(path):
    assert violations(module_name(path), path.read_text(), path.name == "__init__.py") == []


def test_the_checker_catches_an_upward_import():
    assert violations("oscc_core.engine.probe", "from oscc_core.reporting import claims\n") == [
        "oscc_core.engine.probe (engine) imports oscc_core.reporting.claims (reporting)"]


def test_the_checker_catches_a_lazy_relative_upward_import():
    source = "def f():\n    from ..reporting.rows import Row\n"
    assert violations("oscc_core.exact.probe", source) == [
        "oscc_core.exact.probe (exact) imports oscc_core.reporting.rows (reporting)"]


def test_the_checker_catches_a_chapter_importing_another():
    found = violations("oscc_core.chapters.selector.probe", "from oscc_core.chapters.covariance import rows\n")
    assert any(v.startswith("chapter selector imports chapter covariance") for v in found)


def test_no_module_is_longer_than_about_500_lines():
    long = {str(p.relative_to(PACKAGE)): n for p in SOURCES if (n := len(p.read_text().splitlines())) > 520}
    assert long == {}
