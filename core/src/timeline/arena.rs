//! `TimelineArena`: a bump allocator whose regions are reused only after the work that used them
//! has completed (kernargs, staging buffers, bound command buffers).

use super::TimelineValue;
use core::fmt;
use heapless::Deque;

/// A region handed out by [`TimelineArena::alloc`]: a byte offset into the owner's memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Region {
    /// Byte offset from the start of the arena (aligned as asked, relative to that start).
    pub offset: u64,
    /// Size in bytes.
    pub size: u64,
}

/// Why an allocation was refused. Nothing was handed out when an error is returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArenaError {
    /// The space is still in use by work that has not completed: wait until the timeline
    /// reaches `value`, then retry.
    MustWait {
        /// The timeline value to wait for.
        value: TimelineValue,
    },
    /// The allocation is larger than the whole arena: waiting cannot help.
    TooLarge {
        /// Bytes asked for.
        size: u64,
        /// Capacity of the arena in bytes.
        capacity: u64,
    },
    /// The alignment is not a power of two no larger than the arena.
    BadAlign {
        /// The alignment asked for.
        align: u64,
    },
    /// The arena capacity is not a nonzero power of two.
    BadCapacity {
        /// The capacity asked for.
        capacity: u64,
    },
}

impl fmt::Display for ArenaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::MustWait { value } => write!(
                f,
                "arena space is still used by work up to timeline value {}: wait for it",
                value.get()
            ),
            Self::TooLarge { size, capacity } => write!(
                f,
                "allocation of {size:#x} bytes is larger than the arena ({capacity:#x} bytes)"
            ),
            Self::BadAlign { align } => write!(
                f,
                "alignment {align:#x} is not a power of two no larger than the arena"
            ),
            Self::BadCapacity { capacity } => write!(
                f,
                "arena capacity {capacity:#x} bytes is not a nonzero power of two"
            ),
        }
    }
}

impl core::error::Error for ArenaError {}

/// One in-flight stretch of the arena: everything up to `end` (monotonic) is used by work up
/// to `tag`.
#[derive(Clone, Copy, Debug)]
struct Stretch {
    end: u64,
    tag: TimelineValue,
}

/// A bump allocator over `capacity` bytes (offsets only; the owner maps them to memory).
///
/// Positions are monotonic byte counters like ring pointers: live bytes are `[tail, head)`,
/// the offset of a position is `pos % capacity`. Each allocation is tagged with the timeline
/// value of the work that uses it; consecutive allocations with the same tag share one record,
/// and at most `N` records are kept (when full, the newest record absorbs the allocation and
/// keeps the larger tag, which only ever waits longer). An allocation reuses bytes only when
/// every record covering them has a tag the timeline has completed; otherwise it says which
/// value to wait for. An allocation never straddles the end: it skips to offset 0 instead.
///
/// The arena's base address must be aligned to the largest alignment asked for.
///
/// ```
/// use hcq_core::timeline::{ArenaError, TimelineArena, TimelineValue as V};
/// let mut kernargs = TimelineArena::<8>::new(256)?;
/// let a = kernargs.alloc(200, 16, V::new(1), V::ZERO)?;      // used by submission 1
/// assert_eq!(a.offset, 0);
/// // 100 bytes do not fit after 200: reuse of offset 0 must wait for submission 1.
/// assert_eq!(kernargs.alloc(100, 16, V::new(2), V::ZERO), Err(ArenaError::MustWait { value: V::new(1) }));
/// let b = kernargs.alloc(100, 16, V::new(2), V::new(1))?;    // 1 has completed
/// assert_eq!(b.offset, 0);
/// # Ok::<(), ArenaError>(())
/// ```
#[derive(Clone, Debug)]
pub struct TimelineArena<const N: usize> {
    capacity: u64,
    head: u64,
    tail: u64,
    live: Deque<Stretch, N>,
}

impl<const N: usize> TimelineArena<N> {
    /// An empty arena of `capacity` bytes (a nonzero power of two).
    ///
    /// # Errors
    /// [`ArenaError::BadCapacity`] otherwise.
    pub fn new(capacity: u64) -> Result<Self, ArenaError> {
        const { assert!(N > 0, "a TimelineArena needs room for at least one record") };
        if !capacity.is_power_of_two() {
            return Err(ArenaError::BadCapacity { capacity });
        }
        Ok(Self {
            capacity,
            head: 0,
            tail: 0,
            live: Deque::new(),
        })
    }

    /// Capacity in bytes.
    #[must_use]
    pub const fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Bytes held by work not yet known to be complete (including skipped tails).
    #[must_use]
    pub const fn in_use(&self) -> u64 {
        self.head - self.tail
    }

    /// Forgets every record whose tag is `<= done`.
    #[inline]
    pub fn release(&mut self, done: TimelineValue) {
        while let Some(s) = self.live.front() {
            if s.tag > done {
                return;
            }
            self.tail = s.end;
            self.live.pop_front();
        }
        self.tail = self.head;
    }

    /// Hands out `size` bytes aligned to `align` for work that completes at `tag`; `done` is
    /// the value the timeline has completed.
    ///
    /// # Errors
    /// [`ArenaError::MustWait`] if the space is still in use (nothing changes except that
    /// records completed by `done` are forgotten), [`ArenaError::TooLarge`],
    /// [`ArenaError::BadAlign`].
    #[inline]
    pub fn alloc(
        &mut self,
        size: u64,
        align: u64,
        tag: TimelineValue,
        done: TimelineValue,
    ) -> Result<Region, ArenaError> {
        let cap = self.capacity;
        if !align.is_power_of_two() || align > cap {
            return Err(ArenaError::BadAlign { align });
        }
        if size > cap {
            return Err(ArenaError::TooLarge {
                size,
                capacity: cap,
            });
        }
        self.release(done);
        let off = self.head & (cap - 1);
        // off < cap and align <= cap (both powers of two), so this is at most cap.
        let aligned = (off + (align - 1)) & !(align - 1);
        let start = if aligned + size <= cap {
            self.head + (aligned - off)
        } else {
            self.head + (cap - off) // skip the rest of this lap; offset 0 is always aligned
        };
        let end = start + size;
        if self.live.is_empty() {
            // Nothing in flight: the skipped bytes need no waiting.
            self.tail = start;
        }
        if end - self.tail > cap {
            return Err(ArenaError::MustWait {
                value: self.must_wait(end),
            });
        }
        let full = self.live.is_full();
        match self.live.back_mut() {
            Some(b) if b.tag == tag || full => {
                b.end = end;
                b.tag = b.tag.max(tag);
            }
            _ => {
                // Not full here (a full deque has a back and took the branch above; N > 0 is
                // asserted in `new`), so this cannot fail; refuse rather than lose a record.
                if self.live.push_back(Stretch { end, tag }).is_err() {
                    return Err(ArenaError::MustWait { value: tag });
                }
            }
        }
        self.head = end;
        Ok(Region {
            offset: start & (cap - 1),
            size,
        })
    }

    /// The smallest value whose completion makes `[.., end)` fit.
    fn must_wait(&self, end: u64) -> TimelineValue {
        let mut value = TimelineValue::ZERO;
        for s in &self.live {
            value = value.max(s.tag);
            if end - s.end <= self.capacity {
                break;
            }
        }
        value
    }
}
