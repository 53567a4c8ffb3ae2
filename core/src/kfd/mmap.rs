//! `/dev/kfd` mmap offsets: `type << 62 | gpu_id << 46 | value`, and the doorbell-slice
//! helpers.

use super::{KFD_DOORBELL_SIZE, KFD_DOORBELL_SLICE_SIZE};

/// `KFD_MMAP_TYPE_SHIFT`.
pub const KFD_MMAP_TYPE_SHIFT: u32 = 62;
/// `KFD_MMAP_TYPE_MASK`.
pub const KFD_MMAP_TYPE_MASK: u64 = 0x3 << KFD_MMAP_TYPE_SHIFT;
/// `KFD_MMAP_TYPE_DOORBELL`.
pub const KFD_MMAP_TYPE_DOORBELL: u64 = 0x3 << KFD_MMAP_TYPE_SHIFT;
/// `KFD_MMAP_TYPE_EVENTS`.
pub const KFD_MMAP_TYPE_EVENTS: u64 = 0x2 << KFD_MMAP_TYPE_SHIFT;
/// `KFD_MMAP_TYPE_RESERVED_MEM` (CWSR TBA/TMA).
pub const KFD_MMAP_TYPE_RESERVED_MEM: u64 = 0x1 << KFD_MMAP_TYPE_SHIFT;
/// `KFD_MMAP_TYPE_MMIO`.
pub const KFD_MMAP_TYPE_MMIO: u64 = 0x0;
/// `KFD_MMAP_GPU_ID_SHIFT`.
pub const KFD_MMAP_GPU_ID_SHIFT: u32 = 46;
/// `KFD_MMAP_GPU_ID_MASK` (16-bit gpu_id).
pub const KFD_MMAP_GPU_ID_MASK: u64 = 0xFFFF << KFD_MMAP_GPU_ID_SHIFT;
/// Mask of the value bits below the gpu_id.
pub const KFD_MMAP_VALUE_MASK: u64 = (1 << KFD_MMAP_GPU_ID_SHIFT) - 1;

/// The type of a `/dev/kfd` mmap offset (bits 63:62).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KfdMmapType {
    /// 0: the MMIO (HDP flush) remap page.
    Mmio,
    /// 1: CWSR trap handler (TBA/TMA) memory.
    ReservedMem,
    /// 2: the event page.
    Events,
    /// 3: the process doorbell slice.
    Doorbell,
}

impl KfdMmapType {
    /// The type's bits, in place (bits 63:62).
    #[must_use]
    pub const fn bits(self) -> u64 {
        match self {
            Self::Mmio => KFD_MMAP_TYPE_MMIO,
            Self::ReservedMem => KFD_MMAP_TYPE_RESERVED_MEM,
            Self::Events => KFD_MMAP_TYPE_EVENTS,
            Self::Doorbell => KFD_MMAP_TYPE_DOORBELL,
        }
    }
}

/// A decoded `/dev/kfd` mmap offset: `type << 62 | gpu_id << 46 | value`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KfdMmapOffset {
    /// What is being mapped.
    pub ty: KfdMmapType,
    /// The GPU (16-bit hash; 0 for none).
    pub gpu_id: u32,
    /// The low 46 bits (doorbell byte offset within the slice, ...).
    pub value: u64,
}

impl KfdMmapOffset {
    /// Encodes the offset. `gpu_id` is masked to 16 bits and `value` to 46 bits (what the kernel
    /// does with `KFD_MMAP_GPU_ID()`).
    #[must_use]
    pub const fn encode(self) -> u64 {
        self.ty.bits()
            | ((self.gpu_id as u64) << KFD_MMAP_GPU_ID_SHIFT) & KFD_MMAP_GPU_ID_MASK
            | (self.value & KFD_MMAP_VALUE_MASK)
    }

    /// Decodes an offset (every u64 is a valid offset).
    #[must_use]
    pub const fn decode(offset: u64) -> Self {
        let ty = match offset >> KFD_MMAP_TYPE_SHIFT {
            3 => KfdMmapType::Doorbell,
            2 => KfdMmapType::Events,
            1 => KfdMmapType::ReservedMem,
            _ => KfdMmapType::Mmio,
        };
        // CAST: masked to 16 bits.
        let gpu_id = ((offset & KFD_MMAP_GPU_ID_MASK) >> KFD_MMAP_GPU_ID_SHIFT) as u32;
        Self {
            ty,
            gpu_id,
            value: offset & KFD_MMAP_VALUE_MASK,
        }
    }

    /// The `doorbell_offset` CREATE_QUEUE returns on SOC15+: DOORBELL type, `gpu_id`, and the
    /// byte offset `slot * 8` inside the process slice.
    #[must_use]
    pub const fn doorbell(gpu_id: u32, slot: u32) -> Self {
        Self {
            ty: KfdMmapType::Doorbell,
            gpu_id,
            value: slot as u64 * KFD_DOORBELL_SIZE,
        }
    }
}

/// The offset to mmap the doorbell slice containing `doorbell_offset` (clears the in-slice bits,
/// `doorbell_offset & !0x1fff`).
#[must_use]
pub const fn doorbell_slice_offset(doorbell_offset: u64) -> u64 {
    doorbell_offset & !(KFD_DOORBELL_SLICE_SIZE - 1)
}

/// The byte offset of a queue's doorbell inside its mapped slice (`doorbell_offset & 0x1fff`).
#[must_use]
pub const fn doorbell_in_slice(doorbell_offset: u64) -> u64 {
    doorbell_offset & (KFD_DOORBELL_SLICE_SIZE - 1)
}

#[cfg(test)]
mod tests {
    use super::super::*;

    #[test]
    fn every_type_round_trips_with_the_kernels_bits() {
        // kfd_priv.h: KFD_MMAP_TYPE_{DOORBELL,EVENTS,RESERVED_MEM,MMIO} = {3,2,1,0} << 62.
        let types = [
            (KfdMmapType::Doorbell, 3u64),
            (KfdMmapType::Events, 2),
            (KfdMmapType::ReservedMem, 1),
            (KfdMmapType::Mmio, 0),
        ];
        assert_eq!(KFD_MMAP_TYPE_MASK, 3 << 62);
        assert_eq!(KFD_MMAP_GPU_ID_MASK, 0xFFFF << 46);
        for (ty, bits) in types {
            assert_eq!(ty.bits(), bits << 62, "{ty:?}");
            assert_eq!(ty.bits() & KFD_MMAP_TYPE_MASK, ty.bits(), "{ty:?}");
            let o = KfdMmapOffset {
                ty,
                gpu_id: 0x8001,
                value: 0x1234_5678,
            };
            assert_eq!(o.encode(), (bits << 62) | (0x8001 << 46) | 0x1234_5678);
            assert_eq!(KfdMmapOffset::decode(o.encode()), o);
        }
    }

    #[test]
    fn mmap_offsets() {
        let db = KfdMmapOffset::doorbell(0xBEEF, 3);
        assert_eq!(db.encode(), (3 << 62) | (0xBEEF << 46) | 24);
        assert_eq!(KfdMmapOffset::decode(db.encode()), db);
        assert_eq!(
            doorbell_slice_offset(db.encode()),
            (3 << 62) | (0xBEEF << 46)
        );
        assert_eq!(doorbell_in_slice(db.encode()), 24);
        let ev = KfdMmapOffset {
            ty: KfdMmapType::Events,
            gpu_id: 0x1_2345, // masked to 16 bits
            value: 1 << 50,   // masked to 46 bits
        };
        assert_eq!(ev.encode(), (2 << 62) | (0x2345 << 46));
        assert_eq!(
            KfdMmapOffset::decode(0),
            KfdMmapOffset {
                ty: KfdMmapType::Mmio,
                gpu_id: 0,
                value: 0
            }
        );
        assert_eq!(KFD_EVENT_PAGE_SIZE, 0x8000);
        assert_eq!(KFD_DOORBELLS_PER_SLICE, 1024);
    }
}
