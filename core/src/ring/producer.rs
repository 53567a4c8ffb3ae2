//! The single producer: one owner writes the ring (`&mut self`), no atomics besides the
//! GPU-visible pointers.

use super::{Doorbell, Grant, RingError, RingKind, RingLayout, RingMemory, RingPtr, fill_from};
use crate::sync::atomic::{AtomicU64, Ordering};

/// The producer side of a ring with one writer.
///
/// It keeps its own copy of the write pointer and a cached read pointer, so a reservation
/// reads the GPU's read pointer only when the cached value says the submission does not fit.
pub struct Producer<K> {
    layout: RingLayout<K>,
    write: u64,
    read_cache: u64,
}

impl<K: RingKind> core::fmt::Debug for Producer<K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Producer")
            .field("layout", &self.layout)
            .field("write", &RingPtr::<K>::new(self.write))
            .field("read_cache", &RingPtr::<K>::new(self.read_cache))
            .finish()
    }
}

impl<K: RingKind> Producer<K> {
    /// A producer for an empty ring whose read and write pointers are both `start`.
    ///
    /// # Errors
    /// [`RingError::Misaligned`] for an SDMA pointer that is not a multiple of 4 bytes.
    pub fn new(layout: RingLayout<K>, start: RingPtr<K>) -> Result<Self, RingError> {
        RingLayout::check_start(start)?;
        Ok(Self {
            layout,
            write: start.get(),
            read_cache: start.get(),
        })
    }

    /// The ring's layout.
    #[must_use]
    pub const fn layout(&self) -> RingLayout<K> {
        self.layout
    }

    /// The write pointer as last published.
    #[must_use]
    pub const fn write_pointer(&self) -> RingPtr<K> {
        RingPtr::new(self.write)
    }

    /// Reserves room for one packet (or, for PM4, any stream) of `len` dwords.
    ///
    /// `read` is the queue's read pointer as the consumer publishes it; it is loaded with
    /// `Acquire` (only when the cached value is not enough), so the consumer's reads of old
    /// dwords happen before this producer overwrites them.
    ///
    /// # Errors
    /// [`RingError::WouldOverrun`] (nothing written; wait and retry), [`RingError::TooLarge`],
    /// [`RingError::BadPointer`].
    #[inline]
    pub fn reserve(&mut self, len: usize, read: &AtomicU64) -> Result<Grant<K>, RingError> {
        self.reserve_packets(len, core::iter::once(len), read)
    }

    /// Reserves room for a submission of `len` dwords made of packets of lengths `packets`
    /// (which must add up to `len`; SDMA pads only between them).
    ///
    /// # Errors
    /// As [`Producer::reserve`], plus [`RingError::PacketLengths`].
    #[inline]
    pub fn reserve_packets<I>(
        &mut self,
        len: usize,
        packets: I,
        read: &AtomicU64,
    ) -> Result<Grant<K>, RingError>
    where
        I: IntoIterator<Item = usize>,
        I::IntoIter: Clone,
    {
        let packets = packets.into_iter();
        if !K::SPLITS_PACKETS {
            super::check_packets(packets.clone(), len)?;
        }
        match self
            .layout
            .plan(self.write, self.read_cache, len, packets.clone())
        {
            Err(RingError::WouldOverrun { .. }) => {
                let fresh = read.load(Ordering::Acquire);
                let planned = self.layout.plan(self.write, fresh, len, packets);
                // Keep an impossible read pointer out of the cache, so a later call rereads it.
                if !matches!(planned, Err(RingError::BadPointer { .. })) {
                    self.read_cache = fresh;
                }
                planned
            }
            other => other,
        }
    }

    /// Publishes a filled grant: stores the write pointer to `write` with `Release` ordering
    /// and returns the doorbell value for the caller's 64-bit doorbell store.
    ///
    /// # Errors
    /// [`RingError::StaleGrant`] for a grant that does not start at the write pointer (reserved
    /// before another grant was published); nothing is stored then.
    #[inline]
    pub fn publish(
        &mut self,
        grant: Grant<K>,
        write: &AtomicU64,
    ) -> Result<Doorbell<K>, RingError> {
        if grant.start.get() != self.write {
            return Err(RingError::StaleGrant {
                start: grant.start.get(),
                write: self.write,
                unit: K::UNIT,
            });
        }
        self.write = grant.end.get();
        write.store(self.write, Ordering::Release);
        Ok(Doorbell(grant.end))
    }

    /// Reserve, copy and publish `data` as one stream (PM4) or one packet (SDMA).
    ///
    /// # Errors
    /// As [`Producer::reserve`], plus [`RingError::Memory`] if `mem` cannot lend the grant.
    #[inline]
    pub fn submit<M: RingMemory + ?Sized>(
        &mut self,
        mem: &mut M,
        read: &AtomicU64,
        write: &AtomicU64,
        data: &[u32],
    ) -> Result<Doorbell<K>, RingError> {
        let grant = self.reserve(data.len(), read)?;
        fill_from(&grant, mem, data)?;
        self.publish(grant, write)
    }

    /// Reserve, copy and publish `data`, made of packets of lengths `packets`.
    ///
    /// # Errors
    /// As [`Producer::reserve_packets`], plus [`RingError::Memory`].
    pub fn submit_packets<M, I>(
        &mut self,
        mem: &mut M,
        read: &AtomicU64,
        write: &AtomicU64,
        data: &[u32],
        packets: I,
    ) -> Result<Doorbell<K>, RingError>
    where
        M: RingMemory + ?Sized,
        I: IntoIterator<Item = usize>,
        I::IntoIter: Clone,
    {
        let grant = self.reserve_packets(data.len(), packets, read)?;
        fill_from(&grant, mem, data)?;
        self.publish(grant, write)
    }
}
