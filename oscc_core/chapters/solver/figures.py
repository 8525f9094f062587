"""The chapter's figures: CFR+ calibration, the three-seed diagnostic, the eta sensitivity panel, the
frozen screen's value change against epsilon, and the scale curve.  Exploitability in chips throughout."""
from __future__ import annotations

import numpy as np

from oscc_core.chapters.solver.tables import sensitivity_records
from oscc_core.reporting.figure_text import record_text_sizes

COLORS = {"cp_grpo": "#1f77b4", "independent": "#ff7f0e", "paired": "#1f77b4"}


def _plt():
    import matplotlib.pyplot as plt

    return plt


# The two-panel figures are 11 inches wide at 100 dpi and shown at the book's 672-pixel text
# width (61%): legends and ticks of WIDE_TEXT_PT points stay above the book check's 9 pixels.
WIDE_TEXT_PT = 11


def _readable(ax) -> None:
    """Tick labels and the legend (if any) of `ax` at WIDE_TEXT_PT points."""
    ax.tick_params(labelsize=WIDE_TEXT_PT)
    if ax.get_legend() is not None:
        for text in ax.get_legend().get_texts():
            text.set_fontsize(WIDE_TEXT_PT)


def plot_calibration(cal: dict):
    """Exploitability of our CFR+ average policy against iterations, per game, with the paper's printed value."""
    plt = _plt()
    fig, axes = plt.subplots(1, len(cal), figsize=(11, 4.2), dpi=100)
    for ax, (game, res) in zip(np.atleast_1d(axes), cal.items()):
        ax.loglog(res["curve"]["iteration"], res["curve"]["exploitability"], "-", color="#1f77b4", label="ours")
        target = next(iter(res["targets"].values()))
        ax.axhline(target["target"], color="#c0392b", ls="--", label="paper's printed value")
        if target["first_reach"]:
            ax.axvline(target["first_reach"], color="grey", ls=":", label=f"first reached: {target['first_reach']}")
        ax.set_title(f"{game}: {res['iterations']:,} iterations")
        ax.set_xlabel("CFR+ iteration")
        ax.set_ylabel("exploitability (chips)")
        ax.legend(fontsize=WIDE_TEXT_PT)
        _readable(ax)
    fig.tight_layout()
    return record_text_sizes(fig)


def plot_diagnostic(batch, seeds):
    """Left: exploitability of the average policy per iteration, per arm and seed; right: the per-seed
    independent-minus-paired difference at T."""
    plt = _plt()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2), dpi=100)
    its = sorted(batch.curve_average)
    for arm in ("cp_grpo", "independent"):
        for k, s in enumerate(seeds):
            y = [batch.curve_average[t][batch.index(arm, s)] for t in its]
            ax1.plot(its, y, color=COLORS[arm], alpha=0.8, lw=1, label=arm if k == 0 else None)
    ax1.set_xlabel("iteration")
    ax1.set_ylabel("exploitability of the average policy (chips)")
    ax1.legend()
    last = its[-1]
    diff = [batch.curve_average[last][batch.index("independent", s)] - batch.curve_average[last][
        batch.index("cp_grpo", s)] for s in seeds]
    ax2.bar([str(s) for s in seeds], diff, color="#7f7f7f")
    ax2.axhline(float(np.mean(diff)), color="black", ls="--", label=f"mean {np.mean(diff):+.4f}")
    ax2.axhline(0, color="black", lw=0.5)
    ax2.set_xlabel("seed")
    ax2.set_ylabel("independent - paired at T (chips)")
    ax2.legend()
    for ax in (ax1, ax2):
        _readable(ax)
    fig.tight_layout()
    return record_text_sizes(fig)


def plot_sensitivity(panel: list[dict]):
    """Mean independent-minus-paired difference at T with its 95% t-interval, against eta."""
    plt = _plt()
    rec = sensitivity_records(panel)
    fig, ax = plt.subplots(figsize=(6.5, 4), dpi=100)
    eta = [r["eta"] for r in rec]
    mean = np.array([r["mean difference (chips)"] for r in rec])
    err = np.array([[m - r["low"] for m, r in zip(mean, rec)], [r["high"] - m for m, r in zip(mean, rec)]])
    ax.errorbar(eta, mean, yerr=err, fmt="o-", capsize=4)
    ax.axhline(0, color="black", lw=0.5)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("step size eta")
    ax.set_ylabel("independent - paired exploitability at T (chips)")
    fig.tight_layout()
    return record_text_sizes(fig)


def plot_frozen_epsilon(screen: dict):
    """Exact change of player 0's value on the K pairs after the one-step update, against epsilon, per mode."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.5, 4), dpi=100)
    for k, (mode, m) in enumerate(screen["modes"].items()):
        curve = m["epsilon_curve"]
        ax.plot([c["epsilon"] for c in curve], [c["law_average"] for c in curve], "o-" if k == 0 else "x--",
                color=COLORS.get(mode, "#ff7f0e"), label=mode)
    ax.axvline(screen["parameters"]["epsilon"], color="grey", ls=":", label="epsilon used")
    ax.set_xlabel("clip range epsilon")
    ax.set_ylabel("exact value change on the K pairs (chips)")
    ax.legend()
    fig.tight_layout()
    return record_text_sizes(fig)


def plot_scale(batch, seeds):
    """Exploitability of the average (solid) and last (dotted) policies against iterations, per arm and seed."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=100)
    its = sorted(batch.curve_average)
    for arm in ("cp_grpo", "independent"):
        for k, s in enumerate(seeds):
            r = batch.index(arm, s)
            ax.plot(its, [batch.curve_average[t][r] for t in its], "-", color=COLORS[arm],
                    label=f"{arm}, average" if k == 0 else None)
            ax.plot(its, [batch.curve_last[t][r] for t in its], ":", color=COLORS[arm], alpha=0.7,
                    label=f"{arm}, last" if k == 0 else None)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("iteration")
    ax.set_ylabel("exploitability (chips)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return record_text_sizes(fig)
