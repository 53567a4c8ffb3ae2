//! Every fixture kernel of every target (gfx1100, gfx1201, gfx90a, gfx942) runs from its machine
//! code, launched from registers as the driver programs them (USER_DATA in the order the
//! descriptor's enable bits give, RSRC1/2 from the descriptor plus the LDS granules, 64
//! work-items per workgroup), and computes exactly what kernels/*.cl say (wave32 on gfx11/12,
//! wave64 on gfx9, as they were compiled). gfx90a's scratch goes through the V# in USER_DATA
//! and the wave offset SGPR.

use hcq_core::addr::GpuVa;
use hcq_core::arch::GFX9;
use hcq_core::codeobj::{CodeObject, LDS_GRANULE_BYTES};
use hcq_core::hsa::KernelCodeProperties as P;
use hcq_core::rsrc::ScratchRsrc;
use hcq_sim::isa::{FlatMemory, FloatMode, Isa, Launch, ScratchSetup, run};
use hcq_sim::stand_ins::fixtures::agpr_mix_value;

const BASE: u64 = 0x10_0000;
const CODE: u64 = BASE;
const ARGS: u64 = BASE + 0x1_0000;
const PACKET: u64 = BASE + 0x1_8000;
const BUF: u64 = BASE + 0x2_0000;
const SCRATCH: u64 = BASE + 0x8_0000;
const LEN: usize = 0x10_0000;
const N: u32 = 200;

fn fixture(stem: &str, target: &str) -> Vec<u8> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../core/tests/fixtures/kernels")
        .join(format!("{stem}-{target}.co"));
    std::fs::read(&p).unwrap()
}

struct K<'a> {
    mem: &'a FlatMemory,
    target: &'a str,
    wave64: bool,
}

impl K<'_> {
    fn words(&self, va: u64, w: &[u32]) {
        let b: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.mem.poke(va, &b).unwrap();
    }
    fn read(&self, va: u64, n: usize) -> Vec<u32> {
        let mut b = vec![0u8; 4 * n];
        self.mem.peek(va, &mut b).unwrap();
        b.chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }
    /// Loads `kernel` of `stem` and runs it over `groups` workgroups of 64 with `args`.
    fn run(&self, stem: &str, kernel: &str, args: &[u32], groups: u32) {
        let co = fixture(stem, self.target);
        let obj = CodeObject::parse(&co).unwrap();
        let mut image = vec![0u8; obj.image_size() as usize];
        obj.load_into(&mut image).unwrap();
        self.mem.poke(CODE, &image).unwrap();
        let k = obj.kernel(kernel).unwrap();
        self.words(ARGS, args);
        // The dispatch packet: grid size x at byte 12.
        self.words(PACKET, &[0, 64, 0, groups * 64, 1, 1]);
        let props = k.properties();
        let d = &k.descriptor;
        let rsrc2 = d.compute_pgm_rsrc2 | k.lds_granules() << 15;
        let mut user = vec![0x5555_5555u32; ((rsrc2 >> 1) & 0x1f) as usize];
        let mut at = 0;
        if props.get(P::ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER) != 0 {
            let v = ScratchRsrc::new(&GFX9, GpuVa(SCRATCH), 0x4_0000, false).unwrap();
            user[..4].copy_from_slice(&v.words());
            at += 4;
        }
        if props.get(P::ENABLE_SGPR_DISPATCH_PTR) != 0 {
            user[at..at + 2].copy_from_slice(&[PACKET as u32, 0]);
            at += 2;
        }
        if props.get(P::ENABLE_SGPR_KERNARG_SEGMENT_PTR) != 0 {
            user[at..at + 2].copy_from_slice(&[ARGS as u32, 0]);
            at += 2;
        }
        if props.get(P::ENABLE_SGPR_FLAT_SCRATCH_INIT) != 0 {
            user[at..at + 2].copy_from_slice(&[SCRATCH as u32, 0]);
        }
        let g = (d.compute_pgm_rsrc1 & 0x3f) + 1;
        let l = Launch {
            gfx940: self.target != "gfx90a",
            isa: match self.target {
                "gfx1201" => Isa::Gfx12,
                "gfx90a" | "gfx942" => Isa::Gfx9,
                _ => Isa::Gfx11,
            },
            pgm: CODE + k.entry_offset,
            wave64: self.wave64,
            user_sgprs: user,
            rsrc2,
            local: [64, 1, 1],
            groups: [groups, 1, 1],
            lds_bytes: k.lds_granules() * LDS_GRANULE_BYTES,
            vgprs: if self.wave64 && self.target == "gfx1100" {
                g * 4
            } else {
                g * 8
            },
            scratch: ScratchSetup {
                base: SCRATCH,
                wave_bytes: 128 * 64,
            },
            scratch_waves: 4,
            accum_offset: (d.compute_pgm_rsrc3 & 0x3f) * 4 + 4,
            float: FloatMode::from_rsrc1(d.compute_pgm_rsrc1),
            budget: 1 << 20,
            clock: 0,
            xcc: Default::default(),
        };
        run(&l, self.mem).unwrap_or_else(|e| panic!("{} {kernel}: {e}", self.target));
    }
}

fn lo(a: u64) -> u32 {
    a as u32
}

fn every_fixture(target: &str, wave64: bool) {
    let mem = FlatMemory::new(BASE, LEN);
    let k = K {
        mem: &mem,
        target,
        wave64,
    };
    let (a, b, c) = (BUF, BUF + 0x1000, BUF + 0x2000);
    let groups = N.div_ceil(64);
    let inputs: Vec<u32> = (0..256).map(|i| i * 3 + 1).collect();
    let others: Vec<u32> = (0..256).map(|i| 0xFFFF_FF00 + i).collect();
    let reset = || {
        k.words(a, &inputs);
        k.words(b, &others);
        k.words(c, &[0; 256]);
    };
    // vector_add(a, b, c, n): wrapping u32 sums for i < n.
    reset();
    k.run(
        "vector_add",
        "vector_add",
        &[lo(a), 0, lo(b), 0, lo(c), 0, N],
        groups,
    );
    let got = k.read(c, 256);
    for i in 0..256 {
        let want = if i < N as usize {
            inputs[i].wrapping_add(others[i])
        } else {
            0
        };
        assert_eq!(got[i], want, "{target} vector_add [{i}]");
    }
    // fill(buf, value, n).
    reset();
    k.run("fill", "fill", &[lo(c), 0, 0xC0FFEE, N], groups);
    let got = k.read(c, 256);
    assert!(
        got[..N as usize].iter().all(|&v| v == 0xC0FFEE),
        "{target} fill"
    );
    assert!(
        got[N as usize..].iter().all(|&v| v == 0),
        "{target} fill tail"
    );
    // lds_reverse(buf): each block of 64 reversed.
    reset();
    k.run("lds_reverse", "lds_reverse", &[lo(a), 0], 4);
    let got = k.read(a, 256);
    for i in 0..256 {
        assert_eq!(
            got[i],
            inputs[(i / 64) * 64 + 63 - i % 64],
            "{target} lds_reverse [{i}]"
        );
    }
    // grid_size(out): the dispatch packet's grid_size_x.
    reset();
    k.run("dispatch_ptr", "grid_size", &[lo(c), 0], 3);
    let got = k.read(c, 256);
    assert!(
        got[..192].iter().all(|&v| v == 192) && got[192] == 0,
        "{target} grid_size"
    );
    // multi: vector_add_f32, scale_f32, copy_u32.
    reset();
    let fa: Vec<u32> = (0..256).map(|i| (i as f32 * 0.5).to_bits()).collect();
    let fb: Vec<u32> = (0..256)
        .map(|i| (1.0 / (i as f32 + 1.0)).to_bits())
        .collect();
    k.words(a, &fa);
    k.words(b, &fb);
    k.run(
        "multi",
        "vector_add_f32",
        &[lo(a), 0, lo(b), 0, lo(c), 0, N],
        groups,
    );
    let got = k.read(c, 256);
    for i in 0..N as usize {
        let want = f32::from_bits(fa[i]) + f32::from_bits(fb[i]);
        assert_eq!(got[i], want.to_bits(), "{target} vector_add_f32 [{i}]");
    }
    k.run(
        "multi",
        "scale_f32",
        &[lo(b), 0, 3.0f32.to_bits(), N],
        groups,
    );
    let got = k.read(b, 256);
    for i in 0..256 {
        let want = if i < N as usize {
            f32::from_bits(fb[i]) * 3.0
        } else {
            f32::from_bits(fb[i])
        };
        assert_eq!(got[i], want.to_bits(), "{target} scale_f32 [{i}]");
    }
    k.run("multi", "copy_u32", &[lo(c), 0, lo(a), 0, 17], 1);
    let got = k.read(c, 18);
    assert_eq!(&got[..17], &fa[..17], "{target} copy_u32");
    // agpr_mix(out, in, k, n): values parked in AGPRs on gfx90a/gfx942 (ACC-bit global load,
    // LDS store and global store; v_accvgpr_write/read/mov), plain VGPRs on gfx11/gfx12.
    reset();
    k.run(
        "agpr",
        "agpr_mix",
        &[lo(c), 0, lo(a), 0, 0x1234_5679, N],
        groups,
    );
    let got = k.read(c, 256);
    let x = |j: usize| if j < N as usize { inputs[j] } else { 0 };
    for (i, &g) in got.iter().enumerate() {
        let want = if i < N as usize {
            agpr_mix_value(x(i), x(i ^ 1), 0x1234_5679)
        } else {
            0
        };
        assert_eq!(g, want, "{target} agpr_mix [{i}]");
    }
    // scratch_sum(out, k): 120 * k through a private array.
    reset();
    k.run("scratch", "scratch_sum", &[lo(c), 0, 5], 2);
    let got = k.read(c, 129);
    assert!(
        got[..128].iter().all(|&v| v == 600) && got[128] == 0,
        "{target} scratch_sum {got:?}"
    );
}

#[test]
fn gfx1100_fixtures_run_from_machine_code() {
    every_fixture("gfx1100", false);
}

#[test]
fn gfx90a_fixtures_run_from_machine_code() {
    every_fixture("gfx90a", true);
}

#[test]
fn gfx942_fixtures_run_from_machine_code() {
    every_fixture("gfx942", true);
}

#[test]
fn a_wave32_kernel_dispatched_as_wave64_runs_out_of_vgprs() {
    // RSRC1's VGPR granules count 8 registers in wave32 but 4 in wave64: the kernel's v4 is
    // beyond what a wave64 launch grants, as on hardware.
    let r = std::panic::catch_unwind(|| every_fixture("gfx1100", true));
    let e = r.unwrap_err();
    let m = e.downcast_ref::<String>().unwrap();
    assert!(
        m.contains("VGPR v4 beyond the 4 VGPRs COMPUTE_PGM_RSRC1 grants"),
        "{m}"
    );
}

#[test]
fn gfx1201_fixtures_run_from_machine_code() {
    every_fixture("gfx1201", false);
}
