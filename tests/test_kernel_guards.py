"""The GPU kernels where a bug would hurt most and be seen least: threads past the last item, and runs whose
blocks share scratch memory.

numba's CUDA simulator (CI has no GPU) hides both kinds of bug in the other simulator tests: a launch there
has no spare thread (a tiny grid gets one block of exactly its items), and it runs a launch's blocks one after
another, so two blocks that share scratch rows by mistake never meet.  Here, in one child process under the
simulator (this file run as a script):

* the collector's kernel (`engine.fused_cuda`) runs 12 groups in blocks of 5 (3 spare threads in the last
  block) into output columns one row longer than the groups, that row filled with a sentinel: every group's
  outputs must be the fused CPU kernel's, and the sentinel row untouched;
* the learners' kernels (`learning.fused_cuda`) run with 7 threads per block for the per-item kernels and 3
  for the per-run blocks, numbers that divide none of the item counts, and must give the fused CPU kernels'
  state bit for bit;
* the learners' kernels run with every block of a launch at the same time (`simulator.blocks_at_once`) and must
  give the fused CPU kernels' state bit for bit: per-run scratch that overlapped between runs would mix two
  runs' numbers;
* a value table of -0.0 stays -0.0 through iterations in which no ppo run takes part (no ppo run in the batch,
  or its one ppo run spent before the first iteration), as the torch path leaves it (`test_boundaries` checks
  the CPU engines).

A case that raises (a thread reading past an array's end raises in the simulator) reports its error.
"""
from __future__ import annotations

import json
import sys
import warnings

import pytest

from simulator import blocks_at_once, simulated_results, thread_safe_simulator

GROUPS, THREADS, SENTINEL = 12, 5, -7          # 3 blocks of 5 threads: 3 spare threads in the last block
COLLECTOR_CASES = [("leduc", "", "full", 1), ("kuhn", "1", "independent", 2), ("leduc", "2", "root_only", 1)]
#: learner cases of test_learning_fused_cuda_sim run again with odd block sizes, and with blocks at once
LEARNER_CASES = ("kuhn-literal-budget", "kuhn-converging-budget")        # Leduc: 40 s more, no bug more found
PER_ITEM_THREADS, PER_RUN_THREADS = 7, 3
#: runs (arm, seed) of the signed-zero cases, and which of them is spent before the first iteration
ZERO_CASES = {"no-ppo-run": ((("cp_grpo", 3), ("grpo", 5), ("independent", 7)), ()),
              "ppo-run-spent": ((("cp_grpo", 3), ("ppo", 5), ("grpo", 7)), (1,))}


def _collector_case(game_name, root_name, arm_name, budget) -> dict:
    """Outputs on which the spare-thread launch differs from the fused CPU kernel, and those whose sentinel row
    past the last group was written."""
    import numpy as np
    import torch
    from numba import cuda

    from oscc_core.engine import collector, fused, fused_cuda
    from oscc_core.engine.arms import get_arm
    from oscc_core.engine.rollout import chance_event_of_nodes, policy_cdf
    from oscc_core.engine.roots import build_root
    from oscc_core.games import get_game
    from oscc_core.policy import random_policy, resolve_policy
    game = get_game(game_name)
    table = resolve_policy(game, random_policy(game_name, seed=5))
    root = build_root(game, root_name, table)
    cdf, last_action = policy_cdf(table, torch.device("cpu"))
    event = next(iter(chance_event_of_nodes(game).values()), 0)
    streams = collector.Streams(21, collector.rng.SPLITS["audit"], torch.arange(GROUPS), get_arm(arm_name),
                                len(root.actions), budget)
    cpu = fused.collect_chunk(game, root, streams, event, cdf, last_action)
    b = len(root.actions)
    padded = {name: np.full(((GROUPS + 1, b) if per_branch else (GROUPS + 1,)), SENTINEL, dtype)
              for name, dtype, per_branch in fused.OUTPUTS}
    targets = {k: cuda.to_device(v) for k, v in padded.items()}
    inputs = fused_cuda.prepare(game, root, streams, event, cdf, last_action)
    fused_cuda.launch((streams.groups, *inputs), targets, threads_per_block=THREADS)
    got = {k: v.copy_to_host() for k, v in targets.items()}
    return {"differ": [k for k in got if not np.array_equal(got[k][:GROUPS], cpu[k].numpy())],
            "sentinel_written": [k for k in got if not np.all(got[k][GROUPS] == SENTINEL)]}


def _learner_case(name: str) -> dict:
    """Quantities on which the GPU kernels differ from the fused CPU kernels for `name` of
    test_learning_fused_cuda_sim."""
    import torch
    from test_learning_fused_cuda_sim import CASES, COMPARED, PULL_ONLY, _run_case
    case = CASES[name]
    gpu, cpu = _run_case("fused_cuda", *case), _run_case("fused", *case)
    compared = COMPARED + (PULL_ONLY if case[1] == "converging" else ())

    def same(a, b):
        a, b = (x.numpy() if isinstance(x, torch.Tensor) else x for x in (a, b))
        return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()
    return {"engine": gpu["engine"], "differ": [k for k in compared if not same(gpu[k], cpu[k])]}


def zero_values_after(engine: str, runs: tuple, spent: tuple, iterations: int = 3):
    """The value table [R, n_info] after `iterations` steps of Kuhn runs (converging learner) whose table starts at
    -0.0 everywhere, the runs `spent` marked spent before the first step."""
    import torch

    from oscc_core.games import get_game
    from oscc_core.learning.loop import Learners, RunSpec, Schedule
    from oscc_core.learning.study_design import learner_schedule
    schedule = learner_schedule("converging", Schedule(iterations=iterations, decision_points=4, epochs=2), 2.0,
                                0.5, 0.1)
    values = torch.full((len(runs), len(get_game("kuhn").infostates)), -0.0, dtype=torch.float64, device="cpu")
    learners = Learners("kuhn", [RunSpec(arm, seed) for arm, seed in runs], schedule, values=values, engine=engine)
    for r in spent:
        learners.spent[r] = True
    for _ in range(iterations):
        learners.step()
    return learners.values.numpy().copy(), int(learners.ledger.array().sum())


def _zero_case(runs, spent) -> dict:
    import numpy as np
    values, work = zero_values_after("fused_cuda", runs, spent)
    return {"all_negative_zero": bool(np.all(values == 0.0) and np.all(np.signbit(values))), "work": work}


def _guarded(function, *args) -> dict:
    try:
        return function(*args)
    except Exception as error:          # noqa: BLE001 - reported, and the test fails on it
        return {"error": f"{type(error).__name__}: {error}"}


def _collector_id(case) -> str:
    game, root, arm, budget = case
    return f"{game}[{root}]-{arm}-b{budget}"


@pytest.fixture(scope="module")
def simulated():
    """Every case's comparison, from one child process running the kernels under numba's CUDA simulator."""
    return simulated_results(__file__, timeout=900)


@pytest.mark.parametrize("case", COLLECTOR_CASES, ids=_collector_id)
def test_spare_threads_in_the_last_block_leave_the_row_past_the_last_group_untouched(simulated, case):
    result = simulated["collector"][_collector_id(case)]
    assert "error" not in result, f"the launch with spare threads raised {result.get('error')}"
    assert result["differ"] == [], f"groups computed with spare threads differ from the CPU's on {result['differ']}"
    assert result["sentinel_written"] == [], f"a thread past the last group wrote {result['sentinel_written']}"


@pytest.mark.parametrize("case", LEARNER_CASES)
def test_learner_kernels_with_block_sizes_that_divide_no_item_count_equal_the_cpu_kernels(simulated, case):
    result = simulated["odd_blocks"][case]
    assert "error" not in result, f"the kernels raised {result.get('error')}"
    assert result["engine"] == "fused_cuda"
    assert result["differ"] == [], f"GPU kernels differ from the fused CPU kernels on {result['differ']}"


@pytest.mark.parametrize("case", LEARNER_CASES)
def test_learner_kernels_with_every_run_s_block_at_once_equal_the_cpu_kernels(simulated, case):
    result = simulated["blocks_at_once"][case]
    assert "error" not in result, f"the kernels raised {result.get('error')}"
    assert result["differ"] == [], f"runs' blocks at once differ from the fused CPU kernels on {result['differ']}"


@pytest.mark.parametrize("case", list(ZERO_CASES))
def test_a_value_table_of_negative_zeros_stays_so_while_no_ppo_run_takes_part(simulated, case):
    result = simulated["zeros"][case]
    assert "error" not in result, f"the kernels raised {result.get('error')}"
    assert result["work"] > 0, "the runs did nothing"
    assert result["all_negative_zero"], "an iteration without ppo moved the value table (-0.0 became +0.0)"


if __name__ == "__main__":      # the child process: numba's CUDA simulator is on
    warnings.filterwarnings("ignore", category=RuntimeWarning)    # uint64 hashing wraps, as intended
    sys.setswitchinterval(1e-5)   # the blocks (and a block's threads) interleave finely
    thread_safe_simulator()
    from numba import config

    from oscc_core.learning import fused_cuda
    out = {"collector": {_collector_id(c): _guarded(_collector_case, *c) for c in COLLECTOR_CASES},
           "zeros": {name: _guarded(_zero_case, *spec) for name, spec in ZERO_CASES.items()}}
    usual = fused_cuda.THREADS_PER_BLOCK, fused_cuda.SIMULATOR_THREADS
    fused_cuda.THREADS_PER_BLOCK, fused_cuda.SIMULATOR_THREADS = PER_ITEM_THREADS, PER_RUN_THREADS
    out["odd_blocks"] = {name: _guarded(_learner_case, name) for name in LEARNER_CASES}
    fused_cuda.THREADS_PER_BLOCK, fused_cuda.SIMULATOR_THREADS = usual
    blocks_at_once()
    out["blocks_at_once"] = {name: _guarded(_learner_case, name) for name in LEARNER_CASES}
    print(json.dumps(out | {"_simulator": bool(config.ENABLE_CUDASIM)}))
