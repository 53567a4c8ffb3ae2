use super::*;

#[test]
fn mach_table_is_unique() {
    for (i, a) in MACH_TARGETS.iter().enumerate() {
        for b in &MACH_TARGETS[i + 1..] {
            assert_ne!(a.mach, b.mach, "{} and {}", a.name, b.name);
            assert_ne!(a.name, b.name);
        }
    }
    assert_eq!(MachTarget::from_name("gfx1100").map(|t| t.mach), Some(0x41));
    assert_eq!(MachTarget::from_mach(0x3f).map(|t| t.name), Some("gfx90a"));
}

#[test]
fn generic_targets_run_on_members_only() {
    let g = MachTarget::from_name("gfx11-generic").unwrap();
    assert!(g.runs_on("gfx1100"));
    assert!(g.runs_on("gfx1151"));
    assert!(!g.runs_on("gfx1030"));
    let t = MachTarget::from_name("gfx90a").unwrap();
    assert!(t.runs_on("gfx90a"));
    assert!(!t.runs_on("gfx942"));
}

#[test]
fn target_id_decodes_feature_bits() {
    let t = TargetId::from_flags(0x53f, ELFABIVERSION_AMDGPU_HSA_V5).unwrap();
    assert_eq!(t.mach.name, "gfx90a");
    assert_eq!(t.xnack, FeatureSetting::Any);
    assert_eq!(t.sramecc, FeatureSetting::Any);
    let t = TargetId::from_flags(0x0e3f, ELFABIVERSION_AMDGPU_HSA_V4).unwrap();
    assert_eq!(t.xnack, FeatureSetting::Off);
    assert_eq!(t.sramecc, FeatureSetting::On);
    let mut s = heapless::String::<32>::new();
    core::fmt::write(&mut s, format_args!("{t}")).unwrap();
    assert_eq!(s.as_str(), "gfx90a:sramecc+:xnack-");
    let t = TargetId::from_flags(0x0100_0054, ELFABIVERSION_AMDGPU_HSA_V6).unwrap();
    assert_eq!(
        (t.mach.name, t.generic_version, t.code_object_version()),
        ("gfx11-generic", 1, 6)
    );
    assert_eq!(
        TargetId::from_flags(0x7a, 3),
        Err(CodeObjectError::UnknownMach {
            mach: 0x7a,
            e_flags: 0x7a
        })
    );
}

#[test]
fn empty_and_short_inputs_are_out_of_bounds() {
    let mut data = [0u8; 64];
    data[..4].copy_from_slice(&ELFMAG);
    for n in [0usize, 1, 4, 63] {
        assert!(matches!(
            CodeObject::parse(&data[..n]),
            Err(CodeObjectError::OutOfBounds {
                region: Region::ElfHeader,
                ..
            })
        ));
    }
}

use crate::testing::shown;

#[test]
fn regions_and_targets_name_themselves() {
    let cases: [(Region, &str); 6] = [
        (Region::ElfHeader, "ELF header"),
        (Region::ProgramHeaders, "program header table"),
        (Region::SectionHeaders, "section header table"),
        (Region::Segment(3), "segment 3"),
        (Region::Section(12), "section 12"),
        (Region::SymbolName(7), "name of symbol 7"),
    ];
    for (r, want) in cases {
        assert_eq!(shown(&r).as_str(), want);
    }
    let t = MachTarget::from_name("gfx942").unwrap();
    assert_eq!(shown(&t).as_str(), "gfx942");
}

#[test]
fn code_object_v3_feature_bits_are_on_or_off() {
    let mach = MachTarget::from_name("gfx906").unwrap().mach;
    let cases = [
        (0, FeatureSetting::Off, FeatureSetting::Off),
        (
            EF_AMDGPU_FEATURE_XNACK_V3,
            FeatureSetting::On,
            FeatureSetting::Off,
        ),
        (
            EF_AMDGPU_FEATURE_SRAMECC_V3,
            FeatureSetting::Off,
            FeatureSetting::On,
        ),
        (
            EF_AMDGPU_FEATURE_XNACK_V3 | EF_AMDGPU_FEATURE_SRAMECC_V3,
            FeatureSetting::On,
            FeatureSetting::On,
        ),
    ];
    for (bits, xnack, sramecc) in cases {
        let t = TargetId::from_flags(mach | bits, ELFABIVERSION_AMDGPU_HSA_V3).unwrap();
        assert_eq!(
            (t.mach.name, t.xnack, t.sramecc),
            ("gfx906", xnack, sramecc),
            "{bits:#x}"
        );
    }
}
