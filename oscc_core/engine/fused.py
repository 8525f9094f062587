"""The collector's fused CPU path: one compiled loop per comparison group.

On the torch path `collect` spends its time in many small elementwise ops:
each stream key is ten hash finalisers, each draw one more, and every
betting step several lookups, each a pass over the whole batch.  This
module computes exactly the same numbers -- the same keys, the same uniforms,
the same inverse-CDF rules, the same step-by-step play as `rollout.play` --
inside one numba-compiled loop over groups (all CPU threads), so each hand
stays in registers, finished hands stop at once, and the branches of a group
are played two at a time so their lookup chains overlap.

It covers every admissible collection: any game, root, arm, budget, tabular
continuation and branch order, and the selector's continuation maps
(`chance_maps`: relabelled and antithetic deals).  The audit's traces, the
violation controls and custom chance maps stay on the torch path.  Tests check both
paths give identical returns, codes and counts (`tests/test_fused.py`), so
which one ran never shows in a result.

The per-lane and per-group functions (`SHARED_FUNCTIONS`) are plain Python
compiled by numba; `fused_cuda` compiles the same source for the GPU, so
they must stay within what both targets compile: scalars, tuples and array
indexing, no allocation, no NumPy calls beyond scalar casts.
"""
from __future__ import annotations

from functools import lru_cache

import numba
import numpy as np
import torch

from oscc_core import kernel_cache
from oscc_core.engine import chance_maps, rng
from oscc_core.engine.failures import CODE_OF
from oscc_core.games import CHANCE, TERMINAL, Game

kernel_cache.configure()     # one cache directory per version of the kernels' source

_U = np.uint64
_MIX_1, _MIX_2, _GAMMA = _U(rng._MIX_1), _U(rng._MIX_2), _U(rng._GAMMA)
_SHIFT, _DRAW_SHIFT = _U(33), _U(11)
_SCALE = rng._MANTISSA_SCALE
_NO_STREAM = -1                 # policy keys without the ablation's stream field
#: The kernels' codes of the continuation maps (`chance_maps.MAPS`).
MAP_CODES = {name: code for code, name in enumerate(chance_maps.MAPS)}
_SEMANTIC, _RELABELLED, _ANTITHETIC = (MAP_CODES[name] for name in ("semantic", "relabelled", "antithetic"))
_LAST_BITS = _U(rng.DRAW_SCALE - 1)         # the largest 53-bit draw: m -> this - m reflects U
_BELOW_ONE = 1.0 - 2.0 ** -53               # the largest draw, m / 2**53 for m = 2**53 - 1


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
def _card_of_draw(u, c0, c1, num_cards):
    """The public card a draw u in [0, 1) deals (`rollout._deal_public`): remaining cards by id [floor(u * n)]."""
    k = np.int64(u * (num_cards - 2))          # index among the remaining cards
    if k >= min(c0, c1):                       # skip the two dealt cards, in id order
        k += 1
    if k >= max(c0, c1):
        k += 1
    return k


@_jit(inline="always")
def _public_card(chance_key, c0, c1, num_cards):
    """The card a public-card deal gives: `_card_of_draw` of the chance key's first draw."""
    return _card_of_draw(np.float64(_bits(chance_key, 0)) * _SCALE, c0, c1, num_cards)


@_jit(inline="always")
def _ranked(key, rank, n):
    """`chance_maps.permutations(key, n)[rank]`: the index whose uniform, of n drawn from `key` at counters 0..n-1,
    is the `rank`-th smallest (ties to the lower index, as a stable argsort); n is a handful of cards."""
    for j in range(n):
        m_j = _bits(key, j)
        below = 0
        for i in range(n):
            m_i = _bits(key, i)
            if m_i < m_j or (m_i == m_j and i < j):
                below += 1
        if below == rank:
            return j
    return n - 1


@_jit(inline="always")
def _mapped_card(chance_key, c0, c1, num_cards, map_code, branch, relabel_key):
    """`_public_card` after a continuation map (`chance_maps.make_chance_map`), in its float64 operations:
    antithetic reflects the 53-bit draw on odd branch fields; relabelled moves U's bin k to bin perm[k] of the
    lane's own permutation (`relabel_key`: its key, the chance namespace at the relabelling event).

    u * n is exact when n, the cards left to deal, is a power of two (Leduc: 4), as `chance_maps.relabel`
    assumes; that also keeps the GPU's bits, where the compiler may fuse u * n - k into one rounding."""
    m = _bits(chance_key, 0)
    if map_code == _ANTITHETIC and branch % 2 == 1:
        m = _LAST_BITS - m
    u = np.float64(m) * _SCALE
    n = num_cards - 2
    if map_code == _RELABELLED:
        scaled = u * n
        k = min(np.int64(scaled), n - 1)        # scaled >= 0: truncation is the floor
        frac = scaled - np.float64(k)
        target = _ranked(relabel_key, k, n)
        u = min((np.float64(target) + frac) / n, _BELOW_ONE)
    return _card_of_draw(u, c0, c1, num_cards)


@_jit(inline="always")
def _step(node, c0, c1, public, policy_key, card_if_dealt, decisions, dealt, illegal,
          player, chance_child, child, legal, info_index, cdf, last_action):
    """One step of a live hand, as one iteration of `rollout.play`: a chance deal, then a decision.

    Returns the hand's new (node, public card, policy draws used, chance
    events reached, illegal action drawn) and the step's decision
    (information state, action; -1, -1 when the step took none).
    """
    p = player[node]
    if p == CHANCE:
        public = card_if_dealt
        node = chance_child[node]
        dealt += 1
        p = player[node]
    info, action = -1, -1
    if p >= 0:
        own = c1 if p == 1 else c0
        info = np.int64(info_index[node, own, public + 1])
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
    return node, public, decisions, dealt, illegal, info, action


@_jit(inline="always")
def _play_pair(node_a, c0_a, c1_a, key_a, card_a, node_b, c0_b, c1_b, key_b, card_b, public, steps,
               player, chance_child, child, legal, info_index, cdf, last_action, utility):
    """Two continuation hands played side by side (b may repeat a to play one hand).

    Interleaving two independent hands lets the processor overlap their
    chains of table lookups.  `card_*` is the public card each hand's chance
    stream gives, worked out before play so its hash is off the critical
    path (it counts as a draw only if the hand reaches the deal).  Returns,
    for hand a then hand b: player 0's utility, policy draws used, chance
    events reached, illegal action drawn, still unfinished after `steps`.
    """
    pub_a, pub_b, used_a, used_b, dealt_a, dealt_b = public, public, 0, 0, 0, 0
    illegal_a = illegal_b = False
    for _ in range(steps):
        live_a, live_b = player[node_a] != TERMINAL, player[node_b] != TERMINAL
        if not (live_a or live_b):
            break
        if live_a:
            node_a, pub_a, used_a, dealt_a, illegal_a, _, _ = _step(
                node_a, c0_a, c1_a, pub_a, key_a, card_a, used_a, dealt_a, illegal_a,
                player, chance_child, child, legal, info_index, cdf, last_action)
        if live_b:
            node_b, pub_b, used_b, dealt_b, illegal_b, _, _ = _step(
                node_b, c0_b, c1_b, pub_b, key_b, card_b, used_b, dealt_b, illegal_b,
                player, chance_child, child, legal, info_index, cdf, last_action)
    done_a, done_b = player[node_a] == TERMINAL, player[node_b] == TERMINAL
    value_a = utility[node_a, c0_a, c1_a, pub_a + 1] if done_a else 0
    value_b = utility[node_b, c0_b, c1_b, pub_b + 1] if done_b else 0
    return (value_a, used_a, dealt_a, illegal_a, not done_a, value_b, used_b, dealt_b, illegal_b, not done_b)


@_jit(inline="always")
def _lane_inputs(b, k, branch_ids, own, root_player, share_hidden, share_chance, has_chance, shared_opp,
                 shared_card, hidden_group, hidden_row, hid_cum, hid_last, policy_group, chance_key_k,
                 policy_stream, tag_branch, tag_rollout, tag_stream, num_cards, map_code, relabel_key_k):
    """Private cards, policy key and dealt public card of branch b's k-th hand (keys as `collector.Streams`;
    the card after the continuation map `map_code`, whose relabelling key before the branch is `relabel_key_k`)."""
    branch = _U(branch_ids[b])
    opp = shared_opp
    if not share_hidden:
        opp = _draw(hid_cum, hid_last, hidden_row, np.float64(_bits(_absorb(hidden_group, tag_branch, branch), 0))
                    * _SCALE)
    policy_key = _absorb(_absorb(policy_group, tag_branch, branch), tag_rollout, _U(k))
    if policy_stream != _NO_STREAM:
        policy_key = _absorb(policy_key, tag_stream, _U(policy_stream))
    c0, c1 = (own, opp) if root_player == 0 else (opp, own)
    card = -1
    if has_chance:
        if map_code != _SEMANTIC:
            key = chance_key_k if share_chance else _absorb(chance_key_k, tag_branch, branch)
            lane_relabel = _absorb(relabel_key_k, tag_branch, branch) if map_code == _RELABELLED else relabel_key_k
            card = _mapped_card(key, c0, c1, num_cards, map_code, branch, lane_relabel)
        elif not share_chance:
            card = _public_card(_absorb(chance_key_k, tag_branch, branch), c0, c1, num_cards)
        elif share_hidden:      # same key and same private cards: one card for every branch
            card = shared_card
        else:
            card = _public_card(chance_key_k, c0, c1, num_cards)
    return c0, c1, policy_key, card


@_jit(inline="always")
def _tally(value, decisions, dealt, illegal, unfinished, returns, i, b, sign, share_chance, totals):
    """Add one hand to its group: the acting player's return, and the group's draw counts and flags.

    totals: (policy draws, hands with a policy draw, any unfinished, any
    illegal, most chance events reached by one branch in this rollout,
    chance draws); shared chance counts once per rollout, by the max.
    """
    decisions_sum, policy_lanes, early, illegal_any, reached_max, chance_sum = totals
    returns[i, b] += sign * value
    if share_chance:
        reached_max = max(reached_max, dealt)
    else:
        chance_sum += dealt
    return (decisions_sum + decisions, policy_lanes + (1 if decisions > 0 else 0), early or unfinished,
            illegal_any or illegal, reached_max, chance_sum)


@_jit(forceinline=True)
def _collect_group(i, groups, branch_ids, start_nodes, budget, root_player, share_hidden, share_chance,
                   policy_stream, prefixes, tags, event, chance_map, laws, steps, num_cards, has_chance, tables,
                   code_early, code_illegal, outputs):
    """Group i of a chunk: its root draws, stream keys and `budget` hands per branch, reduced into row i.

    The one per-group body of both kernels: `_collect_groups` runs it for
    every group on the CPU's threads and `fused_cuda` compiles this same
    source for one GPU thread per group.  prefixes: keys of the root,
    hidden, chance and policy namespaces after their run and split fields;
    tags: field tags of group, branch, rollout, event and stream;
    chance_map: the continuation map's code (`MAP_CODES`) and the relabelling
    event's address (`chance_maps.relabel_event`); laws, tables and outputs:
    tuples of arrays, as `_collect_groups` packs them
    (fewer than 30 arguments keep the call a plain one).  LLVM inlines it
    into the parallel loop: numba's own inlining loses the loop's sums here.
    Outputs are per group (see `collect_chunk`).
    """
    own_cum, own_last, pub_cum, pub_last, hid_cum, hid_last = laws
    player, chance_child, child, legal, info_index, cdf, last_action, utility = tables
    returns, own_out, public_out, codes, decisions_out, chance_out, policy_lanes_out, relabel_out = outputs
    root_prefix, hidden_prefix, chance_prefix, policy_prefix = prefixes[0], prefixes[1], prefixes[2], prefixes[3]
    tag_group, tag_branch, tag_rollout, tag_event, tag_stream = tags[0], tags[1], tags[2], tags[3], tags[4]
    n_branches = branch_ids.shape[0]
    sign = 1 if root_player == 0 else -1
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
    chance_group = _absorb(chance_prefix, tag_group, group)
    chance_event = _absorb(chance_group, tag_event, event)
    map_code = chance_map[0]
    relabel_event = _absorb(chance_group, tag_event, chance_map[1]) if map_code == _RELABELLED else chance_group
    early = illegal_any = False
    decisions_sum = chance_sum = policy_lanes = relabel_draws = 0
    per_deal = num_cards - 2 if map_code == _RELABELLED else 0    # each deal's relabelling permutation draws
    for b in range(n_branches):
        returns[i, b] = 0
    for k in range(budget):
        chance_key_k = _absorb(chance_event, tag_rollout, _U(k))
        relabel_key_k = _absorb(relabel_event, tag_rollout, _U(k)) if map_code == _RELABELLED else relabel_event
        shared_card = -1
        if has_chance and share_chance and share_hidden and map_code == _SEMANTIC:
            c0, c1 = (own, shared_opp) if root_player == 0 else (shared_opp, own)
            shared_card = _public_card(chance_key_k, c0, c1, num_cards)
        reached_max = 0
        for first in range(0, n_branches, 2):       # branches in pairs; an odd last one pairs with itself
            second = min(first + 1, n_branches - 1)
            c0_a, c1_a, key_a, card_a = _lane_inputs(
                first, k, branch_ids, own, root_player, share_hidden, share_chance, has_chance, shared_opp,
                shared_card, hidden_group, hidden_row, hid_cum, hid_last, policy_group, chance_key_k,
                policy_stream, tag_branch, tag_rollout, tag_stream, num_cards, map_code, relabel_key_k)
            c0_b, c1_b, key_b, card_b = _lane_inputs(
                second, k, branch_ids, own, root_player, share_hidden, share_chance, has_chance, shared_opp,
                shared_card, hidden_group, hidden_row, hid_cum, hid_last, policy_group, chance_key_k,
                policy_stream, tag_branch, tag_rollout, tag_stream, num_cards, map_code, relabel_key_k)
            v_a, d_a, h_a, il_a, u_a, v_b, d_b, h_b, il_b, u_b = _play_pair(
                start_nodes[first], c0_a, c1_a, key_a, card_a, start_nodes[second], c0_b, c1_b, key_b, card_b,
                public, steps, player, chance_child, child, legal, info_index, cdf, last_action, utility)
            totals = (decisions_sum, policy_lanes, early, illegal_any, reached_max, chance_sum)
            totals = _tally(v_a, d_a, h_a, il_a, u_a, returns, i, first, sign, share_chance, totals)
            if second != first:
                totals = _tally(v_b, d_b, h_b, il_b, u_b, returns, i, second, sign, share_chance, totals)
            decisions_sum, policy_lanes, early, illegal_any, reached_max, chance_sum = totals
            relabel_draws += per_deal * (h_a + (h_b if second != first else 0))
        chance_sum += reached_max
    codes[i] = code_illegal if illegal_any else (code_early if early else 0)
    decisions_out[i] = decisions_sum
    chance_out[i] = chance_sum
    policy_lanes_out[i] = policy_lanes
    relabel_out[i] = relabel_draws


#: The per-lane and per-group functions, callees first.  Each is plain Python
#: compiled here by numba for the CPU; `fused_cuda` compiles the same source
#: (`.py_func`) as CUDA device functions, so the two kernels cannot drift.
SHARED_FUNCTIONS = ("_mix", "_absorb", "_bits", "_draw", "_card_of_draw", "_public_card", "_ranked",
                    "_mapped_card", "_step", "_play_pair", "_lane_inputs", "_tally", "_collect_group")


@_jit(parallel=True)
def _collect_groups(groups, branch_ids, start_nodes, budget, root_player, share_hidden, share_chance,
                    policy_stream, prefixes, tags, event, map_code, relabel_event, own_cum, own_last, pub_cum,
                    pub_last, hid_cum, hid_last, steps, num_cards, has_chance, player, chance_child, child, legal,
                    info_index, cdf, last_action, utility, code_early, code_illegal,
                    returns, own_out, public_out, codes, decisions_out, chance_out, policy_lanes_out, relabel_out):
    """Every group of a chunk, one `_collect_group` per group on all CPU threads."""
    for i in numba.prange(groups.shape[0]):
        _collect_group(i, groups, branch_ids, start_nodes, budget, root_player, share_hidden, share_chance,
                       policy_stream, prefixes, tags, event, (map_code, relabel_event),
                       (own_cum, own_last, pub_cum, pub_last, hid_cum, hid_last),
                       steps, num_cards, has_chance,
                       (player, chance_child, child, legal, info_index, cdf, last_action, utility),
                       code_early, code_illegal,
                       (returns, own_out, public_out, codes, decisions_out, chance_out, policy_lanes_out,
                        relabel_out))


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


#: The kernels' per-group outputs: name, dtype and whether it has a column per branch.
OUTPUTS = (("returns", np.int64, True), ("own_card", np.int64, False), ("public_card", np.int64, False),
           ("codes", np.int8, False), ("decisions", np.int64, False), ("chance", np.int64, False),
           ("policy_lanes", np.int64, False), ("relabel_draws", np.int64, False))


def kernel_inputs(game: Game, root, streams, event: int, cdf: torch.Tensor, last_action: torch.Tensor,
                  groups, continuation_map: str = chance_maps.DEFAULT_MAP) -> tuple:
    """The input arguments of `_collect_groups` before its outputs, in its order: `groups` (the chunk's group
    ids, as the kernel will read them) first, then NumPy tables and scalars."""
    arrays = _game_arrays(game)
    own_cum, own_last = _cumulative(root.own_weights)
    pub_cum, pub_last = _cumulative(root.public_weights)
    hid_cum, hid_last = _cumulative(root.hidden_weights)
    prefixes = np.array([_prefix(ns, streams.run, streams.split) for ns in ("root", "hidden", "chance", "policy")],
                        dtype=np.uint64)
    tags = np.array([rng.field_tag(f) for f in ("group", "branch", "rollout", "event", "stream")], dtype=np.uint64)
    start_nodes = game.tree.child[root.node, list(root.actions)].astype(np.int64)
    return (groups, streams.branches().cpu().numpy(), start_nodes, streams.budget, root.player,
            streams.arm.share_hidden, streams.arm.share_chance,
            _NO_STREAM if streams.arm.policy_stream is None else streams.arm.policy_stream,
            prefixes, tags, _U(event & rng.MASK64), MAP_CODES[chance_maps.check_map(continuation_map)],
            _U(chance_maps.relabel_event(event) & rng.MASK64), own_cum, own_last, pub_cum, pub_last, hid_cum, hid_last,
            int(game.tree.depth.max()) + 1, game.num_cards, bool((game.tree.player == CHANCE).any()),
            arrays["player"], arrays["chance_child"], arrays["child"], arrays["legal"],
            arrays["info_index"], np.ascontiguousarray(cdf.cpu().numpy()),
            np.ascontiguousarray(last_action.cpu().numpy()), arrays["utility"],
            CODE_OF["EARLY_END"], CODE_OF["ILLEGAL"])


def collect_chunk(game: Game, root, streams, event: int, cdf: torch.Tensor, last_action: torch.Tensor,
                  continuation_map: str = chance_maps.DEFAULT_MAP) -> dict:
    """Per-group results of one chunk, as `collector._collect_chunk` computes them on the torch path
    (with `chance_maps.make_chance_map(continuation_map, ...)` as its chance map).

    Returns returns [G, B] (acting player's chips summed over the budget),
    codes [G], own and public cards [G], and per group: policy draws used,
    chance draws consumed (once per rollout when shared), lanes that drew
    at least one policy action and the relabelling permutations' draws
    (`num_cards - 2` per deal under the relabelled map, else 0).
    """
    g, b, _ = streams.lane_shape()
    out = {name: np.empty((g, b) if per_branch else g, dtype) for name, dtype, per_branch in OUTPUTS}
    _collect_groups(*kernel_inputs(game, root, streams, event, cdf, last_action, streams.groups.cpu().numpy(),
                                   continuation_map), *out.values())
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
