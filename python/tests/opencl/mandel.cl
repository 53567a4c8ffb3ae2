__kernel void mandelbrot(__global uint *out, uint w, uint h, uint maxit) {
  uint x = get_global_id(0), y = get_global_id(1);
  double cr = -2.0 + 3.0 * x / w, ci = -1.5 + 3.0 * y / h, zr = 0, zi = 0; uint it = 0;
  while (zr * zr + zi * zi < 4.0 && it < maxit) { double t = zr * zr - zi * zi + cr; zi = 2 * zr * zi + ci; zr = t; it++; }
  out[y * w + x] = it;
}
