// codegen: code LLVM 19 emits for ordinary kernels beyond the hand-picked fixtures: packed f32
// math on gfx90a/gfx942 (float2 -> v_pk_fma/mul/add_f32), gfx12's three-operand
// minimumNumber/maximumNumber (v_min3/max3/med3_num_f32) and scalar float compares
// (s_cmp_*_f32 on uniform values), and gfx11's loop instruction-prefetch hint
// (s_set_inst_prefetch_distance around a loop). sim/tests/isa_codegen.rs runs each on every
// target against Rust references. Kernarg layouts: kernels/README.md.
#define LID0 __builtin_amdgcn_workitem_id_x()
#define GRP0 __builtin_amdgcn_workgroup_id_x()
// o[2i..2i+1] = x * y + (1.5, 2.5); o[128 + 2i..] = fma(x, y, x) + y (x = a[i], y = b[i]).
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void pk_f32(__global const float2 *a, __global const float2 *b, __global float2 *o) {
  uint i = GRP0 * 64 + LID0;
  float2 x = a[i], y = b[i];
  o[i] = x * y + (float2)(1.5f, 2.5f);
  o[i + 64] = __builtin_elementwise_fma(x, y, x) + y;
}
// Per element: min(a0, a1, a2) + max(a0, s, a3), the median of (a0, a1, s), and 3.0 where s < t
// (a uniform compare), else 0.0. Four a values per element.
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void minmax3(__global const float *a, __global float *o, float s, float t) {
  uint i = GRP0 * 64 + LID0;
  float a0 = a[4 * i], a1 = a[4 * i + 1], a2 = a[4 * i + 2], a3 = a[4 * i + 3];
  o[3 * i] = __builtin_fminf(__builtin_fminf(a0, a1), a2) + __builtin_fmaxf(__builtin_fmaxf(a0, s), a3);
  o[3 * i + 1] = __builtin_fmaxf(__builtin_fminf(a0, a1), __builtin_fminf(__builtin_fmaxf(a0, a1), s));
  float c = 0.0f;
  if (s < t) c = 3.0f;
  if (!(s >= t * 2.0f)) c += 0.5f;
  o[3 * i + 2] = c;
}
// A loop of n rounds over a[i + 64k] long enough for gfx11's prefetch hint:
// acc = sqrt(|acc * b2|) + x * 0.5, b2 = b2 * x + acc (all f32, in order).
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void prefetch_loop(__global const float *a, __global float *o, uint n) {
  uint i = GRP0 * 64 + LID0;
  float acc = 0.0f, b2 = 1.0f;
  for (uint k = 0; k < n; k++) {
    float x = a[i + k * 64];
    acc += x * a[k];
    b2 = b2 * x + acc;
    acc = __builtin_sqrtf(__builtin_fabsf(acc * b2)) + x * 0.5f;
  }
  o[i] = acc + b2;
}
