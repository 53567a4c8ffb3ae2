//! Seeded bugs: realistic driver bugs, switched on one at a time in the driver's real code
//! paths, so the simulator's verdicts can be tested against bugs a developer actually writes
//! (`tests/tests/seeded_bugs.rs`).
//!
//! Only with the `seeded-bugs` cargo feature, which no default feature enables: without it
//! this module does not exist and every hook in the driver is the constant `false`, compiled
//! out. With it, nothing changes until a test arms a bug: [`arm`] turns one [`Bug`] on for the
//! calling thread (the driver's host side runs on the thread that calls it) until the
//! returned [`Armed`] guard drops, so tests running side by side in one binary do not see
//! each other's bugs.

use core::cell::Cell;

/// One driver bug. Each is a one- or two-line change in the driver path it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Bug {
    /// Launch: the pre-encoded launch commands lose their `memory_barrier` (HDP flush, then
    /// cache invalidate) before the dispatch, so the kernel may read kernargs the CPU wrote
    /// into VRAM that still sit in HDP. Set when the program is loaded (the template is
    /// encoded then).
    LaunchWithoutBarrier,
    /// Device copy: [`crate::Device::copy`] without its HDP flush, so the copy may read
    /// VRAM the CPU wrote that still sits in HDP.
    DeviceCopyWithoutHdpFlush,
    /// Graph: a recorded launch without its `memory_barrier`, so a replay's kernel may read
    /// the kernargs the replay's patch just wrote, still in HDP.
    GraphLaunchWithoutBarrier,
    /// Every copy-queue submission skips its wait for the previous timeline value, so a copy
    /// runs beside the compute work before it (multi-queue ordering).
    CopySkipsTimelineWait,
    /// Every submission waits for its own timeline value instead of the previous one (a wrong
    /// timeline value in a wait): the queue waits for a value only it would write.
    WaitForOwnValue,
    /// The SDMA ring's producer lets a packet run across the end of the ring (as the PM4
    /// ring may) instead of padding to the end with NOPs.
    SplitSdmaPackets,
    /// The scratch buffer is allocated 64 times smaller than `COMPUTE_TMPRING_SIZE` says.
    ShortScratch,
    /// `hidden_grid_dims` is written as 1 whatever the launch's dimensions.
    HiddenGridDimsOne,
    /// `hidden_group_size_y` gets the x group size (a swapped launch dimension).
    HiddenGroupSizeYFromX,
    /// Copy in: a staging buffer is rewritten without waiting for the copy that last read it
    /// (the wait for its last timeline value dropped).
    CopyInReusesStaging,
    /// Copy out: a staging buffer is read back without waiting for the copy into it.
    CopyOutSkipsWait,
    /// Launch: the kernarg arena hands out its start for every launch, as if every earlier
    /// launch had completed (an arena region reused early).
    KernargsReusedEarly,
    /// Copy out: a chunk is read back from the other staging buffer than the one its copy
    /// wrote (the two staging pointers swapped), which the next chunk's copy, pipelined ahead
    /// of the read back, is still writing.
    CopyOutReadsOtherStaging,
    /// Launch: the kernarg pointer and the dispatch pointer user SGPRs swapped in the
    /// launch template's patch (the dispatch packet's address where the kernargs' belongs).
    KernargDispatchPtrsSwapped,
    /// Launch: the launch's work-group counts are taken for work-item counts and multiplied
    /// by the block again (DISPATCH_DIRECT, the dispatch packet and the hidden arguments all
    /// get the larger grid), so the grid is block times larger than the caller's.
    GroupsAsWorkItems,
    /// AQL queue: a submission writes its packets without waiting for `read_dispatch_id`
    /// (no ring back-pressure), so it overwrites slots, and their PM4 buffers, that the
    /// packet processor has not retired.
    AqlOverwritesUnread,
    /// AQL launch: the launch leaves out its wait for the previous timeline value even when
    /// that value came from the copy queue (the barrier bit orders packets of one queue only),
    /// so the dispatch runs beside the copy before it.
    AqlLaunchSkipsCopyWait,
    /// Graph: the recorded command list's cache invalidates leave the scalar cache (every
    /// ACQUIRE_MEM loses `GLK_INV`, `SH_KCACHE_ACTION_ENA` on gfx9: a hand-written
    /// invalidate mask that forgets the K$), so a replay's kernel reads its kernargs through
    /// K$ lines the previous replay filled: the values the host patched for this replay do
    /// not reach the kernel, which runs with the previous replay's. Set when the graph is
    /// recorded (the list is uploaded then).
    GraphKeepsKcache,
    /// AQL graph: the recorded kernel dispatch packets lose the barrier bit and their
    /// acquire/release fences, so a replay's dispatch may start while the one before it still
    /// runs and read what that one has not finished writing.
    AqlGraphDispatchWithoutBarrier,
    /// Graph: a replay patches its kernargs and lists without first waiting for the previous
    /// replay of the same graph, which may still be reading them.
    GraphReplayPatchesEarly,
}

std::thread_local! {
    static ARMED: Cell<Option<Bug>> = const { Cell::new(None) };
}

/// Arms `bug` on this thread until the guard drops (replacing any bug armed before).
#[must_use = "the bug is disarmed when the guard drops"]
pub fn arm(bug: Bug) -> Armed {
    let before = ARMED.with(|a| a.replace(Some(bug)));
    Armed { before }
}

/// Whether `bug` is armed on this thread (the driver's hooks ask through `seeded!`).
#[must_use]
pub fn armed(bug: Bug) -> bool {
    ARMED.with(|a| a.get() == Some(bug))
}

/// [`Bug::GraphKeepsKcache`]'s change to a bound PM4 command list: every ACQUIRE_MEM's K$
/// invalidate cleared (`GLK_INV` in GCR_CNTL, the last dword of the 8-dword gfx10+ packet;
/// `SH_KCACHE_ACTION_ENA` in CP_COHER_CNTL, the first body dword of the 7-dword gfx9 one).
/// Stops at the first dword that does not decode.
pub(crate) fn drop_kcache_invalidates(list: &[core::sync::atomic::AtomicU32]) {
    use core::sync::atomic::Ordering::Relaxed;
    use hcq_core::pm4::{CpCoherCntl, GcrCntl, Pm4Header, op};
    let mut at = 0;
    while let Some(h) = list.get(at).map(|d| d.load(Relaxed)) {
        let Ok(len) = hcq_core::pm4::packet_len(h) else {
            return;
        };
        if Pm4Header(h).get(Pm4Header::OPCODE) == op::ACQUIRE_MEM {
            let (dword, bit) = match len {
                8 => (at + 7, GcrCntl::zeroed().with(GcrCntl::GLK_INV, 1).raw()),
                _ => (
                    at + 1,
                    CpCoherCntl::zeroed()
                        .with(CpCoherCntl::SH_KCACHE_ACTION_ENA, 1)
                        .raw(),
                ),
            };
            if let Some(d) = list.get(dword) {
                d.fetch_and(!bit, Relaxed);
            }
        }
        at += len.max(1);
    }
}

/// Keeps a bug armed; dropping it restores what was armed before.
#[derive(Debug)]
pub struct Armed {
    before: Option<Bug>,
}

impl Drop for Armed {
    fn drop(&mut self) {
        ARMED.with(|a| a.set(self.before));
    }
}
