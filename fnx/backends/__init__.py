"""Eager backends: ``cpu`` (NumPy), ``cuda`` (JAX arrays on a GPU), ``meta`` (shapes only)."""
