"""tinygrad 0.14's `HCQ` device: tinygrad's HIP renderer, clang-19, and hcq's Rust runtime.

Built on the classes of tinygrad 0.14's device API: `Compiled(device, allocator, renderers,
runtime, graph, arch)`, a renderer class built from a `Target` that carries its compiler (and
pickles for the parallel compile), programs loaded from a `TinyELF` and called with `timeout=`,
an `LRUAllocator` with `_copyin/_copyout/_offset/_transfer/_map` and `BufferSpec` options, and
a `GraphRunner` (graph14.py) that turns a JIT batch into hcq Graphs replayed in Rust. Every
launch, copy and replay goes through hcq's driver (`hcq._hcq`).

Select it with `DEV=HCQ`, `Device["HCQ"]`, `device="HCQ:1"` (GPU 1) or
`Tensor.shard(("HCQ:0", "HCQ:1"))`; `DEV=:2,3+HCQ` makes GPUs 2 and 3 HCQ:0 and HCQ:1 (0.14's
visibility filter; in 0.14's grammar `DEV=HCQ:X` names renderer X: `DEV=HCQ:HIP`). Without
/dev/kfd it runs on hcq-sim (HCQ_SIM_TARGET, HCQ_SIM_GPUS).
"""
from __future__ import annotations

import contextlib
import functools

import hcq
from hcq.tinygrad.compiler import CompileFailed, compile_hip, link_digest
from tinygrad.device import BufferSpec, Compiled, CompileError, Compiler, LRUAllocator, TinyELF
from tinygrad.helpers import Target
from tinygrad.renderer.cstyle import HIPRenderer

__all__ = ["HCQAllocator", "HCQCompiler", "HCQDevice", "HCQHIPRenderer", "HCQProgram"]


class HCQCompiler(Compiler):
  """clang-19 (no ROCm, no comgr) with Debian's device libraries; results cached on disk by tinygrad."""
  def __init__(self, arch: str):
    self.arch = arch
    # The key names what the binaries depend on besides the source (see compiler.py).
    super().__init__(f"compile_hcq14_clang19_{arch}_{link_digest()}")

  def compile(self, src: str) -> bytes:
    try: return compile_hip(src, self.arch)
    except CompileFailed as e: raise CompileError(str(e)) from e

  def __reduce__(self): return HCQCompiler, (self.arch,)


def _tensor_cores(arch: str) -> list:
  """The tensor cores hcq lets tinygrad use on `arch`: WMMA on gfx11 (RDNA3) and gfx12 (RDNA4),
  MFMA on gfx942 (CDNA3) as tinygrad's renderer emits them; none elsewhere (gfx90a's MFMA
  shapes are not tinygrad's CDNA3 ones, and hcq has not verified them)."""
  from tinygrad.codegen.opt import tc
  if arch.startswith("gfx11"): return tc.amd_rdna3
  if arch in ("gfx1200", "gfx1201"): return tc.amd_rdna4
  if arch == "gfx942": return tc.amd_cdna3
  return []


class HCQHIPRenderer(HIPRenderer):
  """tinygrad 0.14's HIP renderer with hcq's clang-19 compiler in place of comgr. Its name for
  `DEV=HCQ:HIP` is "HIP"; it pickles as (class, target) and opens no device when built."""
  device = "HCQ"

  def __init__(self, target: Target):
    # use_hipcc=True builds HIPCCCompiler, which (unlike HIPCompiler) needs no comgr; it is
    # replaced by hcq's compiler before any use.
    super().__init__(target, use_hipcc=True)
    self.compiler = HCQCompiler(target.arch)
    self.tensor_cores = _tensor_cores(target.arch)


class HCQProgram:
  """A kernel loaded on the device; a call is one launch through the driver's checked builder."""
  def __init__(self, device: HCQDevice, obj: TinyELF):
    self.device, self.name, self.lib = device, obj.name, obj.lib
    self.prg = device.dev.load(obj.lib, obj.name)
    self._launch = self.prg.launch

  def __call__(self, *bufs, global_size=(1, 1, 1), local_size=(1, 1, 1), vals=(), wait=False, timeout: int | None = None):
    if vals: bufs = bufs + tuple(0 if v is None else v for v in vals)  # None: a runtime variable (core_id), CPU only
    if not wait: return self._launch(bufs, global_size, local_size or (1, 1, 1), 0, False) and None
    if timeout is None: return self._launch(bufs, global_size, local_size or (1, 1, 1), 0, True)
    # timeout (ms, as tinygrad's BEAM passes it): the waited launch, its wait bounded by it.
    with self.device.bounded_waits(timeout / 1000):
      return self._launch(bufs, global_size, local_size or (1, 1, 1), 0, True)


class HCQAllocator(LRUAllocator):
  """tinygrad's LRUAllocator over hcq buffers: VRAM, host-visible VRAM (`cpu_access`) or host
  memory (`host`); `zero` buffers are cleared; sub-buffers are views."""
  def __init__(self, dev: HCQDevice): super().__init__(dev)

  def _alloc(self, size: int, options: BufferSpec):
    if options.external_ptr is not None:
      raise MemoryError("HCQ cannot wrap external memory (BufferSpec.external_ptr)\nnext: copy the data into a HCQ buffer")
    kind = "host" if options.host else ("vram_visible" if options.cpu_access else "vram")
    try: buf = self.dev.dev.alloc(size, kind)
    except hcq.OutOfMemoryError as e: raise MemoryError(str(e)) from e
    if options.zero: self.dev.dev.copy_in(buf, bytes(size))
    return buf

  def _free(self, opaque, options: BufferSpec):
    try: opaque.free()
    except hcq.HcqError: pass  # views of it are alive: the memory goes when they do

  def _copyin(self, dest, src: memoryview): self.dev.dev.copy_in(dest, src)
  def _copyout(self, dest: memoryview, src): self.dev.dev.copy_out(dest, src)
  def _offset(self, buf, size: int, offset: int): return buf.view(offset, size)

  def _map(self, buf):
    """`buf` (another HCQ GPU's) made reachable from this GPU: the same Buffer, mapped here."""
    buf.map_to(self.dev.dev)
    return buf

  def _transfer(self, dest, src, sz: int, src_dev: HCQDevice, dest_dev: HCQDevice):
    if dest.offset == 0 and src.offset == 0 and dest.size == sz and src.size == sz:
      try:
        dest_dev.dev.transfer(dest, src, src_dev.dev)  # peer copy on one host (the driver's SDMA path)
        return
      except hcq.HcqError: pass  # a view of a larger buffer: the driver transfers whole buffers
    tmp = memoryview(bytearray(sz))  # sub-buffers: through the host
    src_dev.dev.copy_out(tmp, src if src.size == sz else src.view(0, sz))
    dest_dev.dev.copy_in(dest if dest.size == sz else dest.view(0, sz), tmp)


def _visible_gpu(idx: int) -> int:
  """The hcq GPU that `HCQ:idx` is: with tinygrad 0.14's visibility filter (`DEV=:2,3+HCQ` or
  `DEV=:2-3+HCQ`, its `<interface>:<indices>+<device>` grammar) the idx-th listed one."""
  from tinygrad.helpers import DEV
  if not (s := DEV.target("HCQ").indices): return idx
  try: ids = list(range(int(s.split("-")[0]), int(s.split("-")[1]) + 1)) if "-" in s else [int(x) for x in s.split(",") if x.strip()]
  except ValueError: raise RuntimeError(f"DEV={DEV}: HCQ's visible GPUs {s!r} are not indices\nnext: e.g. DEV=:0,1+HCQ") from None
  n = len(hcq.kfd().gpus)
  if idx >= len(ids) or ids[idx] >= n:
    raise RuntimeError(f"HCQ:{idx} with DEV={DEV}: {len(ids)} GPUs listed ({s}), {n} present\nnext: list GPUs below {n}")
  return ids[idx]


class HCQDevice(Compiled):
  """GPU `N` of `HCQ:N` through hcq (the simulator without /dev/kfd)."""
  def __init__(self, device: str = ""):
    from hcq.tinygrad.graph14 import HCQGraph
    idx = device.split(":")[1] if ":" in device else "0"
    if not idx.isdigit(): raise RuntimeError(f"{device}: HCQ devices are HCQ:<gpu index>\nnext: use e.g. HCQ:1")
    self.dev = hcq.open(_visible_gpu(int(idx)))
    super().__init__(device, HCQAllocator(self), [HCQHIPRenderer], HCQProgram, HCQGraph, arch=self.dev.target)

  @functools.cached_property
  def graph_copies(self) -> bool:
    """Whether hcq's driver records copies of buffer variables in this GPU's Graphs (probed once:
    on gfx9 targets it refuses them today, and the JIT graph then leaves copies of JIT inputs
    out; copies of fixed buffers record everywhere)."""
    try:
      a, b = self.dev.alloc(256, "vram"), self.dev.alloc(256, "vram")
      g = hcq.GraphBuilder(self.dev)
      g.copy(a, g.buffer(b), 256)
      g.record()
      return True
    except hcq.HcqError: return False

  @contextlib.contextmanager
  def bounded_waits(self, seconds: float):
    """hcq's waits inside bounded by `seconds` (a RuntimeError past it), as 0.14's `timeout=`."""
    k = hcq.kfd()
    old = k.wait_timeout
    k.wait_timeout = max(seconds, 1e-3)
    try: yield
    except hcq.HcqError as e: raise RuntimeError(f"HCQ: past the {seconds:.3f} s timeout: {e}") from e
    finally: k.wait_timeout = old

  def synchronize(self, timeout: int | None = None):
    if timeout is None: return self.dev.synchronize()
    with self.bounded_waits(timeout / 1000): self.dev.synchronize()
