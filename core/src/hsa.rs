//! HSA layouts the GPU reads: `hsa_kernel_dispatch_packet_t` (64 B) and the code-object v3+
//! `kernel_descriptor_t` (64 B), with typed views of COMPUTE_PGM_RSRC1/2/3 and
//! `kernel_code_properties`.
//!
//! Sources: ROCR `inc/hsa.h`, `loader/AMDHSAKernelDescriptor.h`; LLVM `AMDGPUUsage` (the
//! kernel-descriptor tables).

use bytemuck::{Pod, Zeroable};
use core::mem::{offset_of, size_of};

/// `hsa_packet_type_t::HSA_PACKET_TYPE_KERNEL_DISPATCH`.
pub const PACKET_TYPE_KERNEL_DISPATCH: u16 = 2;

/// `hsa_kernel_dispatch_packet_t`: what a kernel that asks for the dispatch pointer
/// (ENABLE_SGPR_DISPATCH_PTR) reads through its first user SGPRs.
///
/// The type has its fields' natural alignment (8), not the 64 bytes an AQL ring slot has: where
/// the packet lives in GPU memory is the writer's business (`hcq` places it 64-byte aligned in
/// kernargs), and a 64-byte-aligned Rust type would force every stack frame that carries one by
/// value (a patch result, say) to realign.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct DispatchPacket {
    /// Packet header (type, barrier, fence scopes).
    pub header: u16,
    /// Bits 0-1: number of grid dimensions.
    pub setup: u16,
    /// Work-group size, X (work-items).
    pub workgroup_size_x: u16,
    /// Work-group size, Y.
    pub workgroup_size_y: u16,
    /// Work-group size, Z.
    pub workgroup_size_z: u16,
    /// Reserved, zero.
    pub reserved0: u16,
    /// Grid size, X (work-items, not work-groups).
    pub grid_size_x: u32,
    /// Grid size, Y.
    pub grid_size_y: u32,
    /// Grid size, Z.
    pub grid_size_z: u32,
    /// Private (scratch) bytes per work-item.
    pub private_segment_size: u32,
    /// Group (LDS) bytes per work-group.
    pub group_segment_size: u32,
    /// GPU address of the kernel descriptor.
    pub kernel_object: u64,
    /// GPU address of the kernel arguments.
    pub kernarg_address: u64,
    /// Reserved, zero.
    pub reserved2: u64,
    /// GPU address of an `amd_signal_t` to signal on completion (0: none).
    pub completion_signal: u64,
}

const _: () = assert!(size_of::<DispatchPacket>() == 64);
const _: () = assert!(core::mem::align_of::<DispatchPacket>() == 8);
const _: () = assert!(offset_of!(DispatchPacket, setup) == 2);
const _: () = assert!(offset_of!(DispatchPacket, workgroup_size_x) == 4);
const _: () = assert!(offset_of!(DispatchPacket, workgroup_size_z) == 8);
const _: () = assert!(offset_of!(DispatchPacket, grid_size_x) == 12);
const _: () = assert!(offset_of!(DispatchPacket, grid_size_z) == 20);
const _: () = assert!(offset_of!(DispatchPacket, private_segment_size) == 24);
const _: () = assert!(offset_of!(DispatchPacket, group_segment_size) == 28);
const _: () = assert!(offset_of!(DispatchPacket, kernel_object) == 32);
const _: () = assert!(offset_of!(DispatchPacket, kernarg_address) == 40);
const _: () = assert!(offset_of!(DispatchPacket, reserved2) == 48);
const _: () = assert!(offset_of!(DispatchPacket, completion_signal) == 56);

impl DispatchPacket {
    /// Size in bytes (64).
    pub const SIZE: usize = size_of::<Self>();

    /// The packet as 64 bytes, little endian (what the GPU reads).
    #[must_use]
    pub fn to_bytes(&self) -> [u8; 64] {
        let mut out = [0u8; 64];
        out.copy_from_slice(bytemuck::bytes_of(self));
        out
    }

    /// The packet from 64 bytes.
    #[must_use]
    pub fn from_bytes(bytes: &[u8; 64]) -> Self {
        bytemuck::pod_read_unaligned(bytes)
    }
}

bitfield! {
    /// COMPUTE_PGM_RSRC1 (kernel descriptor offset 48).
    pub struct PgmRsrc1(u32) {
        /// Granulated VGPR count.
        GRANULATED_WORKITEM_VGPR_COUNT: 5:0,
        /// Granulated SGPR count (gfx9; reserved on gfx10+).
        GRANULATED_WAVEFRONT_SGPR_COUNT: 9:6,
        /// Wave priority.
        PRIORITY: 11:10,
        /// FP32 round mode.
        FLOAT_ROUND_MODE_32: 13:12,
        /// FP16/64 round mode.
        FLOAT_ROUND_MODE_16_64: 15:14,
        /// FP32 denorm mode.
        FLOAT_DENORM_MODE_32: 17:16,
        /// FP16/64 denorm mode.
        FLOAT_DENORM_MODE_16_64: 19:18,
        /// Privileged.
        PRIV: 20:20,
        /// DX10 clamp.
        ENABLE_DX10_CLAMP: 21:21,
        /// Debug mode.
        DEBUG_MODE: 22:22,
        /// IEEE mode.
        ENABLE_IEEE_MODE: 23:23,
        /// Bulky.
        BULKY: 24:24,
        /// CDBG user.
        CDBG_USER: 25:25,
        /// FP16 overflow.
        FP16_OVFL: 26:26,
        /// Work-group-processor mode (gfx10+).
        WGP_MODE: 29:29,
        /// Memory ordered (gfx10+).
        MEM_ORDERED: 30:30,
        /// Forward progress (gfx10+).
        FWD_PROGRESS: 31:31,
    }
}

bitfield! {
    /// COMPUTE_PGM_RSRC2 (kernel descriptor offset 52).
    pub struct PgmRsrc2(u32) {
        /// Private segment (scratch) wave offset SGPR enabled.
        ENABLE_PRIVATE_SEGMENT: 0:0,
        /// Number of user SGPRs.
        USER_SGPR_COUNT: 5:1,
        /// Trap handler present.
        ENABLE_TRAP_HANDLER: 6:6,
        /// Work-group id X SGPR.
        ENABLE_SGPR_WORKGROUP_ID_X: 7:7,
        /// Work-group id Y SGPR.
        ENABLE_SGPR_WORKGROUP_ID_Y: 8:8,
        /// Work-group id Z SGPR.
        ENABLE_SGPR_WORKGROUP_ID_Z: 9:9,
        /// Work-group info SGPR.
        ENABLE_SGPR_WORKGROUP_INFO: 10:10,
        /// Work-item id VGPRs (0: X, 1: X Y, 2: X Y Z).
        ENABLE_VGPR_WORKITEM_ID: 12:11,
        /// Address-watch exceptions.
        ENABLE_EXCEPTION_ADDRESS_WATCH: 13:13,
        /// Memory-violation exceptions.
        ENABLE_EXCEPTION_MEMORY: 14:14,
        /// LDS size in granules (set by the runtime from group_segment_size).
        GRANULATED_LDS_SIZE: 23:15,
        /// FP exception enables.
        ENABLE_EXCEPTION_FP: 30:24,
    }
}

bitfield! {
    /// COMPUTE_PGM_RSRC3 (kernel descriptor offset 44) as gfx11 lays it out. gfx10 has only
    /// SHARED_VGPR_COUNT (Mesa `gfx10.json`, `gfx103.json`); gfx12 keeps SHARED_VGPR_COUNT and
    /// IMAGE_OP, widens INST_PREF_SIZE and adds GLG_EN (bit 13, `gc_12_0_0_sh_mask.h`).
    pub struct PgmRsrc3(u32) {
        /// Shared VGPR count (gfx10, gfx11, gfx12).
        SHARED_VGPR_COUNT: 3:0,
        /// Instruction prefetch size, gfx11's 6-bit field (Mesa `gfx11.json`: bits 9:4). On
        /// gfx12 it is 8 bits wide, 11:4 (`gc_12_0_0_sh_mask.h`), taking the two bits that are
        /// TRAP_ON_START/TRAP_ON_END here; this constant reads only its low 6 bits there.
        INST_PREF_SIZE: 9:4,
        /// Trap on wave start (gfx11; on gfx12 bit 10 of INST_PREF_SIZE).
        TRAP_ON_START: 10:10,
        /// Trap on wave end (gfx11; on gfx12 bit 11 of INST_PREF_SIZE).
        TRAP_ON_END: 11:11,
        /// Image op.
        IMAGE_OP: 31:31,
    }
}

bitfield! {
    /// COMPUTE_PGM_RSRC3 on gfx90a and gfx940..gfx942 (kernel descriptor offset 44; CDNA2/CDNA3
    /// layout, Mesa's `gfx940.json`, Linux `gc_9_4_2_sh_mask.h`/`gc_9_4_3_sh_mask.h`). PM4
    /// dispatch never reads the descriptor, so the runtime must program this register for
    /// every kernel that uses AGPRs (ROCR's PM4 blit kernels do the same).
    pub struct PgmRsrc3Gfx90a(u32) {
        /// Where the AGPRs begin in the unified VGPR file, in units of 4 VGPRs minus one:
        /// AGPR `a0` is VGPR `(ACCUM_OFFSET + 1) * 4` (LLVM `.amdhsa_accum_offset`, 4..=256).
        ACCUM_OFFSET: 5:0,
        /// Trap on wave start.
        TRAP_ON_START: 10:10,
        /// Trap on wave end.
        TRAP_ON_END: 11:11,
        /// Work-group split: the waves of a work-group may run on different CUs (LDS then
        /// unavailable; LLVM `.amdhsa_tg_split`).
        TG_SPLIT: 16:16,
    }
}

impl PgmRsrc3Gfx90a {
    /// The first VGPR the AGPRs occupy: `(ACCUM_OFFSET + 1) * 4`.
    #[must_use]
    pub const fn accum_offset_vgprs(self) -> u32 {
        (self.get(Self::ACCUM_OFFSET) + 1) * 4
    }
}

bitfield! {
    /// `kernel_code_properties` (kernel descriptor offset 56). User SGPRs are allocated in bit
    /// order 0..=6.
    pub struct KernelCodeProperties(u16) {
        /// Private segment buffer: 4 user SGPRs.
        ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER: 0:0,
        /// Dispatch pointer: 2 user SGPRs.
        ENABLE_SGPR_DISPATCH_PTR: 1:1,
        /// Queue pointer: 2 user SGPRs.
        ENABLE_SGPR_QUEUE_PTR: 2:2,
        /// Kernarg segment pointer: 2 user SGPRs.
        ENABLE_SGPR_KERNARG_SEGMENT_PTR: 3:3,
        /// Dispatch id: 2 user SGPRs.
        ENABLE_SGPR_DISPATCH_ID: 4:4,
        /// Flat scratch init: 2 user SGPRs.
        ENABLE_SGPR_FLAT_SCRATCH_INIT: 5:5,
        /// Private segment size: 1 user SGPR.
        ENABLE_SGPR_PRIVATE_SEGMENT_SIZE: 6:6,
        /// Wave32 (gfx10+).
        ENABLE_WAVEFRONT_SIZE32: 10:10,
        /// Uses a dynamic stack.
        USES_DYNAMIC_STACK: 11:11,
    }
}

impl KernelCodeProperties {
    /// User SGPRs the enabled inputs take, in allocation order (private segment buffer 4,
    /// dispatch ptr 2, queue ptr 2, kernarg ptr 2, dispatch id 2, flat scratch init 2,
    /// private segment size 1).
    #[must_use]
    pub const fn user_sgpr_count(self) -> u32 {
        const COST: [(crate::bitfield::Field<KernelCodeProperties>, u32); 7] = [
            (KernelCodeProperties::ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER, 4),
            (KernelCodeProperties::ENABLE_SGPR_DISPATCH_PTR, 2),
            (KernelCodeProperties::ENABLE_SGPR_QUEUE_PTR, 2),
            (KernelCodeProperties::ENABLE_SGPR_KERNARG_SEGMENT_PTR, 2),
            (KernelCodeProperties::ENABLE_SGPR_DISPATCH_ID, 2),
            (KernelCodeProperties::ENABLE_SGPR_FLAT_SCRATCH_INIT, 2),
            (KernelCodeProperties::ENABLE_SGPR_PRIVATE_SEGMENT_SIZE, 1),
        ];
        let mut n = 0;
        let mut i = 0;
        while i < COST.len() {
            if self.get(COST[i].0) != 0 {
                n += COST[i].1;
            }
            i += 1;
        }
        n
    }
}

/// Code-object v3+ `kernel_descriptor_t`: 64 bytes at the `<name>.kd` symbol.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct KernelDescriptor {
    /// LDS bytes the kernel declares statically.
    pub group_segment_fixed_size: u32,
    /// Scratch bytes per work-item declared statically.
    pub private_segment_fixed_size: u32,
    /// Size of the kernel-argument segment in bytes.
    pub kernarg_size: u32,
    /// Reserved.
    pub reserved0: [u8; 4],
    /// Byte offset from the descriptor to the kernel's first instruction (256-byte aligned).
    pub kernel_code_entry_byte_offset: i64,
    /// Reserved.
    pub reserved1: [u8; 20],
    /// COMPUTE_PGM_RSRC3 (gfx90a, gfx10+).
    pub compute_pgm_rsrc3: u32,
    /// COMPUTE_PGM_RSRC1.
    pub compute_pgm_rsrc1: u32,
    /// COMPUTE_PGM_RSRC2.
    pub compute_pgm_rsrc2: u32,
    /// `kernel_code_properties` bits.
    pub kernel_code_properties: u16,
    /// Kernarg preload (newer LLVM), else reserved.
    pub kernarg_preload: u16,
    /// Reserved.
    pub reserved3: [u8; 4],
}

const _: () = assert!(size_of::<KernelDescriptor>() == 64);
const _: () = assert!(offset_of!(KernelDescriptor, group_segment_fixed_size) == 0);
const _: () = assert!(offset_of!(KernelDescriptor, private_segment_fixed_size) == 4);
const _: () = assert!(offset_of!(KernelDescriptor, kernarg_size) == 8);
const _: () = assert!(offset_of!(KernelDescriptor, kernel_code_entry_byte_offset) == 16);
const _: () = assert!(offset_of!(KernelDescriptor, compute_pgm_rsrc3) == 44);
const _: () = assert!(offset_of!(KernelDescriptor, compute_pgm_rsrc1) == 48);
const _: () = assert!(offset_of!(KernelDescriptor, compute_pgm_rsrc2) == 52);
const _: () = assert!(offset_of!(KernelDescriptor, kernel_code_properties) == 56);
const _: () = assert!(offset_of!(KernelDescriptor, kernarg_preload) == 58);

impl KernelDescriptor {
    /// Size in bytes (64).
    pub const SIZE: usize = size_of::<Self>();

    /// Reads a descriptor from the first 64 bytes of `bytes`; `None` when shorter.
    #[must_use]
    pub fn read(bytes: &[u8]) -> Option<Self> {
        bytes.get(..Self::SIZE).map(bytemuck::pod_read_unaligned)
    }

    /// RSRC1 as a typed word.
    #[must_use]
    pub const fn rsrc1(&self) -> PgmRsrc1 {
        PgmRsrc1(self.compute_pgm_rsrc1)
    }

    /// RSRC2 as a typed word.
    #[must_use]
    pub const fn rsrc2(&self) -> PgmRsrc2 {
        PgmRsrc2(self.compute_pgm_rsrc2)
    }

    /// RSRC3 as a typed word.
    #[must_use]
    pub const fn rsrc3(&self) -> PgmRsrc3 {
        PgmRsrc3(self.compute_pgm_rsrc3)
    }

    /// RSRC3 in the gfx90a/gfx940 layout (ACCUM_OFFSET, TG_SPLIT).
    #[must_use]
    pub const fn rsrc3_gfx90a(&self) -> PgmRsrc3Gfx90a {
        PgmRsrc3Gfx90a(self.compute_pgm_rsrc3)
    }

    /// `kernel_code_properties` as a typed word.
    #[must_use]
    pub const fn properties(&self) -> KernelCodeProperties {
        KernelCodeProperties(self.kernel_code_properties)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agprs_start_after_accum_offset_plus_one_quads() {
        let r = |v| PgmRsrc3Gfx90a::zeroed().with(PgmRsrc3Gfx90a::ACCUM_OFFSET, v);
        assert_eq!(r(0).accum_offset_vgprs(), 4);
        assert_eq!(r(3).accum_offset_vgprs(), 16);
        assert_eq!(r(63).accum_offset_vgprs(), 256);
    }

    #[test]
    fn descriptors_read_from_the_first_64_bytes() {
        let mut b = [0u8; 70];
        b[0..4].copy_from_slice(&256u32.to_le_bytes()); // group_segment_fixed_size
        b[8..12].copy_from_slice(&28u32.to_le_bytes()); // kernarg_size
        b[16..24].copy_from_slice(&0x1100i64.to_le_bytes());
        b[48..52].copy_from_slice(&0x6000_0041u32.to_le_bytes()); // rsrc1
        b[56..58].copy_from_slice(&0x0408u16.to_le_bytes());
        b[64] = 0xff; // past the descriptor
        let d = KernelDescriptor::read(&b).unwrap();
        assert_eq!(d.group_segment_fixed_size, 256);
        assert_eq!(d.kernarg_size, 28);
        assert_eq!(d.kernel_code_entry_byte_offset, 0x1100);
        assert_eq!(d.compute_pgm_rsrc1, 0x6000_0041);
        assert_eq!(d.kernel_code_properties, 0x0408);
        assert_eq!(KernelDescriptor::read(&b[..64]), Some(d));
        assert_eq!(KernelDescriptor::read(&b[..63]), None);
        assert_eq!(KernelDescriptor::read(&[]), None);
    }

    #[test]
    fn user_sgprs_follow_allocation_order() {
        let p = KernelCodeProperties::zeroed()
            .with_flag(KernelCodeProperties::ENABLE_SGPR_DISPATCH_PTR, true)
            .with_flag(KernelCodeProperties::ENABLE_SGPR_KERNARG_SEGMENT_PTR, true);
        assert_eq!(p.user_sgpr_count(), 4);
        assert_eq!(p.raw(), 0b1010);
    }

    #[test]
    fn dispatch_packet_bytes_round_trip() {
        let p = DispatchPacket {
            header: 2,
            grid_size_x: 7,
            kernarg_address: 0x1234_5678_9abc,
            ..DispatchPacket::zeroed()
        };
        let b = p.to_bytes();
        assert_eq!(b[12], 7);
        assert_eq!(DispatchPacket::from_bytes(&b), p);
    }
}
