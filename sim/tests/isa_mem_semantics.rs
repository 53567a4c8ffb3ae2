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
        gfx940: true,
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
        xcc: Default::default(),
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

// gfx1100/gfx1201 source (gfx90a: ds_write/read_addtid_b32, 64-bit exec, no GLOBAL
// addtid; the simulator completes LDS and memory accesses in order, so no waits):
//   s_mov_b32 m0, 16
//   v_lshlrev_b32 v12, 2, v0
//   v_add_nc_u32 v1, 0x100, v0
//   v_mov_b32 v3, 0
//   s_mov_b32 exec_lo, 0xf
//   ds_store_addtid_b32 v3 offset:8
//   s_mov_b32 exec_lo, 0xb
//   ds_store_addtid_b32 v1 offset:8
//   s_mov_b32 exec_lo, 0xf
//   ds_load_addtid_b32 v2 offset:8
//   v_mov_b32 v6, 0x200
//   v_mov_b32 v5, 10
//   ds_store_b32 v6, v5
//   v_mov_b32 v5, 100
//   ds_store_b32 v6, v5 offset:4
//   s_mov_b32 m0, 0x200
//   s_mov_b32 exec_lo, 0xb
//   ds_append v7
//   ds_consume v8
//   s_mov_b32 exec_lo, 0xf
//   ds_consume v9 offset:4
//   ds_load_b32 v10, v6 offset:4
//   s_mov_b32 exec_lo, 0xb
//   global_store_addtid_b32 v1, s[0:1] offset:128
//   s_mov_b32 exec_lo, 0xf
//   global_load_addtid_b32 v11, s[0:1] offset:128
//   global_store_b32 v12, v2, s[0:1]
//   global_store_b32 v12, v11, s[0:1] offset:32
//   s_mov_b32 exec_lo, 0xb
//   global_store_b32 v12, v7, s[0:1] offset:48
//   s_mov_b32 exec_lo, 1
//   v_mov_b32 v12, 0
//   global_store_b32 v12, v7, s[0:1] offset:16
//   global_store_b32 v12, v8, s[0:1] offset:20
//   global_store_b32 v12, v9, s[0:1] offset:24
//   global_store_b32 v12, v10, s[0:1] offset:28
//   s_endpgm
const M0_GFX1100: &[u32] = &[
    0xBEFD0090, 0x30180082, 0x4A0200FF, 0x00000100, 0x7E060280, 0xBEFE008F, 0xDAC00008, 0x00000300,
    0xBEFE008B, 0xDAC00008, 0x00000100, 0xBEFE008F, 0xDAC40008, 0x02000000, 0x7E0C02FF, 0x00000200,
    0x7E0A028A, 0xD8340000, 0x00000506, 0x7E0A02FF, 0x00000064, 0xD8340004, 0x00000506, 0xBEFD00FF,
    0x00000200, 0xBEFE008B, 0xD8F80000, 0x07000000, 0xD8F40000, 0x08000000, 0xBEFE008F, 0xD8F40004,
    0x09000000, 0xD8D80004, 0x0A000006, 0xBEFE008B, 0xDCA60080, 0x00000100, 0xBEFE008F, 0xDCA20080,
    0x0B000000, 0xDC6A0000, 0x0000020C, 0xDC6A0020, 0x00000B0C, 0xBEFE008B, 0xDC6A0030, 0x0000070C,
    0xBEFE0081, 0x7E180280, 0xDC6A0010, 0x0000070C, 0xDC6A0014, 0x0000080C, 0xDC6A0018, 0x0000090C,
    0xDC6A001C, 0x00000A0C, 0xBFB00000,
];
const M0_GFX1201: &[u32] = &[
    0xBEFD0090, 0x30180082, 0x4A0200FF, 0x00000100, 0x7E060280, 0xBEFE008F, 0xDAC00008, 0x00000300,
    0xBEFE008B, 0xDAC00008, 0x00000100, 0xBEFE008F, 0xDAC40008, 0x02000000, 0x7E0C02FF, 0x00000200,
    0x7E0A028A, 0xD8340000, 0x00000506, 0x7E0A02FF, 0x00000064, 0xD8340004, 0x00000506, 0xBEFD00FF,
    0x00000200, 0xBEFE008B, 0xD8F80000, 0x07000000, 0xD8F40000, 0x08000000, 0xBEFE008F, 0xD8F40004,
    0x09000000, 0xD8D80004, 0x0A000006, 0xBEFE008B, 0xEE0A4000, 0x00800000, 0x00008000, 0xBEFE008F,
    0xEE0A0000, 0x0000000B, 0x00008000, 0xEE068000, 0x01000000, 0x0000000C, 0xEE068000, 0x05800000,
    0x0000200C, 0xBEFE008B, 0xEE068000, 0x03800000, 0x0000300C, 0xBEFE0081, 0x7E180280, 0xEE068000,
    0x03800000, 0x0000100C, 0xEE068000, 0x04000000, 0x0000140C, 0xEE068000, 0x04800000, 0x0000180C,
    0xEE068000, 0x05000000, 0x00001C0C, 0xBFB00000,
];
const M0_GFX90A: &[u32] = &[
    0xBEFC0090, 0x24180082, 0x680200FF, 0x00000100, 0x7E060280, 0xBEFE018F, 0xD83A0008, 0x00000300,
    0xBEFE018B, 0xD83A0008, 0x00000100, 0xBEFE018F, 0xD96C0008, 0x02000000, 0x7E0C02FF, 0x00000200,
    0x7E0A028A, 0xD81A0000, 0x00000506, 0x7E0A02FF, 0x00000064, 0xD81A0004, 0x00000506, 0xBEFC00FF,
    0x00000200, 0xBEFE018B, 0xD97C0000, 0x07000000, 0xD97A0000, 0x08000000, 0xBEFE018F, 0xD97A0004,
    0x09000000, 0xD86C0004, 0x0A000006, 0xBEFE018B, 0xBEFE018F, 0xDC708000, 0x0000020C, 0xBEFE018B,
    0xDC708030, 0x0000070C, 0xBEFE0181, 0x7E180280, 0xDC708010, 0x0000070C, 0xDC708014, 0x0000080C,
    0xDC708018, 0x0000090C, 0xDC70801C, 0x00000A0C, 0xBF810000,
];

#[test]
fn ds_addtid_append_consume_and_global_addtid_address_by_m0_and_lane() {
    // RDNA3 ISA: DS_STORE_ADDTID_B32: MEM[M0 + OFFSET + laneID * 4] = DATA0;
    // DS_LOAD_ADDTID_B32 reads it back; DS_APPEND/DS_CONSUME add/subtract the number of
    // active lanes to the dword at M0 + OFFSET and return its old value to every active
    // lane; GLOBAL_STORE/LOAD_ADDTID_B32: MEM[SADDR + OFFSET + laneID * 4]. Lanes 0, 1, 3
    // (EXEC 0xb) write; lane 2 keeps what was there.
    for (isa, code) in [
        (Isa::Gfx11, M0_GFX1100),
        (Isa::Gfx12, M0_GFX1201),
        (Isa::Gfx9, M0_GFX90A),
    ] {
        let got = run_prog(isa, code, 40);
        let addtid = [0x100, 0x101, 0, 0x103];
        assert_eq!(got[..4], addtid, "{isa:?}: ds addtid");
        // append from 10 by 3 lanes; consume back from 13; consume at +4 by 4 lanes.
        assert_eq!(got[4..8], [10, 13, 100, 96], "{isa:?}: append/consume");
        assert_eq!(
            got[12..16],
            [10, 10, 0, 10],
            "{isa:?}: append's value in every lane"
        );
        if isa != Isa::Gfx9 {
            assert_eq!(got[8..12], addtid, "{isa:?}: global addtid load");
            assert_eq!(got[32..36], addtid, "{isa:?}: global addtid store");
        }
    }
}

/// As [`run_prog`], with `data` at DATA, s[2:3] = DATA and s[4:7] a raw buffer descriptor over
/// it (NUM_RECORDS 0x1000); returns `n` dwords of OUT and 4 dwords of DATA from 64.
fn run_data(isa: Isa, code: &[u32], data: &[u32], n: usize) -> (Vec<u32>, Vec<u32>) {
    const DATA: u64 = 0x2000;
    let gfx9 = isa == Isa::Gfx9;
    let mem = FlatMemory::new(0, MEM);
    let bytes: Vec<u8> = code.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.poke(CODE, &bytes).unwrap();
    let d: Vec<u8> = data.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.poke(DATA, &d).unwrap();
    let word3 = if gfx9 { 0x0002_7FAC } else { 0x3101_6FAC };
    let lanes = if gfx9 { 64 } else { 32 };
    let l = Launch {
        isa,
        gfx940: true,
        pgm: CODE,
        wave64: gfx9,
        rsrc2: 8 << 1,
        user_sgprs: vec![OUT as u32, 0, DATA as u32, 0, DATA as u32, 0, 0x1000, word3],
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
        xcc: Default::default(),
    };
    run(&l, &mem).unwrap();
    let read = |at: u64, k: usize| -> Vec<u32> {
        let mut out = vec![0u8; 4 * k];
        mem.peek(at, &mut out).unwrap();
        out.chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    (read(OUT, n), read(DATA + 64, 4))
}

// gfx1100:
//   s_mov_b32 exec_lo, 0xf
//   s_mov_b32 m0, 0x100
//   v_lshlrev_b32 v1, 2, v0
//   buffer_load_lds_b32 v1, s[4:7], 0 offen
//   buffer_load_lds_i8 v1, s[4:7], 0 offen offset:16
//   buffer_load_lds_u16 v1, s[4:7], 0 offen offset:32
//   ds_load_b32 v2, v1 offset:256
//   ds_load_b32 v3, v1 offset:272
//   ds_load_b32 v4, v1 offset:288
//   global_store_b32 v1, v2, s[0:1]
//   global_store_b32 v1, v3, s[0:1] offset:16
//   global_store_b32 v1, v4, s[0:1] offset:32
//   s_endpgm
const LDS_DMA_GFX1100: &[u32] = &[
    0xBEFE008F, 0xBEFD00FF, 0x00000100, 0x30020082, 0xE0C40000, 0x80410001, 0xE0B80010, 0x80410001,
    0xE0BC0020, 0x80410001, 0xD8D80100, 0x02000001, 0xD8D80110, 0x03000001, 0xD8D80120, 0x04000001,
    0xDC6A0000, 0x00000201, 0xDC6A0010, 0x00000301, 0xDC6A0020, 0x00000401, 0xBFB00000,
];
// gfx942:
//   s_mov_b64 exec, 0xf
//   v_lshlrev_b32 v1, 2, v0
//   s_mov_b32 m0, 0x100
//   global_load_lds_dword v1, s[2:3]
//   s_mov_b32 m0, 0x110
//   global_load_lds_sbyte v1, s[2:3] offset:16
//   s_mov_b32 m0, 0x120
//   global_load_lds_ushort v1, s[2:3] offset:32
//   s_mov_b32 m0, -1
//   ds_read_b32 v2, v1 offset:256
//   ds_read_b32 v3, v1 offset:272
//   ds_read_b32 v4, v1 offset:288
//   global_store_dword v1, v2, s[0:1]
//   global_store_dword v1, v3, s[0:1] offset:16
//   global_store_dword v1, v4, s[0:1] offset:32
//   s_mov_b64 exec, 1
//   v_mov_b32 v5, 0x12345678
//   v_mov_b32 v6, 0
//   ds_write_b32 v6, v5 offset:320
//   s_mov_b32 m0, 0x100
//   buffer_store_lds_dword s[4:7], 0 offset:64 lds
//   global_load_dword v7, v6, s[2:3] offset:64
//   global_store_dword v6, v7, s[0:1] offset:48
//   s_endpgm
const LDS_DMA_GFX942: &[u32] = &[
    0xBEFE018F, 0x24020082, 0xBEFC00FF, 0x00000100, 0xDCA88000, 0x00020001, 0xBEFC00FF, 0x00000110,
    0xDC9C8010, 0x00020001, 0xBEFC00FF, 0x00000120, 0xDCA08020, 0x00020001, 0xBEFC00C1, 0xD86C0100,
    0x02000001, 0xD86C0110, 0x03000001, 0xD86C0120, 0x04000001, 0xDC708000, 0x00000201, 0xDC708010,
    0x00000301, 0xDC708020, 0x00000401, 0xBEFE0181, 0x7E0A02FF, 0x12345678, 0x7E0C0280, 0xD81A0140,
    0x00000506, 0xBEFC00FF, 0x00000100, 0xE0F50040, 0x80010000, 0xDC508040, 0x07020006, 0xDC708030,
    0x00000706, 0xBF810000,
];

#[test]
fn lds_dma_loads_write_lds_at_m0_plus_lane_and_store_lds_dword_writes_memory() {
    // RDNA3 ISA BUFFER_LOAD_LDS_B32/I8/U16 and CDNA3 GLOBAL_LOAD_LDS_DWORD/SBYTE/USHORT: the
    // loaded value, extended to a dword (signed for i8), goes to LDS at M0 + lane * 4 (plus
    // the MUBUF instruction offset); CDNA3 BUFFER_STORE_LDS_DWORD stores the LDS dword at
    // M0 + offset to the buffer address.
    let mut data = vec![0u32; 20];
    for l in 0..4u32 {
        data[l as usize] = 0x1111_1111 * (l + 1);
        data[4 + l as usize] = 0x80 + l;
        data[8 + l as usize] = 0x8000 + l;
    }
    let want: Vec<u32> = (0..4u32)
        .map(|l| 0x1111_1111 * (l + 1))
        .chain((0..4).map(|l| 0xFFFF_FF80 + l))
        .chain((0..4).map(|l| 0x8000 + l))
        .collect();
    let (got, _) = run_data(Isa::Gfx11, LDS_DMA_GFX1100, &data, 12);
    let pick = |g: &[u32]| -> Vec<u32> {
        [0..4, 4..8, 8..12]
            .into_iter()
            .flat_map(|r| g[r].to_vec())
            .collect()
    };
    assert_eq!(pick(&got), want, "gfx1100 buffer_load_lds_*");
    let (got, stored) = run_data(Isa::Gfx9, LDS_DMA_GFX942, &data, 13);
    assert_eq!(pick(&got), want, "gfx942 global_load_lds_*");
    assert_eq!(
        (got[12], stored[0]),
        (0x1234_5678, 0x1234_5678),
        "buffer_store_lds_dword"
    );
}

// gfx1100 source (gfx90a: ds_write2_b32/ds_read2_b32, 64-bit exec, m0 set):
//   s_mov_b32 exec_lo, 1
//   v_mov_b32 v1, 0x105
//   v_mov_b32 v2, 0x11111111
//   v_mov_b32 v3, 0x22222222
//   v_mov_b32 v10, 0x100
//   ds_store_2addr_b32 v10, v2, v3 offset0:2 offset1:3
//   v_mov_b32 v4, 0x80000005
//   v_mov_b32 v5, 7
//   ds_condxchg32_rtn_b64 v[6:7], v1, v[4:5] offset:4
//   ds_load_2addr_b32 v[8:9], v10 offset0:2 offset1:3
//   v_mov_b32 v0, 0
//   global_store_b128 v0, v[6:9], s[0:1]
//   s_endpgm
const CONDXCHG_GFX1100: &[u32] = &[
    0xBEFE0081, 0x7E0202FF, 0x00000105, 0x7E0402FF, 0x11111111, 0x7E0602FF, 0x22222222, 0x7E1402FF,
    0x00000100, 0xD8380302, 0x0003020A, 0x7E0802FF, 0x80000005, 0x7E0A0287, 0xD9F80004, 0x06000401,
    0xD8DC0302, 0x0800000A, 0x7E000280, 0xDC760000, 0x00000600, 0xBFB00000,
];
const CONDXCHG_GFX90A: &[u32] = &[
    0xBEFE0181, 0xBEFC00C1, 0x7E0202FF, 0x00000105, 0x7E0402FF, 0x11111111, 0x7E0602FF, 0x22222222,
    0x7E1402FF, 0x00000100, 0xD81C0302, 0x0003020A, 0x7E0802FF, 0x80000005, 0x7E0A0287, 0xD8FC0004,
    0x06000401, 0xD86E0302, 0x0800000A, 0x7E000280, 0xDC7C8000, 0x00000600, 0xBF810000,
];

#[test]
fn ds_condxchg32_writes_the_dwords_whose_data_bit_31_is_set() {
    // CDNA3 ISA DS_CONDXCHG32_RTN_B64: ADDR0 = (ADDR + offset) & 0xfff8 (0x105 + 4 -> 0x108),
    // ADDR1 = ADDR0 + 4; both old dwords return; a dword is written (bit 31 cleared) only when
    // its data's bit 31 is set.
    for (isa, code) in [(Isa::Gfx11, CONDXCHG_GFX1100), (Isa::Gfx9, CONDXCHG_GFX90A)] {
        let got = run_prog(isa, code, 4);
        assert_eq!(got, [0x1111_1111, 0x2222_2222, 5, 0x2222_2222], "{isa:?}");
    }
}

// gfx90a:
//   s_mov_b32 s4, 1
//   s_mov_b32 s10, 0xabcd1234
//   s_mov_b32 s11, 0x5678
//   s_scratch_store_dwordx2 s[10:11], s[2:3], s4
//   s_waitcnt lgkmcnt(0)
//   s_scratch_load_dword s12, s[2:3], 0x44
//   s_scratch_load_dwordx2 s[14:15], s[2:3], s4
//   s_waitcnt lgkmcnt(0)
//   v_mov_b32 v0, 0
//   v_mov_b32 v2, s12
//   v_mov_b32 v3, s14
//   v_mov_b32 v4, s15
//   v_mov_b32 v5, 0
//   global_store_dwordx4 v0, v[2:5], s[0:1]
//   s_endpgm
const SCALAR_SCRATCH_GFX90A: &[u32] = &[
    0xBE840081, 0xBE8A00FF, 0xABCD1234, 0xBE8B00FF, 0x00005678, 0xC0580281, 0x00000004, 0xBF8CC07F,
    0xC0160301, 0x00000044, 0xC0180381, 0x00000004, 0xBF8CC07F, 0x7E000280, 0x7E04020C, 0x7E06020E,
    0x7E08020F, 0x7E0A0280, 0xDC7C8000, 0x00000200, 0xBF810000,
];

#[test]
fn gfx9_scalar_scratch_counts_the_sgpr_offset_in_64_byte_units() {
    // CDNA3 ISA S_SCRATCH_LOAD/STORE_DWORD*: addr = SBASE + SGPR offset * 64 (the SGPR holds
    // an unsigned 64-byte offset, as other scratch operations) or + the signed byte
    // immediate. s4 = 1: the pair goes to SBASE + 64; the immediate 0x44 reads its second
    // dword.
    let (got, stored) = run_data(Isa::Gfx9, SCALAR_SCRATCH_GFX90A, &[0; 32], 3);
    assert_eq!(got, [0x5678, 0xabcd_1234, 0x5678]);
    assert_eq!(stored[..2], [0xabcd_1234, 0x5678]);
}
