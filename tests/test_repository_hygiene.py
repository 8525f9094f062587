"""What must never be committed: process id files, and what `make mutants` writes (mutmut's mutants/ folder)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)


pytestmark = pytest.mark.skipif(git("rev-parse", "--git-dir").returncode != 0, reason="not a git checkout")


def test_no_process_id_file_is_committed():
    assert [f for f in git("ls-files").stdout.splitlines() if f.endswith(".pid")] == []


@pytest.mark.parametrize("path", ["holder.pid", "scripts/server.pid", "mutants/oscc_core/learning/loop.py",
                                  "mutants/mutmut-stats.json"])
def test_process_id_files_and_mutmuts_folder_are_ignored(path):
    assert git("check-ignore", "--no-index", "-q", path).returncode == 0, path
