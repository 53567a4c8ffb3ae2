//! The buffer resource descriptor (V#) words and the per-family scratch V# formats: hardware
//! words and constants only. They depend on nothing else in core, so `arch`'s family tables
//! can hold the formats while `rsrc` (which builds a descriptor for an [`ArchInfo`]) depends
//! on `arch`; the public paths are `rsrc`'s, which re-exports everything here.
//!
//! [`ArchInfo`]: crate::arch::ArchInfo

bitfield! {
    /// `SQ_BUF_RSRC_WORD1` on gfx9 and gfx10 (gfx11+ moves `SWIZZLE_ENABLE` to bits 31:30).
    pub struct BufRsrcWord1(u32) {
        /// Bits 47:32 of the base address.
        BASE_ADDRESS_HI: 15:0,
        /// Stride in bytes (0: records are bytes).
        STRIDE: 29:16,
        /// Cache swizzle.
        CACHE_SWIZZLE: 30:30,
        /// Swizzled (interleaved per lane) addressing, what scratch uses.
        SWIZZLE_ENABLE: 31:31,
    }
}

bitfield! {
    /// `SQ_BUF_RSRC_WORD3` on gfx9 (gfx900..gfx950).
    pub struct BufRsrcWord3Gfx9(u32) {
        /// Destination select X (`SQ_SEL_X` = 4).
        DST_SEL_X: 2:0,
        /// Destination select Y (`SQ_SEL_Y` = 5).
        DST_SEL_Y: 5:3,
        /// Destination select Z (`SQ_SEL_Z` = 6).
        DST_SEL_Z: 8:6,
        /// Destination select W (`SQ_SEL_W` = 7).
        DST_SEL_W: 11:9,
        /// Numeric format (`BUF_NUM_FORMAT_UINT` = 4).
        NUM_FORMAT: 14:12,
        /// Data format (`BUF_DATA_FORMAT_32` = 4; 0 is invalid: accesses do nothing).
        DATA_FORMAT: 18:15,
        /// Swizzle element size (0: 2, 1: 4, 2: 8, 3: 16 bytes).
        ELEMENT_SIZE: 20:19,
        /// Swizzle index stride (0: 8, 1: 16, 2: 32, 3: 64 lanes).
        INDEX_STRIDE: 22:21,
        /// Add the lane id to the index (what per-lane scratch needs).
        ADD_TID_ENABLE: 23:23,
        /// Address translation through the IOMMU (APUs).
        ATC: 24:24,
        /// Hash enable.
        HASH_ENABLE: 25:25,
        /// Heap.
        HEAP: 26:26,
        /// Memory type.
        MTYPE: 29:27,
        /// Resource type (`SQ_RSRC_BUF` = 0).
        TYPE: 31:30,
    }
}

bitfield! {
    /// `SQ_BUF_RSRC_WORD3` on gfx10 (`SQ_BUF_RSRC_WORD3_GFX10`).
    pub struct BufRsrcWord3Gfx10(u32) {
        /// Destination select X.
        DST_SEL_X: 2:0,
        /// Destination select Y.
        DST_SEL_Y: 5:3,
        /// Destination select Z.
        DST_SEL_Z: 8:6,
        /// Destination select W.
        DST_SEL_W: 11:9,
        /// Unified format (`BUF_FORMAT_32_UINT` = 20; 0 is invalid).
        FORMAT: 18:12,
        /// Swizzle index stride (0: 8, 1: 16, 2: 32, 3: 64 lanes).
        INDEX_STRIDE: 22:21,
        /// Add the lane id to the index.
        ADD_TID_ENABLE: 23:23,
        /// Resource level (1).
        RESOURCE_LEVEL: 24:24,
        /// Out-of-bounds check mode (2: none in swizzle mode).
        OOB_SELECT: 29:28,
        /// Resource type (`SQ_RSRC_BUF` = 0).
        TYPE: 31:30,
    }
}

/// `SQ_SEL_X` .. `SQ_SEL_W` (destination selects of an identity swizzle).
const SQ_SEL_XYZW: [u32; 4] = [4, 5, 6, 7];
/// `BUF_NUM_FORMAT_UINT` (gfx9).
pub const BUF_NUM_FORMAT_UINT: u32 = 4;
/// `BUF_DATA_FORMAT_32` (gfx9).
pub const BUF_DATA_FORMAT_32: u32 = 4;
/// `BUF_FORMAT_32_UINT` (gfx10).
pub const BUF_FORMAT_32_UINT: u32 = 20;
/// `INDEX_STRIDE` for 64 lanes.
pub const INDEX_STRIDE_64: u32 = 3;
/// `INDEX_STRIDE` for 32 lanes.
pub const INDEX_STRIDE_32: u32 = 2;

/// How a family builds the scratch V#: the words that do not depend on the scratch address,
/// size or wave size. Part of [`ArchInfo`](crate::arch::ArchInfo) (`None` there on architected-flat-scratch families).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScratchRsrcFormat {
    /// Word 1 apart from `BASE_ADDRESS_HI`: `SWIZZLE_ENABLE`.
    pub word1: u32,
    /// Word 3 with `INDEX_STRIDE` (bits 22:21 on gfx9 and gfx10) clear.
    pub word3: u32,
}

/// gfx9 (ROCR `FillBufRsrcWord1` / `FillBufRsrcWord3`, dGPU: `ATC = 0`).
pub const SCRATCH_GFX9: ScratchRsrcFormat = ScratchRsrcFormat {
    word1: BufRsrcWord1::zeroed()
        .with(BufRsrcWord1::SWIZZLE_ENABLE, 1)
        .raw(),
    word3: BufRsrcWord3Gfx9::zeroed()
        .with(BufRsrcWord3Gfx9::DST_SEL_X, SQ_SEL_XYZW[0])
        .with(BufRsrcWord3Gfx9::DST_SEL_Y, SQ_SEL_XYZW[1])
        .with(BufRsrcWord3Gfx9::DST_SEL_Z, SQ_SEL_XYZW[2])
        .with(BufRsrcWord3Gfx9::DST_SEL_W, SQ_SEL_XYZW[3])
        .with(BufRsrcWord3Gfx9::NUM_FORMAT, BUF_NUM_FORMAT_UINT)
        .with(BufRsrcWord3Gfx9::DATA_FORMAT, BUF_DATA_FORMAT_32)
        .with(BufRsrcWord3Gfx9::ELEMENT_SIZE, 1)
        .with(BufRsrcWord3Gfx9::ADD_TID_ENABLE, 1)
        .raw(),
};

/// gfx10 (ROCR `FillBufRsrcWord1` / `FillBufRsrcWord3_Gfx10`).
pub const SCRATCH_GFX10: ScratchRsrcFormat = ScratchRsrcFormat {
    word1: SCRATCH_GFX9.word1,
    word3: BufRsrcWord3Gfx10::zeroed()
        .with(BufRsrcWord3Gfx10::DST_SEL_X, SQ_SEL_XYZW[0])
        .with(BufRsrcWord3Gfx10::DST_SEL_Y, SQ_SEL_XYZW[1])
        .with(BufRsrcWord3Gfx10::DST_SEL_Z, SQ_SEL_XYZW[2])
        .with(BufRsrcWord3Gfx10::DST_SEL_W, SQ_SEL_XYZW[3])
        .with(BufRsrcWord3Gfx10::FORMAT, BUF_FORMAT_32_UINT)
        .with(BufRsrcWord3Gfx10::ADD_TID_ENABLE, 1)
        .with(BufRsrcWord3Gfx10::RESOURCE_LEVEL, 1)
        .with(BufRsrcWord3Gfx10::OOB_SELECT, 2)
        .raw(),
};
