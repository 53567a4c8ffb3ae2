//! A standalone [`GpuBus`]: GPU memory as shared atomic words with per-GPU mappings, a doorbell
//! slice, and a record of interrupts and exceptions. Used by engine tests, the benchmark and the
//! `sim_exec` fuzz target; `SimKfd` has its own implementation over its BOs and page tables.

use super::bus::{Access, GpuBus, VmFault, VmFaultKind};
use core::sync::atomic::{AtomicBool, AtomicUsize};
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};
use hcq_core::kfd::{HsaHwExceptionData, HsaMemoryExceptionData};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// Backing memory that can be mapped into one or more [`MemBus`]es (one per GPU).
#[derive(Debug)]
pub struct Region {
    words: Box<[AtomicU32]>,
}

impl Region {
    /// `len` zeroed bytes (rounded up to whole dwords).
    #[must_use]
    pub fn new(len: u64) -> Arc<Self> {
        let n = usize::try_from(len.div_ceil(4)).unwrap_or(0);
        Arc::new(Self {
            words: (0..n).map(|_| AtomicU32::new(0)).collect(),
        })
    }

    /// Size in bytes.
    #[must_use]
    pub fn len(&self) -> u64 {
        // CAST: usize -> u64 widens on supported targets.
        self.words.len() as u64 * 4
    }

    /// Whether the region has no bytes.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    fn word(&self, byte: u64) -> Option<&AtomicU32> {
        self.words.get(usize::try_from(byte / 4).ok()?)
    }

    /// Copies bytes at `off` into `buf` (`false` when out of bounds).
    pub fn read(&self, off: u64, buf: &mut [u8]) -> bool {
        // CAST: usize -> u64 widens.
        let Some(end) = off.checked_add(buf.len() as u64) else {
            return false;
        };
        if end > self.len() {
            return false;
        }
        if off % 4 == 0 && buf.len() % 4 == 0 {
            let Some(first) = usize::try_from(off / 4).ok() else {
                return false;
            };
            let words = self
                .words
                .get(first..first + buf.len() / 4)
                .unwrap_or_default();
            for (dst, w) in buf.chunks_exact_mut(4).zip(words) {
                dst.copy_from_slice(&w.load(Ordering::Relaxed).to_le_bytes());
            }
        } else {
            for (i, b) in buf.iter_mut().enumerate() {
                // CAST: usize -> u64 widens.
                let a = off + i as u64;
                let Some(w) = self.word(a) else { return false };
                // CAST: the shift keeps one byte.
                *b = (w.load(Ordering::Relaxed) >> ((a % 4) * 8)) as u8;
            }
        }
        fence(Ordering::Acquire);
        true
    }

    /// Copies `data` to `off` (`false` when out of bounds, nothing written).
    pub fn write(&self, off: u64, data: &[u8]) -> bool {
        // CAST: usize -> u64 widens.
        let Some(end) = off.checked_add(data.len() as u64) else {
            return false;
        };
        if end > self.len() {
            return false;
        }
        fence(Ordering::Release);
        if off % 4 == 0 && data.len() % 4 == 0 {
            let Some(first) = usize::try_from(off / 4).ok() else {
                return false;
            };
            let words = self
                .words
                .get(first..first + data.len() / 4)
                .unwrap_or_default();
            for (src, w) in data.chunks_exact(4).zip(words) {
                let v = u32::from_le_bytes(src.try_into().unwrap_or_default());
                w.store(v, Ordering::Relaxed);
            }
        } else {
            for (i, &b) in data.iter().enumerate() {
                // CAST: usize -> u64 widens.
                let a = off + i as u64;
                let Some(w) = self.word(a) else { return false };
                let shift = (a % 4) * 8;
                let mask = !(0xffu32 << shift);
                let _ = w.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |old| {
                    Some(old & mask | u32::from(b) << shift)
                });
            }
        }
        true
    }

    /// Acquire-load of the dword at byte `off` (must be 4-aligned).
    #[must_use]
    pub fn load_u32(&self, off: u64) -> Option<u32> {
        if off % 4 != 0 {
            return None;
        }
        self.word(off).map(|w| w.load(Ordering::Acquire))
    }

    /// Release-store of the dword at byte `off` (must be 4-aligned).
    pub fn store_u32(&self, off: u64, v: u32) -> bool {
        if off % 4 != 0 {
            return false;
        }
        self.word(off)
            .map(|w| w.store(v, Ordering::Release))
            .is_some()
    }
}

/// Access rights of a mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Perms {
    /// Stores allowed.
    pub write: bool,
    /// Instruction fetch allowed.
    pub execute: bool,
}

impl Perms {
    /// Read and write (data buffers, rings, signals).
    pub const RW: Self = Self {
        write: true,
        execute: false,
    };
    /// Read, write and execute (code objects: tinygrad maps everything this way).
    pub const RWX: Self = Self {
        write: true,
        execute: true,
    };
    /// Read only.
    pub const RO: Self = Self {
        write: false,
        execute: false,
    };
}

#[derive(Clone, Debug)]
struct Mapping {
    va: u64,
    len: u64,
    region: Arc<Region>,
    perms: Perms,
}

/// Why a mapping was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MapError {
    /// The address or length is not a multiple of 4 KiB, or the length is 0 or beyond the
    /// region.
    BadRange {
        /// Requested address.
        va: u64,
        /// Requested length.
        len: u64,
    },
    /// The range overlaps an existing mapping at `existing`.
    Overlap {
        /// Start of the mapping in the way.
        existing: u64,
    },
    /// [`MAX_MAPPINGS`] mappings were made already.
    TooMany,
}

impl core::fmt::Display for MapError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            MapError::BadRange { va, len } => write!(
                f,
                "cannot map {len:#x} bytes at {va:#x}: address and length must be nonzero multiples of 4 KiB within the region"
            ),
            MapError::Overlap { existing } => {
                write!(f, "range overlaps the mapping at {existing:#x}")
            }
            MapError::TooMany => write!(f, "more than {MAX_MAPPINGS} mappings"),
        }
    }
}

impl core::error::Error for MapError {}

/// What the engines told the "kernel driver" through a [`MemBus`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BusEvents {
    /// Interrupt context ids, in order.
    pub interrupts: Vec<u32>,
    /// Memory exceptions, in order.
    pub memory: Vec<HsaMemoryExceptionData>,
    /// HW exceptions, in order.
    pub hw: Vec<HsaHwExceptionData>,
}

/// Number of 64-bit doorbells in a [`MemBus`]'s slice (one KFD doorbell slice: 8 KiB).
pub const DOORBELLS: usize = 1024;

/// Most mappings a [`MemBus`] holds over its life (unmapped slots are not reused).
pub const MAX_MAPPINGS: usize = 256;

/// Append-only mapping slots: lock-free lookups (the engines' hot path), writers serialised.
#[derive(Debug)]
struct Maps {
    slots: Box<[OnceLock<Mapping>]>,
    dead: Box<[AtomicBool]>,
    count: AtomicUsize,
    writer: Mutex<()>,
}

impl Maps {
    fn new() -> Self {
        Self {
            slots: (0..MAX_MAPPINGS).map(|_| OnceLock::new()).collect(),
            dead: (0..MAX_MAPPINGS).map(|_| AtomicBool::new(false)).collect(),
            count: AtomicUsize::new(0),
            writer: Mutex::new(()),
        }
    }

    fn live(&self) -> impl Iterator<Item = (usize, &Mapping)> {
        let n = self.count.load(Ordering::Acquire);
        self.slots
            .iter()
            .take(n)
            .enumerate()
            .filter(|(i, _)| !self.dead.get(*i).is_some_and(|d| d.load(Ordering::Acquire)))
            .filter_map(|(i, s)| s.get().map(|m| (i, m)))
    }

    fn find(&self, va: u64) -> Option<&Mapping> {
        self.live()
            .map(|(_, m)| m)
            .find(|m| va.wrapping_sub(m.va) < m.len)
    }
}

/// A standalone GPU: its mappings, doorbells, and the events it raised.
#[derive(Debug)]
pub struct MemBus {
    gpu_id: u32,
    maps: Maps,
    doorbells: Box<[AtomicU64]>,
    events: Mutex<BusEvents>,
}

impl MemBus {
    /// A GPU with no mappings.
    #[must_use]
    pub fn new(gpu_id: u32) -> Arc<Self> {
        Arc::new(Self {
            gpu_id,
            maps: Maps::new(),
            doorbells: (0..DOORBELLS).map(|_| AtomicU64::new(0)).collect(),
            events: Mutex::new(BusEvents::default()),
        })
    }

    /// Maps the first `len` bytes of `region` at `va` for this GPU.
    ///
    /// # Errors
    /// [`MapError`] for a misaligned or empty range, one longer than the region, or an overlap.
    pub fn map(
        &self,
        va: u64,
        len: u64,
        region: &Arc<Region>,
        perms: Perms,
    ) -> Result<(), MapError> {
        let bad = MapError::BadRange { va, len };
        let end = va.checked_add(len).ok_or(bad)?;
        if va % 4096 != 0 || len % 4096 != 0 || len == 0 || len > region.len() {
            return Err(bad);
        }
        let _w = self
            .maps
            .writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some((_, m)) = self
            .maps
            .live()
            .find(|(_, m)| m.va < end && va < m.va + m.len)
        {
            return Err(MapError::Overlap { existing: m.va });
        }
        let i = self.maps.count.load(Ordering::Acquire);
        let slot = self.maps.slots.get(i).ok_or(MapError::TooMany)?;
        let _ = slot.set(Mapping {
            va,
            len,
            region: Arc::clone(region),
            perms,
        });
        self.maps.count.store(i + 1, Ordering::Release);
        Ok(())
    }

    /// Removes the mapping that starts at `va`; `false` when there is none.
    pub fn unmap(&self, va: u64) -> bool {
        let _w = self
            .maps
            .writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match self.maps.live().find(|(_, m)| m.va == va) {
            Some((i, _)) => {
                if let Some(d) = self.maps.dead.get(i) {
                    d.store(true, Ordering::Release);
                }
                true
            }
            None => false,
        }
    }

    /// Stores `value` to the doorbell at byte `offset` (8-byte slots), as the host's 64-bit
    /// doorbell write. `false` for an offset outside the slice or not 8-aligned.
    pub fn ring_doorbell(&self, offset: u64, value: u64) -> bool {
        if offset % 8 != 0 {
            return false;
        }
        let Some(d) = usize::try_from(offset / 8)
            .ok()
            .and_then(|i| self.doorbells.get(i))
        else {
            return false;
        };
        d.store(value, Ordering::Release);
        true
    }

    /// Everything raised so far.
    #[must_use]
    pub fn events(&self) -> BusEvents {
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Takes (and clears) everything raised so far.
    pub fn take_events(&self) -> BusEvents {
        core::mem::take(&mut *self.events.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Runs `f` on each piece of `[va, va+len)`, mapping by mapping.
    fn walk(
        &self,
        va: u64,
        len: usize,
        access: Access,
        mut f: impl FnMut(&Region, u64, core::ops::Range<usize>) -> bool,
    ) -> Result<(), VmFault> {
        let mut done = 0usize;
        while done < len {
            // CAST: usize -> u64 widens.
            let cur = va.wrapping_add(done as u64);
            let fault = |kind| VmFault {
                va: cur,
                access,
                kind,
            };
            let m = self.maps.find(cur).ok_or(fault(VmFaultKind::NotPresent))?;
            if access == Access::Write && !m.perms.write {
                return Err(fault(VmFaultKind::ReadOnly));
            }
            if access == Access::Execute && !m.perms.execute {
                return Err(fault(VmFaultKind::NoExecute));
            }
            let off = cur - m.va;
            let room = usize::try_from(m.len - off).unwrap_or(usize::MAX);
            let n = room.min(len - done);
            if !f(&m.region, off, done..done + n) {
                return Err(fault(VmFaultKind::NotPresent));
            }
            done += n;
        }
        Ok(())
    }
}

impl GpuBus for MemBus {
    fn gpu_id(&self) -> u32 {
        self.gpu_id
    }

    fn read(&self, va: u64, buf: &mut [u8], access: Access) -> Result<(), VmFault> {
        let len = buf.len();
        self.walk(va, len, access, |r, off, range| {
            buf.get_mut(range).is_some_and(|b| r.read(off, b))
        })
    }

    fn write(&self, va: u64, data: &[u8]) -> Result<(), VmFault> {
        self.walk(va, data.len(), Access::Write, |r, off, range| {
            data.get(range).is_some_and(|d| r.write(off, d))
        })
    }

    fn load_u32(&self, va: u64) -> Result<u32, VmFault> {
        let mut v = None;
        self.walk(va, 4, Access::Read, |r, off, range| {
            if range.len() == 4 {
                v = r.load_u32(off);
            }
            true
        })?;
        match v {
            Some(v) => Ok(v),
            None => {
                let mut b = [0u8; 4];
                self.read(va, &mut b, Access::Read)?;
                Ok(u32::from_le_bytes(b))
            }
        }
    }

    fn store_u32(&self, va: u64, v: u32) -> Result<(), VmFault> {
        let mut ok = false;
        self.walk(va, 4, Access::Write, |r, off, range| {
            ok = range.len() == 4 && r.store_u32(off, v);
            true
        })?;
        if ok {
            Ok(())
        } else {
            self.write(va, &v.to_le_bytes())
        }
    }

    fn doorbell(&self, offset: u64) -> Option<u64> {
        if offset % 8 != 0 {
            return None;
        }
        let i = usize::try_from(offset / 8).ok()?;
        self.doorbells.get(i).map(|d| d.load(Ordering::Acquire))
    }

    fn interrupt(&self, context_id: u32) {
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .interrupts
            .push(context_id);
    }

    fn memory_exception(&self, data: &HsaMemoryExceptionData) {
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .memory
            .push(*data);
    }

    fn hw_exception(&self, data: &HsaHwExceptionData) {
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .hw
            .push(*data);
    }
}
