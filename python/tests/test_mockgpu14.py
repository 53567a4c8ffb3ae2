"""tinygrad 0.14's own AMD backend (its unmodified ops_amd.py, from the PyPI wheel) on hcq-sim through
`python -m hcq.mockgpu`, and the simulated machine it reads (sysfs, ip_discovery, KFD). Each tinygrad
run is its own process. Needs only PyPI packages: tinygrad==0.14.0, numpy, pytest."""
import errno
import os
import subprocess
import sys
import textwrap
from importlib import metadata

import pytest

pytest.importorskip("numpy")
pytest.importorskip("tinygrad")
if not metadata.version("tinygrad").startswith("0.14"):
  pytest.skip("tinygrad 0.14's hook: another tinygrad is installed (test_mockgpu.py covers 0.9.1)", allow_module_level=True)

from hcq._hcq import SimKfd  # noqa: E402


def tg14(code: str, *, target: str = "gfx1100", gpus: int = 1, dev: str | None = None, kernel: str | None = None, timeout: int = 600,
         xcc: int | None = None):
  """Runs `code` under python -m hcq.mockgpu; returns the completed process."""
  e = {k: v for k, v in os.environ.items() if k not in ("AMD", "MOCKGPU", "HCQ", "DEV", "HCQ_SIM_CLIENT", "HCQ_SIM_KERNEL", "HCQ_SIM_XCC")}
  if dev is not None: e["DEV"] = dev
  cmd = [sys.executable, "-m", "hcq.mockgpu", "--target", target, "--gpus", str(gpus)] + (["--kernel", kernel] if kernel else [])
  cmd += ["--xcc", str(xcc)] if xcc is not None else []
  cmd += ["--", sys.executable, "-c", textwrap.dedent(code)]
  return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e, cwd="/")


@pytest.mark.parametrize("target", ["gfx1100", "gfx1201", "gfx942"])
def test_add_and_matmul_on_each_target(target):
  r = tg14("""
    import numpy as np
    from tinygrad import Device, Tensor
    from tinygrad.runtime.support.hcq import FileIOInterface
    assert Device.DEFAULT == "AMD" and type(Device["AMD"]).__module__ == "tinygrad.runtime.ops_amd"
    assert getattr(FileIOInterface, "_hcq_sim", False)
    print((Tensor([1,2,3])+1).numpy())
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((24, 20)).astype(np.float32), rng.standard_normal((20, 12)).astype(np.float32)
    np.testing.assert_allclose((Tensor(a) @ Tensor(b)).numpy(), a @ b, rtol=1e-4, atol=1e-4)
    print(Device["AMD"].arch, Device["AMD"].iface.ip_versions)
  """, target=target)
  assert r.returncode == 0, r.stderr[-3000:]
  lines = r.stdout.strip().splitlines()
  assert lines[-2] == "[2 3 4]"
  assert lines[-1].startswith(target)


def test_two_gpus_and_copies_between_them():
  r = tg14("""
    import numpy as np
    from tinygrad import Device, Tensor
    x = np.arange(1 << 16, dtype=np.float32)
    t0 = Tensor(x, device="AMD:0")
    t1 = (t0.to("AMD:1") * 2).realize()
    assert t1.device == "AMD:1"
    np.testing.assert_array_equal(t1.numpy(), x * 2)
    np.testing.assert_array_equal((t1.to("AMD:0") + t0).numpy(), x * 3)
    print("ok", Device["AMD:1"].iface.gpu_id != Device["AMD:0"].iface.gpu_id)
  """, gpus=2)
  assert r.returncode == 0, r.stderr[-3000:]
  assert r.stdout.strip().splitlines()[-1] == "ok True"


@pytest.mark.parametrize("dev", ["AMD", "KFD+AMD", "MOCKKFD+AMD"])
def test_the_dev_strings_0_14_users_write_reach_the_simulator(dev):
  r = tg14("""
    from tinygrad import Device, Tensor
    print(type(Device["AMD"].iface).__name__, (Tensor([5]) * 3).numpy())
  """, dev=dev)
  assert r.returncode == 0, r.stderr[-3000:]
  name, value = r.stdout.strip().splitlines()[-1].split(" ", 1)
  assert name.endswith("KFDIface") and value == "[15]"


def test_the_file_interface_gives_the_errnos_of_a_real_system():
  r = tg14("""
    import errno, os
    from tinygrad.runtime.support.hcq import FileIOInterface as F
    def err(f):
      try: f()
      except OSError as e: return e.errno
    nodes = "/sys/devices/virtual/kfd/kfd/topology/nodes"
    print(sorted(F(nodes).listdir()) == ["0", "1"])
    print(err(lambda: F(nodes + "/7/gpu_id")) == errno.ENOENT)
    print(err(lambda: F(nodes + "/1/gpu_id").listdir()) == errno.ENOTDIR)
    print(err(lambda: F(nodes).read()) == errno.EISDIR)
    print(err(lambda: F("/dev/dri/renderD200", os.O_RDWR)) == errno.ENOENT)
    print(err(lambda: F(nodes + "/1/gpu_id", os.O_RDWR)) == errno.EACCES)
    print(F.exists(nodes + "/1/properties"), F.exists(nodes + "/1/nope"))
  """)
  assert r.returncode == 0, r.stderr[-3000:]
  assert r.stdout.split() == ["True"] * 7 + ["False"]


def test_ip_discovery_lists_the_chips_ips():
  s = SimKfd(target="gfx1201", gpus=1, client="any")
  files = s.sysfs_files()
  gc = [f for f in files if "/ip_discovery/die/0/11/0/" in f]
  assert gc, files
  base = gc[0].rsplit("/", 1)[0]
  assert [s.read_file(f"{base}/{p}").strip() for p in ("major", "minor", "revision")] == [b"12", b"0", b"1"]
  with pytest.raises(OSError) as e:
    s.read_file(base.replace("/11/0", "/11/1") + "/major")
  assert e.value.errno == errno.ENOENT
  assert not any("ip_discovery" in f for f in SimKfd(target="gfx90a", gpus=1, client="any").sysfs_files())


def test_another_tinygrad_version_is_named(tmp_path):
  # A tinygrad 0.13.0 distribution first on the path: the hook refuses it, naming what it supports.
  (tmp_path / "tinygrad-0.13.0.dist-info").mkdir()
  (tmp_path / "tinygrad-0.13.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: tinygrad\nVersion: 0.13.0\n")
  e = dict(os.environ, PYTHONPATH=str(tmp_path))
  r = subprocess.run([sys.executable, "-m", "hcq.mockgpu", "--", sys.executable, "-c", "print('ran')"], capture_output=True, text=True, env=e, timeout=120)
  assert r.returncode == 2 and "ran" not in r.stdout
  assert "tinygrad 0.13.0" in r.stderr and "0.9.1 and 0.14.x" in r.stderr


def test_comgr_compiles_assembly_and_hip_with_clang19():
  """0.14's HIPCompiler (comgr: HIP and the assembly its test/amd suites build) is served by
  clang-19 and ld.lld-19 under the hook; both kernels run on the simulated GPU."""
  r = tg14("""
    from tinygrad import Device
    from tinygrad.runtime.support.compiler_amd import HIPCompiler
    from tinygrad.device import Buffer, TinyELF
    from tinygrad.helpers import Target
    from tinygrad.dtype import dtypes
    import numpy as np
    dev = Device["AMD"]
    src = '''.text
    .globl store7
    .p2align 8
    .type store7,@function
    store7:
      s_load_b64 s[2:3], s[0:1], 0x0
      v_mov_b32 v0, 0
      v_mov_b32 v1, 7
      s_waitcnt lgkmcnt(0)
      global_store_b32 v0, v1, s[2:3]
      s_endpgm
    .rodata
    .p2align 6
    .amdhsa_kernel store7
      .amdhsa_user_sgpr_kernarg_segment_ptr 1
      .amdhsa_kernarg_size 8
      .amdhsa_next_free_vgpr 2
      .amdhsa_next_free_sgpr 4
      .amdhsa_wavefront_size32 1
    .end_amdhsa_kernel
    '''
    lib = HIPCompiler(dev.arch).compile(src)
    assert lib[:4] == b"\\x7fELF"
    buf = Buffer("AMD", 1, dtypes.int32).allocate()
    prg = dev.runtime(TinyELF(lib, "store7", Target("AMD", arch=dev.arch), ()))
    prg(buf._buf, global_size=(1,1,1), local_size=(1,1,1), wait=True)
    out = buf.numpy().view(np.int32)
    print("asm", out[0])
    lib2 = HIPCompiler(dev.arch).compile('extern "C" __attribute__((global)) void k(int* a) { a[0] = 9; }')
    assert lib2[:4] == b"\\x7fELF"
    prg2 = dev.runtime(TinyELF(lib2, "k", Target("AMD", arch=dev.arch), ())); prg2(buf._buf, global_size=(1,1,1), local_size=(1,1,1), wait=True)
    print("hip", buf.numpy().view(np.int32)[0])
  """)
  assert r.returncode == 0, r.stderr[-3000:]
  assert r.stdout.strip().splitlines()[-2:] == ["asm 7", "hip 9"]


def test_an_spx_mi300x_of_8_xccs_runs_tinygrads_aql_path():
  # tinygrad 0.14 switches to AQL queues when num_xcc > 1 (ops_amd.py: AMD_AQL defaults to xccs > 1).
  r = tg14("""
    from tinygrad import Device, Tensor
    d = Device["AMD"]
    props = d.iface.props
    print("XCC", d.xccs, d.is_aql, props["simd_count"] // props["simd_per_cu"], props["array_count"])
    print("SUM", (Tensor.arange(1000) * 3).sum().item(), (Tensor.ones(64, 64) @ Tensor.ones(64, 64)).sum().item())
  """, target="gfx942", xcc=8)
  assert r.returncode == 0, r.stderr[-3000:]
  assert "XCC 8 1 304 32" in r.stdout, r.stdout
  assert "SUM 1498500 262144.0" in r.stdout, r.stdout


def test_xcc_counts_a_target_has_no_partition_for_are_refused_with_what_to_pass():
  r = tg14("print('ran')", target="gfx1100", xcc=8)
  assert r.returncode != 0 and "ran" not in r.stdout
  assert "gfx1100 has one XCC" in r.stderr and "--target gfx942 --xcc 8" in r.stderr, r.stderr
  r = tg14("print('ran')", target="gfx942", xcc=3)
  assert r.returncode != 0 and "1, 2, 4 or 8 XCCs" in r.stderr, r.stderr
  s = SimKfd(target="gfx942", client="any", xcc=4)
  assert "num_xcc 4" in s.read_file("/sys/devices/virtual/kfd/kfd/topology/nodes/1/properties").decode()
  with pytest.raises(Exception) as e: SimKfd(target="gfx90a", client="any", xcc=2)
  assert "gfx90a has one XCC, not 2" in str(e.value)
