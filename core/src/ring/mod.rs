//! Ring producer/consumer state machines for the PM4 (compute) and SDMA (copy) rings.
//!
//! # Pointers
//!
//! Read and write pointers are monotonic 64-bit counters in the queue's own unit, as the
//! hardware and KFD expect them: a PM4 ring counts **dwords**, an SDMA ring counts **bytes**.
//! The two are distinct types ([`RingPtr<Pm4>`] and [`RingPtr<Sdma>`]), so they cannot be mixed.
//! Empty is `w == r`, full is `w - r == size` (no wasted slot), and all arithmetic wraps, so the
//! pointers keep working past 2^32 (and past 2^64).
//!
//! # Policies
//!
//! One state machine, two policies chosen by the kind:
//! - [`Pm4`]: a packet may continue across the end of the ring; the CP reads modulo the size.
//! - [`Sdma`]: a packet never crosses the end. When the next packet of a submission does not fit
//!   before the end, the tail of the ring is padded with zero dwords (SDMA NOP) and writing
//!   restarts at 0. Padding only ever happens between packets (tinygrad's approach), so a
//!   submission comes as dwords plus the lengths of its packets.
//!
//! # Who owns the memory
//!
//! The ring is shared with the GPU while both run, so core never holds a reference to all of
//! it. A reservation yields a [`Grant`]: the dword ranges (at most two, split at the wrap) that
//! the caller may write. The owner of the memory (driver, simulator, loom model) turns those
//! ranges into `&mut [u32]` slices, either directly or through [`RingMemory`], core fills them
//! with plain copies ([`Grant::fill`]), then the write pointer is stored with `Release` ordering
//! and the doorbell value is handed back for the caller's 64-bit doorbell store.
//!
//! ```
//! use hcq_core::ring::{Pm4, Producer, RingLayout, RingPtr};
//! use hcq_core::sync::atomic::AtomicU64;
//!
//! // The owner's memory: here a plain array; in the driver, the mmap'd ring.
//! let mut ring = [0u32; 256];
//! let (wptr, rptr) = (AtomicU64::new(0), AtomicU64::new(0)); // the GPU-visible pointers
//! let layout = RingLayout::<Pm4>::new(256 * 4)?;
//! let mut producer = Producer::new(layout, RingPtr::new(0))?;
//!
//! let launch = [0xC003_7600u32, 1, 2, 3, 4];
//! let doorbell = producer.submit(&mut ring[..], &rptr, &wptr, &launch)?;
//! assert_eq!(doorbell.value(), 5); // PM4: dwords
//! assert_eq!(&ring[..5], &launch);
//!
//! // The same steps by hand: reserve, lend slices, fill, publish.
//! let grant = producer.reserve(3, &rptr)?;
//! let (head, tail) = grant.ranges();
//! let (lo, hi) = ring.split_at_mut(head.start);
//! grant.fill(&mut hi[..head.len()], &mut lo[tail], &[7, 8, 9])?;
//! let doorbell = producer.publish(grant, &wptr)?;
//! assert_eq!(doorbell.value(), 8);
//! # Ok::<(), hcq_core::ring::RingError>(())
//! ```
//!
//! Several producers on one ring use [`SharedProducer`] (compare-and-swap reservation,
//! strictly in-order publication); the GPU side is modelled by [`Consumer`].

mod consumer;
mod producer;
mod shared;

pub use consumer::{Consumer, Readable};
pub use producer::Producer;
pub use shared::SharedProducer;

use core::fmt;
use core::marker::PhantomData;
use core::ops::Range;

mod private {
    pub trait Sealed {}
}

/// The kind of a ring: its pointer unit and its wrap policy.
pub trait RingKind: private::Sealed + Copy + Eq + fmt::Debug + Send + Sync + 'static {
    /// Name used in messages.
    const NAME: &'static str;
    /// Unit the pointers count.
    const UNIT: Unit;
    /// Pointer units per dword (PM4: 1, SDMA: 4).
    const UNITS_PER_DWORD: u64;
    /// Whether a packet may continue across the end of the ring.
    const SPLITS_PACKETS: bool;
}

/// PM4 compute ring: pointers count dwords, packets may continue across the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pm4 {}

/// SDMA copy ring: pointers count bytes, packets never cross the end (the tail is NOP-padded).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sdma {}

impl private::Sealed for Pm4 {}
impl private::Sealed for Sdma {}

impl RingKind for Pm4 {
    const NAME: &'static str = "PM4";
    const UNIT: Unit = Unit::Dwords;
    const UNITS_PER_DWORD: u64 = 1;
    const SPLITS_PACKETS: bool = true;
}

impl RingKind for Sdma {
    const NAME: &'static str = "SDMA";
    const UNIT: Unit = Unit::Bytes;
    const UNITS_PER_DWORD: u64 = 4;
    const SPLITS_PACKETS: bool = false;
}

/// The unit a ring pointer counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unit {
    /// 32-bit words (PM4).
    Dwords,
    /// Bytes (SDMA).
    Bytes,
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Dwords => "dwords",
            Self::Bytes => "bytes",
        })
    }
}

/// A monotonic ring pointer in `K`'s unit (PM4: dwords, SDMA: bytes).
///
/// This is the value the hardware's read/write pointers and the doorbell hold: it never wraps
/// at the ring size, only (in theory) at 2^64.
#[repr(transparent)]
pub struct RingPtr<K> {
    raw: u64,
    kind: PhantomData<K>,
}

impl<K> RingPtr<K> {
    /// A pointer with the raw value `raw` (in `K`'s unit).
    #[must_use]
    pub const fn new(raw: u64) -> Self {
        Self {
            raw,
            kind: PhantomData,
        }
    }

    /// The raw value (in `K`'s unit).
    #[must_use]
    pub const fn get(self) -> u64 {
        self.raw
    }
}

impl<K> Clone for RingPtr<K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K> Copy for RingPtr<K> {}
impl<K> PartialEq for RingPtr<K> {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw
    }
}
impl<K> Eq for RingPtr<K> {}
impl<K> core::hash::Hash for RingPtr<K> {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.raw.hash(state);
    }
}
impl<K: RingKind> fmt::Debug for RingPtr<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RingPtr<{}>({:#x} {})", K::NAME, self.raw, K::UNIT)
    }
}

/// The value to store, as a 64-bit write, into the queue's doorbell after publishing.
///
/// For PM4 and SDMA rings it is the new write pointer (in the ring's unit); AQL queues would
/// use `write - 1`, which is not modelled here.
#[must_use = "a published submission runs only after its doorbell is rung"]
pub struct Doorbell<K>(RingPtr<K>);

impl<K> Doorbell<K> {
    /// The 64-bit value for the doorbell store.
    #[must_use]
    pub const fn value(&self) -> u64 {
        self.0.raw
    }

    /// The write pointer it announces.
    #[must_use]
    pub const fn write_pointer(&self) -> RingPtr<K> {
        self.0
    }
}

impl<K: RingKind> fmt::Debug for Doorbell<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Doorbell").field(&self.0).finish()
    }
}

/// Why a ring operation was refused. Nothing was written when an error is returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RingError {
    /// The ring size is not a power of two of at least 16 bytes that fits the address space.
    BadSize {
        /// The size asked for, in bytes.
        bytes: u64,
    },
    /// An SDMA pointer that is not a multiple of 4 bytes.
    Misaligned {
        /// The pointer, in bytes.
        pointer: u64,
    },
    /// The submission (with its wrap padding) is larger than the whole ring: waiting cannot help.
    TooLarge {
        /// Space the submission needs, in `unit`.
        needed: u64,
        /// Size of the ring, in `unit`.
        size: u64,
        /// Unit of the numbers.
        unit: Unit,
    },
    /// The submission does not fit in the free space now; wait for the consumer and retry.
    WouldOverrun {
        /// Space the submission needs (with its wrap padding), in `unit`.
        needed: u64,
        /// Free space, in `unit`.
        free: u64,
        /// Unit of the numbers.
        unit: Unit,
    },
    /// The other side's pointer is impossible: ahead of ours, or more than the ring size behind.
    BadPointer {
        /// The read pointer, in `unit`.
        read: u64,
        /// The write pointer, in `unit`.
        write: u64,
        /// Unit of the numbers.
        unit: Unit,
    },
    /// The packet lengths do not add up to the dwords submitted.
    PacketLengths {
        /// Sum of the packet lengths, in dwords.
        sum: usize,
        /// Dwords submitted.
        len: usize,
    },
    /// A grant published out of turn: it does not start at the current write pointer.
    StaleGrant {
        /// Where the grant starts, in `unit`.
        start: u64,
        /// The current write pointer, in `unit`.
        write: u64,
        /// Unit of the numbers.
        unit: Unit,
    },
    /// The memory lent for a grant is not what the grant covers.
    Memory {
        /// Dwords the grant covers.
        expected: usize,
        /// Dwords lent (or 0 if the owner could not lend them).
        got: usize,
    },
    /// Consuming more than has been published.
    ConsumeTooMuch {
        /// Dwords asked for.
        dwords: u64,
        /// Dwords published and unread.
        readable: u64,
    },
}

impl fmt::Display for RingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::BadSize { bytes } => write!(
                f,
                "ring size {bytes:#x} bytes is not a power of two between 16 bytes and 2^40 bytes"
            ),
            Self::Misaligned { pointer } => {
                write!(
                    f,
                    "SDMA ring pointer {pointer:#x} is not a multiple of 4 bytes"
                )
            }
            Self::TooLarge { needed, size, unit } => write!(
                f,
                "submission needs {needed} {unit} (with wrap padding) but the ring holds only {size} {unit}"
            ),
            Self::WouldOverrun { needed, free, unit } => write!(
                f,
                "submission needs {needed} {unit} but only {free} {unit} are free: wait for the read pointer"
            ),
            Self::BadPointer { read, write, unit } => write!(
                f,
                "read pointer {read:#x} and write pointer {write:#x} ({unit}) are inconsistent: read is ahead of write or more than a ring behind"
            ),
            Self::PacketLengths { sum, len } => write!(
                f,
                "packet lengths add up to {sum} dwords but {len} dwords were submitted"
            ),
            Self::StaleGrant { start, write, unit } => write!(
                f,
                "grant starts at {start:#x} {unit} but the write pointer is {write:#x}: publish grants in the order they were reserved"
            ),
            Self::Memory { expected, got } => write!(
                f,
                "ring memory lent for the grant has {got} dwords where the grant covers {expected}"
            ),
            Self::ConsumeTooMuch { dwords, readable } => write!(
                f,
                "cannot consume {dwords} dwords: only {readable} are published and unread"
            ),
        }
    }
}

impl core::error::Error for RingError {}

/// Largest ring accepted: 2^40 bytes (far beyond any real ring; keeps every index in `usize`
/// on 64-bit targets and every unit count far from overflow).
const MAX_RING_BYTES: u64 = 1 << 40;

/// Size of a ring of kind `K`, fixed at creation.
pub struct RingLayout<K> {
    /// Size in `K`'s units (a power of two).
    size: u64,
    /// Size in dwords (a power of two that fits `usize`).
    size_dw: usize,
    kind: PhantomData<K>,
}

impl<K> Clone for RingLayout<K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K> Copy for RingLayout<K> {}
impl<K: RingKind> fmt::Debug for RingLayout<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RingLayout<{}>({} {})", K::NAME, self.size, K::UNIT)
    }
}

impl<K: RingKind> RingLayout<K> {
    /// A ring of `bytes` bytes: a power of two between 16 bytes and 2^40 bytes.
    ///
    /// # Errors
    /// [`RingError::BadSize`] for any other size.
    pub fn new(bytes: u64) -> Result<Self, RingError> {
        if !bytes.is_power_of_two() || !(16..=MAX_RING_BYTES).contains(&bytes) {
            return Err(RingError::BadSize { bytes });
        }
        let dwords = bytes / 4;
        let size_dw = usize::try_from(dwords).map_err(|_| RingError::BadSize { bytes })?;
        Ok(Self {
            size: dwords * K::UNITS_PER_DWORD,
            size_dw,
            kind: PhantomData,
        })
    }

    /// Size in `K`'s unit.
    #[must_use]
    pub const fn size(&self) -> u64 {
        self.size
    }

    /// Size in dwords (the length of the memory the owner provides).
    #[must_use]
    pub const fn size_dwords(&self) -> usize {
        self.size_dw
    }

    /// Dword index in the ring memory of pointer `p`.
    #[inline]
    fn index(&self, p: u64) -> usize {
        // CAST: `p & (size - 1)` < size, and size / UNITS_PER_DWORD == size_dw fits usize
        // (checked in `new`), so the quotient fits.
        ((p & (self.size - 1)) / K::UNITS_PER_DWORD) as usize
    }

    /// Units occupied between `read` and `write`, or an error if the pair is impossible.
    #[inline]
    fn used(&self, read: u64, write: u64) -> Result<u64, RingError> {
        // Wrapping: both are monotonic, so `write - read` is exact even across 2^64. A read
        // pointer ahead of the write pointer shows up as a huge difference.
        let used = write.wrapping_sub(read);
        if used > self.size {
            return Err(RingError::BadPointer {
                read,
                write,
                unit: K::UNIT,
            });
        }
        Ok(used)
    }

    /// Checks an initial pointer (SDMA pointers must be dword aligned).
    fn check_start(start: RingPtr<K>) -> Result<(), RingError> {
        if start.raw % K::UNITS_PER_DWORD != 0 {
            return Err(RingError::Misaligned { pointer: start.raw });
        }
        Ok(())
    }

    /// Plans a reservation of `len_dw` dwords made of packets of lengths `packets` (only
    /// consulted by the SDMA policy, and only when the submission reaches the end of the ring)
    /// at write pointer `write` with read pointer `read`.
    #[inline]
    fn plan<I>(
        &self,
        write: u64,
        read: u64,
        len_dw: usize,
        packets: I,
    ) -> Result<Grant<K>, RingError>
    where
        I: IntoIterator<Item = usize>,
    {
        let used = self.used(read, write)?;
        let idx = self.index(write);
        let room = self.size_dw - idx; // dwords before the end of the ring (>= 1)
        // `split`: data dwords that go before the end; `pad`: zero dwords after them.
        let (split, pad) = if len_dw <= room {
            (len_dw, 0)
        } else if K::SPLITS_PACKETS {
            (room, 0)
        } else {
            let mut fit = 0usize;
            for p in packets {
                match fit.checked_add(p) {
                    Some(n) if n <= room => fit = n,
                    _ => break,
                }
            }
            (fit, room - fit)
        };
        let total_dw = len_dw.saturating_add(pad);
        // CAST: usize -> u64 is lossless on every supported target (<= 64-bit).
        let needed = (total_dw as u64).saturating_mul(K::UNITS_PER_DWORD);
        if needed > self.size {
            return Err(RingError::TooLarge {
                needed,
                size: self.size,
                unit: K::UNIT,
            });
        }
        let free = self.size - used;
        if needed > free {
            return Err(RingError::WouldOverrun {
                needed,
                free,
                unit: K::UNIT,
            });
        }
        // total_dw <= size_dw here, so none of these overflow.
        Ok(Grant {
            start: RingPtr::new(write),
            end: RingPtr::new(write.wrapping_add(needed)),
            head: idx..idx + split + pad,
            tail: 0..len_dw - split,
            split,
        })
    }
}

/// Sums packet lengths, refusing a list that does not add up to `len`.
fn check_packets<I>(packets: I, len: usize) -> Result<(), RingError>
where
    I: IntoIterator<Item = usize>,
{
    let sum = packets
        .into_iter()
        .try_fold(0usize, usize::checked_add)
        .unwrap_or(usize::MAX);
    if sum != len {
        return Err(RingError::PacketLengths { sum, len });
    }
    Ok(())
}

/// A reserved region of the ring: where to write a submission, and the write pointer that
/// publishes it.
///
/// The region is at most two dword ranges of the ring memory: `head` (from the write position
/// towards the end of the ring) and `tail` (from dword 0). The first [`Grant::split`] dwords of
/// the submission go to the start of `head`, the rest of `head` is wrap padding (zeroes, SDMA
/// only), and the remaining submission dwords go to `tail`.
///
/// A grant must be published, in reservation order; an abandoned grant of a
/// [`SharedProducer`] blocks every later producer, so fill it with NOPs and publish it instead.
#[must_use = "a reserved grant must be filled and published"]
pub struct Grant<K> {
    start: RingPtr<K>,
    end: RingPtr<K>,
    head: Range<usize>,
    tail: Range<usize>,
    split: usize,
}

impl<K: RingKind> fmt::Debug for Grant<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Grant")
            .field("start", &self.start)
            .field("end", &self.end)
            .field("head", &self.head)
            .field("tail", &self.tail)
            .field("split", &self.split)
            .finish()
    }
}

impl<K: RingKind> Grant<K> {
    /// Write pointer where the grant starts.
    #[must_use]
    pub const fn start(&self) -> RingPtr<K> {
        self.start
    }

    /// Write pointer after the grant (what publishing stores and the doorbell announces).
    #[must_use]
    pub const fn end(&self) -> RingPtr<K> {
        self.end
    }

    /// The dword ranges of ring memory to lend: `(head, tail)`. `tail` is empty or starts at 0
    /// and ends before `head` starts.
    #[must_use]
    pub fn ranges(&self) -> (Range<usize>, Range<usize>) {
        (self.head.clone(), self.tail.clone())
    }

    /// Submission dwords that go at the start of `head`.
    #[must_use]
    pub const fn split(&self) -> usize {
        self.split
    }

    /// Zero (SDMA NOP) dwords after them, up to the end of the ring.
    #[must_use]
    pub fn padding(&self) -> usize {
        self.head.len() - self.split
    }

    /// Submission dwords the grant holds.
    #[must_use]
    pub fn data_len(&self) -> usize {
        self.split + self.tail.len()
    }

    /// Copies `data` into the lent slices `head` and `tail` (exactly the grant's ranges) and
    /// zero-fills the wrap padding.
    ///
    /// # Errors
    /// [`RingError::Memory`] if a slice has the wrong length, [`RingError::PacketLengths`] if
    /// `data` is not exactly [`Grant::data_len`] dwords. Nothing is written then.
    #[inline(always)]
    pub fn fill(&self, head: &mut [u32], tail: &mut [u32], data: &[u32]) -> Result<(), RingError> {
        if head.len() != self.head.len() {
            return Err(RingError::Memory {
                expected: self.head.len(),
                got: head.len(),
            });
        }
        if tail.len() != self.tail.len() {
            return Err(RingError::Memory {
                expected: self.tail.len(),
                got: tail.len(),
            });
        }
        let (Some(first), Some(rest)) = (data.get(..self.split), data.get(self.split..)) else {
            return Err(RingError::PacketLengths {
                sum: self.data_len(),
                len: data.len(),
            });
        };
        if rest.len() != tail.len() {
            return Err(RingError::PacketLengths {
                sum: self.data_len(),
                len: data.len(),
            });
        }
        let (dst, pad) = head.split_at_mut(self.split);
        dst.copy_from_slice(first);
        // The common case is one contiguous copy: skip the empty memset/memcpy calls.
        if !pad.is_empty() {
            pad.fill(0);
        }
        if !rest.is_empty() {
            tail.copy_from_slice(rest);
        }
        Ok(())
    }
}

/// The owner of a ring's memory, lending the part a grant covers.
///
/// The driver implements it over the mmap'd ring (its `unsafe` lives there), the simulator over
/// its buffer object; core implements it for a plain `[u32]`.
pub trait RingMemory {
    /// Lends the dwords `head` and `tail` (disjoint: `tail` is empty or `0..n` with
    /// `n <= head.start`) as two slices of exactly those lengths, or `None` if the memory does
    /// not hold them.
    fn slices_mut(
        &mut self,
        head: Range<usize>,
        tail: Range<usize>,
    ) -> Option<(&mut [u32], &mut [u32])>;
}

impl RingMemory for [u32] {
    #[inline]
    fn slices_mut(
        &mut self,
        head: Range<usize>,
        tail: Range<usize>,
    ) -> Option<(&mut [u32], &mut [u32])> {
        let (lo, hi) = self.split_at_mut_checked(head.start)?;
        let head_len = head.end.checked_sub(head.start)?;
        Some((hi.get_mut(..head_len)?, lo.get_mut(tail)?))
    }
}

/// Lends the grant's memory from `mem` and fills it with `data`.
#[inline]
fn fill_from<K: RingKind, M: RingMemory + ?Sized>(
    grant: &Grant<K>,
    mem: &mut M,
    data: &[u32],
) -> Result<(), RingError> {
    let (head, tail) = grant.ranges();
    let expected = head.len() + tail.len();
    let (h, t) = mem
        .slices_mut(head, tail)
        .ok_or(RingError::Memory { expected, got: 0 })?;
    grant.fill(h, t, data)
}

#[cfg(test)]
mod tests;
