"""The test helper's fix of a race in numba's CUDA simulator (`simulator.swapped_cuda_module`).

Each device-function call under the simulator swaps the `cuda` name in the function's globals, reading them
while the block's other threads run.  A thread's first warning adds `__warningregistry__` to those globals
(even under an "ignore" filter), which made a launch raise "dictionary changed size during iteration" once
in a while.  The race is made certain here: a trace hook adds that name the moment the swap starts reading.
"""
from __future__ import annotations

import sys
import warnings

import pytest

from simulator import swapped_cuda_module

FAKE_MODULE = object()


def _function_with_cuda_global():
    """A function whose globals hold `numba.cuda` under the name `cuda`, as a retargeted kernel's do."""
    from numba import cuda
    namespace = {"__builtins__": __builtins__, "cuda": cuda}
    exec("def kernel_body():\n    return cuda\n", namespace)
    return namespace["kernel_body"]


def _swap_while_globals_grow(swap, fn):
    """What `fn` sees as `cuda` inside `swap`, a name being added to its globals as the swap reads them (when the
    swap's generator or comprehension over them starts)."""
    def hook(frame, event, arg):
        caller = frame.f_back
        if (event == "call" and frame.f_code.co_name.startswith("<") and caller is not None
                and caller.f_code.co_name == "swapped_cuda_module"):
            fn.__globals__.setdefault("__warningregistry__", {})
        return None
    sys.settrace(hook)
    try:
        with swap(fn, FAKE_MODULE):
            sys.settrace(None)
            return fn()
    finally:
        sys.settrace(None)


def test_a_name_added_to_the_globals_during_the_swap_does_not_break_it():
    fn = _function_with_cuda_global()
    assert _swap_while_globals_grow(swapped_cuda_module, fn) is FAKE_MODULE
    assert "__warningregistry__" in fn.__globals__, "the hook never ran: the race was not made"


def test_the_swap_gives_the_cuda_name_back_afterwards():
    from numba import cuda
    fn = _function_with_cuda_global()
    with swapped_cuda_module(fn, FAKE_MODULE):
        assert fn() is FAKE_MODULE
    assert fn() is cuda


def test_numbas_own_swap_raises_in_the_same_race_so_the_race_is_reproduced():
    from numba.cuda.simulator import kernelapi
    with pytest.raises(RuntimeError, match="dictionary changed size during iteration"):
        _swap_while_globals_grow(kernelapi.swapped_cuda_module, _function_with_cuda_global())


def test_an_ignored_warning_still_adds_the_registry_to_the_globals_of_the_code_that_warns():
    namespace = {"__builtins__": __builtins__, "warnings": warnings}
    exec("def warn():\n    warnings.warn('wraps', RuntimeWarning)\n", namespace)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        namespace["warn"]()
    assert "__warningregistry__" in namespace
