"""Every tensor a run creates is created on the run's device (or, for host-side work, on the CPU by name).

CI has no GPU, so a tensor created without naming its device would go unseen on the CPU and break only on
CUDA.  Here each torch path runs on the CPU while torch's default device is "meta": a tensor created
without a device lands on meta, and a guard fails the test at the first operation that sees a meta tensor,
naming the library line.  `torch.from_numpy` (always the CPU, whatever the default) is made to answer on
meta too, so a device-less conversion is caught as well.
"""
from contextlib import contextmanager
import traceback

import numpy as np
import pytest
import torch
from torch.overrides import TorchFunctionMode

import device_cases
from oscc_core.engine import collector
from oscc_core.learning.loop import Learners
from oscc_core.learning.ordered_sum import ordered_index_add


def _tensors(x, out):
    if isinstance(x, torch.Tensor):
        out.append(x)
    elif isinstance(x, (list, tuple)):
        for y in x:
            _tensors(y, out)
    elif isinstance(x, dict):
        for y in x.values():
            _tensors(y, out)
    return out


def _library_line() -> str:
    frames = [f for f in traceback.extract_stack()[:-2] if "oscc_core" in f.filename]
    return f"{frames[-1].filename.split('oscc_core/')[-1]}:{frames[-1].lineno}" if frames else "outside oscc_core"


class _NoMeta(TorchFunctionMode):
    """Fails at the first torch call that takes or makes a tensor on the meta device."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if any(t.device.type == "meta" for t in _tensors(args, []) + _tensors(kwargs, []) + _tensors(out, [])):
            raise AssertionError(f"a tensor without the run's device reached {getattr(func, '__name__', func)} "
                                 f"at {_library_line()}")
        return out


def torch_paths_only(monkeypatch) -> None:
    """Collections and learners take the torch path on the CPU too (the compiled CPU kernels never run on a GPU
    run's device, so they are no part of what this test guards)."""
    real_init = Learners.__init__

    def init_torch(self, *args, **kwargs):
        real_init(self, *args, **{**kwargs, "engine": "torch"})

    monkeypatch.setattr(collector, "_choose_engine", lambda engine, *rest: None)
    monkeypatch.setattr(Learners, "__init__", init_torch)


@contextmanager
def default_device_meta(monkeypatch):
    """torch's default device is meta (and `from_numpy` answers on meta) inside the block."""
    real_from_numpy = torch.from_numpy
    monkeypatch.setattr(torch, "from_numpy", lambda a: real_from_numpy(a).to("meta"))
    before = torch.get_default_device()
    torch.set_default_device("meta")
    try:
        with _NoMeta():
            yield
    finally:
        torch.set_default_device(before)
        monkeypatch.setattr(torch, "from_numpy", real_from_numpy)


@pytest.mark.parametrize("case", list(device_cases.CASES))
def test_each_torch_path_creates_its_tensors_on_the_run_device(case, monkeypatch):
    torch_paths_only(monkeypatch)
    with default_device_meta(monkeypatch):
        result = device_cases.CASES[case]("cpu")
    assert result


def test_the_guard_catches_a_tensor_created_without_a_device(monkeypatch):
    with pytest.raises(AssertionError, match="without the run's device"):
        with default_device_meta(monkeypatch):
            torch.zeros(3, device="cpu") + torch.arange(3)


def test_the_guard_catches_from_numpy_without_a_device(monkeypatch):
    with pytest.raises(AssertionError, match="without the run's device"):
        with default_device_meta(monkeypatch):
            torch.zeros(3, device="cpu") + torch.from_numpy(np.arange(3.0))


# ----- the fixed summation order --------------------------------------------------------------------------------
def _random_terms(seed: int, rows: int, terms: int, width: int):
    g = np.random.default_rng(seed)
    index = torch.as_tensor(g.integers(0, rows, terms))
    scale = 10.0 ** g.integers(-12, 12, (terms, width))        # widely spread magnitudes: rounding shows
    source = torch.as_tensor(g.standard_normal((terms, width)) * scale)
    target = torch.as_tensor(g.standard_normal((rows, width)))
    return target, index, source


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("width", [1, 3])
def test_rank_slices_add_each_row_in_term_order_bitwise_like_cpu_index_add(seed, width):
    target, index, source = _random_terms(seed, rows=7, terms=300, width=width)
    expected = target.clone().index_add_(0, index, source)
    got = ordered_index_add(target.clone(), index, source, ranked=True)
    assert got.numpy().tobytes() == expected.numpy().tobytes()


def test_rank_slices_equal_a_plain_python_loop_in_term_order():
    target, index, source = _random_terms(11, rows=5, terms=120, width=2)
    expected = target.numpy().copy()
    for k, r in enumerate(index.tolist()):          # the order the CPU's index_add_ documents: term by term
        expected[r] = expected[r] + source.numpy()[k]
    got = ordered_index_add(target.clone(), index, source, ranked=True)
    assert got.numpy().tobytes() == expected.tobytes()


def test_term_order_matters_so_the_check_above_can_fail():
    target, index, source = _random_terms(11, rows=5, terms=120, width=2)
    reversed_order = torch.arange(len(index) - 1, -1, -1)
    forward = ordered_index_add(target.clone(), index, source, ranked=True)
    backward = ordered_index_add(target.clone(), index[reversed_order], source[reversed_order], ranked=True)
    assert forward.numpy().tobytes() != backward.numpy().tobytes()


def test_ordered_index_add_on_the_cpu_is_index_add_and_writes_in_place_through_views():
    target, index, source = _random_terms(3, rows=6, terms=50, width=1)
    flat = target.clone()
    ordered_index_add(flat.view(-1), index, source.view(-1), ranked=True)
    assert flat.numpy().tobytes() == target.clone().index_add_(0, index, source).numpy().tobytes()
    empty = torch.zeros(0, dtype=torch.int64)
    assert torch.equal(ordered_index_add(target.clone(), empty, source[:0], ranked=True), target)
