"""The mock-GPU hook on a multi-XCC node: what it lends the simulated kernel for the ioctls whose
answer spans one record per XCC. Needs no tinygrad (a ctypes client, as libhsakmt is)."""
import os
import subprocess
import sys
import textwrap

CLIENT = """
import ctypes, fcntl, os, struct
from hcq.mockgpu import install
install()
def ioc(d, nr, size): return (d << 30) | (size << 16) | (ord("K") << 8) | nr
class WaveState(ctypes.Structure):
  _fields_ = [("ctl_stack_address", ctypes.c_uint64), ("ctl_stack_used_size", ctypes.c_uint32),
              ("save_area_used_size", ctypes.c_uint32), ("queue_id", ctypes.c_uint32), ("pad", ctypes.c_uint32)]
node = "/sys/devices/virtual/kfd/kfd/topology/nodes/1/"
gpu = int(open(node + "gpu_id").read())
props = dict(l.split() for l in open(node + "properties").read().splitlines())
xccs, minor = int(props["num_xcc"]), int(props["drm_render_minor"])
kfd, render = os.open("/dev/kfd", os.O_RDWR), os.open(f"/dev/dri/renderD{minor}", os.O_RDWR)
fcntl.ioctl(kfd, ioc(1, 0x15, 8), struct.pack("<II", render, gpu))  # ACQUIRE_VM
# An idle PM4 queue (percentage 0: the CP fetches nothing); Linux 6.8 looks none of the addresses up.
CTX = 0x100000
class CreateQueue(ctypes.Structure):  # a kfd_ioctl.h structure, as ctypes clients pass it
  _fields_ = [("raw", ctypes.c_uint8 * 96)]
q = CreateQueue()
struct.pack_into("<QQQQIIIIII", q, 0, 0x7f0000000000, 0x7f0000001000, 0x7f0000001040, 0, 4096, gpu, 0, 0, 7, 0)
struct.pack_into("<QQQII", q, 56, 0x7f0000002000, 4096, 0x7f0000010000, CTX, 0x1000)
fcntl.ioctl(kfd, ioc(3, 0x02, 96), q)
qid = struct.unpack_from("<I", q, 52)[0]
# The control stacks of every XCC, CTX bytes apart (the client's save area), plus a guard past the last.
area = (ctypes.c_uint32 * ((xccs * CTX) // 4 + 4))()
ctypes.memset(area, 0xCC, ctypes.sizeof(area))
ws = WaveState(ctypes.addressof(area), 7, 7, qid)
fcntl.ioctl(kfd, ioc(3, 0x1B, 24), ws)
assert (ws.ctl_stack_used_size, ws.save_area_used_size) == (0, 0)
for k in range(xccs):
  at = k * CTX // 4
  assert list(area[at:at + 5]) == [0x1000, 0, 0x1000, 0, 0xCCCCCCCC], (k, [hex(x) for x in area[at:at + 5]])
assert list(area[xccs * CTX // 4:]) == [0xCCCCCCCC] * 4
print("headers", xccs)
"""


def run_client(xcc: int):
  e = dict(os.environ, HCQ_SIM_CLIENT="any", HCQ_SIM_KERNEL="6.8", HCQ_SIM_TARGET="gfx942", HCQ_SIM_XCC=str(xcc))
  return subprocess.run([sys.executable, "-c", textwrap.dedent(CLIENT)], capture_output=True, text=True, timeout=120, env=e)


def test_get_queue_wave_state_writes_a_header_per_xcc_of_an_spx_mi300x():
  # KFD (kfd_mqd_manager_v9.c get_wave_state_v9_4_3) writes XCC k's header at ctl_stack_address +
  # k * ctx_save_restore_size: the hook lends all 8 (with one header lent it was EFAULT).
  r = run_client(8)
  assert r.returncode == 0, r.stderr[-3000:]
  assert r.stdout.strip().endswith("headers 8"), r.stdout


def test_get_queue_wave_state_on_one_xcc_writes_one_header():
  r = run_client(1)
  assert r.returncode == 0, r.stderr[-3000:]
  assert r.stdout.strip().endswith("headers 1"), r.stdout
