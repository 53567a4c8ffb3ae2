"""Which tinygrad is installed, and which of hcq's device modules serves it.

hcq's `HCQ` device exists for two tinygrad APIs: 0.9.1 (`hcq.tinygrad.ops_hcq`, selected with
`HCQ=1`) and 0.14.x (`hcq.tinygrad.ops_hcq14`, selected with `DEV=HCQ`). This module imports
nothing of tinygrad: the import hook asks it which module to serve as `tinygrad.runtime.ops_hcq`.
"""
from __future__ import annotations

import functools
import importlib.metadata
import importlib.util

SUPPORTED = ("0.9.1", "0.14.x")


class UnsupportedTinygrad(ImportError):
  """The installed tinygrad is neither 0.9.1 nor 0.14.x."""


@functools.lru_cache(None)
def tinygrad_version() -> str:
  """The installed tinygrad's version ("0.14.0"); from its API where no metadata says."""
  try: return importlib.metadata.version("tinygrad")
  except importlib.metadata.PackageNotFoundError: pass
  # A source checkout on sys.path without an installed distribution: tell by the API.
  try:
    import tinygrad.device as d
  except ImportError: return "unknown"
  if hasattr(d, "BufferSpec") and hasattr(d, "TinyELF"): return "0.14.0"
  if hasattr(d, "BufferOptions"): return "0.9.1"
  return "unknown"


def series() -> str | None:
  """"0.9.1", "0.14", or None for a tinygrad hcq has no device for."""
  v = tinygrad_version()
  if v == "0.9.1": return "0.9.1"
  if v.startswith("0.14."): return "0.14"
  return None


def unsupported_message(v: str | None = None) -> str:
  v = v or tinygrad_version()
  return (f"hcq's HCQ device supports tinygrad {' and '.join(SUPPORTED)}; the installed tinygrad is {v}\n"
          "next: pip install tinygrad==0.14.0 (DEV=HCQ) or tinygrad==0.9.1 (HCQ=1)")


def device_module() -> str:
  """The hcq module that is tinygrad's `tinygrad.runtime.ops_hcq` for the installed tinygrad."""
  s = series()
  if s == "0.9.1": return "hcq.tinygrad.ops_hcq"
  if s == "0.14": return "hcq.tinygrad.ops_hcq14"
  raise UnsupportedTinygrad(unsupported_message())


def have_tinygrad() -> bool:
  return importlib.util.find_spec("tinygrad") is not None
