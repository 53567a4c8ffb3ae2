//! The consumer side (what the CP or SDMA engine does; the simulator uses it).

use super::{RingError, RingKind, RingLayout, RingPtr};
use crate::sync::atomic::{AtomicU64, Ordering};
use core::ops::Range;

/// Reads a ring the way the GPU does: acquire-load the write pointer, read only the dwords it
/// publishes, then advance the read pointer with `Release` so the producer may reuse them.
pub struct Consumer<K> {
    layout: RingLayout<K>,
    read: u64,
    /// Write pointer seen by the last [`Consumer::readable`].
    write_seen: u64,
}

impl<K: RingKind> core::fmt::Debug for Consumer<K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Consumer")
            .field("layout", &self.layout)
            .field("read", &RingPtr::<K>::new(self.read))
            .field("write_seen", &RingPtr::<K>::new(self.write_seen))
            .finish()
    }
}

/// Published, unread dwords: at most two ranges of ring memory, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Readable<K: RingKind> {
    /// Read pointer at the first dword.
    pub start: RingPtr<K>,
    /// Write pointer after the last dword.
    pub end: RingPtr<K>,
    /// Dword indices from the read position towards the end of the ring.
    pub head: Range<usize>,
    /// Dword indices from 0, following `head`.
    pub tail: Range<usize>,
}

impl<K: RingKind> Readable<K> {
    /// Number of readable dwords.
    #[must_use]
    pub fn len(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    /// Whether nothing is readable.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.head.is_empty() && self.tail.is_empty()
    }
}

impl<K: RingKind> Consumer<K> {
    /// A consumer for an empty ring whose pointers are both `start`.
    ///
    /// # Errors
    /// [`RingError::Misaligned`] for an SDMA pointer that is not a multiple of 4 bytes.
    pub fn new(layout: RingLayout<K>, start: RingPtr<K>) -> Result<Self, RingError> {
        RingLayout::check_start(start)?;
        Ok(Self {
            layout,
            read: start.get(),
            write_seen: start.get(),
        })
    }

    /// The read pointer (as last stored).
    #[must_use]
    pub const fn read_pointer(&self) -> RingPtr<K> {
        RingPtr::new(self.read)
    }

    /// Acquire-loads the write pointer and returns the published, unread dwords.
    ///
    /// # Errors
    /// [`RingError::BadPointer`] if the write pointer is behind the read pointer or more than
    /// a ring ahead (a corrupt or hostile producer), or not dword aligned (SDMA:
    /// [`RingError::Misaligned`]).
    pub fn readable(&mut self, write: &AtomicU64) -> Result<Readable<K>, RingError> {
        let w = write.load(Ordering::Acquire);
        if w % K::UNITS_PER_DWORD != 0 {
            return Err(RingError::Misaligned { pointer: w });
        }
        let used = self.layout.used(self.read, w)?;
        self.write_seen = w;
        let idx = self.layout.index(self.read);
        // CAST: used <= size, so used / UNITS_PER_DWORD <= size_dw, which fits usize.
        let len = (used / K::UNITS_PER_DWORD) as usize;
        let first = len.min(self.layout.size_dw - idx);
        Ok(Readable {
            start: RingPtr::new(self.read),
            end: RingPtr::new(w),
            head: idx..idx + first,
            tail: 0..len - first,
        })
    }

    /// Marks `dwords` read and stores the read pointer to `read` with `Release`.
    ///
    /// # Errors
    /// [`RingError::ConsumeTooMuch`] if more than the last [`Consumer::readable`] showed.
    pub fn consume(&mut self, dwords: u64, read: &AtomicU64) -> Result<(), RingError> {
        let readable = self.write_seen.wrapping_sub(self.read) / K::UNITS_PER_DWORD;
        if dwords > readable {
            return Err(RingError::ConsumeTooMuch { dwords, readable });
        }
        self.read = self.read.wrapping_add(dwords * K::UNITS_PER_DWORD);
        read.store(self.read, Ordering::Release);
        Ok(())
    }
}
