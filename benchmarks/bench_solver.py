"""Exact solver speed against OpenSpiel, side by side in one process.

    .venv/bin/python benchmarks/bench_solver.py [--repeats 5]

Measures on Leduc poker:
  1. time per exact NashConv of one random policy: `oscc_core.nash_conv`
     (from the policy dict, validation included) against `pyspiel.exploitability`
     (NashConv / 2, the same two best responses) on the same policy;
  2. CFR+ iterations per second: `oscc_core.cfr.CFRPlus` against
     `pyspiel.CFRPlusSolver`, both from the uniform policy.
Each timing is the median over `--repeats` runs.  Targets (issue 3): NashConv
at least 50x faster, CFR+ at least 30x the iteration rate.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import pyspiel

from oscc_core.exact.cfr import CFRPlus
from oscc_core.exact.exploitability import exploitability, nash_conv
from oscc_core.games import get_game

GAME = "leduc"
NASH_CONV_TARGET = 50.0
CFR_TARGET = 30.0
POLICY_SEED = 0


def random_policy(rng: np.random.Generator) -> dict:
    info = get_game(GAME).infostates
    weights = rng.exponential(size=info.legal.shape) * info.legal
    return {s: list(row / row.sum()) for s, row in zip(info.strings, weights)}


def median_seconds(fn, repeats: int, calls: int) -> float:
    """Median over `repeats` of the mean wall time of `calls` calls of fn (seconds)."""
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        runs.append((time.perf_counter() - start) / calls)
    return statistics.median(runs)


def bench_nash_conv(repeats: int) -> None:
    policy = random_policy(np.random.default_rng(POLICY_SEED))
    os_game = pyspiel.load_game(get_game(GAME).openspiel_name)
    os_policy = pyspiel.TabularPolicy({s: [(a, p) for a, p in enumerate(row)] for s, row in policy.items()})
    ours_value, theirs_value = exploitability(GAME, policy), pyspiel.exploitability(os_game, os_policy)
    ours = median_seconds(lambda: nash_conv(GAME, policy), repeats, calls=200)
    theirs = median_seconds(lambda: pyspiel.exploitability(os_game, os_policy), repeats, calls=5)
    print(f"Leduc exploitability of a random policy: ours {ours_value:.12f}, pyspiel {theirs_value:.12f} "
          f"(difference {abs(ours_value - theirs_value):.1e} chips)")
    print(f"exact NashConv per policy:  ours {ours * 1e3:8.3f} ms   pyspiel.exploitability {theirs * 1e3:8.3f} ms"
          f"   ratio {theirs / ours:7.1f}x (target {NASH_CONV_TARGET:.0f}x)")


def bench_cfr_plus(repeats: int) -> None:
    ours_solver = CFRPlus(GAME)
    os_solver = pyspiel.CFRPlusSolver(pyspiel.load_game(get_game(GAME).openspiel_name))
    ours = median_seconds(ours_solver.iterate, repeats, calls=1000)
    theirs = median_seconds(os_solver.evaluate_and_update_policy, repeats, calls=30)
    print(f"CFR+ iterations per second: ours {1 / ours:8.0f} it/s   pyspiel.CFRPlusSolver {1 / theirs:8.1f} it/s"
          f"   ratio {theirs / ours:7.1f}x (target {CFR_TARGET:.0f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per measurement (median reported)")
    args = parser.parse_args()
    bench_nash_conv(args.repeats)
    bench_cfr_plus(args.repeats)


if __name__ == "__main__":
    main()
