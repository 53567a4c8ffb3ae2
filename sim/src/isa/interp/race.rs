//! Workgroups of one dispatch that store the same bytes of global memory (sim/README.md
//! "Threads"). Without an atomic nothing orders two workgroups of a dispatch, so which store
//! lands last depends on the GPU's scheduling (and, here, on the host threads'): the kernel
//! races. Each workgroup's stores are recorded as coalesced byte ranges ([`Track`]); when the
//! dispatch ends the ranges of every workgroup are swept in address order ([`find`]), which
//! gives the same answer whatever thread ran which workgroup. Kernels with atomics (which may
//! order workgroups legitimately) run on one thread and are not checked; the scratch ring
//! (private to a wave, its slots reused by later waves) is not global memory here.

use super::super::{GroupRace, Launch, Memory};
use crate::vm::{Access, VmFault};
use core::cell::RefCell;

/// A byte range `lo..hi` one workgroup (by linear index) stored to.
pub(crate) type Stored = (u64, u64, u64);

/// Memory that records the stores made through it, for the current workgroup.
pub(crate) struct Track<'a> {
    inner: &'a dyn Memory,
    /// The scratch ring, not recorded.
    ring: (u64, u64),
    cur: RefCell<Vec<(u64, u64)>>,
}

impl<'a> Track<'a> {
    pub(crate) fn new(inner: &'a dyn Memory, l: &Launch) -> Self {
        let size = l.scratch_span();
        Self {
            inner,
            ring: (l.scratch.base, l.scratch.base.saturating_add(size)),
            cur: RefCell::new(Vec::new()),
        }
    }

    fn note(&self, va: u64, len: u64) {
        let hi = va.saturating_add(len);
        if len == 0 || (va >= self.ring.0 && hi <= self.ring.1) {
            return;
        }
        let mut v = self.cur.borrow_mut();
        match v.last_mut() {
            Some(last) if va <= last.1 && hi >= last.0 => {
                last.0 = last.0.min(va);
                last.1 = last.1.max(hi);
            }
            _ => v.push((va, hi)),
        }
    }

    /// Moves the current workgroup's ranges (workgroup `g`), merged, to `out`.
    pub(crate) fn end_group(&self, g: u64, out: &mut Vec<Stored>) {
        let mut v = core::mem::take(&mut *self.cur.borrow_mut());
        v.sort_unstable();
        let mut merged: Option<(u64, u64)> = None;
        for (lo, hi) in v {
            merged = match merged {
                Some((l, h)) if lo <= h => Some((l, h.max(hi))),
                Some((l, h)) => {
                    out.push((l, h, g));
                    Some((lo, hi))
                }
                None => Some((lo, hi)),
            };
        }
        if let Some((l, h)) = merged {
            out.push((l, h, g));
        }
    }
}

impl Memory for Track<'_> {
    fn read_visible(&self, va: u64, buf: &mut [u8]) -> Result<(), VmFault> {
        self.inner.read_visible(va, buf)
    }
    fn read(&self, va: u64, buf: &mut [u8], access: Access) -> Result<(), VmFault> {
        self.inner.read(va, buf, access)
    }
    fn write(&self, va: u64, data: &[u8]) -> Result<(), VmFault> {
        // CAST: usize -> u64 widens.
        self.note(va, data.len() as u64);
        self.inner.write(va, data)
    }
    fn read_dwords(&self, va: u64, out: &mut [u32]) -> Result<(), VmFault> {
        self.inner.read_dwords(va, out)
    }
    fn write_dwords(&self, va: u64, data: &[u32]) -> Result<(), VmFault> {
        // CAST: usize -> u64 widens.
        self.note(va, 4 * data.len() as u64);
        self.inner.write_dwords(va, data)
    }
    fn read_lanes(&self, addrs: &[u64], out: &mut [u32]) -> Result<(), VmFault> {
        self.inner.read_lanes(addrs, out)
    }
    fn write_lanes(&self, addrs: &[u64], data: &[u32]) -> Result<(), VmFault> {
        let n = data.len().checked_div(addrs.len()).unwrap_or(0);
        for va in addrs {
            // CAST: usize -> u64 widens.
            self.note(*va, 4 * n as u64);
        }
        self.inner.write_lanes(addrs, data)
    }
    fn fill(&self, va: u64, buf: &mut [u8], access: Access) -> Result<(), VmFault> {
        self.inner.fill(va, buf, access)
    }
    fn used(&self, va: u64, len: usize) {
        self.inner.used(va, len);
    }
}

/// The first (lowest address, then lowest workgroups) bytes two workgroups both stored, among
/// `stored` (each workgroup's ranges merged).
pub(crate) fn find(l: &Launch, mut stored: Vec<Stored>) -> Option<GroupRace> {
    stored.sort_unstable_by_key(|&(lo, _, g)| (lo, g));
    // The range reaching furthest so far, and its workgroup.
    let mut reach: Option<(u64, u64)> = None;
    for (lo, hi, g) in stored {
        match reach {
            Some((end, other)) if lo < end && other != g => {
                return Some(GroupRace {
                    address: lo,
                    bytes: end.min(hi) - lo,
                    groups: [coords(l, other.min(g)), coords(l, other.max(g))],
                });
            }
            Some((end, _)) if hi <= end => {}
            _ => reach = Some((hi, g)),
        }
    }
    None
}

/// Workgroup `g`'s coordinates (linear, x fastest).
fn coords(l: &Launch, g: u64) -> [u32; 3] {
    let (gx, gy) = (u64::from(l.groups[0]).max(1), u64::from(l.groups[1]).max(1));
    // CAST: each coordinate is below its u32 dimension.
    [
        (g % gx) as u32,
        ((g / gx) % gy) as u32,
        (g / (gx * gy)) as u32,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::{FloatMode, Isa, ScratchSetup};

    fn launch() -> Launch {
        Launch {
            isa: Isa::Gfx11,
            gfx940: true,
            pgm: 0,
            wave64: false,
            user_sgprs: Vec::new(),
            rsrc2: 0,
            local: [64, 1, 1],
            groups: [4, 2, 1],
            lds_bytes: 0,
            vgprs: 8,
            accum_offset: 0,
            scratch: ScratchSetup::default(),
            scratch_waves: 0,
            float: FloatMode::from_rsrc1(0),
            budget: 1,
            clock: 0,
            xcc: Default::default(),
        }
    }

    #[test]
    fn touching_ranges_do_not_race_and_overlapping_ones_do() {
        let l = launch();
        assert_eq!(find(&l, vec![(0, 16, 0), (16, 32, 1), (32, 48, 5)]), None);
        assert_eq!(
            find(
                &l,
                vec![(0, 100, 1), (10, 20, 1), (40, 48, 6), (90, 200, 2)]
            ),
            Some(GroupRace {
                address: 40,
                bytes: 8,
                groups: [[1, 0, 0], [2, 1, 0]],
            })
        );
        // Whatever order the workgroups' ranges come in.
        assert_eq!(
            find(&l, vec![(90, 200, 2), (40, 48, 6), (0, 100, 1)]),
            find(&l, vec![(0, 100, 1), (90, 200, 2), (40, 48, 6)]),
        );
    }
}
