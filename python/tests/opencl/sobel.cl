__kernel void sobel(__global const uchar *in, __global uchar *out, uint w, uint h) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1) { out[y * w + x] = 0; return; }
  float gx = 0, gy = 0;
  const int kx[9] = {-1,0,1,-2,0,2,-1,0,1}, ky[9] = {-1,-2,-1,0,0,0,1,2,1};
  for (int j = -1; j <= 1; j++) for (int i = -1; i <= 1; i++) {
    float p = convert_float(in[(y + j) * w + x + i]);
    gx += kx[(j+1)*3+i+1] * p; gy += ky[(j+1)*3+i+1] * p;
  }
  out[y * w + x] = convert_uchar_sat(sqrt(gx * gx + gy * gy) / 2.0f);
}
