//! A dispatch's workgroups run on several host threads when the memory allows it; the result
//! must not depend on how many: the same bytes (scratch included), the same counts, the same
//! out-of-range findings and the same fault (the lowest workgroup's) on 1 thread as on 2, 4
//! or 7, and kernels with global atomics stay on one thread.

use core::time::Duration;
use hcq_core::codeobj::{CodeObject, LDS_GRANULE_BYTES};
use hcq_sim::engine::bus::{Access, VmFault};
use hcq_sim::isa::{
    FlatMemory, FloatMode, Isa, IsaError, Launch, Memory, ScratchSetup, Stats, run_threads,
};
use std::collections::HashSet;
use std::sync::{Condvar, Mutex};
use std::thread::ThreadId;
use std::time::Instant;

const BASE: u64 = 0x10_0000;
const CODE: u64 = BASE;
const ARGS: u64 = BASE + 0x1_0000;
const A: u64 = BASE + 0x2_0000;
const GROUPS: u32 = 1024;
const N: u32 = GROUPS * 64;
const B: u64 = A + 4 * N as u64;
const C: u64 = B + 4 * N as u64;
const SCRATCH: u64 = C + 4 * N as u64;
const SCRATCH_WAVES: u32 = 24;
const SCRATCH_WAVE_BYTES: u64 = 128 * 32;
const LEN: usize = 0x2_0000 + 3 * 4 * N as usize + (SCRATCH_WAVES as usize) * 128 * 32;

/// Shared memory that notes which threads stored through it. With `gate`, a thread's first
/// store waits (up to 3 s) until another thread has stored too, so that on a loaded machine
/// the first thread does not finish every chunk before the others start.
struct Witness<'a> {
    mem: &'a FlatMemory,
    writers: Mutex<HashSet<ThreadId>>,
    gate: bool,
    arrived: Condvar,
}

impl Memory for Witness<'_> {
    fn read(&self, va: u64, buf: &mut [u8], access: Access) -> Result<(), VmFault> {
        self.mem.read(va, buf, access)
    }
    fn write(&self, va: u64, data: &[u8]) -> Result<(), VmFault> {
        let mut w = self.writers.lock().unwrap();
        if w.insert(std::thread::current().id()) {
            self.arrived.notify_all();
            if self.gate {
                let deadline = Instant::now() + Duration::from_secs(3);
                while w.len() < 2 && Instant::now() < deadline {
                    w = self
                        .arrived
                        .wait_timeout(w, Duration::from_millis(50))
                        .unwrap()
                        .0;
                }
            }
        }
        drop(w);
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
/// dword 0x0101_0101 * index in A and B), and the launch over GROUPS workgroups of 64 with a
/// scratch ring of SCRATCH_WAVES slots.
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
        scratch: ScratchSetup {
            base: SCRATCH,
            wave_bytes: SCRATCH_WAVE_BYTES,
        },
        scratch_waves: SCRATCH_WAVES,
        accum_offset: 0,
        float: FloatMode::from_rsrc1(d.compute_pgm_rsrc1),
        budget: 1 << 24,
        clock: 0,
        xcc: Default::default(),
    };
    (mem, l)
}

/// What one run left: its result, every byte of memory, and how many threads stored.
struct Outcome {
    result: Result<Stats, IsaError>,
    memory: Vec<u8>,
    writers: usize,
}

fn exec(mem: &FlatMemory, l: &Launch, strict: bool, threads: usize) -> Outcome {
    let w = Witness {
        mem,
        writers: Mutex::new(HashSet::new()),
        gate: threads > 1,
        arrived: Condvar::new(),
    };
    let result = run_threads(l, &w, strict, threads);
    let writers = w.writers.lock().unwrap().len();
    let mut memory = vec![0u8; LEN];
    mem.peek(BASE, &mut memory).unwrap();
    Outcome {
        result,
        memory,
        writers,
    }
}

const VECTOR_ADD: &str = "../core/tests/fixtures/kernels/vector_add-gfx1100.co";

fn vector_add(c: u64, threads: usize) -> Outcome {
    let (mem, l) = setup(
        VECTOR_ADD,
        "vector_add",
        &[A as u32, 0, B as u32, 0, c as u32, 0, N],
    );
    exec(&mem, &l, true, threads)
}

#[test]
fn any_thread_count_computes_exactly_what_one_thread_does() {
    let one = vector_add(C, 1);
    assert_eq!(one.writers, 1);
    let s1 = one.result.clone().unwrap();
    assert!(s1.simd_cycles > 0 && s1.mem_bytes == 3 * 4 * u64::from(N));
    let c: Vec<u32> = one.memory[(C - BASE) as usize..][..4 * N as usize]
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
    for threads in [2, 4, 7] {
        let n = vector_add(C, threads);
        assert!(
            n.writers > 1 && n.writers <= threads,
            "a 1024-workgroup dispatch without atomics stores from several of its {threads} threads: {}",
            n.writers
        );
        assert_eq!(n.result, one.result, "the same counts on {threads} threads");
        assert!(
            n.memory == one.memory,
            "the same bytes on {threads} threads"
        );
    }
}

#[test]
fn scratch_slots_and_their_contents_do_not_depend_on_the_thread_count() {
    let run = |threads| {
        let (mem, l) = setup(
            "../core/tests/fixtures/kernels/scratch-gfx1100.co",
            "scratch_sum",
            &[C as u32, 0, 3],
        );
        exec(&mem, &l, true, threads)
    };
    let one = run(1);
    let st = one.result.clone().unwrap();
    assert!(st.lane_instructions > 0);
    let out = &one.memory[(C - BASE) as usize..][..4 * N as usize];
    let want: u32 = (0..16u32).map(|j| j * 3).sum();
    assert!(
        out.chunks_exact(4)
            .all(|b| u32::from_le_bytes(b.try_into().unwrap()) == want)
    );
    let scratch = &one.memory[(SCRATCH - BASE) as usize..];
    assert!(
        scratch.iter().any(|&b| b != 0),
        "the kernel stored its private array in the scratch ring"
    );
    for threads in [2, 4, 7] {
        let n = run(threads);
        assert!(n.writers > 1, "{threads} threads: {}", n.writers);
        assert_eq!(n.result, one.result, "{threads} threads");
        assert!(
            n.memory == one.memory,
            "the same bytes, scratch ring included, on {threads} threads"
        );
    }
}

#[test]
fn of_several_faults_the_lowest_workgroup_is_reported_on_any_thread_count() {
    // c runs off the end of memory from element `k` on: every later workgroup faults too.
    for k in [64 * 100 + 5, 64 * 700 + 33u32, 64 * 1023] {
        let c = BASE + LEN as u64 - 4 * u64::from(k);
        let e1 = vector_add(c, 1).result.unwrap_err();
        for threads in [2, 4, 7] {
            let e = vector_add(c, threads).result.unwrap_err();
            assert_eq!(e, e1, "element {k}, {threads} threads");
        }
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
    let run = |threads| {
        let (mem, l) = setup(
            "tests/isa_golden/compute-gfx1100.co",
            "atom",
            &[C as u32, 0, A as u32, 0, N],
        );
        exec(&mem, &l, true, threads)
    };
    let one = run(1);
    let four = run(4);
    assert_eq!(four.writers, 1);
    assert_eq!(four.result, one.result);
    assert!(four.memory == one.memory);
    let c = &one.memory[(C - BASE) as usize..];
    let sum = (0..N).fold(0u32, |s, i| s.wrapping_add(i.wrapping_mul(0x0101_0101)));
    assert_eq!(u32::from_le_bytes(c[..4].try_into().unwrap()), sum);
}

/// gfx1100, one lane, 512 bytes of LDS (isa_out_of_range.rs): stores to LDS past the grant
/// and reads back, then stores both values at s[0:1].
const PAST_THE_GRANT: [u32; 20] = [
    0x7E020287, 0x7E0402FF, 0x00001000, 0xD8340000, 0x00000102, 0xD8D80000, 0x03000002, 0x7E0A02FF,
    0x000001FC, 0xD8340000, 0x00000105, 0xD8D80000, 0x06000005, 0xBF89FC07, 0x7E080280, 0xDC6A0000,
    0x00000304, 0xDC6A0004, 0x00000604, 0xBFB00000,
];

#[test]
fn out_of_range_findings_and_strict_faults_do_not_depend_on_the_thread_count() {
    let run = |strict, threads| {
        let mem = FlatMemory::new(BASE, LEN);
        let code: Vec<u8> = PAST_THE_GRANT
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        mem.poke(CODE, &code).unwrap();
        let l = Launch {
            isa: Isa::Gfx11,
            gfx940: false,
            pgm: CODE,
            wave64: false,
            // Every workgroup stores the same two values at A.
            user_sgprs: vec![A as u32, 0],
            rsrc2: 2 << 1,
            local: [1, 1, 1],
            groups: [3000, 1, 1],
            lds_bytes: 512,
            vgprs: 16,
            accum_offset: 0,
            scratch: ScratchSetup::default(),
            scratch_waves: 0,
            float: FloatMode::from_rsrc1(0),
            budget: 1 << 12,
            clock: 0,
            xcc: Default::default(),
        };
        exec(&mem, &l, strict, threads)
    };
    let one = run(false, 1);
    let st = one.result.clone().unwrap();
    assert_eq!(
        st.out_of_range,
        2 * 3000,
        "a store and a load past the grant per group"
    );
    assert!(st.first_out_of_range.is_some());
    let strict = run(true, 1).result.unwrap_err();
    assert!(
        strict.to_string().contains("workgroup [0, 0, 0]"),
        "{strict}"
    );
    for threads in [2, 4, 7] {
        let n = run(false, threads);
        assert!(n.writers > 1, "{threads} threads: {}", n.writers);
        assert_eq!(n.result, one.result, "{threads} threads");
        assert!(n.memory == one.memory, "{threads} threads");
        assert_eq!(run(true, threads).result.unwrap_err(), strict);
    }
}

#[test]
fn a_memory_that_is_not_shared_keeps_one_thread() {
    struct OneThread<'a>(&'a FlatMemory);
    impl Memory for OneThread<'_> {
        fn read(&self, va: u64, buf: &mut [u8], access: Access) -> Result<(), VmFault> {
            self.0.read(va, buf, access)
        }
        fn write(&self, va: u64, data: &[u8]) -> Result<(), VmFault> {
            self.0.write(va, data)
        }
    }
    let (mem, l) = setup(
        VECTOR_ADD,
        "vector_add",
        &[A as u32, 0, B as u32, 0, C as u32, 0, N],
    );
    let threads = Mutex::new(HashSet::new());
    struct Note<'a>(OneThread<'a>, &'a Mutex<HashSet<ThreadId>>);
    impl Memory for Note<'_> {
        fn read(&self, va: u64, buf: &mut [u8], access: Access) -> Result<(), VmFault> {
            self.0.read(va, buf, access)
        }
        fn write(&self, va: u64, data: &[u8]) -> Result<(), VmFault> {
            self.1.lock().unwrap().insert(std::thread::current().id());
            self.0.write(va, data)
        }
    }
    let st = run_threads(&l, &Note(OneThread(&mem), &threads), true, 4).unwrap();
    assert!(st.lane_instructions > 0);
    assert_eq!(threads.lock().unwrap().len(), 1);
}

#[test]
fn workgroups_storing_the_same_bytes_are_reported_on_any_thread_count() {
    // PAST_THE_GRANT with LDS enough for its accesses: every workgroup stores the same two
    // dwords at A, a race between workgroups that no atomic orders.
    let run = |strict, threads| {
        let mem = FlatMemory::new(BASE, LEN);
        let code: Vec<u8> = PAST_THE_GRANT
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        mem.poke(CODE, &code).unwrap();
        let l = Launch {
            isa: Isa::Gfx11,
            gfx940: false,
            pgm: CODE,
            wave64: false,
            user_sgprs: vec![A as u32, 0],
            rsrc2: 2 << 1,
            local: [1, 1, 1],
            groups: [40, 30, 1],
            lds_bytes: 8192,
            vgprs: 16,
            accum_offset: 0,
            scratch: ScratchSetup::default(),
            scratch_waves: 0,
            float: FloatMode::from_rsrc1(0),
            budget: 1 << 12,
            clock: 0,
            xcc: Default::default(),
        };
        exec(&mem, &l, strict, threads)
    };
    let one = run(false, 1).result.unwrap();
    let race = one.race.unwrap();
    assert_eq!(race.address, A);
    assert_eq!(race.bytes, 8);
    assert_eq!(race.groups, [[0, 0, 0], [1, 0, 0]]);
    assert_eq!(one.out_of_range, 0);
    let strict = run(true, 1).result.unwrap_err();
    assert!(
        strict.to_string().contains(
            "workgroups [0, 0, 0] and [1, 0, 0] of the dispatch both store the 8 bytes at"
        ),
        "{strict}"
    );
    for threads in [2, 4, 7] {
        assert_eq!(run(false, threads).result, Ok(one), "{threads} threads");
        assert_eq!(
            run(true, threads).result.unwrap_err(),
            strict,
            "{threads} threads"
        );
    }
    // A race-free kernel has none.
    assert_eq!(vector_add(C, 4).result.unwrap().race, None);
}

/// Shared memory whose stores panic on any thread but `caller`.
struct Panicky<'a> {
    mem: &'a FlatMemory,
    caller: ThreadId,
}

impl Memory for Panicky<'_> {
    fn read(&self, va: u64, buf: &mut [u8], access: Access) -> Result<(), VmFault> {
        self.mem.read(va, buf, access)
    }
    fn write(&self, va: u64, data: &[u8]) -> Result<(), VmFault> {
        assert!(
            std::thread::current().id() == self.caller,
            "a store on a helper"
        );
        self.mem.write(va, data)
    }
    fn shared(&self) -> Option<&(dyn Memory + Sync)> {
        Some(self)
    }
}

#[test]
fn a_helper_threads_panic_is_an_error_and_later_dispatches_run() {
    let (mem, l) = setup(
        VECTOR_ADD,
        "vector_add",
        &[A as u32, 0, B as u32, 0, C as u32, 0, N],
    );
    let p = Panicky {
        mem: &mem,
        caller: std::thread::current().id(),
    };
    // On a loaded machine this thread may run every chunk before a helper wakes: try again.
    let err = (0..200)
        .find_map(|_| run_threads(&l, &p, true, 3).err())
        .expect("a helper took a chunk in 200 dispatches");
    let msg = err.to_string();
    assert!(
        msg.contains("panicked") && msg.contains("a store on a helper"),
        "{msg}"
    );
    let n = vector_add(C, 3);
    assert_eq!(n.result, vector_add(C, 1).result);
}
