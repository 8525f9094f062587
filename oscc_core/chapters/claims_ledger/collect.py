"""Read the chapters' results files and collect every comparison row that names a claim id.

Order (the ledger takes the first row of an entry in this order): results
files by file name (`01_contract.json` before `02_covariance.json`), and
inside a file in the order the file stores its keys (results files are
written with sorted keys, so alphabetical) and list items in list order.
"""
from __future__ import annotations

import json
from pathlib import Path

from oscc_core.reporting.ledger_lines import CLAIM_KEY, SECTION_CHAPTERS, RowRecord

#: This chapter's own stem: its results file is never read as a source.
LEDGER_STEM = "07_claims_ledger"
__all__ = ["CLAIM_KEY", "LEDGER_STEM", "SECTION_CHAPTERS", "RowRecord", "read_results", "row_records",
           "rows_by_claim", "sources"]


def read_results(results_dir) -> dict[str, dict]:
    """Every results file `<stem>.json` in `results_dir` (the ledger's own excluded), by stem, in file-name order."""
    out = {}
    for path in sorted(Path(results_dir).glob("*.json")):
        if path.stem == LEDGER_STEM:
            continue
        out[path.stem] = json.loads(path.read_text(encoding="utf-8"))
    return out


def _walk(obj, where: str, chapter: str, out: list) -> None:
    if isinstance(obj, dict):
        if CLAIM_KEY in obj:
            out.append(RowRecord(chapter, where, obj))
        for key, value in obj.items():
            _walk(value, f"{where}/{key}" if where else str(key), chapter, out)
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            _walk(value, f"{where}/{i}" if where else str(i), chapter, out)


def row_records(results: dict[str, dict]) -> list[RowRecord]:
    """Every record with a "claim id" key in every results file, in the documented order (module docstring)."""
    out: list[RowRecord] = []
    for chapter, body in results.items():
        _walk({k: v for k, v in body.items() if k != "manifest"}, "", chapter, out)
    return out


def rows_by_claim(records: list[RowRecord], claim_ids) -> tuple[dict[str, list[RowRecord]], list[RowRecord]]:
    """The rows of each claim id (in order), and the rows whose "claim id" names no entry of the claims file.

    A row of the second kind names where the paper prints a text value (a table and column) instead of a
    claim id; it stays in its chapter and does not enter the ledger.
    """
    known = set(claim_ids)
    by_id: dict[str, list[RowRecord]] = {}
    other: list[RowRecord] = []
    for r in records:
        cid = r.record.get(CLAIM_KEY)
        if cid in known:
            by_id.setdefault(cid, []).append(r)
        elif cid is not None:
            other.append(r)
    return by_id, other


def sources(results: dict[str, dict]) -> dict[str, str | None]:
    """The manifest SHA-256 of every results file read: which runs the ledger was built from."""
    return {stem: (body.get("manifest") or {}).get("sha256") for stem, body in results.items()}
