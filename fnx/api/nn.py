"""Public neural-network functions at the top level (``fnx.softmax``, ``fnx.conv2d``, ...)."""
__all__ = []
