//! Modelled GPU time: what a dispatch would take on the simulated GPU, from the instructions
//! it executed. A throughput model, stated so it can be checked and argued with:
//!
//! - every wave instruction costs its SIMD issue cycles: scalar and SMEM 1; vector ALU one
//!   pass per SIMD width of lanes (gfx9's SIMD16 takes 4 passes for wave64, RDNA's SIMD32 one
//!   for wave32 and two for wave64), transcendental ops 4 times that, f64 ops 16 times on
//!   RDNA (CDNA runs f64 at the f32 rate); DS 2 cycles and VMEM 4 cycles per pass;
//! - the dispatch's SIMD cycles spread over every SIMD of the GPU (CUs x SIMDs per CU) at
//!   its engine clock: full occupancy, no latency, no cache misses;
//! - memory: the bytes vector memory instructions move (per active lane) at the GPU's memory
//!   bandwidth; the dispatch takes the longer of the two.
//!
//! The numbers are a model, not a measurement: callers label them "modelled".

use super::Isa;
use super::decode::{Enc, Inst};
use super::ops::Op;

/// What the model needs to know of the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuShape {
    /// Compute units.
    pub cus: u32,
    /// SIMDs per compute unit.
    pub simds_per_cu: u32,
    /// Engine clock in MHz.
    pub clock_mhz: u32,
    /// Memory bandwidth in bytes per microsecond (= MB/s).
    pub mem_bytes_per_us: u64,
}

impl GpuShape {
    /// Modelled nanoseconds for `simd_cycles` of issue and `mem_bytes` of vector memory
    /// traffic (at least 1 ns for a dispatch that executed anything).
    #[must_use]
    pub fn dispatch_ns(&self, simd_cycles: u64, mem_bytes: u64) -> u64 {
        let simds = u64::from(self.cus.max(1)) * u64::from(self.simds_per_cu.max(1));
        let mhz = u64::from(self.clock_mhz.max(1));
        // cycles / (simds * MHz) us = cycles * 1000 / (simds * MHz) ns.
        let compute = (u128::from(simd_cycles) * 1000).div_ceil(u128::from(simds * mhz));
        let memory =
            (u128::from(mem_bytes) * 1000).div_ceil(u128::from(self.mem_bytes_per_us.max(1)));
        // CAST: saturating; a dispatch's modelled time stays far below 2^64 ns.
        let ns = compute.max(memory).min(u128::from(u64::MAX)) as u64;
        if simd_cycles > 0 { ns.max(1) } else { ns }
    }
}

/// The cost of one decoded instruction: SIMD issue cycles, and bytes per active lane it
/// moves to or from memory (vector memory only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Cost {
    pub(crate) cycles: u16,
    pub(crate) lane_bytes: u8,
}

fn transcendental(op: Op) -> bool {
    use Op::*;
    matches!(
        op,
        VRcpF32
            | VRcpIflagF32
            | VRsqF32
            | VSqrtF32
            | VExpF32
            | VLogF32
            | VSinF32
            | VCosF32
            | VRcpF64
            | VRsqF64
            | VSqrtF64
    )
}

fn f64_op(op: Op) -> bool {
    op.name().contains("f64")
}

fn mem_bytes(op: Op) -> u8 {
    use Op::*;
    match op {
        MLoadU8 | MLoadI8 | MStoreB8 => 1,
        MLoadU16 | MLoadI16 | MStoreB16 => 2,
        MLoadB64 | MStoreB64 | MAtomicAddU64 | MAtomicSwapB64 | MAtomicCmpswapB64 => 8,
        op if op.name().starts_with("atomic_") && op.name().ends_with("64") => 8,
        MLoadB96 | MStoreB96 => 12,
        MLoadB128 | MStoreB128 => 16,
        GlobalInv | GlobalWb | BufferGl0Inv | BufferGl1Inv => 0,
        _ => 4,
    }
}

/// The cost of `i` in a wave of `lanes` lanes on `isa`.
pub(crate) fn cost(isa: Isa, lanes: usize, i: &Inst) -> Cost {
    let simd = if isa == Isa::Gfx9 { 16 } else { 32 };
    // CAST: lanes <= 64, so passes <= 4.
    let passes = lanes.div_ceil(simd).max(1) as u16;
    let (cycles, lane_bytes) = match i.enc {
        Enc::Sop1 | Enc::Sop2 | Enc::Sopk | Enc::Sopc | Enc::Sopp | Enc::Smem => (1, 0),
        Enc::Ds => (2 * passes, 0),
        Enc::Flat | Enc::Mubuf => (4 * passes, mem_bytes(i.op)),
        Enc::Vop1 | Enc::Vop2 | Enc::Vopc | Enc::Vop3 | Enc::Vop3sd | Enc::Vop3p | Enc::Vopd => {
            let rate = if transcendental(i.op) {
                4
            } else if f64_op(i.op) && isa != Isa::Gfx9 {
                16
            } else {
                1
            };
            (rate * passes, 0)
        }
    };
    Cost { cycles, lane_bytes }
}

#[cfg(test)]
mod tests {
    use super::*;

    const XTX: GpuShape = GpuShape {
        cus: 96,
        simds_per_cu: 2,
        clock_mhz: 2500,
        mem_bytes_per_us: 960_000,
    };

    #[test]
    fn compute_bound_time_spreads_cycles_over_every_simd() {
        // 192 SIMDs at 2.5 GHz: 480 cycles per ns.
        assert_eq!(XTX.dispatch_ns(480_000, 0), 1000);
        assert_eq!(XTX.dispatch_ns(1, 0), 1);
        assert_eq!(XTX.dispatch_ns(0, 0), 0);
    }

    #[test]
    fn memory_bound_time_is_bytes_over_bandwidth() {
        // 960 GB/s: 96 MB take 100 us, more than the 1 us of compute.
        assert_eq!(XTX.dispatch_ns(480_000, 96_000_000), 100_000);
    }

    #[test]
    fn costs_follow_simd_width_and_op_class() {
        let mut i = Inst::new(Op::VAddNcU32, Enc::Vop2);
        assert_eq!(cost(Isa::Gfx11, 32, &i).cycles, 1);
        assert_eq!(cost(Isa::Gfx11, 64, &i).cycles, 2);
        assert_eq!(cost(Isa::Gfx9, 64, &i).cycles, 4);
        i.op = Op::VRcpF32;
        assert_eq!(cost(Isa::Gfx11, 32, &i).cycles, 4);
        i.op = Op::VFmaF64;
        assert_eq!(cost(Isa::Gfx11, 32, &i).cycles, 16);
        assert_eq!(cost(Isa::Gfx9, 64, &i).cycles, 4);
        let s = Inst::new(Op::SAddU32, Enc::Sop2);
        assert_eq!(cost(Isa::Gfx9, 64, &s).cycles, 1);
        let g = Inst::new(Op::MLoadB64, Enc::Flat);
        assert_eq!(
            cost(Isa::Gfx11, 32, &g),
            Cost {
                cycles: 4,
                lane_bytes: 8
            }
        );
    }
}
