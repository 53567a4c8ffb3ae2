//! Several producers on one ring (ROCR's SDMA blit): compare-and-swap reservation, strictly
//! in-order publication.

use super::{Doorbell, Grant, RingError, RingKind, RingLayout, RingPtr};
use crate::sync::atomic::{AtomicU64, Ordering};
use crate::sync::spin_loop;

/// The producer side of a ring written by several threads (`&self` everywhere).
///
/// Two CPU-side counters, both monotonic in `K`'s unit: `reserved` (space handed out, advanced
/// by compare-and-swap) and `committed` (space published to the GPU). A producer publishes only
/// when `committed` has reached the start of its grant, i.e. after every earlier reservation
/// was published, so the GPU-visible write pointer and the doorbell only ever move forward and
/// never expose a region still being written.
///
/// SDMA wrap padding is part of the reservation of the submission that needs it (one
/// compare-and-swap covers padding and packets), so there is no window in which a pad is
/// reserved without the packet behind it.
pub struct SharedProducer<K> {
    layout: RingLayout<K>,
    reserved: AtomicU64,
    committed: AtomicU64,
}

impl<K: RingKind> core::fmt::Debug for SharedProducer<K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SharedProducer")
            .field("layout", &self.layout)
            .field("reserved", &self.reserved.load(Ordering::Relaxed))
            .field("committed", &self.committed.load(Ordering::Relaxed))
            .finish()
    }
}

impl<K: RingKind> SharedProducer<K> {
    /// A producer for an empty ring whose read and write pointers are both `start`.
    ///
    /// # Errors
    /// [`RingError::Misaligned`] for an SDMA pointer that is not a multiple of 4 bytes.
    pub fn new(layout: RingLayout<K>, start: RingPtr<K>) -> Result<Self, RingError> {
        RingLayout::check_start(start)?;
        Ok(Self {
            layout,
            reserved: AtomicU64::new(start.get()),
            committed: AtomicU64::new(start.get()),
        })
    }

    /// The ring's layout.
    #[must_use]
    pub const fn layout(&self) -> RingLayout<K> {
        self.layout
    }

    /// Everything published so far (the write pointer the GPU has been told).
    #[must_use]
    pub fn committed(&self) -> RingPtr<K> {
        RingPtr::new(self.committed.load(Ordering::Acquire))
    }

    /// Reserves room for a submission of `len` dwords made of packets of lengths `packets`
    /// (which must add up to `len`). `read` is the consumer's read pointer (loaded `Acquire`).
    ///
    /// # Errors
    /// [`RingError::WouldOverrun`] (nothing reserved; wait and retry), [`RingError::TooLarge`],
    /// [`RingError::BadPointer`], [`RingError::PacketLengths`].
    pub fn reserve_packets<I>(
        &self,
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
        loop {
            // Read pointer first, then the reservation index: the consumer's read pointer was
            // published after the write pointer it read, which was stored after that space was
            // reserved, so (by coherence) this load of `reserved` sees at least as far as the
            // read pointer. The other order can pair a stale `reserved` with a fresh read
            // pointer that is ahead of it (loom found exactly that).
            let r = read.load(Ordering::Acquire);
            let cur = self.reserved.load(Ordering::Relaxed);
            let grant = self.layout.plan(cur, r, len, packets.clone())?;
            if self
                .reserved
                .compare_exchange_weak(cur, grant.end.get(), Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
            {
                return Ok(grant);
            }
            spin_loop();
        }
    }

    /// Reserves room for one packet (or PM4 stream) of `len` dwords.
    ///
    /// # Errors
    /// As [`SharedProducer::reserve_packets`].
    pub fn reserve(&self, len: usize, read: &AtomicU64) -> Result<Grant<K>, RingError> {
        self.reserve_packets(len, core::iter::once(len), read)
    }

    /// Publishes `grant` if every earlier reservation has been published: stores the write
    /// pointer to `write` (`Release`), calls `doorbell` with the value to ring (still in
    /// order, so doorbell values never go backwards), then lets the next producer go.
    ///
    /// # Errors
    /// Hands the grant back when an earlier reservation is still unpublished.
    pub fn try_publish<F>(
        &self,
        grant: Grant<K>,
        write: &AtomicU64,
        doorbell: F,
    ) -> Result<(), Grant<K>>
    where
        F: FnOnce(Doorbell<K>),
    {
        if self.committed.load(Ordering::Acquire) != grant.start.get() {
            return Err(grant);
        }
        write.store(grant.end.get(), Ordering::Release);
        doorbell(Doorbell(grant.end));
        self.committed.store(grant.end.get(), Ordering::Release);
        Ok(())
    }

    /// Publishes `grant`, spinning until every earlier reservation has been published (those
    /// are other producers' CPU-side copies, so the wait is short unless a grant was leaked).
    pub fn publish<F>(&self, mut grant: Grant<K>, write: &AtomicU64, doorbell: F)
    where
        F: FnOnce(Doorbell<K>),
    {
        let mut doorbell = Some(doorbell);
        loop {
            let ring = |d| {
                if let Some(f) = doorbell.take() {
                    f(d);
                }
            };
            match self.try_publish(grant, write, ring) {
                Ok(()) => return,
                Err(g) => {
                    grant = g;
                    spin_loop();
                }
            }
        }
    }
}
