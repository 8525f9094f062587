"""The device functions the learners' CUDA kernels call are derived from the code
(`oscc_core.learning.fused_cuda_functions`), and the derivation is complete.

Under numba's CUDA simulator a device function left out of the GPU build still runs (the simulator calls the CPU
function as plain Python), so the simulator tests cannot see it; a real device would refuse to compile the kernel.
Here, without a GPU and without the simulator (numba builds CUDA functions lazily), every function of the built
namespace and every kernel body is read: no global name any of them reads may be a CPU-compiled function.  The
derivation itself is checked on small modules written here, whose callees are known by construction.
"""
from __future__ import annotations

import types

import numba
import pytest

pytest.importorskip("numba.cuda")

from oscc_core.learning import fused_cuda, fused_cuda_functions as fcf  # noqa: E402

BODIES = (fused_cuda._rows_body, fused_cuda._law_block, fused_cuda._points_body, fused_cuda._update_block)


def toy_module() -> types.ModuleType:
    """f1 <- f2 <- f3 (CPU-compiled, each calling the one before), `plain` (not compiled), and `shared`, which calls
    f3 inside a comprehension, f1 directly and `plain`."""
    module = types.ModuleType("toy")
    source = ("import numba\n"
              "@numba.njit\ndef f1(x):\n    return x + 1\n"
              "@numba.njit\ndef f2(x):\n    return f1(x) * 2\n"
              "@numba.njit\ndef f3(x):\n    return f2(x) - 1\n"
              "def plain(x):\n    return x\n"
              "def shared(xs):\n    return [f3(x) for x in xs] + [f1(plain(0))]\n")
    exec(compile(source, "toy.py", "exec"), module.__dict__)
    return module


def test_the_names_a_function_reads_include_its_comprehensions():
    toy = toy_module()
    assert {"f3", "f1", "plain"} <= fcf.reads(toy.shared)


def test_the_callees_are_the_cpu_compiled_functions_a_function_reads_and_nothing_else():
    toy = toy_module()
    assert fcf.device_callees([toy.shared], vars(toy)) == {"f1", "f3"}          # `plain` is not compiled
    assert fcf.device_callees([toy.f2], vars(toy)) == {"f1"}


def test_callees_come_with_their_own_callees_in_definition_order():
    assert fcf._callees_first(toy_module(), {"f3"}) == ("f1", "f2", "f3")


def test_a_callee_of_another_module_is_refused_naming_it(monkeypatch):
    toy = toy_module()
    toy.SHARED_FUNCTIONS = ("shared",)
    monkeypatch.setattr(fcf, "_SOURCES", (toy,))
    with pytest.raises(RuntimeError, match=r"no GPU version: toy\.f1, toy\.f3\.$"):
        fcf.engine_and_math_callees()


def test_the_learners_kernels_call_these_engine_and_math_functions():
    """The list the derivation gives today, read off the code by hand: the shared functions' engine.fused callees
    (the streams' absorb and bits, a draw, a public card, a step, a played pair) and the kernels' exp."""
    engine, maths = fcf.engine_and_math_callees(BODIES)
    assert set(engine) == {"_absorb", "_bits", "_draw", "_public_card", "_step", "_play_pair"}
    assert maths == ("exp_scalar",)


@pytest.fixture(scope="module")
def namespace():
    fcf.device_functions.cache_clear()
    built = fcf.device_functions(BODIES)
    yield built
    fcf.device_functions.cache_clear()


def test_no_device_function_reads_a_cpu_compiled_function(namespace):
    found = []
    for name, value in namespace.items():
        function = getattr(value, "py_func", None)
        if function is None or fcf.is_cpu_function(value):
            continue
        for read in fcf.reads(function):
            if fcf.is_cpu_function(function.__globals__.get(read)):
                found.append(f"{name} reads {read}")
    assert found == []
    assert {"_collect_point", "_play_corrected", "_draw", "exp_scalar"} <= set(namespace)


def test_no_kernel_body_reads_a_cpu_compiled_function(namespace):
    scope = dict(namespace)
    found = [f"{body.__name__} reads {read}" for body in BODIES for read in fcf.reads(body)
             if fcf.is_cpu_function(scope.get(read))]
    missing = [f"{body.__name__} reads {read}" for body in BODIES for read in fcf.reads(body)
               if read.startswith("_") and read not in scope and not hasattr(fused_cuda, read)]
    assert found == [] and missing == []


def test_a_cpu_function_is_a_numba_cpu_dispatcher():
    assert fcf.is_cpu_function(numba.njit(lambda x: x)) and not fcf.is_cpu_function(lambda x: x)
