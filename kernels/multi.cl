// Several kernels in one code object (f32 and u32), each with work-group size fixed at 64.
// Kernargs (no hidden arguments): see README.md.

// vector_add_f32: c[i] = a[i] + b[i] (f32) for i < n.
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void vector_add_f32(__global const float *a, __global const float *b, __global float *c, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 64u + __builtin_amdgcn_workitem_id_x();
  if (i < n) c[i] = a[i] + b[i];
}

// scale_f32: buf[i] = buf[i] * s for i < n.
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void scale_f32(__global float *buf, float s, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 64u + __builtin_amdgcn_workitem_id_x();
  if (i < n) buf[i] = buf[i] * s;
}

// copy_u32: dst[i] = src[i] for i < n.
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void copy_u32(__global uint *dst, __global const uint *src, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 64u + __builtin_amdgcn_workitem_id_x();
  if (i < n) dst[i] = src[i];
}
