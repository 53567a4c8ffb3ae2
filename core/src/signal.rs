//! `amd_signal_t` (64 bytes, 64-byte aligned): the memory a timeline signal lives in.
//!
//! The GPU writes `value` (32 bits: RELEASE_MEM / SDMA FENCE), compares it (WAIT_REG_MEM /
//! POLL_REGMEM, 32 bits), writes timestamps to `start_ts`, and when `event_mailbox_ptr` is set,
//! writes `event_id` there and raises an interrupt that wakes KFD's WAIT_EVENTS.

use bytemuck::{Pod, Zeroable};
use core::mem::{offset_of, size_of};

/// `amd_signal_kind_t::AMD_SIGNAL_KIND_USER`.
pub const SIGNAL_KIND_USER: i64 = 1;

/// `amd_signal_t` as the GPU and ROCR lay it out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C, align(64))]
pub struct AmdSignal {
    /// Signal kind (1: user).
    pub kind: i64,
    /// Current value (the GPU reads and writes the low 32 bits).
    pub value: i64,
    /// Address of this signal's KFD event slot (events page + 8 x slot), or 0.
    pub event_mailbox_ptr: u64,
    /// KFD event id written to the mailbox, or 0.
    pub event_id: u32,
    /// Reserved.
    pub reserved1: u32,
    /// GPU clock at the start timestamp (100 MHz).
    pub start_ts: u64,
    /// GPU clock at the end timestamp (100 MHz).
    pub end_ts: u64,
    /// Queue pointer / reserved.
    pub queue_ptr: u64,
    /// Reserved.
    pub reserved3: [u32; 2],
}

/// Size of an `amd_signal_t` in bytes.
pub const SIGNAL_SIZE: usize = 64;
/// Byte offset of `value`.
pub const VALUE_OFFSET: u64 = 8;
/// Byte offset of `event_mailbox_ptr`.
pub const EVENT_MAILBOX_PTR_OFFSET: u64 = 16;
/// Byte offset of `event_id`.
pub const EVENT_ID_OFFSET: u64 = 24;
/// Byte offset of `start_ts`.
pub const START_TS_OFFSET: u64 = 32;
/// Byte offset of `end_ts`.
pub const END_TS_OFFSET: u64 = 40;

const _: () = assert!(size_of::<AmdSignal>() == SIGNAL_SIZE);
const _: () = assert!(core::mem::align_of::<AmdSignal>() == 64);
const _: () = assert!(offset_of!(AmdSignal, kind) == 0);
const _: () = assert!(offset_of!(AmdSignal, value) as u64 == VALUE_OFFSET);
const _: () = assert!(offset_of!(AmdSignal, event_mailbox_ptr) as u64 == EVENT_MAILBOX_PTR_OFFSET);
const _: () = assert!(offset_of!(AmdSignal, event_id) as u64 == EVENT_ID_OFFSET);
const _: () = assert!(offset_of!(AmdSignal, reserved1) == 28);
const _: () = assert!(offset_of!(AmdSignal, start_ts) as u64 == START_TS_OFFSET);
const _: () = assert!(offset_of!(AmdSignal, end_ts) as u64 == END_TS_OFFSET);
const _: () = assert!(offset_of!(AmdSignal, queue_ptr) == 48);
const _: () = assert!(offset_of!(AmdSignal, reserved3) == 56);

/// What a packet needs to know about a signal: where it lives on the GPU and, when it has a
/// KFD event, where the mailbox is. `addr` is the base of the 64-byte `amd_signal_t`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SignalRef {
    /// GPU virtual address of the `amd_signal_t` (64-byte aligned).
    pub addr: u64,
    /// GPU address of the KFD event mailbox slot, or 0 for a signal without an event.
    pub event_mailbox_ptr: u64,
    /// KFD event id (written to the mailbox and used as the interrupt context).
    pub event_id: u32,
}

impl SignalRef {
    /// A signal without a KFD event.
    #[must_use]
    #[inline]
    pub const fn new(addr: u64) -> Self {
        Self {
            addr,
            event_mailbox_ptr: 0,
            event_id: 0,
        }
    }

    /// Address of `value` (what waits and signals target).
    #[must_use]
    #[inline]
    pub const fn value_addr(&self) -> u64 {
        self.addr.wrapping_add(VALUE_OFFSET)
    }

    /// Address of `start_ts`.
    #[must_use]
    #[inline]
    pub const fn start_ts_addr(&self) -> u64 {
        self.addr.wrapping_add(START_TS_OFFSET)
    }

    /// Address of `end_ts`.
    #[must_use]
    #[inline]
    pub const fn end_ts_addr(&self) -> u64 {
        self.addr.wrapping_add(END_TS_OFFSET)
    }

    /// Whether completing this signal must also write its KFD event mailbox and interrupt.
    #[must_use]
    #[inline]
    pub const fn has_event(&self) -> bool {
        self.event_mailbox_ptr != 0
    }
}

use crate::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use core::fmt;

/// A slot of a [`SignalPool`]: the GPU address of one 64-byte `amd_signal_t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SignalSlot {
    addr: u64,
    index: u32,
}

impl SignalSlot {
    /// GPU address of the slot's `amd_signal_t`.
    #[must_use]
    pub const fn addr(&self) -> u64 {
        self.addr
    }

    /// Index of the slot in its pool.
    #[must_use]
    pub const fn index(&self) -> u32 {
        self.index
    }

    /// Byte offset of the slot from the start of its pool's memory.
    #[must_use]
    pub const fn offset(&self) -> u64 {
        // CAST: u32 -> u64 widens.
        self.index as u64 * SIGNAL_SIZE as u64
    }
}

/// Why a pool operation was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PoolError {
    /// Every slot is in use.
    Exhausted {
        /// Number of slots in the pool.
        capacity: u32,
    },
    /// The slot is not in this pool (wrong address range or alignment).
    Foreign {
        /// The slot's address.
        addr: u64,
        /// Base address of this pool.
        base: u64,
        /// Number of slots in this pool.
        capacity: u32,
    },
    /// The slot is already free.
    DoubleFree {
        /// The slot's address.
        addr: u64,
    },
    /// The pool's base address is not 64-byte aligned, its capacity exceeds `WORDS * 64`,
    /// or its memory would pass the end of the address space.
    BadPool {
        /// The base address asked for.
        base: u64,
        /// The capacity asked for.
        capacity: u32,
    },
}

impl fmt::Display for PoolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Exhausted { capacity } => {
                write!(f, "all {capacity} signal slots are in use")
            }
            Self::Foreign {
                addr,
                base,
                capacity,
            } => write!(
                f,
                "signal {addr:#x} is not a slot of the pool at {base:#x} with {capacity} slots"
            ),
            Self::DoubleFree { addr } => write!(f, "signal {addr:#x} is already free"),
            Self::BadPool { base, capacity } => write!(
                f,
                "signal pool at {base:#x} with {capacity} slots: base must be 64-byte aligned and capacity fit the pool type"
            ),
        }
    }
}

impl core::error::Error for PoolError {}

/// A fixed-capacity pool of 64-byte `amd_signal_t` slots in memory the owner provides at GPU
/// address `base`: a bitmap of `WORDS` atomic words (`WORDS * 64` slots at most), so alloc and
/// free take no lock and allocate nothing, and are safe from several threads.
///
/// The seed keeps 65536 signals in one page set: [`SignalPool65536`].
///
/// ```
/// use hcq_core::signal::{PoolError, SignalPool};
/// let pool = SignalPool::<1>::new(0x1000, 2)?;
/// let a = pool.alloc()?;
/// let b = pool.alloc()?;
/// assert_eq!((a.addr(), b.addr()), (0x1000, 0x1040));
/// assert_eq!(pool.alloc(), Err(PoolError::Exhausted { capacity: 2 }));
/// pool.free(a)?;
/// assert_eq!(pool.free(a), Err(PoolError::DoubleFree { addr: 0x1000 }));
/// # Ok::<(), PoolError>(())
/// ```
pub struct SignalPool<const WORDS: usize> {
    base: u64,
    capacity: u32,
    /// Bit `i % 64` of word `i / 64` is set while slot `i` is allocated. Bits at or past
    /// `capacity` are set from the start, so they are never handed out.
    used: [AtomicU64; WORDS],
    /// Word where the next search starts (a hint; any value is correct).
    hint: AtomicUsize,
}

/// The seed's pool size: 65536 slots (4 MiB of signals).
pub type SignalPool65536 = SignalPool<1024>;

impl<const WORDS: usize> fmt::Debug for SignalPool<WORDS> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SignalPool")
            .field("base", &self.base)
            .field("capacity", &self.capacity)
            .field("in_use", &self.in_use())
            .finish_non_exhaustive()
    }
}

impl<const WORDS: usize> SignalPool<WORDS> {
    /// A pool of `capacity` slots (at most `WORDS * 64`) starting at GPU address `base`
    /// (64-byte aligned).
    ///
    /// # Errors
    /// [`PoolError::BadPool`] otherwise.
    pub fn new(base: u64, capacity: u32) -> Result<Self, PoolError> {
        let bad = PoolError::BadPool { base, capacity };
        let cap = usize::try_from(capacity).map_err(|_| bad)?;
        let fits = cap <= WORDS.saturating_mul(64);
        let end = u64::from(capacity)
            .checked_mul(SIGNAL_SIZE as u64)
            .and_then(|n| base.checked_add(n));
        if base % SIGNAL_SIZE as u64 != 0 || !fits || end.is_none() {
            return Err(bad);
        }
        let used = core::array::from_fn(|w| {
            // Slots w*64 .. w*64+64; those at or past `cap` are marked used forever.
            let first = w * 64;
            let valid = cap.saturating_sub(first).min(64);
            AtomicU64::new(if valid == 64 { 0 } else { !0u64 << valid })
        });
        Ok(Self {
            base,
            capacity,
            used,
            hint: AtomicUsize::new(0),
        })
    }

    /// Number of slots.
    #[must_use]
    pub const fn capacity(&self) -> u32 {
        self.capacity
    }

    /// GPU address of slot 0.
    #[must_use]
    pub const fn base(&self) -> u64 {
        self.base
    }

    /// Slots currently allocated (a snapshot).
    #[must_use]
    pub fn in_use(&self) -> u32 {
        let set: u64 = self
            .used
            .iter()
            .map(|w| u64::from(w.load(Ordering::Relaxed).count_ones()))
            .sum();
        // Bits past the capacity are permanently set.
        // CAST: usize -> u64 widens on every supported target.
        let extra = (WORDS as u64).saturating_mul(64) - u64::from(self.capacity);
        // CAST: what is left counts allocated slots, at most `capacity: u32`.
        set.saturating_sub(extra) as u32
    }

    /// Takes a free slot.
    ///
    /// # Errors
    /// [`PoolError::Exhausted`] when every slot is in use.
    pub fn alloc(&self) -> Result<SignalSlot, PoolError> {
        let start = self.hint.load(Ordering::Relaxed);
        for k in 0..WORDS {
            let w = (start + k) % WORDS;
            let Some(word) = self.used.get(w) else {
                continue;
            };
            let mut cur = word.load(Ordering::Relaxed);
            while cur != u64::MAX {
                let bit = cur.trailing_ones();
                match word.compare_exchange_weak(
                    cur,
                    cur | (1 << bit),
                    Ordering::Acquire,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        self.hint.store(w, Ordering::Relaxed);
                        // CAST: w * 64 + bit < capacity <= u32::MAX (bits past it are set).
                        let index = (w * 64) as u32 + bit;
                        return Ok(SignalSlot {
                            addr: self.base + u64::from(index) * SIGNAL_SIZE as u64,
                            index,
                        });
                    }
                    Err(now) => cur = now,
                }
            }
        }
        Err(PoolError::Exhausted {
            capacity: self.capacity,
        })
    }

    /// Returns a slot to the pool.
    ///
    /// # Errors
    /// [`PoolError::Foreign`] for a slot of another pool, [`PoolError::DoubleFree`] for a slot
    /// that is already free; nothing changes then.
    pub fn free(&self, slot: SignalSlot) -> Result<(), PoolError> {
        let foreign = PoolError::Foreign {
            addr: slot.addr,
            base: self.base,
            capacity: self.capacity,
        };
        let off = slot.addr.checked_sub(self.base).ok_or(foreign)?;
        let index = off / SIGNAL_SIZE as u64;
        if off % SIGNAL_SIZE as u64 != 0
            || index >= u64::from(self.capacity)
            || index != u64::from(slot.index)
        {
            return Err(foreign);
        }
        // CAST: index < capacity, which fits usize (checked in `new`).
        let index = index as usize;
        let word = self.used.get(index / 64).ok_or(foreign)?;
        let bit = 1u64 << (index % 64);
        // Release: the owner's last use of the slot happens before its next owner's alloc.
        let old = word.fetch_and(!bit, Ordering::Release);
        if old & bit == 0 {
            return Err(PoolError::DoubleFree { addr: slot.addr });
        }
        Ok(())
    }
}

#[cfg(test)]
mod pool_tests {
    use super::*;
    use crate::testing::shown;

    #[test]
    fn pools_and_signals_say_where_they_are() {
        let pool = SignalPool::<2>::new(0x10_0000, 70).unwrap();
        assert_eq!((pool.base(), pool.capacity()), (0x10_0000, 70));
        let _a = pool.alloc().unwrap();
        assert_eq!(
            shown(&format_args!("{pool:?}")).as_str(),
            "SignalPool { base: 1048576, capacity: 70, in_use: 1, .. }"
        );
        let s = SignalRef::new(0x2000);
        assert_eq!(
            (s.value_addr(), s.start_ts_addr(), s.end_ts_addr()),
            // amd_signal_t: value at 8, start_ts at 32, end_ts at 40.
            (0x2008, 0x2020, 0x2028)
        );
    }

    #[test]
    fn pool_errors_explain_themselves() {
        let cases = [
            (
                PoolError::Exhausted { capacity: 70 },
                "all 70 signal slots are in use",
            ),
            (
                PoolError::Foreign {
                    addr: 0x40,
                    base: 0x1000,
                    capacity: 2,
                },
                "signal 0x40 is not a slot of the pool at 0x1000 with 2 slots",
            ),
            (
                PoolError::DoubleFree { addr: 0x1040 },
                "signal 0x1040 is already free",
            ),
            (
                PoolError::BadPool {
                    base: 0x1001,
                    capacity: 3,
                },
                "signal pool at 0x1001 with 3 slots: base must be 64-byte aligned and capacity fit the pool type",
            ),
        ];
        for (e, want) in cases {
            assert_eq!(shown(&e).as_str(), want);
        }
    }

    #[test]
    fn alloc_free_exhaust() {
        let pool = SignalPool::<2>::new(0x10_0000, 70).unwrap();
        let mut slots = [SignalSlot { addr: 0, index: 0 }; 70];
        for (i, s) in slots.iter_mut().enumerate() {
            *s = pool.alloc().unwrap();
            assert_eq!(s.index() as usize, i);
            assert_eq!(s.addr(), 0x10_0000 + 64 * i as u64);
            assert_eq!(s.offset(), 64 * i as u64);
        }
        assert_eq!(pool.in_use(), 70);
        assert_eq!(pool.alloc(), Err(PoolError::Exhausted { capacity: 70 }));
        pool.free(slots[65]).unwrap();
        pool.free(slots[3]).unwrap();
        assert_eq!(pool.in_use(), 68);
        assert_eq!(
            pool.free(slots[3]),
            Err(PoolError::DoubleFree {
                addr: 0x10_0000 + 3 * 64
            })
        );
        let mut got = [pool.alloc().unwrap().index(), pool.alloc().unwrap().index()];
        got.sort_unstable();
        assert_eq!(got, [3, 65]);
        assert_eq!(pool.alloc(), Err(PoolError::Exhausted { capacity: 70 }));
    }

    #[test]
    fn foreign_and_bad_pools() {
        let a = SignalPool::<1>::new(0x1000, 4).unwrap();
        let b = SignalPool::<1>::new(0x2000, 4).unwrap();
        let s = b.alloc().unwrap();
        assert_eq!(
            a.free(s),
            Err(PoolError::Foreign {
                addr: 0x2000,
                base: 0x1000,
                capacity: 4
            })
        );
        let forged = SignalSlot {
            addr: 0x1000 + 4 * 64,
            index: 4,
        };
        assert!(matches!(a.free(forged), Err(PoolError::Foreign { .. })));
        let forged = SignalSlot {
            addr: 0x1008,
            index: 0,
        };
        assert!(matches!(a.free(forged), Err(PoolError::Foreign { .. })));
        assert_eq!(b.free(s), Ok(()));
        assert_eq!(
            SignalPool::<1>::new(0x1001, 4).unwrap_err(),
            PoolError::BadPool {
                base: 0x1001,
                capacity: 4
            }
        );
        assert!(SignalPool::<1>::new(0, 65).is_err());
        assert!(SignalPool::<1>::new(u64::MAX - 63, 2).is_err());
        let big = SignalPool65536::new(0, 65536).unwrap();
        assert_eq!(big.alloc().unwrap().index(), 0);
        assert_eq!(big.in_use(), 1);
    }
}
