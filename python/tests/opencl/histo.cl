// 256-bin histogram: local atomics then a global merge (AMD APP SDK Histogram style)
__kernel void histogram256(__global const uchar *data, __global uint *bins, uint n) {
  __local uint h[256];
  uint l = get_local_id(0);
  for (uint i = l; i < 256; i += get_local_size(0)) h[i] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint i = get_global_id(0); i < n; i += get_global_size(0)) atomic_inc(&h[data[i]]);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint i = l; i < 256; i += get_local_size(0)) atomic_add(&bins[i], h[i]);
}
