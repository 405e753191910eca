"""L2, the kernels of the non-backend dispatch keys: ADInplaceOrView (versions and views)
and Functionalize (in-place ops and views on immutable-array backends)."""
