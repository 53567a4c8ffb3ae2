float cnd(float d) {
  const float A1 = 0.319381530f, A2 = -0.356563782f, A3 = 1.781477937f, A4 = -1.821255978f, A5 = 1.330274429f;
  float K = 1.0f / (1.0f + 0.2316419f * fabs(d));
  float c = 0.39894228040143267794f * exp(-0.5f * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));
  return d > 0 ? 1.0f - c : c;
}
__kernel void blackscholes(__global float *call, __global float *put, __global const float *S, __global const float *X, __global const float *T, float R, float V) {
  uint i = get_global_id(0);
  float s = S[i], x = X[i], t = T[i], sq = sqrt(t);
  float d1 = (log(s / x) + (R + 0.5f * V * V) * t) / (V * sq), d2 = d1 - V * sq;
  float e = exp(-R * t);
  call[i] = s * cnd(d1) - x * e * cnd(d2);
  put[i] = x * e * (1.0f - cnd(d2)) - s * (1.0f - cnd(d1));
}
