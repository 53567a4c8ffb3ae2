"""Triage only, never part of the pass counts: a pytest plugin that has tinygrad 0.9.1's test
helpers (`test/helpers.py` `is_dtype_supported`) answer for HCQ as they do for AMD, whose bf16
support they hard-code (`device in {"AMD"}`), to show what their skips hide.

    PYTHONPATH=$TINYGRAD_SRC:scripts/triage HCQ=1 python -m pytest -p hcq_as_amd test/test_dtype.py
"""
import test.helpers as h
_orig = h.is_dtype_supported
def is_dtype_supported(dtype, device=None):
  from tinygrad import Device
  device = device or Device.DEFAULT
  return _orig(dtype, "AMD" if device.split(":")[0] == "HCQ" else device)
h.is_dtype_supported = is_dtype_supported
import test.test_dtype as td
td.is_dtype_supported = is_dtype_supported
