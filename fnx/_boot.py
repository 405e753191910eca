"""The boot: what ``import fnx`` runs, in order, lowest layer first (ARCHITECTURE.md).

Importing a module defines what it holds (an op family defines its ops, a backend module
registers its kernels on them). The ``install`` steps read every op that exists then,
so they run after all ops are defined, and in this order: a later registration for a
key replaces an earlier one (Autograd's fallback replaces the default fallthrough).
Ops an extension defines afterwards get these kernels from each key's fallback.
"""
from .autograd import kernels as autograd_kernels
from .backends import cpu  # noqa: F401  (its modules register the CPU kernels)
from .backends import cuda, meta, sparse
from .dispatch import defaults
from .ir import aten  # noqa: F401  (defines every aten op, and the prims)
from .keys import autocast, functionalize, inplace_or_view

defaults.install()                  # L0: the keys most ops pass through; the Tracer's fallback
sparse.install()                    # L2: the sparse keys' fallback (PyTorch's NotImplementedError)
meta.register_all()                 # L2: a Meta kernel from every op's meta function
inplace_or_view.register_all()      # L2: versions and view bookkeeping, from every schema
functionalize.register_all()        # L2: in-place ops and views for functional backends
autograd_kernels.install()          # L2: Autograd kernels from every derivative formula
autocast.register_all()             # L2: the Autocast keys' kernels, from the cast policy
cuda.register()                     # L5: the CUDA key's kernels, through the JAX lowering
