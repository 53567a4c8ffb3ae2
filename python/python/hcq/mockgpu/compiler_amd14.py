"""tinygrad 0.14's comgr compiler (`tinygrad.runtime.support.compiler_amd`) under
`python -m hcq.mockgpu`, served by clang-19 and ld.lld-19.

0.14 compiles HIP source and AMDGPU assembly (its `test/amd` suites, `HIPCompiler`) through
libamd_comgr, which no Debian package ships for gfx11/gfx12/gfx942. Once tinygrad's module has
run, the .pth hook (HCQ_MOCKGPU_TG14=1) calls `patch(module)`: `compile_hip` becomes hcq's
clang-19 build (HIP: `hcq.tinygrad.compiler.compile_hip`; assembly: `assemble`, the same two
steps comgr takes: assemble to a relocatable, link it `-shared`), and `HIPCompiler` stops
requiring comgr's library. Failures are RuntimeError, which HIPCompiler turns into CompileError
as it does comgr's. Nothing else of tinygrad's module changes.
"""
from __future__ import annotations

from hcq.tinygrad.compiler import assemble, compile_hip as _hip


def compile_hip(prg: str, arch: str = "gfx1100", asm: bool = False) -> bytes:
  """The code object of HIP source or (asm=True) assembly `prg` for `arch`."""
  return assemble(prg, arch) if asm else _hip(prg, arch)


def patch(module) -> None:
  """Serve `module` (tinygrad 0.14's compiler_amd) with clang-19 instead of comgr."""
  module.compile_hip = compile_hip
  cls = getattr(module, "HIPCompiler", None)
  if cls is None: return
  base = cls.__mro__[1]

  def __init__(self, arch: str):
    self.arch = arch
    base.__init__(self, f"compile_hip_{arch}")
  cls.__init__ = __init__
