__kernel void nbody(__global const float4 *pos, __global float4 *acc, uint n, float eps2) {
  uint i = get_global_id(0);
  float4 p = pos[i]; float4 a = (float4)(0.0f);
  for (uint j = 0; j < n; j++) {
    float4 q = pos[j]; float4 r = q - p; r.w = 0.0f;
    float d2 = dot(r, r) + eps2;
    float inv = rsqrt(d2); float s = q.w * inv * inv * inv;
    a += r * s;
  }
  acc[i] = a;
}
