"""hcq from Python: AMD GPUs through /dev/kfd (or hcq-sim's simulated GPUs without one).

    import hcq
    dev = hcq.open(0)                      # /dev/kfd, else the simulator (HCQ_SIM_TARGET, HCQ_SIM_GPUS)
    buf = dev.alloc(4096)                  # VRAM
    dev.copy_in(buf, numpy_array)          # any buffer-protocol object (raw copies, GIL released)
    prog = dev.load(code_object, "kernel") # ELF or offload bundle
    prog.launch([buf, 1024], groups=(16,), block=(64,))
    dev.copy_out(out, buf)

The classes are the driver's (hcq-driver): Kfd, Device, Buffer, Program, GraphBuilder, Graph,
GraphCall (a base class that replays a Graph when called, with no Python on the way).
Errors are HcqError (a RuntimeError): the driver's message, cause first, then a `next:` line;
OutOfMemoryError and BufferInUseError (`Buffer.free()` while views are alive) are HcqErrors.
Every call that may wait for the GPU (copies, launches, replays, waits) releases the GIL.
tinygrad 0.9.1 users: `HCQ=1 python script.py` (see hcq.tinygrad).
"""
from __future__ import annotations

import threading

from hcq._hcq import (SIM_TARGETS, Buffer, BufferInUseError, Device, Graph, GraphBuilder, GraphCall, HcqError, Kfd,
                      Lds, OutOfMemoryError, Program, Var)

__all__ = ["SIM_TARGETS", "Buffer", "BufferInUseError", "Device", "Graph", "GraphBuilder", "GraphCall", "HcqError",
           "Kfd", "Lds", "OutOfMemoryError", "Program", "Var", "kfd", "open"]

_lock = threading.Lock()
_kfd: Kfd | None = None


def kfd() -> Kfd:
  """The process's shared Kfd: /dev/kfd when usable, else the simulator chosen by HCQ_SIM_TARGET / HCQ_SIM_GPUS."""
  global _kfd
  with _lock:
    if _kfd is None: _kfd = Kfd()
    return _kfd


def open(index: int = 0) -> Device:  # noqa: A001 (the driver's name: Device::open)
  """Opens GPU `index` of the shared Kfd (see `kfd()`)."""
  return kfd().open(index)
