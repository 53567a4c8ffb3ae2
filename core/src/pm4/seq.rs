//! The seed's commands: the sequences `memory_barrier`, `exec`, `wait`, `signal` and `timestamp` build.

use super::*;
use crate::sel::{CompareFunction, DataSel, IntSel, MemSpace, ReleaseDst, WaitOperation};

/// Which caches an ACQUIRE_MEM invalidates (the seed's `_invalidate_cache` keyword arguments).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheInvalidate {
    /// GLI_INV (instruction cache; 0..=3).
    pub gli: u32,
    /// GLM invalidate + write-back.
    pub glm: bool,
    /// GLK invalidate + write-back.
    pub glk: bool,
    /// GLV invalidate.
    pub glv: bool,
    /// GL1 invalidate.
    pub gl1: bool,
    /// GL2 invalidate + write-back.
    pub gl2: bool,
}

impl CacheInvalidate {
    /// Everything (the seed's default).
    pub const ALL: Self = Self {
        gli: 1,
        glm: true,
        glk: true,
        glv: true,
        gl1: true,
        gl2: true,
    };

    /// The GCR_CNTL word.
    #[must_use]
    #[inline]
    pub const fn gcr(self) -> GcrCntl {
        GcrCntl::zeroed()
            .with(GcrCntl::GLI_INV, self.gli)
            .with_flag(GcrCntl::GLM_INV, self.glm)
            .with_flag(GcrCntl::GLM_WB, self.glm)
            .with_flag(GcrCntl::GLK_INV, self.glk)
            .with_flag(GcrCntl::GLK_WB, self.glk)
            .with_flag(GcrCntl::GLV_INV, self.glv)
            .with_flag(GcrCntl::GL1_INV, self.gl1)
            .with_flag(GcrCntl::GL2_INV, self.gl2)
            .with_flag(GcrCntl::GL2_WB, self.gl2)
    }

    /// The ACQUIRE_MEM packet for `arch` over `[addr, addr+size)`.
    #[must_use]
    #[inline]
    pub const fn acquire(self, arch: &ArchInfo, addr: u64, size: u64) -> AcquireMem {
        match arch.acquire_mem {
            AcquireMemLayout::GcrCntl => AcquireMem {
                coher_cntl: 0,
                size,
                base: addr,
                poll_interval: 0,
                gcr_cntl: Some(self.gcr()),
            },
            AcquireMemLayout::CoherCntl => AcquireMem {
                coher_cntl: CpCoherCntl::zeroed()
                    .with_flag(CpCoherCntl::SH_ICACHE_ACTION_ENA, self.gli != 0)
                    .with_flag(CpCoherCntl::SH_KCACHE_ACTION_ENA, self.glk)
                    .with(CpCoherCntl::TC_ACTION_ENA, 1)
                    .with(CpCoherCntl::TCL1_ACTION_ENA, 1)
                    .with(CpCoherCntl::TC_WB_ACTION_ENA, 1)
                    .raw(),
                size,
                base: addr,
                poll_interval: 0xA,
                gcr_cntl: None,
            },
        }
    }
}

/// The seed's `_invalidate_cache(addr, sz, ...)`: one ACQUIRE_MEM (`arch.acquire_mem.dwords()`).
#[inline]
pub fn invalidate_cache(
    buf: &mut [u32],
    arch: &ArchInfo,
    addr: u64,
    size: u64,
    which: CacheInvalidate,
) -> Result<usize, EncodeError> {
    acquire_mem(buf, &which.acquire(arch, addr, size))
}

/// Dwords of [`memory_barrier`].
#[must_use]
#[inline]
pub const fn memory_barrier_dwords(arch: &ArchInfo) -> usize {
    WAIT_REG_MEM_DWORDS + arch.acquire_mem.dwords()
}

/// The HDP-flush WAIT_REG_MEM (write REQ, wait for DONE == 0xffffffff) of `memory_barrier`.
#[must_use]
#[inline]
pub const fn hdp_flush_wait(arch: &ArchInfo) -> WaitRegMem {
    WaitRegMem {
        control: WaitRegMemCtl::zeroed()
            .with(WaitRegMemCtl::MEM_SPACE, MemSpace::Register.raw())
            .with(WaitRegMemCtl::OPERATION, WaitOperation::WriteThenWait.raw())
            .with(WaitRegMemCtl::FUNCTION, CompareFunction::Equal.raw())
            .with(WaitRegMemCtl::ENGINE, 0),
        addr_lo: arch.hdp_flush_req,
        addr_hi: arch.hdp_flush_done,
        reference: 0xffff_ffff,
        mask: 0xffff_ffff,
        poll_interval: 0x20,
    }
}

/// The seed's `memory_barrier`: HDP flush WAIT_REG_MEM then a full ACQUIRE_MEM.
#[inline]
pub fn memory_barrier(buf: &mut [u32], arch: &ArchInfo) -> Result<usize, EncodeError> {
    let n = memory_barrier_dwords(arch);
    let out = room(buf, n)?;
    let a = wait_reg_mem(out, &hdp_flush_wait(arch))?;
    let b = invalidate_cache(
        out.get_mut(a..).unwrap_or_default(),
        arch,
        0,
        u64::MAX,
        CacheInvalidate::ALL,
    )?;
    Ok(a + b)
}

/// Dwords of [`wait`].
pub const WAIT_DWORDS: usize = WAIT_REG_MEM_DWORDS;

/// The WAIT_REG_MEM of [`wait`].
#[must_use]
#[inline]
pub const fn wait_packet(value_addr: GpuVa, value: u32) -> WaitRegMem {
    WaitRegMem {
        control: WaitRegMemCtl::zeroed()
            .with(WaitRegMemCtl::MEM_SPACE, MemSpace::Memory.raw())
            .with(WaitRegMemCtl::OPERATION, WaitOperation::Wait.raw())
            .with(WaitRegMemCtl::FUNCTION, CompareFunction::GreaterEqual.raw())
            .with(WaitRegMemCtl::ENGINE, 0),
        addr_lo: value_addr.lo(),
        addr_hi: value_addr.hi(),
        reference: value,
        mask: 0xffff_ffff,
        poll_interval: 4,
    }
}

/// The seed's `wait(signal, value)`: WAIT_REG_MEM until `signal.value >= value`.
#[inline]
pub fn wait(buf: &mut [u32], signal: &SignalRef, value: u32) -> Result<usize, EncodeError> {
    wait_reg_mem(buf, &wait_packet(GpuVa(signal.value_addr()), value))
}

/// The RELEASE_MEM the seed's `_release_mem` builds.
#[must_use]
#[inline]
pub const fn release_packet(
    arch: &ArchInfo,
    data_sel: DataSel,
    int_sel: IntSel,
    addr: GpuVa,
    data: u64,
    int_ctxid: u32,
    cache_flush: bool,
) -> ReleaseMem {
    let flush = if cache_flush {
        arch.release_mem_cache_flush
    } else {
        0
    };
    ReleaseMem {
        event: ReleaseMemEventCntl(flush)
            .with(
                ReleaseMemEventCntl::EVENT_TYPE,
                arch.events.cache_flush_and_inv_ts.raw(),
            )
            .with(
                ReleaseMemEventCntl::EVENT_INDEX,
                arch.events.release_mem_end_of_pipe.raw(),
            ),
        data_cntl: ReleaseMemDataCntl::zeroed()
            .with(ReleaseMemDataCntl::DATA_SEL, data_sel.raw())
            .with(ReleaseMemDataCntl::INT_SEL, int_sel.raw())
            .with(ReleaseMemDataCntl::DST_SEL, ReleaseDst::Memory.raw()),
        addr,
        data,
        int_ctxid,
    }
}

/// Dwords of [`timestamp`].
pub const TIMESTAMP_DWORDS: usize = RELEASE_MEM_DWORDS;

/// The seed's `timestamp(signal)`: RELEASE_MEM writing the GPU clock to `start_ts`.
#[inline]
pub fn timestamp(
    buf: &mut [u32],
    arch: &ArchInfo,
    signal: &SignalRef,
) -> Result<usize, EncodeError> {
    release_mem(
        buf,
        &release_packet(
            arch,
            DataSel::GpuClock,
            IntSel::None,
            GpuVa(signal.start_ts_addr()),
            0,
            0,
            false,
        ),
    )
}

/// Dwords of [`signal`]: 8, or 16 when the signal has a KFD event mailbox.
#[must_use]
#[inline]
pub const fn signal_dwords(signal: &SignalRef) -> usize {
    if signal.has_event() {
        2 * RELEASE_MEM_DWORDS
    } else {
        RELEASE_MEM_DWORDS
    }
}

/// The seed's `signal(signal, value)`: RELEASE_MEM writing `value` (64-bit field, int_sel 2,
/// cache flush), plus, when the signal has a mailbox, a RELEASE_MEM writing `event_id` there
/// with an interrupt whose context is `event_id`.
#[inline]
pub fn signal(
    buf: &mut [u32],
    arch: &ArchInfo,
    signal: &SignalRef,
    value: u64,
) -> Result<usize, EncodeError> {
    let main = release_packet(
        arch,
        DataSel::Data32,
        IntSel::InterruptAfterWrite,
        GpuVa(signal.value_addr()),
        value,
        0,
        true,
    );
    if signal.has_event() {
        let out = head::<16>(buf)?;
        let (a, b) = out.split_at_mut(8);
        release_mem(a, &main)?;
        release_mem(b, &mailbox_packet(arch, signal))?;
        Ok(16)
    } else {
        release_mem(buf, &main)
    }
}

/// The mailbox RELEASE_MEM of [`signal`].
#[must_use]
#[inline]
pub const fn mailbox_packet(arch: &ArchInfo, signal: &SignalRef) -> ReleaseMem {
    release_packet(
        arch,
        DataSel::Data32,
        IntSel::InterruptAfterWrite,
        GpuVa(signal.event_mailbox_ptr),
        // CAST: u32 -> u64 is lossless (`From` is not const).
        signal.event_id as u64,
        signal.event_id,
        true,
    )
}

/// A compiled kernel as the seed's `exec` sees it.
///
/// `exec` fills the kernel's user SGPRs (`COMPUTE_USER_DATA_0..`) in the order the hardware
/// allocates them from `kernel_code_properties` (LLVM `AMDGPUUsage`, "Initial Kernel Execution
/// State"): the private segment buffer (4), the dispatch pointer (2), the kernarg pointer (2),
/// flat scratch init (2), each only when present here. A kernel that also asks for the queue
/// pointer, the dispatch id or the private segment size SGPRs cannot be described: the runtime
/// must refuse it (hcq's driver does, at load).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Program {
    /// Entry point address (256-byte aligned; PGM_LO/HI get `>> 8`).
    pub prog_addr: GpuVa,
    /// Scratch base (DISPATCH_SCRATCH_BASE gets `>> 8`).
    pub scratch_addr: GpuVa,
    /// COMPUTE_TMPRING_SIZE.
    pub tmpring_size: u32,
    /// COMPUTE_PGM_RSRC1.
    pub rsrc1: u32,
    /// COMPUTE_PGM_RSRC2.
    pub rsrc2: u32,
    /// COMPUTE_PGM_RSRC3, the kernel descriptor's `compute_pgm_rsrc3` (gfx90a/gfx940:
    /// ACCUM_OFFSET and TG_SPLIT). Written where [`ArchInfo::exec_writes_pgm_rsrc3`].
    pub rsrc3: u32,
    /// Present when the kernel takes a dispatch pointer.
    pub dispatch: Option<DispatchInfo>,
    /// The scratch V# for a kernel with `ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER` (gfx9 before
    /// gfx940, gfx10): `USER_DATA_0..=3`, before every other input.
    pub private_segment_buffer: Option<ScratchRsrc>,
    /// `FLAT_SCRATCH_INIT` for a kernel with `ENABLE_SGPR_FLAT_SCRATCH_INIT`: on
    /// absolute-flat-scratch targets the 64-bit base address of the queue's scratch (the
    /// kernel's prologue adds its wave offset and moves it to `FLAT_SCRATCH`); 2 user SGPRs
    /// after the kernarg pointer.
    pub flat_scratch_init: Option<GpuVa>,
}

impl Program {
    /// `COMPUTE_USER_DATA` registers [`exec`] writes for this program (2 to 10).
    #[must_use]
    #[inline]
    pub const fn user_data_dwords(&self) -> usize {
        let mut n = 2;
        if self.private_segment_buffer.is_some() {
            n += 4;
        }
        if self.dispatch.is_some() {
            n += 2;
        }
        if self.flat_scratch_init.is_some() {
            n += 2;
        }
        n
    }
}

/// What the dispatch packet of a kernel with a dispatch pointer needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct DispatchInfo {
    /// Byte offset of the 64-byte dispatch packet inside the kernargs.
    pub packet_offset: u64,
    /// LDS bytes.
    pub group_segment_size: u32,
    /// Scratch bytes per work-item.
    pub private_segment_size: u32,
}

/// Where the patchable parts of an exec command sit (dword offsets from its start).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExecLayout {
    /// Total dwords.
    pub dwords: usize,
    /// SET_SH_REG header of COMPUTE_START_X.
    pub start_at: usize,
    /// First NUM_THREAD value (local x, y, z follow).
    pub local_at: usize,
    /// DISPATCH_DIRECT header (global x, y, z follow).
    pub dispatch_at: usize,
    /// The kernarg pointer's `USER_DATA` values (low, high).
    pub kernargs_at: usize,
    /// The dispatch pointer's `USER_DATA` values (low, high), when the program takes one.
    pub dispatch_ptr_at: Option<usize>,
}

/// Dwords of the fixed register block between ACQUIRE_MEM and USER_DATA.
const EXEC_MID: usize = 35;
/// Dwords after USER_DATA: START/NUM_THREAD (10), RESOURCE_LIMITS (3), DISPATCH (5), EVENT (2).
const EXEC_TAIL: usize = 20;

/// Most `COMPUTE_USER_DATA` values [`exec`] writes (private segment buffer 4, dispatch pointer
/// 2, kernarg pointer 2, flat scratch init 2).
pub const EXEC_MAX_USER_DATA: usize = 10;

/// The layout of [`exec`] of `prog` on `arch` (it depends on the user SGPRs the program takes).
#[must_use]
#[inline]
pub const fn exec_layout(arch: &ArchInfo, prog: &Program) -> ExecLayout {
    // SET_SH_REG header and register offset, then the values.
    let user = 2 + prog.user_data_dwords();
    let user_at = arch.acquire_mem.dwords() + EXEC_MID;
    let start_at = user_at + user;
    // USER_DATA values in allocation order: private segment buffer (4), dispatch pointer (2),
    // kernarg pointer (2), flat scratch init (2).
    let dispatch_at = user_at
        + 2
        + if prog.private_segment_buffer.is_some() {
            4
        } else {
            0
        };
    let (dispatch_ptr_at, kernargs_at) = if prog.dispatch.is_some() {
        (Some(dispatch_at), dispatch_at + 2)
    } else {
        (None, dispatch_at)
    };
    ExecLayout {
        dwords: start_at + EXEC_TAIL,
        start_at,
        local_at: start_at + 5,
        dispatch_at: start_at + 13,
        kernargs_at,
        dispatch_ptr_at,
    }
}

/// The DISPATCH_INITIATOR the seed uses: compute shader, start at 0, wave32 where it exists.
#[must_use]
#[inline]
pub const fn dispatch_initiator(arch: &ArchInfo) -> DispatchInitiator {
    DispatchInitiator::zeroed()
        .with(DispatchInitiator::COMPUTE_SHADER_EN, 1)
        .with(DispatchInitiator::FORCE_START_AT_000, 1)
        .with_flag(DispatchInitiator::CS_W32_EN, arch.has_cs_w32_en)
}

/// The dispatch packet the seed writes at `kernargs + packet_offset` for a kernel with a
/// dispatch pointer (other fields zero). Errors when a local size exceeds u16 or a grid size
/// (global * local) exceeds u32.
#[inline]
pub fn dispatch_packet(
    info: &DispatchInfo,
    kernargs: GpuVa,
    global: [u32; 3],
    local: [u32; 3],
) -> Result<DispatchPacket, EncodeError> {
    check_dispatch_dims(global, local)?;
    Ok(dispatch_packet_checked(info, kernargs, global, local))
}

/// Whether `global`/`local` fit a dispatch packet: local sizes in u16, grid sizes
/// (global * local) in u32. What [`dispatch_packet`] refuses.
#[inline]
pub fn check_dispatch_dims(global: [u32; 3], local: [u32; 3]) -> Result<(), EncodeError> {
    const WG: [&str; 3] = [
        "local[0] (dispatch packet workgroup_size_x)",
        "local[1] (dispatch packet workgroup_size_y)",
        "local[2] (dispatch packet workgroup_size_z)",
    ];
    const GRID: [&str; 3] = [
        "global[0]*local[0] (dispatch packet grid_size_x)",
        "global[1]*local[1] (dispatch packet grid_size_y)",
        "global[2]*local[2] (dispatch packet grid_size_z)",
    ];
    for i in 0..3 {
        let (g, l) = (global[i], local[i]);
        if l > u16::MAX.into() {
            return Err(EncodeError::ValueTooLarge {
                field: WG[i],
                value: l.into(),
                max: u16::MAX.into(),
            });
        }
        let grid = u64::from(g) * u64::from(l);
        if grid > u32::MAX.into() {
            return Err(EncodeError::ValueTooLarge {
                field: GRID[i],
                value: grid,
                max: u32::MAX.into(),
            });
        }
    }
    Ok(())
}

/// [`dispatch_packet`] for dims [`check_dispatch_dims`] accepted (sizes that do not fit are
/// truncated).
#[inline]
pub(crate) fn dispatch_packet_checked(
    info: &DispatchInfo,
    kernargs: GpuVa,
    global: [u32; 3],
    local: [u32; 3],
) -> DispatchPacket {
    // CAST: check_dispatch_dims keeps local sizes within u16 and grid sizes within u32.
    let wg = |i: usize| local[i] as u16;
    let grid = |i: usize| global[i].wrapping_mul(local[i]);
    DispatchPacket {
        workgroup_size_x: wg(0),
        workgroup_size_y: wg(1),
        workgroup_size_z: wg(2),
        grid_size_x: grid(0),
        grid_size_y: grid(1),
        grid_size_z: grid(2),
        group_segment_size: info.group_segment_size,
        private_segment_size: info.private_segment_size,
        kernarg_address: kernargs.get(),
        ..DispatchPacket::default()
    }
}

/// Dwords of [`exec`].
#[must_use]
#[inline]
pub const fn exec_dwords(arch: &ArchInfo, prog: &Program) -> usize {
    exec_layout(arch, prog).dwords
}

/// The seed's `exec(prg, kernargs, global, local)`: ACQUIRE_MEM, PGM_LO/HI + scratch base,
/// RSRC1/2, TMPRING, RESTART, STATIC_THREAD_MGMT SE0-7 (or RSRC3: see
/// [`ArchInfo::exec_writes_pgm_rsrc3`]), USER_DATA (private segment buffer if
/// any, dispatch pointer if any, kernargs, flat scratch init if any: see [`Program`]),
/// START/NUM_THREAD, RESOURCE_LIMITS, DISPATCH_DIRECT, EVENT_WRITE CS_PARTIAL_FLUSH.
///
/// The dispatch packet itself (for kernels with a dispatch pointer) lives in kernargs memory:
/// get it from [`dispatch_packet`] and write it at `kernargs + packet_offset`.
#[inline]
pub fn exec(
    buf: &mut [u32],
    arch: &ArchInfo,
    prog: &Program,
    kernargs: GpuVa,
    global: [u32; 3],
    local: [u32; 3],
) -> Result<usize, EncodeError> {
    let layout = exec_layout(arch, prog);
    let out = room(buf, layout.dwords)?;
    let too_small = EncodeError::BufferTooSmall {
        needed: layout.dwords,
        available: 0,
    };
    let a = invalidate_cache(out, arch, 0, u64::MAX, CacheInvalidate::ALL)?;
    let rest = out.get_mut(a..).ok_or(too_small)?;
    let r = &arch.regs;
    let sh = |n: u32| Pm4Header::packet3(op::SET_SH_REG, n + 1).raw();
    let pgm = prog.prog_addr.get() >> 8;
    let scratch = prog.scratch_addr.get() >> 8;
    let (mid, rest) = rest.split_first_chunk_mut::<EXEC_MID>().ok_or(too_small)?;
    *mid = [
        sh(6),
        r.pgm_lo,
        lo32(pgm),
        hi32(pgm),
        0,
        0,
        lo32(scratch),
        hi32(scratch),
        sh(2),
        r.pgm_rsrc1,
        prog.rsrc1,
        prog.rsrc2,
        sh(1),
        r.tmpring_size,
        prog.tmpring_size,
        sh(4),
        r.restart_x,
        0,
        0,
        0,
        0,
        sh(2),
        r.static_thread_mgmt_se0,
        0xFFFF_FFFF,
        0xFFFF_FFFF,
        sh(2),
        r.static_thread_mgmt_se2,
        0xFFFF_FFFF,
        0xFFFF_FFFF,
        0,
        0,
        0,
        0,
        0,
        0,
    ];
    // SE4..SE7 exist from gfx11; elsewhere the same offsets are other registers (RELAUNCH and
    // WAVE_RESTORE_ADDR on gfx10, PGM_RSRC3 on gfx90a/gfx940), so there the slot carries
    // PGM_RSRC3 (or is a NOP) and the layout stays the same on every family.
    let se4_slot = mid.last_chunk_mut::<6>().ok_or(too_small)?;
    *se4_slot = if arch.has_static_thread_mgmt_se4 {
        [
            sh(4),
            r.static_thread_mgmt_se4,
            0xFFFF_FFFF,
            0xFFFF_FFFF,
            0xFFFF_FFFF,
            0xFFFF_FFFF,
        ]
    } else if arch.exec_writes_pgm_rsrc3 {
        [
            sh(1),
            r.pgm_rsrc3,
            prog.rsrc3,
            Pm4Header::packet3(op::NOP, 2).raw(),
            0,
            0,
        ]
    } else {
        [Pm4Header::packet3(op::NOP, 5).raw(), 0, 0, 0, 0, 0]
    };
    let rest = match (
        prog.private_segment_buffer,
        prog.dispatch,
        prog.flat_scratch_init,
    ) {
        // The common cases as fixed-size stores (the launch hot path).
        (None, None, None) => {
            let (ud, rest) = rest.split_first_chunk_mut::<4>().ok_or(too_small)?;
            *ud = [sh(2), r.user_data_0, kernargs.lo(), kernargs.hi()];
            rest
        }
        (None, Some(d), None) => {
            let dp = kernargs.offset(d.packet_offset);
            let (ud, rest) = rest.split_first_chunk_mut::<6>().ok_or(too_small)?;
            *ud = [
                sh(4),
                r.user_data_0,
                dp.lo(),
                dp.hi(),
                kernargs.lo(),
                kernargs.hi(),
            ];
            rest
        }
        (psb, dispatch, fsi) => {
            // In allocation order; `user_data_dwords` counts exactly these values.
            let n = prog.user_data_dwords();
            let dp = dispatch.map(|d| kernargs.offset(d.packet_offset));
            let halves = |a: GpuVa| [a.lo(), a.hi()];
            let values = psb
                .map(ScratchRsrc::words)
                .into_iter()
                .flatten()
                .chain(dp.into_iter().flat_map(halves))
                .chain(halves(kernargs))
                .chain(fsi.into_iter().flat_map(halves));
            let (ud, rest) = rest.split_at_mut_checked(2 + n).ok_or(too_small)?;
            // CAST: n <= EXEC_MAX_USER_DATA.
            let head = [sh(n as u32), r.user_data_0];
            for (slot, v) in ud.iter_mut().zip(head.into_iter().chain(values)) {
                *slot = v;
            }
            rest
        }
    };
    let tail = rest.first_chunk_mut::<EXEC_TAIL>().ok_or(too_small)?;
    let ev = EventWriteCntl::zeroed()
        .with(
            EventWriteCntl::EVENT_TYPE,
            arch.events.cs_partial_flush.raw(),
        )
        .with(
            EventWriteCntl::EVENT_INDEX,
            arch.events.cs_partial_flush_index.raw(),
        );
    *tail = [
        sh(8),
        r.start_x,
        0,
        0,
        0,
        local[0],
        local[1],
        local[2],
        0,
        0,
        sh(1),
        r.resource_limits,
        0,
        Pm4Header::packet3(op::DISPATCH_DIRECT, 4).raw(),
        global[0],
        global[1],
        global[2],
        dispatch_initiator(arch).raw(),
        Pm4Header::packet3(op::EVENT_WRITE, 1).raw(),
        ev.raw(),
    ];
    Ok(layout.dwords)
}
