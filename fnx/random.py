"""``fnx.random``: the default generator and seeding, as ``torch.random``.

The state lives in ``fnx.core.random`` (L0), where every kernel that draws can reach it.

>>> import fnx
>>> _ = fnx.manual_seed(0); a = fnx.rand(3)
>>> _ = fnx.manual_seed(0); b = fnx.rand(3)
>>> bool((a == b).all())
True
"""
from .core.random import (Generator, default_generator, fork_rng, get_rng_state, initial_seed,
                          manual_seed, register_seed_hook, seed, set_rng_state)
from .ir.aten.random import next_key

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed",
           "get_rng_state", "set_rng_state", "fork_rng", "register_seed_hook", "next_key"]
