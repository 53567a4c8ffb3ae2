"""Triage only, never part of the pass counts: a pytest plugin that gives the seed's
`AMDDevice._wait_signal` (tinygrad 0.9.1 ops_amd.py:466) a 10-minute timeout instead of its
fixed 10 s, to tell a slow simulated kernel from a hang.

    PYTHONPATH=scripts/triage python -m hcq.mockgpu -- python -m pytest -p seed_long_wait ...
"""

import tinygrad.runtime.ops_amd as _ops_amd

_orig = _ops_amd.AMDDevice._wait_signal.__func__


def _wait_signal(cls, signal, value=0, timeout=10000):
    return _orig(cls, signal, value, timeout=max(timeout, 600_000))


_ops_amd.AMDDevice._wait_signal = classmethod(_wait_signal)
