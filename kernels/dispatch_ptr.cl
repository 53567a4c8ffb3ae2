// grid_size: out[i] = the dispatch packet's grid_size_x (work-items), read through the
// dispatch pointer (ENABLE_SGPR_DISPATCH_PTR), for every work-item i < grid_size_x.
// Work-group size is fixed at 64; launch with grid_size_x a multiple of 64.
// Kernargs (8 bytes, no hidden arguments): see README.md.
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void grid_size(__global uint *out) {
  // hsa_kernel_dispatch_packet_t: u32 grid_size_x at byte 12 (dword 3).
  __constant uint *packet = (__constant uint *)__builtin_amdgcn_dispatch_ptr();
  uint n = packet[3];
  uint i = __builtin_amdgcn_workgroup_id_x() * 64u + __builtin_amdgcn_workitem_id_x();
  if (i < n) out[i] = n;
}
