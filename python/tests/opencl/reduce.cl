// two-stage reduction with a __local scratch argument and sub-group shuffles avoided
__kernel void reduce(__global const float *in, __global float *partial, __local float *s, uint n) {
  uint l = get_local_id(0), g = get_global_id(0), ls = get_local_size(0);
  float acc = 0;
  for (uint i = g; i < n; i += get_global_size(0)) acc += in[i];
  s[l] = acc;
  for (uint k = ls / 2; k > 0; k >>= 1) { barrier(CLK_LOCAL_MEM_FENCE); if (l < k) s[l] += s[l + k]; }
  if (l == 0) partial[get_group_id(0)] = s[0];
}
