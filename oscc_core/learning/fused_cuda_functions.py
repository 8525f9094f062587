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
"""
from __future__ import annotations

import types
from functools import lru_cache

from oscc_core import fixed_math
from oscc_core.engine import fused_cuda as engine_cuda
from oscc_core.learning import fused_baseline, fused_episodes, fused_kernels

try:
    from numba import cuda
except ImportError:   # pragma: no cover - a numba without its CUDA target
    cuda = None

#: engine.fused's and fixed_math's functions the learning kernels call.
_ENGINE_CALLEES = ("_absorb", "_bits", "_draw", "_play_pair", "_public_card", "_step")
_MATH_CALLEES = ("exp_scalar", "exp_rows")
#: The modules of shared functions, callees first; the namespace's constants are the last one's.
_SOURCES = (fused_baseline, fused_episodes, fused_kernels)


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
def device_functions() -> dict:
    """`SHARED_FUNCTIONS` of `fused_baseline`, `fused_episodes` and `fused_kernels` as CUDA device functions,
    with engine.fused's and fixed_math's functions compiled the same way (name -> function, with `fused_kernels`'
    constants)."""
    from numba import config
    # The simulator would wrap every device-function call in a swap of the `cuda` module; the shared functions
    # never name `cuda`, so it runs them as plain Python (the kernels themselves stay simulated).
    device = (lambda function: function) if config.ENABLE_CUDASIM else cuda.jit(device=True)
    product = _gpu_product()
    engine = engine_cuda.retarget(device)
    maths_module = types.ModuleType("fixed_math_cuda")
    maths_module.__dict__.update(vars(fixed_math), product=product)
    maths = engine_cuda.retarget(device, _MATH_CALLEES, maths_module)
    compiled = {"product": product, **{name: engine[name] for name in _ENGINE_CALLEES},
                **{name: maths[name] for name in _MATH_CALLEES}}
    for source in _SOURCES:
        module = types.ModuleType(source.__name__.rsplit(".", 1)[-1] + "_cuda")
        module.__dict__.update(vars(source), **compiled)
        namespace = engine_cuda.retarget(device, source.SHARED_FUNCTIONS, module)
        compiled.update({name: namespace[name] for name in source.SHARED_FUNCTIONS})
    namespace.update(compiled)
    return namespace
