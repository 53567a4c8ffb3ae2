//! Typed buffer loads and stores (MUBUF `*_format_*`, MTBUF) against the buffer format
//! tables of the ISA guides (CDNA3 ISA "Buffer Instructions": DATA_FORMAT/NUM_FORMAT; RDNA3
//! and RDNA4 ISA: the unified FORMAT): UNORM is value / (2^n - 1), SNORM value / (2^(n-1) - 1)
//! clamped to -1, USCALED/SSCALED the integer as a float, UINT/SINT the integer (zero- or
//! sign-extended), FLOAT 32/16-bit IEEE or the unsigned 11/10-bit floats (5-bit exponent);
//! components the format lacks load as 0 (x, y, z) or 1 (w); the descriptor's DST_SEL
//! (identity here) picks them; d16 packs f16 (or 16-bit integers) into halves, d16_hi into the
//! high half keeping the low one. Stores convert back (normalized values clamped, rounded to
//! nearest even) and write only the components both have. One lane runs; the programs are
//! assembled with `llvm-mc-19 -show-encoding` (gfx90a source below; gfx1100/gfx1201 use the
//! same steps with BUF_FMT_* names, `_d16_` before `format`, `null` soffset on gfx1201).

use hcq_sim::isa::{FlatMemory, FloatMode, Isa, Launch, ScratchSetup, run};

const MEM: usize = 0x10_0000;
const CODE: u64 = 0x8_0000;
const OUT: u64 = 0x1000;
const DATA: u64 = 0x2000;
/// A result slot the program does not write.
const NOT_WRITTEN: u32 = 0xDEAD_0000;

/// Runs `code` in one wave with s[0:1] = OUT, s[2:3] = DATA, s[4:7] a buffer descriptor over
/// DATA (NUM_RECORDS 0x1000) with `word3`; returns 24 dwords of OUT and 16 bytes of DATA
/// from offset 32.
fn run_fmt(isa: Isa, code: &[u32], data: &[u32], word3: u32) -> (Vec<u32>, Vec<u8>) {
    let gfx9 = isa == Isa::Gfx9;
    let mem = FlatMemory::new(0, MEM);
    let bytes: Vec<u8> = code.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.poke(CODE, &bytes).unwrap();
    let d: Vec<u8> = data.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.poke(DATA, &d).unwrap();
    let sgprs = vec![OUT as u32, 0, DATA as u32, 0, DATA as u32, 0, 0x1000, word3];
    let lanes = if gfx9 { 64 } else { 32 };
    let l = Launch {
        isa,
        gfx940: true,
        pgm: CODE,
        wave64: gfx9,
        rsrc2: 8 << 1,
        user_sgprs: sgprs,
        local: [lanes, 1, 1],
        groups: [1, 1, 1],
        lds_bytes: 0,
        vgprs: 64,
        accum_offset: 64,
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
    let mut out = vec![0u8; 96];
    mem.peek(OUT, &mut out).unwrap();
    let mut st = vec![0u8; 16];
    mem.peek(DATA + 32, &mut st).unwrap();
    let w = out
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    (w, st)
}

// gfx90a source (v[4:7] .. v24 stored to OUT as 24 dwords from v4):
//   s_mov_b64 exec, 1
//   v_mov_b32 v19, 0xbeef0000
//   v_mov_b32 v24, 0x1234
//   buffer_load_format_xyzw v[4:7], off, s[4:7], 0
//   tbuffer_load_format_xy v[8:9], off, s[4:7], 0 format:[BUF_DATA_FORMAT_16_16,BUF_NUM_FORMAT_SNORM] offset:4
//   tbuffer_load_format_xyz v[10:12], off, s[4:7], 0 format:[BUF_DATA_FORMAT_10_11_11,BUF_NUM_FORMAT_FLOAT] offset:8
//   tbuffer_load_format_xyzw v[14:17], off, s[4:7], 0 format:[BUF_DATA_FORMAT_2_10_10_10,BUF_NUM_FORMAT_SINT] offset:12
//   tbuffer_load_format_d16_xyz v[18:19], off, s[4:7], 0 format:[BUF_DATA_FORMAT_8_8,BUF_NUM_FORMAT_USCALED] offset:16
//   tbuffer_load_format_xyzw v[20:23], off, s[4:7], 0 format:[BUF_DATA_FORMAT_32,BUF_NUM_FORMAT_FLOAT] offset:20
//   buffer_load_format_d16_hi_x v24, off, s[4:7], 0 offset:24
//   v_mov_b32 v30, 0.5
//   v_mov_b32 v31, 2.0
//   v_mov_b32 v32, -1.0
//   v_mov_b32 v33, 0xbe800000
//   tbuffer_store_format_xy v[30:31], off, s[4:7], 0 format:[BUF_DATA_FORMAT_16_16,BUF_NUM_FORMAT_UNORM] offset:32
//   tbuffer_store_format_xyzw v[30:33], off, s[4:7], 0 format:[BUF_DATA_FORMAT_8_8_8_8,BUF_NUM_FORMAT_SNORM] offset:36
//   v_mov_b32 v34, 0x42
//   tbuffer_store_format_x v34, off, s[4:7], 0 format:[BUF_DATA_FORMAT_8_8_8_8,BUF_NUM_FORMAT_UINT] offset:40
//   v_mov_b32 v35, 0x3c00c000
//   tbuffer_store_format_d16_xy v35, off, s[4:7], 0 format:[BUF_DATA_FORMAT_16_16,BUF_NUM_FORMAT_FLOAT] offset:44
//   v_mov_b32 v0, 0
//   global_store_dwordx4 v0, v[4:7], s[0:1]
//   global_store_dwordx4 v0, v[8:11], s[0:1] offset:16
//   global_store_dwordx4 v0, v[12:15], s[0:1] offset:32
//   global_store_dwordx4 v0, v[16:19], s[0:1] offset:48
//   global_store_dwordx4 v0, v[20:23], s[0:1] offset:64
//   global_store_dwordx4 v0, v[24:27], s[0:1] offset:80
//   s_endpgm
const GFX90A: &[u32] = &[
    0xBEFE0181, 0x7E2602FF, 0xBEEF0000, 0x7E3002FF, 0x00001234, 0xE00C0000, 0x80010400, 0xE8A88004,
    0x80010800, 0xEBB10008, 0x80010A00, 0xEAC9800C, 0x80010E00, 0xE91D0010, 0x80011200, 0xEBA18014,
    0x80011400, 0xE0980018, 0x80011800, 0x7E3C02F0, 0x7E3E02F4, 0x7E4002F3, 0x7E4202FF, 0xBE800000,
    0xE82A8020, 0x80011E00, 0xE8D38024, 0x80011E00, 0x7E4402FF, 0x00000042, 0xEA520028, 0x80012200,
    0x7E4602FF, 0x3C00C000, 0xEBAE802C, 0x80012300, 0x7E000280, 0xDC7C8000, 0x00000400, 0xDC7C8010,
    0x00000800, 0xDC7C8020, 0x00000C00, 0xDC7C8030, 0x00001000, 0xDC7C8040, 0x00001400, 0xDC7C8050,
    0x00001800, 0xBF810000,
];
const GFX1100: &[u32] = &[
    0xBEFE0081, 0x7E2602FF, 0xBEEF0000, 0x7E3002FF, 0x00001234, 0xE00C0000, 0x80010400, 0xE8C08004,
    0x80010800, 0xE8F10008, 0x80010A00, 0xE949800C, 0x80010E00, 0xE8850010, 0x80011200, 0xE8B18014,
    0x80011400, 0xE0980018, 0x80011800, 0x7E3C02F0, 0x7E3E02F4, 0x7E4002F3, 0x7E4202FF, 0xBE800000,
    0xE8BA8020, 0x80011E00, 0xE95B8024, 0x80011E00, 0x7E4402FF, 0x00000042, 0xE9720028, 0x80012200,
    0x7E4602FF, 0x3C00C000, 0xE8EE802C, 0x80012300, 0x7E000280, 0xDC760000, 0x00000400, 0xDC760010,
    0x00000800, 0xDC760020, 0x00000C00, 0xDC760030, 0x00001000, 0xDC760040, 0x00001400, 0xDC760050,
    0x00001800, 0xBFB00000,
];
const GFX1201: &[u32] = &[
    0xBEFE0081, 0x7E2602FF, 0xBEEF0000, 0x7E3002FF, 0x00001234, 0xC400C07C, 0x00800804, 0x00000000,
    0xC420407C, 0x0C000808, 0x00000400, 0xC420807C, 0x0F00080A, 0x00000800, 0xC420C07C, 0x1480080E,
    0x00000C00, 0xC422807C, 0x08000812, 0x00001000, 0xC420C07C, 0x0B000814, 0x00001400, 0xC409807C,
    0x00800818, 0x00001800, 0x7E3C02F0, 0x7E3E02F4, 0x7E4002F3, 0x7E4202FF, 0xBE800000, 0xC421407C,
    0x0B80081E, 0x00002000, 0xC421C07C, 0x1580081E, 0x00002400, 0x7E4402FF, 0x00000042, 0xC421007C,
    0x17000822, 0x00002800, 0x7E4602FF, 0x3C00C000, 0xC423407C, 0x0E800823, 0x00002C00, 0x7E000280,
    0xEE074000, 0x02000000, 0x00000000, 0xEE074000, 0x04000000, 0x00001000, 0xEE074000, 0x06000000,
    0x00002000, 0xEE074000, 0x08000000, 0x00003000, 0xEE074000, 0x0A000000, 0x00004000, 0xEE074000,
    0x0C000000, 0x00005000, 0xBFB00000,
];

#[test]
fn typed_buffer_loads_and_stores_convert_by_the_format_tables() {
    let f = |v: f32| v.to_bits();
    let data = [
        // 0: 8_8_8_8 (the descriptor's format): 0, 128, 255, 51.
        0x33ff_8000,
        // 4: 16_16 SNORM: 0x7fff, 0x8000.
        0x8000_7fff,
        // 8: 10_11_11 FLOAT: x (11 bits) 1.0, y (11 bits) 2.0, z (10 bits) 0.5.
        0x3C0 | 0x400 << 11 | 0x1C0 << 22,
        // 12: 2_10_10_10 SINT: x -1, y 511, z -512, w 1.
        0x3ff | 0x1ff << 10 | 0x200 << 20 | 1 << 30,
        // 16: 8_8 USCALED: 3, 200.
        0x0000_c803,
        // 20: 32 FLOAT: 1.5.
        f(1.5),
        // 24: the descriptor's 8_8_8_8 UNORM: x 255.
        0x0000_00ff,
        0,
        // 32.. stores; 40: kept bytes.
        0,
        0,
        0xAAAA_AAAA,
        0,
    ];
    // DST_SEL x y z w, and 8_8_8_8 UNORM: gfx9 DATA_FORMAT 10 NUM_FORMAT 0; gfx10+ FORMAT 42.
    for (isa, code, word3) in [
        (Isa::Gfx9, GFX90A, 0x0005_0FAC),
        (Isa::Gfx11, GFX1100, 0x3102_AFAC),
        (Isa::Gfx12, GFX1201, 0x3102_AFAC),
    ] {
        let (got, st) = run_fmt(isa, code, &data, word3);
        let want = [
            // UNORM: n / 255.
            0,
            f((128.0f64 / 255.0) as f32),
            f(1.0),
            f(0.2),
            // SNORM: 0x7fff is 1, 0x8000 (-32768 / 32767) clamps to -1.
            f(1.0),
            f(-1.0),
            // The unsigned small floats (v13, not written, is not compared).
            f(1.0),
            f(2.0),
            f(0.5),
            NOT_WRITTEN,
            // SINT, sign-extended per component.
            u32::MAX,
            511,
            (-512i32) as u32,
            1,
            // d16 USCALED xyz: 3.0 and 200.0 as f16, z 0 in v19's low half, its high half kept.
            0x5A40_4200,
            0xBEEF_0000,
            // 32 FLOAT xyzw: y, z 0 and w 1.0 (the format has only x).
            f(1.5),
            0,
            0,
            f(1.0),
            // d16_hi x: 1.0 as f16 in the high half, the low half kept.
            0x3C00_1234,
            NOT_WRITTEN,
            NOT_WRITTEN,
            NOT_WRITTEN,
        ];
        // Registers the program does not write hold the wave's initial garbage.
        let got: Vec<u32> = got
            .iter()
            .zip(&want)
            .map(|(&g, &w)| if w == NOT_WRITTEN { w } else { g })
            .collect();
        assert_eq!(got, want, "{isa:?} loads");
        assert_eq!(
            st,
            [
                // 16_16 UNORM of 0.5, 2.0: 32767.5 rounds to even 0x8000; 2.0 clamps to 0xffff.
                0x00, 0x80, 0xff, 0xff,
                // 8_8_8_8 SNORM of 0.5, 2.0, -1.0, -0.25: 64 (63.5 to even), 127, -127, -32.
                64, 127, 0x81, 0xE0, // 8_8_8_8 UINT store_x: only x's byte written.
                0x42, 0xAA, 0xAA, 0xAA, // 16_16 FLOAT d16_xy: the halves as they are.
                0x00, 0xC0, 0x00, 0x3C,
            ],
            "{isa:?} stores"
        );
    }
}
