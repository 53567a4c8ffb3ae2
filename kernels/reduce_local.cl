// reduce_local: the usual OpenCL work-group reduction, with its scratch array passed as a
// `__local float*` kernel argument (metadata value kind `dynamic_shared_pointer`: the host
// gives its size in bytes, the runtime its LDS address). Kernargs: see README.md.
//
// reduce_sum: out[group] = sum of in[group * block .. group * block + block) (elements at or
// past n count as 0). Any block size that is a power of two, up to 256; scratch must hold
// block floats.
__kernel void reduce_sum(__global const float *in, __global float *out,
                         __local float *scratch, uint n) {
  uint lid = __builtin_amdgcn_workitem_id_x();
  uint size = __builtin_amdgcn_workgroup_size_x();
  uint gid = __builtin_amdgcn_workgroup_id_x() * size + lid;
  scratch[lid] = gid < n ? in[gid] : 0.0f;
  for (uint s = size / 2; s > 0; s >>= 1) {
    // barrier(CLK_LOCAL_MEM_FENCE) without the device library: fence, s_barrier, fence.
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    if (lid < s)
      scratch[lid] += scratch[lid + s];
  }
  if (lid == 0)
    out[__builtin_amdgcn_workgroup_id_x()] = scratch[0];
}

// local_layout: where the runtime put two `__local` arguments beside the kernel's own static
// LDS. out[0..3] = the LDS addresses of a (1-byte aligned), b (16-byte aligned: float4) and the
// static array; then each is written and read back through its pointer, so overlapping
// placements show up as wrong values in out[3..6].
__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void local_layout(__global uint *out, __local uchar *a, __local float4 *b) {
  __local uint fixed[5];
  out[0] = (uint)(ulong)a;
  out[1] = (uint)(ulong)b;
  out[2] = (uint)(ulong)fixed;
  for (int i = 0; i < 5; i++)
    fixed[i] = 100u + i;
  for (int i = 0; i < 3; i++)
    a[i] = (uchar)(7 + i);
  b[0] = (float4)(1.0f, 2.0f, 3.0f, 4.0f);
  out[3] = fixed[0] + fixed[4];
  out[4] = a[0] + a[1] + a[2];
  out[5] = (uint)(b[0].x + b[0].y + b[0].z + b[0].w);
}

// reduce_affine: reduce_sum with a vector argument: out[group] = sum * ab.x + ab.y.
__kernel void reduce_affine(__global const float *in, __global float *out,
                            __local float *scratch, float2 ab, uint n) {
  uint lid = __builtin_amdgcn_workitem_id_x();
  uint size = __builtin_amdgcn_workgroup_size_x();
  uint gid = __builtin_amdgcn_workgroup_id_x() * size + lid;
  scratch[lid] = gid < n ? in[gid] : 0.0f;
  for (uint s = size / 2; s > 0; s >>= 1) {
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    if (lid < s)
      scratch[lid] += scratch[lid + s];
  }
  if (lid == 0)
    out[__builtin_amdgcn_workgroup_id_x()] = scratch[0] * ab.x + ab.y;
}
