//! Encodings the gfx9 family's chips read differently: gfx90a's SCRATCH has no SVE bit (the
//! address VGPR is used exactly when SADDR is off, MI200 (CDNA2) ISA guide, scratch
//! addressing), gfx942's uses SVE (bit 13) to select it (MI300 (CDNA3) ISA guide).

use hcq_sim::isa::Isa;
use hcq_sim::isa::decode::{NONE, VGPR, decode_for};
use hcq_sim::isa::disasm::disasm_target;

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
