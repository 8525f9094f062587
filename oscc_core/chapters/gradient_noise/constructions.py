"""Exact return and gradient ratios (unitless) for several (continuation, root policy) constructions."""
from __future__ import annotations

import numpy as np

from oscc_core.chapters.gradient_noise.arms import LABELS
from oscc_core.chapters.gradient_noise.geometry import geometry
from oscc_core.engine.arms import PAPER_ARMS
from oscc_core.exact.cfr import cfr_plus
from oscc_core.games import LEDUC

#: The three coupled arms' labels, in the grid's column order.
COUPLED = tuple(LABELS[a] for a in PAPER_ARMS[1:])


def constructions(continuation_policy, continuation: str, cfr_iterations: int, game: str = LEDUC) -> dict:
    """The four combinations of uniform and CFR+ continuation and root policy: name -> (continuation, root policy).

    `continuation_policy` is the run's resolved continuation; it serves as the CFR+ policy when the run's
    `continuation` is "cfr_plus", else the CFR+ average policy is computed with `cfr_iterations`.
    """
    cfr = continuation_policy if continuation == "cfr_plus" else cfr_plus(game, cfr_iterations)
    return {"uniform continuation, uniform root policy": ("uniform", "uniform"),
            "uniform continuation, CFR+ root policy": ("uniform", "cfr_plus"),
            "CFR+ continuation, uniform root policy": (cfr, "uniform"),
            "CFR+ continuation, CFR+ root policy": (cfr, "cfr_plus")}


def exact_ratio_grid(root: str, constructions: dict, cfr_iterations: int, floor: float):
    """Exact rho_R and rho_G of every arm for several (continuation, root policy) constructions."""
    import pandas as pd

    out = []
    for name, (continuation, root_policy) in constructions.items():
        g = geometry(root, continuation, root_policy, cfr_iterations, floor)
        rec = {"construction": name}
        for a in PAPER_ARMS[1:]:
            rec[f"ρ_R {LABELS[a]}"] = g.exact_contrast_var(a) / g.exact_contrast_var("independent")
            rec[f"ρ_G {LABELS[a]}"] = g.exact_noise(a) / g.exact_noise("independent")
        g1 = np.einsum("nk,nk->n", g.jac[:, :, 0], g.jac[:, :, 0])
        rec["spread of ||g1(I)||² (max/min)"] = float(g1.max() / g1.min())
        out.append(rec)
    return pd.DataFrame(out).set_index("construction")


def gradient_raised(grid) -> list[tuple[str, str]]:
    """(construction, arm label) cells where projecting onto the gradient raises the ratio (rho_G > rho_R)."""
    return [(c, a) for c in grid.index for a in COUPLED if grid.loc[c, f"ρ_G {a}"] > grid.loc[c, f"ρ_R {a}"] + 1e-9]
