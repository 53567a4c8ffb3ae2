//! Semantics of the instructions added to close the gaps of LLVM's instruction list
//! (`isa-list/`): each program runs one wave and stores what it computed; the expected values
//! come from AMD's ISA documents (the "MI200"/"MI300" CDNA2/CDNA3 ISA guides for gfx90a and
//! gfx942, the RDNA3/RDNA4 guides for gfx1100/gfx1201), quoted beside each test. The programs
//! are assembled with `llvm-mc-19 -arch=amdgcn -mcpu=<target> -show-encoding` (the source is
//! beside each), so the test needs no LLVM.

use hcq_sim::isa::{FlatMemory, FloatMode, Isa, Launch, ScratchSetup, run};

const MEM: usize = 0x10_0000;
const CODE: u64 = 0x8_0000;
/// Where the programs store their results (s[0:1] holds it).
const OUT: u64 = 0x1000;
/// Memory the programs read and write (s[2:3] holds it; buffer descriptors point at it).
const DATA: u64 = 0x2000;

/// Runs `code` in one wave of `isa` (wave64 on gfx9, wave32 else) with s[0:1] = OUT,
/// s[2:3] = DATA, s[4:7] = a raw buffer descriptor over DATA (NUM_RECORDS 0x1000) and then
/// `user`; `data` is written at DATA first. Returns `n` dwords from OUT and the memory.
fn run_wave(
    isa: Isa,
    code: &[u32],
    data: &[u32],
    user: &[u32],
    n: usize,
) -> (Vec<u32>, FlatMemory) {
    let gfx9 = isa == Isa::Gfx9;
    let mem = FlatMemory::new(0, MEM);
    let bytes: Vec<u8> = code.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.poke(CODE, &bytes).unwrap();
    let d: Vec<u8> = data.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.poke(DATA, &d).unwrap();
    // Word 3: the drivers' raw-buffer formats (32-bit data, 32-bit numeric format).
    let word3 = if gfx9 { 0x0002_7FAC } else { 0x3101_6FAC };
    let mut sgprs = vec![OUT as u32, 0, DATA as u32, 0, DATA as u32, 0, 0x1000, word3];
    sgprs.extend_from_slice(user);
    let lanes = if gfx9 { 64 } else { 32 };
    let l = Launch {
        isa,
        gfx940: true,
        pgm: CODE,
        wave64: gfx9,
        // CAST: at most 16 user SGPRs here.
        rsrc2: (sgprs.len() as u32) << 1,
        user_sgprs: sgprs,
        local: [lanes, 1, 1],
        groups: [1, 1, 1],
        lds_bytes: 0x1000,
        vgprs: 64,
        accum_offset: 32,
        scratch: ScratchSetup::default(),
        scratch_waves: 0,
        float: FloatMode {
            denorm32: true,
            denorm16_64: true,
        },
        budget: 1 << 16,
        clock: 0,
        xcc: Default::default(),
    };
    run(&l, &mem).unwrap();
    (words(&mem, OUT, n), mem)
}

fn words(mem: &FlatMemory, at: u64, n: usize) -> Vec<u32> {
    let mut b = vec![0u8; n * 4];
    mem.peek(at, &mut b).unwrap();
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn gfx9_cmp_class_f16_and_cmpx_writing_its_sgpr_pair() {
    // CDNA3 ISA 12.8 (VOPC): V_CMP_CLASS_F16 tests the class of S0.f16 against the mask in
    // S1 (bit 0 signaling NaN, 1 quiet NaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0, 6 +0,
    // 7 +denormal, 8 +normal, 9 +inf); only the low 16 bits of S0 are the half. On gfx9
    // V_CMPX_* writes EXEC and its destination (VCC or, in VOP3, the SGPR pair).
    //
    //   v_mov_b32 v1, 1 / v_mov_b32 v2, 0x80 / v_cmp_class_f16_e32 vcc, v1, v2 / s_mov_b32 s6, vcc_lo
    //   (0x7e00 mask 2 -> s7; 0x7e00 mask 1 -> s8; 0x7c01 mask 1 -> s9; 0xfc00 mask 4 -> s10;
    //    0x8000 mask 0x20 -> s11; 0x12343c00 mask 0x100 -> s12)
    //   s_movk_i32 s13, 0x80 / v_cmp_class_f16_e64 s[14:15], v1, s13
    //   v_cmpx_gt_u32_e64 s[4:5], 4, v0 / s_mov_b64 s[16:17], exec / s_mov_b64 exec, 1
    //   v_mov_b32 v4..v15, s4 s5 s6 .. s12 s14 s16 s17 / global_store_dwordx4 (OUT)
    let code = [
        0x7E020281, 0x7E0402FF, 0x00000080, 0x7C280501, 0xBE86006A, 0x7E0202FF, 0x00007E00,
        0x7E040282, 0x7C280501, 0xBE87006A, 0x7E040281, 0x7C280501, 0xBE88006A, 0x7E0202FF,
        0x00007C01, 0x7C280501, 0xBE89006A, 0x7E0202FF, 0x0000FC00, 0x7E040284, 0x7C280501,
        0xBE8A006A, 0x7E0202FF, 0x00008000, 0x7E0402A0, 0x7C280501, 0xBE8B006A, 0x7E0202FF,
        0x12343C00, 0x7E0402FF, 0x00000100, 0x7C280501, 0xBE8C006A, 0xB00D0080, 0xD014000E,
        0x00001B01, 0xD0DC0004, 0x00020084, 0xBE90017E, 0xBEFE0181, 0x7E080204, 0x7E0A0205,
        0x7E0C0206, 0x7E0E0207, 0x7E100208, 0x7E120209, 0x7E14020A, 0x7E16020B, 0x7E18020C,
        0x7E1A020E, 0x7E1C0210, 0x7E1E0211, 0x7E060280, 0xDC7C8000, 0x00000403, 0xDC7C8010,
        0x00000803, 0xDC7C8020, 0x00000C03, 0xBF810000,
    ];
    let (got, _) = run_wave(Isa::Gfx9, &code, &[], &[], 12);
    let all = u32::MAX;
    assert_eq!(
        got,
        [0xf, 0, all, all, 0, all, all, all, all, 0, 0xf, 0],
        "s4 s5 (cmpx's pair), +denorm, qnan, qnan-as-snan, snan, -inf, -0, +normal, \
         +normal-as-denorm, exec"
    );
}

#[test]
fn gfx9_buffer_subdword_d16_and_atomics_and_wider_global_atomics() {
    // CDNA3 ISA 9.1 (MUBUF): BUFFER_LOAD_USHORT zero-extends, _SSHORT sign-extends;
    // _SHORT_D16_HI writes the VGPR's high half and keeps the low one; _SBYTE_D16 writes the
    // sign-extended byte to the low half, keeping the high one; BUFFER_STORE_SHORT_D16_HI
    // stores the high half. BUFFER_ATOMIC_ADD with GLC returns the old value (lanes in order,
    // 64 of them adding 5); BUFFER_ATOMIC_PK_ADD_F16 adds both halves (64 x (1.0, 1.0)).
    // FLAT/GLOBAL_ATOMIC_INC_X2: tmp = MEM; MEM = (tmp >= DATA) ? 0 : tmp + 1 (64 lanes from 2
    // with DATA 3: 2 3 0 1 ... ends at 2). GLOBAL_ATOMIC_MAX_F64: the larger double.
    //
    //   v_mov_b32 v1, 0
    //   buffer_load_ushort v2, off, s[4:7], 0 offset:2 / buffer_load_sshort v3, ... offset:2
    //   v_mov_b32 v4, 0x1111 / buffer_load_short_d16_hi v4, off, s[4:7], 0 offset:2
    //   v_mov_b32 v5, 0x22220000 / buffer_load_sbyte_d16 v5, off, s[4:7], 0 offset:3
    //   v_mov_b32 v6, 0xabcd1234 / buffer_store_short_d16_hi v6, off, s[4:7], 0 offset:8
    //   v_mov_b32 v7, 5 / buffer_atomic_add v7, off, s[4:7], 0 offset:12 glc
    //   v_mov_b32 v8, 0x3c003c00 / buffer_atomic_pk_add_f16 v8, off, s[4:7], 0 offset:16
    //   v_mov_b32 v10, 3 / v_mov_b32 v11, 0 / v_mov_b32 v12, 0x18
    //   global_atomic_inc_x2 v[10:11], v1, v[10:11], s[2:3] offset:24 glc
    //   v_mov_b32 v14, 0 / v_mov_b32 v15, 0x40000000
    //   global_atomic_max_f64 v1, v[14:15], s[2:3] offset:32
    //   s_waitcnt vmcnt(0) / s_mov_b64 exec, 1
    //   global_store_dwordx4 v1, v[2:5], s[0:1] / global_store_dword v1, v7, s[0:1] offset:16
    //   global_store_dwordx2 v1, v[10:11], s[0:1] offset:24 / s_endpgm
    let code = [
        0x7E020280, 0xE0480002, 0x80010200, 0xE04C0002, 0x80010300, 0x7E0802FF, 0x00001111,
        0xE0940002, 0x80010400, 0x7E0A02FF, 0x22220000, 0xE0880003, 0x80010500, 0x7E0C02FF,
        0xABCD1234, 0xE06C0008, 0x80010600, 0x7E0E0285, 0xE108400C, 0x80010700, 0x7E1002FF,
        0x3C003C00, 0xE1380010, 0x80010800, 0x7E140283, 0x7E160280, 0x7E180298, 0xDDAD8018,
        0x0A020A01, 0x7E1C0280, 0x7E1E02F4, 0xDD448020, 0x00020E01, 0xBF8C0F70, 0xBEFE0181,
        0xDC7C8000, 0x00000201, 0xDC708010, 0x00000701, 0xDC748018, 0x00000A01, 0xBF810000,
    ];
    // DATA: halves 0x7fff 0x8001; -1; 10; (1.0, 2.0) f16; 0; u64 2; f64 1.0.
    let data = [
        0x8001_7fff,
        0,
        0xffff_ffff,
        10,
        0x4000_3c00,
        0,
        2,
        0,
        0,
        0x3ff0_0000,
    ];
    let (got, mem) = run_wave(Isa::Gfx9, &code, &data, &[], 8);
    assert_eq!(
        got,
        [0x8001, 0xffff_8001, 0x8001_1111, 0x2222_ff80, 10, 0, 2, 0],
        "ushort, sshort, short_d16_hi, sbyte_d16, atomic_add's old, -, inc_x2's old"
    );
    assert_eq!(
        words(&mem, DATA + 8, 8),
        [
            0xffff_abcd,
            10 + 64 * 5,
            0x5420_5410,
            0,
            2,
            0,
            0,
            0x4000_0000
        ],
        "store_short_d16_hi, atomic_add, pk_add_f16 (65.0, 66.0), -, inc_x2, max_f64 (2.0)"
    );
}

#[test]
fn gfx9_scalar_stores_atomics_and_buffer_loads() {
    // CDNA3 ISA 4.x (scalar memory): S_STORE_DWORD writes SDATA at SBASE + offset (a later
    // S_LOAD of the wave reads it); S_ATOMIC_ADD/CMPSWAP/SMAX_X2/UMIN with GLC return the
    // old value in SDATA (cmpswap: SDATA[0] the new value, SDATA[1] the compare value);
    // S_BUFFER_LOAD/STORE_DWORD address the V#'s base + offset.
    //
    //   s_mov_b32 s8, 7 / s_store_dword s8, s[2:3], 0x0 / s_load_dword s9, s[2:3], 0x0
    //   s_mov_b32 s10, 5 / s_atomic_add s10, s[2:3], 0x4 glc
    //   s_mov_b32 s12, 9 / s_mov_b32 s13, 105 / s_atomic_cmpswap s[12:13], s[2:3], 0x4 glc
    //   s_mov_b64 s[14:15], 3 / s_atomic_smax_x2 s[14:15], s[2:3], 0x8 glc
    //   s_buffer_load_dword s16, s[4:7], 0x10 / s_buffer_store_dword s8, s[4:7], 0x14
    //   s_atomic_umin s8, s[2:3], 0x18 / s_waitcnt lgkmcnt(0) / s_mov_b64 exec, 1
    //   v_mov_b32 v1, 0 / v_mov_b32 v2..v7, s9 s10 s12 s14 s15 s16
    //   global_store_dwordx4 v1, v[2:5], s[0:1] / global_store_dwordx2 v1, v[6:7], s[0:1] offset:16
    let code = [
        0xBE880087, 0xC0420201, 0x00000000, 0xC0020241, 0x00000000, 0xBE8A0085, 0xC20B0281,
        0x00000004, 0xBE8C0089, 0xBE8D00FF, 0x00000069, 0xC2070301, 0x00000004, 0xBE8E0183,
        0xC29B0381, 0x00000008, 0xC0220402, 0x00000010, 0xC0620202, 0x00000014, 0xC2160201,
        0x00000018, 0xBF8CC07F, 0xBEFE0181, 0x7E020280, 0x7E040209, 0x7E06020A, 0x7E08020C,
        0x7E0A020E, 0x7E0C020F, 0x7E0E0210, 0xDC7C8000, 0x00000201, 0xDC748010, 0x00000601,
        0xBF810000,
    ];
    let data = [0, 100, u32::MAX, u32::MAX, 0x1234, 0, 50];
    let (got, mem) = run_wave(Isa::Gfx9, &code, &data, &[], 6);
    assert_eq!(
        got,
        [7, 100, 105, u32::MAX, u32::MAX, 0x1234],
        "load after store, add's old, cmpswap's old, smax_x2's old, buffer load"
    );
    assert_eq!(
        words(&mem, DATA, 7),
        [7, 9, 3, 0, 0x1234, 7, 7],
        "store, add then cmpswap, smax_x2 (-1 vs 3), -, buffer store, umin"
    );
}

#[test]
fn gfx11_scalar_load_into_vcc() {
    // RDNA3 ISA (SMEM): SDATA names any scalar destination, VCC among them; tinygrad's
    // test_ops kernels on gfx1100 load a 64-bit condition straight into VCC.
    //
    //   s_load_b64 vcc, s[2:3], 0x0 / s_waitcnt lgkmcnt(0) / s_mov_b32 exec_lo, 1
    //   v_mov_b32 v1, 0 / v_mov_b32 v2, vcc_lo / v_mov_b32 v3, vcc_hi
    //   global_store_b64 v1, v[2:3], s[0:1] / s_endpgm
    let code = [
        0xF4041A81, 0xF8000000, 0xBF89FC07, 0xBEFE0081, 0x7E020280, 0x7E04026A, 0x7E06026B,
        0xDC6E0000, 0x00000201, 0xBFB00000,
    ];
    let (got, _) = run_wave(Isa::Gfx11, &code, &[0x1234_5678, 0x9abc_def0], &[], 2);
    assert_eq!(got, [0x1234_5678, 0x9abc_def0], "VCC loaded by s_load_b64");
}

#[test]
fn gfx12_subdword_scalar_loads_and_buffer_loads() {
    // RDNA4 ISA (scalar memory): S_LOAD_I8/U8/I16/U16 sign- or zero-extend the byte/half at
    // the (unaligned) address; S_BUFFER_LOAD_B96 reads three dwords at the V#'s base +
    // offset, S_BUFFER_LOAD_I8 one sign-extended byte.
    //
    //   s_load_i8 s8, s[2:3], 0x3 / s_load_u8 s9, s[2:3], 0x3 / s_load_i16 s10, s[2:3], 0x2
    //   s_load_u16 s11, s[2:3], 0x2 / s_buffer_load_b96 s[12:14], s[4:7], 0x4
    //   s_buffer_load_i8 s15, s[4:7], 0x7 / s_wait_kmcnt 0 / s_mov_b32 exec_lo, 1
    //   v_mov_b32 v1, 0 / v_mov_b32 v2..v9, s8..s15
    //   global_store_b128 v1, v[2:5], s[0:1] / global_store_b128 v1, v[6:9], s[0:1] offset:16
    let code = [
        0xF4010201, 0xF8000003, 0xF4012241, 0xF8000003, 0xF4014281, 0xF8000002, 0xF40162C1,
        0xF8000002, 0xF402A302, 0xF8000004, 0xF40303C2, 0xF8000007, 0xBFC70000, 0xBEFE0081,
        0x7E020280, 0x7E040208, 0x7E060209, 0x7E08020A, 0x7E0A020B, 0x7E0C020C, 0x7E0E020D,
        0x7E10020E, 0x7E12020F, 0xEE074000, 0x01000000, 0x00000001, 0xEE074000, 0x03000000,
        0x00001001, 0xBFB00000,
    ];
    let data = [0x80F1_7F02, 0xFE00_0011, 0x22, 0x33];
    let (got, _) = run_wave(Isa::Gfx12, &code, &data, &[], 8);
    assert_eq!(
        got,
        [
            0xffff_ff80,
            0x80,
            0xffff_80f1,
            0x80f1,
            0xFE00_0011,
            0x22,
            0x33,
            0xffff_fffe
        ],
        "i8, u8, i16, u16, buffer b96, buffer i8"
    );
}

#[test]
fn gfx9_f16_rounding_frexp_norm_and_f32_rounding_conversions() {
    // CDNA3 ISA 12.x (VOP1): V_FLOOR/CEIL/TRUNC/RNDNE_F16 round to an integer half;
    // V_FRACT_F16 = S0 - floor(S0); V_FREXP_MANT_F16 the mantissa in [0.5, 1),
    // V_FREXP_EXP_I16_F16 the exponent; V_CVT_NORM_I16/U16_F16 clamp to [-1, 1]/[0, 1] and
    // scale to 32767/65535; V_SAT_PK_U8_I16 = {sat8(S0[31:16]), sat8(S0[15:0])};
    // V_CVT_FLR_I32_F32 = (int)floor(S0), V_CVT_RPI_I32_F32 = (int)floor(S0 + 0.5);
    // V_CVT_OFF_F32_I4 = S0[3:0] (signed) / 16; V_SWAP_B32 exchanges the two VGPRs.
    //
    //   floor/ceil 1.5, trunc -1.5, rndne 2.5, fract -1.25, frexp_mant/exp 6.0,
    //   norm_i16 1.0 and -2.0, norm_u16 -2.0, sat_pk 0xff800123, flr -1.5, rpi 2.5 and -2.5,
    //   off_f32_i4 0xf and 7, v_swap_b32 v18 (18), v19 (19); stored from v2 to v19.
    let code = [
        0x7E0202FF, 0x00003E00, 0x7E048901, 0x7E068B01, 0x7E0202FF, 0x0000BE00, 0x7E088D01,
        0x7E0202FF, 0x00004100, 0x7E0A8F01, 0x7E0202FF, 0x0000BD00, 0x7E0C9101, 0x7E0202FF,
        0x00004600, 0x7E0E8501, 0x7E108701, 0x7E0202FF, 0x00003C00, 0x7E129B01, 0x7E0202FF,
        0x0000C000, 0x7E149B01, 0x7E169D01, 0x7E0202FF, 0xFF800123, 0x7E189F01, 0x7E0202FF,
        0xBFC00000, 0x7E1A1B01, 0x7E0202FF, 0x40200000, 0x7E1C1901, 0x7E0202FF, 0xC0200000,
        0x7E1E1901, 0x7E02028F, 0x7E201D01, 0x7E020287, 0x7E221D01, 0x7E240292, 0x7E260293,
        0x7E24A313, 0x7E280280, 0xBEFE0181, 0xDC7C8000, 0x00000214, 0xDC7C8010, 0x00000614,
        0xDC7C8020, 0x00000A14, 0xDC7C8030, 0x00000E14, 0xDC748040, 0x00001214, 0xBF810000,
    ];
    let (got, _) = run_wave(Isa::Gfx9, &code, &[], &[], 18);
    assert_eq!(
        got,
        [
            0x3c00,
            0x4000,
            0xbc00,
            0x4000,
            0x3a00,
            0x3a00,
            3,
            0x7fff,
            0x8001,
            0,
            0x00ff,
            0xffff_fffe,
            3,
            0xffff_fffe,
            0xbd80_0000,
            0x3ee0_0000,
            19,
            18
        ]
    );
}

#[test]
fn gfx11_fract_f16_of_nan_infinity_and_tiny_negatives() {
    // RDNA3 ISA 16.x (VOP1): V_FRACT_F16 D.f16 = S0.f16 + -floor(S0.f16), clamped below 1.0
    // as V_FRACT_F32 (the largest half under 1 is 0x3bff); an IEEE operation on a NaN gives
    // that NaN quieted (payload kept), inf - inf an invalid-operation NaN. The 16-bit VOP1
    // forms write D[15:0] and keep D[31:16].
    //
    //   v_mov_b32 v2, 0x12347d23 / v_fract_f16_e32 v2, v2 (signaling NaN, payload 0x123)
    //   v_mov_b32 v3, 0x1234fe45 / v_fract_f16_e32 v3, v3 (quiet -NaN)
    //   v_mov_b32 v4, 0x12347c00 / v_fract_f16_e32 v4, v4 (+inf)
    //   v_mov_b32 v5, 0x12348001 / v_fract_f16_e32 v5, v5 (-2^-24: 1 - 2^-24 clamps)
    //   v_mov_b32 v6, 0x1234bd00 / v_fract_f16_e32 v6, v6 (-1.25)
    //   v_mov_b32 v7, 0 / s_mov_b32 exec_lo, 1 / global_store_b128 v7, v[2:5], s[0:1]
    //   global_store_b32 v7, v6, s[0:1] offset:16
    let code = [
        0x7E0402FF, 0x12347D23, 0x7E04BF02, 0x7E0602FF, 0x1234FE45, 0x7E06BF03, 0x7E0802FF,
        0x12347C00, 0x7E08BF04, 0x7E0A02FF, 0x12348001, 0x7E0ABF05, 0x7E0C02FF, 0x1234BD00,
        0x7E0CBF06, 0x7E0E0280, 0xBEFE0081, 0xDC760000, 0x00000207, 0xDC6A0010, 0x00000607,
        0xBFB00000,
    ];
    let (got, _) = run_wave(Isa::Gfx11, &code, &[], &[], 5);
    assert_eq!(got[0], 0x1234_7f23, "sNaN: quieted, payload kept");
    assert_eq!(got[1], 0x1234_fe45, "qNaN: unchanged");
    assert_eq!(got[2] >> 16, 0x1234, "inf: high half kept");
    assert!(got[2] & 0x7fff > 0x7c00, "inf: a NaN, got {:#x}", got[2]);
    assert_eq!(got[3], 0x1234_3bff, "-2^-24: below 1.0");
    assert_eq!(got[4], 0x1234_3a00, "-1.25: 0.75");
}

#[test]
fn gfx11_16_bit_extensions_and_not_b16() {
    // RDNA3 ISA 16.x (VOP1): V_CVT_I32_I16 sign-extends S0[15:0], V_CVT_U32_U16
    // zero-extends; V_NOT_B16 writes ~S0[15:0] to the low half and keeps the high half.
    //
    //   v_mov_b32 v1, 0x12348000 / v_cvt_i32_i16_e32 v2, v1 / v_cvt_u32_u16_e32 v3, v1
    //   v_mov_b32 v4, 0xabcd0000 / v_mov_b32 v5, 0xff / v_not_b16_e32 v4, v5
    //   v_mov_b32 v6, 0 / s_mov_b32 exec_lo, 1 / global_store_b96 v6, v[2:4], s[0:1]
    let code = [
        0x7E0202FF, 0x12348000, 0x7E04D501, 0x7E06D701, 0x7E0802FF, 0xABCD0000, 0x7E0A02FF,
        0x000000FF, 0x7E08D305, 0x7E0C0280, 0xBEFE0081, 0xDC720000, 0x00000206, 0xBFB00000,
    ];
    let (got, _) = run_wave(Isa::Gfx11, &code, &[], &[], 3);
    assert_eq!(got, [0xffff_8000, 0x8000, 0xabcd_ff00]);
}

#[test]
fn gfx11_buffer_offen_soffset_and_rdna_atomics() {
    // RDNA3 ISA 10.x (MUBUF): the address is the V#'s base + VGPR offset (OFFEN) + SOFFSET +
    // the instruction offset. BUFFER_ATOMIC_CSUB_U32: MEM = (DATA > tmp) ? 0 : tmp - DATA;
    // BUFFER_ATOMIC_CMPSWAP_F32 compares as floats (+0 == -0); with GLC both return the old
    // value. BUFFER_STORE_D16_HI_B16 stores the VGPR's high half.
    //
    //   s_mov_b32 exec_lo, 1 / v_mov_b32 v1, 8 / s_mov_b32 s8, 4
    //   buffer_load_b32 v2, v1, s[4:7], s8 offen offset:4
    //   v_mov_b32 v3, 5 / buffer_atomic_csub_u32 v3, v1, s[4:7], 0 offen glc
    //   v_mov_b32 v4, 1.0 / v_mov_b32 v5, 0x80000000
    //   buffer_atomic_cmpswap_f32 v[4:5], v1, s[4:7], 0 offen offset:4 glc
    //   v_mov_b32 v6, 0x12345678 / buffer_store_d16_hi_b16 v6, off, s[4:7], 0 offset:20
    //   s_waitcnt vmcnt(0) / v_mov_b32 v7, 0 / global_store_b96 v7, v[2:4], s[0:1]
    let code = [
        0xBEFE0081, 0x7E020288, 0xBE880084, 0xE0500004, 0x08410201, 0x7E060285, 0xE0DC4000,
        0x80410301, 0x7E0802F2, 0x7E0A02FF, 0x80000000, 0xE1404004, 0x80410401, 0x7E0C02FF,
        0x12345678, 0xE0940014, 0x80010600, 0xBF8903F7, 0x7E0E0280, 0xDC720000, 0x00000207,
        0xBFB00000,
    ];
    let data = [0, 0, 3, 0, 0xAAAA_0001, u32::MAX];
    let (got, mem) = run_wave(Isa::Gfx11, &code, &data, &[], 3);
    assert_eq!(
        got,
        [0xAAAA_0001, 3, 0],
        "load, csub's old, cmpswap_f32's old"
    );
    assert_eq!(
        words(&mem, DATA + 8, 4),
        [0, 0x3f80_0000, 0xAAAA_0001, 0xffff_1234],
        "csub clamps at 0, cmpswap_f32 swapped (+0 == -0), -, d16_hi store"
    );
}

#[test]
fn gfx12_vbuffer_offen_soffset_and_cond_sub() {
    // RDNA4 ISA (VBUFFER): the MUBUF address with a 24-bit offset; th:TH_ATOMIC_RETURN makes
    // an atomic return the old value. BUFFER_ATOMIC_COND_SUB_U32: MEM = (tmp >= DATA) ?
    // tmp - DATA : tmp.
    //
    //   s_mov_b32 exec_lo, 1 / v_mov_b32 v1, 8 / v_mov_b32 v3, 5
    //   buffer_atomic_cond_sub_u32 v3, v1, s[4:7], null offen th:TH_ATOMIC_RETURN
    //   v_mov_b32 v4, 50
    //   buffer_atomic_cond_sub_u32 v4, v1, s[4:7], null offen offset:4 th:TH_ATOMIC_RETURN
    //   s_mov_b32 s8, 12 / buffer_load_b32 v5, off, s[4:7], s8 offset:4 / s_wait_loadcnt 0
    //   v_mov_b32 v7, 0 / global_store_b96 v7, v[3:5], s[0:1]
    let code = [
        0xBEFE0081, 0x7E020288, 0x7E060285, 0xC414007C, 0x40900803, 0x00000001, 0x7E0802B2,
        0xC414007C, 0x40900804, 0x00000401, 0xBE88008C, 0xC4050008, 0x00800805, 0x00000400,
        0xBFC00000, 0x7E0E0280, 0xEE070000, 0x01800000, 0x00000007, 0xBFB00000,
    ];
    let data = [0, 0, 3, 60, 0xAAAA_0001];
    let (got, mem) = run_wave(Isa::Gfx12, &code, &data, &[], 3);
    assert_eq!(got, [3, 60, 0xAAAA_0001], "cond_sub's old values, load");
    assert_eq!(words(&mem, DATA + 8, 2), [3, 10], "3 < 5 kept; 60 - 50");
}

#[test]
fn gfx11_vop3_16_bit_three_way_mads_sads_lerp_and_saturating_packs() {
    // RDNA3 ISA 15.x (VOP3): V_MIN3_I16/V_MAX3_U16/V_MED3_I16 on the low halves (signed or
    // not); V_MAD_U16 = S0 * S1 + S2 (16 bits); V_MAD_I32_I16 = S0.i16 * S1.i16 + S2.i32;
    // V_SAD_U8 = sum |S0.b - S1.b| + S2, V_MSAD_U8 skips bytes whose S1 byte is 0,
    // V_SAD_HI_U8 = (sum << 16) + S2; V_LERP_U8 per byte (S0.b + S1.b + S2.b[0]) >> 1;
    // V_CVT_PK_I16_I32 / V_CVT_PK_U16_U32 = {sat16(S1), sat16(S0)}.
    //
    //   v_mov_b32 v4..v7, 0 / v1 = 0xfffe0003, v2 = 0x00050002, v3 = 0x7fff8000
    //   v_min3_i16 v4, v1, v2, v3 / v_max3_u16 v5, ... / v_med3_i16 v6, ...
    //   v_mad_u16 v7, v1, v2, v3 clamp / v_mad_i32_i16 v8, v1, v2, v3
    //   v9 = 0x01020304, v10 = 0x04000102 / v_sad_u8 v11, v9, v10, 10
    //   v_msad_u8 v12, v9, v10, 0 / v_sad_hi_u8 v13, v9, v10, 1
    //   v_lerp_u8 v14, v9, v10, 0x01000001 / v_cvt_pk_i16_i32 v15, v3, v1
    //   v_cvt_pk_u16_u32 v16, v3, 7 / stores of v4..v16
    let code = [
        0x7E080280, 0x7E0A0280, 0x7E0C0280, 0x7E0E0280, 0x7E0202FF, 0xFFFE0003, 0x7E0402FF,
        0x00050002, 0x7E0602FF, 0x7FFF8000, 0xD64A0004, 0x040E0501, 0xD64E0005, 0x040E0501,
        0xD6500006, 0x040E0501, 0xD6418007, 0x040E0501, 0xD65A0008, 0x040E0501, 0x7E1202FF,
        0x01020304, 0x7E1402FF, 0x04000102, 0xD622000B, 0x022A1509, 0xD639000C, 0x02021509,
        0xD623000D, 0x02061509, 0xD615000E, 0x03FE1509, 0x01000001, 0xD724000F, 0x00020303,
        0xD7230010, 0x00010F03, 0x7E220280, 0xBEFE0081, 0xDC760000, 0x00000411, 0xDC760010,
        0x00000811, 0xDC760020, 0x00000C11, 0xDC6A0030, 0x00001011, 0xBFB00000,
    ];
    let (got, _) = run_wave(Isa::Gfx11, &code, &[], &[], 13);
    assert_eq!(
        got,
        [
            0x8000,
            0x8000,
            2,
            0x8006,
            0x7fff_8006,
            0x0102_0304,
            0x0400_0102,
            19,
            7,
            0x9_0001,
            0x0301_0203,
            0x8000_7fff,
            0x0007_ffff
        ],
        "min3_i16, max3_u16, med3_i16, mad_u16, mad_i32_i16, (inputs), sad_u8, msad_u8, \
         sad_hi_u8, lerp_u8, cvt_pk_i16_i32, cvt_pk_u16_u32"
    );
}

#[test]
fn gfx9_lds_mskor_wrap_float_min_d16_and_u64_dec() {
    // CDNA3 ISA 11.x (DS), 64 lanes on one address, lanes in order:
    // DS_MSKOR_RTN_B32: MEM = (MEM & ~DATA) | DATA2 (0xf0 -> 0x0a); DS_WRAP_RTN_B32:
    // MEM = (MEM >= DATA) ? MEM - DATA : MEM + DATA2 (10 -> 110 -> 10 ...);
    // DS_MIN_RTN_F32 (2.0 vs 1.0); DS_WRITE_B16_D16_HI stores the high half;
    // DS_READ_U8_D16 writes the byte to the low half, keeping the high;
    // DS_DEC_RTN_U64: MEM = (MEM == 0 || MEM > DATA) ? DATA : MEM - 1 (0 3 2 1 0 ...).
    // Each returning op returns lane 0's old value.
    //
    //   v1 = 0, v2 = 0xf0, v3 = 0x0a / ds_write_b32 v1, v2 / ds_mskor_rtn_b32 v4, v1, v2, v3
    //   v5 = 10, v6 = 100 / ds_write_b32 v1, v5 offset:4 / ds_wrap_rtn_b32 v7, v1, v6, v6 offset:4
    //   v8 = 2.0 / ds_write_b32 v1, v8 offset:8 / v9 = 1.0 / ds_min_rtn_f32 v10, v1, v9 offset:8
    //   v11 = 0x12345678 / ds_write_b32 v1, v1 offset:12 / ds_write_b16_d16_hi v1, v11 offset:12
    //   v12 = 0xaaaa0000 / ds_read_u8_d16 v12, v1 offset:12
    //   v[14:15] = 0 / ds_write_b64 v1, v[14:15] offset:16 / v[16:17] = 3
    //   ds_dec_rtn_u64 v[18:19], v1, v[16:17] offset:16 / ds_read_b32 v20..v24 (LDS 0..16)
    //   stores: v4..v7, v10..v11, v12, v18..v21, v22..v24
    let code = [
        0x7E020280, 0x7E0402FF, 0x000000F0, 0x7E06028A, 0xD81A0000, 0x00000201, 0xD8580000,
        0x04030201, 0x7E0A028A, 0x7E0C02FF, 0x00000064, 0xD81A0004, 0x00000501, 0xD8680004,
        0x07060601, 0x7E1002F4, 0xD81A0008, 0x00000801, 0x7E1202F2, 0xD8640008, 0x0A000901,
        0x7E1602FF, 0x12345678, 0xD81A000C, 0x00000101, 0xD8AA000C, 0x00000B01, 0x7E1802FF,
        0xAAAA0000, 0xD8AC000C, 0x0C000001, 0x7E1C0280, 0x7E1E0280, 0xD89A0010, 0x00000E01,
        0x7E200283, 0x7E220280, 0xD8C80010, 0x12001001, 0xD86C0000, 0x14000001, 0xD86C0004,
        0x15000001, 0xD86C0008, 0x16000001, 0xD86C000C, 0x17000001, 0xD86C0010, 0x18000001,
        0xBF8CC07F, 0xBEFE0181, 0xDC7C8000, 0x00000401, 0xDC748010, 0x00000A01, 0xDC708018,
        0x00000C01, 0xDC7C8020, 0x00001201, 0xDC788030, 0x00001601, 0xBF810000,
    ];
    let (got, _) = run_wave(Isa::Gfx9, &code, &[], &[], 15);
    assert_eq!(
        got,
        [
            0xf0,
            10,
            100,
            10,
            0x4000_0000,
            0x1234_5678,
            0xaaaa_0034,
            0,
            0,
            0,
            0x0a,
            10,
            0x3f80_0000,
            0x1234,
            0
        ],
        "mskor's old, -, -, wrap's old, min_f32's old, -, read_u8_d16, -, dec_u64's old, \
         LDS after: mskor, wrap (even count), min_f32, d16_hi store, dec_u64 (64 steps)"
    );
}

#[test]
fn gfx9_sop1_bit_ops_quad_masks_and_exec_logic() {
    // CDNA3 ISA 5.x (SOP1): S_FF0_I32_B32 the first zero bit; S_BREV_B64 reverses 64 bits;
    // S_QUADMASK_B32 one bit per quad with any bit set; S_WQM_B32 every bit of such a quad;
    // S_BITREPLICATE_B64_B32 each bit twice; S_NAND_SAVEEXEC_B64: D = EXEC,
    // EXEC = ~(S0 & EXEC); S_ANDN1_WREXEC_B64: EXEC = ~S0 & EXEC, D = the new EXEC.
    //
    //   s_mov_b32 s8, 0xffff / s_ff0_i32_b32 s9, s8 / s_mov_b64 s[10:11], 1
    //   s_brev_b64 s[12:13], s[10:11] / s_mov_b32 s14, 0x00f00010 / s_quadmask_b32 s15, s14
    //   s_wqm_b32 s16, s14 / s_bitreplicate_b64_b32 s[18:19], 5 / s_mov_b64 s[22:23], 15
    //   s_nand_saveexec_b64 s[20:21], s[22:23] / s_mov_b64 s[24:25], exec
    //   s_andn1_wrexec_b64 s[26:27], s[22:23] / s_mov_b64 exec, 1
    //   v2..v13 = s9 s12 s13 s15 s16 s18 s19 s20 s21 s24 s25 s26 / global_store_dwordx4 x3
    let code = [
        0xBE8800FF, 0x0000FFFF, 0xBE890E08, 0xBE8A0181, 0xBE8C090A, 0xBE8E00FF, 0x00F00010,
        0xBE8F280E, 0xBE90060E, 0xBE923785, 0xBE96018F, 0xBE942516, 0xBE98017E, 0xBE9A3516,
        0xBEFE0181, 0x7E020280, 0x7E040209, 0x7E06020C, 0x7E08020D, 0x7E0A020F, 0x7E0C0210,
        0x7E0E0212, 0x7E100213, 0x7E120214, 0x7E140215, 0x7E160218, 0x7E180219, 0x7E1A021A,
        0xDC7C8000, 0x00000201, 0xDC7C8010, 0x00000601, 0xDC7C8020, 0x00000A01, 0xBF810000,
    ];
    let (got, _) = run_wave(Isa::Gfx9, &code, &[], &[], 12);
    let all = u32::MAX;
    assert_eq!(
        got,
        [
            16,
            0,
            0x8000_0000,
            0x22,
            0x00f0_00f0,
            0x33,
            0,
            all,
            all,
            0xffff_fff0,
            all,
            0xffff_fff0
        ],
        "ff0, brev_b64, quadmask, wqm, bitreplicate, nand_saveexec's old EXEC, its new EXEC, \
         andn1_wrexec's D"
    );
}

#[test]
fn gfx12_scalar_float_rounding_f16_and_ieee_minimum() {
    // RDNA4 ISA (SOP1/SOP2 floats): S_FLOOR_F32; S_CEIL_F16 on S0[15:0] (D[31:16] zero);
    // S_CVT_HI_F32_F16 converts S0[31:16]; S_ADD_F16; S_MINIMUM_F32 (IEEE 754-2019: a NaN
    // operand gives NaN); S_MIN_NUM_F16 (the number wins); S_FMAAK_F32 = S0 * S1 + K;
    // S_PACK_HL_B32_B16 = {S1[15:0], S0[31:16]}.
    //
    //   s8 = -1.5 / s_floor_f32 s9, s8 / s10 = 0x12343e00 / s_ceil_f16 s11, s10
    //   s_cvt_hi_f32_f16 s12, s10 / s13 = 1.0 (f16) / s_add_f16 s14, s10, s13
    //   s15 = NaN / s_minimum_f32 s16, s15, s8 / s_min_num_f16 s17, s10, s13
    //   s_fmaak_f32 s18, s8, s8, 0x40000000 / s_pack_hl_b32_b16 s19, s10, s13
    //   v2..v9 = s9 s11 s12 s14 s16 s17 s18 s19 / global_store_b128 x2
    let code = [
        0xBE8800FF, 0xBFC00000, 0xBE896108, 0xBE8A00FF, 0x12343E00, 0xBE8B6B0A, 0xBE8C6A0A,
        0xBE8D00FF, 0x00003C00, 0xA48E0D0A, 0xBE8F00FF, 0x7FC00000, 0xA790080F, 0xA5910D0A,
        0xA2920808, 0x40000000, 0x9A930D0A, 0xBEFE0081, 0x7E020280, 0x7E040209, 0x7E06020B,
        0x7E08020C, 0x7E0A020E, 0x7E0C0210, 0x7E0E0211, 0x7E100212, 0x7E120213, 0xEE074000,
        0x01000000, 0x00000001, 0xEE074000, 0x03000000, 0x00001001, 0xBFB00000,
    ];
    let (got, _) = run_wave(Isa::Gfx12, &code, &[], &[], 8);
    assert_eq!(
        got,
        [
            0xc000_0000,
            0x4000,
            0x3a46_8000,
            0x4100,
            0x7fc0_0000,
            0x3c00,
            0x4088_0000,
            0x3c00_1234
        ],
        "floor_f32, ceil_f16, cvt_hi_f32_f16, add_f16, minimum_f32, min_num_f16, fmaak, pack_hl"
    );
}

#[test]
fn gfx12_scalar_minimum_maximum_and_rounding_of_nans() {
    // RDNA4 ISA (SOP2) S_MINIMUM/S_MAXIMUM_F32/F16: "if isSignalNAN(S0) then D0 =
    // cvtToQuietNAN(S0) elsif isSignalNAN(S1) then D0 = cvtToQuietNAN(S1) elsif
    // isQuietNAN(S0) then D0 = S0 elsif isQuietNAN(S1) then D0 = S1": the NaN operand itself
    // (a signaling one first, S0 before S1), quieted by setting the quiet bit, payload and sign
    // kept. (SOP1) S_CEIL/S_TRUNC/S_FLOOR/S_RNDNE_F32 are IEEE 754 operations: a signaling NaN
    // comes back quiet (0x7fa12345 -> 0x7fe12345), a quiet NaN unchanged.
    //
    //   s8 = 0x7fa12345 (sNaN) / s_ceil_f32 s9, s8 / s10 = 0xffd23456 (-qNaN)
    //   s_minimum_f32 s11, s10, s8 / s_maximum_f32 s12, s10, 1.0
    //   s13 = 0x7c01 (f16 sNaN) / s15 = 0x3c00 / s_maximum_f16 s14, s15, s13
    //   s17 = 0xfe45 (f16 -qNaN) / s_minimum_f16 s16, s17, s15
    //   s_trunc_f32 s18, s8 / s_floor_f32 s19, s10 / s_rndne_f32 s20, s8
    //   v2..v9 = s9 s11 s12 s14 s16 s18 s19 s20 / global_store_b128 x2
    let code = [
        0xBE8800FF, 0x7FA12345, 0xBE896008, 0xBE8A00FF, 0xFFD23456, 0xA78B080A, 0xA80CF20A,
        0xBE8D00FF, 0x00007C01, 0xBE8F00FF, 0x00003C00, 0xA90E0D0F, 0xBE9100FF, 0x0000FE45,
        0xA8900F11, 0xBE926208, 0xBE93610A, 0xBE946308, 0xBEFE0081, 0x7E020280, 0x7E040209,
        0x7E06020B, 0x7E08020C, 0x7E0A020E, 0x7E0C0210, 0x7E0E0212, 0x7E100213, 0x7E120214,
        0xEE074000, 0x01000000, 0x00000001, 0xEE074000, 0x03000000, 0x00001001, 0xBFB00000,
    ];
    let (got, _) = run_wave(Isa::Gfx12, &code, &[], &[], 8);
    assert_eq!(
        got,
        [
            0x7fe1_2345,
            0x7fe1_2345,
            0xffd2_3456,
            0x7e01,
            0xfe45,
            0x7fe1_2345,
            0xffd2_3456,
            0x7fe1_2345
        ],
        "ceil_f32(sNaN), minimum_f32(qNaN, sNaN), maximum_f32(qNaN, 1), maximum_f16(1, sNaN), \
         minimum_f16(qNaN, 1), trunc_f32(sNaN), floor_f32(qNaN), rndne_f32(sNaN)"
    );
}

#[test]
fn gfx12_scalar_transcendentals_on_normal_zero_infinite_nan_and_negative_values() {
    // RDNA4 ISA 16.x (VOP3): V_S_EXP_F32 D.f32 = 2^S0, V_S_LOG_F32 = log2(S0), V_S_RCP_F32 =
    // 1 / S0, V_S_RSQ_F32 = 1 / sqrt(S0), V_S_SQRT_F32 = sqrt(S0), once per wave from a scalar
    // source to an SGPR; the _F16 forms read S0[15:0] and write D[15:0] (D[31:16] zero).
    // Edge values (the guide's tables, IEEE's): exp(-inf) = 0, exp(+inf) = +inf,
    // log(0) = -inf, log(-1) = NaN, rcp(-0) = -inf, rcp(+inf) = 0, rsq(0) = +inf,
    // rsq(-1) = NaN, sqrt(-0) = -0, sqrt(-4) = NaN, a quiet NaN passes; abs/neg, clamp and
    // omod apply.
    //
    //   s10 = 3.0, s11 = -inf, s12 = +inf, s13 = -0, s14 = qNaN, s15 = 0xabcd4200 (f16 3.0)
    //   v_s_exp_f32 s20, s10 / s21, s11 / s22, s12 / s23, -|s10| / s24, s10 clamp
    //   v_s_log_f32 s25, 0x41000000 / s26, 0 / s27, -1.0
    //   v_s_rcp_f32 s28, 4.0 / s29, s13 / s30, s12
    //   v_s_rsq_f32 s31, 4.0 / s32, 0 / s33, -1.0
    //   v_s_sqrt_f32 s34, 4.0 / s35, s13 / s36, -4.0
    //   v_s_exp_f32 s37, s14 / v_s_sqrt_f32 s38, 4.0 mul:2
    //   v_s_exp_f16 s39, s15 / v_s_log_f16 s40, 0x4800 / v_s_rcp_f16 s41, 4.0
    //   v_s_rsq_f16 s42, 4.0 / v_s_sqrt_f16 s43, 4.0 / v_s_rcp_f16 s44, 0
    //   v_s_log_f16 s45, 0 / v_s_sqrt_f16 s46, -1.0 / v_s_exp_f16 s47, -s15
    //   v_mov_b32 v1..v28, s20..s47 / global_store_b128 x7 (OUT)
    let code = [
        0xBE8A00FF, 0x40400000, 0xD6800014, 0x0000000A, 0xBE8B00FF, 0xFF800000, 0xD6800015,
        0x0000000B, 0xBE8C00FF, 0x7F800000, 0xD6800016, 0x0000000C, 0xD6800117, 0x2000000A,
        0xD6808018, 0x0000000A, 0xD6820019, 0x000000FF, 0x41000000, 0xD682001A, 0x00000080,
        0xD682001B, 0x000000F3, 0xD684001C, 0x000000F6, 0xBE8D00FF, 0x80000000, 0xD684001D,
        0x0000000D, 0xD684001E, 0x0000000C, 0xD686001F, 0x000000F6, 0xD6860020, 0x00000080,
        0xD6860021, 0x000000F3, 0xD6880022, 0x000000F6, 0xD6880023, 0x0000000D, 0xD6880024,
        0x000000F7, 0xBE8E00FF, 0x7FC00000, 0xD6800025, 0x0000000E, 0xD6880026, 0x080000F6,
        0xBE8F00FF, 0xABCD4200, 0xD6810027, 0x0000000F, 0xD6830028, 0x000000FF, 0x00004800,
        0xD6850029, 0x000000F6, 0xD687002A, 0x000000F6, 0xD689002B, 0x000000F6, 0xD685002C,
        0x00000080, 0xD683002D, 0x00000080, 0xD689002E, 0x000000F3, 0xD681002F, 0x2000000F,
        0x7E000280, 0x7E020214, 0x7E040215, 0x7E060216, 0x7E080217, 0x7E0A0218, 0x7E0C0219,
        0x7E0E021A, 0x7E10021B, 0x7E12021C, 0x7E14021D, 0x7E16021E, 0x7E18021F, 0x7E1A0220,
        0x7E1C0221, 0x7E1E0222, 0x7E200223, 0x7E220224, 0x7E240225, 0x7E260226, 0x7E280227,
        0x7E2A0228, 0x7E2C0229, 0x7E2E022A, 0x7E30022B, 0x7E32022C, 0x7E34022D, 0x7E36022E,
        0x7E38022F, 0xEE074000, 0x00800000, 0x00000000, 0xEE074000, 0x02800000, 0x00001000,
        0xEE074000, 0x04800000, 0x00002000, 0xEE074000, 0x06800000, 0x00003000, 0xEE074000,
        0x08800000, 0x00004000, 0xEE074000, 0x0A800000, 0x00005000, 0xEE074000, 0x0C800000,
        0x00006000, 0xBFB00000,
    ];
    let (got, _) = run_wave(Isa::Gfx12, &code, &[], &[], 28);
    let nan32 = |x: u32| x & 0x7fff_ffff > 0x7f80_0000 && x & 0x0040_0000 != 0;
    let nan16 = |x: u32| x >> 16 == 0 && x & 0x7fff > 0x7c00 && x & 0x0200 != 0;
    for (k, name) in [(7, "log(-1)"), (13, "rsq(-1)"), (16, "sqrt(-4)")] {
        assert!(nan32(got[k]), "{name}: {:#x} is not a quiet NaN", got[k]);
    }
    assert!(nan16(got[26]), "sqrt_f16(-1): {:#x}", got[26]);
    let mut fixed = got.clone();
    for k in [7, 13, 16, 26] {
        fixed[k] = 0;
    }
    assert_eq!(
        fixed,
        [
            0x4100_0000,
            0,
            0x7f80_0000,
            0x3e00_0000,
            0x3f80_0000,
            0x4040_0000,
            0xff80_0000,
            0,
            0x3e80_0000,
            0xff80_0000,
            0,
            0x3f00_0000,
            0x7f80_0000,
            0,
            0x4000_0000,
            0x8000_0000,
            0,
            0x7fc0_0000,
            0x4080_0000,
            0x4800,
            0x4200,
            0x3400,
            0x3800,
            0x4000,
            0x7c00,
            0xfc00,
            0,
            0x3000
        ],
        "exp 3, -inf, +inf, -|3|, 3 clamp; log 8, 0, (-1); rcp 4, -0, +inf; rsq 4, 0, (-1); \
         sqrt 4, -0, (-4); exp NaN; sqrt 4 mul:2; f16: exp 3, log 8, rcp 4, rsq 4, sqrt 4, \
         rcp 0, log 0, (sqrt -1), exp -3"
    );
}

#[test]
fn gfx11_cndmask_b16_f16_maxmin_div_fixup_dots_packed_conversions_cube_and_dx9_zero() {
    // RDNA3 ISA (VOP3/VOP2/VOP3P): V_CNDMASK_B16 D.u16 = mask ? S1 : S0 (the other half kept);
    // V_MAXMIN_F16 = min(max(S0, S1), S2), V_MINMAX_F16 = max(min(S0, S1), S2);
    // V_DIV_FIXUP_F16 of x / 0 = +inf; V_DOT2_F16_F16 / V_DOT2_BF16_BF16 = S0.lo * S1.lo +
    // S0.hi * S1.hi + S2; V_CVT_PK_I16/U16_F32 truncate and saturate, {cvt(S1), cvt(S0)};
    // V_CVT_PK_NORM_*: snorm = rne(clamp(x, -1, 1) * 32767), unorm = rne(clamp(x, 0, 1) *
    // 65535); V_CVT_PK_U8_F32 puts rne(S0) in byte S1[1:0] of S2; V_CUBE* of (1, -2, 0.5):
    // y-major, negative: id 3, sc = x, tc = -z, ma = 2y; V_MULLIT_F32 = S0 * S1, or -MAX_FLOAT
    // when S2 <= 0; V_MUL_DX9_ZERO_F32 0 * inf = 0; V_FMA/FMAC_DX9_ZERO with a zero factor =
    // S2; VOP3P V_DOT2_F32_F16/BF16, V_DOT4_I32_IU8 (neg_lo[0]/[1] make A/B signed),
    // V_DOT4_U32_U8, V_DOT8_U32_U4, V_DOT8_I32_IU4 = sum of products + S2; VOP2
    // V_DOT2ACC_F32_F16 accumulates into D.
    //
    //   v1 = 0x3c004000 (f16 hi 1, lo 2), v2 = 0x42004400 (hi 3, lo 4), v3 = 0xdead0000
    //   s10 = exec_lo, s11 = 0 / v_cndmask_b16 v3, v1, v2, s10 / v13 = 0xbeef0000
    //   v_cndmask_b16 v13, v1, v2, s11 / v_maxmin_f16 v4, v1, v2, 0x3e00
    //   v_minmax_f16 v5, v1, v2, 1.0 / v_div_fixup_f16 v6, v1, 0, v2
    //   v_dot2_f16_f16 v7, v1, v2, 1.0 / v9 = 0x3f804000, v10 = 0x3f80
    //   v_dot2_bf16_bf16 v8, v9, v9, v10 / s13 = 40000.0
    //   v_cvt_pk_i16_f32 v11, -2.5, s13 / v_cvt_pk_u16_f32 v12, -1.0, 70000.0
    //   v_cvt_pk_norm_i16_f32 v14, 0.5, -2.0 / v_cvt_pk_norm_u16_f32 v15, 0.5, 2.0
    //   v17 = 0xb8003800 / v_cvt_pk_norm_u16_f16 v16, v17, v17 op_sel:[0,1,0]
    //   v18 = 0x11223344 / v_cvt_pk_u8_f32 v18, 200.5, 2, v18
    //   v_cubeid/sc/tc/ma_f32 v19..v22, 1.0, -2.0, 0.5
    //   v_mullit_f32 v23, 2.0, 3.0, 1.0 / v_mullit_f32 v24, 2.0, 3.0, 0
    //   s12 = +inf / v_mul_dx9_zero_f32_e64 v25, 0, s12 / v28 = 3.0
    //   v_mul_dx9_zero_f32_e32 v26, 2.0, v28 / v_fma_dx9_zero_f32 v27, 0, s12, 4.0
    //   v_dot2_f32_f16 v29, v1, v2, 1.0 / v32 = 0xff020304, v33 = 0x01020304
    //   v_dot4_i32_iu8 v30, v32, v33, 10 neg_lo:[1,1,0] / v_dot4_u32_u8 v31, v32, v33, 10
    //   v36 = 0x11111111, v37 = 0x22222222 / v_dot8_u32_u4 v32, v36, v37, 0
    //   v36 = 15 / v_dot8_i32_iu4 v33, v36, 2, 0 neg_lo:[1,0,0]
    //   v34 = 1.0 / v_dot2acc_f32_f16 v34, v1, v2 / v35 = 5.0
    //   v_fmac_dx9_zero_f32_e32 v35, 0, v28 / v36 = 0x3f804000
    //   v_dot2_f32_bf16 v36, v36, v36, 1.0 / stores of v3..v36
    let code = [
        0x7E000280, 0x7E0202FF, 0x3C004000, 0x7E0402FF, 0x42004400, 0x7E0602FF, 0xDEAD0000,
        0x7E080280, 0x7E0A0280, 0x7E0C0280, 0x7E0E0280, 0x7E100280, 0xBE8A007E, 0xBE8B0080,
        0xD65D0003, 0x002A0501, 0x7E1A02FF, 0xBEEF0000, 0xD65D000D, 0x002E0501, 0xD6600004,
        0x03FE0501, 0x00003E00, 0xD6610005, 0x03CA0501, 0xD6540006, 0x04090101, 0xD6660007,
        0x03CA0501, 0x7E1202FF, 0x3F804000, 0x7E1402FF, 0x00003F80, 0xD6670008, 0x042A1309,
        0xBE8D00FF, 0x471C4000, 0xD706000B, 0x00001AFF, 0xC0200000, 0xD707000C, 0x0001FEF3,
        0x47886000, 0xD721000E, 0x0001EAF0, 0xD722000F, 0x0001E8F0, 0x7E2202FF, 0xB8003800,
        0xD7131010, 0x00022311, 0x7E2402FF, 0x11223344, 0xD6260012, 0x044904FF, 0x43488000,
        0xD60C0013, 0x03C1EAF2, 0xD60D0014, 0x03C1EAF2, 0xD60E0015, 0x03C1EAF2, 0xD60F0016,
        0x03C1EAF2, 0xD6180017, 0x03C9FEF4, 0x40400000, 0xD6180018, 0x0201FEF4, 0x40400000,
        0xBE8C00FF, 0x7F800000, 0xD5070019, 0x00001880, 0x7E3802FF, 0x40400000, 0x0E3438F4,
        0xD609001B, 0x03D81880, 0xCC13401D, 0x1BCA0501, 0x7E4002FF, 0xFF020304, 0x7E4202FF,
        0x01020304, 0xCC16401E, 0x7A2A4320, 0xCC17401F, 0x1A2A4320, 0x7E4802FF, 0x11111111,
        0x7E4A02FF, 0x22222222, 0xCC194020, 0x1A024B24, 0x7E48028F, 0xCC184021, 0x3A010524,
        0x7E4402F2, 0x04440501, 0x7E4602FF, 0x40A00000, 0x0C463880, 0x7E4802FF, 0x3F804000,
        0xCC1A4024, 0x1BCA4924, 0xDC760000, 0x00000300, 0xDC760010, 0x00000700, 0xDC760020,
        0x00000B00, 0xDC760030, 0x00000F00, 0xDC760040, 0x00001300, 0xDC760050, 0x00001700,
        0xDC760060, 0x00001B00, 0xDC760070, 0x00001F00, 0xDC6E0080, 0x00002300, 0xBFB00000,
    ];
    let (got, _) = run_wave(Isa::Gfx11, &code, &[], &[], 34);
    assert_eq!(
        got,
        [
            0xdead_4400,
            0x3e00,
            0x4000,
            0x7c00,
            0x4a00,
            0x40c0,
            0x3f80_4000,
            0x3f80,
            0x7fff_fffe,
            0xffff_0000,
            0xbeef_4000,
            0x8001_4000,
            0xffff_8000,
            0x8000,
            0xb800_3800,
            0x11c8_3344,
            0x4040_0000,
            0x3f80_0000,
            0xbf00_0000,
            0xc080_0000,
            0x40c0_0000,
            0xff7f_ffff,
            0,
            0x40c0_0000,
            0x4080_0000,
            0x4040_0000,
            0x4140_0000,
            38,
            294,
            16,
            0xffff_fffe,
            0x4140_0000,
            0x40a0_0000,
            0x40c0_0000
        ],
        "cndmask_b16 (mask set), maxmin_f16, minmax_f16, div_fixup_f16 x/0, dot2_f16_f16, \
         dot2_bf16_bf16, (v9, v10), cvt_pk_i16_f32, cvt_pk_u16_f32, cndmask_b16 (mask clear), \
         pk_norm_i16_f32, pk_norm_u16_f32, pk_norm_u16_f16 op_sel, (v17), cvt_pk_u8_f32, \
         cubeid, cubesc, cubetc, cubema, mullit, mullit S2 = 0, mul_dx9_zero 0 * inf, \
         mul_dx9_zero, fma_dx9_zero 0 * inf + 4, (v28), dot2_f32_f16, dot4_i32_iu8, \
         dot4_u32_u8, dot8_u32_u4, dot8_i32_iu4, dot2acc_f32_f16, fmac_dx9_zero, dot2_f32_bf16"
    );
}

#[test]
fn gfx12_ieee_minimum_maximum_family_and_num_f16_three_way_ops() {
    // RDNA4 ISA (VOP3/VOP3P): V_MINIMUM/V_MAXIMUM_F32/F16/F64 are IEEE-754-2019 minimum and
    // maximum: a NaN operand gives a NaN, -0 orders below +0; V_MINIMUM3/MAXIMUM3 of three,
    // V_MINIMUMMAXIMUM = maximum(minimum(S0, S1), S2), V_MAXIMUMMINIMUM = minimum(maximum(S0,
    // S1), S2); V_PK_MINIMUM/MAXIMUM_F16 per half. The *_num_f16 three-way forms are
    // minNum/maxNum: V_MIN3_NUM_F16, V_MAXMIN_NUM_F16 = min(max(S0, S1), S2),
    // V_MINMAX_NUM_F16 = max(min(S0, S1), S2), V_MED3_NUM_F16, V_MAX3_NUM_F16.
    //
    //   v10..v15, v20..v24 = 0 / s10 = -0.0, s11 = 0x7fc00001, s12 = f16 -0, s[14:15] = f64 -0
    //   v_minimum_f32 v3, s10, 0 / v_maximum_f32 v4, s10, 0 / v_maximum_f32 v5, 1.0, s11
    //   v_minimum3_f32 v6, 3.0, 1.0, 2.0 / v_maximum3_f32 v7, 3.0, 1.0, 2.0
    //   v_minimummaximum_f32 v8, 1.0, 2.0, 4.0 / v_maximumminimum_f32 v9, 1.0, 2.0, 4.0
    //   v_minimum_f16 v10, s12, 0 / v_maximum_f16 v11, s12, 0
    //   v_minimum3_f16 v12, 1.0, 2.0, 0.5 / v_maximumminimum_f16 v13, 1.0, 2.0, 0.5
    //   v_minimummaximum_f16 v14, 1.0, 2.0, 4.0 / v_maximum3_f16 v15, 1.0, 2.0, 4.0
    //   v_minimum_f64 v[16:17], s[14:15], 0 / v_maximum_f64 v[18:19], s[14:15], 0
    //   v_min3_num_f16 v20, 1.0, 2.0, 0.5 / v_maxmin_num_f16 v21, 1.0, 2.0, 0.5
    //   v_minmax_num_f16 v22, 1.0, 2.0, 4.0 / v_med3_num_f16 v23, 1.0, 4.0, 2.0
    //   v_max3_num_f16 v24, 1.0, 4.0, 2.0 / v26 = 0x80003c00, v27 = 0x4000
    //   v_pk_minimum_f16 v25, v26, v27 / v_pk_maximum_f16 v26, v26, v27 / stores of v3..v26
    let code = [
        0x7E000280, 0x7E140280, 0x7E160280, 0x7E180280, 0x7E1A0280, 0x7E1C0280, 0x7E1E0280,
        0x7E280280, 0x7E2A0280, 0x7E2C0280, 0x7E2E0280, 0x7E300280, 0xBE8A00FF, 0x80000000,
        0xBE8B00FF, 0x7FC00001, 0xBE8C00FF, 0x00008000, 0xBE8E0080, 0xBE8F00FF, 0x80000000,
        0xD7650003, 0x0001000A, 0xD7660004, 0x0001000A, 0xD7660005, 0x000016F2, 0xD62D0006,
        0x03D1E4FF, 0x40400000, 0xD62E0007, 0x03D1E4FF, 0x40400000, 0xD66C0008, 0x03D9E8F2,
        0xD66D0009, 0x03D9E8F2, 0xD767000A, 0x0001000C, 0xD768000B, 0x0001000C, 0xD62F000C,
        0x03C1E8F2, 0xD66F000D, 0x03C1E8F2, 0xD66E000E, 0x03D9E8F2, 0xD630000F, 0x03D9E8F2,
        0xD7410010, 0x0001000E, 0xD7420012, 0x0001000E, 0xD62B0014, 0x03C1E8F2, 0xD66B0015,
        0x03C1E8F2, 0xD66A0016, 0x03D9E8F2, 0xD6320017, 0x03D1ECF2, 0xD62C0018, 0x03D1ECF2,
        0x7E3402FF, 0x80003C00, 0x7E3602FF, 0x00004000, 0xCC1D4019, 0x1802371A, 0xCC1E401A,
        0x1802371A, 0xEE074000, 0x01800000, 0x00000000, 0xEE074000, 0x03800000, 0x00001000,
        0xEE074000, 0x05800000, 0x00002000, 0xEE074000, 0x07800000, 0x00003000, 0xEE074000,
        0x09800000, 0x00004000, 0xEE074000, 0x0B800000, 0x00005000, 0xBFB00000,
    ];
    let (mut got, _) = run_wave(Isa::Gfx12, &code, &[], &[], 24);
    assert!(
        got[2] & 0x7fff_ffff > 0x7f80_0000,
        "maximum(1, NaN): {:#x} is not a NaN",
        got[2]
    );
    got[2] = 0;
    assert_eq!(
        got,
        [
            0x8000_0000,
            0,
            0,
            0x3f80_0000,
            0x4040_0000,
            0x4080_0000,
            0x4000_0000,
            0x8000,
            0,
            0x3800,
            0x3800,
            0x4400,
            0x4400,
            0,
            0x8000_0000,
            0,
            0,
            0x3800,
            0x3800,
            0x4400,
            0x4000,
            0x4400,
            0x8000_3c00,
            0x4000
        ],
        "minimum -0/+0, maximum -0/+0, (NaN), minimum3, maximum3, minimummaximum, \
         maximumminimum, f16: minimum -0/+0, maximum -0/+0, minimum3, maximumminimum, \
         minimummaximum, maximum3, f64 minimum -0/+0 (lo, hi), maximum (lo, hi), min3_num, \
         maxmin_num, minmax_num, med3_num, max3_num, pk_minimum, pk_maximum"
    );
}

#[test]
fn gfx11_pk_fmac_f16_dual_dx9_zero_and_dot2acc_and_a_vop3p_dot_under_dpp() {
    // RDNA3 ISA: V_PK_FMAC_F16 D.h = fma(S0.h, S1.h, D.h) per half; VOPD V_DUAL_MUL_DX9_ZERO_F32
    // = +0 when a factor is 0 (0 * inf = 0), V_DUAL_DOT2ACC_F32_F16 D += S0.lo * S1.lo +
    // S0.hi * S1.hi; VOP3P V_DOT2_F32_F16 with DPP quad_perm:[1,0,3,2]: S0 comes from the
    // neighbouring lane (lane ^ 1).
    //
    //   v_mbcnt_lo_u32_b32 v0, -1, 0 / v11 = 4 * lane / v12 = 0
    //   v1 = 0x3c004000 (f16 hi 1, lo 2), v2 = 0x42004400 (hi 3, lo 4), v3 = 0x3c003c00
    //   v_pk_fmac_f16 v3, v1, v2 / v5 = +inf, v7 = 1.0
    //   v_dual_mul_dx9_zero_f32 v4, 0, v5 :: v_dual_dot2acc_f32_f16 v7, v1, v2
    //   v9 = 0 / v_cvt_f16_u16_e32 v9, v0 / v10 = 0
    //   v_dot2_f32_f16_e64_dpp v8, v9, v2, v10 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
    //   global_store_b32 v11, v8 (OUT + 4 * lane) / v20..v22 = v3, v4, v7 -> OUT + 128
    let code = [
        0xD71F0000, 0x000100C1, 0x30160082, 0x7E180280, 0x7E0202FF, 0x3C004000, 0x7E0402FF,
        0x42004400, 0x7E0602FF, 0x3C003C00, 0x78060501, 0x7E0A02FF, 0x7F800000, 0x7E0E02F2,
        0xC9D80A80, 0x04060501, 0x7E120280, 0x7E12A100, 0x7E140280, 0xCC134008, 0x1C2A04FA,
        0xFF00B109, 0xDC6A0000, 0x0000080B, 0x7E280303, 0x7E2A0304, 0x7E2C0307, 0xDC720080,
        0x0000140C, 0xBFB00000,
    ];
    let (got, _) = run_wave(Isa::Gfx11, &code, &[], &[], 35);
    let dots: Vec<u32> = (0..32u32)
        .map(|l| (4.0 * (l ^ 1) as f32).to_bits())
        .collect();
    assert_eq!(got[..32], dots[..], "dot2 under DPP: 4 * (lane ^ 1)");
    assert_eq!(
        got[32..],
        [0x4400_4880, 0, 0x4140_0000],
        "pk_fmac (hi 1*3+1 = 4, lo 2*4+1 = 9), dual mul_dx9_zero 0 * inf, dual dot2acc 1+8+3"
    );
}

#[test]
fn gfx11_m0_relative_moves_quad_sads_and_trig_preop() {
    // RDNA3 ISA: V_MOVRELS_B32 D = VGPR[S0 + M0], V_MOVRELD_B32 VGPR[D + M0] = S0,
    // V_MOVRELSD_B32 VGPR[D + M0] = VGPR[S0 + M0], V_MOVRELSD_2_B32 VGPR[D + M0[25:16]] =
    // VGPR[S0 + M0[9:0]], V_SWAPREL_B32 swaps those two; V_QSAD_PK_U16_U8 = four byte SADs of
    // the windows S0[31:0], S0[39:8], S0[47:16], S0[55:24] against S1, plus the 16-bit parts
    // of S2; V_MQSAD_* skip bytes whose S1 byte is 0 (V_MQSAD_U32_U8 with 32-bit parts);
    // V_TRIG_PREOP_F64(1.0, n) = the n-th 53-bit piece of 2/pi, scaled by 2^(-53(n+1)).
    //
    //   v1..v6 = 11, 22, 33, 44, 55, 0x42 / m0 = 2 / v_movrels_b32 v10, v1
    //   v_movreld_b32 v1, 77 / v_movrelsd_b32 v4, v2 / m0 = 0x20001
    //   v_movrelsd_2_b32 v1, v4 / v_swaprel_b32 v2, v1
    //   v[14:15] = 0x0807060504030201, v16 = 0x04030201, v17 = 0x04000201,
    //   v[18:19] = 0x0001000200030004 / v_qsad_pk_u16_u8 v[12:13], v[14:15], v16, v[18:19]
    //   v_mqsad_pk_u16_u8 v[20:21], v[14:15], v17, v[18:19] / v28..v31 = 100, 200, 300, 400
    //   v_mqsad_u32_u8 v[24:27], v[14:15], v17, v[28:31]
    //   v_trig_preop_f64 v[32:33], 1.0, 0 / v_trig_preop_f64 v[34:35], 1.0, 1
    //   v7 = v10 / stores of v1..v8, v12..v13, v20..v21, v24..v27, v32..v35
    let code = [
        0x7E02028B, 0x7E040296, 0x7E0602A1, 0x7E0802AC, 0x7E0A02B7, 0x7E0C02FF, 0x00000042,
        0xBEFD0082, 0x7E148701, 0x7E0284FF, 0x0000004D, 0x7E088902, 0xBEFD00FF, 0x00020001,
        0x7E029104, 0x7E04D101, 0x7E1C02FF, 0x04030201, 0x7E1E02FF, 0x08070605, 0x7E2002FF,
        0x04030201, 0x7E2202FF, 0x04000201, 0x7E2402FF, 0x00030004, 0x7E2602FF, 0x00010002,
        0xD63A000C, 0x044A210E, 0xD63B0014, 0x044A230E, 0x7E3802FF, 0x00000064, 0x7E3A02FF,
        0x000000C8, 0x7E3C02FF, 0x0000012C, 0x7E3E02FF, 0x00000190, 0xD63D0018, 0x0472230E,
        0xD72F0020, 0x000100F2, 0xD72F0022, 0x000102F2, 0x7E000280, 0x7E0E030A, 0xDC760000,
        0x00000100, 0xDC760010, 0x00000500, 0xDC6E0020, 0x00000C00, 0xDC6E0028, 0x00001400,
        0xDC760030, 0x00001800, 0xDC760040, 0x00002000, 0xBFB00000,
    ];
    let (mut got, _) = run_wave(Isa::Gfx11, &code, &[], &[], 20);
    got[7] = 0;
    assert_eq!(
        got,
        [
            11,
            44,
            55,
            22,
            55,
            44,
            33,
            0,
            0x0007_0004,
            0x000d_000a,
            0x0006_0004,
            0x000a_0008,
            100,
            203,
            306,
            409,
            0x6dc9_c882,
            0x3fe4_5f30,
            0x9d5f_47d4,
            0x3c94_a7f0
        ],
        "v1..v6 after the relative moves, movrels result, (v8), qsad_pk, mqsad_pk, mqsad_u32, \
         trig_preop(1, 0), trig_preop(1, 1)"
    );
}

#[test]
fn gfx9_legacy_f16_f32_mads_packed_conversions_cube_and_dot_products() {
    // CDNA3 ISA (VOP3/VOP2/VOP3P): V_MAD_F16 / V_FMA_LEGACY_F16 = S0 * S1 + S2 (the low half
    // written, the high cleared on gfx9); V_MAD_LEGACY_F32 and V_MUL_LEGACY_F32 use the DX9
    // rule 0 * anything = 0; V_DIV_FIXUP_F16 of x / 0 = +inf; V_CVT_PKNORM_I16_F32 = {snorm(S1),
    // snorm(S0)}; V_CVT_PKRTZ_F16_F32 = {f16(S1), f16(S0)}; V_CVT_PKACCUM_U8_F32 puts u8(S0)
    // into byte S1 of D; V_CUBEID_F32 of (1, -2, 0.5) = 3; V_DOT2C_F32_F16, V_DOT2C_I32_I16,
    // V_DOT4C_I32_I8, V_DOT8C_I32_I4 accumulate into D (signed elements); VOP3P V_DOT2_I32_I16,
    // V_DOT2_U32_U16, V_DOT4_I32_I8, V_DOT8_I32_I4, V_DOT2_F32_F16 add S2; V_EXP_LEGACY_F32 2^S0,
    // V_LOG_LEGACY_F32 log2(S0); V_TRIG_PREOP_F64(1.0, 0) = the first 53 bits of 2/pi.
    //
    //   v1 = 0x3c004000 (f16 hi 1, lo 2), v2 = 0x42004400 (hi 3, lo 4), s10 = +inf
    //   v_mad_f16 v3, v1, v2, v1 / v_mad_legacy_f32 v4, 0, s10, 1.0 / v_mul_legacy_f32 v5, 0, s10
    //   v_fma_legacy_f16 v6, v1, v2, v1 / v_div_fixup_f16 v7, v1, 0, v2
    //   v_cvt_pknorm_i16_f32 v8, 0.5, -2.0 / v_cvt_pkrtz_f16_f32 v9, 1.0, 2.0
    //   v10 = 0x11223344, s11 = 200.5 / v_cvt_pkaccum_u8_f32 v10, s11, 1
    //   v_cubeid_f32 v11, 1.0, -2.0, 0.5 / v12 = 1.0 / v_dot2c_f32_f16 v12, v1, v2
    //   v13 = 10, v14 = 0xfffe0003, v15 = 0x00050002 / v_dot2c_i32_i16 v13, v14, v15
    //   v16 = 0, v17 = 0xff020304, v18 = 0x01020304 / v_dot4c_i32_i8 v16, v17, v18
    //   v19 = 0, v20 = 15, v21 = 2 / v_dot8c_i32_i4 v19, v20, v21
    //   v_dot2_i32_i16 v22, v14, v15, 10 / v_dot2_u32_u16 v23, v14, v15, 0
    //   v_dot4_i32_i8 v24, v17, v18, 0 / v_dot8_i32_i4 v25, v20, v21, 0
    //   v_dot2_f32_f16 v26, v1, v2, 1.0 / v_exp_legacy_f32 v27, 2.0 / v_log_legacy_f32 v28, 4.0
    //   v29 = 0 / v_trig_preop_f64 v[30:31], 1.0, 0 / stores of v4..v31, v3
    let code = [
        0x7E000280, 0x7E0202FF, 0x3C004000, 0x7E0402FF, 0x42004400, 0xBE8A00FF, 0x7F800000,
        0xD2030003, 0x04060501, 0xD1C00004, 0x03C81480, 0xD2A10005, 0x00001480, 0xD1EE0006,
        0x04060501, 0xD2070007, 0x04090101, 0xD2940008, 0x0001EAF0, 0xD2960009, 0x0001E8F2,
        0x7E1402FF, 0x11223344, 0xBE8B00FF, 0x43488000, 0xD1F0000A, 0x0001020B, 0xD1C4000B,
        0x03C1EAF2, 0x7E1802F2, 0x6E180501, 0x7E1A028A, 0x7E1C02FF, 0xFFFE0003, 0x7E1E02FF,
        0x00050002, 0x701A1F0E, 0x7E200280, 0x7E2202FF, 0xFF020304, 0x7E2402FF, 0x01020304,
        0x72202511, 0x7E260280, 0x7E28028F, 0x7E2A0282, 0x74262B14, 0xD3A64016, 0x1A2A1F0E,
        0xD3A74017, 0x1A021F0E, 0xD3A84018, 0x1A022511, 0xD3AA4019, 0x1A022B14, 0xD3A3401A,
        0x1BCA0501, 0x7E3696F4, 0x7E3898F6, 0x7E3A0280, 0xD292001E, 0x000100F2, 0xDC7C8000,
        0x00000400, 0xDC7C8010, 0x00000800, 0xDC7C8020, 0x00000C00, 0xDC7C8030, 0x00001000,
        0xDC7C8040, 0x00001400, 0xDC7C8050, 0x00001800, 0xDC7C8060, 0x00001C00, 0xDC708070,
        0x00000300, 0xBF810000,
    ];
    let (got, _) = run_wave(Isa::Gfx9, &code, &[], &[], 29);
    assert_eq!(
        got,
        [
            0x3f80_0000,
            0,
            0x4900,
            0x7c00,
            0x8001_4000,
            0x4000_3c00,
            0x1122_c844,
            0x4040_0000,
            0x4140_0000,
            6,
            0xfffe_0003,
            0x0005_0002,
            28,
            0xff02_0304,
            0x0102_0304,
            0xffff_fffe,
            15,
            2,
            6,
            327_676,
            28,
            0xffff_fffe,
            0x4140_0000,
            0x4080_0000,
            0x4000_0000,
            0,
            0x6dc9_c882,
            0x3fe4_5f30,
            0x4900
        ],
        "mad_legacy_f32, mul_legacy_f32, fma_legacy_f16, div_fixup_f16, cvt_pknorm_i16_f32, \
         cvt_pkrtz, cvt_pkaccum_u8, cubeid, dot2c_f32_f16, dot2c_i32_i16, (v14, v15), \
         dot4c_i32_i8, (v17, v18), dot8c_i32_i4, (v20, v21), dot2_i32_i16, dot2_u32_u16, \
         dot4_i32_i8, dot8_i32_i4, dot2_f32_f16, exp_legacy, log_legacy, (v29), trig_preop, \
         mad_f16"
    );
}

#[test]
fn gfx12_permlane16_var_and_v_illegal() {
    // RDNA4 ISA: V_PERMLANE16_VAR_B32 D[lane] = S0[row * 16 + S1[lane][3:0]] within each row of
    // 16 lanes; V_PERMLANEX16_VAR_B32 reads the other row of the pair. With S0 = 10 * lane and
    // S1 = 15 - lane both reverse a row: lane l gets 10 * (row * 16 + 15 - l % 16), the X form
    // from the other row.
    //
    //   v_mbcnt_lo_u32_b32 v0, -1, 0 / v5 = 4 * lane / v_mul_u32_u24 v1, 10, v0
    //   v_sub_nc_u32 v2, 15, v0 / v_permlane16_var_b32 v3, v1, v2
    //   v_permlanex16_var_b32 v4, v1, v2 / stores of v3 (OUT + 4 lane), v4 (OUT + 128 + 4 lane)
    let code = [
        0xD71F0000, 0x000100C1, 0x300A0082, 0x1602008A, 0x4C04008F, 0xD70F0003, 0x00020501,
        0xD7100004, 0x00020501, 0xEE068000, 0x01800000, 0x00000005, 0xEE068000, 0x02000000,
        0x00008005, 0xBFB00000,
    ];
    let (got, _) = run_wave(Isa::Gfx12, &code, &[], &[], 64);
    let want: Vec<u32> = (0..64u32)
        .map(|k| {
            let (l, x) = (k % 32, k >= 32);
            let row = if x { (l / 16) ^ 1 } else { l / 16 };
            10 * (row * 16 + 15 - l % 16)
        })
        .collect();
    assert_eq!(
        got, want,
        "permlane16_var (lanes 0..32), permlanex16_var (32..64)"
    );

    // V_ILLEGAL (the all-zero word) raises the illegal-instruction exception: with no trap
    // handler the wave stops with a fault naming it.
    let mem = FlatMemory::new(0, MEM);
    let bytes: Vec<u8> = [0u32, 0xBFB0_0000]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    mem.poke(CODE, &bytes).unwrap();
    let l = Launch {
        isa: Isa::Gfx12,
        gfx940: true,
        pgm: CODE,
        wave64: false,
        rsrc2: 0,
        user_sgprs: vec![],
        local: [32, 1, 1],
        groups: [1, 1, 1],
        lds_bytes: 0,
        vgprs: 8,
        accum_offset: 8,
        scratch: ScratchSetup::default(),
        scratch_waves: 0,
        float: FloatMode {
            denorm32: true,
            denorm16_64: true,
        },
        budget: 1 << 10,
        clock: 0,
        xcc: Default::default(),
    };
    let e = run(&l, &mem).expect_err("v_illegal must fault");
    assert!(e.to_string().contains("v_illegal"), "{e}");
}

#[test]
fn fp8_and_bf8_conversions_on_gfx12_ocp_and_gfx942_fnuz_and_gfx12_fp8_dot() {
    // RDNA4 ISA (OCP formats: E4M3FN bias 7, no infinities, NaN 0x7f/0xff, max 448; E5M2 bias
    // 15 with infinities): V_CVT_F32_FP8/BF8 read byte 0 (VOP1), V_CVT_PK_F32_FP8 the two low
    // bytes into D, D + 1; V_CVT_PK_FP8_F32 = {cvt(S1), cvt(S0)} into D's low word (high kept),
    // round to nearest even, an overflow is NaN (E4M3) or infinity (E5M2); V_CVT_SR_FP8_F32 adds
    // S1[31:12] to S0's mantissa before rounding (1.0625 with 0 rounds to even 1.0, with
    // 0x80000 added it is 1.125); V_DOT4_F32_FP8_FP8 = S2 + the four products.
    //
    //   v1 = 0x7e014038 / v_cvt_f32_fp8_e32 v2, v1 / v3 = 0 / v_cvt_pk_f32_fp8_e32 v[4:5], v1
    //   v6 = 0x7c013c40 / v_cvt_f32_bf8_e32 v7, v6 / v8 = 0xdead0000
    //   v_cvt_pk_fp8_f32 v8, 1.0, 2.0 / v9 = 0, s6 = -0.0 / v_cvt_pk_fp8_f32 v9, 1000.0, s6
    //   v10 = v11 = 0 / v_cvt_pk_bf8_f32 v11, 1.0, 100000.0 / s5 = 0x80000000
    //   v12 = 0 / v_cvt_sr_fp8_f32 v12, 1.0625, 0 / v13 = 0 / v_cvt_sr_fp8_f32 v13, 1.0625, s5
    //   v15 = 0x38384038, v16 = 0x38383838 / v_dot4_f32_fp8_fp8 v14, v15, v16, 1.0
    //   stores of v2..v5, v7..v10, v11..v14
    let code = [
        0x7E000280, 0x7E0202FF, 0x7E014038, 0x7E04D901, 0x7E060280, 0x7E08DD01, 0x7E0C02FF,
        0x7C013C40, 0x7E0EDB06, 0x7E1002FF, 0xDEAD0000, 0xD7690008, 0x0001E8F2, 0x7E120280,
        0xBE8600FF, 0x80000000, 0xD7690009, 0x00000CFF, 0x447A0000, 0x7E140280, 0x7E160280,
        0xD76A000B, 0x0001FEF2, 0x47C35000, 0xBE8500FF, 0x80000000, 0x7E180280, 0xD76B000C,
        0x000100FF, 0x3F880000, 0x7E1A0280, 0xD76B000D, 0x00000AFF, 0x3F880000, 0x7E1E02FF,
        0x38384038, 0x7E2002FF, 0x38383838, 0xCC26400E, 0x1BCA210F, 0xEE074000, 0x01000000,
        0x00000000, 0xEE074000, 0x03800000, 0x00001000, 0xEE074000, 0x05800000, 0x00002000,
        0xBFB00000,
    ];
    let (got, _) = run_wave(Isa::Gfx12, &code, &[], &[], 12);
    assert_eq!(
        got,
        [
            0x3f80_0000,
            0,
            0x3f80_0000,
            0x4000_0000,
            0x4000_0000,
            0xdead_4038,
            0x807f,
            0,
            0x7c3c,
            0x38,
            0x39,
            0x40c0_0000
        ],
        "cvt_f32_fp8 1.0, (v3), cvt_pk_f32_fp8 1.0 2.0, cvt_f32_bf8 2.0, cvt_pk_fp8 (1, 2), \
         cvt_pk_fp8 (overflow NaN, -0), (v10), cvt_pk_bf8 (1, overflow inf), cvt_sr_fp8 tie, \
         cvt_sr_fp8 with the random bits, dot4_f32_fp8_fp8"
    );

    // CDNA3 ISA (gfx942's FNUZ formats: E4M3 bias 8 and E5M2 bias 16, no infinities, no -0,
    // the one NaN 0x80): 0x40 is 1.0, 0x48 2.0; an overflow converts to NaN, -0 to +0.
    //
    //   v1 = 0x807f4840 / v_cvt_f32_fp8_e32 v2, v1 / v3 = 0 / v_cvt_pk_f32_fp8_e32 v[4:5], v1
    //   v6 = 0xdead0000 / v_cvt_pk_fp8_f32 v6, 1.0, 2.0 / v7 = 0, s5 = 1000.0, v30 = -0.0
    //   v_cvt_pk_fp8_f32 v7, s5, v30 / v8 = 0 / v_cvt_pk_bf8_f32 v8, 1.0, 0.5 / v9 = 0
    //   stores of v2..v9
    let code = [
        0x7E000280, 0x7E0202FF, 0x807F4840, 0x7E04A901, 0x7E060280, 0x7E08AD01, 0x7E0C02FF,
        0xDEAD0000, 0xD2A20006, 0x0001E8F2, 0x7E0E0280, 0xBE8500FF, 0x447A0000, 0x7E3C02FF,
        0x80000000, 0xD2A20007, 0x00023C05, 0x7E100280, 0xD2A30008, 0x0001E0F2, 0x7E120280,
        0xDC7C8000, 0x00000200, 0xDC7C8010, 0x00000600, 0xBF810000,
    ];
    let (got, _) = run_wave(Isa::Gfx9, &code, &[], &[], 8);
    assert_eq!(
        got,
        [
            0x3f80_0000,
            0,
            0x3f80_0000,
            0x4000_0000,
            0xdead_4840,
            0x0080,
            0x3c40,
            0
        ],
        "gfx942: cvt_f32_fp8 1.0, (v3), cvt_pk_f32_fp8 1.0 2.0, cvt_pk_fp8 (1, 2), \
         cvt_pk_fp8 (overflow NaN, -0 to +0), cvt_pk_bf8 (1, 0.5), (v9)"
    );
}

#[test]
fn gfx11_mov_b16_halves_literal_and_dpp() {
    // RDNA3 ISA V_MOV_B16 (true16 VOP1 operands: bit 7 of a VGPR number is its high half):
    // D.h/l = S0.h/l, the other half of D kept; a literal is its 16 bits; under DPP
    // quad_perm:[1,0,3,2] the source half comes from lane ^ 1.
    //
    //   v_mbcnt_lo_u32_b32 v0, -1, 0 / v10 = 4 * lane / v11 = 0
    //   v1 = 0x11112222, v2 = 0xaaaabbbb / v_mov_b16_e32 v2.h, v1.l
    //   v3 = 0xccccdddd / v_mov_b16_e32 v3.l, v1.h / v4 = 0 / v_mov_b16_e32 v4.l, 0x1234
    //   v6 = 0xffff0000 / v_mov_b16_dpp v6.l, v0.l quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
    //   global_store_b32 v10, v6 (OUT + 4 lane) / global_store_b96 v11, v[2:4] (OUT + 128)
    let code = [
        0xD71F0000, 0x000100C1, 0x30140082, 0x7E160280, 0x7E0202FF, 0x11112222, 0x7E0402FF,
        0xAAAABBBB, 0x7F043901, 0x7E0602FF, 0xCCCCDDDD, 0x7E063981, 0x7E080280, 0x7E0838FF,
        0x00001234, 0x7E0C02FF, 0xFFFF0000, 0x7E0C38FA, 0xFF00B100, 0xDC6A0000, 0x0000060A,
        0xDC720080, 0x0000020B, 0xBFB00000,
    ];
    let (got, _) = run_wave(Isa::Gfx11, &code, &[], &[], 35);
    let want: Vec<u32> = (0..32u32).map(|l| 0xffff_0000 | (l ^ 1)).collect();
    assert_eq!(
        got[..32],
        want[..],
        "v_mov_b16_dpp v6.l, v0.l from lane ^ 1"
    );
    assert_eq!(
        got[32..],
        [0x2222_bbbb, 0xcccc_1111, 0x1234],
        "v2.h = v1.l, v3.l = v1.h, v4.l = 0x1234"
    );
}

#[test]
fn vop3_carry_select_and_readlane_forms_with_scalar_masks() {
    // RDNA3 ISA (gfx11) / CDNA3 ISA (gfx9) VOP3 forms with a scalar carry or mask (the list's
    // templates put a VGPR there, an invalid encoding refused by name): V_ADD_CO_CI_U32
    // (gfx9 V_ADDC_CO_U32) D = S0 + S1 + mask[lane], carry-out where it overflows;
    // V_SUB_CO_CI_U32 (V_SUBB_CO_U32) D = S0 - S1 - mask, V_SUBREV_CO_CI_U32 (V_SUBBREV_CO_U32)
    // D = S1 - S0 - mask, borrow-out where it underflows; V_CNDMASK_B32 D = mask ? S1 : S0;
    // V_READLANE_B32 S = VGPR[lane S1]. With S0 = -2 or the lane, S1 the lane or 1, and the
    // mask on lanes 0..3: carries on lanes 1.. (lane + c >= 2), borrows on lanes 0, 1 (sub)
    // and 1.. (subrev).
    //
    //   v0 = lane / v8 = 16 * lane / v1 = -2 / v2 = v0 / s10 = 15 (gfx9: s[10:11])
    //   v_add_co_ci_u32_e64 v3, s11, v1, v2, s10 / v_sub_co_ci_u32_e64 v4, s12, v2, 1, s10
    //   v_subrev_co_ci_u32_e64 v5, s13, v2, 1, s10 / v_cndmask_b32_e64 v6, 5, 7, s10
    //   v_readlane_b32 s14, v2, 5 / stores of v3..v6 per lane, s11..s14 after them
    //   (gfx9: v_addc_co_u32_e64 v4, s[12:13], ... into v4..v7, masks s12, s14, s16, s18)
    let code11 = [
        0xD71F0000, 0x000100C1, 0x30100084, 0x7E1A0280, 0x7E0202C2, 0x7E040300, 0xBE8A008F,
        0xD5200B03, 0x002A0501, 0xD5210C04, 0x00290302, 0xD5220D05, 0x00290302, 0xD5010006,
        0x00290E85, 0xD760000E, 0x00010B02, 0x7E12020B, 0x7E14020C, 0x7E16020D, 0x7E18020E,
        0xDC760000, 0x00000308, 0xDC760200, 0x0000090D, 0xBFB00000,
    ];
    let code9 = [
        0xD28C0000, 0x000100C1, 0xD28D0000, 0x000200C1, 0x24100084, 0x7E1A0280, 0x7E0202C2,
        0x7E040300, 0xBE8A018F, 0xD11C0C04, 0x002A0501, 0xD11D0E05, 0x00290302, 0xD11E1006,
        0x00290302, 0xD1000007, 0x00290E85, 0xD2890012, 0x00010B02, 0x7E14020C, 0x7E16020E,
        0x7E180210, 0x7E1A0212, 0x7E120280, 0xDC7C8000, 0x00000408, 0xDC7C8400, 0x00000A09,
        0xBF810000,
    ];
    for (isa, code, lanes) in [
        (Isa::Gfx11, &code11[..], 32u32),
        (Isa::Gfx9, &code9[..], 64),
    ] {
        let n = 4 * lanes as usize;
        let (got, _) = run_wave(isa, code, &[], &[], n + 4);
        for l in 0..lanes {
            let c = u32::from(l < 4);
            let k = 4 * l as usize;
            assert_eq!(
                got[k..k + 4],
                [
                    l.wrapping_sub(2).wrapping_add(c),
                    l.wrapping_sub(1 + c),
                    1u32.wrapping_sub(l + c),
                    if c == 1 { 7 } else { 5 }
                ],
                "{isa:?} lane {l}: add_co_ci, sub_co_ci, subrev_co_ci, cndmask"
            );
        }
        assert_eq!(
            got[n..],
            [0xffff_fffe, 0x3, 0xffff_fffe, 5],
            "{isa:?}: carry-out, borrow-outs (lanes 0..32), readlane of lane 5"
        );
    }
}
