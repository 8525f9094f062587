"""Branch rollouts per second: our collector against a plain OpenSpiel Python loop.

Both run in this one process on the same machine: Leduc, root "" (player 0's
first decision), full coupling (shared hidden deal and shared public-card
uniform), uniform continuation.  The OpenSpiel loop runs twice: looking the
tabular policy up by information-state string at every decision (what the
collector does) and with a uniform shortcut.  Prints the rates and ratios.

    .venv/bin/python benchmarks/bench_collect.py [--groups 1000000] [--openspiel-groups 20000]
"""
from __future__ import annotations

import argparse
import random
import time

import pyspiel

from oscc_core import collect, uniform_policy


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

    print(f"oscc_core collect : {args.groups:>9,} groups in {ours_s:7.3f} s = {ours_rate:12,.0f} branch rollouts/s")
    policy = uniform_policy("leduc")
    for label, pol in (("OpenSpiel loop, tabular policy lookup (the collector's semantics)", policy),
                       ("OpenSpiel loop, uniform shortcut (no policy lookup)", None)):
        t0 = time.perf_counter()
        n = openspiel_coupled_rollouts(args.openspiel_groups, seed=1, policy=pol)
        theirs_rate = n / (time.perf_counter() - t0)
        print(f"{label}: {theirs_rate:12,.0f} branch rollouts/s; ratio ours / OpenSpiel = "
              f"{ours_rate / theirs_rate:.1f}x (target >= 100x)")


if __name__ == "__main__":
    main()
