"""Builds tinygrad's AMD renderer output (HIP C++) into a code object with clang-19: no ROCm.

The math tinygrad calls (`__ocml_*`, `__ockl_*`) comes from the device-library bitcode of
Debian's `rocm-device-libs` (found under /usr/lib/*/amdgcn/bitcode, or HCQ_DEVICE_LIBS). Where
that package lacks a target's `oclc_isa_version_<N>.bc`, it is assembled from `isa_version.ll`
into ~/.cache/hcq/bitcode. Functions that package's ocml.bc gets wrong (`__ocml_sin_f16`) are
replaced by `ocml_fixes.ll`, linked ahead of it. tinygrad caches the code objects on disk (its compile cache, keyed
by the source and `compile_hcq_<target>`).
"""
from __future__ import annotations

import functools
import glob
import hashlib
import os
import pathlib
import shutil
import subprocess
import tempfile

CLANG = os.environ.get("HCQ_CLANG", "clang-19")


class CompileFailed(RuntimeError):
  """clang-19 refused a kernel (its diagnostics are the message)."""


def isa_version(arch: str) -> int:
  """`gfx1100` -> 11000, `gfx90a` -> 9010, `gfx942` -> 9402 (ROCm's __oclc_ISA_version)."""
  digits = arch.removeprefix("gfx")
  major, minor, step = int(digits[:-2]), int(digits[-2], 16), int(digits[-1], 16)
  return major * 1000 + minor * 100 + step


@functools.lru_cache(None)
def device_libs() -> pathlib.Path:
  """The directory of the ROCm device-library bitcode (ocml.bc, ockl.bc, oclc_*.bc)."""
  cands = [os.environ.get("HCQ_DEVICE_LIBS", "")] + sorted(glob.glob("/usr/lib/*/amdgcn/bitcode")) + \
          sorted(glob.glob("/usr/lib/llvm-*/lib/clang/*/lib/amdgcn/bitcode")) + ["/opt/rocm/amdgcn/bitcode"]
  for c in cands:
    if c and (pathlib.Path(c) / "ocml.bc").exists(): return pathlib.Path(c)
  raise CompileFailed("no ROCm device-library bitcode (ocml.bc) found\n"
                      "next: apt-get install rocm-device-libs (Debian/Ubuntu), or set HCQ_DEVICE_LIBS to its bitcode directory")


def cache_dir() -> pathlib.Path:
  base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
  d = pathlib.Path(base) / "hcq" / "bitcode"
  d.mkdir(parents=True, exist_ok=True)
  return d


def _assemble(ll_text: str, name: str) -> pathlib.Path:
  """`name` (a .bc) in the cache, assembled by clang-19 from the LLVM IR `ll_text` once."""
  out = cache_dir() / name
  if out.exists(): return out
  with tempfile.TemporaryDirectory() as td:
    ll, bc = pathlib.Path(td) / "src.ll", pathlib.Path(td) / name
    ll.write_text(ll_text)
    r = subprocess.run([CLANG, "-c", "-emit-llvm", "-nogpulib", "-target", "amdgcn-amd-amdhsa", str(ll), "-o", str(bc)],
                       capture_output=True, text=True)
    if r.returncode != 0: raise CompileFailed(f"assembling {name}: {r.stderr.strip()}\nnext: install clang-19 (apt-get install clang-19)")
    shutil.move(str(bc), out)  # atomic within one filesystem; a concurrent build writes the same bytes
  return out


@functools.lru_cache(None)
def isa_library(arch: str) -> pathlib.Path:
  """oclc_isa_version_<N>.bc for `arch`: Debian's, or one assembled from isa_version.ll."""
  v = isa_version(arch)
  name = f"oclc_isa_version_{arch.removeprefix('gfx')}.bc"
  if (p := device_libs() / name).exists(): return p
  return _assemble((pathlib.Path(__file__).parent / "isa_version.ll").read_text().replace("@VERSION@", str(v)), name)


@functools.lru_cache(None)
def link_digest() -> str:
  """A short digest of the IR hcq links besides Debian's libraries (for cache keys)."""
  d = pathlib.Path(__file__).parent
  return hashlib.sha256(b"".join((d / n).read_bytes() for n in ["isa_version.ll", "ocml_fixes.ll"])).hexdigest()[:12]


@functools.lru_cache(None)
def ocml_fixes() -> pathlib.Path:
  """The corrected ocml functions (ocml_fixes.ll), keyed by the file's contents."""
  src = (pathlib.Path(__file__).parent / "ocml_fixes.ll").read_text()
  return _assemble(src, f"hcq_ocml_fixes_{hashlib.sha256(src.encode()).hexdigest()[:16]}.bc")


def _flags(arch: str) -> list[str]:
  wave64 = arch.startswith("gfx9")
  # ocml_fixes first: clang links these libraries "only needed", so what it defines is not
  # taken from ocml.bc again.
  libs = [ocml_fixes()] + [device_libs() / n for n in ["ocml.bc", "ockl.bc", "oclc_finite_only_off.bc", "oclc_unsafe_math_off.bc", "oclc_daz_opt_off.bc",
                                      "oclc_correctly_rounded_sqrt_on.bc", f"oclc_wavefrontsize64_{'on' if wave64 else 'off'}.bc",
                                      "oclc_abi_version_500.bc"]] + [isa_library(arch)]
  ld = shutil.which("ld.lld-19") or "ld.lld"
  f = ["-x", "hip", f"--offload-arch={arch}", "--offload-device-only", "--no-gpu-bundle-output", "-nogpuinc", "-nogpulib", "-O3",
       "-std=c++14", "-mcode-object-version=5", "-fuse-ld=lld", f"--ld-path={ld}", "-Wno-unused-command-line-argument"]
  if not wave64: f.append("-mcumode")
  for lib in libs: f += ["-Xclang", "-mlink-builtin-bitcode", "-Xclang", str(lib)]
  return f


def compile_hip(src: str, arch: str) -> bytes:
  """The code object (ELF) of `src` for `arch`; CompileFailed with clang's messages."""
  with tempfile.TemporaryDirectory(prefix="hcq-cc-") as td:
    s, o = pathlib.Path(td) / "k.hip", pathlib.Path(td) / "k.co"
    s.write_text(src)
    try: r = subprocess.run([CLANG, *_flags(arch), str(s), "-o", str(o)], capture_output=True, text=True)
    except FileNotFoundError as e: raise CompileFailed(f"{CLANG} not found\nnext: apt-get install clang-19 lld-19 (or set HCQ_CLANG)") from e
    if r.returncode != 0: raise CompileFailed(f"clang-19 failed for {arch}:\n{r.stderr.strip()}\nnext: the kernel source is above")
    return o.read_bytes()


def assemble(src: str, arch: str) -> bytes:
  """The code object (ELF) of AMDGPU assembly `src` for `arch`, as comgr's ASSEMBLE_SOURCE_TO_
  RELOCATABLE then LINK_RELOCATABLE_TO_EXECUTABLE make it: clang-19's integrated assembler, then
  ld.lld-19 -shared; CompileFailed with the tools' messages."""
  ld = shutil.which("ld.lld-19") or "ld.lld"
  with tempfile.TemporaryDirectory(prefix="hcq-as-") as td:
    s, o, co = pathlib.Path(td) / "k.s", pathlib.Path(td) / "k.o", pathlib.Path(td) / "k.co"
    s.write_text(src)
    for cmd in ([CLANG, "-x", "assembler", "-target", "amdgcn-amd-amdhsa", f"-mcpu={arch}", "-mcode-object-version=5", "-c", str(s), "-o", str(o)],
                [ld, "-shared", str(o), "-o", str(co)]):
      try: r = subprocess.run(cmd, capture_output=True, text=True)
      except FileNotFoundError as e: raise CompileFailed(f"{cmd[0]} not found\nnext: apt-get install clang-19 lld-19 (or set HCQ_CLANG)") from e
      if r.returncode != 0: raise CompileFailed(f"{pathlib.Path(cmd[0]).name} failed for {arch}:\n{r.stderr.strip()}\nnext: the assembly source is above")
    return co.read_bytes()
