"""What an OSCC-Select calibrated on Leduc decides on Kuhn's strata, which it never certified.

The paper freezes "the selector and solver" on Leduc before the Kuhn test.
OSCC-Select's decisions are per stratum z = (game, round, action count, seat,
own-card class); Theorem 1 certifies a coupling only on the stratum and
calibration law it was calibrated on, and "unrecognized strata use the
independent arm".  Kuhn's information states are disjoint from Leduc's
(the games have different decks and histories), so no Kuhn stratum key is ever a Leduc key.

This module

1. calibrates OSCC-Select compactly at Leduc's root "" (player 0's first
   decision, Call/Raise; uniform continuation and root policy by default) in
   the way chapter 04 does: per stratum (J, Q, K) and candidate arm
   (root_only, continuation_only, full), `blocks` calibration blocks of
   `block_size` groups give gain scores X = ||G R_ind||^2 - ||G R_arm||^2
   (chips^2 per unit logit^2, "noise units"), clipped to [-B, B] and certified
   with Hoeffding + a union bound over M = 3 candidates x 3 strata
   (`method.selectors.certify`); the selected arm is the certified arm of
   smallest estimated objective, else independent (`oscc_select`);
2. reads the frozen selector on Kuhn's root "" strata (own card J, Q, K) two
   ways: strict (Theorem 1 as stated: no certificate for the Kuhn key, so
   independent) and key-matching (the Leduc choice of the stratum with the
   same round, action count, seat and card class), beside the exact Kuhn
   contrast variance (chips^2) and gradient noise (noise units) of every arm.

In Kuhn no chance event follows the root, so full == root_only and
continuation_only == independent exactly; the module checks both.
"""
from __future__ import annotations

import math
import time

import numpy as np

from oscc_core.engine.arms import PAPER_ARMS
from oscc_core.engine.collector import collect
from oscc_core.engine.roots import build_root
from oscc_core.exact.arm_moments import arm_moments, infostate_moments
from oscc_core.games import KUHN, LEDUC, get_game
from oscc_core.games.leduc import NUM_SUITS
from oscc_core.method.policy_gradient import policy_jacobian
from oscc_core.method.selectors import FALLBACK, certify, hoeffding_radius, oracle_select, oscc_select
from oscc_core.method.strata import CARD_CLASSES, stratum_of
from oscc_core.policy import resolve_policy
from oscc_core.reporting.rows import Row

#: The candidate couplings OSCC-Select certifies against the independent fallback.
CANDIDATES = tuple(a for a in PAPER_ARMS if a != FALLBACK)
#: The largest |return| of a branch in chips: Leduc 13 (ante 1 + raises 2 + 2 + 4 + 4), Kuhn 2.
RETURN_BOUND = {LEDUC: 13.0, KUHN: 2.0}
#: Bound rules: "pilot" (chapter 04's: a quantile of |block score| on a validation-split pilot) or
#: "natural" (the largest |score| any group can give; clipping then never bites).
BOUND_RULES = ("pilot", "natural")
#: Exact values closer than this are "equal".
EQUAL_TOL = 1e-12


# --- strata -------------------------------------------------------------------------------

def card_class(game: str, card: int) -> str:
    """Own-card class of a card id: Leduc rank = id // 2 (method.strata), Kuhn ids 0, 1, 2 are the ranks."""
    if game == KUHN:
        return CARD_CLASSES[int(card)]
    return stratum_of(int(card))


def stratum_key(game: str, root: str, card_cls: str) -> tuple:
    """(game, round, action count, seat, own-card class): the stratum OSCC-Select certifies a choice for."""
    g = get_game(game)
    r = build_root(g, root, resolve_policy(g, "uniform"))
    return (g.name, int(r.round), len(r.actions), int(r.player), card_cls)


def key_text(key) -> str:
    game, rnd, m, seat, cls = key
    return f"{game} | round {rnd} | {m} actions | seat {seat} | {cls}"


def strict_choice(frozen: dict, key) -> str:
    """Theorem 1 as stated: a stratum with no certificate of its own (its exact key) uses the independent arm."""
    return frozen.get(tuple(key), FALLBACK)


def key_matched_choice(frozen: dict, key) -> tuple[str, tuple | None]:
    """A frozen selector that looks up the stratum with the same (round, action count, seat, card class) in any
    game: the choice made there and the key it was taken from (independent and None when nothing matches)."""
    matches = [k for k in frozen if tuple(k[1:]) == tuple(key[1:])]
    if not matches:
        return FALLBACK, None
    return frozen[matches[0]], matches[0]


# --- the root policy ------------------------------------------------------------------------

def root_probs(root_policy, m: int) -> np.ndarray:
    """'uniform' or m positive probabilities summing to one (the same at every information state)."""
    if isinstance(root_policy, str) and root_policy == "uniform":
        return np.full(m, 1.0 / m)
    p = np.asarray(root_policy, dtype=np.float64)
    if p.shape != (m,) or np.any(p <= 0) or abs(p.sum() - 1.0) > 1e-9:
        raise ValueError(f"root_policy must be 'uniform' or {m} positive probabilities summing to 1, "
                         f"got {root_policy!r}.")
    return p


def _quad(g: np.ndarray, r: np.ndarray) -> np.ndarray:
    """||G r_g||^2 for every row r_g of r [N, m] (noise units)."""
    v = r @ g.T
    return (v * v).sum(1)


def natural_bound(g: np.ndarray, game: str) -> float:
    """The largest |score| one group can give: ||G||_2^2 m (max |return|)^2."""
    m = g.shape[0]
    return float(np.linalg.norm(g, 2) ** 2 * m * RETURN_BOUND[game] ** 2)


# --- the Leduc pool -------------------------------------------------------------------------

def _collect(game, root, n, seed, continuation, device, split):
    cols = {a: collect(game, root, a, n, seed, continuation=continuation, device=device, split=split)
            for a in PAPER_ARMS}
    valid = np.ones(n, dtype=bool)
    for c in cols.values():
        valid &= c.codes.numpy() == 0
    first = cols[FALLBACK]
    return ({a: c.returns.double().numpy() for a, c in cols.items()}, first.own_card.numpy(),
            first.public_card.numpy(), valid)


def _pool(root, groups_per_stratum, seed, continuation, device, split):
    """All four arms at `root`, paired by group id, with at least `groups_per_stratum` valid groups per class.

    Collection is deterministic per group id, so a larger pool extends a smaller one.
    """
    n = math.ceil(len(CARD_CLASSES) * groups_per_stratum * 1.08 + 10 * math.sqrt(3 * groups_per_stratum))
    while True:
        returns, own, pub, valid = _collect(LEDUC, root, n, seed, continuation, device, split)
        cls = np.asarray(CARD_CLASSES)[own // NUM_SUITS]      # Leduc rank = card id // suits, vectorised
        if all((valid & (cls == z)).sum() >= groups_per_stratum for z in CARD_CLASSES):
            return returns, own, pub, valid, cls, n
        n *= 2


def _block_scores(x: np.ndarray, block_size: int) -> np.ndarray:
    nb = len(x) // block_size
    return x[:nb * block_size].reshape(nb, block_size).mean(1)


def pilot_bound(seed, groups, block_size, quantile, g, root, continuation, device) -> float:
    """Chapter 04's B: the `quantile` of |block score| over every candidate and stratum on a validation pilot."""
    returns, _, _, valid, cls, _ = _pool(root, groups // len(CARD_CLASSES), seed, continuation, device,
                                         "validation")
    base = _quad(g, returns[FALLBACK])
    blocks = []
    for z in CARD_CLASSES:
        sel = valid & (cls == z)
        for a in CANDIDATES:
            blocks.append(np.abs(_block_scores((base - _quad(g, returns[a]))[sel], block_size)))
    return float(np.quantile(np.concatenate(blocks), quantile))


def _estimated_noise(r: np.ndarray, info: np.ndarray, g: np.ndarray) -> float:
    """sum_I (n_I / n) tr(G S_I G^T) over the information states with >= 2 groups (S_I sample covariance)."""
    gram = g.T @ g
    total, norm = 0.0, 0
    for i in np.unique(info):
        ri = r[info == i]
        if len(ri) < 2:
            continue
        total += len(ri) * float((gram * np.cov(ri, rowvar=False, ddof=1)).sum())
        norm += len(ri)
    return total / norm


# --- exact values ----------------------------------------------------------------------------

def exact_leduc(root: str, continuation, g: np.ndarray) -> dict:
    """stratum -> {"noise": arm -> J(arm; z), "contrast_variance": arm -> E_I Var(R_1 - R_2 | I)} (exact)."""
    infos = infostate_moments(LEDUC, root, continuation)
    gram = g.T @ g
    out = {}
    for z in CARD_CLASSES:
        members = [i for i in infos if card_class(LEDUC, i.own_card) == z]
        w = np.array([i.weight for i in members])
        w = w / w.sum()
        out[z] = {"noise": {a: float(sum(wi * (gram * i.moments[a].cov).sum() for wi, i in zip(w, members)))
                            for a in PAPER_ARMS}}
        if g.shape[0] == 2:
            out[z]["contrast_variance"] = {a: float(sum(wi * i.moments[a].contrast_var() for wi, i in zip(w, members)))
                                           for a in PAPER_ARMS}
    return out


def exact_kuhn(root: str, g: np.ndarray) -> dict:
    """stratum -> exact contrast variance (chips^2) and noise tr(G Sigma G^T) (noise units) of every arm.

    A Kuhn stratum is one information state (the own card), so the pooled covariance of
    `arm_moments(..., where=own card)` is the conditional one.
    """
    gram = g.T @ g
    out = {}
    for c, z in enumerate(CARD_CLASSES):
        mom = arm_moments(KUHN, root, "uniform", where=lambda s, c=c: s[:, 0] == c)
        rec = {"noise": {a: float((gram * mom[a].cov).sum()) for a in PAPER_ARMS}}
        if g.shape[0] == 2:
            rec["contrast_variance"] = {a: mom[a].contrast_var() for a in PAPER_ARMS}
        out[z] = rec
    return out


# --- the chapter's computation ----------------------------------------------------------------

def transfer_selector(seed: int, blocks: int = 64, block_size: int = 16, delta: float = 0.05,
                      bound="pilot", device: str = "cpu", *, root: str = "", root_policy="uniform",
                      pilot_groups: int = 30_000, bound_quantile: float = 0.99) -> dict:
    """Calibrate OSCC-Select on Leduc's root `root` and read the frozen selector on Kuhn's root `root`.

    seed          run seed of the calibration (split "calibration") and pilot (split "validation") streams
    blocks        calibration blocks per stratum and candidate (n of Theorem 1)
    block_size    groups per block (a block's score is the mean of its groups' scores)
    delta         failure probability of the simultaneous certificate
    bound         B: a positive number (noise units), "pilot" (the `bound_quantile` of |block score| on
                  `pilot_groups` validation groups, chapter 04's rule) or "natural" (no group can exceed it)
    device        device of the collector
    root          the root history in both games ("" = player 0's first decision, two actions)
    root_policy   "uniform" or probabilities over the root's two actions (same at every information state)

    The continuation (and behaviour) policy is uniform in both games.  Returns a JSON-friendly dict.
    """
    t0 = time.perf_counter()
    if not (isinstance(blocks, int) and blocks >= 2 and isinstance(block_size, int) and block_size >= 1):
        raise ValueError(f"blocks must be an int >= 2 and block_size an int >= 1, got {blocks!r}, {block_size!r}.")
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}.")
    continuation = "uniform"
    lg, kg = get_game(LEDUC), get_game(KUHN)
    lroot = build_root(lg, root, resolve_policy(lg, continuation))
    kroot = build_root(kg, root, resolve_policy(kg, continuation))
    m = len(lroot.actions)
    if len(kroot.actions) != m:
        raise ValueError(f"root {root!r} has {m} actions in Leduc but {len(kroot.actions)} in Kuhn.")
    probs = root_probs(root_policy, m)
    g = policy_jacobian(probs)

    nat = natural_bound(g, LEDUC)
    b, rule = _declared_bound(bound, nat, seed, pilot_groups, block_size, bound_quantile, g, root, continuation,
                              device)
    n_groups = blocks * block_size
    returns, own, pub, valid, cls, collected = _pool(root, n_groups, seed, continuation, device, "calibration")
    m_comp = len(CANDIDATES) * len(CARD_CLASSES)
    strata = _leduc_strata(returns, own * 100 + pub, valid, cls, n_groups, block_size, b,
                           delta, g, exact_leduc(root, continuation, g), root)
    frozen = {tuple(strata[z]["key"]): strata[z]["choice"] for z in CARD_CLASSES}
    kuhn = _kuhn_strata(frozen, exact_kuhn(root, g), root)
    result = {
        "parameters": {"seed": seed, "blocks": blocks, "block_size": block_size, "delta": delta,
                       "bound": bound if isinstance(bound, str) else float(bound), "device": device, "root": root,
                       "root_policy": probs.tolist(), "continuation": continuation, "cost_weight": 0.0,
                       "pilot_groups": pilot_groups, "bound_quantile": bound_quantile},
        "leduc": {"root": root, "actions": list(lroot.action_names), "B": b, "bound_rule": rule,
                  "natural_bound": nat, "n_comparisons": m_comp,
                  "radius": hoeffding_radius(blocks, b, m_comp, delta),
                  "groups_per_stratum": n_groups, "groups_collected_per_arm": collected,
                  "strata": strata, "choice": {z: strata[z]["choice"] for z in CARD_CLASSES}},
        "kuhn": {"root": root, "actions": list(kroot.action_names), "strata": kuhn, "structural": _structural(kuhn)},
    }
    result["reading"] = reading(result)
    result["runtime_s"] = time.perf_counter() - t0
    return result


def _declared_bound(bound, natural, seed, pilot_groups, block_size, bound_quantile, g, root, continuation, device):
    """B and its rule ("natural": `natural`, "pilot" or "fixed"), declared before the calibration sample is looked
    at."""
    if isinstance(bound, str):
        if bound not in BOUND_RULES:
            raise ValueError(f"bound must be a positive number or one of {list(BOUND_RULES)}, got {bound!r}.")
        b = natural if bound == "natural" else pilot_bound(
            seed, pilot_groups, block_size, bound_quantile, g, root, continuation, device)
        return b, bound
    b = float(bound)
    if not (math.isfinite(b) and b > 0):
        raise ValueError(f"bound must be positive, got {bound!r}.")
    return b, "fixed"


def _leduc_strata(returns, info, valid, cls, n_groups, block_size, b, delta, g, exact_l, root) -> dict:
    """Per Leduc card class: the first `n_groups` valid groups' certificates of every candidate (block scores of
    the noise gain over independent), OSCC-Select's choice, and the exact noise, gains and oracle beside them."""
    m_comp = len(CANDIDATES) * len(CARD_CLASSES)
    base = _quad(g, returns[FALLBACK])
    strata = {}
    for z in CARD_CLASSES:
        idx = np.flatnonzero(valid & (cls == z))[:n_groups]
        j_ind = _estimated_noise(returns[FALLBACK][idx], info[idx], g)
        certs, objective = [], {FALLBACK: j_ind}
        for a in CANDIDATES:
            x = _block_scores((base - _quad(g, returns[a]))[idx], block_size)
            c = certify(x, a, b, m_comp, delta)
            certs.append(c)
            objective[a] = j_ind - float(x.mean())
        ex = exact_l[z]
        key = stratum_key(LEDUC, root, z)
        strata[z] = {
            "key": list(key), "key_text": key_text(key), "groups": len(idx),
            "certificates": [{"arm": c.arm, "blocks": c.blocks, "mean_gain": c.mean_gain,
                              "lower_bound": c.lower_bound, "clipped_scores": c.clipped_scores,
                              "certified": c.certified,
                              "exact_gain": ex["noise"][FALLBACK] - ex["noise"][c.arm],
                              "sufficient_blocks": _sufficient(b, m_comp, delta,
                                                               ex["noise"][FALLBACK] - ex["noise"][c.arm])}
                             for c in certs],
            "objective": objective, "choice": oscc_select(certs, objective),
            "exact_noise": ex["noise"], "exact_contrast_variance": ex.get("contrast_variance"),
            "oracle": oracle_select(ex["noise"]),
        }
    return strata


def _kuhn_strata(frozen: dict, exact_k: dict, root: str) -> list[dict]:
    """The frozen selector read on Kuhn's strata, which it never saw: the strict and the key-matched choice, and
    the key-matched choice's exact gain over independent."""
    kuhn = []
    for z in CARD_CLASSES:
        key = stratum_key(KUHN, root, z)
        km, src = key_matched_choice(frozen, key)
        noise = exact_k[z]["noise"]
        gain = noise[FALLBACK] - noise[km]
        kuhn.append({
            "stratum": z, "key": list(key), "key_text": key_text(key),
            "certified_key": tuple(key) in frozen,
            "strict": strict_choice(frozen, key),
            "key_matched": km, "key_matched_from": None if src is None else key_text(src),
            "exact_noise": noise, "exact_contrast_variance": exact_k[z].get("contrast_variance"),
            "oracle": oracle_select(noise),
            "key_matched_gain": gain,
            "key_matched_vs_independent": ("better" if gain > EQUAL_TOL else
                                           "worse" if gain < -EQUAL_TOL else "equal"),
        })
    return kuhn


def _structural(kuhn: list[dict]) -> dict:
    """Kuhn's exact identities: full equals root_only and continuation_only equals independent (no chance event
    after the root)."""
    return {
        "full == root_only": all(abs(r["exact_noise"]["full"] - r["exact_noise"]["root_only"]) < EQUAL_TOL
                                 for r in kuhn),
        "continuation_only == independent": all(
            abs(r["exact_noise"]["continuation_only"] - r["exact_noise"][FALLBACK]) < EQUAL_TOL for r in kuhn),
    }


def _sufficient(b, m_comp, delta, gain):
    """Theorem 1's sufficient block count 8 B^2 log(2M/delta) / d^2 (None when the exact gain d <= 0)."""
    if gain <= EQUAL_TOL:
        return None
    return 8.0 * b ** 2 * math.log(2.0 * m_comp / delta) / gain ** 2


def reading(result: dict) -> str:
    """One sentence: what the frozen Leduc selector does on Kuhn under both readings."""
    rows = result["kuhn"]["strata"]
    strict = sorted({r["strict"] for r in rows})
    km = ", ".join(f"{r['stratum']}: {r['key_matched']} ({r['key_matched_vs_independent']})" for r in rows)
    all_ind = all(r["key_matched"] == FALLBACK for r in rows)
    tail = ("so under both readings the frozen selector plays the independent arm on every Kuhn stratum and cannot "
            "be the source of a paired-coupling gain on Kuhn" if all_ind else
            "a transfer Theorem 1 does not license, since the Kuhn strata were never certified and any gain there "
            "is a property of Kuhn, not of the Leduc certificate")
    return (f"With no certificate for any Kuhn stratum key, Theorem 1's fallback gives {' / '.join(strict)} on all "
            f"{len(rows)} Kuhn strata; matching keys by card class would apply Leduc's choices "
            f"(vs independent on Kuhn's exact noise: {km}), {tail}.")


def strict_sentence(result: dict) -> str:
    """What the strict reading means for the Kuhn "CP-GRPO paired" rows, from the frozen selector's play."""
    strict = sorted({r["strict"] for r in result["kuhn"]["strata"]})
    if strict == [FALLBACK]:
        return ("Under the strict reading the frozen selector plays the independent arm on every Kuhn stratum, so "
                "the Kuhn \"CP-GRPO paired\" numbers cannot come from a frozen OSCC-Select; our rows for them use "
                "the fixed full coupling.")
    return (f"Under the strict reading the frozen selector plays {', '.join(strict)} on the Kuhn strata; our "
            f"Kuhn \"CP-GRPO paired\" rows use the fixed full coupling.")


# --- rows and table for the notebook ---------------------------------------------------------------

def selector_rows(result: dict) -> list[Row]:
    """Rows with no paper value (the paper prints no per-stratum selector decision for either game)."""
    out = []
    lp, r = result["leduc"], result["leduc"]["radius"]
    for z, s in lp["strata"].items():
        out.append(Row.no_paper(f"Leduc root {lp['root']!r}, stratum {z}: OSCC-Select choice "
                                f"({lp['groups_per_stratum']} groups, B = {lp['B']:.4g})", s["choice"],
                                exact=s["oracle"]))
        for c in s["certificates"]:
            out.append(Row.no_paper(f"Leduc stratum {z}: gain of {c['arm']} over independent, mean clipped block "
                                    f"score ± r_n (noise units)", c["mean_gain"],
                                    (c["mean_gain"] - r, c["mean_gain"] + r), c["exact_gain"]))
    for k in result["kuhn"]["strata"]:
        z = k["stratum"]
        out.append(Row.no_paper(f"Kuhn stratum {z}: frozen OSCC-Select, strict reading (no certificate)", k["strict"]))
        out.append(Row.no_paper(f"Kuhn stratum {z}: frozen OSCC-Select, key-matched to Leduc {z}", k["key_matched"],
                                exact=k["oracle"]))
        out.append(Row.no_paper(f"Kuhn stratum {z}: exact noise gain of the key-matched arm over independent "
                                f"(noise units)", k["key_matched_gain"], exact=k["key_matched_gain"]))
    return out


def selector_table(result: dict) -> dict:
    """{"leduc": one record per stratum and candidate, "kuhn": one record per stratum}, flat for DataFrames."""
    lp = result["leduc"]
    leduc = []
    for z, s in lp["strata"].items():
        for c in s["certificates"]:
            leduc.append({"stratum": z, "arm": c["arm"], "blocks": c["blocks"], "B": lp["B"], "r_n": lp["radius"],
                          "mean gain": c["mean_gain"], "lower bound L": c["lower_bound"],
                          "clipped": c["clipped_scores"], "certified": c["certified"],
                          "exact gain": c["exact_gain"], "sufficient blocks": c["sufficient_blocks"],
                          "choice": s["choice"], "oracle": s["oracle"]})
    kuhn = []
    for k in result["kuhn"]["strata"]:
        rec = {"stratum": k["stratum"], "key": k["key_text"], "certified key": k["certified_key"],
               "strict": k["strict"], "key-matched": k["key_matched"]}
        if k["exact_contrast_variance"] is not None:
            rec.update({f"Var({a})": v for a, v in k["exact_contrast_variance"].items()})
        rec.update({f"N({a})": v for a, v in k["exact_noise"].items()})
        rec.update({"oracle": k["oracle"], "key-matched gain": k["key_matched_gain"],
                    "key-matched vs independent": k["key_matched_vs_independent"]})
        kuhn.append(rec)
    return {"leduc": leduc, "kuhn": kuhn}
