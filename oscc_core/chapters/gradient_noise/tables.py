"""The chapter's display tables (text cells rounded to fixed digits): geometry, selection, noise transfer,
clipping study and matched-cost frontier.  Noise in chips^2 per logit^2, contrast variances in chips^2."""
from __future__ import annotations

import math

import numpy as np

from oscc_core.chapters.gradient_noise.arms import LABELS, ROW_ARMS
from oscc_core.chapters.gradient_noise.bootstrap import estimate
from oscc_core.chapters.gradient_noise.calibration import Selection
from oscc_core.chapters.gradient_noise.frontier import FrontierArm
from oscc_core.chapters.gradient_noise.geometry import Geometry
from oscc_core.chapters.gradient_noise.transfer import NoiseAudit
from oscc_core.chapters.gradient_noise.updates import UpdateSetting, ratio_quantiles
from oscc_core.engine.arms import PAPER_ARMS
from oscc_core.method.strata import CARD_CLASSES, stratum_of


def geometry_frame(geom: Geometry, digits: int = 4):
    """One row per root information state: weight, root policy, ||g_i||^2 and the exact N(Gamma; I) of each arm."""
    import pandas as pd

    gram = geom.gram()
    rows = []
    for k, (own, pub) in enumerate(geom.infos):
        rec = {"own card": own, "class": stratum_of(own), "public card": "—" if pub < 0 else pub,
               "root-law weight": f"{geom.weight[k]:.4f}",
               "π0": "(" + ", ".join(f"{a} {p:.3f}" for a, p in zip(geom.actions, geom.probs[k])) + ")",
               "tr(GᵀG)": f"{np.trace(gram[k]):.{digits}f}"}
        for a in PAPER_ARMS:
            rec[f"N {LABELS[a]}"] = f"{geom.exact_noise(a, per_info=True)[k]:.{digits}f}"
        rows.append(rec)
    return pd.DataFrame(rows).set_index(["own card", "public card"])


def selection_frame(selection: Selection):
    """One row per (stratum, candidate) with its certificate, and the independent fallback of each stratum."""
    import pandas as pd

    s = selection
    rows = []
    for z, certs in s.certificates.items():
        for c in certs:
            rows.append({"stratum": CARD_CLASSES[z], "candidate": c.arm, "blocks": c.blocks,
                         "bound B": s.bound[z], "mean gain": c.mean_gain, "lower bound L": c.lower_bound,
                         "clipped scores": c.clipped_scores, "certified": "yes" if c.certified else "no",
                         "estimated noise": s.objective[z][c.arm],
                         "selected": "yes" if s.selection[z] == c.arm else ""})
        rows.append({"stratum": CARD_CLASSES[z], "candidate": "independent", "blocks": s.blocks[z],
                     "bound B": s.bound[z], "mean gain": 0.0, "lower bound L": None, "clipped scores": None,
                     "certified": "fallback", "estimated noise": s.objective[z]["independent"],
                     "selected": "yes" if s.selection[z] == "independent" else ""})
    return pd.DataFrame(rows)


def noise_transfer_frame(audit: NoiseAudit, setting: str, digits: int = 3):
    """The paper's table layout: one row per arm, ours with 95% intervals."""
    import pandas as pd

    out = []
    for a in ROW_ARMS:
        rec = {"arm": LABELS[a]}
        for q, label in (("return", "return ratio ρ_R"), ("gradient", "gradient ratio ρ_G"),
                         ("update", "update ratio ρ_Δθ")):
            e = audit.ratio(q, a, setting)
            rec[label] = f"{e.value:.{digits}f} [{e.low:.{digits}f}, {e.high:.{digits}f}]"
            if e.exact is not None:
                rec[label] += f" (exact {e.exact:.{digits}f})"
        rec["clip fraction"] = f"{estimate(audit.clip_fraction(a, setting)).value:.{digits}f}"
        u = audit.updates[a][setting]
        rec["finite gradients"] = f"{int(u.finite.sum()):,}/{len(u.finite):,}"
        out.append(rec)
    return pd.DataFrame(out).set_index("arm")


def clipping_frame(audit: NoiseAudit, settings: list[UpdateSetting], digits: int = 4):
    """Every setting: its parameters, clip fraction, ratio quantiles and the update noise of each arm."""
    import pandas as pd

    out = []
    for s in settings:
        ups = [audit.updates[a][s.name] for a in ("independent", "full")]
        lo, hi = ratio_quantiles(ups)
        rec = {"setting": s.name, "ε": "∞" if not math.isfinite(s.epsilon) else f"{s.epsilon:g}",
               "lag": f"{s.lag:g}", "η": f"{s.learning_rate:g}", "epochs": s.epochs,
               "ratio quantiles": f"[{lo:.3f}, {hi:.3f}]",
               "clip fraction (ind / full)": f"{estimate(audit.clip_fraction('independent', s.name)).value:.3f} / "
                                              f"{estimate(audit.clip_fraction('full', s.name)).value:.3f}"}
        for a in PAPER_ARMS:
            rec[f"U {LABELS[a]}"] = f"{estimate(audit.update_noise(a, s.name)).value:.{digits}f}"
        raw = (s.learning_rate * s.epochs) ** 2 * estimate(audit.update_noise("full", s.name)).value
        rec["Var Δθ full, raw (×1e3)"] = f"{1e3 * raw:.{digits}f}"
        r = audit.ratio("update", "full", s.name)
        rec["ρ_Δθ full [95%]"] = f"{r.value:.3f} [{r.low:.3f},\u00a0{r.high:.3f}]"   # the interval on one line
        out.append(rec)
    return pd.DataFrame(out).set_index("setting")


#: The clipping study's columns in two tables, so that each fits the text column: each setting and how much
#: it clips, then the update noise of each arm and the full arm's update ratio.
CLIPPING_SETTING_COLUMNS = ("ε", "lag", "η", "epochs", "ratio quantiles", "clip fraction (ind / full)")


def clipping_tables(audit: NoiseAudit, settings: list[UpdateSetting], digits: int = 4) -> list:
    """`clipping_frame` in two tables, both indexed by the setting: its parameters and clipping
    (`CLIPPING_SETTING_COLUMNS`), then the update noise of every arm, the raw displacement variance and the
    full arm's update ratio."""
    frame = clipping_frame(audit, settings, digits)
    first = list(CLIPPING_SETTING_COLUMNS)
    return [frame[first], frame[[c for c in frame.columns if c not in first]]]


def frontier_frame(front: dict[str, FrontierArm], digits: int = 4):
    """One row per arm at the matched budget: groups, draws, transitions and noise with intervals."""
    import pandas as pd

    return pd.DataFrame([{
        "arm": LABELS[a], "groups": f"{f.groups:,}", "physical draws": f"{f.draws:,}",
        "draws per group": f"{f.draws_per_group:.3f}", "transitions": f"{f.transitions:,}",
        "contrast variance [95%]": f"{f.contrast_var.value:.2f} [{f.contrast_var.low:.2f}, {f.contrast_var.high:.2f}]",
        "noise trace N [95%]": f"{f.noise.value:.{digits}f} [{f.noise.low:.{digits}f}, {f.noise.high:.{digits}f}]",
        "exact N": f"{f.noise.exact:.{digits}f}",
        "N / groups (×1e4)": f"{1e4 * f.mean_noise.value:.{digits}f}",
        "exact N / groups (×1e4)": f"{1e4 * f.mean_noise.exact:.{digits}f}",
    } for a, f in front.items()]).set_index("arm")
