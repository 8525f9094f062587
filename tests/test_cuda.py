"""On CUDA every torch path computes the CPU's numbers bit for bit: the collector (counter-based integer
streams), the learners (fixed-rounding exp, correctly rounded sqrt and division, every sum in one order) and
one small call of each chapter's core computation (`device_cases`).  Skipped where CUDA is absent."""
import pytest
import torch

import device_cases

NO_CUDA = "CUDA is not available on this machine (these tests compare CUDA with the CPU)"
pytestmark = [pytest.mark.cuda, pytest.mark.skipif(not torch.cuda.is_available(), reason=NO_CUDA)]


@pytest.mark.parametrize("case", list(device_cases.CASES))
def test_cuda_computes_the_cpus_numbers_bit_for_bit(case):
    on_cpu = device_cases.CASES[case]("cpu")
    on_cuda = device_cases.CASES[case]("cuda")
    assert device_cases.differences(on_cpu, on_cuda) == []


def test_ordered_index_add_on_cuda_is_the_cpus_index_add():
    from oscc_core.learning.ordered_sum import ordered_index_add
    g = torch.Generator().manual_seed(0)
    index = torch.randint(0, 9, (5000,), generator=g)
    scale = 10.0 ** torch.randint(-9, 9, (5000, 3), generator=g)          # spread magnitudes: rounding shows
    source = torch.randn(5000, 3, generator=g, dtype=torch.float64) * scale
    target = torch.randn(9, 3, generator=g, dtype=torch.float64)
    expected = target.clone().index_add_(0, index, source)
    got = ordered_index_add(target.cuda(), index.cuda(), source.cuda()).cpu()
    assert got.numpy().tobytes() == expected.numpy().tobytes()


def test_on_cuda_the_enumerate_and_sample_arms_run_on_the_gpu_kernels():
    from oscc_core.learning.loop import Learners, RunSpec, Schedule
    learners = Learners("leduc", [RunSpec("cp_grpo", 1), RunSpec("grpo", 1)], Schedule(iterations=1), device="cuda")
    assert learners.engine == "fused_cuda", "numba-cuda missing? the learners fell back to the torch path"
