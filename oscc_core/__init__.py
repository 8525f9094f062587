"""oscc_core: coupled rollouts and exact solvers for reproducing the OSCC paper."""
__version__ = "0.1.0"

from . import exact  # noqa: E402
from .collector import collect  # noqa: E402
from .cfr import cfr_plus  # noqa: E402
from .policy import uniform_policy  # noqa: E402
from .solver import best_response, exploitability, nash_conv  # noqa: E402
