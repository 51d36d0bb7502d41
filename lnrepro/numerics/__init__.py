"""Numerics of Python tests: comparisons, their tolerances and margins."""
