"""The learners' GPU kernels (`learning.fused_cuda`) compute, bit for bit, what the CPU engines compute.

CI has no GPU, so the kernels run under numba's CUDA simulator
(NUMBA_ENABLE_CUDASIM=1, read when `numba.cuda` is first imported): the
cases run in one child process (this file run as a script) that prints, per
case, which quantities of the GPU engine differ from the fused CPU kernels
and from the torch path (the independent engine: tensor operations written
separately).  Each case is small (the simulator interprets every thread in
Python): both learners (the literal one; the converging one with its
counterfactual law, proximal pull and moving magnet), every arm (ppo's
whole hands, GAE and value table included), a budget that stops runs
mid-iteration, given group ids, and a snapshot taken and restored between
iterations, for every run and run by run.  The GPU engine runs with
torch's default device set to "meta", so a tensor it made without naming
the run's device would fail the case.
"""
from __future__ import annotations

import json
import sys
import warnings

import pytest

from simulator import simulated_results, thread_safe_simulator

ARMS = ("cp_grpo", "independent", "grpo", "uniform", "ppo")
#: case -> (game, learner, budget, iterations, decision points, given group ids, seeds, value tables start at
#: -0.0); Leduc's cases are smaller (the simulator interprets about a thousand of its table rows a second)
CASES = {
    "kuhn-literal": ("kuhn", "literal", None, 4, 4, False, (3, 5)),
    "kuhn-literal-budget": ("kuhn", "literal", 40, 5, 4, True, (3, 5)),
    "kuhn-budget-cuts-ppo": ("kuhn", "literal", 14, 5, 4, False, (3,), True),
    "kuhn-converging-budget": ("kuhn", "converging", 60, 6, 4, False, (3, 5)),
    "leduc-literal": ("leduc", "literal", None, 3, 3, True, (3,)),
    "leduc-converging-budget": ("leduc", "converging", 30, 3, 3, False, (5,)),
}
COMPARED = ("logits", "values", "cumulative", "ledger", "spent", "magnet", "average", "coverage")
#: The pull's per-state draw counts: scratch the fused engines fill only when a pull reads them.
PULL_ONLY = ("draws",)


def _run_case(engine: str, game: str, learner: str, budget, iterations: int, points: int, given: bool,
              seeds: tuple, negative_zero_values: bool = False) -> dict:
    """The learners' state after `iterations` steps on `engine` (a snapshot taken and restored after the
    second; after the third, when more follow, half the runs put back)."""
    import torch
    from oscc_core.games import get_game
    from oscc_core.learning.loop import Learners, RunSpec, Schedule
    from oscc_core.learning.study_design import learner_schedule
    base = Schedule(iterations=iterations, decision_points=points, epochs=2, learning_rate=1.0, epsilon=0.2,
                    budget=budget)
    schedule = learner_schedule(learner, base, eta=2.0, alpha=0.5, kappa=0.1)
    # the first seed's runs at the schedule's step size, the others at their own (a study's batched tasks)
    runs = [RunSpec(arm, seed, None if seed == seeds[0] else 3.0) for arm in ARMS for seed in seeds]
    values = None
    if negative_zero_values:         # the torch path adds 0.0 to every row: -0.0 becomes +0.0
        values = torch.full((len(runs), len(get_game(game).infostates)), -0.0, dtype=torch.float64, device="cpu")
    learners = Learners(game, runs, schedule, values=values, engine=engine)
    before_last = learners.logits.clone()
    for i in range(iterations):
        before_last = learners.logits.clone()
        group_ids = torch.full((len(runs),), 100 + 7 * i, dtype=torch.int64, device="cpu") if given else None
        learners.step(group_ids)
        if i == 1:
            snapshot = learners.snapshot()
            learners.step()
            learners.restore(snapshot)
        if i == 2 and i + 1 < iterations:    # half the runs put back one by one, as a study's budgets do
            snapshot = learners.snapshot()
            learners.step()
            for r in range(0, len(runs), 2):
                learners.restore_run(Learners.run_part(snapshot, r), r)
    state = {k: getattr(learners, k).clone() for k in ("logits", "values", "spent", "draws", "magnet")}
    state["thresholds"] = _thresholds(learners, before_last)
    return {**state, "cumulative": learners.cumulative.copy(), "ledger": learners.ledger.array(),
            "average": learners.average_tables(), "coverage": learners.coverage(), "engine": learners.engine}


def _thresholds(learners, before_last):
    """The draw thresholds and last actions of the last iteration's pi_t: the GPU engine's own buffers, or
    the torch path's `stacked_cdf` of the logits it started from."""
    import numpy as np
    import torch
    from oscc_core.learning.tabular import masked_softmax, stacked_cdf
    if learners.engine == "fused_cuda":
        return np.concatenate([learners._fused.cdf.copy_to_host(), learners._fused.last.copy_to_host()[:, None]], 1)
    cdf, last = stacked_cdf(masked_softmax(before_last, learners.legal))
    return torch.cat([cdf, last.unsqueeze(1)], 1).numpy()


def _compare(case: tuple) -> dict:
    import numpy as np
    import torch
    from oscc_core.learning.ledger import FIELDS
    with torch.device("meta"):          # a tensor made without the run's device lands on meta and fails
        runs = {"fused_cuda": _run_case("fused_cuda", *case)}
    runs.update({engine: _run_case(engine, *case) for engine in ("fused", "torch")})

    def same(a, b):
        a, b = (x.numpy() if isinstance(x, torch.Tensor) else x for x in (a, b))
        return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()

    gpu, compared = runs["fused_cuda"], COMPARED + (PULL_ONLY if case[1] == "converging" else ())
    return {"engine": gpu["engine"],
            **{f"vs_{e}": [k for k in compared if not same(gpu[k], runs[e][k])] for e in ("fused", "torch")},
            "thresholds_vs_torch": same(gpu["thresholds"], runs["torch"]["thresholds"]),
            "spent_any": bool(np.asarray(gpu["spent"]).any()),
            "ppo_values_moved": bool(np.abs(gpu["values"].numpy()).max() > 0),
            "hands_unused": int(gpu["ledger"][FIELDS.index("unused_hands")].sum())}


@pytest.fixture(scope="module")
def simulated():
    """Every case's comparison, from one child process running the kernels under numba's CUDA simulator."""
    return simulated_results(__file__, timeout=900)


@pytest.mark.parametrize("case", list(CASES))
def test_the_gpu_engine_equals_the_cpu_kernels_and_the_torch_path_bit_for_bit(simulated, case):
    result = simulated[case]
    assert result["engine"] == "fused_cuda"
    assert result["vs_fused"] == [], f"GPU kernels differ from the fused CPU kernels on {result['vs_fused']}"
    assert result["vs_torch"] == [], f"GPU kernels differ from the torch path on {result['vs_torch']}"


@pytest.mark.parametrize("case", list(CASES))
def test_the_gpu_engines_draw_thresholds_are_the_torch_paths_integer_for_integer(simulated, case):
    assert simulated[case]["thresholds_vs_torch"], "a 53-bit draw threshold of pi_t moved"


def test_the_simulator_ran_the_kernels_on_the_cuda_target(simulated):
    assert simulated["_simulator"] is True, "the child process did not run numba's CUDA simulator"


def test_the_budget_cases_stop_runs_inside_the_iterations_compared(simulated):
    assert all(simulated[c]["spent_any"] for c, spec in CASES.items() if spec[2] is not None)


def test_the_cases_train_ppo_runs_whose_value_tables_move(simulated):
    assert all(simulated[c]["ppo_values_moved"] for c in CASES)


def test_a_budget_cuts_a_ppo_runs_hands_inside_the_iterations_compared(simulated):
    assert simulated["kuhn-budget-cuts-ppo"]["hands_unused"] > 0


def test_without_numba_cuda_asking_for_the_gpu_engine_names_what_it_needs(monkeypatch):
    from oscc_core.engine import fused_cuda
    from oscc_core.learning.loop import Learners, RunSpec, Schedule
    monkeypatch.setattr(fused_cuda, "available", lambda: False)
    with pytest.raises(ValueError, match="numba's CUDA target"):
        Learners("kuhn", [RunSpec("cp_grpo", 1)], Schedule(iterations=1), engine="fused_cuda")


if __name__ == "__main__":      # the child process: numba's CUDA simulator is on
    warnings.filterwarnings("ignore", category=RuntimeWarning)    # uint64 hashing wraps, as intended
    sys.setswitchinterval(1e-5)   # the simulator's block runner polls its threads: a barrier waits a switch
    thread_safe_simulator()   # short switches make the simulator's own races likely
    from numba import config
    results = {name: _compare(case) for name, case in CASES.items()}
    print(json.dumps(results | {"_simulator": bool(config.ENABLE_CUDASIM)}))
