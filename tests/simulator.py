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
