"""The learners' per-item functions compiled for CUDA from their CPU source (the device functions that
`learning.fused_cuda`'s kernels call).

`fused_baseline`, `fused_episodes` and `fused_kernels` write the fused
iteration as plain Python per-item functions (each module's
`SHARED_FUNCTIONS`) that numba compiles for the CPU.  `device_functions`
rebuilds each of them from its code object with `numba.cuda.jit(device=True)`
(the collector's `engine.fused_cuda.retarget`), over a copy of its module's
globals in which every function it calls is the GPU's: engine.fused's,
fixed_math's, and the shared functions of the modules before it (a history
baseline's play, which `fused_kernels._collect_point` calls, is compiled
first).  So the two engines run one source and cannot drift.  Every product
that a sum takes is `fixed_math.product`, here libdevice's `dmul_rn`, which
the CUDA compiler never fuses into an FMA (one rounding where the CPU makes
two).

Which of engine.fused's and fixed_math's functions are compiled for the GPU
is derived from the code (`device_callees`): every CPU-compiled function
(a numba CPU dispatcher) that a shared function or a kernel body reads.  A
list typed by hand could leave one out, and the CUDA simulator would not
notice (it runs the CPU function as plain Python), while a real device
would refuse to compile the kernel; a callee from any other module is an
error here.
"""
from __future__ import annotations

import types
from functools import lru_cache

from oscc_core import fixed_math
from oscc_core.engine import fused as engine_fused
from oscc_core.engine import fused_cuda as engine_cuda
from oscc_core.learning import fused_baseline, fused_episodes, fused_kernels

try:
    from numba import cuda
except ImportError:   # pragma: no cover - a numba without its CUDA target
    cuda = None

#: The modules of shared functions, callees first; the namespace's constants are the last one's.
_SOURCES = (fused_baseline, fused_episodes, fused_kernels)


def reads(function) -> set[str]:
    """Every global name the code of `function` (a plain function, or a numba dispatcher's Python function) reads,
    the code of its nested functions and comprehensions included."""
    function = getattr(function, "py_func", function)
    names, todo = set(), [function.__code__]
    while todo:
        code = todo.pop()
        names.update(code.co_names)
        todo.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return names


def is_cpu_function(value) -> bool:
    """Whether `value` is a function numba compiled for the CPU (a CPU dispatcher): a GPU kernel cannot call it."""
    from numba.core.registry import CPUDispatcher
    return isinstance(value, CPUDispatcher)


def device_callees(functions, scope: dict) -> set[str]:
    """The names of the CPU-compiled functions that `functions` read, each name looked up in `scope` (a module's
    globals)."""
    return {name for f in functions for name in reads(f) if is_cpu_function(scope.get(name))}


def _callees_first(module, names: set[str]) -> tuple[str, ...]:
    """`names` of `module`'s CPU-compiled functions with every such function they call, transitively, in the
    module's definition order (a callee is defined before its callers)."""
    wanted, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name not in wanted:
            wanted.add(name)
            todo.extend(device_callees([getattr(module, name)], vars(module)))
    return tuple(name for name, value in vars(module).items() if name in wanted and is_cpu_function(value))


def engine_and_math_callees(bodies=()) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(engine.fused's functions, fixed_math's functions but `product`) that the shared functions of `_SOURCES`
    and the kernel `bodies` call, from their code: each shared function's CPU-compiled callees in its own module's
    globals, each body's among engine.fused's and fixed_math's names.  Raises RuntimeError on a CPU-compiled callee
    of any other module (it would have no GPU version)."""
    shared = {name for source in _SOURCES for name in source.SHARED_FUNCTIONS}
    needed = {}                                      # name -> the module its CPU function comes from
    for source in _SOURCES:
        for name in device_callees([getattr(source, f) for f in source.SHARED_FUNCTIONS], vars(source)) - shared:
            needed[name] = getattr(source, name).py_func.__module__
    scope = {**vars(engine_fused), **vars(fixed_math)}
    for name in device_callees(bodies, scope) - shared:
        needed.setdefault(name, scope[name].py_func.__module__)
    needed.pop("product", None)                      # the GPU's own multiply (`_gpu_product`)
    elsewhere = sorted(f"{module}.{name}" for name, module in needed.items()
                       if module not in (engine_fused.__name__, fixed_math.__name__))
    if elsewhere:
        raise RuntimeError(f"the learners' GPU kernels call CPU-compiled functions that have no GPU version: "
                           f"{', '.join(elsewhere)}.")
    engine = tuple(n for n in engine_fused.SHARED_FUNCTIONS if needed.get(n) == engine_fused.__name__)
    missing = sorted(n for n, module in needed.items() if module == engine_fused.__name__ and n not in engine)
    if missing:
        raise RuntimeError(f"the learners' GPU kernels call engine.fused functions outside its SHARED_FUNCTIONS "
                           f"(no GPU version is built): {', '.join(missing)}.")
    maths = _callees_first(fixed_math, {n for n, module in needed.items() if module == fixed_math.__name__})
    return engine, tuple(n for n in maths if n != "product")


def _gpu_product():
    """`fixed_math.product` for the GPU: libdevice's correctly rounded multiply, never contracted into an FMA.
    (The simulator's libdevice is a stub, and its Python arithmetic rounds every operation: it keeps a * b.)"""
    from numba import config
    if config.ENABLE_CUDASIM:
        return fixed_math.product.py_func
    from numba.cuda import libdevice

    def product(a, b):
        return libdevice.dmul_rn(a, b)
    return cuda.jit(device=True)(product)


@lru_cache(maxsize=None)
def device_functions(bodies=()) -> dict:
    """`SHARED_FUNCTIONS` of `fused_baseline`, `fused_episodes` and `fused_kernels` as CUDA device functions,
    with the engine.fused and fixed_math functions that they and the kernel `bodies` call compiled the same way
    (`engine_and_math_callees`; name -> function, with `fused_kernels`' constants)."""
    from numba import config
    # The simulator would wrap every device-function call in a swap of the `cuda` module; the shared functions
    # never name `cuda`, so it runs them as plain Python (the kernels themselves stay simulated).
    device = (lambda function: function) if config.ENABLE_CUDASIM else cuda.jit(device=True)
    engine_callees, math_callees = engine_and_math_callees(bodies)
    product = _gpu_product()
    engine = engine_cuda.retarget(device)
    maths_module = types.ModuleType("fixed_math_cuda")
    maths_module.__dict__.update(vars(fixed_math), product=product)
    maths = engine_cuda.retarget(device, math_callees, maths_module)
    compiled = {"product": product, **{name: engine[name] for name in engine_callees},
                **{name: maths[name] for name in math_callees}}
    for source in _SOURCES:
        module = types.ModuleType(source.__name__.rsplit(".", 1)[-1] + "_cuda")
        module.__dict__.update(vars(source), **compiled)
        namespace = engine_cuda.retarget(device, source.SHARED_FUNCTIONS, module)
        compiled.update({name: namespace[name] for name in source.SHARED_FUNCTIONS})
    namespace.update(compiled)
    return namespace
