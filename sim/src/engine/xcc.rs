//! Multi-XCC nodes: gfx942 partitioned as SPX (8 XCCs on one KFD node), DPX (4) or QPX (2).
//!
//! Each XCC has its own command processor. Which of them run a queue (Linux amdkfd,
//! `kfd_mqd_manager_v9.c` `init_mqd_v9_4_3`, one MQD per XCC; "drm/amdkfd: Add PM4 target
//! XCC", 3c8bdb51be0e: "In a device that supports multiple XCCs, unlike AQL queues, the PM4
//! queue will be only processed in one XCC in the partitioning"):
//! - a PM4 queue runs on one XCC, `pm4_target_xcc` (bits 8..=15 of CREATE_QUEUE's
//!   `queue_percentage`; `pm4_target_xcc_in_xcp` in every XCC's MQD). Its MQDs leave
//!   `COMPUTE_TG_CHUNK_SIZE` and `COMPUTE_CURRENT_LOGIC_XCC_ID` at 0, so its dispatches run on
//!   that XCC alone. A driver that wants every XCC on a PM4 stream creates one queue per XCC
//!   (target `k`, its own read pointer, e.g. `read_pointer_address + 8 * k`) on one ring;
//! - an AQL queue runs on every XCC: each CP processes every packet (the MQDs set
//!   `compute_tg_chunk_size = 1` and `compute_current_logic_xcc_id` = the XCC, so a kernel
//!   dispatch's work-groups are shared out round-robin and completed once; only the master
//!   XCC, 0, updates the read pointer: `CP_HQD_PQ_CONTROL.NO_UPDATE_RPTR` is cleared on XCC 0
//!   only). The PM4 indirect buffer of an `AMD_AQL_FORMAT_PM4_IB` packet therefore runs on
//!   every XCC, each honouring `PRED_EXEC` for itself; each XCC's RELEASE_MEM writes its own
//!   value and raises its own interrupt, each WAIT_REG_MEM is evaluated per XCC;
//! - a context-save area per XCC, `ctx_save_restore_size` apart (`init_mqd_v9_4_3`:
//!   `ctx_save_restore_area_address + xcc * ctx_save_restore_area_size`; sized by
//!   `kfd_queue.c` and `CwsrSizes::cwsr_mapping_size`).
//!
//! `PRED_EXEC` (PACKET3 opcode 0x23, one body dword: `DEVICE_SELECT`, the XCC mask, in bits
//! 24..=31 and `EXEC_COUNT`, the dwords it governs, in bits 0..=13; Linux `soc15d.h`
//! `PACKET3_PRED_EXEC`, tinygrad `ops_amd.py` `pred_exec`): the XCCs in the mask execute the
//! next `EXEC_COUNT` dwords, the others skip them. The CP honours it only inside indirect
//! buffers (tinygrad ops_amd.py, from MI300X hardware: "PACKET3_PRED_EXEC doesn't work in
//! rings, only in IBs"): in a ring the simulator faults the queue.

use super::QueueDesc;
use super::types::{Cause, QueueKind, Regs};
use crate::isa::XccSplit;
use hcq_core::arch::Family;
use hcq_core::pm4::ReleaseMem;
use hcq_core::sel::DataSel;

/// `COMPUTE_CURRENT_LOGIC_XCC_ID` and `COMPUTE_TG_CHUNK_SIZE` (GC 9.4.3 registers 0xe25 and
/// 0xe27, `gc_9_4_3_offset.h`), as SET_SH_REG offsets from COMPUTE_PGM_LO (0xe0c).
const LOGIC_XCC_ID_FROM_PGM_LO: u32 = 0xe25 - 0xe0c;
const TG_CHUNK_SIZE_FROM_PGM_LO: u32 = 0xe27 - 0xe0c;

/// What the simulator cannot run as the hardware would, or a driver got wrong, about a
/// DISPATCH_DIRECT on a multi-XCC node.
///
/// # Errors
/// On a node of several XCCs: a DISPATCH_DIRECT inside an AQL queue's PM4 IB (every XCC runs
/// the IB and dispatches its share: the MQD sets `compute_tg_chunk_size = 1`), or a PM4
/// queue's DISPATCH_DIRECT with `COMPUTE_TG_CHUNK_SIZE` set (the queue's XCC runs only its
/// logical XCC's chunks of the grid; the other chunks run only if the queues on the other
/// XCCs dispatch the same grid). hcq-sim does not split a grid across XCCs' queues.
pub(crate) fn check_dispatch(
    seat: XccSeat,
    kind: QueueKind,
    regs: &Regs,
    desc: &QueueDesc,
) -> Result<(), Cause> {
    if seat.count <= 1 || desc.arch.family != Family::Gfx9 {
        return Ok(());
    }
    let n = seat.count;
    if kind == QueueKind::Aql {
        return Err(Cause::Hw(format!(
            "DISPATCH_DIRECT inside an AQL queue's PM4 indirect buffer on a node of {n} XCCs: every XCC runs the IB and dispatches its own share of the grid (KFD's AQL MQDs set COMPUTE_TG_CHUNK_SIZE 1), which hcq-sim does not split; dispatch with a kernel dispatch packet (the grid is shared out once across the XCCs)"
        )));
    }
    let pgm_lo = desc.arch.regs.pgm_lo;
    let chunk = regs.sh(pgm_lo + TG_CHUNK_SIZE_FROM_PGM_LO) & 0xffff;
    if chunk == 0 {
        return Ok(());
    }
    let logic = regs.sh(pgm_lo + LOGIC_XCC_ID_FROM_PGM_LO);
    Err(Cause::Hw(format!(
        "DISPATCH_DIRECT with COMPUTE_TG_CHUNK_SIZE {chunk} on XCC {} of {n} (COMPUTE_CURRENT_LOGIC_XCC_ID {logic}): this queue's XCC runs only logical XCC {logic}'s chunks of {chunk} work-groups, every {n}th; the rest of the grid runs only if queues on the other XCCs dispatch it too (the MQD of a PM4 queue leaves the chunk size 0: the whole grid on the queue's XCC). hcq-sim does not split a grid across queues: leave COMPUTE_TG_CHUNK_SIZE 0, or use an AQL queue, whose dispatches every XCC shares",
        seat.xcc
    )))
}

/// A RELEASE_MEM that writes a value from an AQL queue's PM4 IB on a multi-XCC node while a
/// kernel dispatch of the queue may still run (`unfenced`: the last kernel dispatch packet
/// had neither a completion signal nor a release fence, and no packet with the barrier bit
/// came since): each XCC's CP runs the IB once its own share is done, so the value can be
/// seen before the other XCCs have finished (on one XCC the end-of-pipe release waits for
/// the whole dispatch). The barrier bit, a completion signal and a release fence each wait
/// for every XCC's share (the AQL packet processors complete a dispatch once).
///
/// # Errors
/// That case, naming the write, the XCC and the fix.
pub(crate) fn check_aql_release(
    seat: XccSeat,
    xcc: u32,
    unfenced: bool,
    r: &ReleaseMem,
) -> Result<(), Cause> {
    if seat.count <= 1 || !unfenced {
        return Ok(());
    }
    if !matches!(
        r.data_cntl.data_sel(),
        Ok(DataSel::Data32 | DataSel::Data64)
    ) {
        return Ok(());
    }
    Err(Cause::Hw(format!(
        "RELEASE_MEM on XCC {xcc} of {} writes {:#x} to {:#x} while the kernel dispatch before it may still be running on the other XCCs: each XCC runs this AQL PM4 packet once its own share of the grid is done, so the value is seen before the whole dispatch finished (one XCC's release waits for its work only); set the vendor packet's barrier bit, or give the dispatch a completion signal or release fence to wait on",
        seat.count,
        r.data,
        r.addr.get()
    )))
}

/// A kernel dispatch of an AQL queue on a node of several XCCs that uses scratch, where the
/// queue's `amd_queue_t` makes the XCCs' scratch overlap: each XCC's CP takes its scratch at
/// `scratch_backing_memory_location + xcc * scratch_backing_memory_byte_size` (ROCdbgapi
/// `aql_queue_t::scratch_memory_region`; ROCR `AqlQueue::InitScratchSRD` stores the size
/// per XCC, `main_size / num_xcc`), and gives its waves the `WAVES` slots of `WAVESIZE` that
/// `compute_tmpring_size` programs from there (ROCR `FillComputeTmpRingSize`: the waves of
/// one XCC's share). A byte size below one XCC's slots puts two XCCs' waves on the same
/// private memory (0, the field left unset, puts every XCC on the same slots).
///
/// # Errors
/// That overlap, in words: the sizes, where the field is, and the fix.
pub(crate) fn check_aql_scratch(
    seat: XccSeat,
    desc: &QueueDesc,
    tmpring: u32,
    stride: u64,
    stride_at: u64,
) -> Result<(), String> {
    if seat.count <= 1 {
        return Ok(());
    }
    let arch = desc.arch;
    let bits = arch.tmpring_wavesize_hi - 12 + 1;
    let waves = tmpring & 0xfff;
    let wave_bytes =
        u64::from((tmpring >> 12) & ((1u32 << bits) - 1)) * u64::from(arch.tmpring_wavesize_unit);
    let per_xcc = u64::from(waves) * wave_bytes;
    if stride >= per_xcc {
        return Ok(());
    }
    let n = seat.count;
    Err(format!(
        "the kernel dispatch uses scratch on {n} XCCs, whose scratch overlaps: compute_tmpring_size {tmpring:#x} gives each XCC {waves} wave slots of {wave_bytes} bytes ({per_xcc} bytes) from its scratch base, but amd_queue_t.scratch_backing_memory_byte_size (at {stride_at:#x}) is {stride}, so XCC k's scratch starts {stride} bytes after XCC k-1's and waves of different XCCs share private memory (each XCC's CP takes its scratch at scratch_backing_memory_location + xcc * scratch_backing_memory_byte_size); give the queue {n} x {per_xcc} bytes of scratch and set scratch_backing_memory_byte_size to the size per XCC, as ROCR does (main_size / num_xcc)"
    ))
}

/// `PACKET3_PRED_EXEC`.
pub(crate) const PRED_EXEC: u32 = 0x23;

/// The XCC whose command processor runs a queue, on a node of `count` XCCs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XccSeat {
    /// This CP's XCC (a PM4 queue's `pm4_target_xcc`; an AQL queue's packets run on every
    /// XCC, interleaved: `aql_xcc.rs`).
    pub xcc: u32,
    /// XCCs of the node (`num_xcc`).
    pub count: u32,
}

impl XccSeat {
    /// The XCCs a dispatch of a `kind` queue seated here runs on: an AQL queue's kernel
    /// dispatch on every XCC of the node, work-group `g` on XCC `g % count`, each XCC's
    /// scratch `aql_scratch_stride` bytes after the previous one's (`amd_queue_t.
    /// scratch_backing_memory_byte_size`: ROCR `AqlQueue::InitScratchSRD` "report size per
    /// XCC", ROCdbgapi `scratch_memory_region`); a PM4 queue's on its target XCC alone.
    pub(crate) fn split(self, kind: QueueKind, aql_scratch_stride: u64) -> XccSplit {
        match kind {
            QueueKind::Aql if self.count > 1 => XccSplit {
                count: self.count,
                id: 0,
                scratch_stride: aql_scratch_stride,
            },
            QueueKind::Compute => XccSplit {
                id: self.xcc,
                ..XccSplit::ONE
            },
            _ => XccSplit::ONE,
        }
    }
}

impl Default for XccSeat {
    fn default() -> Self {
        Self { xcc: 0, count: 1 }
    }
}

/// Whether `header` is a type-3 PRED_EXEC header.
pub(crate) fn is_pred_exec(header: u32) -> bool {
    header >> 30 == 3 && (header >> 8) & 0xff == PRED_EXEC
}

/// The PRED_EXEC at the start of `d` as XCC `xcc` executes it: the dwords to advance (2
/// when the XCC is selected, 2 + `EXEC_COUNT` when it skips the governed packets), or why it
/// is malformed.
pub(crate) fn pred_exec(d: &[u32], xcc: u32) -> Result<usize, String> {
    let (Some(&header), Some(&dw1)) = (d.first(), d.get(1)) else {
        return Err("PRED_EXEC is cut off (it has one body dword)".into());
    };
    let body = ((header >> 16) & 0x3fff) + 1;
    if body != 1 {
        return Err(format!(
            "PRED_EXEC with {body} body dwords (it has one: DEVICE_SELECT << 24 | EXEC_COUNT)"
        ));
    }
    let mask = dw1 >> 24;
    let count = dw1 & 0x3fff;
    if mask == 0 {
        return Err(format!(
            "PRED_EXEC with DEVICE_SELECT 0 (no XCC executes the {count} dwords after it)"
        ));
    }
    let selected = xcc < 8 && mask & (1 << xcc) != 0;
    // CAST: 14 bits.
    Ok(if selected { 2 } else { 2 + count as usize })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pred_exec_selects_by_xcc_mask() {
        let hdr = (3 << 30) | (PRED_EXEC << 8);
        let pkt = [hdr, (0b101 << 24) | 7];
        assert!(is_pred_exec(hdr));
        assert_eq!(pred_exec(&pkt, 0), Ok(2));
        assert_eq!(pred_exec(&pkt, 1), Ok(9));
        assert_eq!(pred_exec(&pkt, 2), Ok(2));
        assert!(pred_exec(&pkt[..1], 0).is_err());
        assert!(
            pred_exec(&[hdr, 7], 0)
                .unwrap_err()
                .contains("DEVICE_SELECT 0")
        );
        assert!(pred_exec(&[hdr | (1 << 16), 1 << 24, 0], 0).is_err());
    }
}
