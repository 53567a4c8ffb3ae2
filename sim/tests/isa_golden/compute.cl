// Ordinary compute kernels (f32/f64/f16 math and division, integer division, atomics, an LDS
// reduction with barriers, a 2-D grid) compiled by scripts/isa-golden.sh with clang-19 for every
// target; their llvm-objdump-19 text is the decoder test's third input.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void fdiv(__global float *a, __global const float *b, uint n) {
  uint i = (__builtin_amdgcn_workgroup_id_x() * 64u + __builtin_amdgcn_workitem_id_x());
  if (i < n) a[i] = a[i] / b[i] + __builtin_sqrtf(b[i]) + __builtin_fmaf(a[i], b[i], 1.0f);
}
__kernel void idiv(__global uint *a, __global const int *b, uint n) {
  uint i = (__builtin_amdgcn_workgroup_id_x() * 64u + __builtin_amdgcn_workitem_id_x());
  if (i < n) a[i] = a[i] / (uint)(b[i] | 1) + (uint)(b[i] / 7) + a[i] % 13u;
}
__kernel void half_math(__global half *a, __global const half *b, uint n) {
  uint i = (__builtin_amdgcn_workgroup_id_x() * 64u + __builtin_amdgcn_workitem_id_x());
  if (i < n) a[i] = a[i] * b[i] + (half)1.5f;
}
__kernel void dbl(__global double *a, __global const double *b, uint n) {
  uint i = (__builtin_amdgcn_workgroup_id_x() * 64u + __builtin_amdgcn_workitem_id_x());
  if (i < n) a[i] = a[i] * b[i] + a[i] / b[i];
}
__kernel void atom(__global uint *c, __global const uint *v, uint n) {
  uint i = (__builtin_amdgcn_workgroup_id_x() * 64u + __builtin_amdgcn_workitem_id_x());
  if (i < n) { __atomic_fetch_add(c, v[i], __ATOMIC_RELAXED); __atomic_fetch_max(c + 1, v[i], __ATOMIC_RELAXED); uint e = 0; __atomic_compare_exchange_n(c + 2, &e, v[i], 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED); }
}
__kernel void reduce(__global uint *out, __global const uint *in) {
  __local uint s[256];
  uint l = __builtin_amdgcn_workitem_id_x();
  s[l] = in[(__builtin_amdgcn_workgroup_id_x() * 64u + __builtin_amdgcn_workitem_id_x())];
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup"); __builtin_amdgcn_s_barrier(); __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  for (uint k = 256u / 2; k > 0; k >>= 1) {
    if (l < k) s[l] += s[l + k];
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup"); __builtin_amdgcn_s_barrier(); __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  }
  if (l == 0) __atomic_fetch_add(out, s[0], __ATOMIC_RELAXED);
}
__kernel void grid2d(__global float *o, uint w) {
  uint x = (__builtin_amdgcn_workgroup_id_x() * 64u + __builtin_amdgcn_workitem_id_x()), y = (__builtin_amdgcn_workgroup_id_y() * 4u + __builtin_amdgcn_workitem_id_y());
  o[y * w + x] = (float)x * 0.5f + (float)y;
}
