"""Branch rollouts per second: our collector against a plain OpenSpiel Python loop.

Both run in this one process on the same machine: Leduc, root "" (player 0's
first decision), full coupling (shared hidden deal and shared public-card
uniform), uniform continuation.  Ours runs on both engines: the fused CPU
kernel (the default on a CPU) and the batched torch path (the one CUDA
uses).  The OpenSpiel loop runs twice: looking the tabular policy up by
information-state string at every decision (what the collector does) and
with a uniform shortcut.  This machine is a shared virtual one whose speed
drifts from second to second, so each side is timed `--repeats` times,
alternating, and the best time of each is compared.  Prints the rates and
ratios.  With `--device cuda` the batched torch path also runs on the GPU,
and its rate is printed as a ratio to the fused CPU kernel of the same
machine (on a machine without CUDA the script says so and exits with
status 1).

It then times every coupling arm of the cost frontier on the same groups
(fused engine, best of `--repeats`) and prints each arm's wall time as a
ratio to the independent arm's, beside the ratio of its physical draws
(the portable cost the book's results keep) and the paper's ratio of wall
seconds (tab:physical-cost-frontier), and the selector's continuation maps
on both engines as the ratio torch / fused.  Only this print shows seconds:
no results file keeps them.

    .venv/bin/python benchmarks/bench_collect.py [--groups 1000000] [--openspiel-groups 20000] [--repeats 5]
        [--arm-groups 200000] [--device cpu|cuda]

With `--device cuda` it first prints the GPU kernel's rates and ratios to the
fused CPU kernel (`bench_collect_cuda.py`).
"""
from __future__ import annotations

import argparse
import random
import sys
import time

import pyspiel
import torch

from oscc_core import collect, uniform_policy
from oscc_core.reporting import claims

#: Our contestants: label -> (device, engine); `--device cuda` adds the torch path on the GPU.
CPU_ENGINES = {"fused": ("cpu", "fused"), "torch": ("cpu", "torch")}
NO_CUDA = "CUDA is not available on this machine, so --device cuda cannot be timed here; use --device cpu."

#: Collector arm -> the paper's arm key in tab:physical-cost-frontier; the reference arm first.
FRONTIER_ARMS = {"independent": "independent", "root_only": "root_only", "continuation_only": "continuation_only",
                 "full": "cp_grpo_full"}


def openspiel_coupled_rollouts(n_groups: int, seed: int, policy: dict | None = None) -> int:
    """The same coupled experiment written as a plain OpenSpiel loop; returns branch rollouts.

    With `policy` (information-state string -> probabilities over action ids)
    each decision looks its state up, as the collector does for a tabular
    continuation; with None it takes the uniform shortcut (no lookup at all).
    """
    game = pyspiel.load_game("leduc_poker")
    rand = random.Random(seed)
    rollouts = 0
    for _ in range(n_groups):
        root = game.new_initial_state()
        deck = list(range(6))
        own = deck.pop(int(rand.random() * len(deck)))
        opp = deck.pop(int(rand.random() * len(deck)))
        root.apply_action(own)
        root.apply_action(opp)
        shared_u = rand.random()  # one uniform for the public card, shared by both branches
        for action in root.legal_actions():
            state = root.clone()
            state.apply_action(action)
            while not state.is_terminal():
                if state.is_chance_node():
                    cards = [c for c, _ in state.chance_outcomes()]
                    state.apply_action(cards[int(shared_u * len(cards))])
                elif policy is None:
                    legal = state.legal_actions()
                    state.apply_action(legal[int(rand.random() * len(legal))])
                else:
                    probs = policy[state.information_state_string()]
                    state.apply_action(_inverse_cdf(probs, rand.random()))
            state.returns()
            rollouts += 1
    return rollouts


def _inverse_cdf(probs, u: float) -> int:
    total = 0.0
    for action, p in enumerate(probs):
        total += p
        if u < total and p > 0:
            return action
    return max(a for a, p in enumerate(probs) if p > 0)


def rate(run, rollouts_of) -> float:
    """Rollouts per second of one timed call of `run()`."""
    t0 = time.perf_counter()
    result = run()
    return rollouts_of(result) / (time.perf_counter() - t0)


def contestants(device: str) -> dict[str, tuple[str, str]]:
    """The collector runs to time: both CPU engines, and the torch path on CUDA when `device` names it (exits
    with one sentence when CUDA is absent)."""
    if device not in ("cpu", "cuda"):
        sys.exit(f"--device must be 'cpu' or 'cuda', got {device!r}.")
    if device == "cuda" and not torch.cuda.is_available():
        sys.exit(NO_CUDA)
    return {**CPU_ENGINES, "cuda": ("cuda", "torch")} if device == "cuda" else dict(CPU_ENGINES)


def timed_collect(groups: int, device: str, engine: str):
    """One collection (the GPU's queue drained before the clock stops)."""
    col = collect("leduc", "", "full", groups, seed=1, device=device, engine=engine)
    if device == "cuda":
        torch.cuda.synchronize()
    return col


def arm_wall_ratios(groups: int, repeats: int, device: str) -> None:
    """Best-of-`repeats` wall time of each frontier arm on the same `groups` groups, as a ratio to the
    independent arm's; beside it the ratio of physical draws and the paper's ratio of wall seconds."""
    for arm in FRONTIER_ARMS:              # warm-up: each arm's compiled kernel
        collect("leduc", "", arm, 10_000, seed=0, device=device, engine="fused")
    best, draws = {}, {}
    for _ in range(repeats):               # alternate the arms so a slow spell hits all of them
        for arm in FRONTIER_ARMS:
            t0 = time.perf_counter()
            col = collect("leduc", "", arm, groups, seed=1, device=device, engine="fused")
            best[arm] = min(best.get(arm, float("inf")), time.perf_counter() - t0)
            draws[arm] = sum(col.physical_draws.values())
    ref = next(iter(FRONTIER_ARMS))
    paper_ref = float(claims.claim(f"cost_frontier.{FRONTIER_ARMS[ref]}.wall_time"))
    print(f"\nwall time per arm relative to {ref} (best of {repeats}; {groups:,} groups per arm, fused engine)")
    for arm, key in FRONTIER_ARMS.items():
        paper = float(claims.claim(f"cost_frontier.{key}.wall_time")) / paper_ref
        print(f"{arm:<18} wall {best[arm] / best[ref]:6.3f}   physical draws {draws[arm] / draws[ref]:6.3f}   "
              f"paper wall {paper:6.3f}")


def map_engine_ratios(groups: int, repeats: int) -> None:
    """Best-of-`repeats` wall time of the selector's continuation maps (chapter 04's stress pools) on the fused CPU
    kernel and on the torch path, as the ratio torch / fused, on the same `groups` groups of the full arm."""
    print(f"\ncontinuation maps, torch path / fused kernel wall time (best of {repeats}; {groups:,} groups, full arm)")
    for mapped in ("semantic", "relabelled", "antithetic"):
        best = {}
        for _ in range(repeats):
            for engine in ("fused", "torch"):
                t0 = time.perf_counter()
                collect("leduc", "", "full", groups, seed=1, device="cpu", engine=engine, continuation_map=mapped)
                best[engine] = min(best.get(engine, float("inf")), time.perf_counter() - t0)
        print(f"{mapped:<11} torch / fused {best['torch'] / best['fused']:6.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=1_000_000)
    parser.add_argument("--openspiel-groups", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--device", default="cpu", help='"cuda" also times the torch path on the GPU')
    parser.add_argument("--arm-groups", type=int, default=200_000)
    args = parser.parse_args()
    runs = contestants(args.device)
    if args.device.startswith("cuda"):      # the GPU kernel against the fused CPU kernel, as ratios
        from bench_collect_cuda import print_cuda_rates
        print_cuda_rates(repeats=args.repeats, device=args.device)

    for device, engine in runs.values():   # warm-up: compiled kernel, tables, allocator
        collect("leduc", "", "full", 10_000, seed=0, device=device, engine=engine)
    policy = uniform_policy("leduc")
    ours, theirs = {}, {}
    for _ in range(args.repeats):  # alternate the contestants so a slow spell hits all of them
        for label, (device, engine) in runs.items():
            r = rate(lambda: timed_collect(args.groups, device, engine), lambda col: args.groups * len(col.actions))
            ours[label] = max(ours.get(label, 0.0), r)
        for label, pol in (("tabular", policy), ("uniform", None)):
            r = rate(lambda: openspiel_coupled_rollouts(args.openspiel_groups, seed=1, policy=pol), lambda n: n)
            theirs[label] = max(theirs.get(label, 0.0), r)
    print(f"best of {args.repeats} alternating runs; Leduc, root '', full coupling, uniform continuation")
    for label, what in (("fused", "fused CPU kernel, the default"), ("torch", "batched torch path"),
                        ("cuda", "torch path on CUDA")):
        if label in ours:
            print(f"oscc_core collect, {what:<29}: {ours[label]:12,.0f} branch rollouts/s "
                  f"({args.groups:,} groups)")
    for label, what in (("tabular", "tabular policy lookup (the collector's semantics)"),
                        ("uniform", "uniform shortcut (no policy lookup)")):
        print(f"OpenSpiel loop, {what}: {theirs[label]:10,.0f} branch rollouts/s "
              f"({args.openspiel_groups:,} groups)")
    for label in ("tabular", "uniform"):
        print(f"ratio fused / OpenSpiel {label:<7} = {ours['fused'] / theirs[label]:6.1f}x   "
              f"torch / OpenSpiel {label:<7} = {ours['torch'] / theirs[label]:5.1f}x   (target >= 100x)")
    if "cuda" in ours:
        print(f"CUDA ({torch.cuda.get_device_name(0)}) {ours['cuda']:,.0f} branch rollouts/s = "
              f"{ours['cuda'] / ours['fused']:.1f}x the fused CPU kernel on this machine ({ours['fused']:,.0f}/s)")
    arm_wall_ratios(args.arm_groups, args.repeats, "cpu")
    map_engine_ratios(args.arm_groups, args.repeats)


if __name__ == "__main__":
    main()
