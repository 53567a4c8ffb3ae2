// scratch_sum: out[i] = sum over j < 16 of (j * k), computed through a volatile private array,
// so the kernel has a private (scratch) segment. Work-group size is fixed at 64.
// Kernargs (12 bytes, no hidden arguments): see README.md.
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void scratch_sum(__global uint *out, uint k) {
  volatile uint t[16];
  for (uint j = 0; j < 16u; j++) t[j] = j * k;
  uint s = 0;
  for (uint j = 0; j < 16u; j++) s += t[(j * 7u) & 15u];
  out[__builtin_amdgcn_workgroup_id_x() * 64u + __builtin_amdgcn_workitem_id_x()] = s;
}
