"""Random number state: manual_seed, Generator (being written)."""
