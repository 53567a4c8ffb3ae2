"""Served as `test.mockgpu.mockgpu` under `python -m hcq.mockgpu` with tinygrad 0.14.

tinygrad 0.14's `tinygrad/runtime/support/hcq.py` imports `MockFileIOInterface` from
`test.mockgpu.mockgpu` when `DEV` names a mock interface (`DEV=MOCKKFD+AMD`, `DEV=MOCK+AMD`);
under the hook that mock GPU is hcq-sim: the same class as for `DEV=AMD` (see `hcq.mockgpu.tg14`).
"""
from tinygrad.runtime.support.hcq import FileIOInterface

from hcq.mockgpu.tg14 import file_io_interface

MockFileIOInterface = file_io_interface(FileIOInterface)

__all__ = ["MockFileIOInterface"]


class MockUSB3:
  """`test.mockgpu.usb.MockUSB3`, which 0.14's `support/usb.py` imports for `DEV=MOCK...`: the
  simulated machine has no USB-attached GPU (no device listed, opening one is ENODEV)."""
  @staticmethod
  def list_devices(vendor: int, dev: int) -> list:
    return []

  def __init__(self, *args, **kwargs):
    import errno
    raise OSError(errno.ENODEV, "hcq-sim has no USB-attached GPU")
