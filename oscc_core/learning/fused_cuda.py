"""The learners' fused GPU path: `learning.fused`'s iteration as four CUDA kernels, with the same numbers.

`fused_kernels` writes the iteration as per-item functions (one table row,
one decision point, one run's law, epochs and pull; `fused_baseline` a
history baseline's, `fused_episodes` ppo's hands); `fused_cuda_functions`
compiles that source for the GPU, and this module runs the items in parallel:

1. one thread per table row: pi_t = masked_softmax(logits) with the
   fixed-rounding exp, and its draw thresholds (every row, every
   iteration: an unchanged row gives the same bits as the CPU's kept one);
2. one block per run: its decision law (the sequence-form reaches level by
   level, each (state, card) cell of the law summed over its histories in
   history order), average-policy sums, the left-to-right cumulative sum
   of the law (one thread: its order is the CPU's), N decision points and
   the prefix of them its budget allows;
3. one thread per (run, decision point): its lanes played to the end, their
   ledger counts and surrogate terms, in the point's own slots (a ppo run:
   its hand n, dealt, played and its GAE advantages, `fused_episodes`);
4. one block per run: a ppo run's z-scored terms and value targets (one
   thread, in transition order), the E clipped-surrogate epochs, one thread
   per touched table row summing that row's terms in term order (a row only
   ever takes terms of its own run, so this is the CPU's order), the
   value table's move, the proximal pull and the magnet, the iteration and
   budget counts.

Nothing goes back to the host inside an iteration: logits, average-policy
sums, ledger and scratch stay in device memory, and the host only launches.
Every product that a sum takes is `fixed_math.product`, here libdevice's
`dmul_rn`, so the CUDA compiler cannot fuse it into an FMA (one rounding
where the CPU makes two).

Under numba's CUDA simulator (`NUMBA_ENABLE_CUDASIM=1`) the same
kernels run on the CPU, which is how CI checks them against `learning.fused`.
"""
from __future__ import annotations

import types
import warnings
from functools import lru_cache

import numpy as np
import torch

from oscc_core.engine import fused_cuda as engine_cuda
from oscc_core.engine.fused import _U
from oscc_core.learning import fused_episodes as e
from oscc_core.learning import fused_kernels as k
from oscc_core.learning.baseline import kernel_buffers
from oscc_core.learning.fused import _KIND, _TAGS, game_data, kernel_tables, link_ledger, prefix_columns
from oscc_core.learning.fused_cuda_functions import device_functions
from oscc_core.learning.ledger import FIELDS
from oscc_core.learning.proximal import DECISION_LAWS

try:
    from numba import cuda
except ImportError:   # pragma: no cover - a numba without its CUDA target
    cuda = None

THREADS_PER_BLOCK = 128
#: A run's block under numba's simulator, which runs each thread as a Python thread: the block kernels stride
#: over their items, so any block size computes the same numbers.
SIMULATOR_THREADS = 2
#: Shared-memory capacities of a run's block: information states (its cumulative law) and decision points.
MAX_STATES, MAX_POINTS = 1024, 512


def available() -> bool:
    """True when numba's CUDA target (or its simulator) imports and sees a device."""
    return engine_cuda.available()


def _rows_body(flat, flat_bits, legal, n_info, shifted, expd, behaviour, cdf, last, negative_zero):
    """Thread `row`: pi_t of one table row and its thresholds; flags a -0.0 logit."""
    row = cuda.grid(1)
    if row < flat.shape[0]:
        _shift_row(flat, legal, n_info, row, shifted, row)  # noqa: F821 - names of the retargeted namespace
        for a in range(flat.shape[1]):
            expd[row, a] = exp_scalar(shifted[row, a])  # noqa: F821
            if flat_bits[row, a] == _NEGATIVE_ZERO:  # noqa: F821
                negative_zero[0] = 1
        _softmax_row(expd, row, legal, n_info, row, behaviour)  # noqa: F821
        _draw_thresholds(behaviour, row, cdf, last)  # noqa: F821


def _law_block(running, spent, active, kind, behaviour, cumulative, plan, level_starts, parent_seq, cell_start,
               cell_hist, h_own, h_opp, chance, x, weights, root_prefix, tag_group, base, points, law, n_info,
               group_size, budget, legal, info_node, counts, kept, average_weights):
    """Block r: run r's law, average-policy sums (times its `average_weights[r]`), decision points and kept prefix
    (`_run_law`, in parallel)."""
    r, tid, width = cuda.blockIdx.x, cuda.threadIdx.x, cuda.blockDim.x
    on = running and not spent[r]
    cuda.syncthreads()                                   # every thread has read spent[r] before thread 0 sets it
    if not on:
        if tid == 0:
            active[r], kept[r] = False, 0
        return
    first, n_cards, n_actions, n_points = r * n_info, weights.shape[1], behaviour.shape[1], points.shape[1]
    xr = x[r]
    for j in range(tid, xr.shape[0], width):
        xr[j] = 1.0 if j < 2 else 0.0                    # the two empty sequences
    cuda.syncthreads()
    for block in range(level_starts.shape[0] - 1):
        for j in range(level_starts[block] + tid, level_starts[block + 1], width):
            _sequence_reach(xr, plan, j, behaviour, first)  # noqa: F821
        cuda.syncthreads()
    for cell in range(tid, n_info * n_cards, width):
        weights[first + cell // n_cards, cell % n_cards] = _cell_weight(  # noqa: F821
            cell, cell_start, cell_hist, h_own, h_opp, chance, xr, law)
    for j in range(tid, n_info * n_actions, width):
        i, a = j // n_actions, j % n_actions
        cumulative[r, i, a] += product(product(xr[parent_seq[i]], behaviour[first + i, a]),  # noqa: F821
                                       average_weights[r])
    per_state = cuda.shared.array(MAX_STATES, np.float64)  # noqa: F821
    costs = cuda.shared.array(MAX_POINTS, np.int64)  # noqa: F821
    cuda.syncthreads()
    for i in range(tid, n_info, width):
        per_state[i] = _state_total(weights, first + i, law)  # noqa: F821
    cuda.syncthreads()
    if tid == 0:                                         # left to right, in the CPU's order
        for i in range(1, n_info):
            per_state[i] = per_state[i - 1] + per_state[i]
    cuda.syncthreads()
    sample, episode = kind[r] == SAMPLE_KIND, kind[r] == OTHER_KIND  # noqa: F821
    for n in range(tid, n_points, width):
        state = _draw_point(r, n, per_state, n_info, root_prefix, tag_group, base)  # noqa: F821
        points[r, n] = state
        costs[n] = 1 if episode else _point_cost(sample, group_size, legal, info_node[state])  # noqa: F821
    cuda.syncthreads()
    if tid == 0:
        active[r] = True
        kept[r] = _kept_points(r, costs, n_points, budget, counts, spent)  # noqa: F821
        if episode:                                      # a hand is one call; the hands cut off are counted
            counts[UNUSED, r] += n_points - kept[r]  # noqa: F821


def _points_body(active, kind, kept, share_hidden, share_chance, updates, group_size, width_max, hidden_p, chance_p,
                 policy_p, tags, event, base, points, weights, hid_cum, hid_last, behaviour, cdf, last, info_node,
                 info_player, info_card, info_public, n_info, steps, num_cards, has_chance, player, chance_child,
                 child, legal, info_index, utility, scratch_i, scratch_u, scratch_f, counts, t_row, t_action,
                 t_weight, t_adv, t_pi0, wrote, root_p, values, lam, ep_info, ep_action, ep_adv, bl_on, bl_values,
                 bl_terminal, bl_utility, rec_cell, rec_target, rec_len):
    """Thread t = r * N + n: run r's decision point n (a ppo run: its hand n, in hand row t), its counts in
    ledger column t, terms in its slots and (with the history baseline) path records in record row t."""
    t = cuda.grid(1)
    n_points = points.shape[1]
    if t < wrote.shape[0]:
        r, n = t // n_points, t % n_points
        for f in range(counts.shape[0]):
            counts[f, t] = 0
        wrote[t] = 0
        if kind[r] == OTHER_KIND:  # noqa: F821
            if active[r] and n < kept[r]:
                row0 = r * n_info
                _episode_hand(r, n, (root_p, hidden_p, chance_p, policy_p, tags, event, base),  # noqa: F821
                              (steps, num_cards, has_chance, player, chance_child, child, legal, info_index, utility),
                              cdf[row0:row0 + n_info], last[row0:row0 + n_info], values, row0, info_player, lam,
                              (ep_info, ep_action, ep_adv), t, counts, t)
        elif active[r] and n < kept[r]:
            sample = kind[r] == SAMPLE_KIND  # noqa: F821
            wrote[t] = _collect_point(  # noqa: F821
                r, n, sample, group_size if sample else legal.shape[1], np.float64(max(kept[r], 1)),
                (share_hidden, share_chance, updates), (hidden_p, chance_p, policy_p, tags, event, base, points),
                (weights, hid_cum, hid_last, behaviour, cdf, last),
                (info_node, info_player, info_card, info_public, n_info),
                (steps, num_cards, has_chance, player, chance_child, child, legal, info_index, utility),
                scratch_i[t], scratch_u[t], scratch_f[t], t, counts, t, (t_row, t_action, t_weight, t_adv, t_pi0),
                t * width_max, (bl_on, bl_values, bl_terminal, bl_utility, rec_cell, rec_target, rec_len, t))


def _update_block(active, kept, points, point_counts, wrote, width_max, t_row, t_action, t_weight, t_adv, t_pi0,
                  touched, n_info, epochs, behaviour, probs, expd, shifted, grad, flat, legal, rates, upper, lower,
                  counts, negative_zero, rates_finite, proximal, magnet, alpha, kappa, draws, budget, spent, kind,
                  values, value_sums, value_rate, ep_info, ep_action, ep_adv, row_cap, bl_on, bl_values, bl_counts,
                  rec_cell, rec_target, rec_len, bl_floor):
    """Block r: run r's ledger counts, a ppo run's terms and value targets, E epochs (one thread per touched row,
    its terms in term order), the value table's move, pull and magnet (alpha [R]: each run's), the history
    baseline's update (one thread, its records in order), iteration and budget counts (`_episode_run`,
    `_epoch_body`, `_update_values`, `_pull_run` and `_baseline_updates`, in parallel).

    Longer than a screen on purpose: its phases share the block's shared arrays (the touched rows, the points'
    rows and term counts) and meet at block barriers, so each phase reads what the one before wrote without a
    trip through global memory; every phase's arithmetic is a shared function named above."""
    r, tid, width = cuda.blockIdx.x, cuda.threadIdx.x, cuda.blockDim.x
    n_points = points.shape[1]
    row0, base_t = r * n_info, r * n_points
    used = kept[r] if active[r] else 0
    episode = kind[r] == OTHER_KIND  # noqa: F821
    lanes = 0 if episode else used                       # decision points whose lanes made terms
    point_row = cuda.shared.array(MAX_POINTS, np.int64)  # noqa: F821
    point_terms = cuda.shared.array(MAX_POINTS, np.int64)  # noqa: F821
    rows_u = cuda.shared.array(MAX_STATES, np.int64)  # noqa: F821
    n_rows_shared = cuda.shared.array(2, np.int64)
    for n in range(tid, lanes, width):
        point_row[n], point_terms[n] = row0 + points[r, n], wrote[base_t + n]
    for i in range(row0 + tid, row0 + n_info, width):
        touched[i], draws[i] = False, 0.0
    for j in range(tid, 4, width):                       # the lanes' counts, one field per thread
        field = PHYSICAL if j == 0 else (TRANSITIONS if j == 1 else (DECISIONS if j == 2 else ILLEGAL))  # noqa: F821
        total = 0
        for n in range(used):
            total += point_counts[field, base_t + n]
        counts[field, r] += total
    cuda.syncthreads()
    start = base_t * width_max                           # a ppo run's terms: one per transition, from here
    if tid == 0:                                         # the touched rows, each once
        n_rows, n_episode_terms = 0, 0
        if episode and used > 0:
            n_episode_terms = _episode_run(used, (ep_info, ep_action, ep_adv), base_t, values, row0,  # noqa: F821
                                           behaviour, value_sums, draws, (t_row, t_action, t_weight, t_adv, t_pi0),
                                           start)
            for j in range(start, start + n_episode_terms):
                n_rows = _touch(t_row[j], touched, rows_u, n_rows)  # noqa: F821
        for n in range(lanes):
            if point_terms[n] > 0:
                n_rows = _touch(point_row[n], touched, rows_u, n_rows)  # noqa: F821
        n_rows_shared[0], n_rows_shared[1] = n_rows, n_episode_terms
    cuda.syncthreads()
    n_rows, n_episode_terms = n_rows_shared[0], n_rows_shared[1]
    every_row = negative_zero[0] != 0 or not rates_finite
    expd_r, shifted_r = expd[r * row_cap:(r + 1) * row_cap], shifted[r * row_cap:(r + 1) * row_cap]
    for e in range(epochs):
        table = probs if e > 0 else behaviour
        for j in range(tid, n_rows, width):
            row = rows_u[j]
            if e > 0:
                for a in range(flat.shape[1]):
                    expd_r[j, a] = exp_scalar(shifted_r[j, a])  # noqa: F821
                _softmax_row(expd_r, j, legal, n_info, row, probs)  # noqa: F821
            for a in range(flat.shape[1]):
                grad[row, a] = 0.0
            terms_seen, clipped_seen = 0, 0
            for q in range(start, start + n_episode_terms):     # a ppo run's terms, in term order
                if t_row[q] == row:
                    clipped = _term_gradient(q, (t_row, t_action, t_weight, t_adv, t_pi0), table, grad,  # noqa: F821
                                             upper, lower)
                    terms_seen += 1
                    clipped_seen += 1 if clipped else 0
            for n in range(lanes):                       # this row's terms, in term order
                if point_row[n] == row:
                    for s in range(point_terms[n]):
                        clipped = _term_gradient((base_t + n) * width_max + s,  # noqa: F821
                                                 (t_row, t_action, t_weight, t_adv, t_pi0), table, grad, upper, lower)
                        terms_seen += 1
                        clipped_seen += 1 if clipped else 0
            cuda.atomic.add(counts, (TERMS, r), terms_seen)  # noqa: F821
            cuda.atomic.add(counts, (CLIPPED, r), clipped_seen)  # noqa: F821
        cuda.syncthreads()
        if every_row:
            for row in range(row0 + tid, row0 + n_info, width):
                _update_row(flat, row, rates[r], grad, touched[row])  # noqa: F821
        else:
            for j in range(tid, n_rows, width):
                _update_row(flat, rows_u[j], rates[r], grad, True)  # noqa: F821
        cuda.syncthreads()
        for j in range(tid, n_rows, width):
            _shift_row(flat, legal, n_info, rows_u[j], shifted_r, j)  # noqa: F821
        cuda.syncthreads()
    any_episode = False                                  # the torch path moves the whole value table then
    for q in range(kind.shape[0]):
        any_episode = any_episode or (kind[q] == OTHER_KIND and active[q])  # noqa: F821
    if any_episode:
        for i in range(row0 + tid, row0 + n_info, width):
            _update_values(values, value_sums, value_rate, i)  # noqa: F821
    if proximal and active[r]:
        for i in range(tid, n_info, width):
            drawn = draws[row0 + i] if episode else 0.0  # a ppo run's draws are its visits
            for n in range(lanes):
                drawn += 1.0 if point_row[n] == row0 + i else 0.0
            draws[row0 + i] = drawn
            _pull_state(flat, magnet, row0 + i, alpha[r], rates[r], drawn, n_points, kappa)  # noqa: F821
    if tid == 0:
        if bl_on > 0 and not episode and lanes > 0:
            _baseline_updates(bl_values, bl_counts, r, rec_cell, rec_target, rec_len, base_t, lanes,  # noqa: F821
                              bl_floor)
        if active[r]:
            counts[ITERATIONS, r] += 1  # noqa: F821
        if budget >= 0 and counts[PHYSICAL, r] >= budget:  # noqa: F821
            spent[r] = True


@lru_cache(maxsize=None)
def _kernels() -> dict:
    """The four compiled kernels (built on first use), by name."""
    bodies = {"rows": _rows_body, "law": _law_block, "points": _points_body, "update": _update_block}
    namespace = dict(device_functions(tuple(bodies.values())), cuda=cuda, MAX_STATES=MAX_STATES,
                     MAX_POINTS=MAX_POINTS, UNUSED=e.UNUSED)
    return {name: cuda.jit(types.FunctionType(body.__code__, namespace, f"learners_{name}"))
            for name, body in bodies.items()}


def _threads() -> int:
    """Threads in a run's block: `THREADS_PER_BLOCK` on a GPU, `SIMULATOR_THREADS` under the simulator."""
    from numba import config
    return SIMULATOR_THREADS if config.ENABLE_CUDASIM else THREADS_PER_BLOCK


def _launch(name: str, blocks: int, per_block: int, stream, *args) -> None:
    """Kernel `name` on `blocks` blocks of `per_block` threads, queued on `stream` (no wait for the GPU)."""
    with warnings.catch_warnings():                    # small grids leave the GPU idle; numba says so
        warnings.filterwarnings("ignore", message=".*(occupancy|Grid size)")
        _kernels()[name][max(1, blocks), per_block, stream](*args)


def _per_item(name: str, items: int, stream, *args) -> None:
    """Kernel `name` with one thread per item."""
    per_block = max(1, min(THREADS_PER_BLOCK, items))
    _launch(name, -(-items // per_block), per_block, stream, *args)


def _as_kernel_array(t: torch.Tensor):
    """A learners' tensor as a kernel argument: its device memory on CUDA, its NumPy view on the CPU (where only
    the simulator runs the kernels; it copies the view in and back)."""
    return cuda.as_cuda_array(t) if t.is_cuda else t.numpy()


class CudaStep:
    """Device buffers and static tables of one `Learners` object, and its `step`."""

    def __init__(self, learners) -> None:
        self.learners = L = learners
        game, s = L.game, L.schedule
        r, n_info, a, n = len(L.runs), len(game.infostates), game.num_actions, s.decision_points
        if n_info > MAX_STATES or n > MAX_POINTS:
            raise ValueError(f"the fused GPU engine takes at most {MAX_STATES} information states and "
                             f"{MAX_POINTS} decision points, got {n_info} and {n}.")
        d, (sf, info, tree) = game_data(game), kernel_tables(game)
        episodes = any(_KIND[arm.samples] == k.OTHER_KIND for arm in L.arms)
        # a point's term slots: its lanes, or (ppo) a hand's decisions, at most the game's steps
        self.shape, self.width, t = (r, n_info, a), max(a, s.group_size, d["steps"] if episodes else 0), r * n
        put, empty = cuda.to_device, cuda.device_array
        self.sf = tuple(put(v) if isinstance(v, np.ndarray) else v for v in sf)
        self.info = tuple(put(v) if isinstance(v, np.ndarray) else v for v in info)
        self.tree = tuple(put(v) if isinstance(v, np.ndarray) else v for v in tree)
        self.level_starts = put(d["level_starts"])
        self.info_legal, self.tags, self.event = put(np.ascontiguousarray(d["info_legal"])), put(_TAGS), d["event"]
        self.kind = put(np.array([_KIND[arm.samples] for arm in L.arms], dtype=np.int64))
        self.runs = tuple(put(np.array([getattr(arm, f) for arm in L.arms]))
                          for f in ("share_hidden", "share_chance", "updates"))
        rows = r * n_info
        self.shifted, self.expd, self.behaviour, self.probs, self.grad = (empty((rows, a)) for _ in range(5))
        self.cdf, self.last = empty((rows, a), np.int64), empty(rows, np.int64)
        self.x, self.weights = empty((r, d["num_sequences"])), empty((rows, game.num_cards))
        self.points, self.kept, self.active = empty((r, n), np.int64), empty(r, np.int64), empty(r, np.bool_)
        self.hid_cum, self.hid_last = empty((t, game.num_cards)), empty(t, np.int64)
        self.scratch_i, self.scratch_u = empty((t, 7, self.width), np.int64), empty((t, 1, self.width), np.uint64)
        self.scratch_f = empty((t, 2, self.width))
        self.point_counts, self.wrote = empty((len(FIELDS), t), np.int64), empty(t, np.int64)
        self.terms = (empty(t * self.width, np.int64), empty(t * self.width, np.int64), empty(t * self.width),
                      empty(t * self.width), empty(t * self.width))
        # a run's touched rows: at most one per decision point, or (ppo) per transition and state
        self.row_cap = max(n, min(n_info, n * d["steps"])) if episodes else n
        self.touched, self.rows_expd = empty(rows, np.bool_), empty((r * self.row_cap, a))
        self.rows_shifted = empty((r * self.row_cap, a))
        self.hand = (empty((t, d["steps"]), np.int64), empty((t, d["steps"]), np.int64), empty((t, d["steps"])))
        self.value_sums = (cuda.to_device(np.zeros(rows)), cuda.to_device(np.zeros(rows)))
        # the history baseline's path records, a record row per (run, decision point) (`learning.baseline`)
        self.bl_on, self.rec_cell, self.rec_target, self.rec_len, utility, terminal = kernel_buffers(
            game, s.baseline, t, max(a, s.group_size), d["steps"], empty)
        self.cell_utility, self.cell_terminal = put(utility), put(terminal)
        self.law = DECISION_LAWS.index(s.decision_law)
        self.negative_zero = torch.zeros(1, dtype=torch.int64, device=L.device)
        self.base = torch.zeros(r, dtype=torch.int64, device=L.device)
        self.cumulative = torch.as_tensor(L._cumulative, device=L.device).clone()
        self._host_view = False            # the host's average-policy sums were handed out: take them back
        self._prefixes: dict[int, tuple] = {}
        self._rates_at, self._rates, self._rates_finite = None, None, True
        self._arrays: dict[str, tuple] = {}
        self.block_t = link_ledger(L.ledger)

    def _array(self, name: str, source: torch.Tensor, shape: tuple | None = None, dtype=None):
        """`source` (viewed with `shape` and `dtype`) as a kernel argument, made once per tensor: a view made
        anew each step would be a new object, so the cache holds the learners' tensor itself (they may replace a
        tensor, never resize it)."""
        held = self._arrays.get(name)
        if held is None or held[0] is not source:
            view = source if shape is None else source.view(shape)
            held = self._arrays[name] = (source, _as_kernel_array(view if dtype is None else view.view(dtype)))
        return held[1]

    def device_cumulative(self) -> torch.Tensor:
        """The average-policy sums [R, n_info, A] on the device (writes into the host copy handed out taken back
        first); the next step reads what is written into it."""
        self._take_host_writes()
        return self.cumulative

    def _take_host_writes(self) -> None:
        L = self.learners
        if self._host_view:
            self.cumulative.copy_(torch.as_tensor(L._cumulative, device=L.device))
            self._host_view = False

    def host_cumulative(self) -> np.ndarray:
        """The average-policy sums [R, n_info, A] on the host (`Learners.cumulative`); writes into the array
        returned reach the device at the next step."""
        host = self.learners._cumulative
        np.copyto(host, self.cumulative.cpu().numpy())
        self._host_view = True
        return host

    def _prefix_table(self, split: int) -> tuple:
        """Device copies of the runs' key states after (run, split): root, hidden, chance, policy (per split)."""
        if split not in self._prefixes:
            self._prefixes[split] = tuple(cuda.to_device(c) for c in prefix_columns(self.learners.seeds, split))
        return self._prefixes[split]

    def _rates_now(self):
        """[R] the runs' step sizes on the device, rebuilt only when the divisor changes."""
        divisor = self.learners.rate_divisor
        if self._rates_at != divisor:
            rates = self.learners.rates().cpu().numpy()
            self._rates, self._rates_at = cuda.to_device(rates), divisor
            self._rates_finite = bool(np.isfinite(rates).all())
        return self._rates

    def _per_run_schedule(self):
        """Each run's average-policy weight and pull strength this iteration, on the device.  They depend on the
        run's own iteration count only with `average_power` or `alpha_decay` (the host then reads the ledger: a wait
        for the GPU); otherwise they are constants, uploaded once."""
        s = self.learners.schedule
        if s.average_power or s.alpha_decay != "constant":
            own = self.learners.own_iterations()
            return cuda.to_device(s.average_weights(own)), cuda.to_device(s.alphas(own))
        key = (len(self.learners.runs), float(s.proximal_alpha))
        if getattr(self, "_constant_key", None) != key:
            zero = np.zeros(len(self.learners.runs), dtype=np.int64)
            self._constant = (cuda.to_device(s.average_weights(zero)), cuda.to_device(s.alphas(zero)))
            self._constant_key = key
        return self._constant

    def _sync_state(self, group_base: torch.Tensor | None) -> None:
        """The learners' tensors as the kernels take them: ledger block, average-policy sums handed back, contiguous
        logits, this iteration's group ids."""
        L, n = self.learners, self.learners.schedule.decision_points
        if L.ledger.counts[FIELDS[0]].data_ptr() != self.block_t.data_ptr():
            self.block_t = link_ledger(L.ledger)       # the ledger was replaced
        self._take_host_writes()
        if not L.logits.is_contiguous():
            L.logits = L.logits.contiguous()
        if group_base is None:
            self.base.fill_(L.iteration * n)
        else:
            self.base.copy_(group_base.to(device=L.device, dtype=torch.int64))
        self.negative_zero.zero_()

    def _stream(self):
        """torch's current stream as the kernels' (ordered with the torch operations that fill their inputs)."""
        device = self.learners.device
        return engine_cuda.launch_stream(device) if device.type == "cuda" else 0

    def step(self, group_base: torch.Tensor | None, split: int) -> None:
        L, s, (r, n_info, a) = self.learners, self.learners.schedule, self.shape
        self._sync_state(group_base)
        flat, bits = self._array("flat", L.logits, (-1, a)), self._array("bits", L.logits, (-1, a), torch.int64)
        magnet, draws, values = (self._array(name, t, (-1, a) if name == "magnet" else (-1,))
                                 for name, t in (("magnet", L.magnet), ("draws", L.draws), ("values", L.values)))
        spent, block, base, cumulative, negative_zero = (self._array(name, t) for name, t in (
            ("spent", L.spent), ("block", self.block_t), ("base", self.base), ("cumulative", self.cumulative),
            ("negative_zero", self.negative_zero)))
        root_p, hidden_p, chance_p, policy_p = self._prefix_table(split)
        rates, budget = self._rates_now(), -1 if s.budget is None else int(s.budget)
        average_weights, alphas = self._per_run_schedule()
        bl_values, bl_counts = (self._array(name, t) for name, t in (("bl_values", L.baseline_values),
                                                                      ("bl_counts", L.baseline_counts)))
        law, stream = (self.behaviour, self.cdf, self.last), self._stream()
        _per_item("rows", r * n_info, stream, flat, bits, self.info_legal, n_info, self.shifted, self.expd, *law,
                  negative_zero)
        plan, parent_seq, cell_start, cell_hist, h_own, h_opp, chance = self.sf
        _launch("law", r, _threads(), stream, L.iteration < s.iterations, spent, self.active, self.kind,
                self.behaviour, cumulative, plan, self.level_starts, parent_seq, cell_start, cell_hist, h_own, h_opp,
                chance, self.x, self.weights, root_p, _U(_TAGS[0]), base, self.points, self.law, n_info,
                s.group_size, budget, self.tree[6], self.info[0], block, self.kept, average_weights)
        _per_item("points", r * s.decision_points, stream, self.active, self.kind, self.kept, *self.runs, s.group_size,
                  self.width, hidden_p, chance_p, policy_p, self.tags, self.event, base, self.points, self.weights,
                  self.hid_cum, self.hid_last, *law, *self.info, *self.tree, self.scratch_i, self.scratch_u,
                  self.scratch_f, self.point_counts, *self.terms, self.wrote, root_p, values, float(s.gae_lambda),
                  *self.hand, self.bl_on, bl_values, self.cell_terminal, self.cell_utility, self.rec_cell,
                  self.rec_target, self.rec_len)
        _launch("update", r, _threads(), stream, self.active, self.kept, self.points, self.point_counts, self.wrote,
                self.width, *self.terms, self.touched, n_info, s.epochs, self.behaviour, self.probs, self.rows_expd,
                self.rows_shifted, self.grad, flat, self.info_legal, rates, 1 + s.epsilon, 1 - s.epsilon, block,
                negative_zero, self._rates_finite, bool(s.proximal), magnet, alphas,
                float(s.proximal_kappa), draws, budget, spent, self.kind, values, self.value_sums,
                float(s.value_rate), *self.hand, self.row_cap, self.bl_on, bl_values, bl_counts, self.rec_cell,
                self.rec_target, self.rec_len, float(s.baseline_floor))
        L.iteration += 1
