"""Run with ``XLA_FLAGS=--xla_force_host_platform_device_count=8``: DeviceMesh and
distribute_tensor on 8 host devices in one process, checked against NumPy slicing."""
import sys

import numpy as np

import fnx
import fnx.distributed as dist


def main():
    mesh = dist.init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
    assert mesh.shape == (2, 4) and mesh.size() == 8 and mesh.size(1) == 4
    x = np.arange(8 * 12, dtype=np.float32).reshape(8, 12)
    d = dist.distribute_tensor(fnx.tensor(x), mesh, [dist.Shard(0), dist.Shard(1)])
    shards = d.local_shards()
    assert len(shards) == 8
    for k, s in enumerate(shards):              # mesh position (i, j) holds block (i, j)
        i, j = divmod(k, 4)
        np.testing.assert_array_equal(s.numpy(), x[4 * i:4 * i + 4, 3 * j:3 * j + 3])
    per_device = {s.device: s.data.nbytes for s in d._array.addressable_shards}
    assert len(per_device) == 8 and set(per_device.values()) == {x.nbytes // 8}
    np.testing.assert_array_equal(d.full_tensor().numpy(), x)
    # redistribute: replicate over dp, shard dim 1 over tp
    r = d.redistribute(placements=[dist.Replicate(), dist.Shard(1)])
    for k, s in enumerate(r.local_shards()):
        j = k % 4
        np.testing.assert_array_equal(s.numpy(), x[:, 3 * j:3 * j + 3])
    # both mesh dims on one tensor dim; int64 stays exact
    big = np.arange(16, dtype=np.int64) * (1 << 40)
    b = dist.distribute_tensor(fnx.tensor(big), mesh, [dist.Shard(0), dist.Shard(0)])
    assert [s.tolist() for s in b.local_shards()] == [big[2 * k:2 * k + 2].tolist()
                                                      for k in range(8)]
    assert b.full_tensor().dtype == fnx.int64
    for bad, kind in [([dist.Shard(0)], ValueError), ([dist.Shard(2), dist.Replicate()],
                                                      IndexError)]:
        try:
            dist.distribute_tensor(fnx.tensor(x), mesh, bad)
        except kind:
            pass
        else:
            raise AssertionError(f"{bad} did not raise {kind.__name__}")
    try:
        dist.distribute_tensor(fnx.ones(6), mesh, [dist.Shard(0), dist.Shard(0)])
    except ValueError as e:
        assert "does not split evenly into 8 shards" in str(e), e
    else:
        raise AssertionError("uneven shard did not raise")
    print("spmd ok")


if __name__ == "__main__":
    sys.exit(main())
