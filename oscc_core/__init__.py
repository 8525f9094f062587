"""oscc_core: coupled rollouts and exact solvers for reproducing the OSCC paper."""
__version__ = "0.1.0"

from oscc_core import exact  # noqa: E402
from oscc_core.engine.collector import collect  # noqa: E402
from oscc_core.exact.cfr import cfr_plus  # noqa: E402
from oscc_core.exact.exploitability import best_response, exploitability, nash_conv  # noqa: E402
from oscc_core.policy import uniform_policy  # noqa: E402
