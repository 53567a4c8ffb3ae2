//! The interface engines use: GPU memory through the per-GPU page tables, doorbells, queue
//! pointers, completion interrupts, VM faults and HW exceptions, and the GPU clock.

use crate::kfd::{Engine, SimKfd};
use crate::mem::{SharedMem, UserPages};
use crate::state::{Backing, QueueInfo, State};
use crate::vm::{Access, VmFault, VmFaultKind};
use core::fmt;
use hcq_core::kfd::{
    HsaHwExceptionData, KFD_DOORBELL_SIZE, KFD_EVENT_SLOT_SIZE, KFD_EVENT_SLOT_UNSIGNALED,
    KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE, KFD_IOC_EVENT_HW_EXCEPTION, KFD_IOC_EVENT_MEMORY,
};
use std::sync::{Arc, PoisonError};

mod span;
mod tlb;
pub use span::GpuSpan;
use tlb::{TLB, TlbEntry};

/// A GPU VM fault: what the page walk found instead of memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GpuFault {
    /// The GPU whose VM faulted.
    pub gpu_id: u32,
    /// The first faulting address.
    pub va: u64,
    /// Whether the access was a write.
    pub write: bool,
    /// What was wrong (one fault vocabulary with the engines': [`VmFaultKind`]).
    pub reason: VmFaultKind,
}

impl GpuFault {
    /// The same fault as the engines describe it (the access is a read or a write).
    #[must_use]
    pub fn vm_fault(&self) -> VmFault {
        VmFault {
            va: self.va,
            access: if self.write {
                Access::Write
            } else {
                Access::Read
            },
            kind: self.reason,
        }
    }
}

impl fmt::Display for GpuFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (GPU {:#x})", self.vm_fault(), self.gpu_id)
    }
}

impl core::error::Error for GpuFault {}

/// One contiguous piece of a translated access.
enum Target {
    Shared(Arc<SharedMem>, u64),
    User(Arc<UserPages>, u64),
}

/// The memory behind one GPU mapping.
enum Backed {
    Shared(Arc<SharedMem>),
    User(Arc<UserPages>),
}

/// A page-table walk's result: the mapping `[start, end)` holding the address, whether it is
/// writable, and its memory (the BO's offset 0 is at `start`).
struct Walk {
    start: u64,
    end: u64,
    writable: bool,
    mem: Backed,
}

impl SimKfd {
    /// Walks `gpu_id`'s page table for `va` under the state lock.
    fn walk(&self, gpu_id: u32, va: u64, write: bool) -> Result<Walk, GpuFault> {
        let fault = |reason| GpuFault {
            gpu_id,
            va,
            write,
            reason,
        };
        let st = self.lock();
        let g = st.gpu_by_id(gpu_id).ok_or(fault(VmFaultKind::NotPresent))?;
        let (start, e) = st.lookup(g, va).ok_or(fault(VmFaultKind::NotPresent))?;
        let bo = st
            .bos
            .get(&e.handle)
            .ok_or(fault(VmFaultKind::NotPresent))?;
        let writable = bo.flags & KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE != 0;
        if write && !writable {
            return Err(fault(VmFaultKind::ReadOnly));
        }
        let mem = match &bo.backing {
            Backing::Shared(m) => Backed::Shared(Arc::clone(m)),
            Backing::User(pages) => Backed::User(Arc::clone(pages)),
            Backing::UserInvalidated => return Err(fault(VmFaultKind::NotPresent)),
        };
        Ok(Walk {
            start,
            end: e.end,
            writable,
            mem,
        })
    }

    /// Translates `va` on `gpu_id`: where its bytes are and how many follow in that mapping.
    fn translate(&self, gpu_id: u32, va: u64, write: bool) -> Result<(Target, u64), GpuFault> {
        let w = self.walk(gpu_id, va, write)?;
        let (off, avail) = (va - w.start, w.end - va);
        Ok(match w.mem {
            Backed::Shared(m) => (Target::Shared(m, off), avail),
            Backed::User(pages) => (Target::User(pages, off), avail),
        })
    }

    /// Runs `f` on the memory `va` translates to on `gpu_id` (with the offset in it and the
    /// bytes that follow in the mapping), through this thread's cached translations: the
    /// page-table walk, under the state lock, only on a miss or after the page tables changed.
    fn with_translation<R>(
        &self,
        gpu_id: u32,
        va: u64,
        write: bool,
        f: impl FnOnce(&Backed, u64, u64) -> R,
    ) -> Result<R, GpuFault> {
        let epoch = self.vm_epoch.load(core::sync::atomic::Ordering::Acquire);
        TLB.with(|tlb| {
            let Ok(mut tlb) = tlb.try_borrow_mut() else {
                let w = self.walk(gpu_id, va, write)?;
                return Ok(f(&w.mem, va - w.start, w.end - va));
            };
            if let Some(e) = tlb.find(self.uid, epoch, gpu_id, va)
                && (e.walk.writable || !write)
            {
                return Ok(f(&e.walk.mem, va - e.walk.start, e.walk.end - va));
            }
            let walk = self.walk(gpu_id, va, write)?;
            let r = f(&walk.mem, va - walk.start, walk.end - va);
            tlb.insert(TlbEntry {
                sim: self.uid,
                gpu_id,
                epoch,
                walk,
            });
            Ok(r)
        })
    }

    /// Reads `buf.len()` bytes at GPU VA `va` through `gpu_id`'s page table.
    ///
    /// # Errors
    /// The first address not mapped on that GPU (or USERPTR memory the process unmapped).
    pub fn gpu_read(&self, gpu_id: u32, va: u64, buf: &mut [u8]) -> Result<(), GpuFault> {
        self.read_via(gpu_id, va, buf, true, false)
    }

    /// Reads `buf.len()` bytes at GPU VA `va` through `gpu_id`'s page table from memory, past
    /// its L2 (what an engine that is no L2 client, SDMA on gfx9, reads).
    ///
    /// # Errors
    /// As [`SimKfd::gpu_read`].
    pub fn gpu_read_memory(&self, gpu_id: u32, va: u64, buf: &mut [u8]) -> Result<(), GpuFault> {
        self.read_via(gpu_id, va, buf, false, false)
    }

    /// What the CPU reads through its own mapping of the buffer at GPU VA `va` of `gpu_id`:
    /// memory as it is, past every GPU's L2 and the HDP (VRAM through the BAR, GTT without
    /// snooping the GPU's caches). For tests that play a host reading results the moment a
    /// signal says they are there.
    ///
    /// # Errors
    /// As [`SimKfd::gpu_read`].
    pub fn cpu_read(&self, gpu_id: u32, va: u64, buf: &mut [u8]) -> Result<(), GpuFault> {
        let mut done = 0usize;
        while done < buf.len() {
            // CAST: usize fits u64.
            let cur = va.wrapping_add(done as u64);
            let (t, avail) = self.translate(gpu_id, cur, false)?;
            let n = usize::try_from(avail)
                .unwrap_or(usize::MAX)
                .min(buf.len() - done);
            let chunk = buf.get_mut(done..done + n).unwrap_or_default();
            let ok = match t {
                Target::Shared(m, off) => m.read(off, chunk),
                Target::User(pages, off) => pages.read(off, chunk).is_ok(),
            };
            if !ok {
                return Err(GpuFault {
                    gpu_id,
                    va: cur,
                    write: false,
                    reason: VmFaultKind::NotPresent,
                });
            }
            done += n;
        }
        Ok(())
    }

    /// Reads `buf.len()` bytes at GPU VA `va` through `gpu_id`'s page table and L2, bytes the
    /// CPU wrote after the last HDP flush reading as GPU engines see them (what the HDP held)
    /// instead of faulting.
    ///
    /// # Errors
    /// As [`SimKfd::gpu_read`], never for a stale byte.
    pub fn gpu_read_visible(&self, gpu_id: u32, va: u64, buf: &mut [u8]) -> Result<(), GpuFault> {
        self.read_via(gpu_id, va, buf, true, true)
    }

    fn read_via(
        &self,
        gpu_id: u32,
        va: u64,
        buf: &mut [u8],
        l2: bool,
        relaxed: bool,
    ) -> Result<(), GpuFault> {
        let mut done = 0usize;
        while done < buf.len() {
            // CAST: usize fits u64.
            let cur = va.wrapping_add(done as u64);
            let rest = buf.get_mut(done..).unwrap_or_default();
            let (n, ok) = self.with_translation(gpu_id, cur, false, |mem, off, avail| {
                let n = usize::try_from(avail).unwrap_or(usize::MAX).min(rest.len());
                let chunk = rest.get_mut(..n).unwrap_or_default();
                let ok = match mem {
                    Backed::Shared(m) => m
                        .gpu_read(l2.then_some(gpu_id), off, chunk, relaxed)
                        // CAST: usize fits u64.
                        .map_err(|stale| cur.wrapping_add(stale.off - off)),
                    Backed::User(pages) => Ok(pages.read(off, chunk).is_ok()),
                };
                (n, ok)
            })?;
            match ok {
                Ok(true) => {}
                Ok(false) => {
                    return Err(GpuFault {
                        gpu_id,
                        va: cur,
                        write: false,
                        reason: VmFaultKind::NotPresent,
                    });
                }
                Err(stale_va) => {
                    return Err(GpuFault {
                        gpu_id,
                        va: stale_va,
                        write: false,
                        reason: VmFaultKind::HdpStale,
                    });
                }
            }
            done += n;
        }
        Ok(())
    }

    /// Writes `data` at GPU VA `va` through `gpu_id`'s page table, to memory (past the L2's
    /// write-back: a memory-controller destination, as RELEASE_MEM `DST_SEL` 0 and the
    /// engines' signal writes; bytes an L2 held dirty there are clean from now on).
    ///
    /// # Errors
    /// The first address not mapped, or mapped without `WRITABLE`.
    pub fn gpu_write(&self, gpu_id: u32, va: u64, data: &[u8]) -> Result<(), GpuFault> {
        self.write_via(gpu_id, va, data, false)
    }

    /// Writes `data` at GPU VA `va` through `gpu_id`'s page table and its L2 (shader stores
    /// and atomics, SDMA copies, CP writes to an L2 destination): memory the L2 caches and the
    /// CPU has mapped gets the bytes only at the next L2 write-back on `gpu_id`
    /// ([`SimKfd::l2_writeback`]); `gpu_id`'s engines read them at once.
    ///
    /// # Errors
    /// As [`SimKfd::gpu_write`].
    pub fn gpu_write_cached(&self, gpu_id: u32, va: u64, data: &[u8]) -> Result<(), GpuFault> {
        self.write_via(gpu_id, va, data, true)
    }

    fn write_via(&self, gpu_id: u32, va: u64, data: &[u8], l2: bool) -> Result<(), GpuFault> {
        let mut done = 0usize;
        while done < data.len() {
            // CAST: usize fits u64.
            let cur = va.wrapping_add(done as u64);
            let rest = data.get(done..).unwrap_or_default();
            let (n, ok) = self.with_translation(gpu_id, cur, true, |mem, off, avail| {
                let n = usize::try_from(avail).unwrap_or(usize::MAX).min(rest.len());
                let chunk = rest.get(..n).unwrap_or_default();
                let ok = match mem {
                    Backed::Shared(m) if l2 => match m.gpu_write_cached(gpu_id, off, chunk) {
                        Some(dirtied) => {
                            if dirtied {
                                self.l2_dirty_mems
                                    .lock()
                                    .unwrap_or_else(PoisonError::into_inner)
                                    .push(Arc::downgrade(m));
                            }
                            true
                        }
                        None => false,
                    },
                    Backed::Shared(m) => m.gpu_write(off, chunk),
                    Backed::User(pages) => pages.write(off, chunk).is_ok(),
                };
                (n, ok)
            })?;
            if !ok {
                return Err(GpuFault {
                    gpu_id,
                    va: cur,
                    write: true,
                    reason: VmFaultKind::NotPresent,
                });
            }
            done += n;
        }
        Ok(())
    }

    /// An L2 write-back on `gpu_id` (RELEASE_MEM / ACQUIRE_MEM `GL2_WB`, gfx9 `TC_WB_ACTION_ENA`
    /// or `TC_ACTION_ENA`, SDMA GCR_REQ `GL2_WB`): every byte that GPU's L2 holds dirty
    /// reaches memory, where the CPU reads it.
    ///
    /// It visits the memory writes have dirtied since (`l2_dirty_mems`), not every BO: a
    /// write-back ends every dispatch and copy, and scanning all BOs cost more than a small
    /// kernel's interpretation.
    pub fn l2_writeback(&self, gpu_id: u32) {
        let list = core::mem::take(
            &mut *self
                .l2_dirty_mems
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        if list.is_empty() {
            return;
        }
        let mut still = Vec::new();
        for w in list {
            let Some(m) = w.upgrade() else { continue };
            m.l2_writeback(gpu_id);
            // Another GPU's lines, or a write racing this one (which added it again itself).
            if m.l2_dirty()
                && !still
                    .iter()
                    .any(|s: &std::sync::Weak<SharedMem>| s.ptr_eq(&w))
            {
                still.push(w);
            }
        }
        if !still.is_empty() {
            self.l2_dirty_mems
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .append(&mut still);
        }
    }

    /// Pages of the BO mapped at `va` on `gpu_id` that some GPU's L2 holds dirty (0 for
    /// memory the L2 model does not track).
    ///
    /// # Errors
    /// `va` is not mapped on that GPU.
    pub fn l2_dirty_pages(&self, gpu_id: u32, va: u64) -> Result<usize, GpuFault> {
        Ok(match self.translate(gpu_id, va, false)?.0 {
            Target::Shared(m, _) => m.l2_dirty_pages(),
            Target::User(..) => 0,
        })
    }

    /// Reads a u32 (an acquire load when aligned in sim memory).
    ///
    /// # Errors
    /// As [`SimKfd::gpu_read`].
    pub fn gpu_read_u32(&self, gpu_id: u32, va: u64) -> Result<u32, GpuFault> {
        let fast = self.with_translation(gpu_id, va, false, |mem, off, avail| match mem {
            Backed::Shared(m) if avail >= 4 && !m.hdp_tracked() && !m.l2_dirty() => m.load_u32(off),
            _ => None,
        })?;
        if let Some(v) = fast {
            return Ok(v);
        }
        let mut b = [0u8; 4];
        self.gpu_read(gpu_id, va, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    /// Reads a u64 (an acquire load when aligned in sim memory).
    ///
    /// # Errors
    /// As [`SimKfd::gpu_read`].
    pub fn gpu_read_u64(&self, gpu_id: u32, va: u64) -> Result<u64, GpuFault> {
        let fast = self.with_translation(gpu_id, va, false, |mem, off, avail| match mem {
            Backed::Shared(m) if avail >= 8 && !m.hdp_tracked() && !m.l2_dirty() => m.load_u64(off),
            _ => None,
        })?;
        if let Some(v) = fast {
            return Ok(v);
        }
        let mut b = [0u8; 8];
        self.gpu_read(gpu_id, va, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    /// Writes a u32 (a release store when aligned in sim memory).
    ///
    /// # Errors
    /// As [`SimKfd::gpu_write`].
    pub fn gpu_write_u32(&self, gpu_id: u32, va: u64, v: u32) -> Result<(), GpuFault> {
        let stored = self.with_translation(gpu_id, va, true, |mem, off, avail| match mem {
            Backed::Shared(m)
                if avail >= 4 && off % 4 == 0 && !m.hdp_tracked() && !m.l2_dirty() =>
            {
                m.store_u32(off, v)
            }
            _ => false,
        })?;
        if stored {
            return Ok(());
        }
        self.gpu_write(gpu_id, va, &v.to_le_bytes())
    }

    /// Writes a u64 (a release store when aligned in sim memory).
    ///
    /// # Errors
    /// As [`SimKfd::gpu_write`].
    pub fn gpu_write_u64(&self, gpu_id: u32, va: u64, v: u64) -> Result<(), GpuFault> {
        let stored = self.with_translation(gpu_id, va, true, |mem, off, avail| match mem {
            Backed::Shared(m)
                if avail >= 8 && off % 8 == 0 && !m.hdp_tracked() && !m.l2_dirty() =>
            {
                m.store_u64(off, v)
            }
            _ => false,
        })?;
        if stored {
            return Ok(());
        }
        self.gpu_write(gpu_id, va, &v.to_le_bytes())
    }

    /// An HDP flush on `gpu_id`: CPU writes into that GPU's VRAM become visible to its engines.
    pub fn hdp_flush(&self, gpu_id: u32) {
        let st = self.lock();
        let Some(g) = st.gpu_by_id(gpu_id) else {
            return;
        };
        for bo in st.bos.values() {
            if bo.gpu == g
                && bo.kind == crate::state::BoKind::Vram
                && let Backing::Shared(m) = &bo.backing
            {
                m.hdp_flush();
            }
        }
    }

    /// Every live queue, in queue-id order (`active` already accounts for eviction).
    #[must_use]
    pub fn queues(&self) -> Vec<QueueInfo> {
        let st = self.lock();
        st.queues
            .values()
            .map(|q| {
                let mut info = q.info;
                let evicted = st.gpus.get(q.gpu).is_some_and(|g| g.evicted);
                info.active = crate::kfd::is_active(&info, evicted);
                info
            })
            .collect()
    }

    /// One queue by id.
    #[must_use]
    pub fn queue(&self, queue_id: u32) -> Option<QueueInfo> {
        self.queues().into_iter().find(|q| q.queue_id == queue_id)
    }

    /// The 64-bit value last written to doorbell `doorbell_id` of `gpu_id`.
    #[must_use]
    pub fn doorbell(&self, gpu_id: u32, doorbell_id: u32) -> Option<u64> {
        let st = self.lock();
        let g = st.gpus.get(st.gpu_by_id(gpu_id)?)?;
        g.doorbells
            .load_u64(u64::from(doorbell_id) * KFD_DOORBELL_SIZE)
    }

    /// Has the host guard snapshot doorbell `doorbell_id` of `gpu_id` (a queue's) with every
    /// host access it records (`on`), or stop.
    pub(crate) fn guard_doorbell(&self, gpu_id: u32, doorbell_id: u32, on: bool) {
        let off = u64::from(doorbell_id) * KFD_DOORBELL_SIZE;
        let key = (u64::from(gpu_id) << 32) | off;
        if !on {
            self.guard.remove_cell(key);
            return;
        }
        let st = self.lock();
        if let Some(a) = st
            .gpu_by_id(gpu_id)
            .and_then(|i| st.gpus.get(i))
            .and_then(|g| g.doorbells.word_addr(off))
        {
            self.guard.add_cell(key, a);
        }
    }

    /// The host accesses the guard recorded since the last call (`mem/hostguard.rs`).
    pub(crate) fn host_accesses(&self) -> Vec<crate::mem::HostFault> {
        self.guard.collect()
    }

    /// Takes the CPU's writes into VRAM since the last HDP flush (the host guard's
    /// pre-images) into the HDP views, before GPU engines read.
    pub(crate) fn take_hdp_preimages(&self) {
        if !self.guard.images_pending() {
            return;
        }
        let st = self.lock();
        for bo in st.bos.values() {
            if bo.kind == crate::state::BoKind::Vram
                && let Backing::Shared(m) = &bo.backing
            {
                m.hdp_take_preimages();
            }
        }
    }

    /// Host accesses, mappings and queues the host guard could not watch because one of its
    /// fixed tables was full (0 when the guard is off); the first is also logged as a
    /// warning. A nonzero count means races between the host and the GPU may have gone
    /// unreported.
    #[must_use]
    pub fn host_guard_dropped(&self) -> u64 {
        self.guard.dropped()
    }

    /// Whether the host guard watches this simulator's host accesses
    /// ([`crate::SimConfig::host_guard`], `HCQ_SIM_HOST_GUARD`).
    #[must_use]
    pub fn host_guard_on(&self) -> bool {
        self.guard.on()
    }

    /// Nothing is queued: the host's accesses need no watching until the next doorbell.
    pub(crate) fn relax_host_guard(&self) {
        self.guard.relax();
    }

    /// A process's 64-bit store of `value` to doorbell `doorbell_id` of `gpu_id` through its
    /// doorbell mapping: for tests that play a queue's producer by hand (raw ring writes).
    /// `false` when there is no such GPU or doorbell.
    pub fn write_doorbell(&self, gpu_id: u32, doorbell_id: u32, value: u64) -> bool {
        let st = self.lock();
        let Some(g) = st.gpu_by_id(gpu_id).and_then(|i| st.gpus.get(i)) else {
            return false;
        };
        g.doorbells
            .store_u64(u64::from(doorbell_id) * KFD_DOORBELL_SIZE, value)
    }

    /// Reads a queue's write pointer (the driver's 64-bit value: dwords for PM4, bytes for SDMA).
    ///
    /// # Errors
    /// The wptr page is no longer mapped.
    pub fn read_wptr(&self, q: &QueueInfo) -> Result<u64, GpuFault> {
        self.gpu_read_u64(q.gpu_id, q.wptr_addr)
    }

    /// Publishes a queue's read pointer (64-bit, same unit as wptr).
    ///
    /// # Errors
    /// The rptr page is no longer mapped or not writable.
    pub fn write_rptr(&self, q: &QueueInfo, rptr: u64) -> Result<(), GpuFault> {
        self.gpu_write_u64(q.gpu_id, q.rptr_addr, rptr)
    }

    /// A completion interrupt from `gpu_id` with `context_id` (RELEASE_MEM int_ctxid, SDMA TRAP
    /// int_context), as `kfd_signal_event_interrupt`: if the slot of event `context_id` is
    /// signaled (not `~0`) that event is set and its slot reset; otherwise every signaled slot
    /// is scanned. Honours [`SimKfd::drop_interrupts`] and [`SimKfd::delay_interrupts`].
    pub fn signal_interrupt(&self, gpu_id: u32, context_id: u32) {
        let mut st = self.lock();
        if st.drop_interrupts > 0 {
            st.drop_interrupts -= 1;
            return;
        }
        if st.delay_interrupts > 0 {
            let due = st.steps + u64::from(st.delay_interrupts);
            st.pending_interrupts.push((due, gpu_id, context_id));
            return;
        }
        deliver_interrupt(&mut st, context_id);
        drop(st);
        self.cond.notify_all();
    }

    /// A GPU VM fault (`kfd_set_dbg_ev_from_interrupt`): the process's queues on that GPU are
    /// evicted (no longer `active`) and every MEMORY event is set with
    /// `{gpu_id, va page, NotPresent, ReadOnly = write}`.
    pub fn raise_memory_fault(&self, fault: &GpuFault) {
        let mut st = self.lock();
        if let Some(g) = st.gpu_by_id(fault.gpu_id).and_then(|i| st.gpus.get_mut(i)) {
            g.evicted = true;
        }
        let data = fault.vm_fault().memory_exception(fault.gpu_id);
        let ids: Vec<u32> = st
            .events
            .iter()
            .filter(|(_, e)| e.ty == KFD_IOC_EVENT_MEMORY)
            .map(|(&id, _)| id)
            .collect();
        for id in ids {
            if let Some(e) = st.events.get_mut(&id) {
                e.mem = data;
            }
            Self::set_event_locked(&mut st, id);
        }
        drop(st);
        self.cond.notify_all();
    }

    /// Records why a queue on `gpu_id` faulted (the engine's words), keeping the last few;
    /// [`KfdSys::fault_reasons`](hcq_core::kfd::KfdSys::fault_reasons) hands them to the driver.
    pub fn record_fault_reason(&self, gpu_id: u32, text: &str) {
        let mut st = self.lock();
        let r = &mut st.fault_reasons;
        if r.len() >= crate::state::FAULT_REASONS_KEPT {
            r.remove(0);
        }
        r.push((gpu_id, text.to_owned()));
    }

    /// Where the GPU mapping containing `va` on `gpu_id` ends (exclusive); `None` when `va`
    /// is not mapped there (or the GPU is unknown).
    #[must_use]
    pub fn mapped_end(&self, gpu_id: u32, va: u64) -> Option<u64> {
        let st = self.lock();
        let g = st.gpu_by_id(gpu_id)?;
        st.lookup(g, va).map(|(_, e)| e.end)
    }

    /// What GPU VA `va` is on `gpu_id`, for a page fault's message (`None` for an unknown
    /// GPU): the buffer there (a USERPTR buffer the process unmapped, or one mapped without
    /// write permission), a live buffer there that is not mapped to this GPU, a buffer that
    /// was there (unmapped from this GPU, or freed: a use after free), or else the nearest
    /// buffer of this GPU within 16 MiB (so many bytes past its end or before its start).
    #[must_use]
    pub fn describe_va(&self, gpu_id: u32, va: u64) -> Option<String> {
        const NEAR: u64 = 16 << 20;
        let buf = |a: u64, e: u64| format!("the {}-byte buffer at {a:#x}..{e:#x}", e - a);
        let st = self.lock();
        let g = st.gpu_by_id(gpu_id)?;
        if let Some((start, e)) = st.lookup(g, va) {
            let bo = st.bos.get(&e.handle)?;
            let what = buf(start, e.end);
            return Some(match bo.backing {
                Backing::UserInvalidated => format!(
                    "in {what}, a USERPTR buffer whose host pages the process unmapped: the MMU notifier invalidated it"
                ),
                _ if bo.flags & KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE == 0 => {
                    format!("in {what}, allocated without KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE")
                }
                _ => format!("byte {:#x} of {what}", va - start),
            });
        }
        if let Some(bo) = st
            .bos
            .values()
            .find(|b| b.va <= va && va < b.va.saturating_add(b.size))
        {
            let owner = st.gpus.get(bo.gpu).map_or(0, |o| o.gpu_id);
            return Some(format!(
                "byte {:#x} of {} (allocated on GPU {owner:#x}), which is not mapped to this GPU: MAP_MEMORY_TO_GPU it here first",
                va - bo.va,
                buf(bo.va, bo.va.saturating_add(bo.size))
            ));
        }
        if let Some(r) = st
            .retired
            .iter()
            .rev()
            .find(|r| r.gpu == g && r.va <= va && va < r.end)
        {
            let how = if r.freed {
                "unmapped from this GPU and freed since: a use after free"
            } else {
                "unmapped from this GPU since: a use after unmap"
            };
            return Some(format!(
                "byte {:#x} of {}, {how}",
                va - r.va,
                buf(r.va, r.end)
            ));
        }
        let table = &st.gpus.get(g)?.page_table;
        let past = table
            .range(..=va)
            .next_back()
            .map(|(&a, e)| (va - e.end, a, e.end))
            .filter(|p| p.0 < NEAR);
        let before = table
            .range(va..)
            .next()
            .map(|(&a, e)| (a - va, a, e.end))
            .filter(|b| b.0 < NEAR);
        Some(match (past, before) {
            (Some(p), Some(b)) if b.0 < p.0 => {
                format!("{} bytes before the start of {}", b.0, buf(b.1, b.2))
            }
            (Some(p), _) => format!("{} bytes past the end of {}", p.0, buf(p.1, p.2)),
            (None, Some(b)) => format!("{} bytes before the start of {}", b.0, buf(b.1, b.2)),
            (None, None) if va < NEAR => {
                "no buffer within 16 MiB; an address this small is a null pointer plus an offset"
                    .to_owned()
            }
            (None, None) => "no buffer of this GPU within 16 MiB of it".to_owned(),
        })
    }

    /// The fault reasons recorded for `gpu_id`, oldest first.
    #[must_use]
    pub fn fault_reasons_of(&self, gpu_id: u32) -> Vec<String> {
        self.lock()
            .fault_reasons
            .iter()
            .filter(|(g, _)| *g == gpu_id)
            .map(|(_, t)| t.clone())
            .collect()
    }

    /// Why GPU `gpu_id`'s waiting queues cannot go on by the GPU's own work: each blocked
    /// wait's diagnosis, `deadlock: ...` (`engine/deadlock.rs`); empty when some engine can
    /// still write, or without an engine. Faults nothing.
    pub fn stall_reasons_of(&self, gpu_id: u32) -> Vec<String> {
        let engine = self
            .engine
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        engine.map_or_else(Vec::new, |e| e.stall_reasons(gpu_id))
    }

    /// A GPU reset (`kfd_signal_reset_event`): queues on that GPU are evicted and every
    /// HW_EXCEPTION event is set with `{reset_type 0, reset_cause, memory_lost, gpu_id}`.
    pub fn raise_hw_exception(&self, gpu_id: u32, reset_cause: u32, memory_lost: bool) {
        let mut st = self.lock();
        if let Some(g) = st.gpu_by_id(gpu_id).and_then(|i| st.gpus.get_mut(i)) {
            g.evicted = true;
        }
        let data = HsaHwExceptionData {
            reset_type: 0,
            reset_cause,
            memory_lost: u32::from(memory_lost),
            gpu_id,
        };
        let ids: Vec<u32> = st
            .events
            .iter()
            .filter(|(_, e)| e.ty == KFD_IOC_EVENT_HW_EXCEPTION)
            .map(|(&id, _)| id)
            .collect();
        for id in ids {
            if let Some(e) = st.events.get_mut(&id) {
                e.hw = data;
            }
            Self::set_event_locked(&mut st, id);
        }
        drop(st);
        self.cond.notify_all();
    }

    /// The GPU timestamp counter (100 MHz), as a host reads it (GET_CLOCK_COUNTERS): the one
    /// GPU clock the attached engines also write timestamps from. Virtual in deterministic
    /// mode (a tick per executed packet plus each dispatch's modelled duration, and each read
    /// advances it by one tick), real time in threaded mode.
    #[must_use]
    pub fn gpu_clock(&self) -> u64 {
        self.clock.sample()
    }

    /// Advances the virtual GPU clock (deterministic mode; time an engine spent).
    pub fn advance_gpu_clock(&self, ticks: u64) {
        self.clock.advance(ticks);
    }

    /// The GPU clock itself (engines attach to it).
    pub(crate) fn clock(&self) -> &Arc<crate::clock::Clock> {
        &self.clock
    }

    /// The value in event `event_id`'s slot of the event page (`~0` = not signaled).
    #[must_use]
    pub fn event_slot(&self, event_id: u32) -> Option<u64> {
        let st = self.lock();
        let page = st.event_page.as_ref()?;
        page.mem.load_u64(u64::from(event_id) * KFD_EVENT_SLOT_SIZE)
    }

    /// Installs the engine that [`SimKfd::run_queues`] drives.
    pub fn set_engine(&self, engine: Arc<dyn Engine>) {
        *self.engine.lock().unwrap_or_else(PoisonError::into_inner) = Some(engine);
    }

    /// One engine round: delivers delayed interrupts that are due, then lets the engine run
    /// every queue as far as it can. Returns whether anything progressed. Called by
    /// WAIT_EVENTS in deterministic mode; call it directly to step.
    pub fn run_queues(&self) -> bool {
        let delivered = {
            let mut st = self.lock();
            st.steps += 1;
            let now = st.steps;
            let due: Vec<(u64, u32, u32)> = st
                .pending_interrupts
                .iter()
                .copied()
                .filter(|&(d, _, _)| d <= now)
                .collect();
            st.pending_interrupts.retain(|&(d, _, _)| d > now);
            for &(_, _, ctx) in &due {
                deliver_interrupt(&mut st, ctx);
            }
            !due.is_empty() || !st.pending_interrupts.is_empty()
        };
        if delivered {
            self.cond.notify_all();
        }
        let engine = self
            .engine
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let ran = engine.is_some_and(|e| e.run(self));
        ran || delivered
    }

    /// Same as [`SimKfd::run_queues`].
    pub fn step(&self) -> bool {
        self.run_queues()
    }

    /// Runs engine rounds until nothing progresses (at most `max_rounds`); returns the rounds
    /// that progressed.
    pub fn run_until_idle(&self, max_rounds: u64) -> u64 {
        let mut n = 0;
        while n < max_rounds && self.run_queues() {
            n += 1;
        }
        n
    }
}

/// `kfd_signal_event_interrupt` on the locked state.
fn deliver_interrupt(st: &mut State, context_id: u32) {
    let Some(page) = st.event_page.as_ref() else {
        return;
    };
    let mem = Arc::clone(&page.mem);
    let slots = page.mapped_size / KFD_EVENT_SLOT_SIZE;
    let slot_of = |id: u32| u64::from(id) * KFD_EVENT_SLOT_SIZE;
    let direct = u64::from(context_id) < slots
        && mem.load_u64(slot_of(context_id)) != Some(KFD_EVENT_SLOT_UNSIGNALED)
        && st.events.get(&context_id).is_some_and(|e| e.has_slot);
    let ids: Vec<u32> = if direct {
        vec![context_id]
    } else {
        st.events
            .iter()
            .filter(|(id, e)| {
                e.has_slot
                    && u64::from(**id) < slots
                    && mem.load_u64(slot_of(**id)) != Some(KFD_EVENT_SLOT_UNSIGNALED)
            })
            .map(|(&id, _)| id)
            .collect()
    };
    for id in ids {
        let _ = mem.store_u64(slot_of(id), KFD_EVENT_SLOT_UNSIGNALED);
        SimKfd::set_event_locked(st, id);
    }
}
