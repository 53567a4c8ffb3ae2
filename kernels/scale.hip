// scale (HIP, built into a clang offload bundle for every fixture target): x[i] *= s for i < n,
// with i = blockIdx.x * blockDim.x + threadIdx.x spelled with the clang builtins (no HIP
// headers or ROCm device library: -nogpulib -nogpuinc). blockDim.x is the hidden argument
// hidden_group_size_x; HIP's default max_flat_workgroup_size is 1024.
extern "C" __attribute__((global)) void scale(float *x, float s, unsigned n) {
  unsigned i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x()
             + __builtin_amdgcn_workitem_id_x();
  if (i < n) x[i] = x[i] * s;
}
