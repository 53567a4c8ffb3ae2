//! PM4 packet execution (the MEC's compute queue).

use super::QueueDesc;
use super::WaitInfo;
use super::env::Env;
use super::types::{Cause, Exec, Regs, compare};
use crate::isa::XccSplit;
use hcq_core::arch::AcquireMemLayout;
use hcq_core::pm4::{
    AcquireMem, EventWriteCntl, IbControl, IndirectBuffer, Pm4Packet, ReleaseMem,
    ReleaseMemDataCntl, ReleaseMemEventCntl, WaitRegMem, WaitRegMemCtl, WriteDataCntl,
};
use hcq_core::sel::{
    DataSel, EventIndex, EventType, IntSel, MemSpace, ReleaseDst, WaitOperation, WriteDataDst,
};

fn hw<T>(msg: String) -> Result<T, Cause> {
    Err(Cause::Hw(msg))
}

fn set_regs(file: &mut [u32], name: &str, off: u32, values: &[u32]) -> Result<Exec, Cause> {
    let start = usize::try_from(off).unwrap_or(usize::MAX);
    let end = start.saturating_add(values.len());
    match file.get_mut(start..end) {
        Some(dst) => {
            dst.copy_from_slice(values);
            Ok(Exec::Done)
        }
        None => hw(format!(
            "{name} writes {} registers from offset {off:#x}, past the end of the window ({:#x} registers)",
            values.len(),
            file.len()
        )),
    }
}

pub(crate) fn exec(
    regs: &mut Regs,
    scratch: &mut Vec<u8>,
    desc: &QueueDesc,
    env: &Env<'_>,
    irqs: &mut Vec<u32>,
    pkt: &Pm4Packet<'_>,
    xcc: XccSplit,
) -> Result<Exec, Cause> {
    match pkt {
        Pm4Packet::Nop { .. } => Ok(Exec::Done),
        Pm4Packet::SetShReg { reg_offset, values } => {
            set_regs(&mut regs.sh, "SET_SH_REG", *reg_offset, values)
        }
        Pm4Packet::SetUconfigReg { reg_offset, values } => {
            set_regs(&mut regs.uconfig, "SET_UCONFIG_REG", *reg_offset, values)
        }
        Pm4Packet::DispatchDirect(d) if env.asynchronous() => {
            super::dispatch::check_hw(regs, desc, d)?;
            Ok(Exec::Dispatch(*d))
        }
        Pm4Packet::DispatchDirect(d) => super::dispatch::run(regs, scratch, desc, env, d, xcc),
        Pm4Packet::WriteData {
            control,
            addr,
            data,
        } => write_data(env, *control, *addr, data),
        Pm4Packet::WaitRegMem(w) => wait_reg_mem(desc, env, w),
        Pm4Packet::IndirectBuffer(ib) => indirect_buffer(ib),
        Pm4Packet::EventWrite(e) => event_write(desc, *e),
        Pm4Packet::ReleaseMem(r) => release_mem(desc, env, irqs, r),
        Pm4Packet::AcquireMem(a) => acquire_mem(desc, env, a),
        other => hw(format!("PM4 packet not supported by the engine: {other}")),
    }
}

/// WRITE_DATA: `data` to memory or the L2 (DST_SEL 1, 2, 5), at one address or consecutive ones.
fn write_data(
    env: &Env<'_>,
    control: WriteDataCntl,
    addr: hcq_core::addr::GpuVa,
    data: &[u32],
) -> Result<Exec, Cause> {
    let dst = control.get(WriteDataCntl::DST_SEL);
    if !matches!(
        control.dst_sel(),
        Ok(WriteDataDst::MemorySync | WriteDataDst::Gl2 | WriteDataDst::Memory)
    ) {
        return hw(format!(
            "WRITE_DATA DST_SEL {dst} is not supported (only memory: 1, 2, 5)"
        ));
    }
    let a = addr.get();
    if a % 4 != 0 {
        return hw(format!("WRITE_DATA address {a:#x} is not dword aligned"));
    }
    if control.get(WriteDataCntl::WR_ONE_ADDR) != 0 {
        for &v in data {
            env.store_u32(a, v)?;
        }
    } else if control.dst_sel() == Ok(WriteDataDst::Gl2) {
        // Into the L2: the CPU sees it after a write-back.
        env.write(a, bytemuck::cast_slice(data))?;
    } else {
        // Memory: past the L2's write-back.
        env.write_through(a, bytemuck::cast_slice(data))?;
    }
    Ok(Exec::Done)
}

/// WAIT_REG_MEM: a memory poll (done, or a wait the queue parks on), or the HDP flush's
/// register write-then-wait.
fn wait_reg_mem(desc: &QueueDesc, env: &Env<'_>, w: &WaitRegMem) -> Result<Exec, Cause> {
    let c = w.control;
    let function = c.get(WaitRegMemCtl::FUNCTION);
    let op = c.get(WaitRegMemCtl::OPERATION);
    match c.mem_space() {
        Ok(MemSpace::Memory) => {
            if c.operation() != Ok(WaitOperation::Wait) {
                return hw(format!(
                    "memory WAIT_REG_MEM with OPERATION {op} (only 0, wait, is supported)"
                ));
            }
            let a = w.addr().get();
            if a % 4 != 0 {
                return hw(format!("WAIT_REG_MEM address {a:#x} is not dword aligned"));
            }
            let v = env.poll_u32(a)?;
            match compare(function, v, w.mask, w.reference) {
                None => hw("WAIT_REG_MEM FUNCTION 7 is reserved".into()),
                Some(true) => {
                    env.wait_satisfied(a);
                    Ok(Exec::Done)
                }
                Some(false) => Ok(Exec::Wait(WaitInfo {
                    addr: a,
                    function,
                    reference: w.reference,
                    mask: w.mask,
                    seen: v,
                })),
            }
        }
        Ok(MemSpace::Register) => {
            let arch = desc.arch;
            if c.operation() == Ok(WaitOperation::WriteThenWait)
                && w.addr_lo == arch.hdp_flush_req
                && w.addr_hi == arch.hdp_flush_done
                && c.function().is_ok()
            {
                // The HDP flush: write REQ, wait for DONE. CPU writes into VRAM
                // become visible to the GPU here.
                env.bus.hdp_flush();
                Ok(Exec::Done)
            } else {
                hw(format!(
                    "register WAIT_REG_MEM (reg {:#x}/{:#x}, OPERATION {op}) is not the HDP flush ({:#x}/{:#x}, OPERATION 1), the only register form supported",
                    w.addr_lo, w.addr_hi, arch.hdp_flush_req, arch.hdp_flush_done
                ))
            }
        }
        Err(m) => hw(format!(
            "WAIT_REG_MEM MEM_SPACE {} is not supported",
            m.value
        )),
    }
}

/// INDIRECT_BUFFER: where the CP goes next (and whether it returns).
fn indirect_buffer(ib: &IndirectBuffer) -> Result<Exec, Cause> {
    let a = ib.addr.get();
    if a % 4 != 0 || a >> 48 != 0 {
        return hw(format!(
            "INDIRECT_BUFFER address {a:#x} is not a dword-aligned 48-bit address"
        ));
    }
    let c = ib.control;
    if c.get(IbControl::VALID) == 0 {
        return hw("INDIRECT_BUFFER without VALID".into());
    }
    Ok(Exec::Ib {
        base: a,
        dwords: c.get(IbControl::IB_SIZE),
        chain: c.get(IbControl::CHAIN) != 0,
    })
}

/// EVENT_WRITE: only the event types the CP knows, CS_PARTIAL_FLUSH with its index.
fn event_write(desc: &QueueDesc, e: EventWriteCntl) -> Result<Exec, Cause> {
    let t = e.get(EventWriteCntl::EVENT_TYPE);
    let i = e.get(EventWriteCntl::EVENT_INDEX);
    let known = EventWriteCntl::zeroed()
        .with(EventWriteCntl::EVENT_TYPE, t)
        .with(EventWriteCntl::EVENT_INDEX, i);
    if known.raw() != e.raw() {
        return hw(format!(
            "EVENT_WRITE control {:#x} sets bits outside EVENT_TYPE/EVENT_INDEX",
            e.raw()
        ));
    }
    let Ok(ty) = EventType::try_from(t) else {
        return hw(format!("EVENT_WRITE event type {t:#x} is not supported"));
    };
    if ty == desc.arch.events.cs_partial_flush && i != desc.arch.events.cs_partial_flush_index.raw()
    {
        return hw(format!(
            "EVENT_WRITE CS_PARTIAL_FLUSH with EVENT_INDEX {i} (must be {})",
            desc.arch.events.cs_partial_flush_index.raw()
        ));
    }
    Ok(Exec::Done)
}

/// RELEASE_MEM: the end-of-pipe cache actions, then the data write and the interrupt.
fn release_mem(
    desc: &QueueDesc,
    env: &Env<'_>,
    irqs: &mut Vec<u32>,
    r: &ReleaseMem,
) -> Result<Exec, Cause> {
    let idx = r.event.get(ReleaseMemEventCntl::EVENT_INDEX);
    if !matches!(
        r.event.event_index(),
        Ok(EventIndex::EndOfPipe | EventIndex::ShaderDone)
    ) {
        return hw(format!(
            "RELEASE_MEM EVENT_INDEX {idx} (must be 5, end of pipe, or 6, shader done)"
        ));
    }
    let dc = r.data_cntl;
    let dst = dc.get(ReleaseMemDataCntl::DST_SEL);
    if dc.dst_sel().is_err() {
        return hw(format!(
            "RELEASE_MEM DST_SEL {dst} is not supported (memory: 0, 1)"
        ));
    }
    let a = r.addr.get();
    let data_sel = dc.get(ReleaseMemDataCntl::DATA_SEL);
    // INT_SEL's values and what each sends: `hcq_core::sel::IntSel`.
    if dc.int_sel() == Ok(IntSel::Interrupt) && dc.data_sel() != Ok(DataSel::None) {
        return hw(format!(
            "RELEASE_MEM INT_SEL 1 (interrupt without waiting for the write) with DATA_SEL {data_sel}: a waiter woken by the interrupt may read the old value; use INT_SEL 2 (interrupt after the write is confirmed)"
        ));
    }
    let align = |n: u64| {
        if a % n == 0 {
            Ok(())
        } else {
            hw(format!(
                "RELEASE_MEM DATA_SEL {data_sel} address {a:#x} is not {n}-byte aligned"
            ))
        }
    };
    // The cache actions come before the data write (the EOP/EOS event's flush).
    if super::cache::release_writes_back_l2(desc.arch, r.event) {
        env.bus.l2_writeback();
    }
    // DST_SEL 0 writes memory (past the L2), 1 the L2 (seen by the CPU only after a
    // later write-back).
    let to_l2 = dc.dst_sel() == Ok(ReleaseDst::Gl2);
    let put32 = |v: u32| {
        if to_l2 {
            env.write(a, &v.to_le_bytes())
        } else {
            env.store_u32(a, v)
        }
    };
    let put64 = |v: u64| {
        if to_l2 {
            env.write(a, &v.to_le_bytes())
        } else {
            env.store_u64(a, v)
        }
    };
    match dc.data_sel() {
        Ok(DataSel::None) => {}
        Ok(DataSel::Data32) => {
            align(4)?;
            // CAST: 32-bit data is the low half.
            put32(r.data as u32)?;
        }
        Ok(DataSel::Data64) => {
            align(8)?;
            put64(r.data)?;
        }
        Ok(DataSel::GpuClock | DataSel::SystemClock) => {
            align(8)?;
            put64(env.now())?;
        }
        Err(s) => return hw(format!("RELEASE_MEM DATA_SEL {} is not supported", s.value)),
    }
    match dc.int_sel() {
        Ok(IntSel::None | IntSel::WriteConfirm) => {}
        Ok(IntSel::Interrupt | IntSel::InterruptAfterWrite) => irqs.push(r.int_ctxid),
        Err(s) => return hw(format!("RELEASE_MEM INT_SEL {} is not supported", s.value)),
    }
    Ok(Exec::Done)
}

/// ACQUIRE_MEM: the layout this GPU's CP takes, then its cache actions.
fn acquire_mem(desc: &QueueDesc, env: &Env<'_>, a: &AcquireMem) -> Result<Exec, Cause> {
    match (desc.arch.acquire_mem, a.gcr_cntl) {
        (AcquireMemLayout::GcrCntl, Some(g)) => {
            if a.coher_cntl != 0 {
                return hw(format!(
                    "ACQUIRE_MEM CP_COHER_CNTL {:#x} must be 0 on this GPU (cache actions go in GCR_CNTL)",
                    a.coher_cntl
                ));
            }
            if g.raw() >> 19 != 0 {
                return hw(format!(
                    "ACQUIRE_MEM GCR_CNTL {:#x} sets bits above 18",
                    g.raw()
                ));
            }
        }
        (AcquireMemLayout::CoherCntl, None) => {}
        (layout, _) => {
            return hw(format!(
                "ACQUIRE_MEM of {} dwords on a GPU whose ACQUIRE_MEM has {}",
                if a.gcr_cntl.is_some() { 8 } else { 7 },
                layout.dwords()
            ));
        }
    }
    if let Some(c) = env.bus.caches() {
        c.acquire(desc.arch, a);
    }
    if super::cache::acquire_writes_back_l2(desc.arch, a) {
        env.bus.l2_writeback();
    }
    Ok(Exec::Done)
}
