"""Branch rollouts per second of the collector's GPU kernel against the fused CPU kernel, one process.

Leduc, root "" (player 0's first decision), full coupling, uniform
continuation, as `bench_collect.py`.  Two figures per side, best of
`--repeats`:

- kernel: one chunk of `groups` groups through the kernel alone -- on the
  GPU its inputs already on the device, launch to synchronise; on the CPU
  `fused.collect_chunk` (all cores);
- collect: `collect(..., engine="fused")` end to end (chunking, moment
  sums, the copies of the kept columns to the host).

    python benchmarks/bench_collect_cuda.py [--groups 4194304 16777216] [--repeats 5]

`bench_collect.py --device cuda` calls `print_cuda_rates` from here.
"""
from __future__ import annotations

import argparse
import time

import torch

from oscc_core import collect
from oscc_core.engine import collector, fused, fused_cuda
from oscc_core.engine.arms import get_arm
from oscc_core.engine.rollout import chance_event_of_nodes, policy_cdf
from oscc_core.engine.roots import build_root
from oscc_core.games import get_game
from oscc_core.policy import resolve_policy

GAME, ROOT, ARM = "leduc", "", "full"


def _chunk_setup(n_groups: int, device: torch.device, game_name=GAME, root_name=ROOT, arm=ARM, seed=1):
    """The arguments of one chunk's `collect_chunk`, with the groups (and policy tables) on `device`."""
    game = get_game(game_name)
    table = resolve_policy(game, "uniform")
    root = build_root(game, root_name, table)
    cdf, last_action = policy_cdf(table, device)
    event = next(iter(chance_event_of_nodes(game).values()), 0)
    streams = collector.Streams(seed, collector.rng.SPLITS["audit"],
                                torch.arange(n_groups, dtype=torch.int64, device=device), get_arm(arm),
                                len(root.actions), 1)
    return game, root, streams, event, cdf, last_action


def time_cuda_kernel(n_groups: int, repeats: int = 5, device: str = "cuda") -> float:
    """Best-of-`repeats` branch rollouts/s of the GPU kernel alone over one chunk of `n_groups` groups
    (inputs and outputs already on the device; from launch to the GPU's finish)."""
    from numba import cuda
    dev = torch.device(device)
    game, root, streams, event, cdf, last_action = _chunk_setup(n_groups, dev)
    inputs = tuple(fused_cuda._on_device(v) for v in
                   fused.kernel_inputs(game, root, streams, event, cdf, last_action, streams.groups))
    outputs = {k: cuda.as_cuda_array(v) for k, v in fused_cuda.device_outputs(n_groups, len(root.actions), dev).items()}
    fused_cuda.launch(inputs, outputs)          # compile and warm up
    cuda.synchronize()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fused_cuda.launch(inputs, outputs)
        cuda.synchronize()
        best = min(best, time.perf_counter() - t0)
    return n_groups * len(root.actions) / best


def time_cpu_kernel(n_groups: int, repeats: int = 5) -> float:
    """Best-of-`repeats` branch rollouts/s of the fused CPU kernel over one chunk of `n_groups` groups."""
    setup = _chunk_setup(n_groups, torch.device("cpu"))
    fused.collect_chunk(*setup)                 # compile and warm up
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fused.collect_chunk(*setup)
        best = min(best, time.perf_counter() - t0)
    return n_groups * len(setup[1].actions) / best


def time_collect(n_groups: int, device: str, repeats: int = 5) -> float:
    """Best-of-`repeats` branch rollouts/s of `collect(..., engine="fused")` end to end on `device`."""
    collect(GAME, ROOT, ARM, 10_000, seed=0, device=device, engine="fused")     # compile and warm up
    best, branches = float("inf"), 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        col = collect(GAME, ROOT, ARM, n_groups, seed=1, device=device, engine="fused")
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        best, branches = min(best, time.perf_counter() - t0), len(col.actions)
    return n_groups * branches / best


def print_cuda_rates(group_sizes=(1 << 20, 1 << 22, 1 << 24), repeats: int = 5, cpu_groups: int = 1 << 22,
                     device: str = "cuda") -> None:
    """Print the GPU kernel's and the fused CPU kernel's branch rollouts/s, and their ratios."""
    name = torch.cuda.get_device_name(torch.device(device))
    cpu_kernel = time_cpu_kernel(cpu_groups, repeats)
    cpu_collect = time_collect(cpu_groups, "cpu", repeats)
    print(f"Leduc, root '', full coupling, uniform continuation; best of {repeats}; GPU: {name}; "
          f"CPU: {torch.get_num_threads()} threads")
    print(f"fused CPU kernel   {cpu_groups:>10,} groups: kernel {cpu_kernel:14,.0f}/s   collect {cpu_collect:14,.0f}/s")
    for n in group_sizes:
        gpu_kernel = time_cuda_kernel(n, repeats, device)
        gpu_collect = time_collect(n, device, repeats)
        print(f"GPU kernel         {n:>10,} groups: kernel {gpu_kernel:14,.0f}/s   collect {gpu_collect:14,.0f}/s   "
              f"ratio to CPU: kernel {gpu_kernel / cpu_kernel:6.1f}x  collect {gpu_collect / cpu_collect:6.1f}x   "
              f"(targets: >= 1e9/s and >= 15x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, nargs="+", default=[1 << 20, 1 << 22, 1 << 24])
    parser.add_argument("--cpu-groups", type=int, default=1 << 22)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    print_cuda_rates(tuple(args.groups), args.repeats, args.cpu_groups, args.device)


if __name__ == "__main__":
    main()
