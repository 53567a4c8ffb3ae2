//! A widened scalar load whose last dwords the CPU wrote after the last HDP flush
//! (`Space::StaleTail`). LLVM widens kernarg loads past the arguments (tinygrad 0.14's
//! `E_5_2_3_4_3_2` on gfx1100: 56 bytes of kernargs, `s_load_b256 s[16:23], s[0:1], 0x20`
//! reads 64), and tinygrad packs the next launch's arguments right after, written while this
//! launch runs. The GPU reads what the HDP held; the kernel never uses those registers. So a
//! run that is not strict completes the load with the GPU-visible bytes as a finding; a strict
//! run faults, and a load whose first dword is stale (kernargs written after the flush: the
//! missing-flush bug) faults in every run.

use hcq_sim::engine::{Access, VmFault, VmFaultKind};
use hcq_sim::isa::{
    FlatMemory, FloatMode, Isa, IsaError, Launch, Memory, ScratchSetup, Space, Stats, run_with,
};

const CODE: u64 = 0x8_0000;
const KA: u64 = 0x2000;
const OUT: u64 = 0x1000;

/// gfx1100 (`llvm-mc-19 -mcpu=gfx1100`): s_load_b256 s[4:11], s[0:1], 0x0 /
/// s_waitcnt lgkmcnt(0) / v_mov_b32 v0, 0 / v_mov_b32 v1, s4 /
/// global_store_b32 v0, v1, s[2:3] / s_endpgm. Only the first loaded dword is used.
const LOAD_B256: [u32; 9] = [
    0xF40C_0100,
    0xF800_0000,
    0xBF89_FC07,
    0x7E00_0280,
    0x7E02_0204,
    0xDC6A_0000,
    0x0002_0100,
    0xBFB0_0000,
    0,
];

/// Flat memory behind a modelled HDP: the bytes `stale` were written by the CPU after the
/// last flush, and the GPU sees `old` there.
struct Hdp {
    inner: FlatMemory,
    stale: core::ops::Range<u64>,
    old: u8,
}

impl Memory for Hdp {
    fn read(&self, va: u64, buf: &mut [u8], access: Access) -> Result<(), VmFault> {
        let end = va + buf.len() as u64;
        if va < self.stale.end && end > self.stale.start {
            return Err(VmFault {
                va: va.max(self.stale.start),
                access,
                kind: VmFaultKind::HdpStale,
            });
        }
        self.inner.read(va, buf, access)
    }
    fn write(&self, va: u64, data: &[u8]) -> Result<(), VmFault> {
        self.inner.write(va, data)
    }
    fn read_visible(&self, va: u64, buf: &mut [u8]) -> Result<(), VmFault> {
        self.inner.read(va, buf, Access::Read)?;
        for (k, b) in buf.iter_mut().enumerate() {
            if self.stale.contains(&(va + k as u64)) {
                *b = self.old;
            }
        }
        Ok(())
    }
}

fn exec(stale: core::ops::Range<u64>, strict: bool) -> (Result<Stats, IsaError>, u32) {
    let inner = FlatMemory::new(0, 0x10_0000);
    let code: Vec<u8> = LOAD_B256.iter().flat_map(|w| w.to_le_bytes()).collect();
    inner.poke(CODE, &code).unwrap();
    let args: Vec<u8> = (0..32u8).collect();
    inner.poke(KA, &args).unwrap();
    inner.poke(OUT, &[0xff; 4]).unwrap();
    let mem = Hdp {
        inner,
        stale,
        old: 0xaa,
    };
    let l = Launch {
        isa: Isa::Gfx11,
        gfx940: false,
        pgm: CODE,
        wave64: false,
        user_sgprs: vec![KA as u32, 0, OUT as u32, 0],
        rsrc2: 4 << 1,
        local: [1, 1, 1],
        groups: [1, 1, 1],
        lds_bytes: 0,
        vgprs: 8,
        accum_offset: 0,
        scratch: ScratchSetup::default(),
        scratch_waves: 0,
        float: FloatMode {
            denorm32: true,
            denorm16_64: true,
        },
        budget: 1 << 12,
        clock: 0,
        xcc: Default::default(),
    };
    let r = run_with(&l, &mem, strict);
    let mut b = [0u8; 4];
    mem.inner.peek(OUT, &mut b).unwrap();
    (r, u32::from_le_bytes(b))
}

#[test]
fn a_stale_tail_reads_what_the_gpu_sees_as_a_finding() {
    // The last 8 bytes (a packed next launch's first pointer) written after the flush.
    let (r, out) = exec(KA + 24..KA + 40, false);
    let st = r.unwrap();
    assert_eq!(out, 0x0302_0100, "the first dword, flushed, is used");
    assert_eq!(st.out_of_range, 1);
    let f = st.first_out_of_range.unwrap();
    assert_eq!(
        (f.space, f.address, f.bytes, f.pc_offset),
        (Space::StaleTail, KA + 24, 8, 0)
    );
}

#[test]
fn a_strict_run_faults_on_the_stale_tail() {
    let (r, out) = exec(KA + 24..KA + 40, true);
    match r {
        Err(IsaError::Vm(v) | IsaError::VmAt(v, _)) => {
            assert_eq!((v.va, v.kind), (KA + 24, VmFaultKind::HdpStale));
        }
        other => panic!("expected the HDP fault, got {other:?}"),
    }
    assert_eq!(out, 0xffff_ffff, "nothing stored");
}

#[test]
fn a_load_whose_first_dword_is_stale_faults_in_every_run() {
    for strict in [false, true] {
        let (r, _) = exec(KA..KA + 32, strict);
        match r {
            Err(IsaError::Vm(v) | IsaError::VmAt(v, _)) => {
                assert_eq!((v.va, v.kind), (KA, VmFaultKind::HdpStale));
            }
            other => panic!("expected the HDP fault (strict {strict}), got {other:?}"),
        }
    }
}
