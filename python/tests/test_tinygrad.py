"""tinygrad 0.9.1 on the HCQ device (simulator), checked against numpy: elementwise, reductions,
matmul, conv, JIT, sub-buffers, two GPUs. CI's fast subset (tinygrad's own files: scripts/tinygrad-suite.sh)."""
import os

import pytest

np = pytest.importorskip("numpy")
tinygrad = pytest.importorskip("tinygrad")
from hcq.tinygrad import _version  # noqa: E402

if _version.series() != "0.9.1": pytest.skip(f"tinygrad 0.9.1's HCQ device; installed: tinygrad {_version.tinygrad_version()}", allow_module_level=True)
from tinygrad import Device, Tensor, TinyJit  # noqa: E402

os.environ.setdefault("HCQ_SIM_GPUS", "2")
rng = np.random.default_rng(0)


def rand(*shape): return rng.standard_normal(shape).astype(np.float32)


def test_hcq_is_a_tinygrad_device():
  assert "HCQ" in Device._devices and type(Device["HCQ"]).__name__ == "HCQDevice"


def test_elementwise():
  a, b = rand(33, 17), rand(33, 17)
  ta, tb = Tensor(a, device="HCQ"), Tensor(b, device="HCQ")
  np.testing.assert_allclose((ta * tb + ta.exp() - tb.abs().sqrt()).numpy(), a * b + np.exp(a) - np.sqrt(np.abs(b)), rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(ta.sin().numpy(), np.sin(a), rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(ta.maximum(tb).numpy(), np.maximum(a, b))


def test_reductions():
  a = rand(64, 50)
  t = Tensor(a, device="HCQ")
  np.testing.assert_allclose(t.sum().numpy(), a.sum(), rtol=1e-4)
  np.testing.assert_allclose(t.max(axis=1).numpy(), a.max(axis=1))
  np.testing.assert_allclose(t.mean(axis=0).numpy(), a.mean(axis=0), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(t.softmax(-1).numpy(), np.exp(a) / np.exp(a).sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_matmul():
  a, b = rand(45, 67), rand(67, 29)
  np.testing.assert_allclose((Tensor(a, device="HCQ") @ Tensor(b, device="HCQ")).numpy(), a @ b, rtol=1e-4, atol=1e-4)


def test_conv2d():
  x, w = rand(2, 3, 10, 10), rand(4, 3, 3, 3)
  out = Tensor(x, device="HCQ").conv2d(Tensor(w, device="HCQ"), padding=1).numpy()
  ref = np.zeros((2, 4, 10, 10), np.float32)
  xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
  for i in range(3):
    for j in range(3): ref += np.einsum("bchw,oc->bohw", xp[:, :, i:i + 10, j:j + 10], w[:, :, i, j])
  np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)


def test_jit_replays_with_new_inputs():
  @TinyJit
  def f(a, b):
    c = (a @ b).realize()  # two kernels: one graph
    return (c + 1).relu().realize()
  for _ in range(5):
    a, b = rand(16, 16), rand(16, 16)
    np.testing.assert_allclose(f(Tensor(a, device="HCQ"), Tensor(b, device="HCQ")).numpy(), np.maximum(a @ b + 1, 0), rtol=1e-4, atol=1e-4)
  assert any(type(ji.prg).__name__ == "HCQGraph" for ji in f.jit_cache)


def test_sub_buffers_and_assign():
  a = Tensor.zeros(10, device="HCQ").contiguous().realize()
  a[2:5] = 7
  np.testing.assert_allclose(a.numpy(), [0, 0, 7, 7, 7, 0, 0, 0, 0, 0])


def test_two_gpus():
  a = rand(8, 8)
  t = Tensor(a, device="HCQ").to("HCQ:1")
  np.testing.assert_allclose((t * 2).to("HCQ").numpy(), a * 2)
  s = Tensor(a, device="HCQ").shard(("HCQ", "HCQ:1"), axis=0)
  np.testing.assert_allclose((s + 1).sum().numpy(), (a + 1).sum(), rtol=1e-5)


def test_half_sin_uses_the_corrected_ocml():
  # Debian's ocml.bc returns NaN for every finite half (its __ocml_sin_f16 selects NaN on the
  # finite branch); hcq links a corrected one ahead of it (hcq/tinygrad/ocml_fixes.ll).
  x = np.array([0.0, 0.5, 1.0, -1.0, 3.140625, -0.0, 100.0, 65504.0], np.float16)
  got = Tensor(x, device="HCQ").sin().numpy()
  assert got.dtype == np.float16
  np.testing.assert_allclose(got.astype(np.float32), np.sin(x.astype(np.float32)), rtol=2e-3, atol=1e-3)
  assert np.signbit(got[5]) and got[0] == 0 and not np.signbit(got[0])
  assert np.isnan(Tensor(np.array([np.inf, -np.inf, np.nan], np.float16), device="HCQ").sin().numpy()).all()
