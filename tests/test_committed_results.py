"""The committed results were written by the committed code, in the locked environment.

Every chapter's results manifest (`results/0N_<chapter>.json`) carries the SHA-256 of the library's source
when it was written; it must be the current library's, so a change to library code that a chapter runs is
committed together with that chapter's regenerated outputs (`make book`).  The two long studies
(`*_study.json`) are not checked here: their chapters rerun part of them live and compare.
"""
import json
import re
from pathlib import Path

import pytest

from oscc_core.digest import source_digest
from oscc_core.reporting.results import NUMERIC_PACKAGES

ROOT = Path(__file__).resolve().parent.parent
MANIFESTS = sorted(p for p in (ROOT / "results").glob("[0-9][0-9]_*.json") if re.fullmatch(r"\d\d_[a-z_]+", p.stem)
                   and not p.stem.endswith("_study"))
LOCK = ROOT / "requirements.lock"


def locked_versions() -> dict:
    pins = dict(re.findall(r"^([A-Za-z0-9_.\-]+)==(\S+)$", LOCK.read_text(encoding="utf-8"), flags=re.M))
    return {name: pins[name] for name in NUMERIC_PACKAGES}


def test_every_chapter_has_a_results_manifest():
    stems = {p.stem for p in MANIFESTS}
    chapters = {p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")}
    assert stems == chapters


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.stem)
def test_committed_manifest_carries_the_current_source_digest(path):
    manifest = json.loads(path.read_text(encoding="utf-8"))["manifest"]
    assert manifest["source_digest"] == source_digest(), (
        f"{path.name} was written by other library code: regenerate it (make book) in the same change.")


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.stem)
def test_committed_manifest_was_written_with_the_locked_numeric_packages(path):
    manifest = json.loads(path.read_text(encoding="utf-8"))["manifest"]
    assert manifest["package_versions"] == locked_versions()
