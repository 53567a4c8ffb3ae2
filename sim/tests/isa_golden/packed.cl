// Packed f16 math (VOP3P v_pk_*) and LDS atomics beyond add (inc/dec wrapping, signed and
// unsigned min/max, and/or/xor, compare-exchange, f32 add, all returning the old value),
// compiled by scripts/isa-golden.sh with clang-19 for every target; sim/tests/isa_packed.rs
// runs them and compares every result, and their llvm-objdump-19 text is a decoder input.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
__kernel void half2_math(__global half2 *a, __global const half2 *b, uint n) {
  uint i = (__builtin_amdgcn_workgroup_id_x() * 64u + __builtin_amdgcn_workitem_id_x());
  if (i < n) {
    half2 x = a[i], y = b[i];
    a[i] = fma(x, y, (half2)(1.5h, -0.25h)) + fmax(x, y) * (half2)(0.5h, 2.0h) - y.yx;
  }
}
__kernel void lds_atomics(__global uint *out, __global const uint *in) {
  __local uint c[7 * 64];
  __local float f[64];
  uint l = __builtin_amdgcn_workitem_id_x();
  uint v = in[__builtin_amdgcn_workgroup_id_x() * 64u + l];
  for (uint k = 0; k < 7; k++) c[k * 64 + l] = v + k;
  f[l] = (float)l * 0.5f;
  uint r0 = __builtin_amdgcn_atomic_inc32(&c[l], 40u, __ATOMIC_RELAXED, "workgroup");
  uint r1 = __builtin_amdgcn_atomic_dec32(&c[64 + l], 20u, __ATOMIC_RELAXED, "workgroup");
  uint r2 = __atomic_fetch_min(&c[128 + l], 50u, __ATOMIC_RELAXED);
  int r3 = __atomic_fetch_max((__local int *)&c[192 + l], 10 - (int)l, __ATOMIC_RELAXED);
  uint r4 = __atomic_fetch_and(&c[256 + l], 0xf0f0u, __ATOMIC_RELAXED);
  uint r5 = __atomic_fetch_xor(&c[320 + l], 0x5555u, __ATOMIC_RELAXED);
  uint e = v + 6 - (l & 1);
  __atomic_compare_exchange_n(&c[384 + l], &e, l * 3, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  float r7 = __atomic_fetch_add(&f[l], 0.25f, __ATOMIC_RELAXED);
  __global uint *o = out + l * 16;
  o[0] = r0; o[1] = r1; o[2] = r2; o[3] = (uint)r3; o[4] = r4; o[5] = r5; o[6] = e;
  o[7] = __builtin_bit_cast(uint, r7);
  for (uint k = 0; k < 7; k++) o[8 + k] = c[k * 64 + l];
  o[15] = __builtin_bit_cast(uint, f[l]);
}
