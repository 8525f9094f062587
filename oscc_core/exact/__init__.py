"""Exact values by enumeration: sequence form, best response, NashConv, CFR+ and the exact moments of every arm."""
from oscc_core.exact.arm_moments import InfostateMoments, Moments, arm_moments, infostate_moments

__all__ = ["InfostateMoments", "Moments", "arm_moments", "infostate_moments"]
