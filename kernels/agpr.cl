// agpr_mix: for i < n, out[i] = a mix of in[i] and k (README.md gives the formula). On gfx90a and
// gfx942 the input arrives in an AGPR (global_load with the ACC bit), intermediate values sit in
// AGPRs (v_accvgpr_write/mov/read, an LDS store from an AGPR) while ArchVGPRs hold others, and
// the result leaves from an AGPR (global_store with the ACC bit): a launch that does not program
// COMPUTE_PGM_RSRC3.ACCUM_OFFSET puts the AGPRs over live ArchVGPRs. gfx11/gfx12 compute the
// same in plain C. Work-group size is fixed at 64. Kernargs (24 bytes, no hidden arguments).
#if defined(__gfx90a__) || defined(__gfx942__)
#define HAS_AGPRS 1
#endif

__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void agpr_mix(__global uint *out, __global const uint *in, uint k, uint n) {
  __local uint tmp[64];
  uint lid = __builtin_amdgcn_workitem_id_x();
  uint i = __builtin_amdgcn_workgroup_id_x() * 64u + lid;
#ifdef HAS_AGPRS
  uint a0, x;
  if (i < n)
    __asm__ volatile("global_load_dword %0, %1, off\n\ts_waitcnt vmcnt(0)"
                     : "=a"(a0) : "v"(in + i) : "memory");
  else
    __asm__ volatile("v_accvgpr_write_b32 %0, 0" : "=a"(a0) : : "memory");
  __asm__ volatile("v_accvgpr_read_b32 %0, %1" : "=v"(x) : "a"(a0) : "memory");
#else
  uint x = i < n ? in[i] : 0u;
  uint a0 = x;
#endif
  uint y0 = x * 3u + k, y1 = x ^ 0x9e3779b9u, y2 = (x << 5) | (x >> 27), y3 = x * k;
  uint y4 = x + 0x7f4a7c15u, y5 = (x >> 3) ^ k, y6 = x * 0x85ebca6bu, y7 = x - k;
#ifdef HAS_AGPRS
  uint a1, a2, a3;
  __asm__ volatile("v_accvgpr_write_b32 %0, %1" : "=a"(a1) : "v"(y3 + 1u) : "memory");
  __asm__ volatile("v_accvgpr_write_b32 %0, 7" : "=a"(a2) : : "memory");
  __asm__ volatile("v_accvgpr_mov_b32 %0, %1" : "=a"(a3) : "a"(a1) : "memory");
#else
  uint a1 = y3 + 1u, a2 = 7u, a3 = a1;
#endif
  tmp[lid] = a0;
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  uint nb = tmp[lid ^ 1u];
#ifdef HAS_AGPRS
  uint r0, r2, r3;
  __asm__ volatile("v_accvgpr_read_b32 %0, %1" : "=v"(r0) : "a"(a0) : "memory");
  __asm__ volatile("v_accvgpr_read_b32 %0, %1" : "=v"(r2) : "a"(a2) : "memory");
  __asm__ volatile("v_accvgpr_read_b32 %0, %1" : "=v"(r3) : "a"(a3) : "memory");
#else
  uint r0 = a0, r2 = a2, r3 = a3;
#endif
  uint res = (r0 ^ y0) + (y1 ^ y2) + (y4 ^ y5) + y6 * r2 + r3 * y7 + nb;
  if (i < n) {
#ifdef HAS_AGPRS
    uint ar;
    __asm__ volatile("v_accvgpr_write_b32 %0, %1" : "=a"(ar) : "v"(res) : "memory");
    __asm__ volatile("global_store_dword %0, %1, off" : : "v"(out + i), "a"(ar) : "memory");
#else
    out[i] = res;
#endif
  }
}
