"""L3, the graph: ``Graph``/``Node``, the tracer that records them, decomposition by level
and the passes (functionalize, dead-code elimination, CSE, partitioning)."""
