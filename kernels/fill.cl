// fill: buf[i] = value for i < n.
// Work-group size is fixed at 64; launch ceil(n / 64) groups.
// Kernargs (16 bytes, no hidden arguments): see README.md.
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void fill(__global uint *buf, uint value, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 64u + __builtin_amdgcn_workitem_id_x();
  if (i < n) buf[i] = value;
}
