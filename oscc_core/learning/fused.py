"""The learners' fused CPU path: one `Learners.step` in a handful of compiled calls.

On the torch path an iteration is thousands of small tensor operations
(stream keys, lane building, play, the law, the terms, each epoch's
gradient), so its time is call overhead.  `FusedStep` computes exactly the
same numbers in numba kernels (`fused_kernels`, compiled once and cached
with the collector's kernel):

1. pi_t = masked_softmax(logits), exp included (`fixed_math.exp_rows`, the
   torch path's `exp_tensor` bit for bit);
2. the visitation law, the average-policy sums and the N decision points
   of every active run;
3. every enumerate / sample run's lanes (cp_grpo, independent, uniform,
   grpo), played to the end, with their ledger counts and surrogate terms;
4. E epochs of the clipped surrogate gradient, each around one fixed-rounding
   `exp` of the touched table rows;
5. the proximal pull and the magnet's move (`learning.proximal`), when the
   schedule has one.

PPO runs play whole hands instead of lanes (`fused_episodes`: the deal,
the hand, GAE, the value table, the z-scored terms), and their terms join
the others' in the same epochs.  Tests (`tests/test_learning_fused.py`)
check that logits, average tables, values, draws and ledgers are bitwise
those of the torch path, so which engine ran never shows in a result.
"""
from __future__ import annotations

from functools import cache

import numpy as np
import torch

from oscc_core.engine import rng
from oscc_core.engine.fused import _U, _game_arrays, _jit as jit
from oscc_core.exact.sequence_form import EMPTY_SEQUENCE, sequence_form
from oscc_core.fixed_math import exp_rows
from oscc_core.games import CHANCE, Game
from oscc_core.learning import fused_baseline as b
from oscc_core.learning import fused_episodes as e
from oscc_core.learning import fused_kernels as k
from oscc_core.learning.arms import ENUMERATE, EPISODE, SAMPLE
from oscc_core.learning.baseline import kernel_buffers
from oscc_core.learning.ledger import FIELDS
from oscc_core.learning.proximal import DECISION_LAWS
from oscc_core.learning.samples import continuation_event
from oscc_core.learning.visitation import decision_histories

_KIND = {ENUMERATE: k.ENUMERATE_KIND, SAMPLE: k.SAMPLE_KIND, EPISODE: k.OTHER_KIND}
_NAMESPACES = ("root", "hidden", "chance", "policy")
_TAGS = np.array([rng.field_tag(f) for f in ("group", "branch", "rollout", "event", "stream")], dtype=np.uint64)


@cache
def game_data(game: Game) -> dict:
    """A game's static tables for the kernels: tree, information states, sequence form, decision histories."""
    sf, h, info = sequence_form(game), decision_histories(game), game.infostates
    assert EMPTY_SEQUENCE == (0, 1)
    plan = [(ps.seq_of[i, a], ps.parent_seq[i], ps.infosets[i], a)
            for ps in sf.players for level in ps.level_slices for i in range(level.start, level.stop)
            for a in range(game.num_actions)]           # realisation_plans' order: player, own level, state
    data = dict(_game_arrays(game))
    data.update(
        plan=np.array(plan, dtype=np.int64).reshape(-1, 4), parent_seq=sf.parent_seq.astype(np.int64),
        num_sequences=sf.num_sequences, h_own=h.own_sequence.astype(np.int64),
        h_opp=h.opponent_sequence.astype(np.int64), chance=float(h.chance),
        **law_cells(h.infostate, h.opponent_card, len(info), game.num_cards),
        level_starts=_level_starts(sf, game.num_actions), info_legal=np.ascontiguousarray(info.legal),
        info_node=info.node.astype(np.int64), info_player=info.player.astype(np.int64),
        info_card=info.card.astype(np.int64),
        info_public=info.public_card.astype(np.int64), steps=int(game.tree.depth.max()) + 1,
        has_chance=bool((game.tree.player == CHANCE).any()), event=_U(continuation_event(game) & rng.MASK64))
    return data


def prefix_columns(seeds: torch.Tensor, split: int) -> tuple[np.ndarray, ...]:
    """[R] uint64 key states after (run, split) of the root, hidden, chance and policy namespaces, one array per
    namespace, for the runs' `seeds`."""
    table = np.array([[rng.derive_key_reference_prefix(ns, run=int(seed), split=split) & rng.MASK64
                       for ns in _NAMESPACES] for seed in seeds.tolist()], dtype=np.uint64).reshape(-1, 4)
    return tuple(np.ascontiguousarray(table[:, j]) for j in range(4))


def link_ledger(ledger) -> torch.Tensor:
    """Make a ledger's counts views of one [fields, R] block the kernels write into; returns the block."""
    block = torch.stack([ledger.counts[f] for f in FIELDS]).contiguous()
    ledger.counts = {f: block[i] for i, f in enumerate(FIELDS)}
    return block


def kernel_tables(game: Game) -> tuple[tuple, tuple, tuple]:
    """The kernels' static tuples of a game (`fused_kernels`): sequence form and decision histories ("sf"),
    information states ("info") and the tree ("tree"), as NumPy arrays and scalars."""
    d = game_data(game)
    sf = (d["plan"], d["parent_seq"], d["cell_start"], d["cell_hist"], d["h_own"], d["h_opp"], d["chance"])
    info = (d["info_node"], d["info_player"], d["info_card"], d["info_public"], len(game.infostates))
    tree = (d["steps"], game.num_cards, d["has_chance"], d["player"], d["chance_child"], d["child"], d["legal"],
            d["info_index"], d["utility"])
    return sf, info, tree


def law_cells(infostate: np.ndarray, card: np.ndarray, n_info: int, n_cards: int) -> dict:
    """The decision law's cells (information state, opponent card) as lists of their histories in history order:
    cell_hist[cell_start[c]:cell_start[c + 1]] are cell c = state * n_cards + card's histories."""
    cells = infostate.astype(np.int64) * n_cards + card.astype(np.int64)
    order = np.argsort(cells, kind="stable")
    start = np.zeros(n_info * n_cards + 1, dtype=np.int64)
    np.cumsum(np.bincount(cells, minlength=n_info * n_cards), out=start[1:])
    return {"cell_start": start, "cell_hist": order.astype(np.int64)}


def _level_starts(sf, num_actions: int) -> np.ndarray:
    """Boundaries in the plan (`game_data`) of each (player, own level) block: a block's sequences have their
    parents in earlier blocks, so the blocks can be filled one after another, each in any order."""
    sizes = [(level.stop - level.start) * num_actions for ps in sf.players for level in ps.level_slices]
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


# ----- the CPU kernels: `fused_kernels`' per-item functions looped over rows, runs and points ------------------
@jit()
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
            negative_zero = negative_zero or flat_bits[row, a] == k._NEGATIVE_ZERO
        if not same:
            rows[count] = row
            count += 1
            for a in range(flat_bits.shape[1]):
                prev_bits[row, a] = flat_bits[row, a]
    return count, negative_zero


@jit()
def law_and_points(active, expd, rows, count, legal, n_info, behaviour, cdf, last, cumulative, sf, x,
                   weights, per_state, root_prefix, tag_group, base, points, law, average_weights):
    """Per active run: pi_t (`behaviour`, its rows `rows[:count]` renewed from their exp `expd`), its draw
    thresholds (`stacked_cdf`), then `_run_law` (average_weights [R]: each run's weight of this iteration)."""
    k._softmax_rows(expd, legal, n_info, rows, count, behaviour)
    for j in range(count):
        k._draw_thresholds(behaviour, rows[j], cdf, last)
    for r in range(active.shape[0]):
        if active[r]:
            k._run_law(r, n_info, behaviour, cumulative, sf, x, weights, per_state, root_prefix, tag_group, base,
                       points, law, average_weights[r])


@jit()
def collect(kind, active, runs, group_size, budget, keys, law, info, tree, counts, spent, scratch_i, scratch_u,
            scratch_f, terms, touched, rows_u, costs, episodes, baseline):
    """Lanes, play, returns and surrogate terms of every active run (`_collect_point`; ppo: `collect_episodes`).

    baseline: (mode, values [R, M], counts [R, M], terminal [M], cell utility
    [M], record cells, targets [N, S, K] and lengths [N, S], floor): with a
    baseline (mode > 0, `baseline.MODE`), each run's records (row n: its point n) move its baseline once all
    its points are collected (`_baseline_updates`).

    Runs are taken kind by kind (enumerate, sample, then ppo), each in row
    order, and a run's terms in (group, slot) order, as `Terms.cat` orders
    them; the hidden-draw scratch row of a point is its table row.  Returns
    (terms written, touched rows).
    """
    points, info_node, n_info, legal = keys[6], info[0], info[4], tree[6]
    n_terms, n_rows = 0, 0
    for wanted in (k.ENUMERATE_KIND, k.SAMPLE_KIND):
        for r in range(kind.shape[0]):
            if kind[r] != wanted or not active[r]:
                continue
            sample = wanted == k.SAMPLE_KIND
            width = group_size if sample else legal.shape[1]
            for n in range(points.shape[1]):
                costs[n] = k._point_cost(sample, group_size, legal, info_node[points[r, n]])
            kept = k._kept_points(r, costs, points.shape[1], budget, counts, spent)
            per_run = np.float64(max(kept, 1))
            mode, values, bl_counts, terminal, cell_utility, rec_cell, rec_target, rec_len, floor = baseline
            for n in range(kept):
                row = r * n_info + points[r, n]
                wrote = k._collect_point(r, n, sample, width, per_run, runs, keys, law, info, tree, scratch_i,
                                         scratch_u, scratch_f, row, counts, r, terms, n_terms,
                                         (mode, values, terminal, cell_utility, rec_cell, rec_target, rec_len, n))
                n_terms += wrote
                if wrote > 0:
                    n_rows = k._touch(row, touched, rows_u, n_rows)
            if mode > 0:
                b._baseline_updates(values, bl_counts, r, rec_cell, rec_target, rec_len, 0, kept, floor)
    return collect_episodes(kind, active, budget, keys, law, info, tree, counts, spent, terms, touched, rows_u,
                            costs, episodes, n_terms, n_rows)


@jit()
def collect_episodes(kind, active, budget, keys, law, info, tree, counts, spent, terms, touched, rows_u, costs,
                     episodes, n_terms, n_rows):
    """Every active ppo run's hands (`fused_episodes`), its terms after the `n_terms` already written, then the
    value table's move (when a ppo run took part).  Returns (terms written, touched rows).

    episodes: (root key states [R], value table [R * n_info], value-target
    sums and counts [R * n_info], draws [R * n_info], the hands' scratch
    (states, actions, advantages [N, steps]), lambda, value rate).
    """
    root_p, values, value_sums, draws, hand, lam, value_rate = episodes
    hidden_p, chance_p, policy_p, tags, event, base, points = keys
    behaviour, cdf, last = law[3], law[4], law[5]
    info_player, n_info = info[1], info[4]
    n_points, played = points.shape[1], False
    for r in range(kind.shape[0]):
        if kind[r] != k.OTHER_KIND or not active[r]:
            continue
        played = True
        costs[:] = 1                                     # a hand is one physical call
        kept = k._kept_points(r, costs, n_points, budget, counts, spent)
        counts[e.UNUSED, r] += n_points - kept
        row0 = r * n_info
        for n in range(kept):
            e._episode_hand(r, n, (root_p, hidden_p, chance_p, policy_p, tags, event, base), tree,
                            cdf[row0:row0 + n_info], last[row0:row0 + n_info], values, row0, info_player, lam, hand,
                            n, counts, r)
        wrote = e._episode_run(kept, hand, 0, values, row0, behaviour, value_sums, draws, terms, n_terms)
        for j in range(n_terms, n_terms + wrote):
            n_rows = k._touch(terms[0][j], touched, rows_u, n_rows)
        n_terms += wrote
    if played:
        for row in range(values.shape[0]):
            e._update_values(values, value_sums, value_rate, row)
    return n_terms, n_rows


@jit()
def epoch(fresh, expd, rows_u, n_rows, touched, probs, legal, n_info, terms, n_terms, grad, flat, rate, upper, lower,
          counts, shifted, every_row):
    """`_epoch_body` over every term and (with `every_row`) every table row."""
    k._epoch_body(fresh, expd, rows_u, n_rows, touched, probs, legal, n_info, terms, 0, n_terms, grad, flat, rate,
                  upper, lower, counts, shifted, every_row, 0, flat.shape[0])


@jit()
def pull_and_magnet(flat, magnet, points, kept, active, n_info, alpha, rates, n, kappa, counts):
    """`_pull_run` of every active run (kept [R]: its decision points in this iteration's update)."""
    for r in range(active.shape[0]):
        if active[r]:
            k._pull_run(r, flat, magnet, points, kept[r], n_info, alpha, rates[r], n, kappa, counts)


@jit()
def pull_and_magnet_runs(flat, magnet, points, kept, active, n_info, alphas, rates, n, kappa, counts):
    """`pull_and_magnet` with each run's own pull strength (alphas [R], `Schedule.alphas`)."""
    for r in range(active.shape[0]):
        if active[r]:
            k._pull_run(r, flat, magnet, points, kept[r], n_info, alphas[r], rates[r], n, kappa, counts)


class FusedStep:
    """Buffers and static tables of one `Learners` object, and its fused `step`."""

    def __init__(self, learners) -> None:
        self.learners = L = learners
        game, s = L.game, L.schedule
        self.data = d = game_data(game)
        r, n_info, a, c = len(L.runs), len(game.infostates), game.num_actions, game.num_cards
        self.shape = (r, n_info, a)
        width = max(a, s.group_size)
        self.kind = np.array([_KIND[arm.samples] for arm in L.arms], dtype=np.int64)
        self.share_hidden = np.array([arm.share_hidden for arm in L.arms])
        self.share_chance = np.array([arm.share_chance for arm in L.arms])
        self.updates = np.array([arm.updates for arm in L.arms])
        rows = r * n_info
        self.prev_bits = np.zeros((rows, a), np.int64)      # the logits pi_t was last computed from
        self.known = False
        self.changed = np.empty(rows, np.int64)
        self.shifted, self.expd = (np.empty((rows, a), dtype=np.float64) for _ in range(2))
        self.behaviour = np.empty((rows, a))                 # pi_t, renewed where the logits changed
        self.probs, self.grad = np.empty((rows, a)), np.empty((rows, a))
        self.cdf, self.last = np.empty((rows, a), np.int64), np.empty(rows, np.int64)
        self.x, self.weights = np.empty(d["num_sequences"]), np.zeros((rows, c))
        self.per_state = np.empty(n_info)
        self.hid_cum, self.hid_last = np.zeros((rows, c)), np.zeros(rows, np.int64)
        self.points, self.costs = np.zeros((r, s.decision_points), np.int64), np.zeros(s.decision_points, np.int64)
        self.law = DECISION_LAWS.index(s.decision_law)      # the kernels' `*_LAW` code
        self.scratch_i, self.scratch_u = np.zeros((7, width), np.int64), np.zeros((1, width), np.uint64)
        self.scratch_f = np.zeros((2, width))
        steps = d["steps"]                                   # a hand's decisions are at most its steps
        self.hand = (np.empty((s.decision_points, steps), np.int64), np.empty((s.decision_points, steps), np.int64),
                     np.empty((s.decision_points, steps)))
        self.value_sums = (np.zeros(rows), np.zeros(rows))
        cap = r * s.decision_points * max(width, steps)
        self.t_row, self.t_action = np.empty(cap, np.int64), np.empty(cap, np.int64)
        self.t_weight, self.t_adv, self.t_pi0 = np.empty(cap), np.empty(cap), np.empty(cap)
        self.touched, self.rows_u = np.zeros(rows, bool), np.empty(rows, np.int64)
        # the history baseline's path records, a record row per decision point of a run (`learning.baseline`)
        (self.bl_mode, self.rec_cell, self.rec_target, self.rec_len, self.cell_utility,
         self.cell_terminal) = kernel_buffers(game, s.baseline, s.decision_points, width, steps)
        self._prefixes: dict[int, tuple] = {}
        self._rates_now, self._rates_at, self._rates_finite = np.empty(0), None, True
        self._viewed, self._view_arrays = None, None
        self.base = np.empty(r, np.int64)
        self.runs = (self.share_hidden, self.share_chance, self.updates)
        self.terms = (self.t_row, self.t_action, self.t_weight, self.t_adv, self.t_pi0)
        self.sf, self.info, self.tree = kernel_tables(game)
        self._link_ledger()

    def _link_ledger(self) -> None:
        self.block_t = link_ledger(self.learners.ledger)
        self.block = self.block_t.numpy()

    def _prefix_table(self, split: int) -> tuple[np.ndarray, ...]:
        """`prefix_columns` of the runs (cached per split)."""
        if split not in self._prefixes:
            self._prefixes[split] = prefix_columns(self.learners.seeds, split)
        return self._prefixes[split]

    def _views(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """NumPy views of the learners' logits ([R * n_info, A]), draw counts and values ([R * n_info]), kept
        while the learners hold the same tensors (a restore replaces them)."""
        L = self.learners
        held = (L.logits, L.draws, L.values)
        if self._viewed is None or any(a is not b for a, b in zip(self._viewed, held)):
            self._viewed = held
            self._view_arrays = (L.logits.detach().view(-1, self.shape[2]).numpy(), L.draws.view(-1).numpy(),
                                 L.values.detach().view(-1).numpy())
        return self._view_arrays

    def _rates(self) -> np.ndarray:
        """[R] the runs' step sizes this iteration (`Learners.rates`), rebuilt only when the divisor changes."""
        divisor = self.learners.rate_divisor
        if self._rates_at != divisor:
            self._rates_now, self._rates_at = self.learners.rates().numpy(), divisor
            self._rates_finite = bool(np.isfinite(self._rates_now).all())
        return self._rates_now

    def step(self, group_base: torch.Tensor | None, split: int) -> None:
        L, d, s = self.learners, self.data, self.learners.schedule
        n, (_, n_info, a) = s.decision_points, self.shape
        if L.ledger.counts[FIELDS[0]].data_ptr() != self.block_t.data_ptr():
            self._link_ledger()                        # the ledger was replaced
        if not L.logits.is_contiguous():
            L.logits = L.logits.contiguous()
        flat, draws, values = self._views()            # the kernels update them in place
        spent = L.spent.numpy()
        active = ~spent & (L.iteration < s.iterations)
        if group_base is None:
            base = self.base
            base.fill(L.iteration * n)
        else:
            base = np.ascontiguousarray(group_base.cpu().numpy(), dtype=np.int64)
        root_prefix, hidden_p, chance_p, policy_p = self._prefix_table(split)
        rates = self._rates()
        n_changed, negative_zero = changed_rows(flat.view(np.int64), self.prev_bits, self.known, self.changed)
        self.known = True
        groups_before = self.block[k.GROUPS].copy()
        draws.fill(0)
        k.shift_rows(flat, d["info_legal"], n_info, self.changed, n_changed, self.shifted)
        self._exp(n_changed)
        own = self.block[k.ITERATIONS]                   # each run's iterations so far
        law_and_points(active, self.expd, self.changed, n_changed, d["info_legal"], n_info, self.behaviour,
                         self.cdf, self.last, L.cumulative, self.sf, self.x, self.weights, self.per_state, root_prefix,
                         _TAGS[0], base, self.points, self.law, s.average_weights(own))
        self.touched[:] = False
        budget = -1 if s.budget is None else int(s.budget)
        n_terms, n_rows = collect(
            self.kind, active, self.runs, s.group_size, budget,
            (hidden_p, chance_p, policy_p, _TAGS, d["event"], base, self.points),
            (self.weights, self.hid_cum, self.hid_last, self.behaviour, self.cdf, self.last), self.info, self.tree,
            self.block, spent, self.scratch_i, self.scratch_u, self.scratch_f, self.terms, self.touched, self.rows_u,
            self.costs, (root_prefix, values, self.value_sums, draws, self.hand, float(s.gae_lambda),
                         float(s.value_rate)),
            (self.bl_mode, L.baseline_values.numpy(), L.baseline_counts.numpy(), self.cell_terminal,
             self.cell_utility, self.rec_cell, self.rec_target, self.rec_len, float(s.baseline_floor)))
        self._epochs(flat, n_terms, n_rows, negative_zero or not self._rates_finite, rates)
        if s.proximal:
            kept = np.where(self.kind == k.OTHER_KIND, 0, self.block[k.GROUPS] - groups_before)
            pull_and_magnet_runs(flat, L.magnet.view(-1, a).numpy(), self.points, kept, active, n_info,
                                   s.alphas(own), rates, n, float(s.proximal_kappa), draws)
        self.block[k.ITERATIONS] += active
        if s.budget is not None:
            spent |= self.block[k.PHYSICAL] >= s.budget
        L.iteration += 1

    def _exp(self, n_rows: int) -> None:
        """expd[:n_rows] = exp(shifted[:n_rows]) with fixed rounding (`fixed_math`: the torch path's bits)."""
        exp_rows(self.shifted, n_rows, self.expd)

    def _epochs(self, flat: np.ndarray, n_terms: int, n_rows: int, every_row: bool, rates: np.ndarray) -> None:
        """E clipped-surrogate steps on the fused terms at the runs' step sizes `rates` ([R]); epoch 0's pi_theta
        is pi_t itself."""
        s, d, n_info = self.learners.schedule, self.data, self.shape[1]
        for e in range(s.epochs):
            if e:
                self._exp(n_rows)
            epoch(e > 0, self.expd, self.rows_u, n_rows, self.touched, self.probs if e else self.behaviour,
                    d["info_legal"], n_info, self.terms, n_terms, self.grad, flat, rates, 1 + s.epsilon,
                    1 - s.epsilon, self.block, self.shifted, every_row)
