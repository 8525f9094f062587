"""The transfer chapter's figure: Kuhn contrast variances per arm (ours per seed at the root '' and pooled over
every decision point, the paper's, and the proved maximum of the arm's construction at any one decision point),
in chips^2."""
from __future__ import annotations

from oscc_core.chapters.transfer.rows import PAPER_ROW
from oscc_core.learning import summary
from oscc_core.learning.arms import get_learner_arm
from oscc_core.reporting import claims
from oscc_core.reporting.figure_text import record_text_sizes


def plot_kuhn_contrast(kuhn: dict, maxima: dict, contrast_bound: float):
    """One column per arm: our exact contrast variance per seed at the root '' (dots) and pooled over every
    decision point (triangles, the paper's reading), the paper's value (cross), the proved maximum of the arm's
    construction at any one decision point (bar; `maxima` is `kuhn_facts.arm_maxima()`; it does not bound a pooled
    variance) and the bound of the returns' range (dashed), which bounds both."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.2), dpi=100)
    arms = list(kuhn)
    for x, arm in enumerate(arms):
        ours = summary.values(kuhn, arm, "contrast_variance_exact")
        ax.plot([x - 0.08] * len(ours), ours, "o", color="#1f77b4", alpha=0.8,
                label="ours at the root '' (one per seed)" if x == 0 else None)
        pool = summary.values(kuhn, arm, "contrast_pooled")
        ax.plot([x + 0.08] * len(pool), pool, "^", color="#2ca02c", alpha=0.8,
                label="ours pooled over every decision point" if x == 0 else None)
        paper = claims.claim(f"measured_transfer.kuhn.{PAPER_ROW[arm]}.contrast_variance")
        ax.plot(x, paper, "x", color="#c0392b", markersize=10, mew=2, label="paper" if x == 0 else None)
        top = maxima[get_learner_arm(arm).coupling_arm]["upper"]
        ax.hlines(top, x - 0.3, x + 0.3, color="black", label="proved maximum at any one decision point" if x == 0
                  else None)
    ax.axhline(contrast_bound, color="grey", ls="--", label=f"range bound ({contrast_bound:g})")
    ax.set_xticks(range(len(arms)), arms)
    ax.set_ylabel("contrast variance (chips²)")
    ax.legend(fontsize=8, loc="center right")
    fig.tight_layout()
    return record_text_sizes(fig)
