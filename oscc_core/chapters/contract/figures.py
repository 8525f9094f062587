"""The chapter's figure: apparent contrast-variance change of each controlled violation (percent)."""
from __future__ import annotations

from oscc_core.reporting import claims
from oscc_core.reporting.figure_text import record_text_sizes


def violations_figure(controls: dict, exact_change_pct: float):
    """Bars: our change vs the independent arm with 95% intervals (log scale of the variance ratio, so they are
    asymmetric); diamonds: the paper; dashed: clean arm, exact."""
    import matplotlib.pyplot as plt

    names = list(controls)
    fig, ax = plt.subplots(figsize=(8, 3.6))
    ours = [controls[n]["variance_change_pct"] for n in names]
    err = [[ours[k] - controls[n]["variance_change_pct_low"] for k, n in enumerate(names)],
           [controls[n]["variance_change_pct_high"] - ours[k] for k, n in enumerate(names)]]
    paper = [claims.claim(f"safety.{n}.apparent_variance_change") for n in names]
    y = range(len(names))
    ax.barh(y, ours, xerr=err, color="#4c72b0", alpha=0.8, label="ours (95% interval)")
    ax.scatter(paper, y, color="#c44e52", marker="D", zorder=3, label="paper")
    ax.axvline(exact_change_pct, color="grey", ls="--", lw=1, label="clean full arm, exact")
    ax.set_yticks(list(y), [n.replace("_", " ") for n in names])
    ax.set_xlabel("apparent contrast-variance change vs independent (%)")
    ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    return record_text_sizes(fig)
