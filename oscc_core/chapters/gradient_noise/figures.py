"""The chapter's figures: noise ratios per arm against the paper's, and noise against physical cost."""
from __future__ import annotations

import numpy as np

from oscc_core.chapters.gradient_noise.arms import LABELS, PAPER_KEY, ROW_ARMS, SELECT
from oscc_core.chapters.gradient_noise.frontier import FrontierArm
from oscc_core.chapters.gradient_noise.transfer import NoiseAudit
from oscc_core.reporting import claims
from oscc_core.reporting.figure_text import record_text_sizes


# Legends and ticks in points, large enough that the book, which shows these 8.5- and
# 10-inch figures (100 dpi) at its 672-pixel text width, draws them at least 9 pixels tall.
TRANSFER_LEGEND_PT = 9
FRONTIER_TEXT_PT = 10.5


def plot_noise_transfer(audit: NoiseAudit, setting: str, title: str):
    """Grouped bars: return, gradient and update ratios per arm with 95% intervals and the paper's values."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8.5, 4.8), dpi=100)
    x = np.arange(len(ROW_ARMS))
    width = 0.26
    colours = {"return": "#7aa6c2", "gradient": "#e3a857", "update": "#8fbf7f"}
    names = {"return": "return ratio ρ_R", "gradient": "gradient ratio ρ_G", "update": "update ratio ρ_Δθ"}
    cols = {"return": "return_ratio", "gradient": "gradient_ratio", "update": "update_ratio"}
    for k, q in enumerate(("return", "gradient", "update")):
        est = [audit.ratio(q, a, setting) for a in ROW_ARMS]
        v = np.array([e.value for e in est])
        err = np.array([[e.value - e.low for e in est], [e.high - e.value for e in est]])
        pos = x + (k - 1) * width
        ax.bar(pos, v, width, color=colours[q], label=f"ours: {names[q]}")
        ax.errorbar(pos, v, yerr=err, fmt="none", ecolor="black", capsize=2, lw=0.8)
        ax.scatter(pos, [float(claims.claim(f"noise_transfer.{PAPER_KEY[a]}.{cols[q]}")) for a in ROW_ARMS],
                   marker="x", color="#c0392b", s=40, zorder=3, label="paper" if k == 0 else None)
    ax.axhline(1.0, color="grey", lw=0.8, ls=":")
    ax.set_xticks(x, [LABELS[a] for a in ROW_ARMS])
    ax.set_xlabel("coupling arm")
    ax.set_ylabel("noise relative to independent (unitless)")
    ax.set_ylim(0, 1.2)
    ax.set_title(title)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.17), fontsize=TRANSFER_LEGEND_PT, ncol=4)  # below the axes: no bar covered
    fig.tight_layout()
    return record_text_sizes(fig)


def plot_frontier(front: dict[str, FrontierArm], budget: int, title: str):
    """Two panels: per-group noise trace against physical draws per group, and batch-mean noise at the budget
    (horizontal bars, one per arm, named on the vertical axis)."""
    import matplotlib.pyplot as plt

    colours = {"independent": "#7f7f7f", "root_only": "#7aa6c2", "continuation_only": "#e3a857",
               "full": "#2e6f9e", SELECT: "#8e44ad"}
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2), dpi=100)
    for a, f in front.items():
        e = f.noise
        left.errorbar([f.draws_per_group], [e.value], yerr=[[e.value - e.low], [e.high - e.value]], fmt="o",
                      color=colours[a], capsize=3, ms=5, label=LABELS[a])
        left.scatter([f.draws_per_group], [e.exact], marker="D", facecolors="none", edgecolors="black", s=30,
                     zorder=3)
    left.scatter([], [], marker="D", facecolors="none", edgecolors="black", label="exact")
    left.set_xlabel("physical draws per group")
    left.set_ylabel("gradient-noise trace N per group\n(chips² per logit²)")
    left.set_title("per-group noise against per-group cost", fontsize=10)
    left.legend(fontsize=FRONTIER_TEXT_PT, loc="lower right")
    # one bar per arm, laid horizontally: the arms' names stand one under the other and never run together
    y = np.arange(len(front))[::-1]
    est = [f.mean_noise for f in front.values()]
    v = np.array([1e4 * e.value for e in est])
    err = np.array([[1e4 * (e.value - e.low) for e in est], [1e4 * (e.high - e.value) for e in est]])
    right.barh(y, v, color=[colours[a] for a in front])
    right.errorbar(v, y, xerr=err, fmt="none", ecolor="black", capsize=3, lw=0.8)
    right.scatter([1e4 * e.exact for e in est], y, marker="D", facecolors="none", edgecolors="black", s=30,
                  zorder=3, label="exact")
    right.set_yticks(y, [LABELS[a] for a in front], fontsize=FRONTIER_TEXT_PT)
    right.set_xlim(0, 1.3 * float(np.max(v + err[1])))     # room on the right for the legend beside the bars
    right.set_xlabel("N / groups at the budget (×1e-4)")
    right.set_title(f"batch-mean gradient noise at {budget:,} draws per arm", fontsize=10)
    right.legend(fontsize=FRONTIER_TEXT_PT, loc="lower right")
    for ax in (left, right):
        ax.tick_params(labelsize=FRONTIER_TEXT_PT)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return record_text_sizes(fig)
