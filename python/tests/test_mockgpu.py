"""tinygrad 0.9.1's own AMD runtime (its unmodified ops_amd.py) on hcq-sim through the mock-GPU hook
(`python -m hcq.mockgpu`), and the `SimKfd` binding beneath it. Each tinygrad run is its own
process, as the hook patches the interpreter."""
import os
import struct
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("numpy")
pytest.importorskip("tinygrad")
if __import__("importlib.metadata").metadata.version("tinygrad") != "0.9.1":
  pytest.skip("tinygrad 0.9.1's hook: another tinygrad is installed (test_mockgpu14.py covers 0.14)", allow_module_level=True)

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


def _ioc(dir_: int, nr: int, size: int) -> int:
  return (dir_ << 30) | (size << 16) | (ord("K") << 8) | nr


def test_simkfd_binding_lends_the_tile_arrays():
  s = SimKfd(client="any", kernel="6.8")
  kfd = s.open("/dev/kfd")
  tiles, macros = bytearray(b"\xAA" * 4 * 40), bytearray(b"\xBB" * 4 * 20)
  arg = bytearray(40)
  struct.pack_into("<QQIII", arg, 0, 0, 0, 40, 20, s.gpu_ids[0])
  s.ioctl(kfd, _ioc(3, 0x12, 40), arg, (tiles, macros))
  assert struct.unpack_from("<IIIIII", arg, 16) == (32, 16, s.gpu_ids[0], 0x545, 0, 0)
  assert tiles[:128] == bytes(128) and tiles[128:] == b"\xAA" * 32 and macros[:64] == bytes(64)
  struct.pack_into("<II", arg, 16, 41, 0)  # more tile modes asked than lent: the copy faults
  with pytest.raises(OSError) as e: s.ioctl(kfd, _ioc(3, 0x12, 40), arg, (bytearray(8), bytearray()))
  assert e.value.errno == 14 and struct.unpack_from("<I", arg, 16)[0] == 0
  # GET_DMABUF_INFO {size, metadata_ptr, metadata_size, gpu_id, flags, dmabuf_fd}: the metadata buffer is
  # allocated first (past 4 MiB: ENOMEM), then the fd is looked up (the simulator has no DMA-bufs).
  info, meta = bytearray(32), bytearray(16)
  struct.pack_into("<QQIIII", info, 0, 0, 0x1000, 16, 0, 0, 12345)
  with pytest.raises(OSError) as e: s.ioctl(kfd, _ioc(3, 0x1C, 32), info, meta)
  assert e.value.errno == 9 and struct.unpack_from("<Q", info, 8)[0] == 0x1000 and meta == bytes(16)
  struct.pack_into("<I", info, 16, (4 << 20) + 1)
  with pytest.raises(OSError) as e: s.ioctl(kfd, _ioc(3, 0x1C, 32), info)
  assert e.value.errno == 12


def test_a_ctypes_client_sets_a_cu_mask_and_reads_the_tile_config_through_the_hook():
  # A libhsakmt-style client: kfd_ioctl.h structures whose pointer fields hold its own ctypes arrays.
  r = subprocess.run([sys.executable, "-c", textwrap.dedent("""
    import ctypes, errno, fcntl, os, struct
    from hcq.mockgpu import install
    install()
    def ioc(d, nr, size): return (d << 30) | (size << 16) | (ord("K") << 8) | nr
    class CuMask(ctypes.Structure):
      _fields_ = [("queue_id", ctypes.c_uint32), ("num_cu_mask", ctypes.c_uint32), ("cu_mask_ptr", ctypes.c_uint64)]
    class TileConfig(ctypes.Structure):
      _fields_ = [("tile_config_ptr", ctypes.c_uint64), ("macro_tile_config_ptr", ctypes.c_uint64),
                  ("num_tile_configs", ctypes.c_uint32), ("num_macro_tile_configs", ctypes.c_uint32),
                  ("gpu_id", ctypes.c_uint32), ("gb_addr_config", ctypes.c_uint32),
                  ("num_banks", ctypes.c_uint32), ("num_ranks", ctypes.c_uint32)]
    class WaveState(ctypes.Structure):
      _fields_ = [("ctl_stack_address", ctypes.c_uint64), ("ctl_stack_used_size", ctypes.c_uint32),
                  ("save_area_used_size", ctypes.c_uint32), ("queue_id", ctypes.c_uint32), ("pad", ctypes.c_uint32)]
    node = "/sys/devices/virtual/kfd/kfd/topology/nodes/1/"
    gpu = int(open(node + "gpu_id").read())
    minor = int(dict(l.split() for l in open(node + "properties").read().splitlines())["drm_render_minor"])
    kfd, render = os.open("/dev/kfd", os.O_RDWR), os.open(f"/dev/dri/renderD{minor}", os.O_RDWR)

    tiles, macros = (ctypes.c_uint32 * 40)(*[0xAAAAAAAA] * 40), (ctypes.c_uint32 * 20)(*[0xBBBBBBBB] * 20)
    tc = TileConfig(ctypes.addressof(tiles), ctypes.addressof(macros), 40, 20, gpu)
    fcntl.ioctl(kfd, ioc(3, 0x12, 40), tc)
    assert (tc.num_tile_configs, tc.num_macro_tile_configs, tc.gb_addr_config) == (32, 16, 0x545), (tc.num_tile_configs, tc.gb_addr_config)
    assert list(tiles[:32]) == [0] * 32 and list(tiles[32:]) == [0xAAAAAAAA] * 8 and list(macros[:16]) == [0] * 16
    assert tc.tile_config_ptr == ctypes.addressof(tiles), "the caller's pointers are kept"

    fcntl.ioctl(kfd, ioc(1, 0x15, 8), struct.pack("<II", render, gpu))  # ACQUIRE_VM
    # An idle PM4 queue (percentage 0: the CP fetches nothing); Linux 6.8 looks none of the addresses up.
    q = bytearray(96)
    struct.pack_into("<QQQQIIIIII", q, 0, 0x7f0000000000, 0x7f0000001000, 0x7f0000001040, 0, 4096, gpu, 0, 0, 7, 0)
    struct.pack_into("<QQQII", q, 56, 0x7f0000002000, 4096, 0x7f0000010000, 0x100000, 0x1000)
    fcntl.ioctl(kfd, ioc(3, 0x02, 96), q)
    qid = struct.unpack_from("<I", q, 52)[0]

    mask, half = (ctypes.c_uint32 * 2)(0x00000FF0, 0xC0000003), (ctypes.c_uint32 * 2)(0x1, 0)
    fcntl.ioctl(kfd, ioc(1, 0x1A, 16), CuMask(qid, 64, ctypes.addressof(mask)))
    for args, want in (((qid, 64, ctypes.addressof(half)), errno.EINVAL),                          # half a WGP pair
                       ((qid, 40, ctypes.addressof(mask)), errno.EINVAL),                          # not a multiple of 32
                       ((qid + 1, 64, ctypes.addressof(mask)), errno.EFAULT)):                     # no such queue
      try: fcntl.ioctl(kfd, ioc(1, 0x1A, 16), CuMask(*args)); raise AssertionError(args)
      except OSError as e: assert e.errno == want, (args, e)

    area = (ctypes.c_uint32 * 8)(*[0xCCCCCCCC] * 8)
    ws = WaveState(ctypes.addressof(area), 7, 7, qid)
    fcntl.ioctl(kfd, ioc(3, 0x1B, 24), ws)
    assert (ws.ctl_stack_used_size, ws.save_area_used_size) == (0, 0)
    assert list(area) == [0x1000, 0, 0x1000, 0] + [0xCCCCCCCC] * 4, [hex(x) for x in area]
    print("ok")
  """)], capture_output=True, text=True, timeout=120, env=dict(os.environ, HCQ_SIM_CLIENT="any", HCQ_SIM_KERNEL="6.8"))
  assert r.returncode == 0, r.stderr[-3000:]
  assert r.stdout.strip().endswith("ok")
