//! Every fixture target end to end, driver on a simulated GPU of that target: every fixture
//! kernel built for gfx90a (MI200: absolute flat scratch, so its kernels take the private
//! segment buffer in USER_DATA_0..=3 before the kernarg pointer, and flat scratch init after
//! it), for gfx942 (MI300: architected flat scratch, no V#), for gfx1201 (RDNA4: architected
//! flat scratch, workgroup ids in TTMP registers, the s_wait_* counters) and for gfx1100
//! loads, launches and computes what it should, one by one and in a replayed graph; kernels
//! asking for user SGPRs hcq's dispatch cannot fill are refused at load.

use core::time::Duration;
use hcq_core::addr::GpuVa;
use hcq_core::rsrc::ScratchRsrc;
use hcq_driver::graph::{
    Arg, BufArg, DimLimits, Dims, DimsArg, Graph, GraphBuilder, ScalarArg, Value,
};
use hcq_driver::{BufferKind, Device, Error, GpuBuffer, Program};
use hcq_sim::{GpuConfig, SimConfig};
use hcq_tests::Rig;
use hcq_tests::fixtures::{self, FillArgs, VectorAddArgs};

const LONG: Duration = Duration::from_secs(20);

fn fixture(stem: &str, target: &str) -> Vec<u8> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../core/tests/fixtures/kernels")
        .join(format!("{stem}-{target}.co"));
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A simulated `cfg` GPU with every fixture of its target registered, opened by the driver.
fn rig(cfg: GpuConfig) -> (Rig, Device) {
    let rig = Rig::with_config(
        SimConfig {
            gpus: vec![cfg],
            ..SimConfig::default()
        },
        LONG,
    );
    let dev = Device::open(&rig.kfd, 0).unwrap();
    let t = dev.target_name();
    rig.gpu.engines().with_kernels(|k| {
        for stem in ["lds_reverse", "multi", "scratch", "agpr"] {
            k.register_fixture(&fixture(stem, &t)).unwrap();
        }
    });
    (rig, dev)
}

fn read_u32s(dev: &Device, buf: &GpuBuffer, n: usize) -> Vec<u32> {
    let mut out = vec![0u8; n * 4];
    dev.copy_out(buf, &mut out).unwrap();
    out.chunks_exact(4)
        .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
        .collect()
}

fn write_u32s(dev: &Device, buf: &GpuBuffer, data: &[u32]) {
    let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    dev.copy_in(buf, &bytes).unwrap();
}

fn f32s(v: &[u32]) -> Vec<f32> {
    v.iter().map(|&b| f32::from_bits(b)).collect()
}

/// `args` as kernarg bytes: each `(u64 | u32)` little endian, in order, packed.
enum A {
    P(u64),
    W(u32),
}

fn args(a: &[A]) -> Vec<u8> {
    a.iter()
        .flat_map(|x| match x {
            A::P(p) => p.to_le_bytes().to_vec(),
            A::W(w) => w.to_le_bytes().to_vec(),
        })
        .collect()
}

/// Launches `kernel` of `co` with `a` padded to its kernarg size, `groups` groups of 64, and
/// waits. Returns the loaded program.
fn launch(dev: &Device, co: &[u8], kernel: &str, a: &[A], groups: u32) -> Program {
    let p = Program::load(dev, co, kernel).unwrap();
    let mut bytes = args(a);
    bytes.resize(p.kernarg_size() as usize, 0);
    // SAFETY: every pointer in `a` is a live buffer of the test sized for `groups * 64` items
    // (or the kernel's `n`), and the test synchronizes before reading or dropping them.
    unsafe { p.launch(&bytes, [groups, 1, 1], [64, 1, 1]) }.unwrap();
    dev.synchronize().unwrap();
    p
}

/// The scratch inputs the driver gives `p`: the V# over the device's scratch allocation (when
/// `psb`) and flat scratch init = its base (when `fsi`).
fn check_scratch_sgprs(dev: &Device, p: &Program, psb: bool, fsi: bool) {
    let prog = p.pm4_program();
    let base = prog.scratch_addr;
    assert_ne!(base, GpuVa(0));
    let want =
        psb.then(|| ScratchRsrc::new(dev.arch(), base, dev.scratch().scratch_len, false).unwrap());
    assert_eq!(prog.private_segment_buffer, want, "{}", p.name());
    if let Some(v) = prog.private_segment_buffer {
        assert_eq!(v.base(), base);
        assert_eq!(
            u64::from(v.num_records()),
            dev.scratch().scratch_len.min(u64::from(u32::MAX))
        );
        assert_eq!(v.index_stride_lanes(), 64);
    }
    assert_eq!(prog.flat_scratch_init, fsi.then_some(base), "{}", p.name());
}

/// Every fixture kernel of the device's target, with its result checked. `psb`: whether the
/// target's kernels take the private segment buffer.
fn every_fixture_runs(cfg: GpuConfig, psb: bool) {
    let (_rig, dev) = rig(cfg);
    let t = dev.target_name();
    let n = 1000u32;
    let nb = u64::from(n) * 4;
    let groups = n.div_ceil(64);

    // fill
    let buf = dev.alloc(nb, BufferKind::Vram).unwrap();
    let fa = FillArgs {
        buf: buf.va().get(),
        value: 0xabcd_0123,
        n,
    };
    let fill = Program::load(&dev, fixtures::fill(&t).unwrap(), "fill").unwrap();
    check_scratch_sgprs(&dev, &fill, psb, false);
    // SAFETY: buf holds n u32s and outlives the launch (synchronized by copy_out).
    unsafe { fill.launch_pod(&fa, [groups, 1, 1], [64, 1, 1]) }.unwrap();
    assert_eq!(
        read_u32s(&dev, &buf, n as usize),
        vec![0xabcd_0123; n as usize]
    );

    // vector_add
    let (a, b, c) = (
        dev.alloc(nb, BufferKind::Vram).unwrap(),
        dev.alloc(nb, BufferKind::Vram).unwrap(),
        dev.alloc(nb, BufferKind::Vram).unwrap(),
    );
    write_u32s(&dev, &a, &(0..n).collect::<Vec<_>>());
    write_u32s(
        &dev,
        &b,
        &(0..n).map(|i| 3 * i + 0xffff_0000).collect::<Vec<_>>(),
    );
    let add = Program::load(&dev, fixtures::vector_add(&t).unwrap(), "vector_add").unwrap();
    check_scratch_sgprs(&dev, &add, psb, false);
    let va = VectorAddArgs {
        a: a.va().get(),
        b: b.va().get(),
        c: c.va().get(),
        n,
    };
    // SAFETY: a, b, c hold n u32s and outlive the launch (synchronized by copy_out).
    unsafe { add.launch_pod(&va, [groups, 1, 1], [64, 1, 1]) }.unwrap();
    let want: Vec<u32> = (0..n).map(|i| (4 * i).wrapping_add(0xffff_0000)).collect();
    assert_eq!(read_u32s(&dev, &c, n as usize), want);

    // grid_size through the dispatch packet: V# (gfx90a), dispatch pointer, kernarg pointer.
    let out = dev.alloc(256 * 4, BufferKind::Vram).unwrap();
    write_u32s(&dev, &out, &[0; 256]);
    let gs = launch(
        &dev,
        fixtures::dispatch_ptr(&t).unwrap(),
        "grid_size",
        &[A::P(out.va().get())],
        3,
    );
    check_scratch_sgprs(&dev, &gs, psb, false);
    assert!(gs.pm4_program().dispatch.is_some());
    let got = read_u32s(&dev, &out, 256);
    assert_eq!(got[..192], vec![192; 192][..]);
    assert_eq!(got[192..], vec![0; 64][..]);

    // scratch_sum: 68 bytes of private segment per work-item (on gfx90a also flat scratch init).
    let out = dev.alloc(256 * 4, BufferKind::Vram).unwrap();
    write_u32s(&dev, &out, &[0; 256]);
    let sc = launch(
        &dev,
        &fixture("scratch", &t),
        "scratch_sum",
        &[A::P(out.va().get()), A::W(7)],
        3,
    );
    check_scratch_sgprs(&dev, &sc, psb, psb);
    let got = read_u32s(&dev, &out, 256);
    assert_eq!(got[..192], vec![840; 192][..]);
    assert_eq!(got[192..], vec![0; 64][..]);

    // lds_reverse: each block of 64 reversed through LDS.
    let lb = dev.alloc(128 * 4, BufferKind::Vram).unwrap();
    write_u32s(&dev, &lb, &(0..128).collect::<Vec<_>>());
    let lr = launch(
        &dev,
        &fixture("lds_reverse", &t),
        "lds_reverse",
        &[A::P(lb.va().get())],
        2,
    );
    check_scratch_sgprs(&dev, &lr, psb, false);
    let want: Vec<u32> = (0..128).map(|i| (i / 64) * 64 + 63 - i % 64).collect();
    assert_eq!(read_u32s(&dev, &lb, 128), want);

    // multi: vector_add_f32, scale_f32, copy_u32 from one code object.
    let multi = fixture("multi", &t);
    let (x, y, z) = (
        dev.alloc(nb, BufferKind::Vram).unwrap(),
        dev.alloc(nb, BufferKind::Vram).unwrap(),
        dev.alloc(nb, BufferKind::Vram).unwrap(),
    );
    write_u32s(
        &dev,
        &x,
        &(0..n).map(|i| (i as f32).to_bits()).collect::<Vec<_>>(),
    );
    write_u32s(
        &dev,
        &y,
        &(0..n)
            .map(|i| (0.5 * i as f32).to_bits())
            .collect::<Vec<_>>(),
    );
    let p = launch(
        &dev,
        &multi,
        "vector_add_f32",
        &[
            A::P(x.va().get()),
            A::P(y.va().get()),
            A::P(z.va().get()),
            A::W(n),
        ],
        groups,
    );
    check_scratch_sgprs(&dev, &p, psb, false);
    let want: Vec<f32> = (0..n).map(|i| 1.5 * i as f32).collect();
    assert_eq!(f32s(&read_u32s(&dev, &z, n as usize)), want);
    launch(
        &dev,
        &multi,
        "scale_f32",
        &[A::P(z.va().get()), A::W(2.0f32.to_bits()), A::W(n)],
        groups,
    );
    let want: Vec<f32> = (0..n).map(|i| 3.0 * i as f32).collect();
    assert_eq!(f32s(&read_u32s(&dev, &z, n as usize)), want);
    launch(
        &dev,
        &multi,
        "copy_u32",
        &[A::P(x.va().get()), A::P(z.va().get()), A::W(n)],
        groups,
    );
    assert_eq!(f32s(&read_u32s(&dev, &x, n as usize)), want);
}

#[test]
fn gfx90a_every_fixture_kernel_runs() {
    every_fixture_runs(GpuConfig::gfx90a(), true);
}

#[test]
fn gfx942_every_fixture_kernel_runs() {
    every_fixture_runs(GpuConfig::gfx942(), false);
}

#[test]
fn gfx1201_every_fixture_kernel_runs() {
    every_fixture_runs(GpuConfig::gfx1201(), false);
}

#[test]
fn gfx1100_every_fixture_kernel_runs() {
    every_fixture_runs(GpuConfig::gfx1100(), false);
}

/// agpr_mix on a gfx90a/gfx942 GPU: its input arrives in an AGPR, values sit in AGPRs while
/// ArchVGPRs hold others, and its result leaves from an AGPR. The driver programs
/// COMPUTE_PGM_RSRC3 from the descriptor (ACCUM_OFFSET: AGPRs from v12), and the simulator's
/// unified VGPR file puts them where the register says; every result is exact.
fn agpr_kernel_runs(cfg: GpuConfig) {
    let (_rig, dev) = rig(cfg);
    let t = dev.target_name();
    let n = 1000u32;
    let (k, inputs) = (
        0x9e37_79b9u32,
        (0..n).map(|i| i.wrapping_mul(0x0101_0101) ^ 0x55),
    );
    let inputs: Vec<u32> = inputs.collect();
    let (inp, out) = (
        dev.alloc(u64::from(n) * 4, BufferKind::Vram).unwrap(),
        dev.alloc(1024 * 4, BufferKind::Vram).unwrap(),
    );
    write_u32s(&dev, &inp, &inputs);
    write_u32s(&dev, &out, &[0; 1024]);
    let p = launch(
        &dev,
        &fixture("agpr", &t),
        "agpr_mix",
        &[A::P(out.va().get()), A::P(inp.va().get()), A::W(k), A::W(n)],
        n.div_ceil(64),
    );
    // ACCUM_OFFSET 2: the descriptor's RSRC3, as the driver writes it (gfx9 only: RDNA
    // builds of the kernel keep the same values in VGPRs).
    if t.starts_with("gfx9") {
        let rsrc3 = p.pm4_program().rsrc3;
        assert_eq!(
            hcq_core::hsa::PgmRsrc3Gfx90a(rsrc3).accum_offset_vgprs(),
            12,
            "{t}"
        );
    }
    let got = read_u32s(&dev, &out, 1024);
    let x = |j: usize| inputs.get(j).copied().unwrap_or(0);
    for (i, &g) in got.iter().enumerate() {
        let want = if i < n as usize {
            hcq_sim::stand_ins::fixtures::agpr_mix_value(x(i), x(i ^ 1), k)
        } else {
            0
        };
        assert_eq!(g, want, "{t} agpr_mix [{i}]");
    }
}

#[test]
fn gfx90a_agpr_kernel_runs_with_rsrc3_programmed() {
    agpr_kernel_runs(GpuConfig::gfx90a());
}

#[test]
fn gfx942_agpr_kernel_runs_with_rsrc3_programmed() {
    agpr_kernel_runs(GpuConfig::gfx942());
}

#[test]
fn gfx1201_agpr_fixture_runs() {
    agpr_kernel_runs(GpuConfig::gfx1201());
}

/// A graph of launches using scratch (scratch_sum) and the dispatch pointer (grid_size),
/// replayed with new dims. On gfx90a they take the V# (scratch_sum: also flat scratch init),
/// so patching the dims hits NUM_THREAD and DISPATCH_DIRECT behind the longer USER_DATA; on
/// gfx1201 scratch is architected and the workgroup ids come in TTMP registers.
fn graph_with_scratch_replays(cfg: GpuConfig) {
    let (_rig, dev) = rig(cfg);
    let t = dev.target_name();
    let sc = Program::load(&dev, &fixture("scratch", &t), "scratch_sum").unwrap();
    let gs = Program::load(&dev, fixtures::dispatch_ptr(&t).unwrap(), "grid_size").unwrap();
    assert_eq!(
        sc.pm4_program().private_segment_buffer.is_some(),
        t == "gfx90a",
        "{t}"
    );
    let o1 = dev.alloc(512 * 4, BufferKind::Gtt).unwrap();
    let o2 = dev.alloc(512 * 4, BufferKind::Gtt).unwrap();
    let dims = |g: u32| Dims {
        global: [g, 1, 1],
        local: [64, 1, 1],
    };
    let mut g = GraphBuilder::new(dev.arch());
    let d1 = g.dims(dims(1)).unwrap();
    let d2 = g.dims(dims(1)).unwrap();
    let k = g.scalar(5).unwrap();
    g.launch(
        &sc.pm4_program(),
        DimLimits::AMD,
        &[
            Arg::Buf(BufArg::Fixed(o1.va())),
            Arg::U32(ScalarArg::Var(k)),
        ],
        DimsArg::Var(d1),
    )
    .unwrap();
    g.launch(
        &gs.pm4_program(),
        DimLimits::AMD,
        &[Arg::Buf(BufArg::Fixed(o2.va()))],
        DimsArg::Var(d2),
    )
    .unwrap();
    let mut graph = Graph::record(&dev, &g).unwrap();
    for (replay, (g1, g2, kv)) in [(2u32, 5u32, 3u32), (8, 3, 11), (4, 8, 1)]
        .into_iter()
        .enumerate()
    {
        o1.write(0, &[0u8; 2048]).unwrap();
        o2.write(0, &[0u8; 2048]).unwrap();
        // SAFETY: at most 8 workgroups of 64 write one u32 each into o1 / o2 (512 u32s each),
        // which outlive the replay (waited for right below).
        let v = unsafe {
            graph.replay(&[
                Some(Value::Dims(dims(g1))),
                Some(Value::Dims(dims(g2))),
                Some(Value::Scalar(kv.into())),
            ])
        }
        .unwrap();
        dev.wait_value(v).unwrap();
        let check = |buf: &GpuBuffer, items: u32, want: u32, what: &str| {
            let mut b = vec![0u8; 2048];
            buf.read(0, &mut b).unwrap();
            let got: Vec<u32> = b
                .chunks_exact(4)
                .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
                .collect();
            let (done, rest) = got.split_at(items as usize);
            assert!(done.iter().all(|&x| x == want), "replay {replay}: {what}");
            assert!(
                rest.iter().all(|&x| x == 0),
                "replay {replay}: {what} overran"
            );
        };
        check(&o1, g1 * 64, kv * 120, "scratch_sum");
        check(&o2, g2 * 64, g2 * 64, "grid_size");
    }
}

#[test]
fn gfx90a_graph_with_private_segment_buffer_replays() {
    graph_with_scratch_replays(GpuConfig::gfx90a());
}

#[test]
fn gfx1201_graph_with_scratch_replays() {
    graph_with_scratch_replays(GpuConfig::gfx1201());
}

/// `co` with `set` ORed into `kernel`'s `kernel_code_properties` (found by its descriptor's
/// bytes in the file).
fn with_properties(co: &[u8], kernel: &str, set: u16) -> Vec<u8> {
    let obj = hcq_core::codeobj::CodeObject::parse(co).unwrap();
    let kd = bytemuck::bytes_of(&obj.kernel(kernel).unwrap().descriptor).to_vec();
    let at = co.windows(64).position(|w| w == &kd[..]).unwrap();
    let mut out = co.to_vec();
    let p = u16::from_le_bytes([out[at + 56], out[at + 57]]) | set;
    out[at + 56..at + 58].copy_from_slice(&p.to_le_bytes());
    out
}

#[test]
fn kernels_needing_user_sgprs_exec_cannot_fill_are_refused_at_load() {
    let (_rig, dev) = rig(GpuConfig::gfx1100());
    // fill-gfx1100 has USER_SGPR_COUNT 15, so the code object stays valid with more inputs.
    let co = fixtures::fill("gfx1100").unwrap();
    for (bit, what) in [
        (1 << 2, "the queue pointer (ENABLE_SGPR_QUEUE_PTR)"),
        (1 << 4, "the dispatch id (ENABLE_SGPR_DISPATCH_ID)"),
        (
            1 << 6,
            "the private segment size (ENABLE_SGPR_PRIVATE_SEGMENT_SIZE)",
        ),
    ] {
        let bad = with_properties(co, "fill", bit);
        match Program::load(&dev, &bad, "fill") {
            Err(Error::CodeObject {
                what: m,
                source: None,
            }) => assert!(
                m.contains(&format!("kernel fill takes {what} in user SGPRs")),
                "{m}"
            ),
            r => panic!("{what}: {r:?}"),
        }
    }
    // gfx11 has architected flat scratch: a private segment buffer is refused, not faked.
    let bad = with_properties(co, "fill", 1);
    match Program::load(&dev, &bad, "fill") {
        Err(Error::CodeObject {
            what: m,
            source: None,
        }) => assert!(
            m.contains("kernel fill: private segment buffer: Gfx11 has architected flat scratch"),
            "{m}"
        ),
        r => panic!("{r:?}"),
    }
}
