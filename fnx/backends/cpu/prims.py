"""CPU kernels of the prims (NumPy/SciPy)."""
