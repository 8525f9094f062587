"""The collector's fused CPU path: one compiled loop per comparison group.

`collect` on the CPU spends its time in many small elementwise torch ops:
each stream key is ten hash finalisers, each draw one more, and every
betting step several lookups, each a pass over the whole batch.  This
module computes exactly the same numbers -- the same keys, the same uniforms,
the same inverse-CDF rules, the same step-by-step play as `rollout.play` --
inside one numba-compiled loop over groups (two threads), so each lane's
whole hand stays in registers and finished hands stop at once.

It covers every admissible collection: any game, root, arm, budget, tabular
continuation and branch order.  The audit's traces, the violation controls
and the selector's chance maps stay on the torch path, which is also the
path on CUDA.  Tests check both paths give identical returns, codes and
counts (`tests/test_fused.py`), so which one ran never shows in a result.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import torch

from . import rng
from .games import CHANCE, TERMINAL, Game
from .ledger import CODE_OF

import numba

_U = np.uint64
_MIX_1, _MIX_2, _GAMMA = _U(rng._MIX_1), _U(rng._MIX_2), _U(rng._GAMMA)
_SHIFT, _DRAW_SHIFT = _U(33), _U(11)
_SCALE = rng._MANTISSA_SCALE
_NO_STREAM = -1                 # policy keys without the ablation's stream field


def _jit(**options):
    # No reference counting: array arguments passed around inside the parallel
    # loop would otherwise share one atomic counter between threads.
    return numba.njit(cache=True, _nrt=False, **options)


@_jit(inline="always")
def _mix(x):
    """murmur3's fmix64, as `rng.mix64`, on uint64 (wrapping)."""
    x ^= x >> _SHIFT
    x *= _MIX_1
    x ^= x >> _SHIFT
    x *= _MIX_2
    return x ^ (x >> _SHIFT)


@_jit(inline="always")
def _absorb(h, tag, value):
    """One typed field of `rng.derive_key`: mix64(mix64(h ^ tag) + value)."""
    return _mix(_mix(h ^ tag) + value)


@_jit(inline="always")
def _bits(key, counter):
    """`rng.uniform_bits`: the 53-bit integer m of the draw m / 2**53."""
    return _mix(key + _U(counter + 1) * _GAMMA) >> _DRAW_SHIFT


@_jit(inline="always")
def _draw(cum, last, row, u):
    """`rollout.draw_index` on law `row`: first index whose cumulative weight exceeds u * total.

    Takes the whole table and a row number rather than a row view: views
    made inside the parallel loop would share one reference count between
    threads and serialise them.
    """
    width = cum.shape[1]
    threshold = u * cum[row, width - 1]
    idx = 0
    for j in range(width):
        if cum[row, j] <= threshold:
            idx += 1
    return min(idx, last[row])


@_jit(inline="always")
def _play_lane(node, c0, c1, public, policy_key, chance_key, steps, num_cards, has_chance,
               player, chance_child, child, legal, info_index, cdf, last_action, utility):
    """One continuation hand, step for step as `rollout.play` (a chance deal, then a decision).

    Returns (player 0's utility, policy draws used, chance events reached,
    illegal action drawn, still unfinished after `steps`).
    """
    decisions = 0
    dealt = 0
    illegal = False
    for _ in range(steps):
        p = player[node]
        if p == TERMINAL:
            break
        if has_chance and p == CHANCE:
            u = np.float64(_bits(chance_key, 0)) * _SCALE
            k = np.int64(u * (num_cards - 2))          # index among the remaining cards, by id
            if k >= min(c0, c1):                       # skip the two dealt cards, in id order
                k += 1
            if k >= max(c0, c1):
                k += 1
            public = k
            node = chance_child[node]
            dealt += 1
            p = player[node]
        if p >= 0:
            own = c1 if p == 1 else c0
            info = info_index[node, own, public + 1]
            m = np.int64(_bits(policy_key, decisions))
            action = 0
            for a in range(cdf.shape[1]):
                if cdf[info, a] <= m:
                    action += 1
            action = min(action, last_action[info])
            if legal[node, action]:
                node = child[node, action]
            else:
                illegal = True
            decisions += 1
    finished = player[node] == TERMINAL
    value = utility[node, c0, c1, public + 1] if finished else 0
    return value, decisions, dealt, illegal, not finished


@_jit(parallel=True)
def _collect_groups(groups, branch_ids, start_nodes, budget, root_player, share_hidden, share_chance,
                    policy_stream, prefixes, tags, event, own_cum, own_last, pub_cum, pub_last, hid_cum,
                    hid_last, steps, num_cards, has_chance, player, chance_child, child, legal, info_index,
                    cdf, last_action, utility, code_early, code_illegal,
                    returns, own_out, public_out, codes, decisions_out, chance_out, policy_lanes_out):
    """Every group of a chunk: root draws, stream keys and `budget` hands per branch.

    prefixes: keys of the root, hidden, chance and policy namespaces after
    their run and split fields; tags: field tags of group, branch, rollout,
    event and stream.  Outputs are per group (see `collect_chunk`).
    """
    root_prefix, hidden_prefix, chance_prefix, policy_prefix = prefixes[0], prefixes[1], prefixes[2], prefixes[3]
    tag_group, tag_branch, tag_rollout, tag_event, tag_stream = tags[0], tags[1], tags[2], tags[3], tags[4]
    n_branches = branch_ids.shape[0]
    sign = 1 if root_player == 0 else -1
    for i in numba.prange(groups.shape[0]):
        group = _U(groups[i])
        root_key = _absorb(root_prefix, tag_group, group)
        own = _draw(own_cum, own_last, 0, np.float64(_bits(root_key, 0)) * _SCALE)
        public = _draw(pub_cum, pub_last, own, np.float64(_bits(root_key, 1)) * _SCALE) - 1
        own_out[i], public_out[i] = own, public
        hidden_group = _absorb(hidden_prefix, tag_group, group)
        hidden_row = own * (num_cards + 1) + public + 1
        shared_opp = -1
        if share_hidden:
            shared_opp = _draw(hid_cum, hid_last, hidden_row, np.float64(_bits(hidden_group, 0)) * _SCALE)
        policy_group = _absorb(policy_prefix, tag_group, group)
        chance_event = _absorb(_absorb(chance_prefix, tag_group, group), tag_event, event)
        early = illegal_any = False
        decisions_sum = chance_sum = policy_lanes = 0
        for b in range(n_branches):
            returns[i, b] = 0
        for k in range(budget):
            chance_key_k = _absorb(chance_event, tag_rollout, _U(k))
            reached_max = 0
            for b in range(n_branches):
                branch = _U(branch_ids[b])
                opp = shared_opp
                if not share_hidden:
                    key = _absorb(hidden_group, tag_branch, branch)
                    opp = _draw(hid_cum, hid_last, hidden_row, np.float64(_bits(key, 0)) * _SCALE)
                policy_key = _absorb(_absorb(policy_group, tag_branch, branch), tag_rollout, _U(k))
                if policy_stream != _NO_STREAM:
                    policy_key = _absorb(policy_key, tag_stream, _U(policy_stream))
                chance_key = chance_key_k if share_chance else _absorb(chance_key_k, tag_branch, branch)
                c0, c1 = (own, opp) if root_player == 0 else (opp, own)
                value, decisions, dealt, illegal, unfinished = _play_lane(
                    start_nodes[b], c0, c1, public, policy_key, chance_key, steps, num_cards, has_chance,
                    player, chance_child, child, legal, info_index, cdf, last_action, utility)
                returns[i, b] += sign * value
                decisions_sum += decisions
                if decisions > 0:
                    policy_lanes += 1
                early |= unfinished
                illegal_any |= illegal
                if share_chance:
                    reached_max = max(reached_max, dealt)
                else:
                    chance_sum += dealt
            chance_sum += reached_max
        codes[i] = code_illegal if illegal_any else (code_early if early else 0)
        decisions_out[i], chance_out[i], policy_lanes_out[i] = decisions_sum, chance_sum, policy_lanes


@lru_cache(maxsize=None)
def _game_arrays(game: Game) -> dict[str, np.ndarray]:
    """The public tree as contiguous numpy arrays, plus player 0's utility at every terminal deal."""
    tree, c = game.tree, game.num_cards
    node, c0, c1, pub = np.meshgrid(np.arange(tree.num_nodes), np.arange(c), np.arange(c), np.arange(-1, c),
                                    indexing="ij")
    terminal = tree.player[node] == TERMINAL
    utility = np.where(terminal, game.utility_p0(np.where(terminal, node, 0), c0, c1, pub), 0).astype(np.int64)
    # Narrow integer types keep every table in the first-level cache.
    arrays = {"player": tree.player.astype(np.int8), "chance_child": tree.chance_child.astype(np.int16),
              "child": tree.child.astype(np.int16), "legal": tree.legal,
              "info_index": np.maximum(game.infostates.index_table, 0).astype(np.int16),
              "utility": utility.astype(np.int8)}
    assert all(np.array_equal(arrays[k], v) for k, v in (("child", tree.child), ("utility", utility)))
    return {k: np.ascontiguousarray(v) for k, v in arrays.items()}


def _cumulative(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cumulative weights per law, exactly as `draw_index` forms them, and each law's last index with mass.

    Laws are the rows of the result: [laws, outcomes] and [laws].
    """
    weights = weights.reshape(-1, weights.shape[-1])
    cum = torch.as_tensor(weights, dtype=torch.float64).cumsum(dim=-1).numpy()
    last = np.where(weights > 0, np.arange(weights.shape[-1]), 0).max(axis=-1)
    return np.ascontiguousarray(cum), np.ascontiguousarray(last, dtype=np.int64)


def _prefix(namespace: str, run: int, split: int) -> np.uint64:
    return _U(rng.derive_key_reference_prefix(namespace, run=run, split=split) & rng.MASK64)


def collect_chunk(game: Game, root, streams, event: int, cdf: torch.Tensor, last_action: torch.Tensor) -> dict:
    """Per-group results of one chunk, as `collector._collect_chunk` computes them on the torch path.

    Returns returns [G, B] (acting player's chips summed over the budget),
    codes [G], own and public cards [G], and per group: policy draws used,
    chance draws consumed (once per rollout when shared) and lanes that drew
    at least one policy action.
    """
    arrays = _game_arrays(game)
    groups = streams.groups.cpu().numpy()
    g, b, budget = streams.lane_shape()
    own_cum, own_last = _cumulative(root.own_weights)
    pub_cum, pub_last = _cumulative(root.public_weights)
    hid_cum, hid_last = _cumulative(root.hidden_weights)
    prefixes = np.array([_prefix(ns, streams.run, streams.split) for ns in ("root", "hidden", "chance", "policy")],
                        dtype=np.uint64)
    tags = np.array([rng.field_tag(f) for f in ("group", "branch", "rollout", "event", "stream")], dtype=np.uint64)
    start_nodes = game.tree.child[root.node, list(root.actions)].astype(np.int64)
    out = {"returns": np.empty((g, b), np.int64), "own_card": np.empty(g, np.int64),
           "public_card": np.empty(g, np.int64), "codes": np.empty(g, np.int8),
           "decisions": np.empty(g, np.int64), "chance": np.empty(g, np.int64), "policy_lanes": np.empty(g, np.int64)}
    _collect_groups(groups, streams.branches().cpu().numpy(), start_nodes, budget, root.player,
                    streams.arm.share_hidden, streams.arm.share_chance,
                    _NO_STREAM if streams.arm.policy_stream is None else streams.arm.policy_stream,
                    prefixes, tags, _U(event & rng.MASK64), own_cum, own_last, pub_cum, pub_last, hid_cum, hid_last,
                    int(game.tree.depth.max()) + 1, game.num_cards, bool((game.tree.player == CHANCE).any()),
                    arrays["player"], arrays["chance_child"], arrays["child"], arrays["legal"],
                    arrays["info_index"], cdf.cpu().numpy(), last_action.cpu().numpy(), arrays["utility"],
                    CODE_OF["EARLY_END"], CODE_OF["ILLEGAL"],
                    out["returns"], out["own_card"], out["public_card"], out["codes"], out["decisions"],
                    out["chance"], out["policy_lanes"])
    return {k: torch.from_numpy(v) for k, v in out.items()}


_LINE = 8    # int64 per cache line: each block's partial sums start on a line of their own


@_jit(parallel=True)
def _moment_sums(returns, valid, partial):
    """Per block of groups (a row of `partial`), add over valid groups: the count, each branch's
    return, every product of two, and D, D^2, D^3, D^4 of each pairwise contrast
    D = return_i - return_j (i < j, pairs in row order), in that order along the row.

    Integer arithmetic throughout, so the sums are exact (int64, as on the torch path) and the
    block split cannot change them.
    """
    n_groups, b = returns.shape
    blocks = partial.shape[0]
    for block in numba.prange(blocks):
        for g in range(block * n_groups // blocks, (block + 1) * n_groups // blocks):
            if not valid[g]:
                continue
            partial[block, 0] += 1
            pair = 1 + b + b * b
            for i in range(b):
                ri = returns[g, i]
                partial[block, 1 + i] += ri
                for j in range(b):
                    partial[block, 1 + b + i * b + j] += ri * returns[g, j]
                for j in range(i + 1, b):
                    d = ri - returns[g, j]
                    power = d
                    for p in range(4):
                        partial[block, pair + p] += power
                        power *= d
                    pair += 4


def moment_sums(returns: torch.Tensor, valid: torch.Tensor) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """Exact integer sufficient statistics of the valid groups of [G, B] integer returns.

    Returns (n, sums [B], products [B, B], contrast power sums [pairs, 4]).
    """
    r = np.ascontiguousarray(returns.cpu().numpy(), dtype=np.int64)
    b, pairs = r.shape[1], r.shape[1] * (r.shape[1] - 1) // 2
    width = 1 + b + b * b + 4 * pairs
    partial = np.zeros((max(1, numba.get_num_threads()), (width // _LINE + 2) * _LINE), np.int64)
    _moment_sums(r, np.ascontiguousarray(valid.cpu().numpy()), partial)
    total = partial.sum(0)
    return (int(total[0]), total[1:1 + b], total[1 + b:1 + b + b * b].reshape(b, b),
            total[1 + b + b * b:width].reshape(pairs, 4))
