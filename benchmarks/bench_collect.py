"""Branch rollouts per second: our collector against a plain OpenSpiel Python loop.

Both run in this one process on the same machine: Leduc, root "" (player 0's
first decision), full coupling (shared hidden deal and shared public-card
uniform), uniform continuation.  Prints both rates and their ratio.

    .venv/bin/python benchmarks/bench_collect.py [--groups 1000000] [--openspiel-groups 20000]
"""
from __future__ import annotations

import argparse
import random
import time

import pyspiel

from oscc_core import collect


def openspiel_coupled_rollouts(n_groups: int, seed: int) -> int:
    """The same coupled experiment written as a plain OpenSpiel loop; returns branch rollouts."""
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
                else:
                    legal = state.legal_actions()
                    state.apply_action(legal[int(rand.random() * len(legal))])
            state.returns()
            rollouts += 1
    return rollouts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=1_000_000)
    parser.add_argument("--openspiel-groups", type=int, default=20_000)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()

    collect("leduc", "", "full", 10_000, seed=0, device=args.device)  # warm-up: tables and allocator
    t0 = time.perf_counter()
    col = collect("leduc", "", "full", args.groups, seed=1, device=args.device)
    ours_s = time.perf_counter() - t0
    ours_rate = args.groups * len(col.actions) / ours_s

    t0 = time.perf_counter()
    n = openspiel_coupled_rollouts(args.openspiel_groups, seed=1)
    theirs_s = time.perf_counter() - t0
    theirs_rate = n / theirs_s

    print(f"oscc_core collect : {args.groups:>9,} groups in {ours_s:7.3f} s = {ours_rate:12,.0f} branch rollouts/s")
    print(f"OpenSpiel loop    : {args.openspiel_groups:>9,} groups in {theirs_s:7.3f} s = {theirs_rate:12,.0f} branch rollouts/s")
    print(f"ratio (ours / OpenSpiel): {ours_rate / theirs_rate:.1f}x  (target >= 100x)")


if __name__ == "__main__":
    main()
