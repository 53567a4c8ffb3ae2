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
extern "C" __attribute__((global))void __attribute__((amdgpu_flat_work_group_size(1, 128)))r_4_2_16_8_16_4_4_3_3(float* data0, const float* data1, const float* data2) {
  int gidx1 = __ockl_get_group_id(0); /* 2 */
  int lidx2 = __ockl_get_local_id(0); /* 16 */
  int gidx0 = __ockl_get_group_id(1); /* 4 */
  int lidx3 = __ockl_get_local_id(1); /* 8 */
  bool alu0 = (0<lidx3);
  bool alu1 = (lidx3<7);
  int alu2 = (gidx1*512);
  int alu3 = (lidx2*32);
  int alu4 = (lidx3*4);
  bool alu5 = (((gidx1*(-16))+(-lidx2))<0);
  bool alu6 = (((gidx1*16)+lidx2)<31);
  int alu7 = ((gidx0*4096)+alu2+alu3+alu4);
  float4 acc0 = make_float4(0.0,0.0,0.0,0.0);
  float4 acc1 = make_float4(0.0,0.0,0.0,0.0);
  float4 acc2 = make_float4(0.0,0.0,0.0,0.0);
  float4 acc3 = make_float4(0.0,0.0,0.0,0.0);
  for (int ridx0 = 0; ridx0 < 16; ridx0++) {
    int alu8 = ((gidx0*576)+(ridx0*9));
    int alu9 = ((ridx0*1024)+alu2+alu3+alu4);
    float val0 = ((alu5*alu0)?data1[alu9+(-33)]:0.0f);
    float val1 = (alu5?data1[alu9+(-32)]:0.0f);
    float val2 = (alu5?data1[alu9+(-31)]:0.0f);
    float val3 = (alu5?data1[alu9+(-30)]:0.0f);
    float val4 = (alu5?data1[alu9+(-29)]:0.0f);
    float val5 = ((alu5*alu1)?data1[alu9+(-28)]:0.0f);
    float val6 = (alu0?data1[alu9+(-1)]:0.0f);
    float val7 = data1[alu9+1];
    float val8 = data1[alu9+2];
    float val9 = data1[alu9+3];
    float val10 = (alu1?data1[alu9+4]:0.0f);
    float val11 = ((alu6*alu0)?data1[alu9+31]:0.0f);
    float val12 = (alu6?data1[alu9+32]:0.0f);
    float val13 = (alu6?data1[alu9+33]:0.0f);
    float val14 = (alu6?data1[alu9+34]:0.0f);
    float val15 = (alu6?data1[alu9+35]:0.0f);
    float val16 = ((alu6*alu1)?data1[alu9+36]:0.0f);
    float val17 = data1[alu9];
    float val18 = data2[alu8];
    float val19 = data2[alu8+1];
    float val20 = data2[alu8+2];
    float val21 = data2[alu8+3];
    float val22 = data2[alu8+4];
    float val23 = data2[alu8+5];
    float val24 = data2[alu8+6];
    float val25 = data2[alu8+7];
    float val26 = data2[alu8+8];
    float val27 = data2[alu8+144];
    float val28 = data2[alu8+145];
    float val29 = data2[alu8+146];
    float val30 = data2[alu8+147];
    float val31 = data2[alu8+148];
    float val32 = data2[alu8+149];
    float val33 = data2[alu8+150];
    float val34 = data2[alu8+151];
    float val35 = data2[alu8+152];
    float val36 = data2[alu8+288];
    float val37 = data2[alu8+289];
    float val38 = data2[alu8+290];
    float val39 = data2[alu8+291];
    float val40 = data2[alu8+292];
    float val41 = data2[alu8+293];
    float val42 = data2[alu8+294];
    float val43 = data2[alu8+295];
    float val44 = data2[alu8+296];
    float val45 = data2[alu8+432];
    float val46 = data2[alu8+433];
    float val47 = data2[alu8+434];
    float val48 = data2[alu8+435];
    float val49 = data2[alu8+436];
    float val50 = data2[alu8+437];
    float val51 = data2[alu8+438];
    float val52 = data2[alu8+439];
    float val53 = data2[alu8+440];
    acc0 = make_float4(((val13*val26)+(val12*val25)+(val11*val24)+(val7*val23)+(val17*val22)+(val6*val21)+(val2*val20)+(val1*val19)+(val0*val18)+acc0.x),((val14*val26)+(val13*val25)+(val12*val24)+(val8*val23)+(val7*val22)+(val17*val21)+(val3*val20)+(val2*val19)+(val1*val18)+acc0.y),((val15*val26)+(val14*val25)+(val13*val24)+(val9*val23)+(val8*val22)+(val7*val21)+(val4*val20)+(val3*val19)+(val2*val18)+acc0.z),((val16*val26)+(val15*val25)+(val14*val24)+(val10*val23)+(val9*val22)+(val8*val21)+(val5*val20)+(val4*val19)+(val3*val18)+acc0.w));
    acc1 = make_float4(((val13*val35)+(val12*val34)+(val11*val33)+(val7*val32)+(val17*val31)+(val6*val30)+(val2*val29)+(val1*val28)+(val0*val27)+acc1.x),((val14*val35)+(val13*val34)+(val12*val33)+(val8*val32)+(val7*val31)+(val17*val30)+(val3*val29)+(val2*val28)+(val1*val27)+acc1.y),((val15*val35)+(val14*val34)+(val13*val33)+(val9*val32)+(val8*val31)+(val7*val30)+(val4*val29)+(val3*val28)+(val2*val27)+acc1.z),((val16*val35)+(val15*val34)+(val14*val33)+(val10*val32)+(val9*val31)+(val8*val30)+(val5*val29)+(val4*val28)+(val3*val27)+acc1.w));
    acc2 = make_float4(((val13*val44)+(val12*val43)+(val11*val42)+(val7*val41)+(val17*val40)+(val6*val39)+(val2*val38)+(val1*val37)+(val0*val36)+acc2.x),((val14*val44)+(val13*val43)+(val12*val42)+(val8*val41)+(val7*val40)+(val17*val39)+(val3*val38)+(val2*val37)+(val1*val36)+acc2.y),((val15*val44)+(val14*val43)+(val13*val42)+(val9*val41)+(val8*val40)+(val7*val39)+(val4*val38)+(val3*val37)+(val2*val36)+acc2.z),((val16*val44)+(val15*val43)+(val14*val42)+(val10*val41)+(val9*val40)+(val8*val39)+(val5*val38)+(val4*val37)+(val3*val36)+acc2.w));
    acc3 = make_float4(((val13*val53)+(val12*val52)+(val11*val51)+(val7*val50)+(val17*val49)+(val6*val48)+(val2*val47)+(val1*val46)+(val0*val45)+acc3.x),((val14*val53)+(val13*val52)+(val12*val51)+(val8*val50)+(val7*val49)+(val17*val48)+(val3*val47)+(val2*val46)+(val1*val45)+acc3.y),((val15*val53)+(val14*val52)+(val13*val51)+(val9*val50)+(val8*val49)+(val7*val48)+(val4*val47)+(val3*val46)+(val2*val45)+acc3.z),((val16*val53)+(val15*val52)+(val14*val51)+(val10*val50)+(val9*val49)+(val8*val48)+(val5*val47)+(val4*val46)+(val3*val45)+acc3.w));
  }
  *((float4*)(data0+alu7)) = acc0;
  *((float4*)(data0+alu7+1024)) = acc1;
  *((float4*)(data0+alu7+2048)) = acc2;
  *((float4*)(data0+alu7+3072)) = acc3;
}