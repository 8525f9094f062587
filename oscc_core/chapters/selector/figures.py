"""The chapter's two figures: certification and false selection against the calibration size, and the
root-policy scan on the simplex (probabilities on both axes)."""
from __future__ import annotations

import math

import numpy as np

from oscc_core.reporting import claims
from oscc_core.reporting.figure_text import record_text_sizes

from .regimes import REGIMES
from .root_policy import RootPolicy

# The calibration figure is drawn at about the book's text width (672 px at 100 dpi), so the page
# shows it near full size: its legends and ticks stay above the book check's 9-pixel floor
# (9 points at 100 dpi are 12.5 pixels).  Three panels, one quantity each: a rate and a regret never
# share an axis.
CALIBRATION_SIZE_IN = (6.8, 14.0)
CALIBRATION_TEXT_PT = 9
#: The panels' titles, top to bottom (the caption names them).
CALIBRATION_PANELS = ("certification (positive regime)", "false selection (family-wise)",
                      "gradient-noise regret (positive regime)")


def paper_values(sizes, column: str) -> list[tuple[int, float]]:
    """(groups per stratum, the paper's value) of `column` in the paper's calibration table
    (`calibration.<size>.<column>` in the claims file), for the sizes the paper prints."""
    known = claims.load_claims()
    return [(k, float(claims.claim(f"calibration.{k}.{column}"))) for k in sizes
            if f"calibration.{k}.{column}" in known]


def plot_calibration(rows: list[dict], sufficient: dict, delta: float, title: str):
    """Three panels against groups per stratum (log scale), each quantity on its own axis: top, the
    positive-regime certification rate, the paper's values and Theorem 1's sufficient size per stratum;
    middle, the family-wise false-selection rate per regime with its exact upper 95% bound, the paper's
    false-selection rates and delta (a probability, linear axis); bottom, the positive regime's noise regret
    (noise units, log axis)."""
    import matplotlib.pyplot as plt

    fig, (ax1, ax2, ax3) = plt.subplots(3, 1, figsize=CALIBRATION_SIZE_IN, dpi=100)
    pos = [r for r in rows if r["map"] == "semantic"]
    n = [r["groups per stratum"] for r in pos]
    ax1.plot(n, [r["certification rate"] for r in pos], "o-", color="#1f77b4", label="ours: certification rate")
    paper = paper_values(n, "certification_rate")
    if paper:
        ax1.plot(*zip(*paper), "x--", color="#c0392b", label="paper")
    styles = iter(["-.", ":", "--"])
    for z, v in sufficient.items():
        if math.isfinite(v):
            ax1.axvline(v, color="grey", ls=next(styles), lw=1, label=f"sufficient n (Theorem 1), stratum {z}: {v:,.0f}")
    ax1.set_ylabel("share of stratum decisions\ncertifying a coupling")
    ax1.set_ylim(-0.03, 1.03)
    colors = {"semantic": "#1f77b4", "relabelled": "#2ca02c", "antithetic": "#d62728"}
    for mp, color in colors.items():
        rr = [r for r in rows if r["map"] == mp]
        if rr:
            ax2.plot([r["groups per stratum"] for r in rr], [r["family-wise false-selection rate"] for r in rr], "o-",
                     color=color, label=f"{REGIMES[mp]} ({mp})")
            ax2.plot([r["groups per stratum"] for r in rr], [r["family-wise upper 95%"] for r in rr], "v",
                     color=color, ms=4, alpha=0.6)
    ax2.plot([], [], "v", color="grey", ms=4, alpha=0.6, label="exact upper 95% bound")
    paper_false = paper_values(n, "false_selection_rate")
    if paper_false:
        ax2.plot(*zip(*paper_false), "x--", color="#c0392b", label="paper")
    ax2.axhline(delta, color="black", ls="--", lw=1, label=f"delta = {delta:g}")
    top = max([delta] + [r["family-wise upper 95%"] for r in rows] + [v for _, v in paper_false])
    ax2.set_ylim(-0.03 * top, 1.25 * top)           # headroom: no marker on the frame
    ax2.set_ylabel("false-selection rate")
    regret = [r["noise regret"] for r in pos]
    ax3.plot(n, regret, "s-", color="#9467bd", label="ours: noise regret")
    if all(v > 0 for v in regret):
        ax3.set_yscale("log")
    else:
        ax3.set_yscale("symlog", linthresh=1e-3)
    ax3.set_ylabel("regret (noise units)")
    for ax, panel, ncol in zip((ax1, ax2, ax3), CALIBRATION_PANELS, (2, 2, 1)):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("calibration groups per stratum")
        ax.set_title(panel, fontsize=10)
        ax.tick_params(labelsize=CALIBRATION_TEXT_PT)
        ax.legend(fontsize=CALIBRATION_TEXT_PT, loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=ncol)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return record_text_sizes(fig)


def plot_policy_scan(scan, chosen: tuple | None, title: str):
    """Root policies on the simplex (pi(Fold), pi(Call)); colour: do the two criteria's argmins differ?"""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.2, 5), dpi=100)
    same, diff = scan[~scan["differ"]], scan[scan["differ"]]
    ax.scatter(same["pi(Fold)"], same["pi(Call)"], c="#7aa6c2", s=22, label="same arm (noise argmin = full)")
    ax.scatter(diff["pi(Fold)"], diff["pi(Call)"], c="#c0392b", s=22, marker="s",
               label="differ (noise argmin = independent)")
    f = np.linspace(0.0, 1.0, 801)
    # <g_Call, g_Raise> = 0  <=>  f^2 + c^2 + (1-f-c)^2 = 1 - f, solved for c
    for sign in (-1, 1):
        disc = 4 * (1 - f) ** 2 - 8 * (2 * f ** 2 - f)   # from 2c^2 - 2(1-f)c + (2f^2 - f) = 0
        c = ((2 * (1 - f)) + sign * np.sqrt(np.where(disc >= 0, disc, np.nan))) / 4
        ax.plot(f, c, color="black", lw=1, label="<g_Call, g_Raise> = 0" if sign < 0 else None)
    if chosen is not None:
        ax.scatter([chosen[0]], [chosen[1]], marker="*", s=220, c="gold", edgecolors="black", zorder=4,
                   label="notebook root policy")
    ax.plot([0, 1], [1, 0], color="grey", lw=0.8)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("pi(Fold)")
    ax.set_ylabel("pi(Call)  (pi(Raise) = 1 - pi(Fold) - pi(Call))")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    return record_text_sizes(fig)



def calibration_figure(rows: list[dict], sufficient: dict, p, bound: float, n_comparisons: int):
    """plot_calibration with the notebook's title (root, repetitions, B, delta, M)."""
    return plot_calibration(rows, sufficient, p.delta,
                            f"Leduc root {p.binary_root!r}: OSCC-Select over {p.sweep_repetitions} calibrations per "
                            f"size (B = {bound:.2f}, delta = {p.delta:g}, M = {n_comparisons})")


def policy_scan_figure(scan, policy: RootPolicy, root: str):
    """plot_policy_scan with the notebook's root policy marked (when it is the same at every information state)."""
    return plot_policy_scan(scan, policy.common_probs(),
                            f"Leduc root {root!r}: exact argmin of the noise trace\nvs of the mean "
                            f"pairwise contrast variance ({len(scan)} root policies)")
