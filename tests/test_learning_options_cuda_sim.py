"""The GPU kernels under the converging learner's later options (history baseline, alpha decay, weighted averaging)
compute, bit for bit, what the fused CPU kernels and the torch path compute.

As `test_learning_fused_cuda_sim.py` (whose case runner this file uses): the kernels run under numba's CUDA
simulator in one child process (this file run as a script), every arm, a budget that stops runs mid-iteration,
a snapshot restored for every run and run by run, torch's default device set to "meta" for the GPU engine.
"""
from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from simulator import simulated_results, thread_safe_simulator  # noqa: E402

#: case -> (game, budget, iterations, decision points, seeds, baseline)
CASES = {
    "kuhn-options-budget": ("kuhn", 60, 6, 4, (3, 5), "history"),
    "leduc-options-budget": ("leduc", 30, 3, 3, (5,), "history"),
    "leduc-policy-baseline": ("leduc", 30, 3, 3, (7,), "policy"),
}
OPTIONS = dict(baseline_floor=0.3, alpha_decay="inverse_sqrt", alpha_horizon=2.0, average_power=2)
COMPARED = ("logits", "values", "cumulative", "ledger", "spent", "magnet", "average", "coverage", "draws",
            "baseline_values", "baseline_counts")


def _compare(case: tuple) -> dict:
    import torch
    import test_learning_fused_cuda_sim as sim
    from oscc_core.learning import loop
    game, budget, iterations, points, seeds, baseline = case

    def run(engine):
        from dataclasses import replace
        from oscc_core.learning import study_design
        keep = study_design.learner_schedule

        def with_options(*args, **kwargs):
            return replace(keep(*args, **kwargs), baseline=baseline, **OPTIONS)
        study_design.learner_schedule = with_options
        captured = {}
        make = loop.Learners.__init__

        def init(self, *args, **kwargs):
            make(self, *args, **kwargs)
            captured["learners"] = self
        loop.Learners.__init__ = init
        try:
            out = sim._run_case(engine, game, "converging", budget, iterations, points, False, seeds)
        finally:
            study_design.learner_schedule, loop.Learners.__init__ = keep, make
        learners = captured["learners"]
        out["baseline_values"] = learners.baseline_values.clone()
        out["baseline_counts"] = learners.baseline_counts.clone()
        return out

    with torch.device("meta"):
        runs = {"fused_cuda": run("fused_cuda")}
    runs.update({engine: run(engine) for engine in ("fused", "torch")})

    def same(a, b):
        a, b = (x.numpy() if isinstance(x, torch.Tensor) else x for x in (a, b))
        return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()

    gpu = runs["fused_cuda"]
    return {"engine": gpu["engine"],
            **{f"vs_{e}": [k for k in COMPARED if not same(gpu[k], runs[e][k])] for e in ("fused", "torch")},
            "baseline_moved": bool(gpu["baseline_counts"].sum() > 0),
            "spent_any": bool(gpu["spent"].numpy().any())}


@pytest.fixture(scope="module")
def simulated():
    return simulated_results(__file__, timeout=900)


@pytest.mark.parametrize("case", list(CASES))
def test_the_gpu_kernels_under_the_options_equal_the_cpu_kernels_and_the_torch_path(simulated, case):
    result = simulated[case]
    assert result["engine"] == "fused_cuda"
    assert result["vs_fused"] == [], f"GPU kernels differ from the fused CPU kernels on {result['vs_fused']}"
    assert result["vs_torch"] == [], f"GPU kernels differ from the torch path on {result['vs_torch']}"
    assert result["baseline_moved"] and result["spent_any"]


def test_the_simulator_ran(simulated):
    assert simulated["_simulator"] is True


if __name__ == "__main__":      # the child process: numba's CUDA simulator is on
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    sys.setswitchinterval(1e-5)
    thread_safe_simulator()
    from numba import config
    results = {name: _compare(case) for name, case in CASES.items()}
    print(json.dumps(results | {"_simulator": bool(config.ENABLE_CUDASIM)}))
