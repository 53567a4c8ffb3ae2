"""Registers hcq's tinygrad device as `tinygrad.runtime.ops_hcq`, without editing tinygrad.

Loaded at interpreter start-up by `hcq_tinygrad.pth` (installed with the hcq wheel). It imports
nothing: it adds one finder to `sys.meta_path`, which acts only when tinygrad is imported:
- `tinygrad.runtime.ops_hcq` is served as an alias of hcq's device module for the installed
  tinygrad: `hcq.tinygrad.ops_hcq` (0.9.1) or `hcq.tinygrad.ops_hcq14` (0.14.x); any other
  version gets one ImportError naming the supported ones (hcq.tinygrad._version decides);
- after `tinygrad.device` runs, "HCQ" is appended to `Device._devices` (tinygrad lists its
  devices from the `ops_*.py` files of its own directory), so `HCQ=1` (0.9.1), `DEV=HCQ`
  (0.14), `Device["HCQ"]` and `device="HCQ:1"` work as for tinygrad's own devices.
Under `python -m hcq.mockgpu` (HCQ_MOCKGPU_COMPILER=1), `tinygrad.runtime.driver.hip_comgr` is
served as `hcq.mockgpu.hip_comgr`: ops_amd.py imports comgr's compile_hip at line 8, before its
MOCKGPU hook, and no comgr here compiles for gfx11; the stand-in compiles with the HCQ device's
clang-19.
Under `python -m hcq.mockgpu` with tinygrad 0.14 (HCQ_MOCKGPU_TG14=1), 0.14's file interface
(`tinygrad.runtime.support.hcq.FileIOInterface`, and `test.mockgpu.mockgpu` it imports for
`DEV=MOCK...+AMD`) is hcq-sim's (`hcq.mockgpu.tg14`).
Set HCQ_TINYGRAD_HOOK=0 to disable.
"""
import importlib.abc
import importlib.util
import os
import sys


class _Alias(importlib.abc.Loader):
  def __init__(self, target): self.target = target
  def create_module(self, spec): return importlib.import_module(self.target)
  def exec_module(self, module): pass


class _VersionAlias(importlib.abc.Loader):
  """An alias of the hcq device module that serves the installed tinygrad (chosen on import)."""
  def create_module(self, spec): return importlib.import_module(importlib.import_module("hcq.tinygrad._version").device_module())
  def exec_module(self, module): pass


class _AfterDevice(importlib.abc.Loader):
  def __init__(self, loader): self.loader = loader
  def create_module(self, spec): return self.loader.create_module(spec)
  def exec_module(self, module):
    self.loader.exec_module(module)
    devices = getattr(getattr(module, "Device", None), "_devices", None)
    if isinstance(devices, list) and "HCQ" not in devices: devices.append("HCQ")


class _AfterHcq(importlib.abc.Loader):
  """tinygrad 0.14 under `python -m hcq.mockgpu`: once `tinygrad.runtime.support.hcq` has run, its
  `FileIOInterface` (the seam its mock GPU uses) is hcq-sim's subclass (`hcq.mockgpu.tg14`)."""
  def __init__(self, loader): self.loader = loader
  def create_module(self, spec): return self.loader.create_module(spec)
  def exec_module(self, module):
    self.loader.exec_module(module)
    from hcq.mockgpu.tg14 import file_io_interface
    module.FileIOInterface = file_io_interface(module.FileIOInterface)


class _AfterCompilerAmd(importlib.abc.Loader):
  """tinygrad 0.14 under `python -m hcq.mockgpu`: its comgr compiler (HIP and assembly) is served
  by clang-19 and ld.lld-19 (`hcq.mockgpu.compiler_amd14`); no comgr here builds for gfx11."""
  def __init__(self, loader): self.loader = loader
  def create_module(self, spec): return self.loader.create_module(spec)
  def exec_module(self, module):
    self.loader.exec_module(module)
    from hcq.mockgpu.compiler_amd14 import patch
    patch(module)


class _EmptyPackage(importlib.abc.Loader):
  def create_module(self, spec): return None
  def exec_module(self, module): pass


def _other_spec(finder, name, path, target):
  for f in sys.meta_path:
    if f is finder or not hasattr(f, "find_spec"): continue
    spec = f.find_spec(name, path, target)
    # A namespace package (tinygrad's test/mockgpu has no __init__.py) has no loader, only
    # search locations: it is still the real package, whose other modules (test.mockgpu.amd.emu,
    # which test/amd/hw imports) must stay importable.
    if spec is not None and (spec.loader is not None or spec.submodule_search_locations): return spec
  return None


def _tg14_spec(finder, name, path, target):
  """Under `python -m hcq.mockgpu` with tinygrad 0.14 (HCQ_MOCKGPU_TG14=1): its file interface is
  hcq-sim's whatever DEV names (`test.mockgpu.mockgpu` and `.usb`, which 0.14 imports for
  `DEV=MOCK...`, are hcq's, with empty parent packages where no tinygrad checkout has them)."""
  if name in ("test.mockgpu.mockgpu", "test.mockgpu.usb"): return importlib.util.spec_from_loader(name, _Alias("hcq.mockgpu.tg14_mock"))
  if name in ("test", "test.mockgpu"):
    return _other_spec(finder, name, path, target) or importlib.util.spec_from_loader(name, _EmptyPackage(), is_package=True)
  if name == "tinygrad.runtime.support.hcq" and (spec := _other_spec(finder, name, path, target)) is not None:
    spec.loader = _AfterHcq(spec.loader)
    return spec
  if name == "tinygrad.runtime.support.compiler_amd" and (spec := _other_spec(finder, name, path, target)) is not None:
    spec.loader = _AfterCompilerAmd(spec.loader)
    return spec
  return None


class HcqTinygradFinder(importlib.abc.MetaPathFinder):
  """Serves tinygrad.runtime.ops_hcq and lists HCQ among tinygrad's devices."""
  def find_spec(self, name, path=None, target=None):
    if os.environ.get("HCQ_MOCKGPU_TG14") == "1" and name.startswith(("test", "tinygrad.runtime.support.hcq", "tinygrad.runtime.support.compiler_amd")):
      if (spec := _tg14_spec(self, name, path, target)) is not None: return spec
    if name == "tinygrad.runtime.ops_hcq": return importlib.util.spec_from_loader(name, _VersionAlias())
    if name == "tinygrad.runtime.driver.hip_comgr" and os.environ.get("HCQ_MOCKGPU_COMPILER") == "1":
      return importlib.util.spec_from_loader(name, _Alias("hcq.mockgpu.hip_comgr"))
    if name != "tinygrad.device": return None
    for finder in sys.meta_path:
      if finder is self or not hasattr(finder, "find_spec"): continue
      spec = finder.find_spec(name, path, target)
      if spec is not None and spec.loader is not None:
        spec.loader = _AfterDevice(spec.loader)
        return spec
    return None


if os.environ.get("HCQ_TINYGRAD_HOOK", "1") != "0" and not any(isinstance(f, HcqTinygradFinder) for f in sys.meta_path):
  sys.meta_path.insert(0, HcqTinygradFinder())
