"""The chapter's data tables (pandas), built from the audits' result dicts for the notebook to show.

Values keep their units: counts of states, groups and lanes; shifts in chips;
variance changes in percent; rates as fractions of groups.
"""
from __future__ import annotations

import pandas as pd

from oscc_core.chapters.contract.findings import chapter_counts
from oscc_core.chapters.contract.observation import ObservationAudit
from oscc_core.reporting import claims
from oscc_core.reporting.tally import tally_frame, values_by_verdict


def observation_frame(obs: ObservationAudit, obs_leak: ObservationAudit, key_leak: ObservationAudit) -> pd.DataFrame:
    """The observation audit of the real engine beside its two injected leaks, one column each."""
    return pd.DataFrame({"real engine": obs.as_dict(), "opponent card in observation": obs_leak.as_dict(),
                         "opponent card in policy key": key_leak.as_dict()}).drop(["game"])


#: A no-break space: the table cells that wrap keep "± 0.1808" and "[-36.9, -8.9]" on one line each.
NBSP = "\u00a0"


def per_seed_table(*results: dict) -> pd.DataFrame:
    """The per-seed implementation checks of each arm, indexed by (arm, seed); the column names in words (a header
    such as "unique group key" wraps, "unique_group_key" would not), so the table fits the text column."""
    frame = pd.DataFrame([{**{k: v for k, v in r.items() if k != "failures"}, "arm": res["arm"]}
                          for res in results for r in res["per_seed"]])
    return frame.set_index(["arm", "seed"]).rename(columns=lambda c: c.replace("_", " "))


def controls_table(controls: dict) -> pd.DataFrame:
    """One row per controlled violation, indexed by the control: its code, the certificate's decision and the
    measured side effects. A narrow column breaks a cell only before "±" or the 95% interval (no-break spaces
    inside them), so the table fits the text column and each number stays whole."""
    return pd.DataFrame([{"control": n, "condition": c["condition"], "caught as": c["expected_code"],
                          "affected": f"{c['affected_groups']}/{c['groups']}", "flagged": c["flagged"],
                          "decision": c["decision"], "rejected": f"{c['rejected']}/{c['groups']}",
                          "marginal shift": f"{c['marginal_shift']:+.4f} ±{NBSP}{c['marginal_shift_se']:.4f}",
                          "replay failure": round(c["replay_failure_rate"], 4),
                          "variance change vs independent (%) [95%]":
                              f"{c['variance_change_pct']:+.1f} [{c['variance_change_pct_low']:+.1f},{NBSP}"
                              f"{c['variance_change_pct_high']:+.1f}]",
                          "variance change vs clean full (%)": round(c["variance_change_vs_clean_pct"], 1)}
                         for n, c in controls.items()]).set_index("control")


def admissible_table(admissible: dict) -> pd.DataFrame:
    """One row per admissible arm: the certificate's decision, replay failures and the largest C1 z-score."""
    return pd.DataFrame([{"arm": a, "groups": r["groups"], "decision": r["decision"], "rejected": r["rejected"],
                          "flagged": r["flagged"], "replay failure": r["replay_failure_rate"],
                          "max |z| of branch means (C1)": round(r["max_abs_z"], 2)} for a, r in admissible.items()])


def ledger_table(ledger: list[dict]) -> pd.DataFrame:
    """The failure ledger, one row per code (the per-code failure counts left out)."""
    return pd.DataFrame([{k: v for k, v in r.items() if k != "failures"} for r in ledger])


def verdict_counts(rows: list, settings: list) -> pd.DataFrame:
    """The chapter's closing verdict table: its values by class and verdict, each value once, on the basis of its
    result box (`reporting.tally.tally_frame` of `findings.chapter_counts`)."""
    return tally_frame(chapter_counts(rows, settings))


def verdict_glue(rows: list, settings: list) -> dict:
    """n_<verdict> -> how many of the chapter's values (each once) carry that verdict (every verdict, zeros
    too), and n_reading_dependent."""
    counted = chapter_counts(rows, settings)
    by_verdict = values_by_verdict(counted)
    return {**{f"n_{v.replace(' ', '_')}": by_verdict[v] for v in claims.VERDICTS},
            "n_reading_dependent": counted["reading dependent"]}


def settings_glue(settings: list) -> dict:
    """n_adopted, n_differs -> how many settings of the paper's run we adopt and how many differ."""
    return {f"n_{s}": sum(r.verdict == s for r in settings) for s in claims.STATUSES}
