"""Throughput inputs: fixed figures with software-gain trajectories (curves and simulators later)."""

from econ.throughput.trajectory import gain_multiplier

__all__ = ["gain_multiplier"]
