#pragma OPENCL EXTENSION cl_khr_fp16 : enable
__kernel void halfk(__global const half *a, __global const half *b, __global half *o, __global float *of) {
  uint i = get_global_id(0);
  half x = a[i], y = b[i];
  o[3*i] = x * y + (half)1.5; o[3*i+1] = fmax(x, y); o[3*i+2] = (half)sqrt((float)fabs(x));
  of[i] = vload_half(i, (__global const half*)a) + (float)y;
}
