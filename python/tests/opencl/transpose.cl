#define TILE 16
__kernel void transpose(__global float *odata, __global const float *idata, uint width, uint height) {
  __local float tile[TILE][TILE + 1];
  uint bx = get_group_id(0), by = get_group_id(1), tx = get_local_id(0), ty = get_local_id(1);
  uint x = bx * TILE + tx, y = by * TILE + ty;
  if (x < width && y < height) tile[ty][tx] = idata[y * width + x];
  barrier(CLK_LOCAL_MEM_FENCE);
  x = by * TILE + tx; y = bx * TILE + ty;
  if (x < height && y < width) odata[y * height + x] = tile[tx][ty];
}
