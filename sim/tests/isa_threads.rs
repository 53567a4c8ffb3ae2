//! Large dispatches run their workgroups on two threads when the memory allows it; the result
//! must not depend on that: the same bytes, the same counts, the same fault (the lowest
//! workgroup's) as on one thread, and kernels with global atomics stay on one thread.

use hcq_core::codeobj::{CodeObject, LDS_GRANULE_BYTES};
use hcq_sim::engine::bus::{Access, VmFault};
use hcq_sim::isa::{
    FlatMemory, FloatMode, Isa, IsaError, Launch, Memory, ScratchSetup, Stats, run,
};
use std::collections::HashSet;
use std::sync::Mutex;
use std::thread::ThreadId;

const BASE: u64 = 0x10_0000;
const CODE: u64 = BASE;
const ARGS: u64 = BASE + 0x1_0000;
const A: u64 = BASE + 0x2_0000;
const GROUPS: u32 = 1024;
const N: u32 = GROUPS * 64;
const B: u64 = A + 4 * N as u64;
const C: u64 = B + 4 * N as u64;
const LEN: usize = 0x2_0000 + 3 * 4 * N as usize;

/// The same memory, not offered for sharing: the interpreter keeps one thread.
struct OneThread<'a>(&'a FlatMemory);

impl Memory for OneThread<'_> {
    fn read(&self, va: u64, buf: &mut [u8], access: Access) -> Result<(), VmFault> {
        self.0.read(va, buf, access)
    }
    fn write(&self, va: u64, data: &[u8]) -> Result<(), VmFault> {
        self.0.write(va, data)
    }
}

/// Shared memory that notes which threads stored through it.
struct Witness<'a> {
    mem: &'a FlatMemory,
    writers: Mutex<HashSet<ThreadId>>,
}

impl Memory for Witness<'_> {
    fn read(&self, va: u64, buf: &mut [u8], access: Access) -> Result<(), VmFault> {
        self.mem.read(va, buf, access)
    }
    fn write(&self, va: u64, data: &[u8]) -> Result<(), VmFault> {
        self.writers
            .lock()
            .unwrap()
            .insert(std::thread::current().id());
        self.mem.write(va, data)
    }
    fn shared(&self) -> Option<&(dyn Memory + Sync)> {
        Some(self)
    }
}

fn fixture(name: &str) -> Vec<u8> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
    std::fs::read(&p).unwrap()
}

/// Memory with `kernel` of the code object at `path` loaded and `args` as its kernargs (each
/// dword 0x0101_0101 * index in A and B), and the launch over GROUPS workgroups of 64.
fn setup(path: &str, kernel: &str, args: &[u32]) -> (FlatMemory, Launch) {
    let mem = FlatMemory::new(BASE, LEN);
    let co = fixture(path);
    let obj = CodeObject::parse(&co).unwrap();
    let mut image = vec![0u8; obj.image_size() as usize];
    obj.load_into(&mut image).unwrap();
    mem.poke(CODE, &image).unwrap();
    let k = obj.kernel(kernel).unwrap();
    let a: Vec<u8> = args.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.poke(ARGS, &a).unwrap();
    let data: Vec<u8> = (0..2 * N)
        .flat_map(|i| i.wrapping_mul(0x0101_0101).to_le_bytes())
        .collect();
    mem.poke(A, &data).unwrap();
    let d = &k.descriptor;
    let rsrc2 = d.compute_pgm_rsrc2 | k.lds_granules() << 15;
    let mut user = vec![0x5555_5555u32; ((rsrc2 >> 1) & 0x1f) as usize];
    user[..2].copy_from_slice(&[ARGS as u32, 0]);
    let l = Launch {
        isa: Isa::Gfx11,
        gfx940: true,
        pgm: CODE + k.entry_offset,
        wave64: false,
        user_sgprs: user,
        rsrc2,
        local: [64, 1, 1],
        groups: [GROUPS, 1, 1],
        lds_bytes: k.lds_granules() * LDS_GRANULE_BYTES,
        vgprs: ((d.compute_pgm_rsrc1 & 0x3f) + 1) * 8,
        scratch: ScratchSetup::default(),
        scratch_waves: 0,
        accum_offset: 0,
        float: FloatMode::from_rsrc1(d.compute_pgm_rsrc1),
        budget: 1 << 24,
        clock: 0,
    };
    (mem, l)
}

const VECTOR_ADD: &str = "../core/tests/fixtures/kernels/vector_add-gfx1100.co";

fn vector_add(c: u64, threaded: bool) -> (Result<Stats, IsaError>, Vec<u8>, usize) {
    let (mem, l) = setup(
        VECTOR_ADD,
        "vector_add",
        &[A as u32, 0, B as u32, 0, c as u32, 0, N],
    );
    let (r, writers) = if threaded {
        let w = Witness {
            mem: &mem,
            writers: Mutex::new(HashSet::new()),
        };
        let r = run(&l, &w);
        let n = w.writers.lock().unwrap().len();
        (r, n)
    } else {
        (run(&l, &OneThread(&mem)), 1)
    };
    let mut out = vec![0u8; LEN];
    mem.peek(BASE, &mut out).unwrap();
    (r, out, writers)
}

#[test]
fn two_threads_compute_exactly_what_one_thread_does() {
    let (r1, m1, _) = vector_add(C, false);
    let (r2, m2, writers) = vector_add(C, true);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(
        writers,
        cores.min(2),
        "a 1024-workgroup dispatch without atomics runs on two threads (one on one core)"
    );
    let (s1, s2) = (r1.unwrap(), r2.unwrap());
    assert_eq!(s1, s2, "the same instruction counts and modelled cycles");
    assert!(s1.simd_cycles > 0 && s1.mem_bytes == 3 * 4 * u64::from(N));
    assert!(m1 == m2, "the same bytes in memory");
    let c: Vec<u32> = m1[(C - BASE) as usize..][..4 * N as usize]
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    for (i, v) in c.iter().enumerate() {
        let i = i as u32;
        assert_eq!(
            *v,
            i.wrapping_mul(0x0101_0101)
                .wrapping_add((i + N).wrapping_mul(0x0101_0101))
        );
    }
}

#[test]
fn of_several_faults_the_lowest_workgroup_is_reported_on_either_path() {
    // c runs off the end of memory from element `k` on: every later workgroup faults too.
    for k in [64 * 100 + 5, 64 * 700 + 33u32] {
        let c = BASE + LEN as u64 - 4 * u64::from(k);
        let e1 = vector_add(c, false).0.unwrap_err();
        let e2 = vector_add(c, true).0.unwrap_err();
        assert_eq!(e1, e2, "element {k}");
        assert!(
            e1.to_string()
                .contains(&format!("{:#x}", BASE + LEN as u64)),
            "{e1}"
        );
    }
}

#[test]
fn a_kernel_with_global_atomics_stays_on_one_thread() {
    // compute.cl's atom: c[0] += v[i], c[1] = max, c[2] cmpxchg; returning atomics whose
    // order would otherwise depend on thread timing.
    let (mem, l) = setup(
        "tests/isa_golden/compute-gfx1100.co",
        "atom",
        &[C as u32, 0, A as u32, 0, N],
    );
    let w = Witness {
        mem: &mem,
        writers: Mutex::new(HashSet::new()),
    };
    run(&l, &w).unwrap();
    assert_eq!(w.writers.lock().unwrap().len(), 1);
    let mut c = [0u8; 12];
    mem.peek(C, &mut c).unwrap();
    let sum = (0..N).fold(0u32, |s, i| s.wrapping_add(i.wrapping_mul(0x0101_0101)));
    assert_eq!(u32::from_le_bytes(c[..4].try_into().unwrap()), sum);
}
