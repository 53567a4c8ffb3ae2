"""`extra.mockgpu.mockgpu` for tinygrad 0.9.1's ops_amd.py (MOCKGPU=1), backed by hcq-sim.

ops_amd.py imports this module and replaces its libc.mmap / libc.munmap with `_mmap` /
`_munmap`; importing it installs the rest of the hook (hcq.mockgpu.install): /dev/kfd and
render-node opens, KFD sysfs reads, ioctls and mmaps of simulator files go to hcq-sim.
"""
from hcq.mockgpu import _mmap, _munmap, install

install()

__all__ = ["_mmap", "_munmap"]
