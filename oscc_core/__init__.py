"""oscc_core: coupled rollouts and exact solvers for reproducing the OSCC paper."""
__version__ = "0.1.0"

from . import exact  # noqa: E402
from .collector import collect  # noqa: E402
