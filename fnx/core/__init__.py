"""L0, the core: dtypes, devices, dispatch keys and the thread-local key sets, grad mode,
``Tensor`` and random number state. Imports nothing else of fnx."""
