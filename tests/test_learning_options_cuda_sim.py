"""The GPU kernels under the converging learner's later options (history baseline, alpha decay, weighted averaging)
compute, bit for bit, what the fused CPU kernels and the torch path compute: all options on together, and each
option switched on alone (a bug that shows only when one option is on without the others: the kernels take
another path when, say, the average is weighted but the pull is not annealed).

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

#: Every later option on together (beside the baseline each case names).
ALL = dict(baseline_floor=0.3, alpha_decay="inverse_sqrt", alpha_horizon=2.0, average_power=2)
#: case -> (game, budget, iterations, decision points, seeds, options)
CASES = {
    "kuhn-options-budget": ("kuhn", 60, 6, 4, (3, 5), dict(ALL, baseline="history")),
    "leduc-options-budget": ("leduc", 30, 3, 3, (5,), dict(ALL, baseline="history")),
    "leduc-policy-baseline": ("leduc", 30, 3, 3, (7,), dict(ALL, baseline="policy")),
    # each option alone, the others at the values that change nothing
    "kuhn-history-baseline-alone": ("kuhn", 15, 4, 3, (3,), dict(baseline="history")),
    "kuhn-policy-baseline-alone": ("kuhn", 15, 4, 3, (3,), dict(baseline="policy")),
    "kuhn-baseline-floor-alone": ("kuhn", 15, 4, 3, (3,), dict(baseline="history", baseline_floor=0.7)),
    "kuhn-alpha-decay-alone": ("kuhn", 15, 4, 3, (3,), dict(alpha_decay="inverse_sqrt", alpha_horizon=2.0)),
    "kuhn-average-power-alone": ("kuhn", 15, 4, 3, (3,), dict(average_power=2)),
}
COMPARED = ("logits", "values", "cumulative", "ledger", "spent", "magnet", "average", "coverage", "draws",
            "baseline_values", "baseline_counts")


def _compare(case: tuple) -> dict:
    import torch
    import test_learning_fused_cuda_sim as sim
    from oscc_core.learning import loop
    game, budget, iterations, points, seeds, options = case

    def run(engine):
        from dataclasses import replace
        from oscc_core.learning import study_design
        keep = study_design.learner_schedule

        def with_options(*args, **kwargs):
            return replace(keep(*args, **kwargs), **options)
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
        captured_schedule["schedule"] = learners.schedule
        out["baseline_values"] = learners.baseline_values.clone()
        out["baseline_counts"] = learners.baseline_counts.clone()
        return out

    captured_schedule = {}
    with torch.device("meta"):
        runs = {"fused_cuda": run("fused_cuda")}
    runs.update({engine: run(engine) for engine in ("fused", "torch")})

    def same(a, b):
        a, b = (x.numpy() if isinstance(x, torch.Tensor) else x for x in (a, b))
        return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()

    gpu = runs["fused_cuda"]
    schedule = captured_schedule["schedule"]
    return {"engine": gpu["engine"],
            "options": {k: getattr(schedule, k) for k in ("baseline", "baseline_floor", "alpha_decay",
                                                           "alpha_horizon", "average_power")},
            **{f"vs_{e}": [k for k in COMPARED if not same(gpu[k], runs[e][k])] for e in ("fused", "torch")},
            "baseline_moved": bool(gpu["baseline_counts"].sum() > 0),
            "spent_any": bool(gpu["spent"].numpy().any())}


@pytest.fixture(scope="module")
def simulated():
    return simulated_results(__file__, timeout=900)


#: The options' values that change nothing (`loop.LATER_DEFAULTS`), written out.
OFF = {"baseline": "none", "baseline_floor": 0.2, "alpha_decay": "constant", "alpha_horizon": 1.0,
       "average_power": 0}


@pytest.mark.parametrize("case", list(CASES))
def test_the_gpu_kernels_under_the_options_equal_the_cpu_kernels_and_the_torch_path(simulated, case):
    result = simulated[case]
    assert result["engine"] == "fused_cuda"
    assert result["options"] == {**OFF, **CASES[case][-1]}          # the runs took exactly the case's options
    assert result["vs_fused"] == [], f"GPU kernels differ from the fused CPU kernels on {result['vs_fused']}"
    assert result["vs_torch"] == [], f"GPU kernels differ from the torch path on {result['vs_torch']}"
    assert result["baseline_moved"] == (CASES[case][-1].get("baseline", "none") != "none")
    assert result["spent_any"]


def test_each_option_has_a_case_with_it_alone():
    """Alone: with nothing else on but what the option needs to act at all (a floor needs a baseline, the horizon
    an annealed pull)."""
    needs = {"baseline_floor": {"baseline"}, "alpha_horizon": {"alpha_decay"}, "alpha_decay": {"alpha_horizon"}}
    alone = [options for name, (*_, options) in CASES.items() if name.endswith("-alone")]
    for option in OFF:
        assert any(option in o and set(o) - {option} <= needs.get(option, set()) for o in alone), option


def test_the_simulator_ran(simulated):
    assert simulated["_simulator"] is True


if __name__ == "__main__":      # the child process: numba's CUDA simulator is on
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    sys.setswitchinterval(1e-5)
    thread_safe_simulator()
    from numba import config
    results = {name: _compare(case) for name, case in CASES.items()}
    print(json.dumps(results | {"_simulator": bool(config.ENABLE_CUDASIM)}))
