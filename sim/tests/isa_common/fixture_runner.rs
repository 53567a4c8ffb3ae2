// Runs a fixture kernel from its code object on the interpreter alone (no engine, no driver):
// loads the image into a flat memory, lays out kernargs, the dispatch packet and the user SGPRs
// the descriptor enables, and launches it with the wave state the registers would give.
// Included (`include!`) by the suites that run compiled kernels; the includer names the
// directory of its code objects as `FIXTURE_DIR` (relative to the sim crate).

use hcq_core::addr::GpuVa;
use hcq_core::arch::GFX9;
use hcq_core::codeobj::{CodeObject, LDS_GRANULE_BYTES};
use hcq_core::hsa::KernelCodeProperties as P;
use hcq_core::rsrc::ScratchRsrc;
use hcq_sim::isa::{FlatMemory, FloatMode, Isa, Launch, ScratchSetup, run};

const BASE: u64 = 0x10_0000;
const CODE: u64 = BASE;
const ARGS: u64 = BASE + 0x1_0000;
const PACKET: u64 = BASE + 0x1_8000;
const BUF: u64 = BASE + 0x2_0000;
const SCRATCH: u64 = BASE + 0x8_0000;
const LEN: usize = 0x10_0000;

fn fixture(stem: &str, target: &str) -> Vec<u8> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(FIXTURE_DIR)
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
    #[allow(dead_code)] // not every suite reads bytes
    fn bytes(&self, va: u64, n: usize) -> Vec<u8> {
        let mut b = vec![0u8; n];
        self.mem.peek(va, &mut b).unwrap();
        b
    }
    #[allow(dead_code)] // not every suite reads 64-bit words
    fn read64(&self, va: u64, n: usize) -> Vec<u64> {
        let w = self.read(va, 2 * n);
        w.chunks_exact(2)
            .map(|p| u64::from(p[0]) | u64::from(p[1]) << 32)
            .collect()
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
        self.run_shape(stem, kernel, args, [groups, 1, 1], [64, 1, 1]);
    }

    /// Runs `kernel` over `groups` workgroups of `local` work-items.
    fn run_shape(&self, stem: &str, kernel: &str, args: &[u32], groups: [u32; 3], local: [u32; 3]) {
        let co = fixture(stem, self.target);
        let obj = CodeObject::parse(&co).unwrap();
        let mut image = vec![0u8; obj.image_size() as usize];
        obj.load_into(&mut image).unwrap();
        self.mem.poke(CODE, &image).unwrap();
        let k = obj.kernel(kernel).unwrap();
        self.words(ARGS, args);
        // The dispatch packet: grid size x at byte 12.
        self.words(PACKET, &[0, 64, 0, groups[0] * 64, 1, 1]);
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
            local,
            groups,
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
