"""The compiled kernels' cache follows their source: a change to any kernel module gives a fresh directory."""
import re
import shutil
from pathlib import Path

import pytest

from oscc_core import kernel_cache
from oscc_core.kernel_cache import KERNEL_SOURCES, kernel_digest

ROOT = Path(kernel_cache.__file__).resolve().parent


def _copy(tmp_path: Path) -> Path:
    for rel in KERNEL_SOURCES:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    return tmp_path


@pytest.mark.parametrize("rel", KERNEL_SOURCES)
def test_a_change_to_any_kernel_module_changes_the_cache_directory(tmp_path, rel):
    root = _copy(tmp_path)
    before = kernel_digest(root)
    with open(root / rel, "a", encoding="utf-8") as f:
        f.write("\n# an edit\n")
    assert kernel_digest(root) != before


def test_every_module_numba_compiles_for_the_cpu_is_a_kernel_source():
    compiled = {p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.py")
                if re.search(r"@(_?jit|numba\.njit)\(", p.read_text(encoding="utf-8"))}
    assert compiled and compiled <= set(KERNEL_SOURCES)


def test_numba_caches_into_the_directory_of_this_source(monkeypatch):
    import numba

    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setattr(numba.config, "CACHE_DIR", "")
    kernel_cache.configure()
    assert numba.config.CACHE_DIR.endswith(kernel_digest())


def test_only_the_most_recently_used_kernel_versions_stay(tmp_path):
    import os
    names = [f"{i:016x}" for i in range(12)]
    for age, name in enumerate(names):                    # names[0] used last, names[11] first
        (tmp_path / name).mkdir()
        os.utime(tmp_path / name, (1e9 - age * 1000, 1e9 - age * 1000))
    (tmp_path / "notes").mkdir()                          # not a version directory: never touched
    current = tmp_path / names[-1]                        # the oldest becomes the one in use
    deleted = kernel_cache.prune(current, keep=4)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([*names[:3], names[-1], "notes"])
    assert sorted(p.name for p in deleted) == sorted(names[3:-1])


def test_a_version_removed_by_another_process_meanwhile_is_skipped(tmp_path, monkeypatch):
    from pathlib import Path
    for i in range(3):
        (tmp_path / f"{i:016x}").mkdir()
    gone, stat = tmp_path / f"{1:016x}", Path.stat

    def vanishing(self, *args, **kwargs):
        if self == gone:
            raise FileNotFoundError(self)
        return stat(self, *args, **kwargs)

    monkeypatch.setattr(Path, "stat", vanishing)
    assert kernel_cache.prune(tmp_path / f"{0:016x}", keep=1) == [tmp_path / f"{2:016x}"]
