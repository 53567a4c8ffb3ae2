//! The shader caches a driver must invalidate: the instruction cache (I$) and the scalar data
//! cache (K$), per GPU.
//!
//! On hardware both are read-only caches in front of L2 that no write snoops: a line fetched
//! by one dispatch is what later dispatches see until an invalidate. The CP invalidates them
//! only when a command asks: ACQUIRE_MEM's GCR_CNTL `GLI_INV` / `GLK_INV` on gfx10+
//! (`gc_10_1_0_sh_mask.h`, Mesa `gfx10.json` GCR_CNTL), CP_COHER_CNTL `SH_ICACHE_ACTION_ENA`
//! (bit 29) / `SH_KCACHE_ACTION_ENA` (bit 27) on gfx9 (`gc_9_0_sh_mask.h`), and the SDMA
//! GCR_REQ's GCR_CNTL field. RELEASE_MEM's GCR bits (GLM/GLV/GL1/GL2) do not reach them.
//!
//! So code uploaded over code that already ran, or kernargs rewritten in place, reach a
//! kernel only after such an invalidate; without it the kernel runs the old instructions or
//! reads the old arguments, as on hardware. The driver invalidates all of them before every
//! dispatch (core's `exec` starts with the seed's `invalidate_cache`).
//!
//! What goes through which cache: instruction fetches ([`Access::Execute`]) through I$; shader
//! reads of one whole aligned 64-byte line through K$ (the interpreter's scalar loads fill
//! their per-wave cache a line at a time; vector loads read per lane). Reads by the CP and
//! SDMA engines bypass both.

use crate::vm::{Access, VmFault};
use hcq_core::arch::{AcquireMemLayout, ArchInfo, Family};
use hcq_core::pm4::{AcquireMem, CpCoherCntl, GcrCntl, ReleaseMemEventCntl};
use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

/// Bytes per cache line.
pub const LINE: u64 = 64;
/// Lines the I$ holds (32 KiB, as an SQC instruction cache), oldest replaced first.
pub const ICACHE_LINES: usize = 512;
/// Lines the K$ holds (16 KiB, as an SQC scalar cache), oldest replaced first.
pub const KCACHE_LINES: usize = 256;

/// A read-only cache of 64-byte lines, first in first out.
#[derive(Debug)]
struct Lines {
    map: crate::inthash::IntMap<u64, [u8; 64]>,
    order: VecDeque<u64>,
    cap: usize,
}

impl Lines {
    fn new(cap: usize) -> Self {
        Self {
            map: crate::inthash::IntMap::default(),
            order: VecDeque::new(),
            cap,
        }
    }

    fn clear(&mut self) {
        self.map.clear();
        self.order.clear();
    }

    /// Copies the `buf.len()` bytes at `va` (inside one line) from the cache, fetching the line
    /// with `fetch` on a miss.
    fn read(
        &mut self,
        va: u64,
        buf: &mut [u8],
        fetch: impl FnOnce(u64, &mut [u8; 64]) -> Result<(), VmFault>,
    ) -> Result<(), VmFault> {
        let line = va & !(LINE - 1);
        // CAST: below 64.
        let off = (va - line) as usize;
        let data = match self.map.get(&line) {
            Some(d) => d,
            None => {
                let mut d = [0u8; 64];
                fetch(line, &mut d)?;
                if self.order.len() >= self.cap
                    && let Some(old) = self.order.pop_front()
                {
                    self.map.remove(&old);
                }
                self.order.push_back(line);
                self.map.entry(line).or_insert(d)
            }
        };
        let src = data.get(off..off + buf.len()).unwrap_or_default();
        buf.copy_from_slice(src);
        Ok(())
    }
}

/// One GPU's I$ and K$ (held by its bus: see `GpuBus::caches`).
#[derive(Debug)]
pub struct GpuCaches {
    icache: Mutex<Lines>,
    kcache: Mutex<Lines>,
}

impl Default for GpuCaches {
    fn default() -> Self {
        Self {
            icache: Mutex::new(Lines::new(ICACHE_LINES)),
            kcache: Mutex::new(Lines::new(KCACHE_LINES)),
        }
    }
}

impl GpuCaches {
    /// A shader's read: through the I$ or K$ (see the module docs) when the access is one
    /// they serve, else straight to memory with `read`. A line that cannot be fetched whole is
    /// read uncached (exactly the bytes asked for, so a fault names the right address). `read`
    /// reads memory as the engine does (the caller's environment: fault injection, the race
    /// detector's recorder, the bus).
    pub(crate) fn shader_read(
        &self,
        va: u64,
        buf: &mut [u8],
        access: Access,
        read: impl Fn(u64, &mut [u8], Access) -> Result<(), VmFault>,
    ) -> Result<(), VmFault> {
        // CAST: usize -> u64 widens.
        let len = buf.len() as u64;
        let in_one_line = len > 0 && (va & (LINE - 1)) + len <= LINE;
        let cache = match access {
            Access::Execute if in_one_line => &self.icache,
            Access::Read if va % LINE == 0 && len == LINE => &self.kcache,
            _ => return read(va, buf, access),
        };
        let mut lines = cache.lock().unwrap_or_else(PoisonError::into_inner);
        let fetched = lines.read(va, buf, |line, d| read(line, d, access));
        match fetched {
            Ok(()) => Ok(()),
            Err(_) => read(va, buf, access),
        }
    }

    /// Drops every I$ line (`icache`) and every K$ line (`kcache`).
    pub fn invalidate(&self, icache: bool, kcache: bool) {
        if icache {
            self.icache
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clear();
        }
        if kcache {
            self.kcache
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clear();
        }
    }

    /// The invalidates a GCR_CNTL requests (ACQUIRE_MEM on gfx10+, SDMA GCR_REQ).
    pub fn gcr(&self, g: GcrCntl) {
        self.invalidate(g.get(GcrCntl::GLI_INV) != 0, g.get(GcrCntl::GLK_INV) != 0);
    }

    /// The invalidates an ACQUIRE_MEM requests on `arch` (GCR_CNTL, or CP_COHER_CNTL on gfx9).
    pub fn acquire(&self, arch: &ArchInfo, a: &AcquireMem) {
        match (arch.acquire_mem, a.gcr_cntl) {
            (AcquireMemLayout::GcrCntl, Some(g)) => self.gcr(g),
            (AcquireMemLayout::CoherCntl, _) => {
                let c = CpCoherCntl(a.coher_cntl);
                self.invalidate(
                    c.get(CpCoherCntl::SH_ICACHE_ACTION_ENA) != 0,
                    c.get(CpCoherCntl::SH_KCACHE_ACTION_ENA) != 0,
                );
            }
            (AcquireMemLayout::GcrCntl, None) => {}
        }
    }

    /// The first byte in `lo..hi` that a K$ line holds with a value memory no longer has
    /// (`read` reads memory's line as a fill would): a line fetched before the bytes changed
    /// and not invalidated since, so a scalar load of that byte returns the old value. Lines
    /// not cached, and lines memory cannot give whole, are skipped.
    pub(crate) fn kcache_stale(
        &self,
        lo: u64,
        hi: u64,
        read: impl Fn(u64, &mut [u8; 64]) -> Result<(), VmFault>,
    ) -> Option<StaleByte> {
        // The lines of `lo..hi` the K$ holds, copied out under one lock (none, usually: a
        // dispatch follows the invalidate its launch starts with).
        let mut held: Vec<(u64, [u8; 64])> = Vec::new();
        {
            let k = self.kcache.lock().unwrap_or_else(PoisonError::into_inner);
            if k.map.is_empty() {
                return None;
            }
            let mut line = lo & !(LINE - 1);
            while line < hi {
                if let Some(d) = k.map.get(&line) {
                    held.push((line, *d));
                }
                line += LINE;
            }
        }
        for (line, cached) in held {
            let mut now = [0u8; 64];
            if read(line, &mut now).is_err() {
                continue;
            }
            for ((va, &c), &m) in (line..line + LINE).zip(&cached).zip(&now) {
                if va >= lo && va < hi && c != m {
                    return Some(StaleByte {
                        va,
                        cached: c,
                        memory: m,
                    });
                }
            }
        }
        None
    }

    /// Lines cached now: (I$, K$).
    #[must_use]
    pub fn lines(&self) -> (usize, usize) {
        let n = |m: &Mutex<Lines>| m.lock().unwrap_or_else(PoisonError::into_inner).map.len();
        (n(&self.icache), n(&self.kcache))
    }
}

/// A byte the K$ holds with another value than memory ([`GpuCaches::kcache_stale`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StaleByte {
    /// Its address.
    pub va: u64,
    /// What the K$ line holds (what a scalar load returns).
    pub cached: u8,
    /// What memory holds.
    pub memory: u8,
}

/// gfx9 RELEASE_MEM EVENT_CNTL `TC_WB_ACTION_ENA` (`EOP_TC_WB_ACTION_EN`, soc15d.h): write
/// back the L2.
const GFX9_EOP_TC_WB_ACTION_ENA: u32 = 1 << 15;
/// gfx9 RELEASE_MEM EVENT_CNTL `TC_ACTION_ENA` (`EOP_TC_ACTION_EN`): write back and
/// invalidate the L2.
const GFX9_EOP_TC_ACTION_ENA: u32 = 1 << 17;

/// Whether a RELEASE_MEM's cache actions write the L2 back (before its data write): GCR_CNTL
/// `GL2_WB` on gfx10+ (EVENT_CNTL bit 21), `TC_WB_ACTION_ENA` or `TC_ACTION_ENA` on gfx9
/// (bits 15 and 17, `gfx_v9_0_ring_emit_fence`; Mesa's `si_emit_cache_flush` uses either
/// for an L2 write-back).
#[must_use]
pub fn release_writes_back_l2(arch: &ArchInfo, event: ReleaseMemEventCntl) -> bool {
    match arch.family {
        Family::Gfx9 => event.raw() & (GFX9_EOP_TC_WB_ACTION_ENA | GFX9_EOP_TC_ACTION_ENA) != 0,
        _ => event.get(ReleaseMemEventCntl::GCR_GL2_WB) != 0,
    }
}

/// Whether an ACQUIRE_MEM writes the L2 back: GCR_CNTL `GL2_WB` (gfx10+), CP_COHER_CNTL
/// `TC_WB_ACTION_ENA` or `TC_ACTION_ENA` (gfx9).
#[must_use]
pub fn acquire_writes_back_l2(arch: &ArchInfo, a: &AcquireMem) -> bool {
    match (arch.acquire_mem, a.gcr_cntl) {
        (AcquireMemLayout::GcrCntl, Some(g)) => gcr_writes_back_l2(g),
        (AcquireMemLayout::CoherCntl, _) => {
            let c = CpCoherCntl(a.coher_cntl);
            c.get(CpCoherCntl::TC_WB_ACTION_ENA) != 0 || c.get(CpCoherCntl::TC_ACTION_ENA) != 0
        }
        (AcquireMemLayout::GcrCntl, None) => false,
    }
}

/// Whether a GCR_CNTL (ACQUIRE_MEM on gfx10+, SDMA GCR_REQ) writes the L2 back: `GL2_WB`.
/// The range fields are not modelled: a write-back writes back the whole L2.
#[must_use]
pub fn gcr_writes_back_l2(g: GcrCntl) -> bool {
    g.get(GcrCntl::GL2_WB) != 0
}

#[cfg(test)]
mod tests;
