// mathmix: ordinary compute kernels clang-19 compiles to a broad instruction mix (no device
// library, builtins only, no hidden arguments): an LDS-tiled matmul, a reduction with global
// atomics, 32-bit integer math (division, remainders, popcount, clz/ctz, rotates, min/max, 24-bit
// multiplies), f32 math (sqrt, exp2, log2, sin, rounding, min/max, conversions, division), f64
// math (fma, conversions, min/max, division, sqrt), f16 math (fma, mul, v_pack_b32_f16), a 3-D
// grid, 64-bit integer math (multiply, division, remainders, rotates), f16 <-> f32 conversions
// with f16 min/max/fma (v_fma_mix*), byte and short loads/stores through global memory and LDS
// (gfx9 SDWA, 16-bit integer ops), 64-bit atomics with a compare-exchange float add loop, bit
// manipulation (bitfield extract/insert, byte swap and permute, bit reverse, 64-bit clz/ctz/
// popcount), select chains and 64-bit min/max, char4/short2 vectors through LDS, half2 math
// with f16 <-> integer conversions, 64-bit and f32 LDS atomics, cross-lane shuffles (ds_bpermute,
// ds_permute, ds_swizzle, readfirstlane), f64 <-> 64-bit integer and f16 conversions, and LDS
// f32/u32 and global inc/dec/f32 atomics.
// sim/tests/isa_mathmix.rs runs every kernel on every target and checks the results against
// Rust references. Kernarg layouts: kernels/README.md.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#define LID0 __builtin_amdgcn_workitem_id_x()
#define LID1 __builtin_amdgcn_workitem_id_y()
#define GRP0 __builtin_amdgcn_workgroup_id_x()
#define GRP1 __builtin_amdgcn_workgroup_id_y()
#define GRP2 __builtin_amdgcn_workgroup_id_z()
// barrier(CLK_LOCAL_MEM_FENCE) without the device library: fence, s_barrier, fence.
#define BARRIER() do { __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup"); __builtin_amdgcn_s_barrier(); __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup"); } while (0)
#define TILE 8
__kernel __attribute__((reqd_work_group_size(8, 8, 1)))
void matmul(__global const float *a, __global const float *b, __global float *c, uint n) {
  __local float ta[TILE][TILE];
  __local float tb[TILE][TILE];
  uint lx = LID0, ly = LID1;
  uint gx = GRP0 * 8 + lx, gy = GRP1 * 8 + ly;
  float acc = 0.0f;
  for (uint t = 0; t < n / TILE; t++) {
    ta[ly][lx] = a[gy * n + t * TILE + lx];
    tb[ly][lx] = b[(t * TILE + ly) * n + gx];
    BARRIER();
    for (uint k = 0; k < TILE; k++) acc = __builtin_fmaf(ta[ly][k], tb[k][lx], acc);
    BARRIER();
  }
  c[gy * n + gx] = acc;
}

__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void reduce_atomic(__global const int *in, __global int *out, uint n) {
  __local int part[64];
  uint l = LID0;
  uint g = GRP0 * 64 + l;
  part[l] = g < n ? in[g] : 0;
  BARRIER();
  for (uint s = 32; s > 0; s >>= 1) {
    if (l < s) part[l] += part[l + s];
    BARRIER();
  }
  if (l == 0) __atomic_fetch_add(out, part[0], __ATOMIC_RELAXED);
  if (g < n) {
    __atomic_fetch_max(out + 1, in[g], __ATOMIC_RELAXED);
    __atomic_fetch_min(out + 2, in[g], __ATOMIC_RELAXED);
    __atomic_fetch_xor(out + 3, in[g], __ATOMIC_RELAXED);
    __atomic_fetch_add(out + 4, 1, __ATOMIC_RELAXED);
    int old = __atomic_exchange_n(out + 5, (int)g, __ATOMIC_RELAXED);
    (void)old;
  }
}

__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void intmath(__global const int *a, __global int *o) {
  uint i = GRP0 * 64 + LID0;
  int x = a[i];
  int d = (int)i - 5;
  if (d == 0) d = 7;
  o[i * 12 + 0] = x / d;
  o[i * 12 + 1] = x % d;
  o[i * 12 + 2] = (uint)x / (uint)(i + 1);
  o[i * 12 + 3] = (uint)x % (uint)(i + 3);
  o[i * 12 + 4] = (int)(((long)x * 0x12345678L) >> 32);
  o[i * 12 + 5] = __builtin_popcount(x);
  o[i * 12 + 6] = x ? __builtin_clz(x) : 32;
  o[i * 12 + 7] = (int)(((uint)x << (i & 31)) | ((uint)x >> ((32 - i) & 31)));
  o[i * 12 + 8] = (x < 0 ? -x : x) + (x < d ? x : d) + (x > d ? x : d);
  o[i * 12 + 9] = x >> (i & 31);
  o[i * 12 + 10] = (uint)x >> (i & 31);
  o[i * 12 + 11] = (((x << 8) >> 8) * ((d << 8) >> 8) + 3) ^ (x << (i & 7)) ^ (int)__builtin_ctz((uint)x | 0x80000000u);
}

__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void fmath(__global const float *a, __global float *o) {
  uint i = GRP0 * 64 + LID0;
  float x = a[i];
  o[i * 10 + 0] = __builtin_sqrtf(__builtin_fabsf(x));
  o[i * 10 + 1] = __builtin_amdgcn_exp2f(x * 0.25f);
  o[i * 10 + 2] = __builtin_amdgcn_logf(__builtin_fabsf(x) + 1.0f);
  o[i * 10 + 3] = __builtin_amdgcn_sinf(x);
  o[i * 10 + 4] = __builtin_floorf(x) + __builtin_ceilf(x) + __builtin_truncf(x) + __builtin_rintf(x);
  o[i * 10 + 5] = __builtin_fminf(x, 1.5f) * __builtin_fmaxf(x, -2.0f);
  o[i * 10 + 6] = (float)(int)x + (float)(uint)__builtin_fabsf(x);
  o[i * 10 + 7] = 1.0f / x;
  o[i * 10 + 8] = x / 3.0f;
  o[i * 10 + 9] = __builtin_copysignf(__builtin_fabsf(x) * 0.5f, -x) + (x > 1.0f ? 2.0f : -1.0f);
}

__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void dmath(__global const double *a, __global double *o) {
  uint i = GRP0 * 64 + LID0;
  double x = a[i];
  o[i * 6 + 0] = x * x + 1.0;
  o[i * 6 + 1] = __builtin_fma(x, 3.0, -2.0);
  o[i * 6 + 2] = (double)(long)x;
  o[i * 6 + 3] = __builtin_fmin(x, 0.5) + __builtin_fmax(x, -0.5);
  o[i * 6 + 4] = x / 7.0;
  o[i * 6 + 5] = __builtin_sqrt(__builtin_fabs(x));
}

__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void hmath(__global const half *a, __global half *o) {
  uint i = GRP0 * 64 + LID0;
  half x = a[i];
  o[i * 2] = x * (half)2.0f + (half)1.0f;
  o[i * 2 + 1] = x * x;
}

__kernel __attribute__((reqd_work_group_size(4, 4, 2)))
void grid3d(__global uint *o, uint w, uint h) {
  uint x = GRP0 * 4 + LID0, y = GRP1 * 4 + LID1, z = GRP2 * 2 + __builtin_amdgcn_workitem_id_z();
  o[(z * h + y) * w + x] = x | (y << 8) | (z << 16) | (GRP2 << 24);
}

__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void longmath(__global const ulong *a, __global ulong *o) {
  uint i = GRP0 * 64 + LID0;
  ulong x = a[i];
  o[i * 5 + 0] = x * 0x9E3779B97F4A7C15UL;
  o[i * 5 + 1] = x / (ulong)(i + 3);
  o[i * 5 + 2] = x % (ulong)(i + 7);
  o[i * 5 + 3] = (x >> (i & 63)) | (x << ((64 - i) & 63));
  o[i * 5 + 4] = (ulong)((long)x / -((long)i + 2));
}

__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void hconv(__global const half *a, __global const float *b, __global half *o, __global float *of) {
  uint i = GRP0 * 64 + LID0;
  half x = a[i];
  float y = b[i];
  half hy = (half)y;
  o[i * 4 + 0] = __builtin_fmaf16(x, hy, (half)0.5f);
  o[i * 4 + 1] = __builtin_fmaxf16(x, hy) - __builtin_fminf16(x, (half)1.0f);
  o[i * 4 + 2] = x - hy;
  o[i * 4 + 3] = (half)((float)x * y);
  of[i] = (float)x + (float)(hy * (half)3.0f);
}
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void bytes(__global const uchar *a, __global const char *b, __global const ushort *c, __global uchar *o, __global short *os, __global int *oi) {
  __local uchar lb[64];
  __local short ls[64];
  uint i = GRP0 * 64 + LID0, l = LID0;
  uchar x = a[i]; char y = b[i]; ushort z = c[i];
  lb[l] = x ^ (uchar)y;
  ls[l] = (short)z - y;
  BARRIER();
  o[i] = lb[63 - l] + 1;
  os[i] = ls[63 - l] >> 1;
  int m = x > y ? x : y;
  int n = (int)z < m ? (int)z : m;
  oi[i * 2] = (x & 1) ? n : (y < 0 ? -m : m * 3);
  oi[i * 2 + 1] = (int)(((uint)z >> 3) & 0x1f) | ((x & 7) << 10) | ((uint)(uchar)y << 24);
}
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void atom64(__global ulong *acc, __global float *fsum, __global const ulong *v) {
  uint i = GRP0 * 64 + LID0;
  __atomic_fetch_add(acc, v[i], __ATOMIC_RELAXED);
  __atomic_fetch_max(acc + 1, v[i], __ATOMIC_RELAXED);
  float add = (float)(i & 7) * 0.5f;
  uint old = __atomic_load_n((__global uint *)fsum, __ATOMIC_RELAXED);
  while (1) {
    uint nw = __builtin_bit_cast(uint, __builtin_bit_cast(float, old) + add);
    if (__atomic_compare_exchange_n((__global uint *)fsum, &old, nw, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) break;
  }
}

__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void bits(__global const uint *a, __global const uint *b, __global uint *o) {
  uint i = GRP0 * 64 + LID0;
  uint x = a[i], y = b[i];
  o[i * 8 + 0] = (x >> 5) & 0x3ff;
  o[i * 8 + 1] = (x & ~(0xffu << 8)) | ((y & 0xff) << 8);
  o[i * 8 + 2] = __builtin_bswap32(x);
  o[i * 8 + 3] = ((x & 0xff) << 24) | ((y >> 8) & 0xff) | (x & 0xff00) | ((y & 0xff0000));
  o[i * 8 + 4] = __builtin_bitreverse32(x) ^ (uint)__builtin_clzll(((ulong)x << 32) | y | 1);
  o[i * 8 + 5] = (int)(x << 3) >> 11;
  o[i * 8 + 6] = __builtin_popcountll(((ulong)x << 32) | y) + __builtin_ctzll(((ulong)y << 32) | 0x80000000u);
  o[i * 8 + 7] = (uint)(((ulong)x * y) >> 32) + (x & 0xffffff) * (y & 0xffffff);
}
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void sel(__global const int *a, __global const int *b, __global int *o, __global long *ol) {
  uint i = GRP0 * 64 + LID0;
  int x = a[i], y = b[i];
  int r = x > y ? x - y : y - x;
  r = (x & 1) ? r : (y < 0 ? r * 2 : r + 7);
  r = x == y ? 0 : r;
  o[i * 4 + 0] = r;
  o[i * 4 + 1] = x < 0 ? (y < 0 ? 1 : 2) : (y < 0 ? 3 : 4);
  o[i * 4 + 2] = (uint)x < (uint)y ? (uint)x : (uint)y;
  int c = x < 1000 ? x : 1000; c = c > -1000 ? c : -1000; int m = y % 17;
  o[i * 4 + 3] = c + (m < 0 ? -m : m);
  long lx = (long)x * 3, ly = (long)y << 20;
  ol[i * 2] = lx < ly ? lx : ly;
  ol[i * 2 + 1] = (ulong)lx > (ulong)ly ? lx : ly;
}
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void vec8(__global const uchar4 *a, __global const short2 *b, __global uchar4 *o, __global int2 *oi, __global char *oc) {
  __local ushort ls[64];
  uint i = GRP0 * 64 + LID0, l = LID0;
  uchar4 x = a[i];
  short2 y = b[i];
  ls[l] = (ushort)(x.x + x.y * 2) ^ (ushort)y.y;
  BARRIER();
  ushort p = ls[l ^ 1];
  o[i] = (uchar4)(x.w, x.z + 1, x.y >> 1, (uchar)p);
  oi[i] = (int2)(y.x * y.y, (int)p - y.x);
  oc[i] = (char)(y.x >> 3);
}
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void half2m(__global const half2 *a, __global const half *b, __global half2 *o, __global int *oi, __global short *os) {
  uint i = GRP0 * 64 + LID0;
  half2 x = a[i];
  half y = b[i];
  half2 r = x * y + (half2)(1.0h, -1.0h);
  r = __builtin_elementwise_max(r, x);
  o[i] = r;
  oi[i] = (int)x.x + (x.y < y ? 1 : 0) + (int)(uint)__builtin_fabsf16(y);
  os[i] = (short)(x.x * (half)4.0f) + (short)(y > (half)0.0f ? 1 : -1);
  o[i + 128] = (half2)((half)(int)i, (half)((uint)i * 3u));
}
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void latom(__global uint *o, __global ulong *ol) {
  __local ulong lq[4];
  __local float lf[2];
  uint l = LID0;
  if (l < 4) lq[l] = 0;
  if (l < 2) lf[l] = 0.0f;
  BARRIER();
  __atomic_fetch_add(&lq[0], (ulong)l << 33, __ATOMIC_RELAXED);
  __atomic_fetch_max(&lq[1], (ulong)(l * 77) << 20, __ATOMIC_RELAXED);
  __atomic_fetch_or(&lq[2], 1ul << (l % 64), __ATOMIC_RELAXED);
  __atomic_fetch_add(&lf[0], (float)l * 0.25f, __ATOMIC_RELAXED);
  __atomic_fetch_add(&ol[3], 1ul << 40, __ATOMIC_RELAXED);
  __atomic_fetch_min(&ol[4], (ulong)l + 5, __ATOMIC_RELAXED);
  __atomic_fetch_and(&ol[5], ~(1ul << l), __ATOMIC_RELAXED);
  BARRIER();
  if (l == 0) { ol[0] = lq[0]; ol[1] = lq[1]; ol[2] = lq[2]; o[0] = __builtin_bit_cast(uint, lf[0]); }
}

__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void wave(__global const int *a, __global int *o) {
  uint i = GRP0 * 64 + LID0, l = LID0;
  int x = a[i];
  int p = __builtin_amdgcn_ds_bpermute((int)((l ^ 1) * 4), x);
  int q = __builtin_amdgcn_ds_permute((int)(((l + 3) & 31) * 4), x);
  int r = __builtin_amdgcn_readfirstlane(x);
  int s = __builtin_amdgcn_ds_swizzle(x, 0x041f);
  o[i * 4] = p; o[i * 4 + 1] = q; o[i * 4 + 2] = r; o[i * 4 + 3] = s;
}
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void conv(__global const double *a, __global const ulong *b, __global double *o, __global long *ol, __global half *oh) {
  uint i = GRP0 * 64 + LID0;
  double x = a[i]; ulong y = b[i];
  o[i * 3] = (double)y;
  o[i * 3 + 1] = (double)(long)y + (double)(float)x;
  o[i * 3 + 2] = __builtin_floor(x) - __builtin_ceil(x * 0.5) + __builtin_rint(x) + __builtin_trunc(x);
  ol[i * 2] = (long)x;
  ol[i * 2 + 1] = (ulong)__builtin_fabs(x * 1e10);
  oh[i] = (half)x;
  float f = (float)y;
  oh[i + 128] = (half)(f * 1e-15f);
}
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void fatom(__global float *o, __global uint *u) {
  __local float lf[4];
  __local uint lu[4];
  uint l = LID0, i = GRP0 * 64 + l;
  if (l < 4) { lf[l] = 0.0f; lu[l] = 0; }
  BARRIER();
  __atomic_fetch_add(&lf[0], 0.5f, __ATOMIC_RELAXED);
  __atomic_fetch_max(&lu[1], l * 3, __ATOMIC_RELAXED);
  __atomic_fetch_sub(&lu[2], l, __ATOMIC_RELAXED);
  __builtin_amdgcn_atomic_inc32(&u[0], 17u, __ATOMIC_RELAXED, "agent");
  __builtin_amdgcn_atomic_dec32(&u[1], 17u, __ATOMIC_RELAXED, "agent");
  __atomic_fetch_add(&o[1], (float)l, __ATOMIC_RELAXED);
  __atomic_fetch_sub(&u[2], 3u, __ATOMIC_RELAXED);
  BARRIER();
  if (l == 0) { o[0] = lf[0]; u[3] = lu[1]; u[4] = lu[2]; }
}
