//! SDMA packet execution (the copy engine).

use super::WaitInfo;
use super::env::Env;
use super::types::QueueDesc;
use super::types::{Cause, Exec, compare};
use crate::vm::Access;
use hcq_core::arch::Family;
use hcq_core::sdma::{
    ConstFill, ConstFillHeader, Indirect, PollRegmem, PollRegmemHeader, SdmaPacket,
};

/// Bytes moved per chunk of a copy or fill.
const CHUNK: usize = 1 << 20;

fn hw<T>(msg: String) -> Result<T, Cause> {
    Err(Cause::Hw(msg))
}

/// Whether this SDMA engine is an L2 client: on gfx10+ SDMA reads and writes through GL2
/// (the kernel's `sdma_v5_0_ring_emit_mem_sync` and ROCr's `BlitSdmaV5` use GCR_REQ to write
/// it back after a copy); SDMA v4 (gfx9) has no GCR_REQ and goes to memory past the TC L2, so
/// it sees a kernel's results only after an L2 write-back.
fn l2_client(desc: &QueueDesc) -> bool {
    desc.arch.family != Family::Gfx9
}

/// A data write by this engine: through the L2 where SDMA is an L2 client.
fn put(env: &Env<'_>, l2: bool, va: u64, data: &[u8]) -> Result<(), Cause> {
    if l2 {
        env.write(va, data)?;
    } else {
        env.write_through(va, data)?;
    }
    Ok(())
}

/// memmove of `n` bytes from `src` to `dst` through GPU memory, in chunks (backwards when the
/// destination overlaps the source from above).
fn copy(
    env: &Env<'_>,
    l2: bool,
    scratch: &mut Vec<u8>,
    src: u64,
    dst: u64,
    n: u64,
) -> Result<(), Cause> {
    let backwards = dst > src && dst - src < n;
    let mut done = 0u64;
    while done < n {
        // CAST: the chunk is at most CHUNK bytes.
        let step = (n - done).min(CHUNK as u64);
        let off = if backwards { n - done - step } else { done };
        // CAST: step <= CHUNK.
        scratch.resize(step as usize, 0);
        if l2 {
            env.read(src.wrapping_add(off), scratch, Access::Read)?;
        } else {
            env.read_through(src.wrapping_add(off), scratch)?;
        }
        put(env, l2, dst.wrapping_add(off), scratch)?;
        done += step;
    }
    Ok(())
}

pub(crate) fn exec(
    scratch: &mut Vec<u8>,
    desc: &QueueDesc,
    env: &Env<'_>,
    irqs: &mut Vec<u32>,
    pkt: &SdmaPacket<'_>,
    depth: usize,
) -> Result<Exec, Cause> {
    match pkt {
        SdmaPacket::Nop { .. } => Ok(Exec::Done),
        SdmaPacket::GcrReq(_) if matches!(desc.arch.family, hcq_core::arch::Family::Gfx9) => hw(
            "SDMA opcode 17 (GCR_REQ) does not exist on SDMA v4 (gfx9): vega10_sdma_pkt_open.h \
             ends at opcode 16 (DUMMY_TRAP)"
                .into(),
        ),
        SdmaPacket::GcrReq(g) => {
            // The GCR_CNTL field as the hardware reads it (the seed's placement leaves it 0).
            if let Some(c) = env.bus.caches() {
                c.gcr(g.gcr);
            }
            if super::cache::gcr_writes_back_l2(g.gcr) {
                env.bus.l2_writeback();
            }
            Ok(Exec::Done)
        }
        SdmaPacket::CopyLinear(c) => {
            copy(
                env,
                l2_client(desc),
                scratch,
                c.src.get(),
                c.dst.get(),
                u64::from(c.count) + 1,
            )?;
            Ok(Exec::Done)
        }
        SdmaPacket::Write { dst, data, .. } => {
            let a = dst.get();
            if a % 4 != 0 {
                return hw(format!("WRITE destination {a:#x} is not dword aligned"));
            }
            put(env, l2_client(desc), a, bytemuck::cast_slice(data))?;
            Ok(Exec::Done)
        }
        SdmaPacket::Indirect(i) => indirect(i, depth),
        SdmaPacket::Fence(f) => {
            let a = f.addr.get();
            if a % 4 != 0 {
                return hw(format!("FENCE address {a:#x} is not dword aligned"));
            }
            env.store_u32(a, f.data)?;
            Ok(Exec::Done)
        }
        SdmaPacket::Trap { int_context } => {
            irqs.push(*int_context);
            Ok(Exec::Done)
        }
        SdmaPacket::PollRegmem(p) => poll_regmem(env, p),
        SdmaPacket::ConstFill(c) => const_fill(scratch, desc, env, c),
        SdmaPacket::Timestamp { addr } => {
            let a = addr.get();
            if a % 8 != 0 {
                return hw(format!("TIMESTAMP address {a:#x} is not 8-byte aligned"));
            }
            env.store_u64(a, env.now())?;
            Ok(Exec::Done)
        }
        other => hw(format!("SDMA packet not supported by the engine: {other}")),
    }
}

/// INDIRECT: the IB the engine runs next (SDMA IBs do not nest).
fn indirect(i: &Indirect, depth: usize) -> Result<Exec, Cause> {
    if depth > 0 {
        return hw("INDIRECT inside an indirect buffer (SDMA IBs do not nest)".into());
    }
    let a = i.ib.get();
    if a % 32 != 0 {
        return hw(format!(
            "INDIRECT buffer address {a:#x} is not 32-byte aligned"
        ));
    }
    Ok(Exec::Ib {
        base: a,
        dwords: i.size_dwords,
        chain: false,
    })
}

/// POLL_REGMEM: the HDP flush, or a memory poll (done, or a wait the queue parks on).
fn poll_regmem(env: &Env<'_>, p: &PollRegmem) -> Result<Exec, Cause> {
    let h = p.header;
    let function = h.get(PollRegmemHeader::FUNC);
    if h.function().is_err() {
        return hw("POLL_REGMEM FUNC 7 is reserved".into());
    }
    if h.get(PollRegmemHeader::HDP_FLUSH) != 0 {
        if h.get(PollRegmemHeader::MEM_POLL) != 0 {
            return hw("POLL_REGMEM with both HDP_FLUSH and MEM_POLL".into());
        }
        // CPU writes into VRAM become visible to the GPU here.
        env.bus.hdp_flush();
        return Ok(Exec::Done);
    }
    if h.get(PollRegmemHeader::MEM_POLL) == 0 {
        return hw(format!(
            "register POLL_REGMEM (reg {:#x}) is not supported (only memory polls and the HDP flush)",
            p.addr.get()
        ));
    }
    let a = p.addr.get();
    if a % 4 != 0 {
        return hw(format!("POLL_REGMEM address {a:#x} is not dword aligned"));
    }
    let v = env.poll_u32(a)?;
    match compare(function, v, p.mask, p.value) {
        Some(true) => {
            env.wait_satisfied(a);
            Ok(Exec::Done)
        }
        _ => Ok(Exec::Wait(WaitInfo {
            addr: a,
            function,
            reference: p.value,
            mask: p.mask,
            seen: v,
        })),
    }
}

/// CONST_FILL: a dword pattern over a dword-aligned range, in chunks.
fn const_fill(
    scratch: &mut Vec<u8>,
    desc: &QueueDesc,
    env: &Env<'_>,
    c: &ConstFill,
) -> Result<Exec, Cause> {
    let fs = c.header.get(ConstFillHeader::FILLSIZE);
    if fs != 2 {
        return hw(format!(
            "CONST_FILL FILLSIZE {fs} is not supported (only 2, dwords)"
        ));
    }
    let a = c.dst.get();
    let n = u64::from(c.count) + 1;
    if a % 4 != 0 || n % 4 != 0 {
        return hw(format!(
            "CONST_FILL of {n} bytes at {a:#x}: address and size must be dword multiples"
        ));
    }
    let mut done = 0u64;
    while done < n {
        // CAST: at most CHUNK.
        let step = (n - done).min(CHUNK as u64) as usize;
        scratch.clear();
        scratch.extend(c.data.to_le_bytes().iter().cycle().take(step));
        put(env, l2_client(desc), a.wrapping_add(done), scratch)?;
        // CAST: usize -> u64 widens.
        done += step as u64;
    }
    Ok(Exec::Done)
}
