"""tinygrad 0.9.1's own AMD runtime (its unmodified ops_amd.py) on hcq-sim through the mock-GPU hook
(`python -m hcq.mockgpu`), and the `SimKfd` binding beneath it. Each tinygrad run is its own
process, as the hook patches the interpreter."""
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("numpy")
pytest.importorskip("tinygrad")

import hcq  # noqa: E402
from hcq._hcq import SimKfd  # noqa: E402


def seed(code: str, *, gpus: int = 1, kernel: str = "6.8", env: dict | None = None, timeout: int = 600):
  """Runs `code` under python -m hcq.mockgpu; returns the completed process."""
  e = dict(os.environ)
  for k in ("AMD", "MOCKGPU", "HCQ", "HCQ_SIM_CLIENT"): e.pop(k, None)
  e.update(env or {})
  cmd = [sys.executable, "-m", "hcq.mockgpu", "--gpus", str(gpus), "--kernel", kernel, "--", sys.executable, "-c", textwrap.dedent(code)]
  return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e)


def test_the_readme_line_prints_2_3_4():
  r = seed("from tinygrad import Tensor; print((Tensor([1,2,3])+1).numpy())")
  assert r.returncode == 0, r.stderr[-3000:]
  assert r.stdout.strip().splitlines()[-1] == "[2 3 4]"


def test_the_seed_runs_ops_jit_and_copies():
  r = seed("""
    import numpy as np
    from tinygrad import Device, Tensor, TinyJit
    assert Device.DEFAULT == "AMD" and type(Device["AMD"]).__module__ == "tinygrad.runtime.ops_amd"
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((48, 40)).astype(np.float32), rng.standard_normal((40, 24)).astype(np.float32)
    ta, tb = Tensor(a), Tensor(b)
    np.testing.assert_allclose((ta @ tb).numpy(), a @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose((ta.exp() * 2 - ta.abs().sqrt()).numpy(), np.exp(a) * 2 - np.sqrt(np.abs(a)), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ta.sum(axis=1).numpy(), a.sum(axis=1), rtol=1e-4, atol=1e-4)
    big = rng.standard_normal(3 << 20).astype(np.float32)   # 12 MiB: several SDMA copies each way
    np.testing.assert_array_equal(Tensor(big).numpy(), big)
    @TinyJit
    def f(x, y): return (x * y + 1).realize()
    for i in range(5):
      x, y = Tensor(a + i), Tensor(a - i)
      np.testing.assert_allclose(f(x, y).numpy(), (a + i) * (a - i) + 1, rtol=1e-5, atol=1e-4)
    print("ok")
  """)
  assert r.returncode == 0, r.stderr[-3000:]
  assert r.stdout.strip().endswith("ok")


def test_two_simulated_gpus_transfer():
  r = seed("""
    import numpy as np
    from tinygrad import Tensor
    a = np.arange(4096, dtype=np.float32)
    t = Tensor(a, device="AMD:1")
    np.testing.assert_array_equal((t.to("AMD") + 1).numpy(), a + 1)
    print("ok")
  """, gpus=2)
  assert r.returncode == 0, r.stderr[-3000:]
  assert r.stdout.strip().endswith("ok")


def test_strict_mode_refuses_the_seeds_own_memory():
  # hcq's strict rules: MAP_FIXED only over ranges the simulator handed out. ops_amd.py maps each
  # BO over its own libc reservation (ops_amd.py:434), which the kernel accepts.
  e = dict(os.environ, AMD="1", MOCKGPU="1", HCQ_SIM_CLIENT="hcq", HCQ_SIM_KERNEL="6.8", HCQ_MOCKGPU_COMPILER="1")
  e["PYTHONPATH"] = __import__("hcq.mockgpu", fromlist=["path_dir"]).path_dir()
  r = subprocess.run([sys.executable, "-c", "from tinygrad import Tensor; print((Tensor([1,2,3])+1).numpy())"],
                     capture_output=True, text=True, timeout=120, env=e)
  assert r.returncode != 0
  assert "AssertionError" in r.stderr or "Errno" in r.stderr, r.stderr[-2000:]


def test_a_6_12_kernel_refuses_the_seeds_queue_buffers():
  # ops_amd.py:515 passes ctx_save_restore_size=0x2C02000 and ctl_stack_size 0 (the create_queue call at line 530 sets no
  # ctl_stack_size): Linux 6.12's kfd_queue_acquire_buffers checks both against the node's sizes.
  r = seed("from tinygrad import Tensor; print((Tensor([1,2,3])+1).numpy())", kernel="6.12", timeout=120)
  assert r.returncode != 0
  assert "Invalid argument" in r.stderr and "0x2" in r.stderr, r.stderr[-2000:]


def test_simkfd_binding_speaks_the_kernels_abi():
  s = SimKfd(client="any", kernel="6.8")
  assert s.client == "any" and len(s.gpu_ids) == 1 and s.fault_reasons() == []
  kfd = s.open("/dev/kfd")
  assert s.fstat(kfd)[0] == "/dev/kfd"
  props = s.read_file("/sys/devices/virtual/kfd/kfd/topology/nodes/1/properties").decode()
  assert "gfx_target_version 110000" in props
  with pytest.raises(OSError) as e: s.read_file("/sys/devices/virtual/kfd/kfd/topology/nodes/9/gpu_id")
  assert e.value.errno == 2
  ver = bytearray(8)
  s.ioctl(kfd, (3 << 30) | (8 << 16) | (ord("K") << 8) | 0x01, ver)  # GET_VERSION
  assert int.from_bytes(ver[:4], "little") == 1
  with pytest.raises(OSError) as e: s.ioctl(kfd, (3 << 30) | (8 << 16) | (ord("K") << 8) | 0xEE, bytearray(8))
  assert e.value.errno == 25  # ENOTTY
  dup = s.dup(kfd)
  s.close(kfd)
  s.ioctl(dup, (3 << 30) | (8 << 16) | (ord("K") << 8) | 0x01, ver)
  with pytest.raises(OSError) as e: s.close(kfd)
  assert e.value.errno == 9  # EBADF
  assert SimKfd(client="hcq").client == "hcq"
  with pytest.raises(hcq.HcqError): SimKfd(client="nobody")
  with pytest.raises(hcq.HcqError): SimKfd(kernel="six")
