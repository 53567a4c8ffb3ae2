"""Stand-in for tinygrad 0.9.1's `tinygrad.runtime.driver.hip_comgr` under `python -m hcq.mockgpu`.

ops_amd.py does `from tinygrad.runtime.driver.hip_comgr import compile_hip` (its line 8), which
loads libamd_comgr at import; there is no comgr that compiles for gfx11 here. The .pth hook
serves this module instead (HCQ_MOCKGPU_COMPILER=1): `compile_hip` is the HCQ device's clang-19
build with Debian's ROCm device libraries. Its CompileFailed is a RuntimeError, which ops_amd's
AMDCompiler turns into CompileError as it does comgr's failures.
"""
from __future__ import annotations

from hcq.tinygrad.compiler import compile_hip as _clang19


def compile_hip(prg: str, arch: str = "gfx1100", asm: bool = False) -> bytes:
  """The code object of tinygrad's HIP source `prg` for `arch` (clang-19)."""
  if asm: raise RuntimeError("hcq.mockgpu: assembly input is not supported by the clang-19 stand-in\nnext: pass HIP source")
  return _clang19(prg, arch)
