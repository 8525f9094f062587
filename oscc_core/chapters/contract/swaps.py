"""Branch swap and seat swap: two relabellings under which every contrast must change sign exactly.

Counts are of groups and lanes; contrasts are first minus last branch, in
chips; the variance residual and relative drift compare the contrast
variances (chips squared) before and after the swap.
"""
from __future__ import annotations

import torch

from oscc_core.chapters.contract.run_audit import audit_run, contrast_var
from oscc_core.engine.collector import collect
from oscc_core.games import get_game


def branch_swap(game, root: str, arm: str, n_groups: int, seed: int, device: str = "cpu") -> dict:
    """Reverse the branch order; every stream keeps its branch field, so D must become -D exactly."""
    a = collect(game, root, arm, n_groups, seed, device=device)
    nb = len(a.actions)
    b = collect(game, root, arm, n_groups, seed, device=device, branch_order=list(range(nb))[::-1])
    d, d_swapped = a.returns[:, 0] - a.returns[:, -1], b.returns[:, 0] - b.returns[:, -1]
    va, vb = contrast_var(a.returns), contrast_var(b.returns)     # first minus last branch
    return {"groups": n_groups, "valid": [a.stats["n"], b.stats["n"]],
            "reversed": int((d_swapped == -d).sum()), "columns_permuted": bool(torch.equal(b.returns, a.returns.flip(1))),
            "contrast_mean": [va["contrast_mean"], vb["contrast_mean"]],
            "variance_residual": abs(va["contrast_var"] - vb["contrast_var"]), "contrast_var": va["contrast_var"]}


def seat_utilities(game, node, cards, public) -> torch.Tensor:
    """Both seats' utilities [L, 2] by chip accounting: payout - contribution, independently of utility_p0."""
    t = game.tables("cpu")
    contrib = t["contributions"][node]
    pot = contrib.sum(1)
    folder = t["folder"][node]
    s0 = game.hand_strength(cards[:, 0], public)
    s1 = game.hand_strength(cards[:, 1], public)
    win0 = torch.where(folder >= 0, folder == 1, s0 > s1)
    win1 = torch.where(folder >= 0, folder == 0, s1 > s0)
    tie = (folder < 0) & (s0 == s1)
    payout = torch.stack([pot * win0 + pot // 2 * tie, pot * win1 + pot // 2 * tie], 1)
    return payout - contrib


def seat_swap(game, root: str, arm: str, n_groups: int, seed: int, device: str = "cpu") -> dict:
    """The seat-swapped duplicate of every group and its sign property.

    Definition: the duplicate of group g is the same root state (same deal,
    same streams, same trajectories) recorded from the other seat, under the
    declared convention that a group's returns are the utility of the seat
    it is recorded for.  Each trajectory's terminal state is rebuilt from the
    trace and both seats' utilities come from chip accounting (payout minus
    contribution), not from the engine's utility.  Zero-sum conservation
    (u0 + u1 = 0 on every lane) then implies R_dup = -R and D_dup = -D for
    every group; the checks count where that holds.
    """
    game = get_game(game)
    run = audit_run(game, root, arm, n_groups, seed, device=device)
    recorded, dup, conserved, terminal = [], [], 0, 0
    for pt in run.parts:
        g, b, k = pt.shape
        u = seat_utilities(game, pt.node, pt.cards, pt.public)
        conserved += int((u.sum(1) == 0).sum())
        terminal += int(pt.terminal.sum())
        recorded.append(u[:, pt.player].view(g, b, k).sum(2))
        dup.append(u[:, 1 - pt.player].view(g, b, k).sum(2))
    own, other = torch.cat(recorded), torch.cat(dup)
    r = run.collection.returns.to(torch.int64)
    d, d_dup = r[:, 0] - r[:, -1], other[:, 0] - other[:, -1]
    v, v_dup = contrast_var(r), contrast_var(other)
    return {"groups": n_groups, "lanes": int(own.numel() * run.collection.parameters["budget"]),
            "terminal_lanes": terminal, "conserved_lanes": conserved,
            "replay_matches_engine": int((own == r).all(1).sum()), "reversed": int((d_dup == -d).sum()),
            "valid": [run.valid, run.valid], "contrast_mean": [v["contrast_mean"], v_dup["contrast_mean"]],
            "variance_rel_drift": abs(v_dup["contrast_var"] - v["contrast_var"]) / v["contrast_var"]}


def swap_glue(bs: dict, ss: dict, swap_groups: int) -> dict:
    """The numbers section 4's prose quotes, as text with thousands separators."""
    return {"swap_groups": f"{swap_groups:,}", "branch_swap_reversed": f"{bs['reversed']:,}",
            "branch_swap_residual": bs["variance_residual"], "seat_conserved": f"{ss['conserved_lanes']:,}",
            "seat_lanes": f"{ss['lanes']:,}", "seat_matches": f"{ss['replay_matches_engine']:,}",
            "seat_reversed": f"{ss['reversed']:,}"}
