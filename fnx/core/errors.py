"""``OutOfMemoryError``: the one exception an allocation failure raises on every path."""
from __future__ import annotations

__all__ = ["OutOfMemoryError", "out_of_memory"]


class OutOfMemoryError(RuntimeError):
    """A device ran out of memory, as ``torch.OutOfMemoryError``: a NumPy allocation of the
    CPU backend, or XLA's ``RESOURCE_EXHAUSTED`` on a compiled program or the cuda backend.
    The message names the op (or the program) and the size asked for.

    >>> import fnx
    >>> try:
    ...     fnx.empty(10**13)
    ... except fnx.OutOfMemoryError as e:
    ...     print(str(e)[:34], isinstance(e, RuntimeError))
    aten::empty.memory_format: out of  True
    """


def out_of_memory(error, what: str):
    """The ``OutOfMemoryError`` for ``error`` raised while running ``what``: a
    ``MemoryError`` (NumPy's allocation failure) or an XLA runtime error whose status is
    ``RESOURCE_EXHAUSTED``; None for any other error.

    >>> e = out_of_memory(RuntimeError("RESOURCE_EXHAUSTED: Out of memory allocating 8 "
    ...                                "bytes."), "the compiled program f")
    >>> type(e).__name__
    'OutOfMemoryError'
    >>> print(str(e))
    the compiled program f: out of memory: RESOURCE_EXHAUSTED: Out of memory allocating 8 bytes.
    """
    if isinstance(error, OutOfMemoryError):
        return None
    if isinstance(error, MemoryError):
        detail = str(error) or "the allocation failed"
        return OutOfMemoryError(f"{what}: out of memory on cpu: {detail}")
    if isinstance(error, RuntimeError) and "RESOURCE_EXHAUSTED" in str(error):
        return OutOfMemoryError(f"{what}: out of memory: {error}")
    return None
