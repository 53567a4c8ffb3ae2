//! AQL (HSA Architected Queuing Language) packet encoders and the `amd_queue_t` layout: what a
//! producer writes into an AQL compute queue (`KFD_IOC_QUEUE_TYPE_COMPUTE_AQL`).
//!
//! An AQL queue is a ring of 64-byte packet slots. The producer writes a packet's body (dwords
//! 1..=15) first and its first dword (16-bit header, 16-bit setup) last with a release store:
//! the packet processor waits while a slot's header type is INVALID, so the header is what
//! publishes the packet. After a packet the processor writes the header back to INVALID and
//! advances `amd_queue_t.read_dispatch_id`; the producer may reuse a slot only once
//! `read_dispatch_id` has passed it. Every encoder here returns the packet as 16 dwords with
//! the header in word 0, for the caller to store in that order.
//!
//! Sources: HSA Platform System Architecture Specification 1.2, §2.8-2.9 (packet header bits,
//! packet types, barrier bit, acquire/release fence scopes, barrier-AND semantics); ROCR-Runtime
//! `inc/hsa.h` (`hsa_kernel_dispatch_packet_t`, `hsa_barrier_and_packet_t`, header bit
//! positions), `inc/amd_hsa_queue.h` (`amd_queue_t` field offsets, `AMD_QUEUE_PROPERTIES_*`),
//! `core/runtime/amd_aql_queue.cpp` (`AqlQueue::ExecutePM4`: an `AMD_AQL_FORMAT_PM4_IB`
//! vendor-specific packet whose dwords 1..=4 are a PM4 INDIRECT_BUFFER and dword 5
//! `dw_cnt_remain` = 0xA, and the per-slot PM4 IB buffer it points at).

use crate::addr::GpuVa;
use crate::hsa::DispatchPacket;
use crate::packet::EncodeError;
use crate::pm4;

/// Bytes of one AQL packet (one ring slot).
pub const PACKET_BYTES: u64 = 64;
/// Dwords of one AQL packet.
pub const PACKET_DWORDS: usize = 16;

/// `HSA_PACKET_TYPE_VENDOR_SPECIFIC`.
pub const TYPE_VENDOR_SPECIFIC: u16 = 0;
/// `HSA_PACKET_TYPE_INVALID`: a slot the processor must not process (it waits on it).
pub const TYPE_INVALID: u16 = 1;
/// `HSA_PACKET_TYPE_KERNEL_DISPATCH`.
pub const TYPE_KERNEL_DISPATCH: u16 = 2;
/// `HSA_PACKET_TYPE_BARRIER_AND`.
pub const TYPE_BARRIER_AND: u16 = 3;
/// `HSA_PACKET_TYPE_BARRIER_OR`.
pub const TYPE_BARRIER_OR: u16 = 5;

/// `HSA_PACKET_HEADER_BARRIER`: the packet starts only after every earlier packet completed.
pub const HEADER_BARRIER: u16 = 1 << 8;
/// `HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE` (bits 9..=10).
pub const HEADER_ACQUIRE_SHIFT: u16 = 9;
/// `HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE` (bits 11..=12).
pub const HEADER_RELEASE_SHIFT: u16 = 11;

/// `AMD_AQL_FORMAT_PM4_IB`: the vendor-specific format that runs a PM4 indirect buffer (in
/// the setup half of the first dword).
pub const AMD_AQL_FORMAT_PM4_IB: u16 = 1;
/// `dw_cnt_remain` of an `AMD_AQL_FORMAT_PM4_IB` packet: the slot's dwords after it (10).
pub const PM4_IB_DW_CNT_REMAIN: u32 = 0xA;

/// `hsa_fence_scope_t`: how far an acquire or release fence reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FenceScope {
    /// No fence.
    None = 0,
    /// The agent (this GPU's L2).
    Agent = 1,
    /// The system (the L2 written back / invalidated for the host and other agents).
    System = 2,
}

/// A packet header: type, barrier bit and fence scopes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// `hsa_packet_type_t`.
    pub ty: u16,
    /// The barrier bit.
    pub barrier: bool,
    /// The acquire fence scope.
    pub acquire: FenceScope,
    /// The release fence scope.
    pub release: FenceScope,
}

impl Header {
    /// A header of type `ty` with the barrier bit and system-scope fences on both sides: the
    /// packet runs after everything before it, sees the host's and other agents' writes, and
    /// its own writes are visible to them when it completes.
    #[must_use]
    pub const fn ordered(ty: u16) -> Self {
        Self {
            ty,
            barrier: true,
            acquire: FenceScope::System,
            release: FenceScope::System,
        }
    }

    /// The 16-bit header.
    #[must_use]
    pub const fn raw(self) -> u16 {
        (self.ty & 0xff)
            | if self.barrier { HEADER_BARRIER } else { 0 }
            | ((self.acquire as u16) << HEADER_ACQUIRE_SHIFT)
            | ((self.release as u16) << HEADER_RELEASE_SHIFT)
    }

    /// The first dword of a packet: the header in the low half, `setup` in the high half.
    #[must_use]
    pub const fn word0(self, setup: u16) -> u32 {
        (self.raw() as u32) | ((setup as u32) << 16)
    }

    /// The header type of a packet's first dword.
    #[must_use]
    pub const fn type_of(word0: u32) -> u16 {
        (word0 & 0xff) as u16
    }
}

/// A kernel dispatch packet: `p` with its header (`p.header`/`p.setup` are replaced by `h`
/// and the dimensions `dims` (1..=3) in `setup`).
///
/// # Errors
/// [`EncodeError::ValueTooLarge`] for `dims` outside 1..=3.
pub fn kernel_dispatch(
    h: Header,
    dims: u16,
    p: &DispatchPacket,
) -> Result<[u32; PACKET_DWORDS], EncodeError> {
    if dims == 0 || dims > 3 {
        return Err(EncodeError::ValueTooLarge {
            field: "kernel dispatch dimensions (1..=3)",
            value: dims.into(),
            max: 3,
        });
    }
    let b = p.to_bytes();
    let mut w = [0u32; PACKET_DWORDS];
    for (d, c) in w.iter_mut().zip(b.chunks_exact(4)) {
        *d = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    }
    w[0] = Header {
        ty: TYPE_KERNEL_DISPATCH,
        ..h
    }
    .word0(dims);
    Ok(w)
}

/// An `AMD_AQL_FORMAT_PM4_IB` vendor-specific packet running the `size_dwords` PM4 dwords at
/// `ib` (ROCR `AqlQueue::ExecutePM4`); `completion_signal` (0: none) is decremented when it
/// completes.
///
/// # Errors
/// [`EncodeError::ValueTooLarge`] for an IB larger than INDIRECT_BUFFER holds.
pub fn pm4_ib(
    h: Header,
    ib: GpuVa,
    size_dwords: u32,
    completion_signal: u64,
) -> Result<[u32; PACKET_DWORDS], EncodeError> {
    let mut w = [0u32; PACKET_DWORDS];
    w[0] = Header {
        ty: TYPE_VENDOR_SPECIFIC,
        ..h
    }
    .word0(AMD_AQL_FORMAT_PM4_IB);
    let n = pm4::indirect_buffer(&mut w[1..5], ib, size_dwords)?;
    debug_assert_eq!(n, 4);
    w[5] = PM4_IB_DW_CNT_REMAIN;
    w[14] = completion_signal as u32;
    w[15] = (completion_signal >> 32) as u32;
    Ok(w)
}

/// A barrier-AND packet: completes once every non-zero signal of `deps` (the addresses of
/// `amd_signal_t`s) has value 0; with no dependencies it completes at once (a no-op slot).
/// `completion_signal` (0: none) is decremented when it completes.
#[must_use]
pub fn barrier_and(h: Header, deps: [u64; 5], completion_signal: u64) -> [u32; PACKET_DWORDS] {
    let mut w = [0u32; PACKET_DWORDS];
    w[0] = Header {
        ty: TYPE_BARRIER_AND,
        ..h
    }
    .word0(0);
    for (i, d) in deps.iter().enumerate() {
        w[2 + 2 * i] = *d as u32;
        w[3 + 2 * i] = (*d >> 32) as u32;
    }
    w[14] = completion_signal as u32;
    w[15] = (completion_signal >> 32) as u32;
    w
}

/// `amd_queue_t` (ROCR `amd_hsa_queue.h`): the byte offsets of the fields a producer and the
/// packet processor use. The structure is 256 bytes, 64-byte aligned.
pub mod queue {
    /// Bytes of `amd_queue_t`.
    pub const SIZE: usize = 256;
    /// `hsa_queue_t.type` (u32).
    pub const HSA_QUEUE_TYPE: usize = 0;
    /// `hsa_queue_t.base_address` (u64): the ring.
    pub const BASE_ADDRESS: usize = 8;
    /// `hsa_queue_t.size` (u32): packets in the ring.
    pub const SIZE_PACKETS: usize = 24;
    /// `write_dispatch_id` (u64): the producer's next packet index (the write pointer given
    /// to CREATE_QUEUE).
    pub const WRITE_DISPATCH_ID: usize = 56;
    /// `max_cu_id` (u32).
    pub const MAX_CU_ID: usize = 68;
    /// `max_wave_id` (u32).
    pub const MAX_WAVE_ID: usize = 72;
    /// `read_dispatch_id` (u64): packets the processor has retired (the read pointer given to
    /// CREATE_QUEUE).
    pub const READ_DISPATCH_ID: usize = 128;
    /// `read_dispatch_id_field_base_byte_offset` (u32): how far `read_dispatch_id` is from
    /// the structure's start (128), so the processor finds the structure.
    pub const READ_DISPATCH_ID_FIELD_BASE_BYTE_OFFSET: usize = 136;
    /// `compute_tmpring_size` (u32): COMPUTE_TMPRING_SIZE for the queue's dispatches.
    pub const COMPUTE_TMPRING_SIZE: usize = 140;
    /// `scratch_resource_descriptor` ([u32; 4]): the private segment buffer V#.
    pub const SCRATCH_RESOURCE_DESCRIPTOR: usize = 144;
    /// `scratch_backing_memory_location` (u64): the scratch base.
    pub const SCRATCH_BACKING_MEMORY_LOCATION: usize = 160;
    /// `scratch_backing_memory_byte_size` (u64).
    pub const SCRATCH_BACKING_MEMORY_BYTE_SIZE: usize = 168;
    /// `scratch_wave64_lane_byte_size` (u32): private bytes each lane may use.
    pub const SCRATCH_WAVE64_LANE_BYTE_SIZE: usize = 176;
    /// `queue_properties` (u32).
    pub const QUEUE_PROPERTIES: usize = 180;
    /// `AMD_QUEUE_PROPERTIES_IS_PTR64`.
    pub const PROPERTIES_IS_PTR64: u32 = 1 << 1;
    /// `AMD_QUEUE_PROPERTIES_ENABLE_PROFILING`: the processor stamps completion signals.
    pub const PROPERTIES_ENABLE_PROFILING: u32 = 1 << 3;
}

/// What [`amd_queue`] writes into an `amd_queue_t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AmdQueueInit {
    /// The ring's GPU address.
    pub ring: GpuVa,
    /// Packets in the ring (a power of two).
    pub packets: u32,
    /// `max_cu_id`.
    pub max_cu_id: u32,
    /// `max_wave_id`.
    pub max_wave_id: u32,
    /// COMPUTE_TMPRING_SIZE.
    pub tmpring_size: u32,
    /// The scratch V# the processor loads for kernels that take a private segment buffer.
    pub scratch_rsrc: [u32; 4],
    /// Scratch base address.
    pub scratch_base: GpuVa,
    /// Scratch bytes.
    pub scratch_len: u64,
    /// Private bytes per lane the scratch holds.
    pub lane_bytes: u32,
    /// `queue_properties`.
    pub properties: u32,
}

/// Writes the `amd_queue_t` described by `q` into `buf` (its first [`queue::SIZE`] bytes;
/// the rest of them zero): both dispatch ids 0.
///
/// # Errors
/// [`EncodeError::BufferTooSmall`] for a buffer under 256 bytes.
pub fn amd_queue(buf: &mut [u8], q: &AmdQueueInit) -> Result<(), EncodeError> {
    let Some(b) = buf.get_mut(..queue::SIZE) else {
        return Err(EncodeError::BufferTooSmall {
            needed: queue::SIZE / 4,
            available: buf.len() / 4,
        });
    };
    b.fill(0);
    let mut put = |at: usize, bytes: &[u8]| {
        if let Some(d) = b.get_mut(at..at + bytes.len()) {
            d.copy_from_slice(bytes);
        }
    };
    // HSA_QUEUE_TYPE_SINGLE = 1 (one producer: the driver, under its lock).
    put(queue::HSA_QUEUE_TYPE, &1u32.to_le_bytes());
    put(queue::BASE_ADDRESS, &q.ring.get().to_le_bytes());
    put(queue::SIZE_PACKETS, &q.packets.to_le_bytes());
    put(queue::MAX_CU_ID, &q.max_cu_id.to_le_bytes());
    put(queue::MAX_WAVE_ID, &q.max_wave_id.to_le_bytes());
    // CAST: 128 fits u32.
    put(
        queue::READ_DISPATCH_ID_FIELD_BASE_BYTE_OFFSET,
        &(queue::READ_DISPATCH_ID as u32).to_le_bytes(),
    );
    put(queue::COMPUTE_TMPRING_SIZE, &q.tmpring_size.to_le_bytes());
    for (i, w) in q.scratch_rsrc.iter().enumerate() {
        put(queue::SCRATCH_RESOURCE_DESCRIPTOR + 4 * i, &w.to_le_bytes());
    }
    put(
        queue::SCRATCH_BACKING_MEMORY_LOCATION,
        &q.scratch_base.get().to_le_bytes(),
    );
    put(
        queue::SCRATCH_BACKING_MEMORY_BYTE_SIZE,
        &q.scratch_len.to_le_bytes(),
    );
    put(
        queue::SCRATCH_WAVE64_LANE_BYTE_SIZE,
        &q.lane_bytes.to_le_bytes(),
    );
    put(queue::QUEUE_PROPERTIES, &q.properties.to_le_bytes());
    Ok(())
}

#[cfg(test)]
mod tests;
