"""Running a test file as a child process under numba's CUDA simulator (CI has no GPU).

numba reads NUMBA_ENABLE_CUDASIM when `numba.cuda` is first imported, so the
simulated cases run in their own process: the test file run as a script,
printing one JSON line of results last.
"""
import json
import os
import subprocess
import sys
from pathlib import Path


def simulated_results(script: str, timeout: int) -> dict:
    """The JSON object `script` prints last when run under the simulator (its stderr's tail if it fails)."""
    repo = Path(script).resolve().parents[1]
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1",
               PYTHONPATH=os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


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
