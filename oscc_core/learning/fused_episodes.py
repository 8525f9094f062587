"""PPO's iteration as per-item functions of the fused engines: one hand, then one run's advantages and terms.

The torch path (`Learners._episodes`, `learning.episodes`) plays N whole
self-play hands per run, reads their transitions from the rollout's trace,
computes GAE advantages with the value table as it stood, moves the value
table toward the mean lambda-returns, z-scores the advantages over the run's
transitions and writes one surrogate term per transition.  These functions
redo that arithmetic in the same order:

- `_episode_hand` (one item per (run, hand)): the deal (player 0's card from
  the `root` stream, player 1's from the `hidden` stream, uniform over the
  cards left, as `rollout.draw_index` draws them), the public card of the
  hand's chance key, the hand played with `engine.fused._step`, its
  decisions recorded in order, and GAE backwards over them;
- `_episode_run` (one item per run): the run's transitions in (hand,
  decision) order (the order `ordered_index_add` adds them in): visit counts,
  value-target sums, the z-score, and the terms;
- `_update_values`: V(I) += value_rate * (mean target - V(I)) where a row
  has targets, + 0.0 elsewhere, over every row of the batch, as the torch
  path's one `+=` over the whole table.

Like `fused_kernels`, they keep to what numba compiles for the CPU and, from
the same source, for CUDA.
"""
from __future__ import annotations

import math

import numpy as np

from oscc_core.engine.fused import _SCALE, _U, _absorb, _bits, _jit, _public_card, _step
from oscc_core.fixed_math import product
from oscc_core.games import TERMINAL
from oscc_core.learning.ledger import FIELDS

PHYSICAL, TRANSITIONS, DECISIONS, ILLEGAL, UNUSED = (
    FIELDS.index(f) for f in ("physical_calls", "transitions", "decisions", "illegal", "unused_hands"))
_Z_EPS = 1e-8                    # episodes.Z_SCORE_EPSILON


@_jit(inline="always")
def _uniform_card(u, exclude, num_cards):
    """`draw_index` over equal weights on the cards (but `exclude`, when >= 0): the cumulative weights are whole
    numbers, so the comparison with u * total is exact."""
    total = np.float64(num_cards - (1 if exclude >= 0 else 0))
    threshold = u * total
    cum, idx, last = 0.0, 0, 0
    for j in range(num_cards):
        if j != exclude:
            cum += 1.0
            last = j
        if cum <= threshold:
            idx += 1
    return min(idx, last)


@_jit(inline="always")
def _episode_hand(r, n, keys, tree, table, table_last, values, row0, info_player, lam, hand, slot, counts, col):
    """Run r's hand n: dealt, played to the end with pi_t (`table`: the run's thresholds), its decisions in
    hand[0][slot] (information states, -1 past the end) and hand[1][slot] (actions), its GAE advantages in
    hand[2][slot]; its ledger counts go to column `col`.

    keys: (root, hidden, chance and policy key states after (run, split) [R],
    field tags, continuation event, group base [R]).  values: the value table
    [R * n_info] before this iteration's update; row0: the run's first row.
    """
    root_p, hidden_p, chance_p, policy_p, tags, event, base = keys
    steps, num_cards, has_chance, player, chance_child, child, legal, info_index, utility = tree
    ep_info, ep_action, ep_adv = hand
    tag_group, tag_branch, tag_rollout, tag_event = tags[0], tags[1], tags[2], tags[3]
    group = _U(base[r] + n)
    c0 = _uniform_card(np.float64(_bits(_absorb(root_p[r], tag_group, group), 0)) * _SCALE, -1, num_cards)
    c1 = _uniform_card(np.float64(_bits(_absorb(hidden_p[r], tag_group, group), 0)) * _SCALE, c0, num_cards)
    chance_key = _absorb(_absorb(_absorb(chance_p[r], tag_group, group), tag_event, event), tag_rollout, _U(0))
    card = _public_card(chance_key, c0, c1, num_cards) if has_chance else -1
    key = _absorb(_absorb(_absorb(policy_p[r], tag_group, group), tag_branch, _U(0)), tag_rollout, _U(0))
    for d in range(ep_info.shape[1]):
        ep_info[slot, d], ep_action[slot, d], ep_adv[slot, d] = -1, 0, 0.0
    node, public, decisions, dealt, illegal = 0, -1, 0, 0, False
    for _ in range(steps):
        if player[node] == TERMINAL:
            break
        at = decisions
        node, public, decisions, dealt, illegal, info, action = _step(
            node, c0, c1, public, key, card, decisions, dealt, illegal, player, chance_child, child, legal,
            info_index, table, table_last)
        if info >= 0:
            ep_info[slot, at], ep_action[slot, at] = info, action
    u0 = np.int64(utility[node, c0, c1, public + 1]) if player[node] == TERMINAL else np.int64(0)
    # per seat: the next value and the running advantage; the utility is negated as an integer, as the torch
    # path negates it (a tie gives +0.0 for both seats, never -0.0)
    next0, next1, run0, run1 = np.float64(u0), np.float64(-u0), 0.0, 0.0
    for d in range(decisions - 1, -1, -1):             # `episodes.gae`, backwards
        v = values[row0 + ep_info[slot, d]]
        if info_player[ep_info[slot, d]] == 0:
            run0 = (next0 - v) + product(lam, run0)
            next0, ep_adv[slot, d] = v, run0
        else:
            run1 = (next1 - v) + product(lam, run1)
            next1, ep_adv[slot, d] = v, run1
    counts[PHYSICAL, col] += 1
    counts[TRANSITIONS, col] += decisions
    counts[DECISIONS, col] += decisions
    counts[ILLEGAL, col] += 1 if illegal else 0


@_jit(inline="always")
def _episode_run(kept, hand, slot0, values, row0, behaviour, value_sums, draws, terms, start):
    """One run's `kept` hands (in hand[*][slot0:slot0 + kept]): visit counts into `draws`, value-target sums
    (A + V, and their count) into value_sums[0] and [1], then z-scored advantages and one term per transition,
    written from terms[*][start]; returns the terms written."""
    ep_info, ep_action, ep_adv = hand
    sums, seen = value_sums
    count, total = 0.0, 0.0
    for h in range(slot0, slot0 + kept):
        for d in range(ep_info.shape[1]):
            if ep_info[h, d] < 0:
                break
            row = row0 + ep_info[h, d]
            count += 1.0
            total += ep_adv[h, d]
            sums[row] += ep_adv[h, d] + values[row]
            seen[row] += 1.0
            draws[row] += 1.0
    mean = total / max(count, 1.0)
    squares = 0.0
    for h in range(slot0, slot0 + kept):
        for d in range(ep_info.shape[1]):
            if ep_info[h, d] < 0:
                break
            squares += product(ep_adv[h, d] - mean, ep_adv[h, d] - mean)
    scale = math.sqrt(squares / max(count, 1.0)) + _Z_EPS
    t_row, t_action, t_weight, t_adv, t_pi0 = terms
    k = start
    for h in range(slot0, slot0 + kept):
        for d in range(ep_info.shape[1]):
            if ep_info[h, d] < 0:
                break
            row, action = row0 + ep_info[h, d], ep_action[h, d]
            t_row[k], t_action[k], t_pi0[k] = row, action, behaviour[row, action]
            t_adv[k] = (ep_adv[h, d] - mean) / scale
            t_weight[k] = 1.0 / count * 1.0            # torch's `1.0 / x` is reciprocal(x) * 1.0
            k += 1
    return k - start


@_jit(inline="always")
def _update_values(values, value_sums, value_rate, row):
    """Value-table row `row` moved value_rate of the way to its mean target (+ 0.0 without targets, as the torch
    path's `+=` of a `where`); its sums cleared for the next iteration."""
    sums, seen = value_sums
    step = product(value_rate, sums[row] / seen[row] - values[row]) if seen[row] > 0 else 0.0
    values[row] = values[row] + step
    sums[row], seen[row] = 0.0, 0.0


#: The per-item functions, callees first (compiled for the CPU here; `fused_kernels.SHARED_FUNCTIONS` style).
SHARED_FUNCTIONS = ("_uniform_card", "_episode_hand", "_episode_run", "_update_values")
