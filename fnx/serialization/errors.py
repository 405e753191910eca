"""``CheckpointError``: the one error ``fnx.load`` raises for a file it will not read."""
from __future__ import annotations

import pickle

__all__ = ["CheckpointError"]


class CheckpointError(RuntimeError, pickle.UnpicklingError):
    """``fnx.load`` could not read a checkpoint: the file is truncated or corrupt (bad zip,
    bad CRC, missing member, sizes that disagree with the data, nesting too deep), is not a
    checkpoint format fnx reads, or names a class or function that is not allowed
    (``fnx.serialization.add_safe_globals``).  A ``RuntimeError`` and a
    ``pickle.UnpicklingError``, the types ``torch.load`` raises for such files, so code that
    catches either keeps working.

    >>> import fnx, io
    >>> try:
    ...     fnx.load(io.BytesIO(b"not a checkpoint"))
    ... except fnx.serialization.CheckpointError as e:
    ...     print(type(e).__name__, isinstance(e, RuntimeError))
    CheckpointError True
    """
