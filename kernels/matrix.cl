// matrix: the matrix cores through the compiler's builtins, one tile per wave: MFMA on
// gfx90a/gfx942 (v_mfma_f32_16x16x16f16, v_mfma_f32_32x32x8f16, v_mfma_f32_16x16x4f32) and
// WMMA on gfx11/gfx12 (v_wmma_f32_16x16x16_f16 and _bf16, wave32). Each lane loads its part of
// A, B and C from row-major matrices in the register layout the ISA documents (AMD's matrix
// instruction calculator for CDNA; RDNA3/RDNA4 ISA "WMMA"), and stores D the same way.
// sim/tests/isa_matrix.rs checks D = A x B + C. Kernarg layout: kernels/README.md.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#define LID0 __builtin_amdgcn_workitem_id_x()
typedef half v4h __attribute__((ext_vector_type(4)));
typedef half v8h __attribute__((ext_vector_type(8)));
typedef half v16h __attribute__((ext_vector_type(16)));
typedef short v8s __attribute__((ext_vector_type(8)));
typedef short v16s __attribute__((ext_vector_type(16)));
typedef float v4f __attribute__((ext_vector_type(4)));
typedef float v8f __attribute__((ext_vector_type(8)));
typedef float v16f __attribute__((ext_vector_type(16)));
// a: f16 (or bf16 bits) M x K row-major, b: K x N row-major, c: f32 M x N; all per tile t.
// gfx9: t 0 is 16x16x16 f16, t 1 is 32x32x8 f16 (c, d 32 x 32), t 2 is 16x16x4 f32 (a, b f32).
// gfx11/gfx12: wave w (of 2) does tile w: 16x16x16, f16 (w 0) or bf16 (w 1).
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void mma(__global const ushort *a, __global const ushort *b, __global float *c, __global const float *af) {
  uint l = LID0;
#if defined(__gfx90a__) || defined(__gfx942__)
  {
    // 16x16x16: lane l holds A[l % 16][4 (l / 16) + j], B[4 (l / 16) + j][l % 16];
    // D[4 (l / 16) + j][l % 16].
    v4h av, bv; v4f cv;
    for (int j = 0; j < 4; j++) {
      av[j] = as_half(a[(l % 16) * 16 + 4 * (l / 16) + j]);
      bv[j] = as_half(b[(4 * (l / 16) + j) * 16 + l % 16]);
      cv[j] = c[(4 * (l / 16) + j) * 16 + l % 16];
    }
    cv = __builtin_amdgcn_mfma_f32_16x16x16f16(av, bv, cv, 0, 0, 0);
    for (int j = 0; j < 4; j++) c[(4 * (l / 16) + j) * 16 + l % 16] = cv[j];
  }
  {
    // 32x32x8: A[l % 32][4 (l / 32) + j], B[4 (l / 32) + j][l % 32];
    // D[8 (j / 4) + 4 (l / 32) + j % 4][l % 32].
    __global const ushort *a1 = a + 256, *b1 = b + 256;
    __global float *c1 = c + 256;
    v4h av, bv; v16f cv;
    for (int j = 0; j < 4; j++) {
      av[j] = as_half(a1[(l % 32) * 8 + 4 * (l / 32) + j]);
      bv[j] = as_half(b1[(4 * (l / 32) + j) * 32 + l % 32]);
    }
    for (int j = 0; j < 16; j++) cv[j] = c1[(8 * (j / 4) + 4 * (l / 32) + j % 4) * 32 + l % 32];
    cv = __builtin_amdgcn_mfma_f32_32x32x8f16(av, bv, cv, 0, 0, 0);
    for (int j = 0; j < 16; j++) c1[(8 * (j / 4) + 4 * (l / 32) + j % 4) * 32 + l % 32] = cv[j];
  }
  {
    // 16x16x4 f32: A[l % 16][l / 16], B[l / 16][l % 16]; D as 16x16x16.
    __global const float *a2 = af, *b2 = af + 64;
    __global float *c2 = c + 256 + 1024;
    v4f cv;
    for (int j = 0; j < 4; j++) cv[j] = c2[(4 * (l / 16) + j) * 16 + l % 16];
    cv = __builtin_amdgcn_mfma_f32_16x16x4f32(a2[(l % 16) * 4 + l / 16], b2[(l / 16) * 16 + l % 16], cv, 0, 0, 0);
    for (int j = 0; j < 4; j++) c2[(4 * (l / 16) + j) * 16 + l % 16] = cv[j];
  }
#else
  uint w = l / 32, q = l % 32;
  __global const ushort *at = a + 256 * w, *bt = b + 256 * w;
  __global float *ct = c + 256 * w;
#if defined(__gfx1100__)
  // Lane q holds A[q % 16][k] and B[k][q % 16] for every k (lanes 16..31 repeat 0..15);
  // D[2 j + q / 16][q % 16].
  v16s av, bv; v8f cv;
  for (int k = 0; k < 16; k++) {
    av[k] = at[(q % 16) * 16 + k];
    bv[k] = bt[k * 16 + q % 16];
  }
  for (int j = 0; j < 8; j++) cv[j] = ct[(2 * j + q / 16) * 16 + q % 16];
  if (w == 0)
    cv = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(as_half16(av), as_half16(bv), cv);
  else
    cv = __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32(av, bv, cv);
  for (int j = 0; j < 8; j++) ct[(2 * j + q / 16) * 16 + q % 16] = cv[j];
#else
  // gfx12 (RDNA4 ISA, WMMA; the calculator's InstCalcGfx12): half j of lane q holds
  // A[q % 16][k] and B[k][q % 16] for k = 8 (j / 4) + 4 (q / 16) + j % 4 (lanes 0..15 hold
  // k 0..3 and 8..11, lanes 16..31 k 4..7 and 12..15); D[8 (q / 16) + j][q % 16].
  v8s av, bv; v8f cv;
  for (int j = 0; j < 8; j++) {
    int k = 8 * (j / 4) + 4 * (q / 16) + j % 4;
    av[j] = at[(q % 16) * 16 + k];
    bv[j] = bt[k * 16 + q % 16];
    cv[j] = ct[(8 * (q / 16) + j) * 16 + q % 16];
  }
  if (w == 0)
    cv = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(as_half8(av), as_half8(bv), cv);
  else
    cv = __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32_gfx12(av, bv, cv);
  for (int j = 0; j < 8; j++) ct[(8 * (q / 16) + j) * 16 + q % 16] = cv[j];
#endif
#endif
}
