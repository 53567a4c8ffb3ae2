"""tinygrad 0.14's file interface, served by hcq-sim: its own AMD backend, unmodified, on the simulator.

tinygrad 0.14's `ops_amd.py` reaches the kernel only through one class,
`tinygrad.runtime.support.hcq.FileIOInterface` (`os.open` of a path, `os.listdir`, reads, `ioctl`
and `mmap` of the descriptor, and the static `anon_mmap`/`munmap`/`exists`), and tinygrad swaps
that class for its own mock GPU's (`DEV=MOCK...+AMD` imports
`test.mockgpu.mockgpu.MockFileIOInterface`). hcq plugs in at the same seam, without patching
`os` or any tinygrad file: under `python -m hcq.mockgpu` the `.pth` hook
(`_hcq_tinygrad_hook.py`) replaces `FileIOInterface` with [`file_io_interface`]'s subclass as
soon as `tinygrad.runtime.support.hcq` has run, and serves `test.mockgpu.mockgpu` as
`hcq.mockgpu.tg14_mock`, so every interface name selects the simulator.

The subclass serves what the simulated machine has: `/dev/kfd` and `/dev/dri/renderD<minor>`
(descriptors of the simulator, whose ioctls and mmaps are the simulated kernel's), and the sysfs
trees under the KFD topology and `/sys/class/drm` (KFD nodes, amdgpu's memory totals and its
`ip_discovery` tree), with the errnos a real system gives (ENOENT for a missing path, ENOTDIR
listing a file, EISDIR reading a directory, EACCES writing sysfs, ENOTTY for an ioctl on a sysfs
file). Every other path is the host's, as the base class has it; `munmap` goes through the
simulator (its MMU notifier invalidates USERPTR buffers over the range).
"""
from __future__ import annotations

import atexit
import errno
import itertools
import os
import threading
from typing import Any, Dict, Optional, Set

from hcq.mockgpu import _ioctl, _munmap, _norm, _report_faults, sim

# At exit, what the simulated GPU faulted on, as dmesg would tell on hardware.
atexit.register(_report_faults)

# The sysfs trees and device files the simulated machine owns: under these, a path the simulator
# does not serve does not exist (the host's own files there are never seen).
SIM_ROOTS = ("/sys/devices/virtual/kfd", "/sys/class/kfd", "/sys/class/drm", "/dev/kfd", "/dev/dri")

_lock = threading.Lock()
# Descriptor numbers of open sysfs files: above anything the host hands out, apart from the
# simulator's own device descriptors.
_next_fd = itertools.count(1 << 29)
_sysfs_fds: Dict[int, "_SysfsFile"] = {}


class _Tree:
  """Files and directories of the simulated sysfs."""
  def __init__(self, files: list[str]):
    self.files: Set[str] = set(files)
    self.dirs: Dict[str, Set[str]] = {}
    for path in files:
      child, parent = path.rsplit("/", 1)[1], path.rsplit("/", 1)[0]
      while parent not in ("", "/"):
        self.dirs.setdefault(parent, set()).add(child)
        child, parent = parent.rsplit("/", 1)[1], parent.rsplit("/", 1)[0]
    for dev in ("/dev/kfd",) + tuple(f"/dev/dri/renderD{m}" for m in _render_minors()):
      self.dirs.setdefault("/dev/dri", set())
      if dev.startswith("/dev/dri/"): self.dirs["/dev/dri"].add(dev.rsplit("/", 1)[1])


def _render_minors() -> list[int]:
  out = []
  for p in sim().sysfs_files():
    if p.startswith("/sys/class/drm/renderD") and p.endswith("/device/mem_info_vram_total"):
      out.append(int(p[len("/sys/class/drm/renderD"):].split("/", 1)[0]))
  return out


_tree_cache: Optional[_Tree] = None


def _tree() -> _Tree:
  global _tree_cache
  with _lock:
    if _tree_cache is None: _tree_cache = _Tree(sim().sysfs_files())
    return _tree_cache


def owned(path: str) -> bool:
  """Whether `path` (absolute, normalized) lies in what the simulated machine owns."""
  return any(path == r or path.startswith(r + "/") for r in SIM_ROOTS)


def _err(code: int, path: str) -> OSError:
  return OSError(code, os.strerror(code), path)


class _SysfsFile:
  """An open sysfs file or directory of the simulated machine."""
  def __init__(self, path: str, is_dir: bool):
    self.path, self.is_dir, self.pos = path, is_dir, 0


def _open(path: str, flags: int) -> int:
  """open(2) of `path` in the simulated machine: a descriptor, or the kernel's OSError."""
  if path == "/dev/kfd" or path.startswith("/dev/dri/renderD"): return sim().open(path)
  t = _tree()
  if path in t.dirs:
    if flags & (os.O_WRONLY | os.O_RDWR): raise _err(errno.EISDIR, path)
  elif path in t.files:
    if flags & (os.O_WRONLY | os.O_RDWR): raise _err(errno.EACCES, path)
  else: raise _err(errno.ENOENT, path)
  fd = next(_next_fd)
  with _lock: _sysfs_fds[fd] = _SysfsFile(path, path in t.dirs)
  return fd


def _sim_owns(fd: Any) -> bool:
  return isinstance(fd, int) and fd >= 0 and fd not in _sysfs_fds and sim().owns(fd)


_classes: Dict[type, type] = {}


def file_io_interface(base: type) -> type:
  """tinygrad 0.14's `FileIOInterface` (`base`) served by hcq-sim (the subclass is made once per base)."""
  if getattr(base, "_hcq_sim", False): return base
  if base in _classes: return _classes[base]

  class SimFileIOInterface(base):  # type: ignore[valid-type,misc]
    """`FileIOInterface` whose paths in the simulated machine are the simulator's (see the module doc)."""
    _hcq_sim = True

    def __init__(self, path: str = "", flags: int = os.O_RDONLY, fd: Optional[int] = None):
      self.path = path
      p = _norm(path)
      if fd is None and p is not None and owned(p): self.fd = _open(p, flags)
      else: super().__init__(path, flags, fd)

    def __del__(self):
      fd = getattr(self, "fd", None)
      if fd is None: return
      if fd in _sysfs_fds:
        with _lock: _sysfs_fds.pop(fd, None)
      elif _sim_owns(fd): sim().close(fd)
      else: super().__del__()

    def ioctl(self, request, arg):
      if self.fd in _sysfs_fds: raise _err(errno.ENOTTY, self.path)
      if _sim_owns(self.fd): return _ioctl(self.fd, request, arg)
      return super().ioctl(request, arg)

    def mmap(self, start, sz, prot, flags, offset):
      if self.fd in _sysfs_fds: raise OSError(f"Failed to mmap {sz} bytes at {hex(start)}: {os.strerror(errno.ENODEV)}")
      if _sim_owns(self.fd):
        try: return sim().mmap(start or 0, sz, prot, flags, self.fd, offset)
        except OSError as e: raise OSError(f"Failed to mmap {sz} bytes at {hex(start)}: {os.strerror(e.errno or errno.EINVAL)}") from e
      return super().mmap(start, sz, prot, flags, offset)

    def read(self, size=None, binary=False, offset=None):
      f = _sysfs_fds.get(self.fd)
      if f is None:
        if _sim_owns(self.fd): raise _err(errno.EINVAL, self.path)
        return super().read(size, binary, offset)
      if f.is_dir: raise _err(errno.EISDIR, f.path)
      if offset is not None: f.pos = offset
      data = sim().read_file(f.path)
      out = data[f.pos:] if size is None else data[f.pos:f.pos + size]
      f.pos += len(out)
      return out if binary else out.decode()

    def write(self, content, binary=False, offset=None):
      if self.fd in _sysfs_fds or _sim_owns(self.fd): raise _err(errno.EACCES if self.fd in _sysfs_fds else errno.EINVAL, self.path)
      return super().write(content, binary, offset)

    def listdir(self):
      f = _sysfs_fds.get(self.fd)
      if f is None:
        if _sim_owns(self.fd): raise _err(errno.ENOTDIR, self.path)
        return super().listdir()
      if not f.is_dir: raise _err(errno.ENOTDIR, f.path)
      return sorted(_tree().dirs.get(f.path, ()))

    def seek(self, offset):
      f = _sysfs_fds.get(self.fd)
      if f is not None: f.pos = offset
      elif not _sim_owns(self.fd): super().seek(offset)

    @staticmethod
    def munmap(buf, sz): return _munmap(buf, sz)

    @staticmethod
    def exists(path):
      p = _norm(path)
      if p is None or not owned(p): return base.exists(path)
      t = _tree()
      return p in t.files or p in t.dirs or p == "/dev/kfd" or (p.startswith("/dev/dri/") and p.rsplit("/", 1)[1] in t.dirs.get("/dev/dri", ()))

    @staticmethod
    def readlink(path):
      p = _norm(path)
      if p is None or not owned(p): return base.readlink(path)
      raise _err(errno.EINVAL if SimFileIOInterface.exists(p) else errno.ENOENT, p)

  _classes[base] = SimFileIOInterface
  return SimFileIOInterface
