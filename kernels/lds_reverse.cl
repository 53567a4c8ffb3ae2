// lds_reverse: reverses each block of 64 u32 in place, through LDS (256 bytes of group
// segment). Work-group size is fixed at 64; launch len / 64 groups (len a multiple of 64).
// Kernargs (8 bytes, no hidden arguments): see README.md.
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void lds_reverse(__global uint *buf) {
  __local uint tmp[64];
  uint lid = __builtin_amdgcn_workitem_id_x();
  uint base = __builtin_amdgcn_workgroup_id_x() * 64u;
  tmp[lid] = buf[base + lid];
  // barrier(CLK_LOCAL_MEM_FENCE) without the device library: fence, s_barrier, fence.
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  buf[base + lid] = tmp[63u - lid];
}
