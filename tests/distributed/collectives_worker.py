"""Run under ``python -m fnx.distributed.run``: every collective against NumPy.

Rank r contributes ``base(r)``; the expected results are computed here with NumPy from
every rank's (known) input, independently of fnx.
"""
import os
import sys

import numpy as np

import fnx
import fnx.distributed as dist


def base(r, shape=(2, 3), dtype=np.float32):
    return (np.arange(np.prod(shape)).reshape(shape) * (r + 1) + r).astype(dtype)


def main():
    dist.init_process_group("gloo")
    r, n = dist.get_rank(), dist.get_world_size()
    assert (r, n) == (int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
    every = np.stack([base(q) for q in range(n)])
    # all_reduce, every op
    for op, ref in [(dist.ReduceOp.SUM, every.sum(0)), (dist.ReduceOp.AVG, every.mean(0)),
                    (dist.ReduceOp.MAX, every.max(0)), (dist.ReduceOp.MIN, every.min(0)),
                    (dist.ReduceOp.PRODUCT, every.prod(0))]:
        t = fnx.tensor(base(r))
        dist.all_reduce(t, op=op)
        np.testing.assert_allclose(t.numpy(), ref, rtol=1e-6, err_msg=str(op))
    ints = fnx.tensor(base(r, dtype=np.int64))
    dist.all_reduce(ints)
    assert ints.dtype == fnx.int64
    np.testing.assert_array_equal(ints.numpy(), every.astype(np.int64).sum(0))
    flags = fnx.tensor(np.array([r == 0, False, True]))
    dist.all_reduce(flags, op=dist.ReduceOp.MIN)
    np.testing.assert_array_equal(flags.numpy(), [n == 1, False, True])
    # async
    t = fnx.tensor(base(r))
    work = dist.all_reduce(t, async_op=True)
    assert work.wait() and work.is_completed()
    np.testing.assert_allclose(t.numpy(), every.sum(0), rtol=1e-6)
    # broadcast from the last rank
    t = fnx.tensor(base(r))
    dist.broadcast(t, src=n - 1)
    np.testing.assert_array_equal(t.numpy(), base(n - 1))
    # all_gather / all_gather_into_tensor
    out = [fnx.zeros(2, 3) for _ in range(n)]
    dist.all_gather(out, fnx.tensor(base(r)))
    for q in range(n):
        np.testing.assert_array_equal(out[q].numpy(), base(q))
    cat = fnx.zeros(2 * n, 3)
    dist.all_gather_into_tensor(cat, fnx.tensor(base(r)))
    np.testing.assert_array_equal(cat.numpy(), np.concatenate([base(q) for q in range(n)]))
    # reduce_scatter_tensor: input (2n, 3), rank r gets rows [2r, 2r+2) of the sum
    big = [base(q, shape=(2 * n, 3)) for q in range(n)]
    for op, red in [(dist.ReduceOp.SUM, np.sum), (dist.ReduceOp.MAX, np.max)]:
        o = fnx.zeros(2, 3)
        dist.reduce_scatter_tensor(o, fnx.tensor(big[r]), op=op)
        np.testing.assert_allclose(o.numpy(), red(np.stack(big), 0)[2 * r:2 * r + 2],
                                   rtol=1e-6)
    # all_to_all_single: chunk j of rank q goes to rank j, at position q
    o = fnx.zeros(2 * n, 3)
    dist.all_to_all_single(o, fnx.tensor(big[r]))
    np.testing.assert_array_equal(o.numpy(),
                                  np.concatenate([big[q][2 * r:2 * r + 2] for q in range(n)]))
    # a sub-group of the even ranks
    evens = dist.new_group(list(range(0, n, 2)))
    if r % 2 == 0:
        t = fnx.tensor(base(r))
        dist.all_reduce(t, group=evens)
        np.testing.assert_allclose(t.numpy(), every[0::2].sum(0), rtol=1e-6)
    else:
        assert evens is dist.GroupMember.NON_GROUP_MEMBER
    dist.barrier()
    # mismatched shapes: every rank gets an error naming the op and the ranks
    try:
        dist.all_reduce(fnx.zeros(r + 1))
    except RuntimeError as e:
        assert "all_reduce" in str(e) and "rank 1: all_reduce float32[2]" in str(e), e
    else:
        raise AssertionError("mismatched shapes did not raise")
    dist.barrier()
    print(f"rank {r}: ok", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
