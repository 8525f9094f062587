"""The chapter's figure: contrast variance Var(R_1 - R_2) by coupling arm (chips^2), ours beside exact and paper."""
from __future__ import annotations

import numpy as np

from oscc_core.chapters.covariance.pair_rows import PAPER_ARM_VARIANCE
from oscc_core.chapters.covariance.paired_audit import PairedAudit
from oscc_core.engine.arms import ARMS
from oscc_core.reporting import claims
from oscc_core.reporting.figure_text import record_text_sizes

#: The paper's contrast variance of every arm, the namespace ablation included.
PAPER_VARIANCE_FIGURE = {**PAPER_ARM_VARIANCE, "policy_namespace": "ablations.policy_namespace.variance"}
#: File name of the figure in the output directory.
FIGURE_FILE = "02_covariance_contrast_variance.png"


def figure_title(root: str, n_groups: int) -> str:
    return f"Leduc root {root!r}: contrast variance by arm ({n_groups:,} groups per arm)"


def pooled_title(n_roots: int, n_groups: int) -> str:
    return f"Leduc, {n_roots} roots pooled: contrast variance by arm ({n_groups:,} groups per arm)"


def plot_contrast_variance(audit: PairedAudit, title: str):
    """Bar chart of contrast variance by arm: ours with 95% bootstrap intervals, exact and paper markers."""
    import matplotlib.pyplot as plt

    arms = list(ARMS)
    fig, ax = plt.subplots(figsize=(7.5, 4.2), dpi=100)
    x = np.arange(len(arms))
    est = [audit.contrast_var(a) for a in arms]
    vals = np.array([e.value for e in est])
    err = np.array([[e.value - e.low for e in est], [e.high - e.value for e in est]])
    ax.bar(x, vals, color="#7aa6c2", label="ours (Monte Carlo, 95% paired bootstrap)")
    ax.errorbar(x, vals, yerr=err, fmt="none", ecolor="black", capsize=4, lw=1)
    ax.scatter(x, [e.exact for e in est], marker="D", color="black", zorder=3, label="exact (enumeration)")
    ax.scatter(x, [claims.claim(PAPER_VARIANCE_FIGURE[a]) for a in arms], marker="x", s=70, color="#c0392b",
               zorder=3, label="paper")
    ax.set_xticks(x, [a.replace("_", "\n") for a in arms])
    ax.set_xlabel("coupling arm")
    ax.set_ylabel("contrast variance Var(R1 - R2) (chips$^2$)")
    ax.set_title(title)
    ax.set_ylim(0, max(max(vals), 45) * 1.4)       # room for the legend above the tallest bar
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    return record_text_sizes(fig)
