"""The prims: a small closed op set modelled on ``jax.lax`` that every core op decomposes to.

Prims are explicit: no implicit broadcasting or type promotion, no Python scalars in
tensor slots, dims already normalized.  See ``fnx.ops.prims``.
"""
