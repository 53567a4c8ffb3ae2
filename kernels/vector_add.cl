// vector_add: c[i] = a[i] + b[i] (u32, wrapping) for i < n.
// Work-group size is fixed at 64 (reqd_work_group_size); launch ceil(n / 64) groups.
// Kernargs (28 bytes, no hidden arguments): see README.md.
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void vector_add(__global const uint *a, __global const uint *b, __global uint *c, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 64u + __builtin_amdgcn_workitem_id_x();
  if (i < n) c[i] = a[i] + b[i];
}
