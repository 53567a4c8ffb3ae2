//! DISPATCH_DIRECT of gfx90a code objects on a gfx9 queue: the private segment buffer (scratch
//! V#) in USER_DATA_0..=3 before the kernarg pointer, flat scratch init after it, and the
//! checks that fault a dispatch whose V# hardware could not use.

mod engine_common;
use engine_common::*;
use hcq_core::addr::GpuVa;
use hcq_core::arch::GFX9;
use hcq_core::codeobj::CodeObject;
use hcq_core::pm4;
use hcq_core::rsrc::ScratchRsrc;
use hcq_sim::engine::{QueueFaultKind, QueueKind, QueueState, SimMode};
use hcq_sim::stand_ins::ExecMode;

/// The host stand-ins' checks of USER_DATA against the descriptor (explicit opt-in).
fn host_opt_in(rig: &Rig) {
    rig.engines
        .with_kernels(|k| k.set_mode(ExecMode::HostStandIns));
}

/// Scratch for the dispatches: inside the shared data region.
const SCRATCH_VA: u64 = DATA_VA + 0x8_0000;
const SCRATCH_LEN: u64 = 0x4_0000;
/// COMPUTE_TMPRING_SIZE: 1 wave of 5 KiB (gfx9 units), enough for 68 bytes x 64 lanes.
const TMPRING: u32 = 5 << 12 | 1;
const KA: u64 = DATA_VA + 0x8000;
const OUT: u64 = DATA_VA + 0x1_0000;

fn fixture(name: &str) -> Vec<u8> {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/tests/fixtures/kernels");
    std::fs::read(dir.join(name)).unwrap()
}

/// Registers and loads `kernel` of `co` at `CODE_VA`; the program with the scratch inputs its
/// descriptor asks for, as the driver builds them.
fn load(rig: &Rig, co: &[u8], kernel: &str) -> pm4::Program {
    rig.engines
        .with_kernels(|k| k.register_fixture(co))
        .unwrap();
    let obj = CodeObject::parse(co).unwrap();
    let mut image = vec![0u8; obj.image_size() as usize];
    obj.load_into(&mut image).unwrap();
    assert!(rig.code.write(0, &image));
    let k = obj.kernel(kernel).unwrap();
    let props = k.properties();
    use hcq_core::hsa::KernelCodeProperties as P;
    let psb = props.get(P::ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER) != 0;
    let fsi = props.get(P::ENABLE_SGPR_FLAT_SCRATCH_INIT) != 0;
    pm4::Program {
        prog_addr: GpuVa(CODE_VA + k.entry_offset),
        scratch_addr: GpuVa(SCRATCH_VA),
        tmpring_size: TMPRING,
        rsrc1: k.descriptor.compute_pgm_rsrc1,
        rsrc2: k.descriptor.compute_pgm_rsrc2 | k.lds_granules() << 15,
        rsrc3: k.descriptor.compute_pgm_rsrc3,
        dispatch: None,
        private_segment_buffer: psb
            .then(|| ScratchRsrc::new(&GFX9, GpuVa(SCRATCH_VA), SCRATCH_LEN, false).unwrap()),
        flat_scratch_init: fsi.then_some(GpuVa(SCRATCH_VA)),
    }
}

fn run(rig: &mut Rig, prog: &pm4::Program, groups: u32) -> QueueState {
    let mut q = rig.queue_arch(0, QueueKind::Compute, 4096, &GFX9);
    let mut s = pm4(|b| pm4::exec(b, &GFX9, prog, GpuVa(KA), [groups, 1, 1], [64, 1, 1]));
    s.extend(pm4(|b| pm4::signal(b, &GFX9, &sig(0xF000, None), 1)));
    rig.submit(&mut q, &s);
    rig.engines.run_until_idle();
    rig.engines.queue(q.id).unwrap().state
}

fn fault_msg(st: QueueState) -> String {
    match st {
        QueueState::Faulted(f) => f.message,
        s => panic!("expected a fault, got {s:?}"),
    }
}

fn scratch_rig() -> (Rig, pm4::Program) {
    let rig = Rig::new(SimMode::Deterministic);
    let prog = load(&rig, &fixture("scratch-gfx90a.co"), "scratch_sum");
    // scratch_sum(out, k = 3)
    rig.write_words(KA, &[OUT as u32, (OUT >> 32) as u32, 3]);
    (rig, prog)
}

#[test]
fn gfx90a_scratch_kernel_runs_with_the_private_segment_buffer() {
    let (mut rig, prog) = scratch_rig();
    // The descriptor asks for the V#, the kernarg pointer and flat scratch init.
    assert!(prog.private_segment_buffer.is_some() && prog.flat_scratch_init.is_some());
    assert_eq!(run(&mut rig, &prog, 2), QueueState::Idle);
    for i in [0, 63, 64, 127] {
        assert_eq!(rig.r32(OUT + i * 4), 360, "out[{i}]");
    }
    assert_eq!(rig.r32(OUT + 128 * 4), 0);
    assert_eq!(rig.r32(DATA_VA + 0xF008), 1);
}

#[test]
fn gfx90a_fill_runs_with_the_private_segment_buffer() {
    let mut rig = Rig::new(SimMode::Deterministic);
    let prog = load(&rig, &fixture("fill-gfx90a.co"), "fill");
    assert!(prog.private_segment_buffer.is_some() && prog.flat_scratch_init.is_none());
    rig.write_words(KA, &[OUT as u32, (OUT >> 32) as u32, 0x5a5a, 100]);
    assert_eq!(run(&mut rig, &prog, 2), QueueState::Idle);
    assert_eq!(rig.r32(OUT + 99 * 4), 0x5a5a);
    assert_eq!(rig.r32(OUT + 100 * 4), 0);
}

/// What the seed's layout did (kernarg pointer in USER_DATA_0/1) faults, naming the V#.
#[test]
fn gfx90a_without_the_private_segment_buffer_faults() {
    let mut rig = Rig::new(SimMode::Deterministic);
    let prog = load(&rig, &fixture("fill-gfx90a.co"), "fill");
    rig.write_words(KA, &[OUT as u32, (OUT >> 32) as u32, 0x5a5a, 100]);
    let bad = pm4::Program {
        private_segment_buffer: None,
        ..prog
    };
    // The machine code reads its kernargs through s[6:7], which now hold the workgroup id
    // and a stale USER_DATA: a VM fault.
    let QueueState::Faulted(f) = run(&mut rig, &bad, 2) else {
        panic!()
    };
    assert!(matches!(f.kind, QueueFaultKind::Vm(_)), "{f:?}");
    host_opt_in(&rig);
    let m = fault_msg(run(&mut rig, &bad, 2));
    assert!(
        m.contains("USER_DATA_0..=3 (private segment buffer of kernel fill")
            && m.contains(&format!("not the queue's scratch base {SCRATCH_VA:#x}")),
        "{m}"
    );
    assert_eq!(rig.r32(OUT), 0);
}

#[test]
fn gfx90a_bad_private_segment_buffers_fault() {
    let good = ScratchRsrc::new(&GFX9, GpuVa(SCRATCH_VA), SCRATCH_LEN, false)
        .unwrap()
        .words();
    let with = |w: [u32; 4]| Some(ScratchRsrc::from_words(w));
    let cases: [(Option<ScratchRsrc>, &str); 7] = [
        (
            with([good[0] + 0x100, good[1], good[2], good[3]]),
            "not the queue's scratch base",
        ),
        (
            with([good[0], good[1], 0, good[3]]),
            "NUM_RECORDS 0, but one wave of the kernel needs 4352",
        ),
        (with([good[0], good[1], 4351, good[3]]), "NUM_RECORDS 4351"),
        (
            with([good[0], good[1] & !(1 << 31), good[2], good[3]]),
            "SWIZZLE_ENABLE is clear",
        ),
        (
            with([good[0], good[1], good[2], good[3] & !(1 << 23)]),
            "ADD_TID_ENABLE is clear",
        ),
        (
            // tinygrad's gfx103x word 3 read as gfx9's: INDEX_STRIDE 32 for a wave64 kernel.
            with([good[0], good[1], 0xffff_ffff, 0x20c1_4000]),
            "INDEX_STRIDE is 32 lanes for a wave64 kernel",
        ),
        (
            with([good[0], good[1], good[2], good[3] & !(0xf << 15)]),
            "data format is invalid",
        ),
    ];
    // The machine code: a V# without records faults on the first scratch store.
    let (mut rig, prog) = scratch_rig();
    let bad = pm4::Program {
        private_segment_buffer: with([good[0], good[1], 0, good[3]]),
        ..prog
    };
    let m = fault_msg(run(&mut rig, &bad, 1));
    assert!(m.contains("beyond the V#'s NUM_RECORDS 0x0"), "{m}");
    for (psb, want) in cases {
        let (mut rig, prog) = scratch_rig();
        host_opt_in(&rig);
        let bad = pm4::Program {
            private_segment_buffer: psb,
            ..prog
        };
        let m = fault_msg(run(&mut rig, &bad, 1));
        assert!(m.contains(want), "want {want:?} in {m}");
        assert!(
            m.contains("private segment buffer of kernel scratch_sum"),
            "{m}"
        );
        assert_eq!(rig.r32(OUT), 0);
    }
}

#[test]
fn gfx90a_wrong_flat_scratch_init_faults() {
    let (mut rig, prog) = scratch_rig();
    host_opt_in(&rig);
    let bad = pm4::Program {
        flat_scratch_init: Some(GpuVa(SCRATCH_VA + 0x1000)),
        ..prog
    };
    let m = fault_msg(run(&mut rig, &bad, 1));
    assert!(
        m.contains(&format!(
            "USER_DATA_6/7 (flat scratch init of kernel scratch_sum) is {:#x}, not the queue's scratch base {SCRATCH_VA:#x}",
            SCRATCH_VA + 0x1000
        )),
        "{m}"
    );
}
