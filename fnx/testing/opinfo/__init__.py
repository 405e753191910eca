"""OpInfo entries, one module per op family; ``fnx.testing.entries()`` imports them all.

A family module builds ``OpInfo``s and passes them to ``fnx.testing.register``::

    from fnx.testing import OpInfo, SampleInput, make_tensor, register
    from fnx.testing.reference_dtypes import pointwise

    def _samples(info, device, dtype):
        yield SampleInput(make_tensor((3, 4), dtype, device))

    register(OpInfo(fnx.ops.aten.exp.default, pointwise(np.exp, "int_to_float", n=1),
                    sample_inputs=_samples))
"""
