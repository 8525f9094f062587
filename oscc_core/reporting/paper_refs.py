"""Readable names for the paper's LaTeX labels: `tab:noise-transfer` -> "the paper's Table 36".

The claims file (book/paper_claims.yaml) records where the paper prints each number by its
LaTeX label, which a reader of the book cannot look up. Text written for the reader names the
table or figure by the number the paper's PDF prints, and an equation by what it defines.
The numbers are those LaTeX gives the paper's floats: tables and figures counted separately,
in the order of their captions, appendix included (the paper resets no counter).
"""
from __future__ import annotations

import re

#: Table number of each table label, in the order of the paper's captions.
TABLES = {label: k for k, label in enumerate((
    "rng-dependency", "main", "main-uncertainty", "marginal-equivalence", "app-p1-update", "replay-contract",
    "app-p1-rng", "prior-art", "app-design-record", "app-invariance", "app-p1-replay-fields",
    "app-learning-boundary", "app-implementation-checks", "app-eligibility", "seed-precision",
    "app-p1-learning-config", "app-p1-budget", "app-artifact-binding", "seed-cost", "extended-controls",
    "retained-evidence", "measured-grpo-ppo", "measured-independent", "measured-solver", "measured-transfer",
    "app-p1-strata", "app-p1-root-budget", "app-p1-coupling-factors", "app-p1-clipping", "app-p1-ablations",
    "selector-stress", "multi-action-selector", "calibration-sample-complexity", "seat-swap-check",
    "safety-violations", "noise-transfer", "physical-cost-frontier", "app-p1-solver", "app-p1-transfer",
    "app-p1-failures", "app-acceptance", "release", "app-p1-claims", "app-p1-figures"), start=1)}
#: Figure number of each figure label, in the order of the paper's captions.
FIGURES = {label: k for k, label in enumerate((
    "method", "diagnostics", "selector-workflow", "root-robustness", "root-budget-variance", "action-support",
    "calibration-size", "noise-cost-comparison", "solver-transfer-results", "extended-controls"), start=1)}
#: What each numbered equation of the paper defines.
EQUATIONS = {"geometry-difference": "geometry-difference", "selector-objective": "selector-objective",
             "finite-certificate": "finite-sample certificate", "paired-update": "paired-update",
             "total-cov": "total-covariance"}

LABEL = re.compile(r"\b(tab|fig|eq):([a-z0-9-]+)|\bEq\. ([a-z][a-z-]*)")


def readable(label: str) -> str:
    """"the paper's Table 36" for `tab:noise-transfer`, "the paper's Figure 7" for
    `fig:calibration-size`, "the paper's paired-update equation" for `eq:paired-update`; a label the
    paper does not define is returned as it is."""
    kind, _, name = label.partition(":")
    if kind == "tab" and name in TABLES:
        return f"the paper's Table {TABLES[name]}"
    if kind == "fig" and name in FIGURES:
        return f"the paper's Figure {FIGURES[name]}"
    if kind == "eq" and name in EQUATIONS:
        return f"the paper's {EQUATIONS[name]} equation"
    return label


def readable_text(text: str) -> str:
    """`text` with every LaTeX label (`tab:x`, `fig:x`, `eq:x`, "Eq. x") by its readable name; a label
    the paper does not define is left as it is."""
    def name(m: re.Match) -> str:
        return readable(f"eq:{m.group(3)}" if m.group(3) else f"{m.group(1)}:{m.group(2)}")
    return LABEL.sub(name, text)


def source_name(source: str) -> str:
    """Where the claims file says a number is printed, for a reader: "the paper's abstract", "the
    paper's text, section “Results”", "the paper's Table 2", "the paper's Figure 7 caption"."""
    if source == "abstract":
        return "the paper's abstract"
    if source.startswith("text:"):
        return f"the paper's text, section “{source[len('text:'):]}”"
    return readable_text(source)
