//! Encodings the gfx9 family's chips read differently: gfx90a's SCRATCH has no SVE bit (the
//! address VGPR is used exactly when SADDR is off, MI200 (CDNA2) ISA guide, scratch
//! addressing), gfx942's uses SVE (bit 13) to select it (MI300 (CDNA3) ISA guide).

use hcq_sim::isa::decode::{NONE, VGPR, decode_for};
use hcq_sim::isa::disasm::disasm_target;
use hcq_sim::isa::{FlatMemory, FloatMode, Isa, Launch, ScratchSetup, run};

/// `scratch_load_dword v0, v5, off` on gfx90a (LLVM 19's encoding, SVE bit clear).
const LOAD_V5_OFF: [u32; 3] = [0xDC50_4000, 0x007F_0005, 0];
/// `scratch_load_dword v0, off, s2` on gfx90a: SADDR set, the VGPR field unused.
const LOAD_OFF_S2: [u32; 3] = [0xDC50_4000, 0x0002_0005, 0];

#[test]
fn gfx90a_scratch_uses_the_vgpr_exactly_when_saddr_is_off() {
    let i = decode_for(Isa::Gfx9, false, &LOAD_V5_OFF).unwrap();
    assert_eq!(i.src[0], VGPR + 5);
    assert_eq!(i.src[2], NONE);
    assert_eq!(
        disasm_target(Isa::Gfx9, false, &i, true),
        "scratch_load_dword v0, v5, off"
    );
    let i = decode_for(Isa::Gfx9, false, &LOAD_OFF_S2).unwrap();
    assert_eq!(i.src[0], NONE);
    assert_eq!(i.src[2], 2);
    assert_eq!(
        disasm_target(Isa::Gfx9, false, &i, true),
        "scratch_load_dword v0, off, s2"
    );
}

#[test]
fn gfx942_scratch_uses_the_vgpr_only_with_sve() {
    let i = decode_for(Isa::Gfx9, true, &LOAD_V5_OFF).unwrap();
    assert_eq!(i.src[0], NONE);
    assert_eq!(
        disasm_target(Isa::Gfx9, true, &i, true),
        "scratch_load_dword v0, off, off"
    );
    // SVE (bit 13) set: the VGPR address is used.
    let sve = [LOAD_V5_OFF[0] | 1 << 13, LOAD_V5_OFF[1], 0];
    let i = decode_for(Isa::Gfx9, true, &sve).unwrap();
    assert_eq!(i.src[0], VGPR + 5);
}

const CODE: u64 = 0x1_0000;
const SCRATCH: u64 = 0x3_0000;
const LANES: u32 = 4;

/// gfx90a (LLVM 19, -mcpu=gfx90a):
///   v_mov_b32 v1, 8; v_mov_b32 v2, 77
///   scratch_store_dword v1, v2, off offset:4      (private byte 8 + 4: dword 3)
///   s_waitcnt vmcnt(0)
///   scratch_load_dword v3, v1, off offset:4       (v3 = 77)
///   s_waitcnt vmcnt(0)
///   s_mov_b32 s4, 32
///   scratch_store_dword off, v3, s4               (private byte 32: dword 8)
///   s_waitcnt vmcnt(0); s_endpgm
const GFX90A_SCRATCH: [u32; 12] = [
    0x7E02_0288,
    0x7E04_02FF,
    77,
    0xDC70_4004,
    0x007F_0201,
    0xBF8C_0F70,
    0xDC50_4004,
    0x037F_0001,
    0xBF8C_0F70,
    0xBE84_00A0,
    0xDC70_4000,
    0x0004_0300,
];

fn run_scratch(gfx940: bool) -> FlatMemory {
    let mem = FlatMemory::new(0, 0x4_0000);
    let mut code = GFX90A_SCRATCH.to_vec();
    code.extend([0xBF8C_0F70, 0xBF81_0000]);
    let bytes: Vec<u8> = code.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.poke(CODE, &bytes).unwrap();
    let l = Launch {
        isa: Isa::Gfx9,
        gfx940,
        pgm: CODE,
        wave64: true,
        user_sgprs: vec![0, 0, 0, 0],
        // USER_SGPR_COUNT 4 (bits 5:1), SCRATCH_EN.
        rsrc2: (4 << 1) | 1,
        local: [LANES, 1, 1],
        groups: [1, 1, 1],
        lds_bytes: 0,
        vgprs: 16,
        accum_offset: 0,
        scratch: ScratchSetup {
            base: SCRATCH,
            wave_bytes: 64 * 64,
        },
        scratch_waves: 1,
        float: FloatMode {
            denorm32: true,
            denorm16_64: true,
        },
        budget: 1 << 16,
        clock: 0,
        xcc: Default::default(),
    };
    run(&l, &mem).unwrap();
    mem
}

/// Private dword `d` of `lane` (scratch is swizzled per dword across the wave64).
fn private(mem: &FlatMemory, d: u64, lane: u64) -> u32 {
    let mut b = [0u8; 4];
    mem.peek(SCRATCH + d * 4 * 64 + lane * 4, &mut b).unwrap();
    u32::from_le_bytes(b)
}

#[test]
fn gfx90a_scratch_addresses_vgpr_plus_offset_or_sgpr_plus_offset() {
    // CDNA2 guide: SADDR off -> address = VGPR + offset; SADDR set -> SGPR + offset.
    let mem = run_scratch(false);
    for lane in 0..u64::from(LANES) {
        assert_eq!(private(&mem, 3, lane), 77, "store v1 + 4, lane {lane}");
        assert_eq!(
            private(&mem, 8, lane),
            77,
            "load v1 + 4, store s4, lane {lane}"
        );
        assert_eq!(private(&mem, 1, lane), 0, "offset alone is not the address");
    }
    assert_eq!(private(&mem, 3, 4), 0, "lane 4 is not live");
    // The same words read as gfx942 (no SVE bit: the VGPR is not used): offset 4 alone.
    let mem = run_scratch(true);
    assert_eq!(private(&mem, 1, 0), 77);
    assert_eq!(private(&mem, 3, 0), 0);
}
