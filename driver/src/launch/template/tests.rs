use super::*;
use hcq_core::arch::GfxTarget;

/// What the launch path wrote before templates: the explicit bytes over a zeroed segment,
/// then every hidden argument through `hidden_args::write`.
fn reference(meta: &ProgramMeta, size: u64, explicit: &[u8], shape: &LaunchShape) -> Vec<u8> {
    let mut out = vec![0u8; size as usize];
    out[..explicit.len()].copy_from_slice(explicit);
    for &(kind, offset, sz) in &meta.hidden {
        hidden_args::write(&mut out, kind, offset, sz, shape).unwrap();
    }
    out
}

/// What a split launch writes into the arena.
fn split(plan: &HiddenPlan, size: u64, explicit: &[u8], shape: &LaunchShape) -> Vec<u8> {
    let mut ex = KernargBuf::<INLINE_EXPLICIT_WORDS>::zeroed(plan.explicit_bytes);
    ex.bytes_mut().copy_from_slice(explicit);
    let mut sw = ShapeWords::default();
    plan.shape_words(shape, &mut sw).unwrap();
    let mut words = plan.template.clone();
    words[..ex.words().len()].copy_from_slice(ex.words());
    for &(i, w) in sw.as_slice() {
        words[i] = w;
    }
    bytemuck::cast_slice(&words)[..size as usize].to_vec()
}

/// For the fixture kernels with hidden arguments (code object v5, LLVM's layout), the
/// template, the explicit words and the shape words make the bytes the per-argument
/// writes made, and the whole-segment path agrees.
#[test]
fn split_layout_writes_what_the_hidden_argument_writes_did() {
    for target in crate::fixtures::TARGETS {
        let Some(co) = crate::fixtures::global_id(target) else {
            continue;
        };
        let co = CodeObject::parse(co).unwrap();
        let k = co.kernel("global_id").unwrap();
        let meta = ProgramMeta::new(k.metadata.as_ref().unwrap());
        let size = u64::from(k.kernarg_size());
        let plan = HiddenPlan::new(size, Some(&meta));
        assert!(plan.split, "{target}: {plan:?}");
        assert!(plan.refusal.is_none());
        assert!(!plan.shape.is_empty());
        let explicit: Vec<u8> = (1..=plan.explicit_bytes as u8).collect();
        for (groups, block, lds) in [
            ([1, 1, 1], [64, 1, 1], 0),
            ([7, 3, 2], [16, 4, 2], 4096),
            ([70_000, 1, 1], [1024, 1, 1], 65_536),
            ([1, 2, 1], [1, 1, 1], 0),
        ] {
            let shape = LaunchShape {
                groups,
                block,
                dynamic_lds: lds,
            };
            let want = reference(&meta, size, &explicit, &shape);
            assert_eq!(
                split(&plan, size, &explicit, &shape),
                want,
                "{target} {shape:?}"
            );
            let mut full = KernargBuf::<INLINE_KERNARG_WORDS>::from_template(&plan.template, size);
            full.bytes_mut()[..explicit.len()].copy_from_slice(&explicit);
            plan.fill_shape(&mut full, &shape).unwrap();
            assert_eq!(full.bytes_mut(), &want[..], "{target} {shape:?}");
        }
    }
}

/// The cached shape words are the uncached ones, whether the shape repeats, alternates or
/// follows a refused one.
#[test]
fn cached_shape_words_are_the_placed_ones() {
    let co = crate::fixtures::TARGETS
        .iter()
        .find_map(|t| crate::fixtures::global_id(t))
        .unwrap();
    let co = CodeObject::parse(co).unwrap();
    let k = co.kernel("global_id").unwrap();
    let meta = ProgramMeta::new(k.metadata.as_ref().unwrap());
    let plan = HiddenPlan::new(u64::from(k.kernarg_size()), Some(&meta));
    let shapes = [
        ([1, 1, 1], [64, 1, 1], 0),
        ([1, 1, 1], [64, 1, 1], 0),
        ([7, 3, 2], [16, 4, 2], 4096),
        ([1, 1, 1], [64, 1, 1], 0),
        ([70_000, 1, 1], [1024, 1, 1], 0x1_0000),
        ([1, 1, 1], [70_000, 1, 1], 0),
        ([1, 1, 1], [70_000, 1, 1], 0),
        ([7, 3, 2], [16, 4, 2], 4096),
        ([7, 3, 2], [16, 4, 2], 4097),
        ([7, 3, 2], [16, 4, 2], 4097),
    ];
    for (groups, block, dynamic_lds) in shapes {
        let shape = LaunchShape {
            groups,
            block,
            dynamic_lds,
        };
        let mut want = ShapeWords::default();
        for (slot, &w) in want.words.iter_mut().zip(&plan.shape_words) {
            slot.0 = w;
        }
        want.n = plan.shape_words.len();
        let placed = plan.place_shape_words(&shape, &mut want);
        let mut got = ShapeWords::default();
        assert_eq!(plan.shape_words(&shape, &mut got), placed, "{shape:?}");
        if placed.is_ok() {
            assert_eq!(got.as_slice(), want.as_slice(), "{shape:?}");
        }
    }
    assert!(
        shapes.iter().any(|&(_, b, _)| b[0] > 0xffff),
        "a refused shape"
    );
}

/// A launch-dependent value too large for its argument is refused as the per-argument
/// write refused it, on both paths.
#[test]
fn values_too_large_for_their_argument_are_refused() {
    let meta = ProgramMeta {
        args: Vec::new(),
        hidden: vec![
            (HiddenKind::BlockCountX, 0, 4),
            (HiddenKind::DynamicLdsSize, 6, 2),
            (HiddenKind::SharedBase, 8, 4),
        ],
        zero_hidden: Vec::new(),
        unknown_hidden: None,
        explicit_end: 0,
        hidden_start: 0,
        first_hidden: 0,
        max_flat_workgroup_size: 1024,
        reqd_workgroup_size: None,
    };
    let plan = HiddenPlan::new(16, Some(&meta));
    assert!(plan.split);
    let shape = LaunchShape {
        groups: [5, 1, 1],
        block: [1, 1, 1],
        dynamic_lds: 0x1_0000,
    };
    let mut want = vec![0u8; 16];
    let err = meta
        .hidden
        .iter()
        .find_map(|&(k, o, s)| hidden_args::write(&mut want, k, o, s, &shape).err())
        .unwrap();
    let mut sw = ShapeWords::default();
    assert_eq!(plan.shape_words(&shape, &mut sw), Err(err.clone()));
    let mut full = KernargBuf::<INLINE_KERNARG_WORDS>::from_template(&plan.template, 16);
    assert_eq!(plan.fill_shape(&mut full, &shape), Err(err));
    // In range: both paths write what the per-argument writes do.
    let ok = LaunchShape {
        dynamic_lds: 0xffff,
        ..shape
    };
    assert_eq!(split(&plan, 16, &[], &ok), reference(&meta, 16, &[], &ok));
}

/// The patched template is dword for dword what the encoders write, for every user-SGPR
/// combination the program can take, on each family.
#[test]
fn patched_template_is_what_the_encoders_write() {
    let dispatch = pm4::DispatchInfo {
        packet_offset: 0x120,
        group_segment_size: 64,
        private_segment_size: 16,
    };
    for target in ["gfx1100", "gfx1201", "gfx90a", "gfx942"] {
        let arch = GfxTarget::parse(target).unwrap().info();
        let base = pm4::Program {
            prog_addr: GpuVa(0x7f00_1234_5600),
            scratch_addr: GpuVa(0x7e00_0000_0000),
            tmpring_size: 0x1234,
            rsrc1: 0x11,
            rsrc2: 0x22,
            ..pm4::Program::default()
        };
        let rsrc = ScratchRsrc::new(arch, GpuVa(0x7e00_0000_0000), 1 << 20, true).ok();
        let progs = [
            base,
            pm4::Program {
                dispatch: Some(dispatch),
                ..base
            },
            pm4::Program {
                dispatch: Some(dispatch),
                private_segment_buffer: rsrc,
                flat_scratch_init: Some(GpuVa(0x7e00_0000_0000)),
                ..base
            },
            pm4::Program {
                flat_scratch_init: Some(GpuVa(0x7e00_0000_0000)),
                ..base
            },
        ];
        for prog in &progs {
            let t = ExecTemplate::new(arch, prog).unwrap();
            for (ka, g, l) in [
                (GpuVa(0x5555_0000_1000), [4, 5, 6], [32, 2, 1]),
                (GpuVa(0x1_0000_0040), [1, 1, 1], [64, 1, 1]),
            ] {
                let mut want = vec![0u32; t.dwords.len()];
                let n = pm4::memory_barrier(&mut want, arch).unwrap();
                pm4::exec(&mut want[n..], arch, prog, ka, g, l).unwrap();
                let mut got = t.dwords.clone();
                t.patch(&mut got, prog, ka, g, l).unwrap();
                assert_eq!(got, want, "{target} {prog:?}");
            }
        }
    }
}
