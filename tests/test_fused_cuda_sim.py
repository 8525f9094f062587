"""The GPU kernel (`engine.fused_cuda`) computes, bit for bit, what the CPU engines compute.

CI has no GPU, so the kernel runs under numba's CUDA simulator
(NUMBA_ENABLE_CUDASIM=1), which numba reads when `numba.cuda` is first
imported: the cases run in one child process (this file run as a script)
that prints, per case, which per-group outputs and chunk counts differ
between the GPU kernel, the fused CPU kernel and the torch path (the
independent engine).  The simulator interprets every thread in Python, so
each case has few groups.

Further cases run whole multi-chunk collections through the GPU kernel (the
collector's engine choice pointed at it, on CPU tensors): chunk sizes that
do not divide the groups, the kernel's inputs prepared once per collection,
the sums added up across chunks before they reach the host, the kept columns
copied into host tensors of all groups.  Every field of the collection, its
digest included, must equal the fused CPU kernel's and the torch path's.

One case sits on a policy threshold: a continuation policy whose first
cumulative probability is exactly the first policy draw m / 2**53 of group 0,
branch 0, rollout 0 (the draw computed by `rng`, the torch path's stream
functions).  `cdf <= m` then picks action 1 and any threshold moved by one
unit, or a strict comparison, picks action 0, so the case fails on a kernel
that changes a threshold even by the smallest step.
"""
from __future__ import annotations

import json
import os
import sys

import pytest

from simulator import simulated_results, thread_safe_simulator

GROUPS = 12                     # per case: the simulator runs about a thousand hands a second
ARMS = ["independent", "root_only", "continuation_only", "full", "policy_namespace"]
ROOTS = [("kuhn", ""), ("kuhn", "1"), ("leduc", ""), ("leduc", "2"), ("leduc", "11|"), ("leduc", "121|2")]
UNIFORM_CASES = [(game, root, arm, "uniform", 1) for game, root in ROOTS for arm in ARMS]
TABULAR_CASES = [("leduc", "", "full", "random", 2), ("leduc", "21|", "independent", "random", 2),
                 ("kuhn", "", "continuation_only", "random", 3), ("kuhn", "", "independent", "boundary", 1),
                 ("leduc", "2", "root_only", "random", 1)]
CASES = UNIFORM_CASES + TABULAR_CASES
COMPARED = ("returns", "codes", "own_card", "public_card", "group_draws", "_draws", "_keys")
SEED, SPLIT = 21, "audit"
#: (game, root, arm, policy, budget, groups, GPU chunk size, branch order, continuation map): whole collections,
#: several chunks
COLLECT_CASES = [("leduc", "", "full", "uniform", 1, 13, 5, None, "semantic"),
                 ("kuhn", "1", "independent", "random", 2, 11, 4, [1, 0], "semantic"),
                 ("leduc", "2", "root_only", "uniform", 1, 10, 3, [2, 0, 1], "semantic"),
                 ("leduc", "", "full", "random", 2, 9, 4, None, "relabelled"),
                 ("leduc", "2", "independent", "uniform", 1, 9, 4, [1, 2, 0], "relabelled"),
                 ("leduc", "", "continuation_only", "uniform", 2, 9, 4, None, "antithetic")]
COLLECTION_FIELDS = ("returns", "codes", "own_card", "public_card", "group_draws", "stats", "logical_keys",
                     "physical_draws", "failures", "digest")


def _case_id(case) -> str:
    game, root, arm, policy, budget = case
    return f"{game}[{root}]-{arm}-{policy}-b{budget}"


def _boundary_policy(game_name: str, arm: str) -> dict:
    """Every information state plays action 0 with probability m / 2**53, m the first policy draw of
    group 0, branch 0, rollout 0 (Kuhn: both actions legal everywhere), so that lane's first
    decision draws exactly its threshold."""
    from oscc_core.engine import rng
    from oscc_core.engine.arms import get_arm
    from oscc_core.policy import uniform_policy
    key = rng.policy_key(SEED, rng.SPLITS[SPLIT], 0, 0, 0, get_arm(arm).policy_stream)
    p0 = int(rng.uniform_bits(key.view(1), 0)[0]) / rng.DRAW_SCALE      # exact: a 53-bit integer over 2**53
    return {info: [p0, 1.0 - p0] for info in uniform_policy(game_name)}


def _run_case(game_name, root_name, arm_name, policy_name, budget) -> dict:
    """Names of the outputs on which the GPU kernel differs from each CPU engine (empty lists when equal)."""
    import torch
    from oscc_core.engine import chance_maps, collector
    from oscc_core.engine.arms import get_arm
    from oscc_core.engine.rollout import chance_event_of_nodes, policy_cdf
    from oscc_core.engine.roots import build_root
    from oscc_core.games import get_game
    from oscc_core.policy import random_policy, resolve_policy
    game = get_game(game_name)
    policy = {"uniform": lambda: "uniform", "random": lambda: random_policy(game_name, seed=5),
              "boundary": lambda: _boundary_policy(game_name, arm_name)}[policy_name]()
    table = resolve_policy(game, policy)
    root = build_root(game, root_name, table)
    cdf, last_action = policy_cdf(table, torch.device("cpu"))
    event = next(iter(chance_event_of_nodes(game).values()), 0)
    streams = collector.Streams(SEED, collector.rng.SPLITS[SPLIT], torch.arange(GROUPS), get_arm(arm_name),
                                len(root.actions), budget)
    semantic = chance_maps.DEFAULT_MAP
    engines = {"cuda": collector._fused_chunk("cuda", game, root, streams, event, cdf, last_action, semantic),
               "cpu": collector._fused_chunk("cpu", game, root, streams, event, cdf, last_action, semantic),
               "torch": collector._collect_chunk(game, root, streams, event, cdf, last_action, None, None, None,
                                                 chance_maps.DEFAULT_MAP)}

    def differ(a, b):
        return [k for k in COMPARED if not _same(a[k], b[k])]

    return {"vs_cpu": differ(engines["cuda"], engines["cpu"]), "vs_torch": differ(engines["cuda"], engines["torch"])}


def _same(x, y) -> bool:
    """Equal tensors (same values, dtype and shape), or equal values; a dict's 0-dim tensors count as ints."""
    import torch
    def plain(d):
        return {k: int(v) if isinstance(v, torch.Tensor) else v for k, v in d.items()}
    if isinstance(x, dict) and isinstance(y, dict):
        return plain(x) == plain(y)
    return torch.equal(x, y) if isinstance(x, torch.Tensor) else x == y


def _collect_case_id(case) -> str:
    game, root, arm, policy, budget, groups, chunk, order, mapped = case
    return (f"collect-{game}[{root}]-{arm}-{policy}-b{budget}-{groups}-by-{chunk}" + (f"-order{order}" if order else "")
            + ("" if mapped == "semantic" else f"-{mapped}"))


def _run_collect(game_name, root_name, arm_name, policy_name, budget, n_groups, chunk, order, mapped) -> dict:
    """Fields on which a collection through the GPU kernel in chunks of `chunk` differs from the fused CPU
    kernel's (one chunk) and the torch path's (chunks of chunk + 2), and how often it prepared the kernel's
    inputs."""
    from oscc_core.engine import collector, fused_cuda
    from oscc_core.policy import random_policy
    kwargs = {"continuation": random_policy(game_name, seed=5) if policy_name == "random" else policy_name,
              "budget": budget, "branch_order": order, "keep_draws": True, "device": "cpu", "continuation_map": mapped}
    args = (game_name, root_name, arm_name, n_groups, SEED)
    prepared, real_prepare, real_choose = [], fused_cuda.prepare, collector._choose_engine
    fused_cuda.prepare = lambda *a: prepared.append(a) or real_prepare(*a)
    collector._choose_engine = lambda *a: "cuda"      # the GPU kernel (the simulator's) on the CPU's tensors
    try:
        gpu = collector.collect(*args, chunk_size=chunk, **kwargs)
    finally:
        fused_cuda.prepare, collector._choose_engine = real_prepare, real_choose
    cpu = collector.collect(*args, engine="fused", **kwargs)
    torch_path = collector.collect(*args, engine="torch", chunk_size=chunk + 2, **kwargs)

    def differ(a, b):
        return [k for k in COLLECTION_FIELDS if not _same(getattr(a, k), getattr(b, k))]

    return {"vs_cpu": differ(gpu, cpu), "vs_torch": differ(gpu, torch_path), "prepared": len(prepared),
            "groups": gpu.stats["groups"]}


@pytest.fixture(scope="module")
def simulated():
    """Every case's comparison, from one child process running the kernel under numba's CUDA simulator."""
    return simulated_results(__file__, timeout=600)


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_gpu_kernel_equals_the_cpu_engines_bit_for_bit(simulated, case):
    result = simulated[_case_id(case)]
    assert result["vs_cpu"] == [], f"GPU kernel differs from the fused CPU kernel on {result['vs_cpu']}"
    assert result["vs_torch"] == [], f"GPU kernel differs from the torch path on {result['vs_torch']}"


@pytest.mark.parametrize("case", COLLECT_CASES, ids=_collect_case_id)
def test_a_chunked_collection_through_the_gpu_kernel_equals_the_cpu_engines_in_every_field(simulated, case):
    result = simulated[_collect_case_id(case)]
    assert result["vs_cpu"] == [], f"GPU-kernel collection differs from the fused CPU kernel's on {result['vs_cpu']}"
    assert result["vs_torch"] == [], f"GPU-kernel collection differs from the torch path's on {result['vs_torch']}"
    assert result["groups"] == case[5]
    assert result["prepared"] == 1, "the kernel's inputs must be uploaded once per collection, not per chunk"


def test_the_simulator_ran_the_gpu_kernel_on_the_cuda_target(simulated):
    assert simulated["_simulator"] is True, "the child process did not run numba's CUDA simulator"


def _engine_on_cuda(engine, trace=None):
    import torch
    from oscc_core.engine import chance_maps, collector
    return collector._choose_engine(engine, torch.device("cuda"), trace, None, None)


def test_on_cuda_the_auto_engine_is_the_gpu_kernel_where_numba_cuda_is_present(monkeypatch):
    from oscc_core.engine import fused_cuda
    monkeypatch.setattr(fused_cuda, "available", lambda: True)
    monkeypatch.delenv(fused_cuda.DISABLE_ENV, raising=False)
    assert _engine_on_cuda("auto") == "cuda" and _engine_on_cuda("fused") == "cuda"
    assert _engine_on_cuda("torch") is None
    assert _engine_on_cuda("auto", trace=[]) is None, "a trace needs the torch path"


def test_the_environment_switch_keeps_auto_on_the_torch_path_but_not_a_forced_fused_engine(monkeypatch):
    from oscc_core.engine import fused_cuda
    monkeypatch.setattr(fused_cuda, "available", lambda: True)
    monkeypatch.setenv(fused_cuda.DISABLE_ENV, "1")
    assert _engine_on_cuda("auto") is None and _engine_on_cuda("fused") == "cuda"


def test_forcing_the_fused_engine_on_cuda_without_numba_cuda_is_a_value_error_naming_it(monkeypatch):
    from oscc_core.engine import fused_cuda
    monkeypatch.setattr(fused_cuda, "available", lambda: False)
    assert _engine_on_cuda("auto") is None
    with pytest.raises(ValueError, match="engine='fused' needs numba's CUDA target"):
        _engine_on_cuda("fused")


if __name__ == "__main__":      # the child process: numba.cuda is imported here, after NUMBA_ENABLE_CUDASIM
    import warnings
    warnings.filterwarnings("ignore", category=RuntimeWarning)   # uint64 hashing wraps by design
    thread_safe_simulator()
    from numba import cuda
    out = {_case_id(c): _run_case(*c) for c in CASES}
    out.update({_collect_case_id(c): _run_collect(*c) for c in COLLECT_CASES})
    out["_simulator"] = bool(cuda.simulator_enabled if hasattr(cuda, "simulator_enabled") else
                             os.environ.get("NUMBA_ENABLE_CUDASIM") == "1")
    print(json.dumps(out))
