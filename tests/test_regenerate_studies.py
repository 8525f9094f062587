"""`make regenerate-studies` (`scripts/regenerate_studies.py`): the commands it would run, in order, and the
notebook defaults it sets, checked without running a study (its dry run changes nothing)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from notebook_runs import parameter_defaults

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "regenerate_studies.py"
sys.path.insert(0, str(SCRIPT.parent))
import regenerate_studies  # noqa: E402


def status() -> str:
    return subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain"], capture_output=True, text=True).stdout


def test_a_dry_run_prints_05_then_06_with_the_chosen_options_and_changes_nothing(tmp_path):
    before = status()
    done = subprocess.run([sys.executable, str(SCRIPT), "--dry-run", "--work", str(tmp_path)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    first = next(i for i, x in enumerate(lines) if x.startswith("05 (Leduc study)"))
    second = next(i for i, x in enumerate(lines) if x.startswith("06 (Kuhn study"))
    assert first < second
    assert "run solver -p study_file '' " in lines[first] and "-p converging_options steady -p curve_per_decade 24" \
        in lines[first] and "-p study_multiples 1,10,100,160" in lines[first]
    assert "run transfer -p study_file '' " in lines[second] and "-p study_multiples 1,10,100" in lines[second]
    assert "converging_options" not in lines[second]             # 06 takes them from results/' Leduc study
    assert any(x.strip().endswith("results/06_transfer_study_control_checkpoints.json.gz") for x in lines)
    assert status() == before and list(tmp_path.iterdir()) == []


def test_setting_the_defaults_rewrites_only_the_two_parameter_lines(tmp_path):
    copy = tmp_path / "05_solver.ipynb"
    shutil.copy(ROOT / "notebooks" / "05_solver.ipynb", copy)
    before = json.loads(copy.read_text())
    committed = parameter_defaults("05_solver")["converging_options"]
    regenerate_studies.set_defaults(copy, {"converging_options": '"none"', "curve_per_decade": "7"})
    after = json.loads(copy.read_text())
    cell = next(i for i, c in enumerate(before["cells"]) if "parameters" in c["metadata"].get("tags", []))
    changed = [(a, b) for a, b in zip(before["cells"][cell]["source"], after["cells"][cell]["source"]) if a != b]
    # only the value after "=" moves; the name and the comment after it stay as the notebook has them
    assert [(a.split(" = ")[0], b.split("  #")[1]) for a, b in changed] == [
        (b.split(" = ")[0], a.split("  #")[1]) for a, b in changed]
    assert [b.split("  #")[0] for _, b in changed] == ['converging_options: str = "none"', "curve_per_decade: int = 7"]
    assert [c for i, c in enumerate(after["cells"]) if i != cell] == \
        [c for i, c in enumerate(before["cells"]) if i != cell]
    assert parameter_defaults("05_solver")["converging_options"] == committed   # the repository's is untouched


@pytest.mark.parametrize("value", ["0", "65"])
def test_a_density_out_of_range_is_refused_naming_it(value):
    done = subprocess.run([sys.executable, str(SCRIPT), "--dry-run", "--per-decade", value], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and "--per-decade must be an integer from 1 to 64" in done.stderr
