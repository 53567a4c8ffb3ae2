"""tinygrad 0.14 on the HCQ device (`DEV=HCQ`, simulator), checked against numpy: elementwise,
reductions, matmul, conv2d, an SGD step, a TinyJit with changing inputs (replayed as an hcq graph), a symbolic JIT,
a 2-GPU shard. Skips unless tinygrad 0.14 is installed (test_tinygrad.py covers 0.9.1).
tinygrad's own files: scripts/tinygrad-suite.sh --tinygrad 0.14."""
import os

import pytest

os.environ.setdefault("DEV", "HCQ")  # read when tinygrad is imported: the default device, not the CPU (which needs clang)
os.environ.setdefault("HCQ_SIM_GPUS", "2")
np = pytest.importorskip("numpy")
pytest.importorskip("tinygrad")
from hcq.tinygrad import _version  # noqa: E402

if _version.series() != "0.14": pytest.skip(f"tinygrad 0.14's HCQ device; installed: tinygrad {_version.tinygrad_version()}", allow_module_level=True)

from tinygrad import Device, Tensor, TinyJit, Variable  # noqa: E402
from tinygrad.engine.realize import graph_cache  # noqa: E402

rng = np.random.default_rng(0)


def rand(*shape): return rng.standard_normal(shape).astype(np.float32)


def test_hcq_is_a_tinygrad_device():
  d = Device["HCQ"]
  assert type(d).__name__ == "HCQDevice" and type(d).__module__ == "hcq.tinygrad.ops_hcq14"
  assert d.renderer.compiler.arch == d.arch


def test_elementwise():
  a, b = rand(33, 17), rand(33, 17)
  ta, tb = Tensor(a, device="HCQ"), Tensor(b, device="HCQ")
  np.testing.assert_allclose((ta * tb + ta.exp() - tb.abs().sqrt()).numpy(), a * b + np.exp(a) - np.sqrt(np.abs(b)), rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(ta.sin().numpy(), np.sin(a), rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(ta.maximum(tb).numpy(), np.maximum(a, b))
  i = rng.integers(-1000, 1000, (50,), dtype=np.int32)
  np.testing.assert_equal((Tensor(i, device="HCQ") * 3 + 7).numpy(), i * 3 + 7)


def test_reductions():
  a = rand(64, 50)
  t = Tensor(a, device="HCQ")
  np.testing.assert_allclose(t.sum().numpy(), a.sum(), rtol=1e-4)
  np.testing.assert_allclose(t.max(axis=1).numpy(), a.max(axis=1))
  np.testing.assert_allclose(t.mean(axis=0).numpy(), a.mean(axis=0), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(t.softmax(-1).numpy(), np.exp(a) / np.exp(a).sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(t.cumsum(1).numpy(), a.cumsum(1), rtol=1e-4, atol=1e-4)


def test_matmul():
  a, b = rand(45, 67), rand(67, 29)
  np.testing.assert_allclose((Tensor(a, device="HCQ") @ Tensor(b, device="HCQ")).numpy(), a @ b, rtol=1e-4, atol=1e-4)
  h = (Tensor(a, device="HCQ").half() @ Tensor(b, device="HCQ").half()).float().numpy()
  np.testing.assert_allclose(h, a @ b, rtol=5e-2, atol=5e-2)


def test_conv2d_and_training_step():
  x, w = rand(2, 3, 9, 9), rand(4, 3, 3, 3)
  ref = np.zeros((2, 4, 7, 7), np.float32)
  for i in range(7):
    for j in range(7): ref[:, :, i, j] = np.einsum("bchw,ochw->bo", x[:, :, i:i + 3, j:j + 3], w)
  np.testing.assert_allclose(Tensor(x, device="HCQ").conv2d(Tensor(w, device="HCQ")).numpy(), ref, rtol=1e-4, atol=1e-4)

  from tinygrad.nn.optim import SGD
  xs, ys, w0 = rand(8, 4), rand(8, 3), rand(4, 3)
  tw = Tensor(w0, device="HCQ")  # tinygrad 0.14: every Tensor is a parameter unless told otherwise
  opt = SGD([tw], lr=0.1)
  from tinygrad.helpers import Context
  with Context(TRAINING=1):
    opt.zero_grad()
    loss = ((Tensor(xs, device="HCQ") @ tw - Tensor(ys, device="HCQ")) ** 2).mean()
    loss.backward()
    loss_v = loss.numpy()  # before the step (loss is lazy)
    opt.step()
  grad = 2 / ys.size * xs.T @ (xs @ w0 - ys)
  np.testing.assert_allclose(loss_v, ((xs @ w0 - ys) ** 2).mean(), rtol=1e-5)
  np.testing.assert_allclose(tw.numpy(), w0 - 0.1 * grad, rtol=1e-5, atol=1e-6)


def test_jit_changing_inputs_replays_a_graph():
  @TinyJit
  def f(x: Tensor, y: Tensor) -> Tensor:
    a = (x + 1).contiguous()
    b = (a * y).contiguous()
    return (b.exp2() + a).sum(axis=1).realize()
  for _ in range(5):
    x, y = rand(8, 16), rand(8, 16)
    np.testing.assert_allclose(f(Tensor(x, device="HCQ"), Tensor(y, device="HCQ")).numpy(), (np.exp2((x + 1) * y) + x + 1).sum(1), rtol=1e-4, atol=1e-5)
  graphs = [g for g in graph_cache.values() if type(g).__name__ == "HCQGraph"]
  assert graphs, "the JIT batch was not captured as an HCQ graph"


def test_symbolic_jit():
  @TinyJit
  def f(x: Tensor, n) -> Tensor:
    return ((x[:n] * 2).contiguous() + 1).sum().realize()
  for i in range(1, 9):
    x = rand(16)
    np.testing.assert_allclose(f(Tensor(x, device="HCQ"), Variable("n", 1, 16).bind(i)).numpy(), (x[:i] * 2 + 1).sum(), rtol=1e-5, atol=1e-5)


def host(t: Tensor):
  """A multi-GPU tensor's values (through GPU 0: tinygrad reads multi-device tensors through its
  CPU device, which needs a host C compiler)."""
  return t.to("HCQ").numpy()


def test_two_gpu_shard():
  a = rand(8, 12)
  devs = ("HCQ:0", "HCQ:1")
  t = Tensor(a, device="HCQ").shard(devs, axis=0)
  assert t.device == ("HCQ", "HCQ:1")  # canonical names
  np.testing.assert_allclose(host(t * 2 + 1), a * 2 + 1, rtol=1e-6)
  np.testing.assert_allclose(host(t.sum()), a.sum(), rtol=1e-4)
  w = rand(12, 5)
  np.testing.assert_allclose(host(t @ Tensor(w, device="HCQ").shard(devs)), a @ w, rtol=1e-4, atol=1e-4)

  @TinyJit
  def f(x: Tensor) -> Tensor:
    y = (x * 3 + 1).contiguous()
    return (y * y).realize()
  for _ in range(4):
    x = rand(8, 4)
    np.testing.assert_allclose(host(f(Tensor(x, device="HCQ").shard(devs, axis=0))), (x * 3 + 1) ** 2, rtol=1e-5, atol=1e-5)


def test_program_call_with_timeout_returns_its_time():
  # 0.14's BEAM times candidates with wait=True, timeout=<ms>: the call returns the GPU time.
  from hcq.tinygrad.bench14 import _small_kernel
  prg, bufs, gs, ls = _small_kernel("HCQ")
  t = prg(*bufs, global_size=gs, local_size=ls, wait=True, timeout=10_000)
  assert isinstance(t, float) and t >= 0
  assert prg(*bufs, global_size=gs, local_size=ls) is None


def test_vs_seed_compares_hcq_with_tinygrad14s_own_amd_backend():
  # --vs-seed under 0.14: the seed's side is 0.14's unmodified ops_amd.py on hcq-sim (the hook's
  # FileIOInterface, turned on in this fresh process), beside HCQ; the same keys as under 0.9.1.
  import json
  import subprocess
  import sys
  import textwrap
  code = textwrap.dedent("""
    import json
    import hcq.bench as b
    res = b.vs_seed(rounds=1)
    from tinygrad import Device
    from tinygrad.runtime.support.hcq import FileIOInterface
    assert type(Device["AMD"]).__module__ == "tinygrad.runtime.ops_amd", type(Device["AMD"])
    assert getattr(FileIOInterface, "_hcq_sim", False), FileIOInterface
    print(json.dumps(res))
  """)
  env = {k: v for k, v in os.environ.items() if k not in ("AMD", "MOCKGPU", "HCQ", "DEV", "HCQ_SIM_CLIENT", "HCQ_SIM_KERNEL", "HCQ_MOCKGPU_TG14")}
  env.update(JIT_BATCH_SIZE="128", HCQ_SIM_GPUS="1")
  r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env, cwd="/")
  assert r.returncode == 0, r.stderr[-3000:]
  res = json.loads(r.stdout.strip().splitlines()[-1])
  assert res["tinygrad_version"].startswith("0.14") and res["sim_mode"] == "threaded" and res["rounds"] == 1
  for key, unit in (("launch", "us"), ("jit_replay", "us_per_kernel"), ("jit_replay_changed", "us_per_kernel"),
                    ("copy_in", "gbps"), ("copy_out", "gbps"), ("train_step", "ms")):
    for who in ("seed", "hcq"):
      assert res[f"{who}_{key}_{unit}"] > 0 and len(res[f"{who}_{key}_{unit}_spread"]) == 2
    assert res[f"hcq_over_seed_{key}"] > 0 and len(res[f"hcq_over_seed_{key}_spread"]) == 2
