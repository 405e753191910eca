"""CPU kernels of the neural-network ops that have a direct kernel."""
