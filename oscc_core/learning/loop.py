"""One training loop for every learner arm, vectorised over decision points and over runs.

A *run* is one (arm, seed); runs that share a schedule are stacked, so one
`Learners.step()` advances all of them.  One iteration t of every run
(DESIGN section 8):

1. freeze the behaviour policy pi0 = pi_t (softmax of the run's logits);
2. draw N decision points from the decision law (`Schedule.decision_law`:
   the paper's on-policy visitation, or the counterfactual or uniform law of
   `learning.proximal`), from the `root` stream with split = train and
   group = t * N + k (ppo: N hands from the deal);
3. build the arm's samples (`samples`) and roll every lane to the end with
   pi_t for both seats, in one `play` call for all runs;
4. freeze returns (acting player's chips) and advantages; with a baseline
   (`Schedule.baseline`), each branch's return is first corrected by the
   run's history baseline, which then learns from the iteration's paths
   (`learning.baseline`);
5. take E full-batch gradient steps theta += eta * grad on the arm's
   clipped surrogate (plain SGD on the logits; `objectives`);
6. with a proximal pull (`Schedule.proximal_alpha` > 0), pull each drawn
   state's logits toward the magnet and move the magnet
   (`learning.proximal`; with `alpha_decay`, alpha_t falls with the run's
   own iteration count);
7. accumulate the average policy with own-reach weights, as CFR does
   (the policies pi_0, ..., pi_{T-1} that were played), iteration t
   weighted by (t + 1) ** `average_power` (power 0, the default: uniformly).

A physical call is one lane rolled from its decision point to the end of the
hand (one branch rollout); for ppo, one hand played from the deal to the end.

With a budget (physical calls per run), a run uses, in each iteration, the
longest prefix of its groups that stays within the budget, and stops after
the first iteration whose next group would pass it (so its realised calls
fall short of the budget by less than one group's calls); every count is in
the run's `Ledger`.

Three engines compute the iteration, bitwise the same numbers: "torch"
(tensor operations on any device, the reference), "fused" (`learning.fused`:
compiled CPU kernels) and "fused_cuda" (`learning.fused_cuda`: the same
kernels' source compiled for the GPU); "auto"
picks fused on the CPU and fused_cuda on CUDA where numba's CUDA target is
installed.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import torch

from oscc_core.engine import rng
from oscc_core.engine.rollout import play
from oscc_core.games import Game, get_game
from oscc_core.learning import episodes as ep
from oscc_core.learning.arms import ENUMERATE, EPISODE, SAMPLE, get_learner_arm
from oscc_core.learning import baseline as bl
from oscc_core.learning import proximal
from oscc_core.learning.ledger import Ledger
from oscc_core.learning.objectives import Terms, clipped_gradient, group_terms
from oscc_core.learning.ordered_sum import ordered_index_add
from oscc_core.learning.samples import Context, branch_lanes, episode_lanes, sampled_lanes
from oscc_core.learning.tabular import legal_mask, masked_softmax, stacked_cdf, to_numpy
from oscc_core.learning.visitation import decision_law, draw_decision_points

TRAIN = rng.SPLITS["train"]
ALPHA_DECAYS = ("constant", "inverse_sqrt")
#: The schedule's options added after the committed studies, with the defaults that leave the iteration as it was.
LATER_DEFAULTS = {"baseline": bl.NONE, "baseline_floor": 0.2, "alpha_decay": "constant", "alpha_horizon": 1.0,
                  "average_power": 0}


@dataclass(frozen=True)
class Schedule:
    """Hyperparameters shared by every run of a batch (units: chips for returns, logits for eta)."""

    iterations: int = 40             # T: iterations (an upper bound when a budget is set)
    decision_points: int = 128       # N decision points (ppo: hands) per iteration
    epochs: int = 4                  # E full-batch steps per iteration
    epsilon: float = 0.2             # clip range
    learning_rate: float = 1.0       # eta, plain SGD on the logits
    group_size: int = 4              # G sampled actions (grpo)
    budget: int | None = None      # physical calls per run; None: exactly `iterations` iterations
    gae_lambda: float = 0.95         # ppo
    value_rate: float = 0.5          # ppo: V(I) moves this share of the way to the mean lambda-return
    decision_law: str = proximal.ON_POLICY   # law of the decision points (ppo plays hands from the deal)
    proximal_alpha: float = 0.0      # strength of the pull toward the magnet (0: off)
    proximal_kappa: float = 0.0      # rate at which the magnet follows the logits (0: the uniform policy)
    # Options added after the committed studies (issue 33); at their defaults they change nothing, and a schedule
    # that leaves them all there keeps them out of `as_dict` (so every record written before them keeps its bytes).
    baseline: str = bl.NONE          # control variates on the rollouts' sampled steps (`learning.baseline`)
    baseline_floor: float = 0.2      # a baseline cell moves at least this share of the way to each sample
    alpha_decay: str = "constant"    # "inverse_sqrt": the pull's alpha_t = alpha / sqrt((t + t0) / t0)
    alpha_horizon: float = 1.0       # t0 of alpha_decay (iterations)
    average_power: int = 0           # the average policy weighs iteration t (0-based) by (t + 1) ** power

    def __post_init__(self):
        proximal.check_decision_law("decision_law", self.decision_law)
        bl.check_baseline("baseline", self.baseline)
        if self.alpha_decay not in ALPHA_DECAYS:
            raise ValueError(f"alpha_decay must be one of {', '.join(ALPHA_DECAYS)}, got {self.alpha_decay!r}.")
        for name in ("baseline_floor", "alpha_horizon"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value
                    and (value <= 1 or name == "alpha_horizon") and np.isfinite(value)):
                raise ValueError(f"{name} must be a number in {'(0, 1]' if name == 'baseline_floor' else '(0, inf)'}"
                                 f", got {value!r}.")
        if not (isinstance(self.average_power, int) and not isinstance(self.average_power, bool)
                and 0 <= self.average_power <= 4):
            raise ValueError(f"average_power must be an integer from 0 to 4, got {self.average_power!r}.")
        for name in ("proximal_alpha", "proximal_kappa"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
                    and np.isfinite(value)):
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}.")
        if self.proximal_kappa > 1:
            raise ValueError(f"proximal_kappa must be at most 1 (the magnet moves a share of the way), got "
                             f"{self.proximal_kappa!r}.")

    @property
    def proximal(self) -> bool:
        """Whether the iteration pulls toward a magnet (or moves one)."""
        return self.proximal_alpha > 0 or self.proximal_kappa > 0

    def as_dict(self) -> dict:
        """The fields as a dict; the options added after the committed studies (`LATER_DEFAULTS`) only when one of
        them is away from its default: a record of a schedule that uses none of them is the one it always was."""
        out = asdict(self)
        if all(out[name] == default for name, default in LATER_DEFAULTS.items()):
            for name in LATER_DEFAULTS:
                del out[name]
        return out

    def average_weights(self, iterations: np.ndarray) -> np.ndarray:
        """[R] float64 weights (t + 1) ** average_power of iteration t = `iterations` (each run's own count so far)
        in the average policy, as products of integers (exact)."""
        base = np.asarray(iterations, dtype=np.float64) + 1.0
        out = np.ones_like(base)
        for _ in range(self.average_power):
            out = out * base
        return out

    def alphas(self, iterations: np.ndarray) -> np.ndarray:
        """[R] float64 the pull's alpha at iteration t = `iterations` of each run (`alpha_decay`)."""
        t = np.asarray(iterations, dtype=np.float64)
        if self.alpha_decay == "constant":
            return np.full_like(t, float(self.proximal_alpha))
        t0 = float(self.alpha_horizon)
        return float(self.proximal_alpha) / np.sqrt((t + t0) / t0)


@dataclass(frozen=True)
class RunSpec:
    """One run: its arm, its seed (the streams' run id) and, when the arms of a batch use different step sizes,
    its own eta (None: the schedule's)."""

    arm: str
    seed: int
    learning_rate: float | None = None

    @property
    def key(self) -> str:
        return f"{self.arm}/{self.seed}"


ENGINES = ("auto", "torch", "fused", "fused_cuda")
#: The tensors of a run's state that a snapshot copies (with the average-policy sums and the ledger).
STATE = ("logits", "values", "magnet", "spent", "baseline_values", "baseline_counts")


class Learners:
    """The stacked state of R runs: logits [R, n_info, A], values [R, n_info], average-policy sums, ledger."""

    def __init__(self, game: str | Game, runs: list[RunSpec], schedule: Schedule, device="cpu",
                 logits: torch.Tensor | None = None, values: torch.Tensor | None = None,
                 engine: str = "auto") -> None:
        self.game = get_game(game)
        self.runs, self.schedule, self.device = list(runs), schedule, torch.device(device)
        self.arms = [get_learner_arm(r.arm) for r in self.runs]
        n_info, a = len(self.game.infostates), self.game.num_actions
        shape = (len(self.runs), n_info, a)
        self.logits = torch.zeros(shape, dtype=torch.float64, device=self.device) if logits is None else logits
        self.values = torch.zeros(shape[:2], dtype=torch.float64, device=self.device) if values is None else values
        self.magnet = torch.zeros(shape, dtype=torch.float64, device=self.device)     # logits of the pull's magnet
        self.draws = torch.zeros(shape[:2], dtype=torch.float64, device=self.device)  # this iteration's draws per state
        self._cumulative = np.zeros(shape)     # the average-policy sums (`cumulative`)
        cells = bl.table_size(self.game) if schedule.baseline != bl.NONE else 0
        # the history baseline's values (player 0's chips) and sample counts per cell (`learning.baseline`)
        self.baseline_values = torch.zeros((len(self.runs), cells), dtype=torch.float64, device=self.device)
        self.baseline_counts = torch.zeros((len(self.runs), cells), dtype=torch.float64, device=self.device)
        self.legal = legal_mask(self.game, self.device)
        self.seeds = torch.tensor([r.seed for r in self.runs], dtype=torch.int64, device=self.device)
        self.ledger = Ledger(len(self.runs), self.device)
        self.spent = torch.zeros(len(self.runs), dtype=torch.bool, device=self.device)   # budget reached
        self.iteration = 0
        self.rate_divisor = 1.0          # eta_t = eta / rate_divisor (a decaying step size sets it)
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}.")
        self._fused = None
        kernel = self._kernel(engine)
        self._engine = kernel or "torch"
        if kernel is not None:
            self.logits = self.logits.contiguous()             # the kernels update it in place
            if kernel == "fused_cuda":
                from oscc_core.learning.fused_cuda import CudaStep   # imports numba's CUDA target only when used
                self._fused = CudaStep(self)
            else:
                from oscc_core.learning.fused import FusedStep  # imports numba only when it is used
                self._fused = FusedStep(self)

    def _kernel(self, engine: str) -> str | None:
        """Which compiled engine runs `engine` here: "fused" (CPU kernels), "fused_cuda" (GPU kernels) or None
        (the torch path).  "auto" and "fused" take the CPU kernels on the CPU and the GPU kernels on CUDA, where
        numba's CUDA target is present; "fused_cuda" asks for the GPU kernels on any device (on the CPU, numba's
        CUDA simulator)."""
        if engine == "torch":
            return None
        float64 = self.logits.dtype == torch.float64
        if engine == "fused_cuda" or self.device.type == "cuda":
            from oscc_core.engine import fused_cuda
            ready = float64 and fused_cuda.available()
            if engine != "auto" and not ready:
                raise ValueError(f"the {engine} engine on {self.device.type} needs float64 logits and "
                                 "numba's CUDA target (pip install numba-cuda).")
            return "fused_cuda" if ready else None
        if engine == "fused" and not (self.device.type == "cpu" and float64):
            raise ValueError("the fused engine runs on the CPU with float64 logits only.")
        return "fused" if self.device.type == "cpu" and float64 else None

    @property
    def engine(self) -> str:
        """The engine that computes each iteration: "torch", "fused" or "fused_cuda"."""
        return self._engine

    @property
    def cumulative(self) -> np.ndarray:
        """[R, n_info, A] the average-policy sums on the host (own-reach weighted pi_t, summed over iterations).

        The GPU engine keeps them on the device and copies them here when
        asked; what is written into the array returned goes back before the
        next iteration."""
        if self.engine == "fused_cuda":
            return self._fused.host_cumulative()
        return self._cumulative

    # ----- the iteration ------------------------------------------------------------------
    def rates(self) -> torch.Tensor:
        """[R] each run's step size this iteration: its own eta (else the schedule's) / `rate_divisor`."""
        s = self.schedule
        return torch.tensor([(s.learning_rate if r.learning_rate is None else r.learning_rate) / self.rate_divisor
                             for r in self.runs], dtype=torch.float64, device=self.device)

    def most_calls_per_iteration(self) -> np.ndarray:
        """[R] the most physical calls one iteration can spend on each run: N decision points times a point's
        most (one per legal action where every branch is enumerated, G sampled branches, one call per ppo hand).
        The study skips its snapshots while no run can reach its budget within this many calls."""
        widest = int(self.game.infostates.legal.sum(axis=1).max())
        per_point = {ENUMERATE: widest, SAMPLE: self.schedule.group_size, EPISODE: 1}
        return np.array([per_point[arm.samples] for arm in self.arms], dtype=np.int64) * self.schedule.decision_points

    def active(self) -> torch.Tensor:
        """[R] runs that still take part: budget left (or iterations left when there is no budget)."""
        return ~self.spent & (self.iteration < self.schedule.iterations)

    def behaviour_logits(self) -> torch.Tensor:
        """[R, S, A] the logits an iteration collects with and starts its update from: the current ones (a
        subclass may lag them, `learning.lagged`)."""
        return self.logits

    def step(self, group_base: torch.Tensor | None = None, split: int = TRAIN) -> None:
        """One iteration of every active run (group ids group_base + k; default t * N)."""
        if self._fused is not None:
            self._fused.step(group_base, split)
            return
        s, n = self.schedule, self.schedule.decision_points
        active = self.active()
        behaviour = masked_softmax(self.behaviour_logits(), self.legal)
        tables = to_numpy(behaviour)
        law = decision_law(self.game, tables, s.decision_law)
        on = active.cpu().numpy()
        if s.average_power:
            weights = s.average_weights(self.own_iterations())
            self.cumulative[on] += (law.own_reach[on, :, None] * tables[on]) * weights[on, None, None]
        else:
            self.cumulative[on] += law.own_reach[on, :, None] * tables[on]
        base = torch.full_like(self.seeds, self.iteration * n) if group_base is None else group_base
        groups = base.unsqueeze(1) + torch.arange(n, device=self.device)
        points = draw_decision_points(self.game, law, self.seeds, split, groups)
        cdf, last = stacked_cdf(behaviour)
        self.draws.zero_()
        self._update(self._collect(points, groups, split, active, cdf, last, behaviour))
        self._pull(active)
        self.ledger.add("iterations", torch.arange(len(self.runs), device=self.device), active.to(torch.int64))
        if s.budget is not None:
            self.spent |= self.ledger.counts["physical_calls"] >= s.budget
        self.iteration += 1

    def own_iterations(self) -> np.ndarray:
        """[R] int64 each run's iterations so far (its own count: a study's runs may differ, `study._train`)."""
        return self.ledger.counts["iterations"].cpu().numpy()

    def alphas(self) -> torch.Tensor:
        """[R] each run's pull strength alpha this iteration (`Schedule.alpha_decay`)."""
        return torch.as_tensor(self.schedule.alphas(self.own_iterations()), device=self.device)

    def _update(self, terms: Terms) -> None:
        """E full-batch steps theta += eta * grad of the clipped surrogate of `terms`."""
        s = self.schedule
        flat = self.logits.view(-1, self.logits.shape[-1])
        legal = self.legal.repeat(len(self.runs), 1)
        run_of_term = terms.row // len(self.game.infostates)
        rate = self.rates().repeat_interleave(len(self.game.infostates)).unsqueeze(1)   # [R * n_info, 1]
        for _ in range(s.epochs):
            grad, clipped = clipped_gradient(flat, legal, terms, s.epsilon)
            flat += rate * grad
            self.ledger.add("clipped_terms", run_of_term, clipped.to(torch.int64))
            self.ledger.add("terms", run_of_term)

    def _pull(self, active: torch.Tensor) -> None:
        """Step 6: the proximal pull of the drawn states and the magnet's move, for the active runs."""
        s = self.schedule
        if not s.proximal:
            return
        rows = torch.nonzero(active).squeeze(1)
        logits, magnet = self.logits[rows], self.magnet[rows]
        if s.proximal_alpha > 0:
            alpha = s.proximal_alpha if s.alpha_decay == "constant" else self.alphas()[rows]
            proximal.pull(logits, magnet, self.draws[rows], alpha, self.rates()[rows], s.decision_points)
        proximal.move_magnet(magnet, logits, s.proximal_kappa)
        self.logits[rows], self.magnet[rows] = logits, magnet

    def _collect(self, points, groups, split, active, cdf, last, behaviour) -> Terms:
        """Build every arm's lanes, play them, and return the surrogate terms of all runs."""
        parts = []
        for kind in (ENUMERATE, SAMPLE, EPISODE):
            rows = [r for r, a in enumerate(self.arms) if a.samples == kind and bool(active[r])]
            if rows:
                parts.append(self._collect_kind(kind, torch.tensor(rows, device=self.device), points, groups,
                                                split, cdf, last, behaviour))
        if not parts:
            empty = torch.zeros(0, dtype=torch.int64, device=self.device)
            return Terms(empty, empty, empty.double(), empty.double(), empty.double())
        return Terms.cat(parts)

    def _context(self, rows, points, groups, split, keep, cdf, last) -> Context:
        sub = type(points)(*(getattr(points, f).index_select(0, rows) for f in points.__dataclass_fields__))
        return Context(self.game, rows, self.seeds[rows], split, groups[rows], keep, sub, cdf, last,
                       len(self.game.infostates))

    def _collect_kind(self, kind, rows, points, groups, split, cdf, last, behaviour) -> Terms:
        s = self.schedule
        t = self.game.tables(self.device)
        nodes = points.node.index_select(0, rows)
        calls = {ENUMERATE: t["num_legal"][nodes], SAMPLE: torch.full_like(nodes, s.group_size),
                 EPISODE: torch.zeros_like(nodes)}[kind]
        keep = self._within_budget(rows, calls)
        ctx = self._context(rows, points, groups, split, keep, cdf, last)
        if kind == EPISODE:
            return self._episodes(ctx, behaviour)
        if kind == ENUMERATE:
            share = [torch.tensor([getattr(self.arms[int(r)], f) for r in rows], device=self.device)
                     for f in ("share_hidden", "share_chance")]
            lanes = branch_lanes(ctx, *share)
        else:
            lanes = sampled_lanes(ctx, s.group_size)
        trace = [] if s.baseline != bl.NONE else None
        out = play(self.game, lanes.node, lanes.cards, lanes.public, lanes.policy_keys, lanes.chance_keys,
                   cdf, last, table_offset=lanes.offset, trace=trace)
        sign = 1 - 2 * ctx.points.player.unsqueeze(-1).expand_as(lanes.mask)[lanes.mask]
        returns = torch.zeros(lanes.mask.shape, dtype=torch.float64, device=self.device)
        run = rows[lanes.run]
        if trace is None:
            returns[lanes.mask] = (sign * out.utility_p0).to(torch.float64)
        else:
            returns[lanes.mask] = sign * self._corrected(ctx, lanes, run, out, trace, behaviour)
        self.ledger.add("physical_calls", run)
        self.ledger.add("transitions", run, 1 + out.decisions)
        self.ledger.add("decisions", run, out.decisions + (0 if kind == ENUMERATE else 1))
        self.ledger.add("illegal", run, out.illegal.to(torch.int64))
        self.ledger.add("root_draws", rows, keep.sum(1))
        self.ledger.add("groups", rows, keep.sum(1))
        self.draws[rows] += proximal.draw_counts(ctx.points.infostate, keep, self.draws.shape[1])
        updates = torch.tensor([self.arms[int(r)].updates for r in rows], device=self.device)
        mask = lanes.mask & updates.view(-1, 1, 1)
        info_rows = ctx.table_rows(ctx.points.infostate).unsqueeze(-1)
        action = lanes_action_grid(lanes)
        pi0 = behaviour.view(-1, behaviour.shape[-1])[info_rows.expand_as(action), action.clamp(min=0)]
        return group_terms(info_rows, action.clamp(min=0), returns, mask, pi0, keep.sum(1), kind == SAMPLE)

    def _corrected(self, ctx, lanes, run, out, trace, behaviour) -> torch.Tensor:
        """[L] the lanes' corrected values (player 0's chips, `learning.baseline`), the tables then moved toward
        their path's targets."""
        tables = bl.Tables(self.game, self.device)
        flat = behaviour.view(-1, behaviour.shape[-1])
        every = self.schedule.baseline == bl.HISTORY
        v, records = bl.corrected(tables, self.baseline_values, run, lanes.cards[:, 0], lanes.cards[:, 1],
                                  lanes.public, lanes.node, out.utility_p0, trace, flat, lanes.offset, chance=every)
        player = ctx.points.player.unsqueeze(-1).expand_as(lanes.mask)[lanes.mask]
        weights = ctx.points.hidden_weights.unsqueeze(2).expand(-1, -1, lanes.mask.shape[2], -1)[lanes.mask]
        own = torch.where(player == 0, lanes.cards[:, 0], lanes.cards[:, 1])
        root = bl.root_correction(tables, self.baseline_values, run, player, own, lanes.cards[:, 0],
                                  lanes.cards[:, 1], lanes.public, lanes.node, weights)
        bl.update(self.baseline_values, self.baseline_counts, run, records, v, len(v), self.schedule.baseline_floor)
        return v + root if every else v

    def _within_budget(self, rows, calls) -> torch.Tensor:
        """[R', N] the longest prefix of each run's groups whose calls stay within its remaining budget."""
        if self.schedule.budget is None:
            return torch.ones_like(calls, dtype=torch.bool)
        left = self.schedule.budget - self.ledger.counts["physical_calls"].index_select(0, rows)
        keep = torch.cumsum(calls, dim=1) <= left.unsqueeze(1)
        self.spent[rows] |= ~keep.all(dim=1)     # the next group would pass the budget: the run ends here
        return keep

    def _episodes(self, ctx: Context, behaviour) -> Terms:
        s = self.schedule
        lanes = episode_lanes(ctx)
        trace: list = []
        out = play(self.game, lanes.node, lanes.cards, lanes.public, lanes.policy_keys, lanes.chance_keys,
                   *stacked_cdf(behaviour), trace=trace, table_offset=lanes.offset)
        depth = int(self.game.tree.depth.max()) + 1
        tr = ep.transitions(trace, out.utility_p0, torch.as_tensor(self.game.infostates.player, device=self.device),
                            depth)
        run_local = lanes.run
        kept = self._within_budget(ctx.rows, torch.ones_like(ctx.groups))      # one physical call per hand
        tr.info[~kept.view(-1)] = -1
        run = ctx.rows[run_local]
        self.ledger.add("physical_calls", run, kept.view(-1).to(torch.int64))
        self.ledger.add("transitions", run, tr.per_episode)
        self.ledger.add("decisions", run, tr.per_episode)
        self.ledger.add("illegal", run, (out.illegal & kept.view(-1)).to(torch.int64))
        self.ledger.add("root_draws", ctx.rows, kept.sum(1))
        self.ledger.add("groups", ctx.rows, kept.sum(1))
        self.ledger.add("unused_hands", ctx.rows, (~kept).sum(1))
        offset = lanes.offset
        visited = tr.info >= 0
        ordered_index_add(self.draws.view(-1), (offset.unsqueeze(1) + tr.info.clamp(min=0))[visited],
                          torch.ones_like(tr.info, dtype=torch.float64)[visited])
        values = self.values.view(-1)[offset.unsqueeze(1) + tr.info.clamp(min=0)]
        adv = ep.gae(tr, values, s.gae_lambda)
        sums, counts = ep.value_targets(tr, values, adv, offset, self.values.numel())
        flat_values = self.values.view(-1)
        mean_target = sums / counts.clamp(min=1)
        flat_values += torch.where(counts > 0, s.value_rate * (mean_target - flat_values), torch.zeros_like(sums))
        adv = ep.z_scored(adv, tr.valid, run, len(self.runs))
        return ep.episode_terms(tr, adv, offset, behaviour.view(-1, behaviour.shape[-1]), run, len(self.runs))

    # ----- snapshots (the study's budget marks) ---------------------------------------------
    def snapshot(self) -> dict:
        """Copies of everything an iteration changes: logits, values, magnet, average-policy sums, ledger,
        spent runs and the iteration counter (`restore` puts them back, in place).  Each stays where it lives:
        the GPU engine's average-policy sums are copied on the device, so a snapshot per iteration costs no
        transfer."""
        cumulative = self._fused.device_cumulative().clone() if self.engine == "fused_cuda" else \
            self._cumulative.copy()
        return {"logits": self.logits.clone(), "values": self.values.clone(), "magnet": self.magnet.clone(),
                "cumulative": cumulative, "spent": self.spent.clone(), "iteration": self.iteration,
                "baseline_values": self.baseline_values.clone(), "baseline_counts": self.baseline_counts.clone(),
                "ledger": {f: c.clone() for f, c in self.ledger.counts.items()}}

    def restore(self, snap: dict) -> None:
        """Back to the state of `snapshot` (tensors written in place: the fused path holds views of them)."""
        for name in STATE:
            getattr(self, name).copy_(snap[name])
        self._put_cumulative(slice(None), snap["cumulative"])
        for f, c in self.ledger.counts.items():
            c.copy_(snap["ledger"][f])
        self.iteration = snap["iteration"]

    @staticmethod
    def run_part(snap: dict, r: int) -> dict:
        """Run r's own state in a snapshot, copied (what a study keeps of a run its budget cut, in place of the
        whole batch's snapshot); `restore_run` puts it back."""
        def row(x):
            return x[r].copy() if isinstance(x, np.ndarray) else x[r].clone()
        return {**{name: row(snap[name]) for name in STATE + ("cumulative",)},
                "ledger": {f: row(c) for f, c in snap["ledger"].items()}}

    def restore_run(self, part: dict, r: int) -> None:
        """Put run r, and only it, back to the state `part` (`run_part` of a snapshot); the iteration counter is the
        batch's: kept."""
        for name in STATE:
            getattr(self, name)[r] = part[name]
        self._put_cumulative(r, part["cumulative"])
        for f, c in self.ledger.counts.items():
            c[r] = part["ledger"][f]

    def _put_cumulative(self, rows, saved) -> None:
        """The average-policy sums of `rows` (an index or a slice) set to `saved` (a snapshot's copy), where they
        live."""
        if self.engine == "fused_cuda":
            self._fused.device_cumulative()[rows] = saved
        else:
            self._cumulative[rows] = saved

    # ----- results -------------------------------------------------------------------------
    def coverage(self) -> np.ndarray:
        """[R] share of the information states whose logits are still exactly at their start (0): states the
        run never updated (neither a gradient term nor a pull has moved them)."""
        untouched = (self.logits == 0).all(dim=-1).to(torch.float64)
        # Divide by a tensor, not a Python number: CUDA divides by a scalar as a product with its reciprocal,
        # which is not the correctly rounded quotient the CPU gives.
        total = untouched.sum(dim=-1)
        return to_numpy(total / torch.full_like(total, untouched.shape[-1]))

    def average_tables(self) -> np.ndarray:
        """[R, n_info, A] average policies (uniform where a state was never reached by its owner)."""
        total = self.cumulative.sum(axis=2, keepdims=True)
        uniform = self.game.infostates.legal / self.game.infostates.legal.sum(axis=1, keepdims=True)
        return np.where(total > 0, self.cumulative / np.where(total > 0, total, 1.0), uniform[None])

    def last_tables(self) -> np.ndarray:
        return to_numpy(masked_softmax(self.logits, self.legal))


def lanes_action_grid(lanes) -> torch.Tensor:
    """[R', N, S] root action of each cell (-1 where no lane)."""
    grid = torch.full(lanes.mask.shape, -1, dtype=torch.int64, device=lanes.mask.device)
    grid[lanes.mask] = lanes.action
    return grid
