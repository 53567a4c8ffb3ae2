"""Classic OpenCL kernels nobody here tuned for hcq, compiled by clang-19 with Debian's
rocm-device-libs (opencl.bc, ocml, ockl) for all four simulated targets and checked against numpy:
a Blelloch scan and a reduction with `__local` arguments (hcq.Lds), a local-atomic histogram, a
tiled transpose, a local bitonic sort, n-body (rsqrt), Black-Scholes (exp/log/sqrt), an f64
Mandelbrot, 64-bit integer division/mul_hi/rotate and 32-bit built-ins, a cmpxchg float-add
loop, a Sobel filter with saturating conversion, and half-precision arithmetic (python/tests/opencl/).

Skipped without clang-19, ld.lld-19 or rocm-device-libs' opencl.bc.
"""
import math
import pathlib
import shutil
import subprocess
import tempfile

import pytest

np = pytest.importorskip("numpy")

import hcq

TARGETS = ["gfx1100", "gfx90a", "gfx942", "gfx1201"]
SRC = pathlib.Path(__file__).parent / "opencl"


def _libs(arch: str) -> list:
  from hcq.tinygrad import compiler as C
  wave64 = arch.startswith("gfx9")
  names = ["opencl.bc", "ocml.bc", "ockl.bc", "oclc_finite_only_off.bc", "oclc_unsafe_math_off.bc", "oclc_daz_opt_off.bc",
           "oclc_correctly_rounded_sqrt_on.bc", f"oclc_wavefrontsize64_{'on' if wave64 else 'off'}.bc", "oclc_abi_version_500.bc"]
  return [C.device_libs() / n for n in names] + [C.isa_library(arch)]


def _compile(name: str, arch: str) -> bytes:
  from hcq.tinygrad import compiler as C
  if shutil.which("clang-19") is None or shutil.which("ld.lld-19") is None: pytest.skip("clang-19 / lld-19 not installed")
  try: libs = _libs(arch)
  except Exception as e: pytest.skip(f"rocm-device-libs: {e}")
  if not (C.device_libs() / "opencl.bc").exists(): pytest.skip("rocm-device-libs' opencl.bc not installed")
  with tempfile.TemporaryDirectory(prefix="hcq-ocl-") as td:
    out = pathlib.Path(td) / "k.co"
    f = ["clang-19", "-x", "cl", "-cl-std=CL2.0", "-Xclang", "-finclude-default-header", "-target", "amdgcn-amd-amdhsa", f"-mcpu={arch}",
         "-O3", "-nogpulib", "-mcode-object-version=5", "-fuse-ld=lld", f"--ld-path={shutil.which('ld.lld-19')}",
         "-Wno-unused-command-line-argument"]
    for lib in libs: f += ["-Xclang", "-mlink-builtin-bitcode", "-Xclang", str(lib)]
    r = subprocess.run(f + [str(SRC / f"{name}.cl"), "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out.read_bytes()


_kfds: dict = {}


def _dev(arch: str):
  if arch not in _kfds: _kfds[arch] = hcq.Kfd(target=arch, gpus=1)
  return _kfds[arch].open(0)


def _run(arch: str, src: str, kernel: str, groups, block, args) -> list:
  """Launches `kernel` with `args` (numpy arrays become buffers, copied back after the
  launch; hcq.Lds, ints and floats pass as they are) and returns the arrays' new contents."""
  dev = _dev(arch)
  prog = dev.load(_compile(src, arch), kernel)
  bufs, largs = [], []
  for a in args:
    if isinstance(a, np.ndarray):
      b = dev.alloc(max(a.nbytes, 4))
      dev.copy_in(b, np.ascontiguousarray(a))
      bufs.append((b, a))
      largs.append(b)
    else:
      largs.append(a)
  prog.launch(largs, groups, block, wait=True)
  outs = []
  for b, a in bufs:
    o = np.empty_like(a)
    dev.copy_out(o, b)
    outs.append(o)
  return outs


rng = np.random.default_rng(1)


def _cases():
  x = rng.random(4 * 512).astype(np.float32)
  def scan(o): return np.allclose(o[1], np.concatenate([np.concatenate([[0], np.cumsum(x[i*512:(i+1)*512])[:-1]]) for i in range(4)]), rtol=1e-4, atol=1e-3)
  yield "scan", "scan", (4,), (256,), [x, np.zeros(2048, np.float32), hcq.Lds(2048), 512], scan
  d = rng.integers(0, 256, 100000).astype(np.uint8)
  yield "histo", "histogram256", (8,), (128,), [d, np.zeros(256, np.uint32), 100000], lambda o: (o[1] == np.bincount(d, minlength=256)).all()
  m = rng.random((48, 80)).astype(np.float32)
  yield "transpose", "transpose", (5, 3), (16, 16), [np.zeros(3840, np.float32), m.ravel(), 80, 48], lambda o: np.array_equal(o[0].reshape(80, 48), m.T)
  kk = rng.integers(0, 2**32, 2048, dtype=np.uint64).astype(np.uint32)
  yield "bitonic", "bitonic_local", (4,), (256,), [kk], lambda o: np.array_equal(o[0], np.concatenate([np.sort(kk[i*512:(i+1)*512]) for i in range(4)]))
  p = rng.random((256, 4)).astype(np.float32)
  def nbody(o):
    r = p[None, :, :3] - p[:, None, :3]; d2 = (r * r).sum(-1) + 0.01; s = p[None, :, 3] / d2 ** 1.5
    return np.allclose(o[1].reshape(256, 4)[:, :3], (r * s[..., None]).sum(1), rtol=1e-3, atol=1e-3)
  yield "nbody", "nbody", (4,), (64,), [p.ravel(), np.zeros(1024, np.float32), 256, 0.01], nbody
  S = (rng.random(1024) * 90 + 10).astype(np.float32); X = (rng.random(1024) * 90 + 10).astype(np.float32); T = (rng.random(1024) * 9 + 1).astype(np.float32)
  def bs(o):
    R, V = 0.02, 0.3; sq = np.sqrt(T.astype(np.float64)); d1 = (np.log(S / X) + (R + 0.5 * V * V) * T) / (V * sq); d2 = d1 - V * sq
    N = np.vectorize(lambda z: 0.5 * (1 + math.erf(z / 2 ** 0.5))); e = np.exp(-R * T)
    return np.allclose(o[0], S * N(d1) - X * e * N(d2), atol=0.1) and np.allclose(o[1], X * e * N(-d2) - S * N(-d1), atol=0.1)
  yield "blackscholes", "blackscholes", (16,), (64,), [np.zeros(1024, np.float32), np.zeros(1024, np.float32), S, X, T, 0.02, 0.3], bs
  def mandel(o):
    w, h, mi = 64, 32, 200; want = np.zeros(w * h, np.uint32)
    for yy in range(h):
      for xx in range(w):
        cr, ci = -2.0 + 3.0 * xx / w, -1.5 + 3.0 * yy / h; zr = zi = 0.0; it = 0
        while zr * zr + zi * zi < 4.0 and it < mi: zr, zi = zr * zr - zi * zi + cr, 2 * zr * zi + ci; it += 1
        want[yy * w + xx] = it
    return np.array_equal(o[0], want)
  yield "mandel", "mandelbrot", (8, 4), (8, 8), [np.zeros(2048, np.uint32), 64, 32, 200], mandel
  A = rng.integers(0, 2**63, 256, dtype=np.uint64); B = rng.integers(1, 2**40, 256, dtype=np.uint64)
  # The low words, as ints, differ by less than 2^31: Debian's opencl.bc (rocm-device-libs
  # 5.2.3) computes abs_diff(int, int) as `sub nsw` of max and min, poison (and wrong after
  # LLVM's folds) for larger differences, where OpenCL asks for the exact |x - y|: a library
  # bug outside hcq, which the simulator runs as the hardware would.
  low = lambda n: (rng.integers(-2**30, 2**30, n) & 0xffffffff).astype(np.uint64)
  A = (A & np.uint64(0xffffffff00000000)) | low(256); B = (B & np.uint64(0xffffffff00000000)) | low(256)
  def intmath(o):
    o64, o32 = o[2].reshape(256, 4), o[3].reshape(256, 4)
    s = lambda z: z - 2**32 if z >= 2**31 else z
    for i in range(256):
      x, y = int(A[i]), int(B[i]) | 1
      if [int(v) for v in o64[i]] != [x // y, x % y, (x * y) >> 64, ((x << (i % 64)) | (x >> ((64 - i % 64) % 64))) & (2**64 - 1)]: return False
      u, v = x & 0xffffffff, y & 0xffffffff
      clz, ctz = 32 - v.bit_length(), ((u | 0x80000000) & -(u | 0x80000000)).bit_length() - 1
      q = abs(s(u)) // abs(s(v | 1)) * (1 if (s(u) >= 0) == (s(v | 1) >= 0) else -1)
      want = [(bin(u).count("1") + clz * 100 + ctz * 10000) & 0xffffffff, ((u & 0xffffff) * (v & 0xffffff) + 7) & 0xffffffff, q & 0xffffffff,
              ((u + v + 1) >> 1) ^ abs(s(u) - s(v))]
      if [int(z) for z in o32[i]] != want: return False
    return True
  yield "intmath", "intmath", (4,), (64,), [A, B, np.zeros(1024, np.uint64), np.zeros(1024, np.uint32)], intmath
  xs = rng.integers(-8, 8, 4096).astype(np.float32)
  yield "atomicf", "atomicf", (16,), (256,), [np.zeros(4, np.float32), xs], lambda o: np.allclose(o[0], xs.reshape(-1, 4).sum(0))
  img = rng.integers(0, 256, (40, 72)).astype(np.uint8)
  def sobel(o):
    want = np.zeros_like(img); f = img.astype(np.float32)
    kx, ky = np.array([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]), np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]])
    for yy in range(1, 39):
      for xx in range(1, 71):
        w = f[yy-1:yy+2, xx-1:xx+2]; gx, gy = (w * kx).sum(), (w * ky).sum()
        want[yy, xx] = min(255, max(0, round(float(np.sqrt(gx * gx + gy * gy)) / 2)))
    return np.abs(o[1].reshape(40, 72).astype(int) - want.astype(int)).max() <= 1
  yield "sobel", "sobel", (9, 5), (8, 8), [img.ravel(), np.zeros(2880, np.uint8), 72, 40], sobel
  r = rng.random(100000).astype(np.float32)
  yield "reduce", "reduce", (32,), (128,), [r, np.zeros(32, np.float32), hcq.Lds(512), 100000], lambda o: abs(float(o[1].sum()) - float(r.sum())) < 1e-2
  ha = (rng.random(256) * 4 - 2).astype(np.float16); hb = (rng.random(256) * 4 - 2).astype(np.float16)
  def half(o):
    h3 = o[2].reshape(256, 3)
    return (np.allclose(h3[:, 0], ha * hb + np.float16(1.5), atol=2e-2) and np.array_equal(h3[:, 1], np.fmax(ha, hb))
            and np.allclose(h3[:, 2], np.sqrt(np.abs(ha).astype(np.float32)).astype(np.float16), atol=1e-3)
            and np.allclose(o[3], ha.astype(np.float32) + hb.astype(np.float32)))
  yield "half", "halfk", (4,), (64,), [ha, hb, np.zeros(768, np.float16), np.zeros(256, np.float32)], half


CASES = list(_cases())


@pytest.mark.parametrize("arch", TARGETS)
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_classic_kernel(case, arch):
  src, kernel, groups, block, args, check = case
  outs = _run(arch, src, kernel, groups, block, args)
  assert check(outs), f"{src} on {arch}: wrong result"
