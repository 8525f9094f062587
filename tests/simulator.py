"""Running a test file as a child process under numba's CUDA simulator (CI has no GPU).

numba reads NUMBA_ENABLE_CUDASIM when `numba.cuda` is first imported, so the
simulated cases run in their own process: the test file run as a script,
printing one JSON line of results last.
"""
import json
import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path


def simulated_results(script: str, timeout: int) -> dict:
    """The JSON object `script` prints last when run under the simulator (its stderr's tail if it fails)."""
    repo = Path(script).resolve().parents[1]
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1",
               PYTHONPATH=os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def thread_safe_simulator() -> None:
    """Close the simulator's two races between a block's threads (`thread_safe_shared_arrays`,
    `thread_safe_module_swap`); each simulated child calls this before its first launch."""
    thread_safe_shared_arrays()
    thread_safe_module_swap()


@contextmanager
def swapped_cuda_module(fn, fake_cuda_module):
    """numba's `kernelapi.swapped_cuda_module` (the kernel's `cuda` name pointed at the simulated module while it
    runs), reading the globals in one atomic copy instead of a generator over the live dict."""
    from numba import cuda
    globals_ = fn.__globals__
    snapshot = globals_.copy()              # one C call under the GIL: no other thread runs in between
    original = dict((k, v) for k, v in snapshot.items() if v is cuda)
    globals_.update(dict.fromkeys(original, fake_cuda_module))
    try:
        yield
    finally:
        globals_.update(original)


def thread_safe_module_swap() -> None:
    """Make the simulator's swap of the `cuda` name safe while other threads of the block run.

    Every call of a device function swaps the `cuda` name in its globals,
    reading them with a Python generator over the live dict.  Another thread
    of the block may meanwhile add a name to those globals: its first
    warning (the uint64 hashing wraps, a RuntimeWarning even when ignored)
    makes `__warningregistry__` there.  The reading thread then raises
    "dictionary changed size during iteration" (seen as a flaky launch
    error).  Here the globals are copied in one atomic call first.
    """
    from numba.cuda.simulator import kernel, kernelapi
    kernelapi.swapped_cuda_module = kernel.swapped_cuda_module = swapped_cuda_module


def thread_safe_shared_arrays() -> None:
    """Make the simulator's `cuda.shared.array` safe for a block's threads.

    The simulator runs a block's threads as Python threads and finds a shared
    array by the line that declares it: the first thread to get there makes
    it.  Its check-then-store is not atomic, so two threads arriving together
    could each make one, and each then works in an array of its own: a block
    kernel reads what no thread wrote (seen as a flaky garbage index).  Here
    the store is one `dict.setdefault`, atomic under the GIL.
    """
    import traceback

    import numpy as np
    from numba.cuda.simulator import kernelapi
    original = kernelapi.FakeCUDAShared.array

    def array(self, shape, dtype):
        if shape == 0:                              # dynamic shared memory: one buffer, no race
            return original(self, shape, dtype)
        if isinstance(dtype, kernelapi.types.Type):
            dtype = kernelapi.numpy_support.as_dtype(dtype)
        caller = traceback.extract_stack(sys._getframe())[-2][0:2]
        return self._allocations.setdefault(caller, np.empty(shape, dtype))

    kernelapi.FakeCUDAShared.array = array


def blocks_at_once() -> None:
    """Make the simulator run all blocks of a kernel launch at the same time, as a GPU does.

    The simulator runs a launch's blocks one after another, so two blocks that
    share scratch memory by mistake (per-run offsets that overlap) never meet:
    each block writes the shared rows before it reads them.  Here every block
    runs in its own Python thread (each with its threads and barrier, as
    before), and a block's `cuda.shared.array` is its own (keyed by block and
    declaring line, made atomically, as `thread_safe_shared_arrays` does).  With
    a short switch interval (`sys.setswitchinterval`) the blocks interleave
    finely: a run whose scratch overlaps another's reads the other's numbers.
    """
    import threading
    import traceback

    import numpy as np
    from numba.cuda.simulator import kernel, kernelapi

    original_array = kernelapi.FakeCUDAShared.array

    def array(self, shape, dtype):
        if shape == 0:
            return original_array(self, shape, dtype)
        if isinstance(dtype, kernelapi.types.Type):
            dtype = kernelapi.numpy_support.as_dtype(dtype)
        caller = traceback.extract_stack(sys._getframe())[-2][0:2]
        block = tuple(threading.current_thread().blockIdx)
        return self._allocations.setdefault((block, caller), np.empty(shape, dtype))

    original_call = kernel.FakeCUDAKernel.__call__

    def call(self, *args):
        """`FakeCUDAKernel.__call__` (numba-cuda's simulator) with the loop over blocks run concurrently."""
        if self._device:
            return original_call(self, *args)
        grid_dim, block_dim = kernel.normalize_kernel_dimensions(self.grid_dim, self.block_dim)
        fake_cuda_module = kernel.FakeCUDAModule(grid_dim, block_dim, self.dynshared_size)
        with kernel._push_kernel_context(fake_cuda_module):
            retr = []

            def fake_arg(arg):
                ty = None
                for extension in self.extensions:
                    ty, arg = extension.prepare_args(ty, arg, stream=0, retr=retr)
                if isinstance(arg, np.ndarray) and arg.ndim > 0:
                    ret = kernel.wrap_arg(arg).to_device(retr)
                elif isinstance(arg, kernel.ArgHint):
                    ret = arg.to_device(retr)
                elif isinstance(arg, np.void):
                    ret = kernel.FakeCUDAArray(arg)
                else:
                    ret = arg
                return kernel.FakeWithinKernelCUDAArray(ret) if isinstance(ret, kernel.FakeCUDAArray) else ret

            fake_args = [fake_arg(arg) for arg in args]
            errors = []

            def run_block(grid_point):
                try:
                    kernel.BlockManager(self.fn, grid_dim, block_dim, self._debug).run(grid_point, *fake_args)
                except BaseException as error:          # raised in the launching thread below
                    errors.append(error)

            with kernelapi.swapped_cuda_module(self.fn, fake_cuda_module):
                blocks = [threading.Thread(target=run_block, args=(p,)) for p in np.ndindex(*grid_dim)]
                for b in blocks:
                    b.start()
                for b in blocks:
                    b.join()
            if errors:
                raise errors[0]
            for wb in retr:
                wb()

    kernelapi.FakeCUDAShared.array = array
    kernel.FakeCUDAKernel.__call__ = call
