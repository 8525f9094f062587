"""The ledger's figures: verdicts by chapter, and the landing page's contrast variance by arm.

Both read only the ledger and the covariance chapter's results file.  PNG files are written without the
software stamp, so that the bytes depend only on the numbers.
"""
from __future__ import annotations

import numpy as np

from oscc_core.chapters.claims_ledger.collect import SECTION_CHAPTERS
from oscc_core.chapters.claims_ledger.ledger import VERDICTS
from oscc_core.reporting import tally
from oscc_core.reporting.figure_text import record_text_sizes

VERDICTS_FILE = "07_claims_ledger_verdicts.png"
CONTRAST_FILE = "07_claims_ledger_contrast_variance.png"
VERDICT_COLOURS = {"reproduced": "#2e8b57", "inconclusive": "#7fb3d5", "partly": "#e0a526",
                   "depends on the reading": "#48a9a6", "not reproduced": "#c0392b",
                   "impossible under the rules": "#6c3483", "not compared": "#b3b3b3"}
#: The covariance chapter's arms, in the order of the figure, and the paper's ablation-table entry of each.
ARM_CLAIMS = {"independent": "ablations.ind.variance", "policy_namespace": "ablations.policy_namespace.variance",
              "root_only": "ablations.root_only.variance", "continuation_only": "ablations.continuation.variance",
              "full": "ablations.cp_grpo_full.variance"}
#: The main table's value for the full arm, shown beside the ablation table's.
MAIN_FULL_CLAIM = "main.cp_grpo_paired.variance"
COVARIANCE_STEM = "02_covariance"


def plot_verdicts(counts: dict, built: set[str]):
    """Stacked horizontal bars: the values of each chapter's section of the claims file (each value once, however
    often the paper prints it), by verdict: the basis of every count in the book."""
    import matplotlib.pyplot as plt

    stems = [s for s in SECTION_CHAPTERS.values() if s in counts["tally by chapter"]]
    labels = [f"{s}{'' if s in built else ' (not built)'}" for s in stems]
    by_chapter = {s: tally.values_by_verdict(counts["tally by chapter"][s]) for s in stems}
    fig, ax = plt.subplots(figsize=(8, 3.8), dpi=100)
    y = np.arange(len(stems))[::-1]
    left = np.zeros(len(stems))
    for v in VERDICTS:
        n = np.array([by_chapter[s][v] for s in stems])
        ax.barh(y, n, left=left, color=VERDICT_COLOURS[v], label=v, edgecolor="white", linewidth=0.5)
        for yi, li, ni in zip(y, left, n):
            if ni >= 12:
                ax.text(li + ni / 2, yi, str(ni), ha="center", va="center", fontsize=7)
        left += n
    ax.set_yticks(y, labels)
    ax.set_xlabel("values the paper prints (each counted once)")
    ax.set_xlim(0, left.max() * 1.02)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=4, fontsize=8, frameon=False)
    fig.tight_layout()
    return record_text_sizes(fig)


def contrast_records(covariance: dict, ledger: list[dict]) -> list[dict]:
    """Per arm: our contrast variance pooled over all roots (the paper's reading) with its 95% interval and exact
    value, the same at the fixed root '' alone (the sensitivity reading), the paper's value and the verdict."""
    by_id = {r["id"]: r for r in ledger}
    pooled, one_root = covariance["pooled_roots"]["arms"], covariance["arms"]
    out = []
    for arm, cid in ARM_CLAIMS.items():
        a, b = pooled[arm], one_root[arm]
        out.append({"arm": arm, "ours": a["contrast_var"], "interval": a["contrast_var_interval"],
                    "exact": a["exact_contrast_var"], "one root": b["contrast_var"],
                    "one root exact": b["exact_contrast_var"], "paper": by_id[cid]["paper"],
                    "verdict": by_id[cid]["verdict"], "claim id": cid})
    return out


def plot_contrast_variance(records: list[dict], main_full: float):
    """Contrast variance by arm: ours pooled over all roots with its 95% interval, the exact value, ours at the
    root '' alone, and the paper's value."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.2), dpi=100)
    x = np.arange(len(records))
    ours = np.array([r["ours"] for r in records])
    err = np.array([[r["ours"] - r["interval"][0] for r in records], [r["interval"][1] - r["ours"] for r in records]])
    ax.bar(x, ours, width=0.6, color="#7aa6c2", label="ours, all roots (95% interval)")
    ax.errorbar(x, ours, yerr=err, fmt="none", ecolor="black", capsize=4, lw=1)
    ax.scatter(x, [r["exact"] for r in records], marker="D", color="black", zorder=3, label="exact, all roots")
    ax.scatter(x - 0.2, [r["one root"] for r in records], marker="o", facecolors="none", edgecolors="#555555",
               zorder=3, label="ours, root '' alone")
    ax.scatter(x, [r["paper"] for r in records], marker="x", s=70, color="#c0392b", zorder=3,
               label="paper (ablation table)")
    full = [i for i, r in enumerate(records) if r["arm"] == "full"]
    ax.scatter([i + 0.2 for i in full], [main_full] * len(full), marker="+", s=90, color="#c0392b", zorder=3,
               label="paper (main table)")
    ax.set_xticks(x, [r["arm"].replace("_", "\n") for r in records])
    ax.set_xlabel("coupling arm")
    ax.set_ylabel("Var(R1 - R2) (chips$^2$)")
    ax.set_ylim(0, max(ours.max(), max(r["paper"] for r in records)) * 1.35)
    ax.legend(loc="upper right", fontsize=8, ncol=2)
    fig.tight_layout()
    return record_text_sizes(fig)


REDUCTION_CLAIM = "main.caption.variance_reduction"


def landing_values(records: list[dict], covariance: dict, ledger: list[dict]) -> dict[str, str]:
    """The numbers the landing page and the chapter cite beside the contrast-variance figure, as text (the
    all-roots reading, and the full arm at the root '' alone)."""
    by_id = {r["id"]: r for r in ledger}
    full = next(r for r in records if r["arm"] == "full")
    return {"landing_full_ours": f"{full['ours']:.2f}", "landing_full_exact": f"{full['exact']:.2f}",
            "landing_full_interval": f"[{full['interval'][0]:.2f}, {full['interval'][1]:.2f}]",
            "landing_full_one_root": f"{full['one root']:.2f}",
            "landing_full_paper": f"{full['paper']:g}", "landing_full_main": f"{by_id[MAIN_FULL_CLAIM]['paper']:g}",
            "landing_reduction_ours": f"{covariance['pooled_roots']['reduction_percent']['value']:.1f}",
            "landing_reduction_one_root": f"{covariance['fixed_root']['reduction_percent']['value']:.1f}",
            "landing_reduction_paper": f"{by_id[REDUCTION_CLAIM]['paper']:g}"}


def main_full_value(ledger: list[dict]) -> float:
    """The main table's contrast variance of the full arm, as the ledger holds it."""
    return next(r["paper"] for r in ledger if r["id"] == MAIN_FULL_CLAIM)
