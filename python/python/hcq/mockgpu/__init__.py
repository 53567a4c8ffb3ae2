"""tinygrad 0.9.1's mock-GPU hook, backed by hcq-sim: the seed's own AMD runtime on the simulator.

With `MOCKGPU=1`, tinygrad 0.9.1's unmodified `tinygrad/runtime/ops_amd.py` imports
`extra.mockgpu.mockgpu` (line 21) and takes that module's `_mmap` / `_munmap` for its libc calls
(lines 22-23). `python -m hcq.mockgpu -- COMMAND...` puts this package's `path/` directory first
on PYTHONPATH, so that import finds hcq's module, which calls `install()`:

- `os.open` / `os.close` / `os.dup` / `os.fstat` of `/dev/kfd` and `/dev/dri/renderD<N>` go to
  the simulator's files;
- `open` (builtins and io), `os.stat`, `os.scandir` and `os.listdir` under the KFD topology
  (`/sys/devices/virtual/kfd/kfd/topology`, `/sys/class/kfd/kfd/topology`) read the files the
  simulated kernel serves (pathlib's glob and open go through these);
- `fcntl.ioctl` on a simulator descriptor is the simulated kernel's ioctl (the argument
  structure is read and written in place; the user memory its pointers name is passed along,
  read and written where the kernel would: MAP/UNMAP's gpu_ids, WAIT_EVENTS' events,
  GET_PROCESS_APERTURES_NEW's output, SET_CU_MASK's mask, GET_TILE_CONFIG's two arrays,
  GET_QUEUE_WAVE_STATE's control-stack headers, one per XCC `ctx_save_restore_size` apart,
  GET_DMABUF_INFO's metadata);
- `_mmap` / `_munmap`: mmaps of simulator files are the simulator's; anonymous ones are libc's
  (the client's own memory); every munmap goes through the simulator, which runs the MMU
  notifier and unmaps;
- ops_amd's `compile_hip` (comgr, which has no gfx11 here) becomes the HCQ device's clang-19
  compiler (`hcq.mockgpu.hip_comgr`, which the .pth hook also serves as
  `tinygrad.runtime.driver.hip_comgr`, since ops_amd.py imports it before this hook).

Nothing else of tinygrad is replaced. The simulator serves any client (`SimKfd(client="any")`,
the kernel's rules) on `HCQ_SIM_TARGET` (default gfx1100) x `HCQ_SIM_GPUS` (default 1), each of
`HCQ_SIM_XCC` XCCs (default 1; 8 for gfx942 as an MI300X ships), with the queue-buffer rules of Linux `HCQ_SIM_KERNEL` (default 6.8: tinygrad 0.9.1 passes
`ctl_stack_size` 0 and fixed save-area sizes, which kernels before 6.12 accept).
"""
from __future__ import annotations

import atexit
import builtins
import ctypes
import ctypes.util
import errno
import fcntl
import io
import os
import re
import stat as _stat
import struct
import sys
import threading
from typing import Any, Dict, List, Optional, Set

from hcq._hcq import SimKfd

__all__ = ["SimKfd", "install", "sim", "path_dir", "_mmap", "_munmap"]

TOPOLOGY_ROOTS = ("/sys/devices/virtual/kfd/kfd/topology", "/sys/class/kfd/kfd/topology")
_DEV = re.compile(r"^/dev/(kfd|dri/renderD\d+)$")
MAP_FAILED = ctypes.c_void_p(-1).value
# kfd_ioctl.h command numbers whose argument points to user arrays.
_NR_WAIT_EVENTS, _NR_APERTURES_NEW, _NR_MAP, _NR_UNMAP = 0x0C, 0x14, 0x18, 0x19
_NR_TILE_CONFIG, _NR_CU_MASK, _NR_WAVE_STATE, _NR_DMABUF_INFO = 0x12, 0x1A, 0x1B, 0x1C
_NR_CREATE_QUEUE, _NR_DESTROY_QUEUE = 0x02, 0x03
# The kernel copies at most 1024 CU-mask bits, 32 tile and 16 macro-tile modes; this much of a longer
# array the client names is lent (the simulator clamps the counts first, as the kernel does).
_CU_MASK_MAX_WORDS, _TILE_MAX = 1024 // 32, 1 << 10
# GET_QUEUE_WAVE_STATE writes one 16-byte control-stack header per XCC of the queue's node, XCC k's at
# ctl_stack_address + k * ctx_save_restore_size (Linux kfd_mqd_manager_v9.c get_wave_state_v9_4_3, which
# copy_to_user()s each XCC's header there): the lent memory spans all of them (_wave_state_bytes).
_WAVE_STATE_HEADER = 16
# kmalloc's largest buffer: GET_DMABUF_INFO's metadata past it is ENOMEM before any copy.
_KMALLOC_MAX = 4 << 20
_EVENT_DATA_SIZE, _APERTURES_SIZE = 32 + 8 + 8, 56  # struct kfd_event_data, kfd_process_device_apertures

_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.mmap.restype = ctypes.c_void_p

_lock = threading.Lock()
_sim: Optional[SimKfd] = None
# CREATE_QUEUE's answers: queue_id -> (gpu_id, ctx_save_restore_size), for GET_QUEUE_WAVE_STATE's span.
_queues: Dict[int, tuple] = {}
_xccs: Dict[int, int] = {}
_installed = False
_orig: Dict[str, Any] = {}


def path_dir() -> str:
  """The directory `python -m hcq.mockgpu` puts first on PYTHONPATH (it holds `extra/mockgpu/mockgpu.py`)."""
  return os.path.join(os.path.dirname(os.path.abspath(__file__)), "path")


def sim() -> SimKfd:
  """The process's simulator (made on first use from HCQ_SIM_TARGET / HCQ_SIM_GPUS / HCQ_SIM_XCC / HCQ_SIM_KERNEL /
  HCQ_SIM_CLIENT; the simulator reads HCQ_SIM_XCC itself)."""
  global _sim
  with _lock:
    if _sim is None:
      gpus = int(os.environ.get("HCQ_SIM_GPUS", "") or 1)
      _sim = SimKfd(target=os.environ.get("HCQ_SIM_TARGET", "") or "gfx1100", gpus=gpus,
                    client=os.environ.get("HCQ_SIM_CLIENT", "") or "any", kernel=os.environ.get("HCQ_SIM_KERNEL", "") or "6.8")
    return _sim


# ---- the simulated sysfs tree ---------------------------------------------------------------

class _Tree:
  """The KFD topology files the simulator serves, and the directories that hold them."""
  def __init__(self, s: SimKfd):
    self.files: Set[str] = set()
    self.dirs: Dict[str, Set[str]] = {}
    for root in TOPOLOGY_ROOTS:
      for f in ("generation_id", "system_properties"): self._add(s, f"{root}/{f}")
      n = 0
      while self._add(s, f"{root}/nodes/{n}/gpu_id"):
        for f in ("name", "properties", "mem_banks/0/properties"): self._add(s, f"{root}/nodes/{n}/{f}")
        i = 0
        while self._add(s, f"{root}/nodes/{n}/caches/{i}/properties"): i += 1
        n += 1

  def _add(self, s: SimKfd, path: str) -> bool:
    try: s.read_file(path)
    except OSError: return False
    self.files.add(path)
    child, parent = path.rsplit("/", 1)[1], path.rsplit("/", 1)[0]
    while parent.startswith("/sys/") and parent != "/sys":
      self.dirs.setdefault(parent, set()).add(child)
      child, parent = parent.rsplit("/", 1)[1], parent.rsplit("/", 1)[0]
    return True

  @staticmethod
  def covers(path: str) -> bool:
    return any(path == r or path.startswith(r + "/") for r in TOPOLOGY_ROOTS)


_tree_cache: Optional[_Tree] = None


def _tree() -> _Tree:
  global _tree_cache
  if _tree_cache is None: _tree_cache = _Tree(sim())
  return _tree_cache


def _norm(p: Any) -> Optional[str]:
  if isinstance(p, int): return None
  try: p = os.fspath(p)
  except TypeError: return None
  if isinstance(p, bytes):
    try: p = p.decode()
    except UnicodeDecodeError: return None
  return os.path.normpath(p) if isinstance(p, str) and p.startswith("/") else None


def _stat_result(mode: int, size: int = 0, rdev: int = 0) -> os.stat_result:
  # st_mode, st_ino, st_dev, st_nlink, st_uid, st_gid, st_size, st_atime, st_mtime, st_ctime
  return os.stat_result((mode, 0, 0, 1, 0, 0, size, 0, 0, 0), {"st_rdev": rdev, "st_blksize": 4096})


class _Entry:
  """An `os.DirEntry` of the simulated tree."""
  def __init__(self, parent: str, name: str, tree: _Tree):
    self.name, self.path, self._tree = name, f"{parent}/{name}", tree
  def is_dir(self, *, follow_symlinks: bool = True) -> bool: return self.path in self._tree.dirs
  def is_file(self, *, follow_symlinks: bool = True) -> bool: return self.path in self._tree.files
  def is_symlink(self) -> bool: return False
  def stat(self, *, follow_symlinks: bool = True) -> os.stat_result: return _stat_path(self.path)
  def inode(self) -> int: return 0
  def __fspath__(self) -> str: return self.path
  def __repr__(self) -> str: return f"<DirEntry {self.name!r}>"


class _Scandir:
  def __init__(self, entries: List[_Entry]): self._it = iter(entries)
  def __iter__(self): return self
  def __next__(self) -> _Entry: return next(self._it)
  def __enter__(self): return self
  def __exit__(self, *a) -> None: pass
  def close(self) -> None: pass


def _stat_path(p: str) -> os.stat_result:
  t = _tree()
  if p in t.dirs: return _stat_result(_stat.S_IFDIR | 0o755, 0)
  if p in t.files: return _stat_result(_stat.S_IFREG | 0o444, 4096)
  raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), p)


# ---- the patched functions ------------------------------------------------------------------

def _open(file, mode="r", buffering=-1, encoding=None, errors=None, newline=None, closefd=True, opener=None):
  p = _norm(file)
  if p is not None and _Tree.covers(p):
    t = _tree()
    if p in t.dirs: raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), p)
    if p not in t.files: raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), p)
    if any(c in mode for c in "wax+"): raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), p)
    data = sim().read_file(p)
    return io.BytesIO(data) if "b" in mode else io.StringIO(data.decode("utf-8" if encoding in (None, "locale") else encoding, errors or "strict"), newline)
  return _orig["open"](file, mode, buffering, encoding, errors, newline, closefd, opener)


def _os_open(path, flags, mode=0o777, *, dir_fd=None):
  p = _norm(path)
  if p is not None and dir_fd is None and _DEV.match(p): return sim().open(p)
  return _orig["os.open"](path, flags, mode, dir_fd=dir_fd)


def _owns(fd) -> bool: return isinstance(fd, int) and fd >= 0 and _sim is not None and _sim.owns(fd)


def _os_close(fd):
  if _owns(fd): return sim().close(fd)
  return _orig["os.close"](fd)


def _os_dup(fd):
  if _owns(fd): return sim().dup(fd)
  return _orig["os.dup"](fd)


def _os_fstat(fd):
  if _owns(fd):
    _, major, minor = sim().fstat(fd)
    return _stat_result(_stat.S_IFCHR | 0o666, 0, os.makedev(major, minor))
  return _orig["os.fstat"](fd)


def _os_stat(path, *, dir_fd=None, follow_symlinks=True):
  p = _norm(path)
  if p is not None and dir_fd is None:
    if _Tree.covers(p): return _stat_path(p)
    if _DEV.match(p):
      fd = sim().open(p)
      try: return _os_fstat(fd)
      finally: sim().close(fd)
  return _orig["os.stat"](path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)


def _os_lstat(path, *, dir_fd=None):
  p = _norm(path)
  if p is not None and dir_fd is None and (_Tree.covers(p) or _DEV.match(p)): return _os_stat(p)
  return _orig["os.lstat"](path, dir_fd=dir_fd)


def _os_scandir(path="."):
  p = _norm(path)
  if p is not None and _Tree.covers(p):
    t = _tree()
    if p not in t.dirs: raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), p)
    names = sorted(t.dirs[p], key=lambda n: (not n.isdigit(), int(n) if n.isdigit() else 0, n))
    return _Scandir([_Entry(p, n, t) for n in names])
  return _orig["os.scandir"](path)


def _os_listdir(path="."):
  p = _norm(path)
  if p is not None and _Tree.covers(p): return [e.name for e in _os_scandir(p)]
  return _orig["os.listdir"](path)


def _lend(ptr: int, size: int):
  """`size` bytes of the client's memory at `ptr` as a writable buffer (empty for a NULL pointer or size 0)."""
  return (ctypes.c_char * size).from_address(ptr) if ptr and size > 0 else bytearray()


def _node_xccs(gpu_id: int) -> int:
  """`num_xcc` of the topology node whose gpu_id is `gpu_id` (1 when the node or the property is missing)."""
  if gpu_id not in _xccs:
    root, n, found = TOPOLOGY_ROOTS[0], 0, 1
    while True:
      try: g = int(sim().read_file(f"{root}/nodes/{n}/gpu_id").decode().strip() or 0)
      except (OSError, ValueError): break
      if g == gpu_id:
        props = dict(l.split()[:2] for l in sim().read_file(f"{root}/nodes/{n}/properties").decode().splitlines() if len(l.split()) >= 2)
        found = max(int(props.get("num_xcc", "1")), 1)
        break
      n += 1
    _xccs[gpu_id] = found
  return _xccs[gpu_id]


def _wave_state_bytes(queue_id: int) -> int:
  """The client memory GET_QUEUE_WAVE_STATE may write for `queue_id`: a header per XCC, ctx_save_restore_size
  apart (16 bytes for a queue this hook did not see created, or a node of one XCC)."""
  gpu_id, ctx_size = _queues.get(queue_id, (0, 0))
  xccs = _node_xccs(gpu_id) if gpu_id else 1
  return (xccs - 1) * ctx_size + _WAVE_STATE_HEADER


def _ioctl(fd, request, arg=0, mutate_flag=True):
  if not _owns(fd): return _orig["fcntl.ioctl"](fd, request, arg, mutate_flag)
  immutable = isinstance(arg, (bytes, str, int))
  buf = bytearray(arg.encode() if isinstance(arg, str) else arg) if isinstance(arg, (bytes, str)) else (bytearray(8) if isinstance(arg, int) else arg)
  raw = bytes(memoryview(buf).cast("B"))
  nr = request & 0xFF
  user = None
  if nr in (_NR_MAP, _NR_UNMAP) and len(raw) >= 24:
    ptr, n = struct.unpack_from("<QI", raw, 8)
    if ptr and 0 < n <= 1 << 16: user = (ctypes.c_uint32 * n).from_address(ptr)
  elif nr == _NR_WAIT_EVENTS and len(raw) >= 12:
    ptr, n = struct.unpack_from("<QI", raw, 0)
    if ptr and 0 < n <= 1 << 16: user = (ctypes.c_char * (n * _EVENT_DATA_SIZE)).from_address(ptr)
  elif nr == _NR_APERTURES_NEW and len(raw) >= 12:
    ptr, n = struct.unpack_from("<QI", raw, 0)
    if ptr and 0 < n <= 1 << 10: user = (ctypes.c_char * (n * _APERTURES_SIZE)).from_address(ptr)
  elif nr == _NR_CU_MASK and len(raw) >= 16:
    n, ptr = struct.unpack_from("<IQ", raw, 4)
    words = min(n // 32, _CU_MASK_MAX_WORDS)
    if ptr and words: user = (ctypes.c_uint32 * words).from_address(ptr)
  elif nr == _NR_TILE_CONFIG and len(raw) >= 24:
    tiles, macros, nt, nm = struct.unpack_from("<QQII", raw, 0)
    user = (_lend(tiles, 4 * min(nt, _TILE_MAX)), _lend(macros, 4 * min(nm, _TILE_MAX)))
  elif nr == _NR_WAVE_STATE and len(raw) >= 20:
    ptr, qid = struct.unpack_from("<Q8xI", raw, 0)
    if ptr: user = _lend(ptr, _wave_state_bytes(qid))
  elif nr == _NR_DMABUF_INFO and len(raw) >= 20:
    ptr, n = struct.unpack_from("<QI", raw, 8)
    if ptr and 0 < n <= _KMALLOC_MAX: user = _lend(ptr, n)
  sim().ioctl(fd, request, buf, user)
  if nr == _NR_CREATE_QUEUE and len(raw) >= 88:
    out = bytes(memoryview(buf).cast("B"))  # the answer: queue_id filled in
    gpu_id, qid = struct.unpack_from("<I12xI", out, 36)
    _queues[qid] = (gpu_id, struct.unpack_from("<I", out, 80)[0])
  elif nr == _NR_DESTROY_QUEUE and len(raw) >= 4:
    _queues.pop(struct.unpack_from("<I", raw, 0)[0], None)
  return bytes(buf) if immutable and not isinstance(arg, int) else 0


def _mmap(start, sz, prot, flags, fd, offset):
  """ops_amd.py's libc.mmap: simulator files through hcq-sim, anonymous memory through libc."""
  if _owns(fd):
    try: return sim().mmap(start or 0, sz, prot, flags, fd, offset)
    except OSError as e:
      ctypes.set_errno(e.errno or errno.EINVAL)
      return MAP_FAILED
  return _libc.mmap(start, sz, prot, flags, fd, offset)


def _munmap(buf, sz):
  """ops_amd.py's libc.munmap: through hcq-sim, which runs the MMU notifier (USERPTR buffers over
  the range are invalidated) and unmaps, whether the pages are its BOs or the client's memory."""
  try:
    sim().munmap(buf, sz)
    return 0
  except OSError as e:
    ctypes.set_errno(e.errno or errno.EINVAL)
    return -1


def _report_faults() -> None:
  """At exit, what the simulated GPU faulted on (hardware would log it in dmesg; the seed only sees its
  signal time out)."""
  if _sim is None: return
  for r in _sim.fault_reasons(): print(f"hcq-sim: GPU fault: {r}", file=sys.stderr)


def install() -> None:
  """Patches what tinygrad 0.9.1's ops_amd.py calls (see the module doc). Idempotent."""
  global _installed
  with _lock:
    if _installed: return
    _installed = True
  sim()
  atexit.register(_report_faults)
  patches = {"open": (builtins, "open", _open), "io.open": (io, "open", _open), "os.open": (os, "open", _os_open),
             "os.close": (os, "close", _os_close), "os.dup": (os, "dup", _os_dup), "os.fstat": (os, "fstat", _os_fstat),
             "os.stat": (os, "stat", _os_stat), "os.lstat": (os, "lstat", _os_lstat), "os.scandir": (os, "scandir", _os_scandir),
             "os.listdir": (os, "listdir", _os_listdir), "fcntl.ioctl": (fcntl, "ioctl", _ioctl)}
  for key, (mod, name, fn) in patches.items():
    _orig[key] = getattr(mod, name)
    setattr(mod, name, fn)
  # ops_amd bound compile_hip (line 8) before importing this hook: the HCQ device's clang-19.
  amd = sys.modules.get("tinygrad.runtime.ops_amd")
  if amd is not None:
    from hcq.mockgpu.hip_comgr import compile_hip
    amd.compile_hip = compile_hip
