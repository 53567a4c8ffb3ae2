// global_id: out[i] = i for i < n, where i = group_id_x * local_size_x + local_id_x and
// local_size_x is read from the hidden argument hidden_group_size_x (what get_local_size(0)
// compiles to under code object v5; __builtin_amdgcn_workgroup_size_x() is the clang builtin
// that reads it without the ROCm device library). No fixed work-group size: any block size up to
// the kernel's max_flat_workgroup_size (256) works, and the kernarg segment carries code object
// v5's hidden arguments after the 12 explicit bytes (kernarg_size 272). A runtime that leaves
// them zero makes every group write the same first elements.
__kernel void global_id(__global uint *out, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x()
         + __builtin_amdgcn_workitem_id_x();
  if (i < n) out[i] = i;
}
