"""Selector-stress continuation maps: how a shared chance uniform becomes each branch's card.

The selector chapter needs comparison groups whose continuation coupling has a
known covariance sign while every branch keeps its marginal law (DESIGN.md
section 5).  A map transforms the continuation chance uniform U of one lane
before the card is dealt (``remaining[floor(U * n)]``, n remaining cards):

semantic    identity: branches that share U deal the same card bin, so their
            continuations move together (positive covariance).  The default;
            `collect` then runs exactly as without a map.
relabelled  each branch passes U through its own uniformly random permutation
            pi_b of the n bins: bin k becomes pi_b(k), the position inside the
            bin is kept.  The permutations come from a counter-based stream
            addressed by (run, split, group, event, rollout, branch), so even a
            shared U yields independent cards across branches: near-zero
            covariance, exactly the independent law of the chance event.  The
            permutation is itself a chance-side draw: n uniforms from the
            chance namespace at an event address of its own (`relabel_event`),
            always keyed by branch.
antithetic  branches with an odd branch field use the reflected uniform:
            the 53-bit integer m behind U = m / 2**53 becomes 2**53 - 1 - m,
            which stays in [0, 1) and maps bin k to bin n - 1 - k exactly when n
            is a power of two (Leduc: n = 4).  Branches 0 and 1 of a shared U
            then deal opposite cards: negative covariance.

Every map is marginal-preserving: for a uniform U, the mapped uniform is
again uniform (a permutation of bins keeping the in-bin position, or the
reflection m -> 2**53 - 1 - m of the 53-bit lattice), so each branch's card,
and hence its return distribution, does not change.  In arms whose branches
draw their own U the maps change realisations but not the joint law.

A map needs each lane's global group and branch field, which `rollout.play`
does not know; `make_chance_map` builds the ``chance_map(u, lanes)`` callable
for one chunk of a collection from its stream addresses (lane = (g*B + b)*K + k
with chunk-local g).
"""
from __future__ import annotations

import torch

from oscc_core.engine import rng

MAPS = ("semantic", "relabelled", "antithetic")
DEFAULT_MAP = "semantic"
#: Tag of the relabelling permutations' event address, derived from the dealt event's semantic address.
RELABEL_TAG = "oscc/event-modifier/relabel-permutation"


def check_map(name) -> str:
    if name not in MAPS:
        raise ValueError(f"continuation_map must be one of {list(MAPS)}, got {name!r}.")
    return name


def reflect(u: torch.Tensor) -> torch.Tensor:
    """1 - U on the 53-bit lattice: m -> 2**53 - 1 - m, so the result stays in [0, 1)."""
    m = (u * rng.DRAW_SCALE).to(torch.int64)          # exact: u = m / 2**53
    return (rng.DRAW_SCALE - 1 - m).to(torch.float64) / rng.DRAW_SCALE


def permutations(keys: torch.Tensor, n: int) -> torch.Tensor:
    """A uniformly random permutation of range(n) per key ([L] -> [L, n]): argsort of n uniforms."""
    u = rng.uniform(keys.unsqueeze(1), torch.arange(n, device=keys.device).unsqueeze(0))
    return torch.argsort(u, dim=1, stable=True)


def relabel(u: torch.Tensor, perm: torch.Tensor) -> torch.Tensor:
    """Move U from bin k to bin perm[k] of n = perm.shape[1] equal bins, keeping its position in the bin.

    Exact in float64 when n is a power of two (scaling by n is then exact).
    """
    n = perm.shape[1]
    scaled = u * n
    k = scaled.floor().to(torch.int64).clamp(max=n - 1)
    frac = scaled - k.to(torch.float64)
    target = perm.gather(1, k.unsqueeze(1)).squeeze(1)
    out = (target.to(torch.float64) + frac) / n
    return torch.clamp(out, max=1.0 - 2.0 ** -53)


def relabel_event(event: int) -> int:
    """Semantic address of the permutation that relabels chance event `event` (a chance-side event of its own)."""
    return rng.signed(rng.mix64_reference((event & rng.MASK64) ^ rng.tag(RELABEL_TAG)))


def relabel_keys(run: int, split: int, groups: torch.Tensor, event: int, rollouts: torch.Tensor,
                 branches: torch.Tensor) -> torch.Tensor:
    """Key of each lane's relabelling permutation: the chance namespace at the permutation's own
    event address, always with the branch field (never shared), elementwise over lanes."""
    return rng.derive_key("chance", run=run, split=split, group=groups, event=relabel_event(event),
                          rollout=rollouts, branch=branches)


def make_chance_map(name: str, streams, event: int, num_remaining: int):
    """The ``chance_map(u, lanes)`` for one chunk of `collect` (None for the semantic identity).

    `streams` is the chunk's `collector.Streams`: its global group ids, branch
    fields, run, split and budget locate every lane.
    """
    check_map(name)
    if name == "semantic":
        return None
    _, b, k = streams.lane_shape()
    groups, branch_field = streams.groups, streams.branches()

    def locate(lanes: torch.Tensor):
        g_local = lanes // (b * k)
        column = (lanes // k) % b
        return groups.index_select(0, g_local), branch_field.index_select(0, column), lanes % k

    if name == "antithetic":
        def antithetic(u: torch.Tensor, lanes: torch.Tensor) -> torch.Tensor:
            _, branch, _ = locate(lanes)
            return torch.where(branch % 2 == 1, reflect(u), u)
        return antithetic

    def relabelled(u: torch.Tensor, lanes: torch.Tensor) -> torch.Tensor:
        group, branch, rollout = locate(lanes)
        keys = relabel_keys(streams.run, streams.split, group, event, rollout, branch)
        return relabel(u, permutations(keys, num_remaining))
    return relabelled


def bin_pairing(name: str, n_bins: int, branch_i: int, branch_j: int):
    """How bins of two branches that share U pair up under a map.

    Returns a permutation sigma (bin k of branch i meets bin sigma[k] of
    branch j) or None when the map makes the branches' bins independent
    (relabelled).  Used by the exact moments in `exact.arm_moments`.
    """
    check_map(name)
    if name == "relabelled":
        return None
    if name == "antithetic" and (branch_i % 2) != (branch_j % 2):
        return list(range(n_bins))[::-1]
    return list(range(n_bins))
