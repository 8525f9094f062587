"""Compiled kernels of the learners' fused CPU path (see `learning.fused`).

Each kernel redoes, for one batch of runs, exactly the arithmetic of the
torch path (`loop`, `visitation`, `samples`, `rollout.play`, `objectives`):
the same keys and uniforms (`engine.fused` primitives), the same
inverse-CDF rules, and every sum in the torch path's order (histories in
order as `np.add.at`, columns one after the other as `sum_last`, cumulative
sums left to right, gradient terms in term order as `index_add_`).  Every
`exp` is `fixed_math`'s, taken between the kernels (softmaxes are split
around it), so a float never depends on which engine ran.
"""
from __future__ import annotations

import math

import numpy as np

from oscc_core.engine.fused import _SCALE, _U, _absorb, _bits, _draw, _jit, _play_pair, _public_card
from oscc_core.learning.ledger import FIELDS

ENUMERATE_KIND, SAMPLE_KIND, OTHER_KIND = 0, 1, 2
ON_POLICY_LAW, COUNTERFACTUAL_LAW, UNIFORM_LAW = 0, 1, 2      # `proximal.DECISION_LAWS`, in its order
PHYSICAL, TRANSITIONS, DECISIONS, ROOT_DRAWS, GROUPS, ILLEGAL, TERMS, CLIPPED, ITERATIONS = (
    FIELDS.index(f) for f in ("physical_calls", "transitions", "decisions", "root_draws", "groups", "illegal", "terms",
                              "clipped_terms", "iterations"))
_DRAW_SCALE = float(2 ** 53)
_GRPO_EPS = 1e-8                # objectives.GRPO_STD_EPSILON
_NEGATIVE_ZERO = np.int64(-2 ** 63)   # the bits of -0.0


@_jit()
def shift_rows(flat, legal, n_info, rows, count, out):
    """out[k] = where(legal, logits - max legal logit, -inf) of table row rows[k] (masked_softmax's exp input)."""
    for k in range(count):
        row = rows[k]
        info = row % n_info
        top = -np.inf
        for a in range(flat.shape[1]):
            if legal[info, a] and flat[row, a] > top:
                top = flat[row, a]
        for a in range(flat.shape[1]):
            out[k, a] = flat[row, a] - top if legal[info, a] else -np.inf


@_jit(inline="always")
def _softmax_rows(expd, legal, n_info, rows, count, probs):
    """probs[rows[k]] = z / (z_0 + z_1 + ...), z = where(legal, exp, 0) (masked_softmax after its exp)."""
    for k in range(count):
        row = rows[k]
        info = row % n_info
        total = expd[k, 0] if legal[info, 0] else 0.0
        for a in range(1, expd.shape[1]):
            total = total + (expd[k, a] if legal[info, a] else 0.0)
        for a in range(expd.shape[1]):
            probs[row, a] = (expd[k, a] if legal[info, a] else 0.0) / total


@_jit()
def changed_rows(flat_bits, prev_bits, known, rows):
    """Table rows whose logits differ bit for bit from `prev` (all rows unless `known`), copied into `prev`.

    Only these rows' pi_t can differ from the last step's, so only they go
    through exp again.  Also says whether any logit is -0.0 (an untouched
    row's `logit + rate * 0` would turn it into +0.0).
    """
    count, negative_zero = 0, False
    for row in range(flat_bits.shape[0]):
        same = known
        for a in range(flat_bits.shape[1]):
            same = same and flat_bits[row, a] == prev_bits[row, a]
            negative_zero = negative_zero or flat_bits[row, a] == _NEGATIVE_ZERO
        if not same:
            rows[count] = row
            count += 1
            for a in range(flat_bits.shape[1]):
                prev_bits[row, a] = flat_bits[row, a]
    return count, negative_zero


@_jit()
def law_and_points(active, expd, rows, count, legal, n_info, behaviour, cdf, last, cumulative, plan, x,
                   parent_seq, h_info, h_card, h_own, h_opp, chance, weights, per_state, root_prefix, tag_group,
                   base, points, law):
    """Per active run: pi_t (`behaviour`, its rows `rows[:count]` renewed from their exp `expd`), its draw
    thresholds (`stacked_cdf`), the decision law (`decision_law`: weights [R * n_info, C]; `law` one of the
    `*_LAW` codes), the average-policy sums, and the N decision points.

    plan [P, 4]: (sequence, parent sequence, information state, action) in
    `realisation_plans`' level order.
    """
    n_runs, n_actions = active.shape[0], behaviour.shape[1]
    c = weights.shape[1]
    _softmax_rows(expd, legal, n_info, rows, count, behaviour)
    for k in range(count):
        row = rows[k]
        cum = behaviour[row, 0]
        top = 0 if behaviour[row, 0] > 0 else -1
        cdf[row, 0] = np.int64(math.ceil(cum * _DRAW_SCALE))
        for a in range(1, n_actions):
            cum = cum + behaviour[row, a]
            cdf[row, a] = np.int64(math.ceil(cum * _DRAW_SCALE))
            if behaviour[row, a] > 0:
                top = a
        last[row] = top
    for r in range(n_runs):
        if not active[r]:
            continue
        first = r * n_info
        x[:] = 0.0
        x[0] = 1.0                                          # the two empty sequences
        x[1] = 1.0
        for k in range(plan.shape[0]):
            x[plan[k, 0]] = x[plan[k, 1]] * behaviour[first + plan[k, 2], plan[k, 3]]
        weights[first:first + n_info] = 0.0
        for h in range(h_info.shape[0]):                    # history order, as np.add.at
            row = first + h_info[h]
            if law == ON_POLICY_LAW:
                weights[row, h_card[h]] += chance * x[h_own[h]] * x[h_opp[h]]
            else:
                weights[row, h_card[h]] += chance * x[h_opp[h]]
        for i in range(n_info):
            own = x[parent_seq[i]]
            for a in range(n_actions):
                cumulative[r, i, a] += own * behaviour[first + i, a]
        for i in range(n_info):                             # sum_last_axis, then a left-to-right cumsum
            total = weights[first + i, 0]
            for j in range(1, c):
                total += weights[first + i, j]
            if law == UNIFORM_LAW:
                total = 1.0
            per_state[i] = total if i == 0 else per_state[i - 1] + total
        for n in range(points.shape[1]):
            key = _absorb(root_prefix[r], tag_group, _U(base[r] + n))
            threshold = np.float64(_bits(key, 0)) * _SCALE * per_state[n_info - 1]
            lo, hi = 0, n_info                              # searchsorted(right=True)
            while lo < hi:
                mid = (lo + hi) // 2
                if per_state[mid] <= threshold:
                    lo = mid + 1
                else:
                    hi = mid
            points[r, n] = min(lo, n_info - 1)


@_jit(inline="always")
def _hidden(weights, hid_cum, hid_last, row, key):
    """`draw_hidden`: the opponent card from the posterior weights of table row `row` (cumsum from 0)."""
    cum, top = 0.0, 0
    for j in range(weights.shape[1]):
        cum = cum + weights[row, j]
        hid_cum[row, j] = cum
        if weights[row, j] > 0:
            top = j
    hid_last[row] = top
    return _draw(hid_cum, hid_last, row, np.float64(_bits(key, 0)) * _SCALE)


@_jit(inline="always")
def _group_advantages(returns, mask, size, normalise, adv):
    """`objectives.centred` / `group_normalised` over one group's slots (mask: 1 on lanes), sums in slot order."""
    count = 1.0 if mask[0] != 0 else 0.0
    total = returns[0] * count
    for s in range(1, size):
        m = 1.0 if mask[s] != 0 else 0.0
        count = count + m
        total = total + returns[s] * m
    mean = total / max(count, 1.0)
    for s in range(size):
        adv[s] = returns[s] - mean if mask[s] != 0 else 0.0
    if normalise:
        squares = adv[0] * adv[0]
        for s in range(1, size):
            squares = squares + adv[s] * adv[s]
        sd = math.sqrt(squares / max(count - 1.0, 1.0))
        for s in range(size):
            adv[s] = adv[s] / (sd + _GRPO_EPS) if sd > 0 else 0.0


@_jit()
def collect(kind, active, share_hidden, share_chance, updates, group_size, budget, n_info, points, base,
            prefixes, tags, event, weights, hid_cum, hid_last, behaviour, cdf, last,
            info_node, info_player, info_card, info_public, steps, num_cards, has_chance, player, chance_child,
            child, legal, info_index, utility, counts, spent, scratch_i, scratch_u, scratch_f,
            t_row, t_action, t_weight, t_adv, t_pi0, touched, rows_u):
    """Lanes, play, returns and surrogate terms of every active enumerate/sample run (`Learners._collect`).

    Runs are taken kind by kind (enumerate, then sample), each in row order,
    and a run's terms in (group, slot) order, as `Terms.cat` orders them.
    prefixes [R, 3]: hidden, chance, policy keys after (run, split); tags:
    group, branch, rollout, event, stream; `legal` [node, A] is the tree's.
    Returns (terms, touched rows).
    """
    tag_group, tag_branch, tag_rollout, tag_event, tag_stream = tags[0], tags[1], tags[2], tags[3], tags[4]
    n_points = points.shape[1]
    n_terms, n_rows = 0, 0
    lane_node, lane_c0, lane_c1, lane_card, lane_action, slots = (
        scratch_i[0], scratch_i[1], scratch_i[2], scratch_i[3], scratch_i[4], scratch_i[5])
    lane_key = scratch_u[0]
    returns, adv = scratch_f[0], scratch_f[1]
    for wanted in (ENUMERATE_KIND, SAMPLE_KIND):
        for r in range(kind.shape[0]):
            if kind[r] != wanted or not active[r]:
                continue
            sample = wanted == SAMPLE_KIND
            width = group_size if sample else legal.shape[1]
            left = budget - counts[PHYSICAL, r]
            kept, used = 0, 0
            for n in range(n_points):                        # the longest prefix within the budget
                used += group_size if sample else _num_legal(legal, info_node[points[r, n]])
                if budget >= 0 and used > left:
                    spent[r] = True
                    break
                kept += 1
            counts[ROOT_DRAWS, r] += kept
            counts[GROUPS, r] += kept
            per_run = np.float64(max(kept, 1))
            hidden_p, chance_p, policy_p = prefixes[r, 0], prefixes[r, 1], prefixes[r, 2]
            for n in range(kept):
                info = points[r, n]
                row = r * n_info + info
                node, actor, own, public = info_node[info], info_player[info], info_card[info], info_public[info]
                group = _U(base[r] + n)
                hidden_group = _absorb(hidden_p, tag_group, group)
                policy_group = _absorb(policy_p, tag_group, group)
                chance_key = _absorb(_absorb(_absorb(chance_p, tag_group, group), tag_event, event), tag_rollout,
                                     _U(0))
                shared_opp = -1
                if share_hidden[r] or sample:
                    shared_opp = _hidden(weights, hid_cum, hid_last, row, hidden_group)
                n_lanes = 0
                for s in range(width):
                    branch = _U(s)
                    if sample:
                        key = _absorb(_absorb(_absorb(policy_group, tag_branch, branch), tag_rollout, _U(0)),
                                      tag_stream, _U(2))
                        m = np.int64(_bits(key, 0))
                        action = 0
                        for a in range(cdf.shape[1]):
                            if cdf[row, a] <= m:
                                action += 1
                        action = min(action, last[row])
                    else:
                        action = s
                        if not legal[node, s]:
                            continue
                    opp = shared_opp
                    if not sample and not share_hidden[r]:
                        opp = _hidden(weights, hid_cum, hid_last, row, _absorb(hidden_group, tag_branch, branch))
                    c0, c1 = (own, opp) if actor == 0 else (opp, own)
                    card = -1
                    if has_chance:
                        ck = chance_key if (share_chance[r] and not sample) else _absorb(chance_key, tag_branch, branch)
                        card = _public_card(ck, c0, c1, num_cards)
                    slots[n_lanes] = s
                    lane_node[s], lane_c0[s], lane_c1[s], lane_card[s] = child[node, action], c0, c1, card
                    lane_action[s] = action
                    lane_key[s] = _absorb(_absorb(policy_group, tag_branch, branch), tag_rollout, _U(0))
                    n_lanes += 1
                for s in range(width):
                    returns[s] = 0.0
                sign = 1 - 2 * actor
                table = cdf[r * n_info:(r + 1) * n_info]
                table_last = last[r * n_info:(r + 1) * n_info]
                for first in range(0, n_lanes, 2):           # lanes in pairs; an odd last one pairs with itself
                    a, b = slots[first], slots[min(first + 1, n_lanes - 1)]
                    out = _play_pair(lane_node[a], lane_c0[a], lane_c1[a], lane_key[a], lane_card[a],
                                     lane_node[b], lane_c0[b], lane_c1[b], lane_key[b], lane_card[b], public, steps,
                                     player, chance_child, child, legal, info_index, table, table_last, utility)
                    _tally(counts, r, returns, a, sign, out[0], out[1], out[3], sample)
                    if b != a:
                        _tally(counts, r, returns, b, sign, out[5], out[6], out[8], sample)
                if not updates[r]:
                    continue
                is_lane = scratch_i[6]
                for s in range(width):
                    is_lane[s] = 0
                for k in range(n_lanes):
                    is_lane[slots[k]] = 1
                _group_advantages(returns, is_lane, width, sample, adv)
                for s in range(width):
                    if is_lane[s] == 0:
                        continue
                    action = max(lane_action[s], 0)
                    pi0 = behaviour[row, action]
                    t_row[n_terms], t_action[n_terms], t_adv[n_terms], t_pi0[n_terms] = row, action, adv[s], pi0
                    # torch's `1.0 / x` is reciprocal(x) * 1.0
                    t_weight[n_terms] = 1.0 / (per_run * width) * 1.0 if sample else pi0 / per_run
                    n_terms += 1
                    if not touched[row]:
                        touched[row] = True
                        rows_u[n_rows] = row
                        n_rows += 1
    return n_terms, n_rows


@_jit(inline="always")
def _num_legal(legal, node):
    total = 0
    for a in range(legal.shape[1]):
        total += 1 if legal[node, a] else 0
    return total


@_jit(inline="always")
def _tally(counts, r, returns, s, sign, value, decisions, illegal, sample):
    """One lane into its run's ledger and its slot's return (acting player's chips)."""
    returns[s] = np.float64(sign * value)
    counts[PHYSICAL, r] += 1
    counts[TRANSITIONS, r] += 1 + decisions
    counts[DECISIONS, r] += decisions + (1 if sample else 0)
    counts[ILLEGAL, r] += 1 if illegal else 0


@_jit()
def epoch(fresh, expd, rows_u, n_rows, touched, probs, legal, n_info, t_row, t_action, t_weight, t_adv, t_pi0, n_terms,
          grad, flat, rate, upper, lower, counts, shifted, every_row):
    """One full-batch step `flat += rate[run] * grad` of the clipped surrogate (`objectives.clipped_gradient`), each
    run at its own step size (`rate` [R]).

    probs: pi_theta of the touched rows `rows_u` (written here from `expd`,
    the exp of the previous call's `shifted`, when `fresh`; in epoch 0 it is
    the behaviour table itself).  Afterwards `shifted` holds the next
    epoch's exp input for the touched rows.  Rows without terms have a zero
    gradient, so `logit + rate * 0` leaves them as they are unless
    `every_row` (a -0.0 logit or a rate that is not finite): then every row
    is updated, as on the torch path.
    """
    if fresh:
        _softmax_rows(expd, legal, n_info, rows_u, n_rows, probs)
    n_actions = flat.shape[1]
    for j in range(n_rows):
        for a in range(n_actions):
            grad[rows_u[j], a] = 0.0
    for k in range(n_terms):                                 # index_add_: term by term
        row, action = t_row[k], t_action[k]
        ratio = probs[row, action] / t_pi0[k]
        adv = t_adv[k]
        clipped = (adv > 0 and ratio > upper) or (adv < 0 and ratio < lower)
        coef = 0.0 if clipped else t_weight[k] * adv * ratio
        for a in range(n_actions):
            grad[row, a] += coef * ((1.0 if a == action else 0.0) - probs[row, a])
        counts[TERMS, row // n_info] += 1
        counts[CLIPPED, row // n_info] += 1 if clipped else 0
    if every_row:
        for row in range(flat.shape[0]):
            for a in range(n_actions):
                flat[row, a] += rate[row // n_info] * (grad[row, a] if touched[row] else 0.0)
    else:
        for j in range(n_rows):
            for a in range(n_actions):
                flat[rows_u[j], a] += rate[rows_u[j] // n_info] * grad[rows_u[j], a]
    shift_rows(flat, legal, n_info, rows_u, n_rows, shifted)


@_jit()
def pull_and_magnet(flat, magnet, points, kept, active, n_info, alpha, rates, n, kappa, counts):
    """`proximal.pull` and `proximal.move_magnet` for every active run, in the torch path's arithmetic.

    counts [R * n_info] (scratch, float64): each state's draws among the run's first `kept[r]` decision
    points (`points` [R, N]); extra draws (ppo's visits) already in it are kept.  flat, magnet [R * n_info, A]
    are updated in place: a drawn state's logits become (theta + c m) / (1 + c), c = alpha * eta * k / n (eta:
    the run's rate, `rates[r]`), and
    the magnet moves m + kappa (theta - m) at every state (not at all when kappa = 0).
    """
    n_runs, n_actions = active.shape[0], flat.shape[1]
    for r in range(n_runs):
        if not active[r]:
            continue
        first = r * n_info
        for j in range(kept[r]):
            counts[first + points[r, j]] += 1.0
        for i in range(first, first + n_info):
            if alpha > 0 and counts[i] > 0:
                c = alpha * rates[r] * counts[i] / n
                for a in range(n_actions):
                    flat[i, a] = (flat[i, a] + c * magnet[i, a]) / (1.0 + c)
            if kappa != 0.0:
                for a in range(n_actions):
                    magnet[i, a] += kappa * (flat[i, a] - magnet[i, a])
