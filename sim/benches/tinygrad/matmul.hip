#define INFINITY (__builtin_inff())
#define NAN (__builtin_nanf(""))
typedef long unsigned int size_t;
typedef float float2 __attribute__((ext_vector_type(2)));
static inline __attribute__((device)) float2 make_float2(float x, float y) { return {x, y}; }
typedef float float4 __attribute__((ext_vector_type(4)));
static inline __attribute__((device)) float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
typedef float float8 __attribute__((ext_vector_type(8)));
static inline __attribute__((device)) float8 make_float8(float x, float y, float z, float w, float a, float b, float c, float d) { return {x, y, z, w, a, b, c, d}; }
typedef signed int int4 __attribute__((ext_vector_type(4)));
static inline __attribute__((device)) int4 make_int4(signed int x, signed int y, signed int z, signed int w) { return {x, y, z, w}; }
typedef signed int int2 __attribute__((ext_vector_type(2)));
static inline __attribute__((device)) int2 make_int2(signed int x, signed int y) { return {x, y}; }
extern "C" __attribute__((device)) __attribute__((const)) size_t __ockl_get_local_id(unsigned int);
extern "C" __attribute__((device)) __attribute__((const)) size_t __ockl_get_group_id(unsigned int);
extern "C" __attribute__((device)) __attribute__((const)) size_t __ockl_get_local_size(unsigned int);
extern "C" {
  __attribute__((device)) __attribute__((const)) float __ocml_fmax_f32(float, float);
  __attribute__((device)) __attribute__((pure)) float __ocml_exp2_f32(float);
  __attribute__((device)) __attribute__((pure)) float __ocml_log2_f32(float);
  __attribute__((device)) __attribute__((const)) float __ocml_sqrt_f32(float);
  __attribute__((device)) float __ocml_sin_f32(float);
  __attribute__((device)) __attribute__((const)) double __ocml_fmax_f64(double, double);
  __attribute__((device)) __attribute__((pure)) double __ocml_exp2_f64(double);
  __attribute__((device)) __attribute__((pure)) double __ocml_log2_f64(double);
  __attribute__((device)) __attribute__((const)) double __ocml_sqrt_f64(double);
  __attribute__((device)) double __ocml_sin_f64(double);
  __attribute__((device)) __attribute__((const)) _Float16 __ocml_fmax_f16(_Float16, _Float16);
  __attribute__((device)) __attribute__((pure)) _Float16 __ocml_exp2_f16(_Float16);
  __attribute__((device)) __attribute__((pure)) _Float16 __ocml_log2_f16(_Float16);
  __attribute__((device)) __attribute__((const)) _Float16 __ocml_sqrt_f16(_Float16);
  __attribute__((device)) _Float16 __ocml_sin_f16(_Float16);
}
extern "C" __attribute__((global))void __attribute__((amdgpu_flat_work_group_size(1, 128)))r_4_2_8_16_32_4_4_4(float* data0, const float* data1, const float* data2) {
  int gidx1 = __ockl_get_group_id(0); /* 2 */
  int lidx2 = __ockl_get_local_id(0); /* 8 */
  int gidx0 = __ockl_get_group_id(1); /* 4 */
  int lidx3 = __ockl_get_local_id(1); /* 16 */
  int alu0 = (gidx1*64);
  int alu1 = (lidx2*512);
  int alu2 = (gidx0*4096);
  int alu3 = (lidx3*4);
  int alu4 = (alu2+alu0+alu1+alu3);
  float4 acc0 = make_float4(0.0,0.0,0.0,0.0);
  float4 acc1 = make_float4(0.0,0.0,0.0,0.0);
  float4 acc2 = make_float4(0.0,0.0,0.0,0.0);
  float4 acc3 = make_float4(0.0,0.0,0.0,0.0);
  for (int ridx0 = 0; ridx0 < 32; ridx0++) {
    int alu5 = (alu2+alu1+(ridx0*4));
    int alu6 = (alu0+alu3+(ridx0*512));
    float4 val0 = (float4)(*((float4*)(data1+alu5)));
    float4 val1 = (float4)(*((float4*)(data1+alu5+128)));
    float4 val2 = (float4)(*((float4*)(data1+alu5+256)));
    float4 val3 = (float4)(*((float4*)(data1+alu5+384)));
    float4 val4 = (float4)(*((float4*)(data2+alu6)));
    float4 val5 = (float4)(*((float4*)(data2+alu6+128)));
    float4 val6 = (float4)(*((float4*)(data2+alu6+256)));
    float4 val7 = (float4)(*((float4*)(data2+alu6+384)));
    acc0 = make_float4(((val0.w*val7.x)+(val0.z*val6.x)+(val0.y*val5.x)+(val0.x*val4.x)+acc0.x),((val0.w*val7.y)+(val0.z*val6.y)+(val0.y*val5.y)+(val0.x*val4.y)+acc0.y),((val0.w*val7.z)+(val0.z*val6.z)+(val0.y*val5.z)+(val0.x*val4.z)+acc0.z),((val0.w*val7.w)+(val0.z*val6.w)+(val0.y*val5.w)+(val0.x*val4.w)+acc0.w));
    acc1 = make_float4(((val1.w*val7.x)+(val1.z*val6.x)+(val1.y*val5.x)+(val1.x*val4.x)+acc1.x),((val1.w*val7.y)+(val1.z*val6.y)+(val1.y*val5.y)+(val1.x*val4.y)+acc1.y),((val1.w*val7.z)+(val1.z*val6.z)+(val1.y*val5.z)+(val1.x*val4.z)+acc1.z),((val1.w*val7.w)+(val1.z*val6.w)+(val1.y*val5.w)+(val1.x*val4.w)+acc1.w));
    acc2 = make_float4(((val2.w*val7.x)+(val2.z*val6.x)+(val2.y*val5.x)+(val2.x*val4.x)+acc2.x),((val2.w*val7.y)+(val2.z*val6.y)+(val2.y*val5.y)+(val2.x*val4.y)+acc2.y),((val2.w*val7.z)+(val2.z*val6.z)+(val2.y*val5.z)+(val2.x*val4.z)+acc2.z),((val2.w*val7.w)+(val2.z*val6.w)+(val2.y*val5.w)+(val2.x*val4.w)+acc2.w));
    acc3 = make_float4(((val3.w*val7.x)+(val3.z*val6.x)+(val3.y*val5.x)+(val3.x*val4.x)+acc3.x),((val3.w*val7.y)+(val3.z*val6.y)+(val3.y*val5.y)+(val3.x*val4.y)+acc3.y),((val3.w*val7.z)+(val3.z*val6.z)+(val3.y*val5.z)+(val3.x*val4.z)+acc3.z),((val3.w*val7.w)+(val3.z*val6.w)+(val3.y*val5.w)+(val3.x*val4.w)+acc3.w));
  }
  *((float4*)(data0+alu4)) = acc0;
  *((float4*)(data0+alu4+128)) = acc1;
  *((float4*)(data0+alu4+256)) = acc2;
  *((float4*)(data0+alu4+384)) = acc3;
}