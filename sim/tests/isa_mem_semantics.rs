//! Semantics of the memory instructions added to close the list's DS, FLAT-family and buffer
//! gaps (typed buffer accesses have their own file, `isa_buffer_formats.rs`): one lane runs
//! each program and stores what it read back; expected values follow the ISA guides' pseudo
//! code, quoted beside each test. Programs assembled with `llvm-mc-19 -show-encoding`.

use hcq_sim::isa::{FlatMemory, FloatMode, Isa, Launch, ScratchSetup, run};

const MEM: usize = 0x10_0000;
const CODE: u64 = 0x8_0000;
const OUT: u64 = 0x1000;

/// Runs `code` in one wave (wave64 on gfx9) with s[0:1] = OUT and 4 KiB of LDS; returns `n`
/// dwords of OUT.
fn run_prog(isa: Isa, code: &[u32], n: usize) -> Vec<u32> {
    let gfx9 = isa == Isa::Gfx9;
    let mem = FlatMemory::new(0, MEM);
    let bytes: Vec<u8> = code.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.poke(CODE, &bytes).unwrap();
    let lanes = if gfx9 { 64 } else { 32 };
    let l = Launch {
        isa,
        pgm: CODE,
        wave64: gfx9,
        rsrc2: 2 << 1,
        user_sgprs: vec![OUT as u32, 0],
        local: [lanes, 1, 1],
        groups: [1, 1, 1],
        lds_bytes: 0x1000,
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
    };
    run(&l, &mem).unwrap();
    let mut out = vec![0u8; 4 * n];
    mem.peek(OUT, &mut out).unwrap();
    out.chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

// gfx1100/gfx1201 source (gfx90a: ds_write2_b32, ds_wrxchg2_rtn_b32, ds_read2_b32,
// ds_write2st64_b64, ds_wrxchg2st64_rtn_b64, ds_read2st64_b64, exec and m0 set first;
// gfx1201 waits with s_wait_dscnt):
//   s_mov_b32 exec_lo, 1
//   v_mov_b32 v1, 0
//   v_mov_b32 v2, 0x11111111
//   v_mov_b32 v3, 0x22222222
//   ds_store_2addr_b32 v1, v2, v3 offset0:1 offset1:3
//   v_mov_b32 v22, 5
//   v_mov_b32 v23, 6
//   v_mov_b32 v24, 7
//   v_mov_b32 v25, 8
//   ds_store_2addr_stride64_b64 v1, v[22:23], v[24:25] offset0:1 offset1:2
//   v_mov_b32 v4, 0xaaaa
//   v_mov_b32 v5, 0xbbbb
//   ds_storexchg_2addr_rtn_b32 v[6:7], v1, v4, v5 offset0:1 offset1:3
//   ds_load_2addr_b32 v[8:9], v1 offset0:1 offset1:3
//   v_mov_b32 v10, 1
//   v_mov_b32 v11, 2
//   v_mov_b32 v12, 3
//   v_mov_b32 v13, 4
//   ds_storexchg_2addr_stride64_rtn_b64 v[14:17], v1, v[10:11], v[12:13] offset0:1 offset1:2
//   ds_load_2addr_stride64_b64 v[18:21], v1 offset0:1 offset1:2
//   s_waitcnt lgkmcnt(0)
//   v_mov_b32 v0, 0
//   global_store_b128 v0, v[6:9], s[0:1]
//   global_store_b128 v0, v[14:17], s[0:1] offset:16
//   global_store_b128 v0, v[18:21], s[0:1] offset:32
//   s_endpgm
const XCHG2_GFX1100: &[u32] = &[
    0xBEFE0081, 0x7E020280, 0x7E0402FF, 0x11111111, 0x7E0602FF, 0x22222222, 0xD8380301, 0x00030201,
    0x7E2C0285, 0x7E2E0286, 0x7E300287, 0x7E320288, 0xD93C0201, 0x00181601, 0x7E0802FF, 0x0000AAAA,
    0x7E0A02FF, 0x0000BBBB, 0xD8B80301, 0x06050401, 0xD8DC0301, 0x08000001, 0x7E140281, 0x7E160282,
    0x7E180283, 0x7E1A0284, 0xD9BC0201, 0x0E0C0A01, 0xD9E00201, 0x12000001, 0xBF89FC07, 0x7E000280,
    0xDC760000, 0x00000600, 0xDC760010, 0x00000E00, 0xDC760020, 0x00001200, 0xBFB00000,
];
const XCHG2_GFX1201: &[u32] = &[
    0xBEFE0081, 0x7E020280, 0x7E0402FF, 0x11111111, 0x7E0602FF, 0x22222222, 0xD8380301, 0x00030201,
    0x7E2C0285, 0x7E2E0286, 0x7E300287, 0x7E320288, 0xD93C0201, 0x00181601, 0x7E0802FF, 0x0000AAAA,
    0x7E0A02FF, 0x0000BBBB, 0xD8B80301, 0x06050401, 0xD8DC0301, 0x08000001, 0x7E140281, 0x7E160282,
    0x7E180283, 0x7E1A0284, 0xD9BC0201, 0x0E0C0A01, 0xD9E00201, 0x12000001, 0xBFC60000, 0x7E000280,
    0xEE074000, 0x03000000, 0x00000000, 0xEE074000, 0x07000000, 0x00001000, 0xEE074000, 0x09000000,
    0x00002000, 0xBFB00000,
];
const XCHG2_GFX90A: &[u32] = &[
    0xBEFE0181, 0xBEFC00C1, 0x7E020280, 0x7E0402FF, 0x11111111, 0x7E0602FF, 0x22222222, 0xD81C0301,
    0x00030201, 0x7E2C0285, 0x7E2E0286, 0x7E300287, 0x7E320288, 0xD89E0201, 0x00181601, 0x7E0802FF,
    0x0000AAAA, 0x7E0A02FF, 0x0000BBBB, 0xD85C0301, 0x06050401, 0xD86E0301, 0x08000001, 0x7E140281,
    0x7E160282, 0x7E180283, 0x7E1A0284, 0xD8DE0201, 0x0E0C0A01, 0xD8F00201, 0x12000001, 0xBF8CC07F,
    0x7E000280, 0xDC7C8000, 0x00000600, 0xDC7C8010, 0x00000E00, 0xDC7C8020, 0x00001200, 0xBF810000,
];

#[test]
fn ds_storexchg_2addr_swaps_two_addresses_and_returns_both_old_values() {
    // RDNA3 ISA, DS_STOREXCHG_2ADDR_RTN_B32: tmp1 = MEM[ADDR + OFFSET0 * 4]; tmp2 =
    // MEM[ADDR + OFFSET1 * 4]; MEM[..] = DATA0, DATA1; RETURN = {tmp1, tmp2}.
    // _STRIDE64_RTN_B64: offsets in units of 64 qwords (512 bytes), 64-bit data.
    for (isa, code) in [
        (Isa::Gfx11, XCHG2_GFX1100),
        (Isa::Gfx12, XCHG2_GFX1201),
        (Isa::Gfx9, XCHG2_GFX90A),
    ] {
        let got = run_prog(isa, code, 12);
        assert_eq!(
            got,
            [
                0x1111_1111,
                0x2222_2222,
                0xaaaa,
                0xbbbb,
                5,
                6,
                7,
                8,
                1,
                2,
                3,
                4
            ],
            "{isa:?}"
        );
    }
}
