"""The per-item arithmetic of the learners' fused paths (see `learning.fused` and `learning.fused_cuda`).

Each kernel redoes, for one batch of runs, exactly the arithmetic of the
torch path (`loop`, `visitation`, `samples`, `rollout.play`, `objectives`):
the same keys and uniforms (`engine.fused` primitives), the same
inverse-CDF rules, and every sum in the torch path's order (histories in
order as `np.add.at`, columns one after the other as `sum_last`, cumulative
sums left to right, gradient terms in term order as `index_add_`).  Every
`exp` is `fixed_math`'s, so a float never depends on which engine ran.

The work is written as per-item functions (`SHARED_FUNCTIONS`: one table
row, one run's law, one decision point, one run's epoch or pull; a history
baseline's play, correction and update are `fused_baseline`'s), plain
Python that numba compiles here for the CPU, where the kernels of
`learning.fused` loop over the items; `learning.fused_cuda` compiles the
same source for the GPU, items in parallel, so the two engines cannot drift.  Like
`engine.fused`'s, these functions keep to what both targets compile:
scalars, tuples and array indexing or slicing, no allocation.
"""
from __future__ import annotations

import math

import numpy as np

from oscc_core.engine.fused import _SCALE, _U, _absorb, _bits, _draw, _jit, _play_pair, _public_card
from oscc_core.fixed_math import product
from oscc_core.learning.fused_baseline import _play_corrected, _root_correction
from oscc_core.learning.ledger import FIELDS

ENUMERATE_KIND, SAMPLE_KIND, OTHER_KIND = 0, 1, 2
ON_POLICY_LAW, COUNTERFACTUAL_LAW, UNIFORM_LAW = 0, 1, 2      # `proximal.DECISION_LAWS`, in its order
PHYSICAL, TRANSITIONS, DECISIONS, ROOT_DRAWS, GROUPS, ILLEGAL, TERMS, CLIPPED, ITERATIONS = (
    FIELDS.index(f) for f in ("physical_calls", "transitions", "decisions", "root_draws", "groups", "illegal", "terms",
                              "clipped_terms", "iterations"))
_DRAW_SCALE = float(2 ** 53)
_GRPO_EPS = 1e-8                # objectives.GRPO_STD_EPSILON
_NEGATIVE_ZERO = np.int64(-2 ** 63)   # the bits of -0.0


# ----- one table row: pi_t = masked_softmax(logits) and its draw thresholds ---------------------------------
@_jit(inline="always")
def _shift_row(flat, legal, n_info, row, out, k):
    """out[k] = where(legal, logits - max legal logit, -inf) of table row `row` (masked_softmax's exp input)."""
    info = row % n_info
    top = -np.inf
    for a in range(flat.shape[1]):
        if legal[info, a] and flat[row, a] > top:
            top = flat[row, a]
    for a in range(flat.shape[1]):
        out[k, a] = flat[row, a] - top if legal[info, a] else -np.inf


@_jit()
def shift_rows(flat, legal, n_info, rows, count, out):
    """`_shift_row` of table rows rows[:count] into out[:count]."""
    for k in range(count):
        _shift_row(flat, legal, n_info, rows[k], out, k)


@_jit(inline="always")
def _softmax_row(expd, k, legal, n_info, row, probs):
    """probs[row] = z / (z_0 + z_1 + ...), z = where(legal, expd[k], 0) (masked_softmax after its exp)."""
    info = row % n_info
    total = expd[k, 0] if legal[info, 0] else 0.0
    for a in range(1, expd.shape[1]):
        total = total + (expd[k, a] if legal[info, a] else 0.0)
    for a in range(expd.shape[1]):
        probs[row, a] = (expd[k, a] if legal[info, a] else 0.0) / total


@_jit(inline="always")
def _softmax_rows(expd, legal, n_info, rows, count, probs):
    for k in range(count):
        _softmax_row(expd, k, legal, n_info, rows[k], probs)


@_jit(inline="always")
def _draw_thresholds(behaviour, row, cdf, last):
    """`stacked_cdf` of one row: cdf[row, a] = ceil(cumulative probability * 2**53), last = last positive action."""
    cum = behaviour[row, 0]
    top = 0 if behaviour[row, 0] > 0 else -1
    cdf[row, 0] = np.int64(math.ceil(cum * _DRAW_SCALE))
    for a in range(1, behaviour.shape[1]):
        cum = cum + behaviour[row, a]
        cdf[row, a] = np.int64(math.ceil(cum * _DRAW_SCALE))
        if behaviour[row, a] > 0:
            top = a
    last[row] = top


# ----- one run: the decision law, the average-policy sums and the N decision points -------------------------
@_jit(inline="always")
def _sequence_reach(x, plan, j, behaviour, first):
    """Plan entry j: a sequence's reach is its parent's times the action's probability (parents one level up)."""
    x[plan[j, 0]] = x[plan[j, 1]] * behaviour[first + plan[j, 2], plan[j, 3]]


@_jit(inline="always")
def _cell_weight(cell, cell_start, cell_hist, h_own, h_opp, chance, x, law):
    """The decision law's weight of one (information state, opponent card) cell: its histories' weights added
    in history order (`np.add.at`'s order), from 0."""
    total = 0.0
    for j in range(cell_start[cell], cell_start[cell + 1]):
        h = cell_hist[j]
        if law == ON_POLICY_LAW:
            total += product(chance * x[h_own[h]], x[h_opp[h]])
        else:
            total += product(chance, x[h_opp[h]])
    return total


@_jit(inline="always")
def _state_total(weights, row, law):
    """A state's law total: its cells summed column after column (`sum_last_axis`); 1 under the uniform law."""
    total = weights[row, 0]
    for j in range(1, weights.shape[1]):
        total += weights[row, j]
    return 1.0 if law == UNIFORM_LAW else total


@_jit(inline="always")
def _draw_point(r, n, per_state, n_info, root_prefix, tag_group, base):
    """Run r's decision point n: the state whose cumulative law passes its root draw (searchsorted, right)."""
    key = _absorb(root_prefix[r], tag_group, _U(base[r] + n))
    threshold = np.float64(_bits(key, 0)) * _SCALE * per_state[n_info - 1]
    lo, hi = 0, n_info
    while lo < hi:
        mid = (lo + hi) // 2
        if per_state[mid] <= threshold:
            lo = mid + 1
        else:
            hi = mid
    return min(lo, n_info - 1)


@_jit(inline="always")
def _run_law(r, n_info, behaviour, cumulative, sf, x, weights, per_state, root_prefix, tag_group, base, points,
             law, average_weight):
    """Run r's decision law (`decision_law`: weights [R * n_info, C]; `law` one of the `*_LAW` codes), its
    average-policy sums (each increment times the run's `average_weight`, 1.0 unless `Schedule.average_power`)
    and its N decision points (x, per_state: this run's scratch).

    sf: (plan [P, 4]: (sequence, parent sequence, information state, action)
    in `realisation_plans`' level order, parent_seq, cell_start and
    cell_hist (each law cell's histories, in order), h_own, h_opp, chance).
    """
    plan, parent_seq, cell_start, cell_hist, h_own, h_opp, chance = sf
    n_actions, c = behaviour.shape[1], weights.shape[1]
    first = r * n_info
    for j in range(x.shape[0]):
        x[j] = 1.0 if j < 2 else 0.0                    # the two empty sequences
    for j in range(plan.shape[0]):
        _sequence_reach(x, plan, j, behaviour, first)
    for cell in range(n_info * c):
        weights[first + cell // c, cell % c] = _cell_weight(cell, cell_start, cell_hist, h_own, h_opp, chance, x,
                                                            law)
    for i in range(n_info):
        for a in range(n_actions):
            cumulative[r, i, a] += product(product(x[parent_seq[i]], behaviour[first + i, a]), average_weight)
    for i in range(n_info):                             # a left-to-right cumulative sum
        total = _state_total(weights, first + i, law)
        per_state[i] = total if i == 0 else per_state[i - 1] + total
    for n in range(points.shape[1]):
        points[r, n] = _draw_point(r, n, per_state, n_info, root_prefix, tag_group, base)


# ----- one decision point: its lanes, played to the end, their ledger counts and surrogate terms ---------------
@_jit(inline="always")
def _num_legal(legal, node):
    total = 0
    for a in range(legal.shape[1]):
        total += 1 if legal[node, a] else 0
    return total


@_jit(inline="always")
def _point_cost(sample, group_size, legal, node):
    """A decision point's physical calls: G sampled branches, else one per legal action."""
    return group_size if sample else _num_legal(legal, node)


@_jit(inline="always")
def _kept_points(r, costs, n_points, budget, counts, spent):
    """How many of run r's decision points (a prefix; `costs`: their calls) fit in its budget (-1: none); counts
    them as root draws and groups and marks the run spent when one does not fit."""
    left = budget - counts[PHYSICAL, r]
    kept, used = 0, 0
    for n in range(n_points):
        used += costs[n]
        if budget >= 0 and used > left:
            spent[r] = True
            break
        kept += 1
    counts[ROOT_DRAWS, r] += kept
    counts[GROUPS, r] += kept
    return kept


@_jit(inline="always")
def _hidden(weights, row, hid_cum, hid_last, slot, key):
    """`draw_hidden`: the opponent card from the posterior weights of table row `row` (cumsum from 0, written in
    the scratch row `slot`)."""
    cum, top = 0.0, 0
    for j in range(weights.shape[1]):
        cum = cum + weights[row, j]
        hid_cum[slot, j] = cum
        if weights[row, j] > 0:
            top = j
    hid_last[slot] = top
    return _draw(hid_cum, hid_last, slot, np.float64(_bits(key, 0)) * _SCALE)


@_jit(inline="always")
def _group_advantages(returns, mask, size, normalise, adv):
    """`objectives.centred` / `group_normalised` over one group's slots (mask: 1 on lanes), sums in slot order."""
    count = 1.0 if mask[0] != 0 else 0.0
    total = product(returns[0], count)
    for s in range(1, size):
        m = 1.0 if mask[s] != 0 else 0.0
        count = count + m
        total = total + product(returns[s], m)
    mean = total / max(count, 1.0)
    for s in range(size):
        adv[s] = returns[s] - mean if mask[s] != 0 else 0.0
    if normalise:
        squares = product(adv[0], adv[0])
        for s in range(1, size):
            squares = squares + product(adv[s], adv[s])
        sd = math.sqrt(squares / max(count - 1.0, 1.0))
        for s in range(size):
            adv[s] = adv[s] / (sd + _GRPO_EPS) if sd > 0 else 0.0


@_jit(inline="always")
def _tally(counts, col, returns, s, sign, value, decisions, illegal, sample):
    """One lane into ledger column `col` and its slot's return (acting player's chips)."""
    returns[s] = np.float64(sign * value)
    counts[PHYSICAL, col] += 1
    counts[TRANSITIONS, col] += 1 + decisions
    counts[DECISIONS, col] += decisions + (1 if sample else 0)
    counts[ILLEGAL, col] += 1 if illegal else 0


@_jit(inline="always")
def _point_lanes(r, n, sample, width, runs, keys, law, info, tree, scratch, hid_slot):
    """The lanes of run r's decision point n (`branch_lanes` / `sampled_lanes`): their slots, start nodes,
    cards, dealt public cards, root actions and policy keys in `scratch`; returns how many."""
    share_hidden, share_chance = runs[0], runs[1]
    hidden_p, chance_p, policy_p, tags, event, base, points = keys
    weights, hid_cum, hid_last, behaviour, cdf, last = law
    info_node, info_player, info_card, info_public, n_info = info
    steps, num_cards, has_chance, player, chance_child, child, legal, info_index, utility = tree
    lane_node, lane_c0, lane_c1, lane_card, lane_action, slots, lane_key = scratch
    tag_group, tag_branch, tag_rollout, tag_event, tag_stream = tags[0], tags[1], tags[2], tags[3], tags[4]
    state = points[r, n]
    row = r * n_info + state
    node, actor, own = info_node[state], info_player[state], info_card[state]
    group = _U(base[r] + n)
    hidden_group = _absorb(hidden_p[r], tag_group, group)
    policy_group = _absorb(policy_p[r], tag_group, group)
    chance_key = _absorb(_absorb(_absorb(chance_p[r], tag_group, group), tag_event, event), tag_rollout, _U(0))
    shared_opp = -1
    if share_hidden[r] or sample:
        shared_opp = _hidden(weights, row, hid_cum, hid_last, hid_slot, hidden_group)
    n_lanes = 0
    for s in range(width):
        branch = _U(s)
        if sample:
            key = _absorb(_absorb(_absorb(policy_group, tag_branch, branch), tag_rollout, _U(0)), tag_stream, _U(2))
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
            opp = _hidden(weights, row, hid_cum, hid_last, hid_slot, _absorb(hidden_group, tag_branch, branch))
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
    return n_lanes


@_jit(inline="always")
def _collect_point(r, n, sample, width, per_run, runs, keys, law, info, tree, scratch_i, scratch_u, scratch_f,
                   hid_slot, counts, col, terms, start, baseline):
    """Run r's decision point n (`Learners._collect`): its lanes played to the end, their counts added to ledger
    column `col`, and (when the run updates) its surrogate terms written from `terms[*][start]` in slot order.

    runs: (share_hidden, share_chance, updates) [R]; keys: (hidden, chance and
    policy key states after (run, split) [R], field tags, continuation event,
    group base [R], decision points [R, N]); law: (weights, hidden-draw
    scratch cum and last, pi_t, its cdf and last action); info: (node, player,
    card, public card) of each information state and n_info; tree: the
    game's tables; scratch_i, _u, _f: this item's lane scratch; baseline:
    (on, the runs' history-baseline values [R, M], the cells' terminal flags
    and utilities [M], path records: cells, targets [T, S, K] and lengths
    [T, S], this point's record row T; mode: `baseline.MODE`): with one,
    each lane is played alone and its return corrected (`learning.baseline`).  Returns the terms
    written.
    """
    updates, points, behaviour, cdf, last = runs[2], keys[6], law[3], law[4], law[5]
    info_player, info_public, n_info = info[1], info[3], info[4]
    steps, player, chance_child, child, legal, info_index, utility = (tree[0], tree[3], tree[4], tree[5], tree[6],
                                                                     tree[7], tree[8])
    lane_node, lane_c0, lane_c1, lane_card, lane_action, slots, is_lane = (
        scratch_i[0], scratch_i[1], scratch_i[2], scratch_i[3], scratch_i[4], scratch_i[5], scratch_i[6])
    lane_key, returns, adv = scratch_u[0], scratch_f[0], scratch_f[1]
    n_lanes = _point_lanes(r, n, sample, width, runs, keys, law, info, tree,
                           (lane_node, lane_c0, lane_c1, lane_card, lane_action, slots, lane_key), hid_slot)
    state = points[r, n]
    row = r * n_info + state
    for s in range(width):
        returns[s] = 0.0
    sign = 1 - 2 * info_player[state]
    table = cdf[r * n_info:(r + 1) * n_info]
    table_last = last[r * n_info:(r + 1) * n_info]
    if baseline[0] > 0:
        mode, values, terminal, cell_utility, rec_cell, rec_target, rec_len, rec_row = baseline
        weights, behaviour_all = law[0], law[3]
        n_cards, actor, own = tree[1], info_player[state], info[2][state]
        for s in range(rec_len.shape[1]):
            rec_len[rec_row, s] = 0
        for j in range(n_lanes):                 # one lane at a time, each corrected along its path
            a = slots[j]
            out = _play_corrected(r, lane_node[a], lane_c0[a], lane_c1[a], lane_key[a], lane_card[a],
                                  info_public[state], steps, player, chance_child, child, legal, info_index, table,
                                  table_last, utility, behaviour_all, r * n_info, n_cards, values, terminal,
                                  cell_utility, rec_cell, rec_target, rec_len, rec_row, a, mode == 1)
            _tally(counts, col, returns, a, sign, out[0], out[1], out[3], sample)
            if mode == 1:                        # the hidden card too ("history"; "policy": actions only)
                root = _root_correction(weights, row, r, lane_node[a], own, actor, lane_c0[a], lane_c1[a],
                                        info_public[state], n_cards, values, terminal, cell_utility)
                returns[a] = sign * (out[5] + root)
            else:
                returns[a] = sign * out[5]
    else:
        for first in range(0, n_lanes, 2):       # lanes in pairs; an odd last one pairs with itself
            a, b = slots[first], slots[min(first + 1, n_lanes - 1)]
            out = _play_pair(lane_node[a], lane_c0[a], lane_c1[a], lane_key[a], lane_card[a],
                             lane_node[b], lane_c0[b], lane_c1[b], lane_key[b], lane_card[b], info_public[state],
                             steps, player, chance_child, child, legal, info_index, table, table_last, utility)
            _tally(counts, col, returns, a, sign, out[0], out[1], out[3], sample)
            if b != a:
                _tally(counts, col, returns, b, sign, out[5], out[6], out[8], sample)
    if not updates[r]:
        return 0
    for s in range(width):
        is_lane[s] = 0
    for k in range(n_lanes):
        is_lane[slots[k]] = 1
    _group_advantages(returns, is_lane, width, sample, adv)
    t_row, t_action, t_weight, t_adv, t_pi0 = terms
    wrote = 0
    for s in range(width):
        if is_lane[s] == 0:
            continue
        action = max(lane_action[s], 0)
        pi0 = behaviour[row, action]
        k = start + wrote
        t_row[k], t_action[k], t_adv[k], t_pi0[k] = row, action, adv[s], pi0
        # torch's `1.0 / x` is reciprocal(x) * 1.0
        t_weight[k] = 1.0 / (per_run * width) * 1.0 if sample else pi0 / per_run
        wrote += 1
    return wrote


@_jit(inline="always")
def _touch(row, touched, rows_u, n_rows):
    """Append `row` to the touched rows `rows_u[:n_rows]` unless it is there; returns the new count."""
    if touched[row]:
        return n_rows
    touched[row] = True
    rows_u[n_rows] = row
    return n_rows + 1


# ----- one run's epochs and pull ------------------------------------------------------------------------------
@_jit(inline="always")
def _term_gradient(k, terms, probs, grad, upper, lower):
    """Term k's part of its row's clipped-surrogate gradient, added into `grad`; returns whether it was clipped."""
    t_row, t_action, t_weight, t_adv, t_pi0 = terms
    row, action = t_row[k], t_action[k]
    ratio = probs[row, action] / t_pi0[k]
    adv = t_adv[k]
    clipped = (adv > 0 and ratio > upper) or (adv < 0 and ratio < lower)
    coef = 0.0 if clipped else t_weight[k] * adv * ratio
    for a in range(grad.shape[1]):
        grad[row, a] += product(coef, (1.0 if a == action else 0.0) - probs[row, a])
    return clipped


@_jit(inline="always")
def _update_row(flat, row, rate, grad, take):
    """flat[row] += rate * grad[row] (a zero gradient where not `take`: the row has no term)."""
    for a in range(flat.shape[1]):
        flat[row, a] += product(rate, grad[row, a] if take else 0.0)


@_jit(inline="always")
def _epoch_body(fresh, expd, rows_u, n_rows, touched, probs, legal, n_info, terms, k0, k1, grad, flat, rate, upper,
                lower, counts, shifted, every_row, row0, row1):
    """One full-batch step `flat += rate[run] * grad` of the clipped surrogate (`objectives.clipped_gradient`) over
    the terms k0..k1-1, whose rows are `rows_u[:n_rows]`, each run at its own step size (`rate` [R]).

    probs: pi_theta of those rows (written here from `expd`, the exp of the
    previous call's `shifted`, when `fresh`; in epoch 0 it is the behaviour
    table itself).  Afterwards `shifted` holds the next epoch's exp input for
    them.  Rows without terms have a zero gradient, so `logit + rate * 0`
    leaves them as they are unless `every_row` (a -0.0 logit or a rate that is
    not finite): then every row in row0..row1-1 is updated, as on the torch path.
    """
    if fresh:
        _softmax_rows(expd, legal, n_info, rows_u, n_rows, probs)
    n_actions = flat.shape[1]
    for j in range(n_rows):
        for a in range(n_actions):
            grad[rows_u[j], a] = 0.0
    for k in range(k0, k1):                                  # index_add_: term by term
        clipped = _term_gradient(k, terms, probs, grad, upper, lower)
        counts[TERMS, terms[0][k] // n_info] += 1
        counts[CLIPPED, terms[0][k] // n_info] += 1 if clipped else 0
    if every_row:
        for row in range(row0, row1):
            _update_row(flat, row, rate[row // n_info], grad, touched[row])
    else:
        for j in range(n_rows):
            _update_row(flat, rows_u[j], rate[rows_u[j] // n_info], grad, True)
    for k in range(n_rows):
        _shift_row(flat, legal, n_info, rows_u[k], shifted, k)


@_jit(inline="always")
def _pull_state(flat, magnet, i, alpha, rate, draws, n, kappa):
    """Table row i drawn `draws` times: logits (theta + c m) / (1 + c), c = alpha * eta * draws / n, then the
    magnet's move m + kappa (theta - m)."""
    if alpha > 0 and draws > 0:
        c = alpha * rate * draws / n
        for a in range(flat.shape[1]):
            flat[i, a] = (flat[i, a] + product(c, magnet[i, a])) / (1.0 + c)
    if kappa != 0.0:
        for a in range(flat.shape[1]):
            magnet[i, a] += product(kappa, flat[i, a] - magnet[i, a])


@_jit(inline="always")
def _pull_run(r, flat, magnet, points, kept, n_info, alpha, rate, n, kappa, counts):
    """`proximal.pull` and `proximal.move_magnet` of run r, in the torch path's arithmetic.

    counts [R * n_info] (scratch, float64): each state's draws among the
    run's first `kept` decision points (`points` [R, N]); extra draws (ppo's
    visits) already in it are kept.  A drawn state's logits become
    (theta + c m) / (1 + c), c = alpha * eta * k / n (eta: the run's rate),
    and the magnet moves m + kappa (theta - m) at every state (not at all when
    kappa = 0).
    """
    first = r * n_info
    for j in range(kept):
        counts[first + points[r, j]] += 1.0
    for i in range(first, first + n_info):
        _pull_state(flat, magnet, i, alpha, rate, counts[i], n, kappa)


#: The per-item functions, callees first: compiled here for the CPU, and from the same source for the GPU by
#: `learning.fused_cuda`.
SHARED_FUNCTIONS = ("_shift_row", "shift_rows", "_softmax_row", "_softmax_rows", "_draw_thresholds",
                    "_sequence_reach", "_cell_weight", "_state_total", "_draw_point", "_run_law", "_num_legal",
                    "_point_cost", "_kept_points", "_hidden", "_group_advantages", "_tally", "_point_lanes",
                    "_collect_point", "_touch", "_term_gradient", "_update_row", "_epoch_body", "_pull_state",
                    "_pull_run")
