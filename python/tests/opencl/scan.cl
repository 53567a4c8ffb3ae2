// Blelloch work-efficient exclusive scan of one block in local memory (GPU Gems 3, ch. 39 style)
__kernel void scan(__global const float *in, __global float *out, __local float *tmp, uint n) {
  uint t = get_local_id(0), off = 1, base = get_group_id(0) * n;
  tmp[2*t] = in[base + 2*t]; tmp[2*t+1] = in[base + 2*t+1];
  for (uint d = n >> 1; d > 0; d >>= 1) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t < d) { uint ai = off*(2*t+1)-1, bi = off*(2*t+2)-1; tmp[bi] += tmp[ai]; }
    off *= 2;
  }
  if (t == 0) tmp[n - 1] = 0;
  for (uint d = 1; d < n; d *= 2) {
    off >>= 1; barrier(CLK_LOCAL_MEM_FENCE);
    if (t < d) { uint ai = off*(2*t+1)-1, bi = off*(2*t+2)-1; float x = tmp[ai]; tmp[ai] = tmp[bi]; tmp[bi] += x; }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  out[base + 2*t] = tmp[2*t]; out[base + 2*t+1] = tmp[2*t+1];
}
