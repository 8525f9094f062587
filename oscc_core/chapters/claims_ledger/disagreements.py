"""The paper's internal disagreements (`book/paper_disagreements.yaml`): facts about the paper, with claim ids.

Each entry has a short title, the claim ids involved, the values in words and
one sentence.  Every claim id must name an entry of the claims file; the table
shows the value printed for each id (read from the claims file) and the
verdict the ledger gives it.
"""
from __future__ import annotations

from pathlib import Path

import yaml

from oscc_core.reporting import claims

DEFAULT_PATH = claims.REPO_ROOT / "book" / "paper_disagreements.yaml"
FIELDS = ("title", "claims", "values", "note")


def load_disagreements(entries: dict[str, dict], path: str | Path | None = None) -> list[dict]:
    """The disagreements, each checked: its fields present and every claim id in `entries`."""
    p = Path(path) if path is not None else DEFAULT_PATH
    items = yaml.safe_load(p.read_text(encoding="utf-8"))
    if not isinstance(items, list) or not items:
        raise ValueError(f"{p.name} must hold a non-empty YAML list of disagreements.")
    for i, item in enumerate(items):
        missing = [f for f in FIELDS if not item.get(f)]
        if missing:
            raise ValueError(f"{p.name}, entry {i + 1}: the fields {missing} are missing or empty.")
        unknown = [c for c in item["claims"] if c not in entries]
        if unknown:
            raise ValueError(f"{p.name}, entry {i + 1} ({item['title']}): no claim has the ids {unknown}.")
    return items


def disagreement_records(items: list[dict], entries: dict[str, dict], ledger: list[dict]) -> list[dict]:
    """Each disagreement with its claim ids, their printed values and the ledger's verdicts."""
    verdicts = {r["id"]: r["verdict"] or r.get("status") for r in ledger}
    return [{"title": d["title"], "values": d["values"], "note": d["note"],
             "claims": [{"id": c, "paper": entries[c]["value"], "source": entries[c].get("source"),
                         "verdict": verdicts.get(c)} for c in d["claims"]]} for d in items]


def verdict_spread(records: list[dict]) -> dict[str, int]:
    """How many disagreements give their printings different verdicts, and how many the same one."""
    different = sum(len({c["verdict"] for c in d["claims"]}) > 1 for d in records)
    return {"total": len(records), "different": different, "same": len(records) - different}
