"""Branch rollouts per second of the collector's GPU kernel against the fused CPU kernel, one process.

Leduc, root "" (player 0's first decision), full coupling, uniform
continuation, as `bench_collect.py`.  Two figures per side, best of
`--repeats`:

- kernel: one chunk of `groups` groups through the kernel alone -- on the
  GPU its inputs already on the device, launch to synchronise; on the CPU
  `fused.collect_chunk` (all cores);
- collect: `collect(..., engine="fused")` end to end (chunking, moment
  sums, the copies of the kept columns to the host).

Then one CUDA collection of the largest size again, each library phase
(the kernel's inputs uploaded, the kernel, the counts, the running sums,
the pinned host tensors, the copies of the kept columns) timed between two
device synchronisations: the phases then run one after another, so they
show where the time goes, beside the same collection's overlapped wall time.

    python benchmarks/bench_collect_cuda.py [--groups 4194304 16777216] [--repeats 5]

`bench_collect.py --device cuda` calls `print_cuda_rates` from here.
"""
from __future__ import annotations

import argparse
import time

import torch

from oscc_core import collect
from oscc_core.engine import collector, fused, fused_cuda, gather
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
    inputs = (streams.groups, *fused_cuda.prepare(game, root, streams, event, cdf, last_action))
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


#: The phases of a CUDA collection: label -> (owner, name) of the library function that runs it.
PHASES = {"kernel inputs built and uploaded (once)": (fused_cuda, "prepare"),
          "kernel (launch to finish)": (fused_cuda, "launch"),
          "per-group draw counts": (collector, "_chunk_counts"),
          "moment sums and counts added on the GPU": (gather.Accumulator, "add"),
          "kept columns copied to pinned host memory": (gather.KeptColumns, "add"),
          "  of which pinned host tensors allocated (once)": (gather.KeptColumns, "allocate"),
          "wait for the last copy": (gather.KeptColumns, "columns"),
          "running sums to the host (once)": (gather.Accumulator, "stats")}


def _timed(func, label: str, seconds: dict, calls: dict):
    """`func`, timed from a device synchronisation before to one after, into seconds[label]."""
    def timed(*args, **kwargs):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        out = func(*args, **kwargs)
        torch.cuda.synchronize()
        seconds[label] = seconds.get(label, 0.0) + time.perf_counter() - t0
        calls[label] = calls.get(label, 0) + 1
        return out
    return timed


def print_collect_phases(n_groups: int, device: str = "cuda") -> None:
    """Print where one CUDA `collect(..., engine="fused")` of `n_groups` groups spends its time: each phase
    (`PHASES`) serialised between device synchronisations, the rest (Python, chunk set-up)
    as the remainder, and the same collection's wall time with its phases overlapped."""
    collect(GAME, ROOT, ARM, n_groups, seed=1, device=device, engine="fused")       # warm: compiled, pinned
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    col = collect(GAME, ROOT, ARM, n_groups, seed=1, device=device, engine="fused")
    torch.cuda.synchronize()
    overlapped = time.perf_counter() - t0
    seconds, calls, originals = {}, {}, {label: getattr(*where) for label, where in PHASES.items()}
    try:
        for label, (owner, name) in PHASES.items():
            setattr(owner, name, _timed(originals[label], label, seconds, calls))
        t0 = time.perf_counter()
        collect(GAME, ROOT, ARM, n_groups, seed=1, device=device, engine="fused")
        serial = time.perf_counter() - t0
    finally:
        for label, (owner, name) in PHASES.items():
            setattr(owner, name, originals[label])
    kept = sum(v.nbytes for v in (col.returns, col.codes, col.own_card, col.public_card))
    print(f"one collect of {n_groups:,} groups ({-(-n_groups // collector.FUSED_CUDA_CHUNK)} chunks of at most "
          f"{collector.FUSED_CUDA_CHUNK:,}), {kept / 1e6:,.0f} MB kept: {overlapped * 1e3:8.1f} ms overlapped, "
          f"{serial * 1e3:8.1f} ms with every phase synchronised:")
    for label in PHASES:
        ms = seconds.get(label, 0.0) * 1e3
        print(f"  {label:<48} {ms:8.1f} ms  ({calls.get(label, 0)} calls)")
    top = sum(v for k, v in seconds.items() if not k.startswith(" "))
    print(f"  {'rest (Python, chunk set-up)':<48} {(serial - top) * 1e3:8.1f} ms")
    copy = seconds.get("kept columns copied to pinned host memory", 0.0)
    if copy:
        print(f"  copies: {kept / copy / 1e9:.1f} GB/s (including the allocation)")


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
    print_collect_phases(max(group_sizes), device)


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
