"""On a CUDA machine: the collector's GPU kernel against the fused CPU kernel, bit for bit, then speed.

(a) Every case collects the same groups with engine="fused" on "cuda" (the
    GPU kernel, `engine.fused_cuda`) and on "cpu" (the fused CPU kernel) and
    compares returns, failure codes, root cards, per-group draw counts,
    sufficient statistics, key and draw counts and the digest: both games,
    several roots, every arm, uniform and random tabular continuations,
    budgets 1 to 3, a branch swap and GPU chunks that do not divide the
    groups.  A few cases also run the torch path on CUDA.
(b) Branch rollouts/s of the GPU kernel and the fused CPU kernel (Leduc,
    root "", full coupling, uniform continuation) at a few chunk sizes, as
    ratios (`bench_collect_cuda.print_cuda_rates`).

Runs end to end in well under three minutes on one H100 (most of it compiling).

    python3 benchmarks/gpu_check.py [--groups 100000] [--repeats 3]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_collect_cuda import print_cuda_rates  # noqa: E402

from oscc_core import collect  # noqa: E402
from oscc_core.engine import fused_cuda  # noqa: E402
from oscc_core.policy import random_policy  # noqa: E402

ARMS = ["independent", "root_only", "continuation_only", "full", "policy_namespace"]
ROOTS = [("kuhn", ""), ("kuhn", "1"), ("leduc", ""), ("leduc", "2"), ("leduc", "1"), ("leduc", "11|"),
         ("leduc", "121|2")]



def differences(a, b) -> list[str]:
    """Names of the fields on which two collections differ."""
    out = [k for k in ("returns", "codes", "own_card", "public_card", "group_draws")
           if not torch.equal(getattr(a, k), getattr(b, k))]
    out += [k for k in ("stats", "logical_keys", "physical_draws", "failures", "digest")
            if getattr(a, k) != getattr(b, k)]
    return out


def cases(n_groups: int):
    """(label, collect arguments, keyword arguments, also on the CUDA torch path) of every compared case."""
    for game, root in ROOTS:
        for arm in ARMS:
            for policy in ("uniform", "random"):
                budget = 1 if policy == "uniform" else 2 + (len(root) % 2)
                cont = "uniform" if policy == "uniform" else random_policy(game, seed=len(root) + 7)
                yield (f"{game}[{root}] {arm} {policy} budget {budget}", (game, root, arm, n_groups, 101),
                       {"continuation": cont, "budget": budget}, arm == "full" and policy == "uniform")
    yield ("leduc[2] full, branch swap", ("leduc", "2", "full", n_groups, 102), {"branch_order": [2, 0, 1]}, True)
    yield ("leduc[] independent, GPU chunks of 7,777", ("leduc", "", "independent", n_groups, 103),
           {"chunk_size": 7_777}, False)
    for mapped in ("relabelled", "antithetic"):
        yield (f"leduc[] full, {mapped} continuation map", ("leduc", "", "full", n_groups, 104),
               {"continuation_map": mapped}, True)


def check_equal(n_groups: int) -> bool:
    """Part (a): every case equal on the GPU kernel and the CPU kernel; prints one line per case."""
    bad, t0, count = 0, time.perf_counter(), 0
    for label, args, kwargs, with_torch in cases(n_groups):
        try:
            gpu = collect(*args, device="cuda", engine="fused", keep_draws=True, **kwargs)
            cpu = collect(*args, device="cpu", engine="fused", keep_draws=True, **kwargs)
            diff = differences(gpu, cpu)
            if with_torch:
                diff += [f"torch-cuda:{d}" for d in differences(
                    collect(*args, device="cuda", engine="torch", keep_draws=True, **kwargs), cpu)]
        except Exception as error:      # report and go on: one broken case must not hide the others
            diff = [f"{type(error).__name__}: {error}"]
        bad += bool(diff)
        count += 1
        print(f"  {'EQUAL ' if not diff else 'DIFFER'} {label}" + (f": {diff}" if diff else ""), flush=True)
    print(f"(a) {count - bad} of {count} cases bit for bit equal ({n_groups:,} groups each, "
          f"{time.perf_counter() - t0:.0f} s)", flush=True)
    return bad == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=100_000, help="groups per equality case")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--chunks", type=int, nargs="+", default=[1 << 20, 1 << 22, 1 << 24])
    args = parser.parse_args()
    if not (torch.cuda.is_available() and fused_cuda.available()):
        sys.exit("gpu_check needs a CUDA device, torch built with CUDA and numba's CUDA target (numba-cuda).")
    import numba
    print(f"GPU {torch.cuda.get_device_name()}, torch {torch.__version__}, numba {numba.__version__}", flush=True)
    t0 = time.perf_counter()
    collect("leduc", "", "full", 1_000, seed=0, device="cuda", engine="fused")
    try:
        regs = fused_cuda._kernel().get_regs_per_thread()
    except Exception:       # an older numba-cuda without the query
        regs = "?"
    print(f"GPU kernel compiled in {time.perf_counter() - t0:.0f} s; registers per thread: {regs}", flush=True)
    ok = check_equal(args.groups)
    print("(b) speed", flush=True)
    print_cuda_rates(tuple(args.chunks), args.repeats)
    print(f"RESULT: {'all cases equal' if ok else 'SOME CASES DIFFER'}; {time.perf_counter() - t0:.0f} s in all",
          flush=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
