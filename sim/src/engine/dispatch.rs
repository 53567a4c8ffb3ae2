//! DISPATCH_DIRECT: check what the hardware would trip on, then run the kernel's machine code
//! on the interpreter (`crate::isa`), from the registers only. Host stand-ins (the registry's
//! kernels, found by hashing the code) run instead only when the registry's mode opts in;
//! the differential mode runs both and compares what they stored.

use super::QueueDesc;
use super::env::Env;
use super::types::{Cause, Exec, Regs};
use crate::isa::{self, FloatMode, Isa, IsaError, Launch, ScratchSetup, XccSplit};
use crate::stand_ins::{
    ExecMode, KEY_BYTES, KernelCtx, KernelError, KernelMem, RegisteredKernel, code_key,
};
use crate::vm::{Access, VmFault};
use core::cell::RefCell;
use core::sync::atomic::Ordering;
use hcq_core::addr::join64;
use hcq_core::arch::Family;
use hcq_core::codeobj::LDS_GRANULE_BYTES;
use hcq_core::hsa::{
    DispatchPacket, KernelCodeProperties, KernelDescriptor, PgmRsrc1, PgmRsrc2, PgmRsrc3Gfx90a,
};
use hcq_core::pm4::{DispatchDirect, DispatchInitiator};
use hcq_core::rsrc::{BufRsrcWord1, BufRsrcWord3Gfx9, BufRsrcWord3Gfx10, ScratchRsrc};
use std::collections::BTreeMap;

mod host;
use host::host;

/// Most workgroups one dispatch may have in the simulator.
pub const MAX_WORKGROUPS: u64 = 1 << 22;
/// LDS bytes per workgroup the simulated GPUs have.
pub const LDS_LIMIT: u32 = 64 * 1024;
/// Most work-items per workgroup.
pub const MAX_WORKGROUP_SIZE: u64 = 1024;

fn hw<T>(msg: String) -> Result<T, Cause> {
    Err(Cause::Hw(msg))
}

impl isa::Memory for Env<'_> {
    /// A shader's read: through the GPU's I$ or K$ where the bus has them
    /// ([`GpuCaches::shader_read`](super::cache::GpuCaches::shader_read)), else straight to
    /// memory.
    fn read(&self, va: u64, buf: &mut [u8], access: Access) -> Result<(), VmFault> {
        match self.bus.caches() {
            Some(c) => c.shader_read(va, buf, access, |va, b, a| self.read(va, b, a)),
            None => self.read(va, buf, access),
        }
    }
    fn write(&self, va: u64, data: &[u8]) -> Result<(), VmFault> {
        Env::write(self, va, data)
    }
    /// A K$ line fill: read as [`isa::Memory::read`], without recording it for the race
    /// detector (the kernel's use of the bytes is recorded by `used`).
    fn fill(&self, va: u64, buf: &mut [u8], access: Access) -> Result<(), VmFault> {
        match self.bus.caches() {
            Some(c) => c.shader_read(va, buf, access, |va, b, a| self.read_unrecorded(va, b, a)),
            None => self.read_unrecorded(va, buf, access),
        }
    }
    fn used(&self, va: u64, len: usize) {
        self.rec.read(va, len);
    }
    fn read_visible(&self, va: u64, buf: &mut [u8]) -> Result<(), VmFault> {
        Env::read_visible(self, va, buf)
    }
    fn shared(&self) -> Option<&(dyn isa::Memory + Sync)> {
        Some(self)
    }
}

/// Checks the hardware makes on every dispatch, whoever runs it.
pub(crate) fn check_hw(regs: &Regs, desc: &QueueDesc, d: &DispatchDirect) -> Result<(), Cause> {
    let r = &desc.arch.regs;
    let sh = |off: u32| regs.sh(off);
    if d.initiator.get(DispatchInitiator::COMPUTE_SHADER_EN) == 0 {
        return hw("DISPATCH_DIRECT with COMPUTE_SHADER_EN clear".into());
    }
    let pgm_hi = sh(r.pgm_lo + 1);
    if pgm_hi > 0xff {
        return hw(format!("COMPUTE_PGM_HI {pgm_hi:#x} has bits above 7"));
    }
    let nt = |i: u32| sh(r.start_x + 3 + i) & 0xffff;
    let local = [nt(0), nt(1), nt(2)];
    let items: u64 = local.iter().map(|&l| u64::from(l)).product();
    if items == 0 || items > MAX_WORKGROUP_SIZE {
        return hw(format!(
            "COMPUTE_NUM_THREAD {local:?}: a workgroup must have 1..={MAX_WORKGROUP_SIZE} work-items"
        ));
    }
    let start = [sh(r.start_x), sh(r.start_x + 1), sh(r.start_x + 2)];
    if start != [0; 3] {
        return hw(format!(
            "COMPUTE_START {start:?} is not supported (must be 0)"
        ));
    }
    let rsrc2 = sh(r.pgm_rsrc1 + 1);
    let granules = PgmRsrc2(rsrc2).get(PgmRsrc2::GRANULATED_LDS_SIZE);
    let lds = granules * LDS_GRANULE_BYTES;
    if lds > LDS_LIMIT {
        return hw(format!(
            "RSRC2 LDS size {granules} granules ({lds} bytes) exceeds the {LDS_LIMIT} bytes a workgroup can have"
        ));
    }
    let total = d
        .dim
        .iter()
        .try_fold(1u64, |acc, &g| acc.checked_mul(u64::from(g)))
        .unwrap_or(u64::MAX);
    if total > MAX_WORKGROUPS {
        return hw(format!(
            "dispatch of {:?} = {total} workgroups exceeds the simulator's limit of {MAX_WORKGROUPS}",
            d.dim
        ));
    }
    Ok(())
}

pub(crate) fn run(
    regs: &Regs,
    lds_buf: &mut Vec<u8>,
    desc: &QueueDesc,
    env: &Env<'_>,
    d: &DispatchDirect,
    xcc: XccSplit,
) -> Result<Exec, Cause> {
    check_hw(regs, desc, d)?;
    match env.registry.mode() {
        ExecMode::MachineCode => machine(regs, desc, env, d, env, xcc),
        ExecMode::HostStandIns => host(regs, lds_buf, desc, env, d, env),
        ExecMode::Differential => differential(regs, lds_buf, desc, env, d, xcc),
    }
}

/// The launch state the registers describe.
fn launch(
    regs: &Regs,
    desc: &QueueDesc,
    env: &Env<'_>,
    d: &DispatchDirect,
    xcc: XccSplit,
) -> Result<Launch, Cause> {
    let r = &desc.arch.regs;
    let sh = |off: u32| regs.sh(off);
    let family = desc.arch.family;
    let Some(isa) = Isa::of(family) else {
        return hw(format!("the simulator has no interpreter for {family:?}"));
    };
    if !isa.interpreted() {
        return hw(format!(
            "{} machine code is not interpreted by the simulator yet; tests may opt in to host stand-ins (KernelRegistry::set_mode(ExecMode::HostStandIns))",
            isa.name()
        ));
    }
    let pgm = join64(sh(r.pgm_lo), sh(r.pgm_lo + 1)) << 8;
    let (rsrc1, rsrc2) = (sh(r.pgm_rsrc1), sh(r.pgm_rsrc1 + 1));
    let wave64 = !desc.arch.has_cs_w32_en || d.initiator.get(DispatchInitiator::CS_W32_EN) == 0;
    let usc = PgmRsrc2(rsrc2).get(PgmRsrc2::USER_SGPR_COUNT);
    let user_sgprs = (0..usc).map(|i| sh(r.user_data_0 + i)).collect();
    let g = PgmRsrc1(rsrc1).get(PgmRsrc1::GRANULATED_WORKITEM_VGPR_COUNT) + 1;
    let vgprs = match family {
        // gfx90a/gfx942: unified VGPR file, 8 registers per granule.
        Family::Gfx9 => g * 8,
        _ if wave64 => g * 4,
        _ => g * 8,
    };
    // gfx90a/gfx942: the AGPRs begin where COMPUTE_PGM_RSRC3.ACCUM_OFFSET says (the CP never
    // reads the descriptor: an unprogrammed register puts them at v4).
    let accum_offset = match family {
        Family::Gfx9 => PgmRsrc3Gfx90a(sh(r.pgm_rsrc3)).accum_offset_vgprs(),
        _ => 0,
    };
    let lds_bytes = PgmRsrc2(rsrc2).get(PgmRsrc2::GRANULATED_LDS_SIZE) * LDS_GRANULE_BYTES;
    let nt = |i: u32| sh(r.start_x + 3 + i) & 0xffff;
    let mut scratch = ScratchSetup::default();
    let mut scratch_waves = 0;
    if PgmRsrc2(rsrc2).get(PgmRsrc2::ENABLE_PRIVATE_SEGMENT) == 1 {
        let tmpring = sh(r.tmpring_size);
        let bits = desc.arch.tmpring_wavesize_hi - 12 + 1;
        let wavesize = (tmpring >> 12) & ((1u32 << bits) - 1);
        scratch_waves = tmpring & 0xfff;
        scratch = ScratchSetup {
            base: join64(sh(r.pgm_lo + 4), sh(r.pgm_lo + 5)) << 8,
            wave_bytes: if scratch_waves == 0 {
                0
            } else {
                u64::from(wavesize) * u64::from(desc.arch.tmpring_wavesize_unit)
            },
        };
        // Every XCC's slots, each XCC's `stride` after the previous one's (`XccSplit`).
        for k in 0..xcc.count.max(1) {
            check_scratch_region(
                env,
                tmpring,
                scratch
                    .base
                    .wrapping_add(u64::from(k).wrapping_mul(xcc.scratch_stride)),
                scratch_waves,
                scratch.wave_bytes,
            )
            .map_err(|c| match c {
                Cause::Hw(m) if k > 0 => Cause::Hw(format!(
                    "XCC {k} of {}: its scratch starts {k} x {} bytes after XCC 0's (amd_queue_t.scratch_backing_memory_byte_size, the scratch of one XCC: ROCR sets main_size / num_xcc): {m}",
                    xcc.count, xcc.scratch_stride
                )),
                c => c,
            })?;
        }
    }
    Ok(Launch {
        isa,
        gfx940: desc.gfx940,
        pgm,
        wave64,
        user_sgprs,
        rsrc2,
        local: [nt(0), nt(1), nt(2)],
        groups: d.dim,
        lds_bytes,
        vgprs,
        accum_offset,
        scratch,
        scratch_waves,
        float: FloatMode::from_rsrc1(rsrc1),
        budget: env.registry.instruction_budget(),
        clock: env.now(),
        xcc,
    })
}

/// Runs the machine code on the interpreter against `mem`.
fn machine(
    regs: &Regs,
    desc: &QueueDesc,
    env: &Env<'_>,
    d: &DispatchDirect,
    mem: &dyn isa::Memory,
    xcc: XccSplit,
) -> Result<Exec, Cause> {
    let l = launch(regs, desc, env, d, xcc)?;
    if let Some(m) = swapped_kernarg_pointer(env, &l.user_sgprs, l.groups, l.local) {
        return hw(m);
    }
    if let Some(m) = stale_kernargs(env, &l.user_sgprs) {
        return hw(m);
    }
    let threads = env.registry.threads();
    match isa::run_threads(&l, mem, env.registry.strict(), threads) {
        Ok(st) => {
            if let Some(o) = st.first_out_of_range {
                env.registry.findings().push(crate::findings::Finding {
                    kernel: l.pgm,
                    instruction: format!("{} at kernel offset {:#x}", o.instruction(), o.pc_offset),
                    address: o.address,
                    bytes: o.bytes,
                    allocation: o.allocation,
                    what: o.space.what().into(),
                    count: st.out_of_range,
                });
            }
            if let Some(r) = st.race {
                env.registry.findings().push(crate::findings::Finding {
                    kernel: l.pgm,
                    instruction: format!(
                        "stores of workgroups {:?} and {:?}",
                        r.groups[0], r.groups[1]
                    ),
                    address: r.address,
                    bytes: u32::try_from(r.bytes).unwrap_or(u32::MAX),
                    allocation: 0,
                    what: r.to_string(),
                    count: 1,
                });
            }
            let c = env.registry.isa_counters();
            c.wave_instructions
                .fetch_add(st.wave_instructions, Ordering::Relaxed);
            c.lane_instructions
                .fetch_add(st.lane_instructions, Ordering::Relaxed);
            env.spend(&st);
            Ok(Exec::Done)
        }
        Err(IsaError::Vm(v)) => Err(Cause::Vm(v)),
        Err(IsaError::VmAt(v, at)) => {
            // The fault is the symptom; a grid larger than an argument buffer, its cause.
            let cause = grid_past_buffer(env, &l.user_sgprs, l.groups, l.local, v.va);
            Err(Cause::VmAt(v, at + &cause.unwrap_or_default()))
        }
        Err(IsaError::Fault(m)) => hw(m),
    }
}

/// GPU memory whose stores are recorded instead of made (differential mode).
struct Recording<'a, 'e> {
    env: &'a Env<'e>,
    stores: RefCell<BTreeMap<u64, u8>>,
}

impl Recording<'_, '_> {
    fn read(&self, va: u64, buf: &mut [u8], access: Access) -> Result<(), VmFault> {
        self.env.read(va, buf, access)?;
        let st = self.stores.borrow();
        for (k, b) in buf.iter_mut().enumerate() {
            if let Some(v) = st.get(&va.wrapping_add(k as u64)) {
                *b = *v;
            }
        }
        Ok(())
    }
    fn write(&self, va: u64, data: &[u8]) -> Result<(), VmFault> {
        // The mapping must exist (write permission is checked when the stores are made).
        let mut probe = vec![0u8; data.len()];
        self.env.read(va, &mut probe, Access::Read)?;
        let mut st = self.stores.borrow_mut();
        for (k, b) in data.iter().enumerate() {
            st.insert(va.wrapping_add(k as u64), *b);
        }
        Ok(())
    }
}

impl isa::Memory for Recording<'_, '_> {
    fn read(&self, va: u64, buf: &mut [u8], access: Access) -> Result<(), VmFault> {
        Recording::read(self, va, buf, access)
    }
    fn write(&self, va: u64, data: &[u8]) -> Result<(), VmFault> {
        Recording::write(self, va, data)
    }
}

impl KernelMem for Recording<'_, '_> {
    fn read(&self, va: u64, buf: &mut [u8]) -> Result<(), VmFault> {
        Recording::read(self, va, buf, Access::Read)
    }
    fn write(&self, va: u64, data: &[u8]) -> Result<(), VmFault> {
        Recording::write(self, va, data)
    }
}

/// Runs the host stand-in and the machine code, each on its own record of stores; makes the
/// stores if they agree.
fn differential(
    regs: &Regs,
    lds_buf: &mut Vec<u8>,
    desc: &QueueDesc,
    env: &Env<'_>,
    d: &DispatchDirect,
    xcc: XccSplit,
) -> Result<Exec, Cause> {
    let h = Recording {
        env,
        stores: RefCell::new(BTreeMap::new()),
    };
    host(regs, lds_buf, desc, env, d, &h)?;
    let m = Recording {
        env,
        stores: RefCell::new(BTreeMap::new()),
    };
    machine(regs, desc, env, d, &m, xcc)?;
    let (hs, ms) = (h.stores.into_inner(), m.stores.into_inner());
    if hs != ms {
        let first = hs
            .iter()
            .zip(ms.iter())
            .find(|(a, b)| a != b)
            .map(|((ha, hv), (ma, mv))| {
                format!("host stored {hv:#04x} at {ha:#x}, machine code {mv:#04x} at {ma:#x}")
            })
            .unwrap_or_else(|| "one stored more bytes than the other".into());
        return hw(format!(
            "differential run: the host stand-in stored {} bytes and the machine code {} bytes, which differ: {first}",
            hs.len(),
            ms.len()
        ));
    }
    // Make the stores, in runs of consecutive bytes.
    let mut run: Vec<u8> = Vec::new();
    let mut at = 0u64;
    for (&va, &b) in &hs {
        if !run.is_empty() && va != at.wrapping_add(run.len() as u64) {
            env.write(at, &run)?;
            run.clear();
        }
        if run.is_empty() {
            at = va;
        }
        run.push(b);
    }
    if !run.is_empty() {
        env.write(at, &run)?;
    }
    Ok(Exec::Done)
}

/// The kernarg pointer (USER_DATA_`i`, `i`+1, at `p`) must point at a kernarg segment: bytes
/// there (`kernarg`, the segment as the kernel reads it) that are instead this very launch's
/// kernel dispatch packet (`hsa_kernel_dispatch_packet_t`, what ENABLE_SGPR_DISPATCH_PTR
/// points at: its work-group size the launch's COMPUTE_NUM_THREAD, its grid the launch's
/// work-groups times that) mean the pointer names the packet, not the arguments: the kernel
/// would read the packet's header and sizes as its arguments (a pointer swapped with the
/// dispatch pointer, or a kernarg address off by the packet's offset).
fn check_kernarg_is_no_packet(
    kernarg: &[u8],
    p: u64,
    i: u32,
    name: &str,
    groups: [u32; 3],
    local: [u32; 3],
) -> Result<(), Cause> {
    let Some(b) = kernarg.first_chunk::<64>() else {
        return Ok(());
    };
    let pk = DispatchPacket::from_bytes(b);
    let wg = [
        pk.workgroup_size_x,
        pk.workgroup_size_y,
        pk.workgroup_size_z,
    ]
    .map(u32::from);
    let grid = [pk.grid_size_x, pk.grid_size_y, pk.grid_size_z];
    let want = [0, 1, 2].map(|k| groups[k].wrapping_mul(local[k]));
    if wg != local || grid != want {
        return Ok(());
    }
    hw(format!(
        "USER_DATA_{i}/{} (kernarg pointer of kernel {name}) {p:#x} is not a kernarg segment: it points at this launch's kernel dispatch packet (work-group size {wg:?}, grid {grid:?} work-items, kernarg_address {:#x}), so the kernel would read the packet as its arguments",
        i + 1,
        pk.kernarg_address
    ))
}

/// After a kernel's access faulted at `va`: whether `va` lies past the end of a buffer the
/// dispatch's arguments point at (a 64-bit value in the first bytes at a pointer its user
/// SGPRs hold, the kernarg segment, that starts a GPU mapping `va` is past) while the grid has
/// more work-items than that buffer has 4-byte elements: the grid is larger than the buffer it
/// indexes (work-group counts given as work-items, say). Names the buffer, how far past it the
/// address is, and the grid.
fn grid_past_buffer(
    env: &Env<'_>,
    user: &[u32],
    groups: [u32; 3],
    local: [u32; 3],
    va: u64,
) -> Option<String> {
    let items: u64 = (0..3)
        .map(|k| u64::from(groups[k]) * u64::from(local[k]))
        .product();
    let pair = |i: usize| Some(join64(*user.get(i)?, *user.get(i + 1)?));
    // (bytes past the end, buffer, size)
    let mut best: Option<(u64, u64, u64)> = None;
    for i in 0..user.len().saturating_sub(1) {
        let Some(p) = pair(i).filter(|&p| p != 0 && p % 16 == 0) else {
            continue;
        };
        let mut b = [0u8; 64];
        if env.bus.read(p, &mut b, Access::Read).is_err() {
            continue;
        }
        for w in b.chunks_exact(8) {
            let mut a = [0u8; 8];
            a.copy_from_slice(w);
            let buf = u64::from_le_bytes(a);
            if buf == 0 || buf > va {
                continue;
            }
            let Some(end) = env.bus.mapped_end(buf) else {
                continue;
            };
            let size = end - buf;
            if va < end || items.saturating_mul(4) <= size {
                continue;
            }
            let past = va - end;
            if best.is_none_or(|(bp, _, _)| past < bp) {
                best = Some((past, buf, size));
            }
        }
    }
    let (past, buf, size) = best?;
    Some(format!(
        "; cause: a grid larger than the buffers it indexes: the address is {past:#x} bytes past the end of the {size:#x}-byte buffer at {buf:#x} that the dispatch's arguments point at, and the grid is {groups:?} work-groups x {local:?} = {items} work-items (more than the buffer's {} 4-byte elements)",
        size / 4
    ))
}

/// Whether a dispatch's user SGPRs hand the kernel this launch's dispatch packet as its
/// kernarg segment. Without the kernel descriptor (which PM4 hardware never reads) the
/// roles of the user SGPRs come from their fixed order (LLVM AMDGPUUsage, "Initial Kernel
/// Execution State": the dispatch pointer comes before the kernarg segment pointer): a pair
/// that points at a packet describing this launch (its work-group size COMPUTE_NUM_THREAD,
/// its grid the work-groups times that) while the packet's `kernarg_address` sits in an
/// earlier pair, the dispatch pointer's place, means the two pointers are swapped.
fn swapped_kernarg_pointer(
    env: &Env<'_>,
    user: &[u32],
    groups: [u32; 3],
    local: [u32; 3],
) -> Option<String> {
    let pair = |i: usize| Some(join64(*user.get(i)?, *user.get(i + 1)?));
    for i in 0..user.len().saturating_sub(1) {
        let Some(p) = pair(i).filter(|&p| p != 0 && p % 16 == 0) else {
            continue;
        };
        let mut b = [0u8; 64];
        if env.bus.read(p, &mut b, Access::Read).is_err() {
            continue;
        }
        let pk = DispatchPacket::from_bytes(&b);
        let wg = [
            pk.workgroup_size_x,
            pk.workgroup_size_y,
            pk.workgroup_size_z,
        ]
        .map(u32::from);
        let grid = [pk.grid_size_x, pk.grid_size_y, pk.grid_size_z];
        if wg != local || grid != [0, 1, 2].map(|k| groups[k].wrapping_mul(local[k])) {
            continue;
        }
        let ka = pk.kernarg_address;
        if let Some(j) = (0..i).find(|&j| ka != 0 && pair(j) == Some(ka)) {
            return Some(format!(
                "USER_DATA_{i}/{} (the kernarg pointer's place, after the dispatch pointer's) {p:#x} is not a kernarg segment: it points at this launch's kernel dispatch packet (work-group size {wg:?}, grid {grid:?} work-items, kernarg_address {ka:#x}), while USER_DATA_{j}/{} (the dispatch pointer's place) holds the kernarg address {ka:#x}: the kernarg and dispatch pointers are swapped, so the kernel would read the packet as its arguments",
                i + 1,
                j + 1
            ));
        }
    }
    None
}

/// Bytes of a kernarg segment the K$ checks before a dispatch runs: its explicit arguments,
/// hidden arguments and (for a graph) the dispatch packet beside them.
const KERNARG_CHECKED_BYTES: u64 = 256;

/// Before a dispatch's waves run: whether the K$ holds a line of memory at a pointer its user
/// SGPRs hold (its kernarg segment, its dispatch packet) with a byte memory no longer has.
/// The line was fetched before this dispatch began (by an earlier dispatch reading the same
/// segment) and no K$ invalidate ran since, while the bytes changed: the kernel's scalar loads
/// would read the old bytes, so it would run with the previous dispatch's values (a graph
/// replay with the previous replay's kernargs). A driver invalidates the K$ (ACQUIRE_MEM
/// `GLK_INV` on gfx10+, CP_COHER_CNTL `SH_KCACHE_ACTION_ENA` on gfx9; see `cache.rs`)
/// between writing kernargs and the dispatch that reads them, so on a correct stream the K$
/// holds none of them here. Names the pointer, the byte (its offset at the pointer) and
/// both values.
fn stale_kernargs(env: &Env<'_>, user: &[u32]) -> Option<String> {
    let caches = env.bus.caches()?;
    let pair = |i: usize| Some(join64(*user.get(i)?, *user.get(i + 1)?));
    for i in 0..user.len().saturating_sub(1) {
        let Some(p) = pair(i).filter(|&p| p != 0 && p % 16 == 0) else {
            continue;
        };
        let hi = p.saturating_add(KERNARG_CHECKED_BYTES);
        let read = |line: u64, b: &mut [u8; 64]| env.bus.read(line, b, Access::Read);
        if let Some(s) = caches.kcache_stale(p, hi, read) {
            return Some(format!(
                "stale kernargs, a replay running with the previous replay's values: USER_DATA_{i}/{} holds {p:#x} (the kernarg segment or dispatch packet the kernel reads), and the K$ holds its byte {:#x} (offset {:#x}) as {:#04x}, fetched before this dispatch began, while memory holds {:#04x}: the bytes changed (the host's new values for this dispatch) after an earlier dispatch's read filled the K$ line, and no K$ invalidate ran since (ACQUIRE_MEM GLK_INV on gfx10+, CP_COHER_CNTL SH_KCACHE_ACTION_ENA on gfx9), so the kernel's scalar loads would return the earlier dispatch's values",
                i + 1,
                s.va,
                s.va - p,
                s.cached,
                s.memory
            ));
        }
    }
    None
}

/// The scratch region COMPUTE_TMPRING_SIZE programs (`waves` slots of `wave_bytes` from
/// COMPUTE_DISPATCH_SCRATCH_BASE `base`) must be mapped whole at dispatch: the hardware may
/// give a wave any slot up to WAVES, so a buffer shorter than the region is a fault of the
/// dispatch, whichever slots this launch's waves happen to take. The fault names both sizes.
fn check_scratch_region(
    env: &Env<'_>,
    tmpring: u32,
    base: u64,
    waves: u32,
    wave_bytes: u64,
) -> Result<(), Cause> {
    let total = u64::from(waves).saturating_mul(wave_bytes);
    let end = base.saturating_add(total);
    // `lo`: the bytes mapped from the base without a hole.
    let lo = if let Some(first) = env.bus.mapped_end(base) {
        // With the page table at hand: follow the mappings from the base one after another,
        // so a hole is found wherever it is (another buffer placed at the region's far end
        // does not make the region mapped).
        let mut at = first;
        while at < end {
            match env.bus.mapped_end(at) {
                Some(e) if e > at => at = e,
                _ => break,
            }
        }
        at.min(end) - base
    } else {
        // Without one: whether the first `len` bytes are mapped, judged by their last byte.
        let mapped = |len: u64| {
            let mut b = [0u8; 1];
            len == 0
                || base
                    .checked_add(len - 1)
                    .is_some_and(|a| env.bus.read(a, &mut b, Access::Read).is_ok())
        };
        if mapped(total) && mapped(1) {
            total
        } else {
            // The mapped prefix: `lo` bytes are mapped, `hi` bytes are not.
            let (mut lo, mut hi) = (0u64, total);
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if mapped(mid) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            lo
        }
    };
    if lo >= total {
        return Ok(());
    }
    hw(format!(
        "scratch: COMPUTE_TMPRING_SIZE {tmpring:#x} programs {waves} wave slots of {wave_bytes} bytes = {total} bytes from COMPUTE_DISPATCH_SCRATCH_BASE {base:#x}, but only {lo} bytes are mapped there (the scratch buffer is short of the region the hardware may give waves)"
    ))
}

/// What a kernel that takes the private segment buffer needs in `USER_DATA_i..i+3`: a scratch V#
/// (gfx9/gfx10 layout, `hcq_core::rsrc`) over the queue's scratch, swizzled per lane with the
/// kernel's wave size as index stride, a valid format, and room for one wave's private segment.
fn check_private_segment_buffer(
    desc: &QueueDesc,
    name: &str,
    i: u32,
    words: [u32; 4],
    scratch_base: u64,
    wave32: bool,
    kd: &KernelDescriptor,
) -> Result<(), Cause> {
    let [w0, w1, w2, w3] = words;
    let at = format!(
        "USER_DATA_{i}..={} (private segment buffer of kernel {name}: {w0:#x} {w1:#x} {w2:#x} {w3:#x})",
        i + 3
    );
    if desc.arch.scratch_rsrc.is_none() {
        return hw(format!(
            "kernel {name} asks for a private segment buffer, which {:?} (architected flat scratch) does not have",
            desc.arch.family
        ));
    }
    let v = ScratchRsrc::from_words(words);
    let base = v.base().get();
    if base != scratch_base {
        return hw(format!(
            "{at} has base {base:#x}, not the queue's scratch base {scratch_base:#x} (COMPUTE_DISPATCH_SCRATCH_BASE)"
        ));
    }
    let lanes: u32 = if wave32 { 32 } else { 64 };
    let need = u64::from(kd.private_segment_fixed_size) * u64::from(lanes);
    if v.num_records() == 0 || u64::from(v.num_records()) < need {
        return hw(format!(
            "{at} has NUM_RECORDS {}, but one wave of the kernel needs {need} scratch bytes",
            v.num_records()
        ));
    }
    let w1 = v.word1();
    let w3 = BufRsrcWord3Gfx9(words[3]);
    let format_ok = if desc.arch.family == Family::Gfx9 {
        w3.get(BufRsrcWord3Gfx9::DATA_FORMAT) != 0
    } else {
        BufRsrcWord3Gfx10(words[3]).get(BufRsrcWord3Gfx10::FORMAT) != 0
    };
    let checks = [
        (
            w1.get(BufRsrcWord1::SWIZZLE_ENABLE) == 1,
            "SWIZZLE_ENABLE is clear".to_owned(),
        ),
        (
            w1.get(BufRsrcWord1::STRIDE) == 0,
            "STRIDE is not 0".to_owned(),
        ),
        (
            w3.get(BufRsrcWord3Gfx9::ADD_TID_ENABLE) == 1,
            "ADD_TID_ENABLE is clear".to_owned(),
        ),
        (
            v.index_stride_lanes() == lanes,
            format!(
                "INDEX_STRIDE is {} lanes for a wave{lanes} kernel",
                v.index_stride_lanes()
            ),
        ),
        (
            w3.get(BufRsrcWord3Gfx9::TYPE) == 0,
            "TYPE is not a buffer".to_owned(),
        ),
        (format_ok, "its data format is invalid (0)".to_owned()),
    ];
    match checks.into_iter().find(|(ok, _)| !ok) {
        Some((_, why)) => hw(format!("{at}: {why}")),
        None => Ok(()),
    }
}
