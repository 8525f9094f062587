"""CP-GRPO iterations per second: our learner against a plain OpenSpiel Python loop.

Both run in this one process on the same machine: Leduc, N = 128 decision
points and E = 4 epochs per iteration, learning rate 1, clip 0.2, both
starting from uniform logits and learning as they are timed.  One iteration
(oscc_core.learning.loop) is:

1. the on-policy visitation law of decision histories (deal, decision node)
   under the current softmax policy, and each information state's own reach;
2. N decision points drawn from that law; at each, every legal action is a
   branch, rolled out to the end with the policy for both seats, sharing the
   opponent card and the public card across branches (branch-local policy
   draws);
3. advantages A_i = R_i - mean_i R (acting player's chips);
4. E full-batch steps theta += eta * grad of the behaviour-weighted clipped
   surrogate sum_k pi0(a_k | I_k) / N * min(r_k A_k, clip(r_k) A_k) on the logits;
5. average-policy accumulation: cumulative[I] += own_reach(I) * pi0(. | I).

Ours is `Learners.step()` (one run, cp_grpo, seed 13).  The OpenSpiel loop
does the same work with pyspiel states and dict policies: one walk of the
pyspiel tree per iteration gives both the law (step 1) and the own reaches
(step 5, which uses the same pi0), `random.Random` draws everything else.
This machine is a shared virtual one whose speed drifts, so each side is
timed `--repeats` times, alternating, and the best rate of each is compared.
Also prints the iterations per second of one run of the converging learner
(counterfactual decision points, proximal pull alpha 0.5, kappa 0.1, eta 128:
the study's CP-GRPO choice; the same N and E), and the time of one batched iteration of 2 arms x 5 seeds (cp_grpo
and independent, seeds 13 17 23 29 31) in one `Learners` object.  On the
CPU, `Learners` takes its fused numba path (`oscc_core.learning.fused`,
bitwise the same results as the torch path); `--device cuda` times the same
learners on a GPU (the GPU kernels of `oscc_core.learning.fused_cuda`) and
prints each of our three figures as a ratio to the same figure of the fused
CPU path on this machine, then the study's batch: both learners x four arms
x 30 seeds = 240 runs, one `Learners` of 120 runs per learner (its four
arms; the study's own batches are smaller), all on the GPU kernels, in
run-iterations per second on CUDA and on this machine's CPU, and each
batch's iterations queued back to back (as a study runs them) with the
host's share of that time (on a machine without CUDA the script says so and
exits with status 1).  `--threads N` sets torch's intra-op threads (the few
remaining torch ops, such as exp, are small).  The ratio comes last.

    .venv/bin/python benchmarks/bench_learn.py [--iterations 50] [--openspiel-iterations 10]
        [--batch-iterations 10] [--repeats 5] [--device cpu] [--threads 0] [--study-iterations 5]
"""
from __future__ import annotations

import argparse
import bisect
import itertools
import math
import random
import sys
import time

import pyspiel
import torch

from oscc_core.learning.loop import Learners, RunSpec, Schedule
from oscc_core.learning.study_design import CONVERGING, learner_schedule

GAME = "leduc"
DECISION_POINTS = 128
EPOCHS = 4
LEARNING_RATE = 1.0
EPSILON = 0.2
SEED = 13
BATCH_RUNS = [RunSpec(arm, seed) for arm in ("cp_grpo", "independent") for seed in (13, 17, 23, 29, 31)]
#: The study's batch (`--device cuda`): both learners x the four learned arms x 30 seeds = 240 runs.
STUDY_SEEDS = tuple(range(1, 31))
STUDY_ARMS = ("cp_grpo", "independent", "grpo", "ppo")
TARGET = 150.0
CONVERGING_CHOICE = {"eta": 128.0, "alpha": 0.5, "kappa": 0.1}     # the study's CP-GRPO choice
NO_CUDA = "CUDA is not available on this machine, so --device cuda cannot be timed here; use --device cpu."


def schedule() -> Schedule:
    return Schedule(iterations=10**6, decision_points=DECISION_POINTS, epochs=EPOCHS, learning_rate=LEARNING_RATE,
                    epsilon=EPSILON)


class OpenSpielCPGRPO:
    """The same CP-GRPO iteration as a plain OpenSpiel Python loop (dict logits, pyspiel states)."""

    def __init__(self, seed: int) -> None:
        self.game = pyspiel.load_game("leduc_poker")
        self.rand = random.Random(seed)
        self.logits: dict[str, dict[int, float]] = {}      # information-state string -> {action: logit}
        self.cumulative: dict[str, dict[int, float]] = {}  # average-policy sums
        self._register(self.game.new_initial_state())

    def _register(self, state) -> None:
        """Zero logits for every information state (one walk at construction)."""
        if state.is_terminal():
            return
        if not state.is_chance_node():
            key = state.information_state_string()
            if key not in self.logits:
                self.logits[key] = {a: 0.0 for a in state.legal_actions()}
                self.cumulative[key] = {a: 0.0 for a in state.legal_actions()}
        for action in state.legal_actions():
            self._register(state.child(action))

    @staticmethod
    def softmax(logits: dict[int, float]) -> dict[int, float]:
        top = max(logits.values())
        z = {a: math.exp(v - top) for a, v in logits.items()}
        total = sum(z.values())
        return {a: v / total for a, v in z.items()}

    def policy(self) -> dict[str, dict[int, float]]:
        return {key: self.softmax(row) for key, row in self.logits.items()}

    def walk(self, policy) -> tuple[list, list, dict]:
        """Decision histories (states) with their reach chance * pi_0 * pi_1, and each state's own reach."""
        histories, weights, own_reach = [], [], {}

        def visit(state, chance: float, reach0: float, reach1: float) -> None:
            if state.is_terminal():
                return
            if state.is_chance_node():
                for action, p in state.chance_outcomes():
                    visit(state.child(action), chance * p, reach0, reach1)
                return
            player = state.current_player()
            key = state.information_state_string()
            own_reach[key] = reach0 if player == 0 else reach1
            histories.append(state)
            weights.append(chance * reach0 * reach1)
            for action, p in policy[key].items():
                if player == 0:
                    visit(state.child(action), chance, reach0 * p, reach1)
                else:
                    visit(state.child(action), chance, reach0, reach1 * p)

        visit(self.game.new_initial_state(), 1.0, 1.0, 1.0)
        return histories, weights, own_reach

    def _act(self, probs: dict[int, float]) -> int:
        u, total = self.rand.random(), 0.0
        for action, p in probs.items():
            total += p
            if u < total:
                return action
        return action

    def rollout(self, state, policy, public_u: float, player: int) -> float:
        """Play `state` to the end with `policy` for both seats; the public card is forced from public_u."""
        while not state.is_terminal():
            if state.is_chance_node():
                cards = [c for c, _ in state.chance_outcomes()]
                state.apply_action(cards[int(public_u * len(cards))])
            else:
                state.apply_action(self._act(policy[state.information_state_string()]))
        return state.returns()[player]

    def step(self) -> None:
        n = DECISION_POINTS
        policy = self.policy()                                            # pi0, frozen
        histories, weights, own_reach = self.walk(policy)
        for key, reach in own_reach.items():                              # average policy (pi0, own reach)
            cum = self.cumulative[key]
            for action, p in policy[key].items():
                cum[action] += reach * p
        cum_weights = list(itertools.accumulate(weights))
        terms = []                                                        # (key, action, weight, advantage, pi0)
        for _ in range(n):
            h = histories[min(bisect.bisect_right(cum_weights, self.rand.random() * cum_weights[-1]),
                              len(histories) - 1)]                        # deal and history: opponent card shared
            key, player = h.information_state_string(), h.current_player()
            public_u = self.rand.random()                                 # one public card for every branch
            returns = {}
            for action in h.legal_actions():
                branch = h.clone()
                branch.apply_action(action)
                returns[action] = self.rollout(branch, policy, public_u, player)
            mean = sum(returns.values()) / len(returns)
            for action, r in returns.items():
                pi0 = policy[key][action]
                terms.append((key, action, pi0 / n, r - mean, pi0))
        for _ in range(EPOCHS):                                           # full-batch clipped surrogate steps
            grad: dict[str, dict[int, float]] = {}
            current = {}
            for key, action, weight, adv, pi0 in terms:
                probs = current.get(key)
                if probs is None:
                    probs = current[key] = self.softmax(self.logits[key])
                ratio = probs[action] / pi0
                if (adv > 0 and ratio > 1 + EPSILON) or (adv < 0 and ratio < 1 - EPSILON):
                    continue
                coef = weight * adv * ratio
                g = grad.setdefault(key, {a: 0.0 for a in probs})
                for a, p in probs.items():
                    g[a] += coef * ((a == action) - p)
            for key, g in grad.items():
                row = self.logits[key]
                for a, v in g.items():
                    row[a] += LEARNING_RATE * v


def rate(step, iterations: int) -> float:
    """Iterations per second of `iterations` calls of step()."""
    t0 = time.perf_counter()
    for _ in range(iterations):
        step()
    return iterations / (time.perf_counter() - t0)


def learner_trio(device: str) -> dict[str, Learners]:
    """Our three timed learners on `device`: one cp_grpo run, the 10-run batch, one converging run."""
    return {"ours": Learners(GAME, [RunSpec("cp_grpo", SEED)], schedule(), device=device),
            "batch": Learners(GAME, BATCH_RUNS, schedule(), device=device),
            "converging": Learners(GAME, [RunSpec("cp_grpo", SEED)],
                                   learner_schedule(CONVERGING, schedule(), **CONVERGING_CHOICE), device=device)}


def study_batch(device: str) -> dict[str, Learners]:
    """The study's 240 runs on `device`: one `Learners` per learner holding its four arms x 30 seeds (120 runs,
    one schedule), on the device's fused engine.  A study on a GPU batches the arms whose tuned choices differ
    only in step size; with the committed choices that is four batches of 60, so these batches are the
    fullest it could make."""
    schedules = {"literal": schedule(), "converging": learner_schedule(CONVERGING, schedule(), **CONVERGING_CHOICE)}
    return {learner: Learners(GAME, [RunSpec(arm, seed) for arm in STUDY_ARMS for seed in STUDY_SEEDS], sched,
                              device=device)
            for learner, sched in schedules.items()}


def seconds_per_iteration(learners: Learners, iterations: int) -> float:
    return 1.0 / rate(synced(learners), iterations)


def print_study_batch(gpu: dict[str, Learners], cpu: dict[str, Learners], iterations: int, repeats: int) -> None:
    """Run-iterations per second of the study's 240 runs on CUDA and on this machine's CPU (best of `repeats`,
    alternating)."""
    best = {side: {k: math.inf for k in gpu} for side in ("cuda", "cpu")}
    for _ in range(repeats):
        for side, batch in (("cuda", gpu), ("cpu", cpu)):
            for k, learners in batch.items():
                best[side][k] = min(best[side][k], seconds_per_iteration(learners, iterations))
    runs = sum(len(learners.runs) for learners in gpu.values())
    rates = {side: runs / sum(best[side].values()) for side in best}
    print(f"study batch, both learners x four arms x {len(STUDY_SEEDS)} seeds = {runs} runs: CUDA "
          f"{rates['cuda']:,.0f} run-iterations/s vs fused CPU path {rates['cpu']:,.0f} on this machine: "
          f"{rates['cuda'] / rates['cpu']:.1f}x (target 20x)")
    print("  per batch, ms per iteration (CUDA / CPU): " + ", ".join(
        f"{k} ({len(gpu[k].runs)} runs, {gpu[k].engine}) {1e3 * best['cuda'][k]:.2f} / {1e3 * best['cpu'][k]:.1f}"
        for k in gpu))


def back_to_back(learners: Learners, iterations: int) -> tuple[float, float]:
    """(seconds per iteration, of which seconds on the host) for `iterations` CUDA steps queued back to back, as a
    study runs them between budgets: the host launches while the GPU computes, and waits only at the end.  Host
    seconds close to the total mean the launches, not the GPU, set the pace."""
    wait = torch.cuda.synchronize if learners.device.type == "cuda" else (lambda: None)
    wait()
    start, host = time.perf_counter(), 0.0
    for _ in range(iterations):
        t = time.perf_counter()
        learners.step()
        host += time.perf_counter() - t
    wait()
    return (time.perf_counter() - start) / iterations, host / iterations


def print_back_to_back(gpu: dict[str, Learners], iterations: int, repeats: int) -> None:
    """Each CUDA batch's iterations back to back (best of `repeats`): ms per iteration and the host's part."""
    best = {k: min((back_to_back(learners, iterations) for _ in range(repeats)), key=lambda pair: pair[0])
            for k, learners in gpu.items()}
    print("  back to back (no wait between iterations), ms per iteration (launching on the host): " + ", ".join(
        f"{k} {1e3 * total:.2f} ({1e3 * host:.2f})" for k, (total, host) in best.items()))


def synced(learners: Learners):
    """learners.step that returns once the device has finished it."""
    if learners.device.type != "cuda":
        return learners.step

    def step():
        learners.step()
        torch.cuda.synchronize()
    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=50, help="our timed iterations per repeat")
    parser.add_argument("--openspiel-iterations", type=int, default=10, help="OpenSpiel timed iterations per repeat")
    parser.add_argument("--batch-iterations", type=int, default=10, help="batched (10 runs) iterations per repeat")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--device", default="cpu", help='our learner\'s device ("cuda" where available)')
    parser.add_argument("--threads", type=int, default=0, help="torch intra-op threads (0: torch's default)")
    parser.add_argument("--study-iterations", type=int, default=5,
                        help="with --device cuda: timed iterations per repeat of the study's 240-run batch")
    args = parser.parse_args()
    if args.device not in ("cpu", "cuda"):
        sys.exit(f"--device must be 'cpu' or 'cuda', got {args.device!r}.")
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit(NO_CUDA)
    if args.threads:
        torch.set_num_threads(args.threads)

    mine = learner_trio(args.device)
    cpu = learner_trio("cpu") if args.device == "cuda" else {}     # the same machine's fused CPU baseline
    theirs = OpenSpielCPGRPO(SEED)
    for learners in (*mine.values(), *cpu.values()):   # warm-up: tables, allocator, compiled kernels
        learners.step()
        learners.step()
    theirs.step()
    per_repeat = {"ours": args.iterations, "batch": args.batch_iterations, "converging": args.iterations}

    best = {"ours": 0.0, "openspiel": 0.0, "batch": 0.0, "converging": 0.0}
    best_cpu = {k: 0.0 for k in cpu}
    for _ in range(args.repeats):  # alternate the contestants so a slow spell hits all of them
        best["ours"] = max(best["ours"], rate(synced(mine["ours"]), args.iterations))
        best["openspiel"] = max(best["openspiel"], rate(theirs.step, args.openspiel_iterations))
        best["batch"] = max(best["batch"], rate(synced(mine["batch"]), args.batch_iterations))
        best["converging"] = max(best["converging"], rate(synced(mine["converging"]), args.iterations))
        for k, learners in cpu.items():
            best_cpu[k] = max(best_cpu[k], rate(learners.step, per_repeat[k]))
    print(f"best of {args.repeats} alternating runs; Leduc CP-GRPO, N = {DECISION_POINTS} decision points, "
          f"E = {EPOCHS} epochs, device {args.device}, "
          f"{torch.get_num_threads()} torch threads")
    print(f"oscc_core Learners.step, 1 run (cp_grpo/{SEED})      : {best['ours']:10.2f} iterations/s "
          f"({args.iterations} per repeat)")
    print(f"OpenSpiel loop, pyspiel states + dict policy      : {best['openspiel']:10.2f} iterations/s "
          f"({args.openspiel_iterations} per repeat)")
    print(f"oscc_core converging learner, 1 run (cp_grpo/{SEED}) : {best['converging']:10.2f} iterations/s "
          f"(counterfactual law, proximal pull; {args.iterations} per repeat)")
    per_run = best["batch"] * len(BATCH_RUNS)     # run-iterations per second inside the batch
    print(f"oscc_core Learners.step, 2 arms x 5 seeds batched : {1e3 / best['batch']:10.1f} ms per iteration "
          f"({1e3 / per_run:.2f} ms per run-iteration, {per_run / best['openspiel']:.1f}x OpenSpiel per run)")
    if cpu:
        print(f"CUDA ({torch.cuda.get_device_name(0)}) / fused CPU path on this machine: "
              + ", ".join(f"{k} {best[k] / best_cpu[k]:.2f}x ({best[k]:.1f} vs {best_cpu[k]:.1f} iterations/s)"
                          for k in cpu))
    if cpu:
        gpu_study, cpu_study = study_batch("cuda"), study_batch("cpu")
        for learners in (*gpu_study.values(), *cpu_study.values()):    # warm-up, compiling the GPU kernels
            learners.step()
        print_study_batch(gpu_study, cpu_study, args.study_iterations, args.repeats)
        print_back_to_back(gpu_study, args.study_iterations, args.repeats)
    print(f"target: ours / OpenSpiel >= {TARGET:.0f}x")
    print(f"ratio {best['ours'] / best['openspiel']:.1f}x")


if __name__ == "__main__":
    main()
