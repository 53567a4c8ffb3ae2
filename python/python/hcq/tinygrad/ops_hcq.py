"""tinygrad 0.9.1's `HCQ` device: tinygrad's AMD renderer, clang-19, and hcq's Rust runtime.

Built on the tinygrad classes ops_amd.py builds on: `Compiled` (the device), `LRUAllocator`
(buffers, with sub-buffers through `offset`), `Compiler` (on-disk cache), tinygrad's
`AMDRenderer`, and a `GraphRunner` that turns a JIT batch into one hcq Graph replayed with
patched buffers, dims and values. Every launch, copy and replay goes through hcq's driver
(`hcq._hcq`): the checked launch builder, the copy queue, the graph's patch table.

Select it with `HCQ=1`, `Device["HCQ"]` or `device="HCQ:1"` (GPU 1); without /dev/kfd it runs on
hcq-sim (HCQ_SIM_TARGET, HCQ_SIM_GPUS).
"""
from __future__ import annotations

import functools
from typing import Any, Dict, List, Tuple

import hcq
from hcq.tinygrad import _version

if _version.series() != "0.9.1":  # tinygrad 0.14's device is ops_hcq14 (the import hook serves the right one)
  raise _version.UnsupportedTinygrad(f"hcq.tinygrad.ops_hcq is tinygrad 0.9.1's HCQ device; the installed tinygrad is {_version.tinygrad_version()}\n"
                                     "next: under tinygrad 0.14 use DEV=HCQ (hcq.tinygrad.ops_hcq14); hcq supports tinygrad 0.9.1 and 0.14.x")

from hcq.tinygrad.compiler import CompileFailed, compile_hip, link_digest
from tinygrad.device import BufferOptions, Compiled, CompileError, Compiler, LRUAllocator
from tinygrad.engine.jit import GraphRunner
from tinygrad.engine.realize import CompiledRunner, ExecItem
from tinygrad.helpers import GraphException
from tinygrad.renderer.cstyle import AMDRenderer


class HCQRenderer(AMDRenderer):
  """tinygrad's AMD renderer; its WMMA tensor cores are gfx11's, so other targets go without."""
  device = "HCQ"

  def __init__(self, arch: str):
    if not arch.startswith("gfx11"): self.tensor_cores = []


class HCQCompiler(Compiler):
  """clang-19 (no ROCm) with Debian's device libraries; results cached on disk by tinygrad."""
  def __init__(self, arch: str):
    self.arch = arch
    # The key names what the binaries depend on besides the source: a change to the bitcode
    # hcq links (ocml_fixes.ll) must not reuse code objects built without it.
    super().__init__(f"compile_hcq_clang19_{arch}_{link_digest()}")

  def compile(self, src: str) -> bytes:
    try: return compile_hip(src, self.arch)
    except CompileFailed as e: raise CompileError(str(e)) from e


class HCQProgram:
  """A kernel loaded on the device; a call is one launch through the driver's checked builder."""
  def __init__(self, device: HCQDevice, name: str, lib: bytes):
    self.device, self.name, self.lib = device, name, lib
    self.prg = device.dev.load(lib, name)
    self._launch = self.prg.launch

  def __call__(self, *bufs, global_size: Tuple[int, ...] = (1, 1, 1), local_size: Tuple[int, ...] = (1, 1, 1), vals: Tuple[int, ...] = (),
               wait=False):
    ret = self._launch(bufs + vals if vals else bufs, global_size, local_size, 0, wait)
    return ret if wait else None


class HCQAllocator(LRUAllocator):
  """tinygrad's LRUAllocator over hcq buffers: VRAM (host-visible memory for `host` buffers)."""
  def __init__(self, device: HCQDevice):
    self.device = device
    super().__init__()

  def _alloc(self, size: int, options: BufferOptions):
    kind = "host" if options.host else ("vram_visible" if options.cpu_access else "vram")
    try: return self.device.dev.alloc(size, kind)
    except hcq.OutOfMemoryError as e: raise MemoryError(str(e)) from e

  def _free(self, opaque, options: BufferOptions):
    # Views of it alive: the memory goes when they do. Anything else (a device fault met while
    # waiting for the work before the free) is tinygrad's to see.
    try: opaque.free()
    except hcq.BufferInUseError: pass

  def copyin(self, dest, src: memoryview): self.device.dev.copy_in(dest, src)
  def copyout(self, dest: memoryview, src): self.device.dev.copy_out(dest, src)
  def offset(self, buf, size: int, offset: int): return buf.view(offset, size)

  def transfer(self, dest, src, sz: int, src_dev: HCQDevice, dest_dev: HCQDevice):
    if dest.offset == 0 and src.offset == 0 and dest.size == sz and src.size == sz:
      dest_dev.dev.transfer(dest, src, src_dev.dev)
    else:  # sub-buffers: through the host
      tmp = memoryview(bytearray(sz))
      src_dev.dev.copy_out(tmp, src if src.size == sz else src.view(0, sz))
      dest_dev.dev.copy_in(dest, tmp)


class HCQGraph(hcq.GraphCall, GraphRunner):
  """A JIT batch of one device as one hcq Graph: input buffers, symbolic values and symbolic
  launch dims become graph variables, patched at each replay. Calling it is hcq.GraphCall's
  `__call__` (Rust): a replay runs no Python code."""
  def __init__(self, jit_cache: List[ExecItem], input_rawbuffers, var_vals: Dict[Any, int]):
    super().__init__(jit_cache, input_rawbuffers, var_vals)
    if not all(isinstance(ji.prg, CompiledRunner) for ji in jit_cache): raise GraphException("HCQ graphs hold kernels only")
    self.dev: HCQDevice = jit_cache[0].prg.device
    b = hcq.GraphBuilder(self.dev.dev)
    self.input_vars: Dict[int, Any] = {}
    self.value_vars: Dict[Any, Any] = {}
    self.dims_vars: Dict[int, Any] = {}
    try:
      for j, ji in enumerate(jit_cache):
        args: List[Any] = []
        for i, buf in enumerate(ji.bufs):
          if (idx := self.input_replace.get((j, i))) is not None:
            if idx not in self.input_vars: self.input_vars[idx] = b.buffer(buf._buf)
            args.append(self.input_vars[idx])
          else: args.append(buf._buf)
        for v in ji.prg.p.vars:
          if v not in self.value_vars: self.value_vars[v] = b.scalar(var_vals[v])
          args.append(self.value_vars[v])
        dims = ji.prg.p.launch_dims(var_vals)
        if j in self.jc_idx_with_updatable_launch_dims: dims = self.dims_vars[j] = b.dims(*dims)
        b.launch(ji.prg.clprg.prg, args, dims)
      self.graph = b.record()
    except hcq.HcqError as e: raise GraphException(str(e)) from e
    self.nvars = self.graph.nvars
    # Where each variable's value comes from in a call: input_rawbuffers[idx]._buf, var_vals[v],
    # the kernel's Program.launch_dims(var_vals).
    self.bind(self.graph, [(idx, var.index) for idx, var in self.input_vars.items()],
              [(v, var.index) for v, var in self.value_vars.items()],
              [(self.jit_cache[j].prg.p, var.index) for j, var in self.dims_vars.items()], "_buf")


class HCQDevice(Compiled):
  """GPU `N` of `HCQ:N` through hcq (the simulator without /dev/kfd)."""
  def __init__(self, device: str = ""):
    self.device_id = int(device.split(":")[1]) if ":" in device else 0
    self.dev = hcq.open(self.device_id)
    self.arch = self.dev.target
    super().__init__(device, HCQAllocator(self), HCQRenderer(self.arch), HCQCompiler(self.arch), functools.partial(HCQProgram, self), HCQGraph)

  def synchronize(self): self.dev.synchronize()
