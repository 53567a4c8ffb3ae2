//! Load segments, device limits and one kernel of a code object.

use super::*;

/// One `PT_LOAD` segment: copy `file_range()` of the file to `image_offset`, then zero
/// `zero_fill()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadSegment {
    /// Program header index.
    pub index: u16,
    /// `p_offset` (bounds-checked: `file_offset + file_size <= file length`).
    pub file_offset: usize,
    /// `p_filesz`.
    pub file_size: usize,
    /// Where the segment starts in the GPU image (`p_vaddr - image base`).
    pub image_offset: u64,
    /// `p_memsz` (>= `file_size`).
    pub mem_size: u64,
    /// `PF_X`.
    pub executable: bool,
    /// `PF_W`.
    pub writable: bool,
}

impl LoadSegment {
    /// The file bytes to copy.
    #[must_use]
    pub const fn file_range(&self) -> Range<usize> {
        self.file_offset..self.file_offset.saturating_add(self.file_size)
    }

    /// The image bytes this segment covers.
    #[must_use]
    pub const fn image_range(&self) -> Range<u64> {
        self.image_offset..self.image_offset.saturating_add(self.mem_size)
    }

    /// (image offset, length) to zero after the copied bytes (`p_memsz - p_filesz`).
    #[must_use]
    pub const fn zero_fill(&self) -> (u64, u64) {
        // CAST: usize -> u64 is lossless on every supported target (<= 64-bit).
        let file = self.file_size as u64;
        (
            self.image_offset.saturating_add(file),
            self.mem_size.saturating_sub(file),
        )
    }
}

/// A device's resource limits, for [`Kernel::check_resources`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceLimits {
    /// LDS bytes per work-group (KFD `lds_size_in_kb * 1024`).
    pub lds_bytes: u32,
    /// Scratch bytes per work-item the runtime has set up.
    pub max_private_segment_bytes: u32,
}

/// One kernel: its `<name>.kd` descriptor and where it lives in the image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kernel<'a> {
    /// Kernel name (the symbol without `.kd`).
    pub name: &'a str,
    /// Offset of the 64-byte descriptor in the image (`kernel_object = base + this`).
    pub descriptor_offset: u64,
    /// Offset of the first instruction in the image (`descriptor_offset +
    /// kernel_code_entry_byte_offset`, 256-byte aligned).
    pub entry_offset: u64,
    /// The parsed descriptor.
    pub descriptor: KernelDescriptor,
    /// Whether the target is gfx9 (LDS granularity, RSRC3 meaning).
    pub wave64_only: bool,
    /// The kernel's entry of the `NT_AMDGPU_METADATA` note (checked against the descriptor),
    /// when the object has the note.
    pub metadata: Option<KernelMeta<'a>>,
}

impl Kernel<'_> {
    /// Static LDS bytes per work-group.
    #[must_use]
    pub const fn group_segment_size(&self) -> u32 {
        self.descriptor.group_segment_fixed_size
    }

    /// Static scratch bytes per work-item.
    #[must_use]
    pub const fn private_segment_size(&self) -> u32 {
        self.descriptor.private_segment_fixed_size
    }

    /// Kernarg segment bytes (explicit plus any hidden arguments).
    #[must_use]
    pub const fn kernarg_size(&self) -> u32 {
        self.descriptor.kernarg_size
    }

    /// `kernel_code_entry_byte_offset`.
    #[must_use]
    pub const fn entry_byte_offset(&self) -> i64 {
        self.descriptor.kernel_code_entry_byte_offset
    }

    /// The `kernel_code_properties` word.
    #[must_use]
    pub const fn properties(&self) -> KernelCodeProperties {
        self.descriptor.properties()
    }

    /// Whether the kernel reads the dispatch packet (ENABLE_SGPR_DISPATCH_PTR).
    #[must_use]
    pub fn uses_dispatch_ptr(&self) -> bool {
        self.properties()
            .get(KernelCodeProperties::ENABLE_SGPR_DISPATCH_PTR)
            != 0
    }

    /// Whether the kernel reads the queue pointer (ENABLE_SGPR_QUEUE_PTR).
    #[must_use]
    pub fn uses_queue_ptr(&self) -> bool {
        self.properties()
            .get(KernelCodeProperties::ENABLE_SGPR_QUEUE_PTR)
            != 0
    }

    /// 32 or 64.
    #[must_use]
    pub fn wavefront_size(&self) -> u32 {
        if self
            .properties()
            .get(KernelCodeProperties::ENABLE_WAVEFRONT_SIZE32)
            != 0
        {
            32
        } else {
            64
        }
    }

    /// RSRC2.USER_SGPR_COUNT: user SGPRs the hardware loads (may exceed
    /// [`Kernel::required_user_sgprs`]: LLVM 19 pads it to 15 on gfx11).
    #[must_use]
    pub fn user_sgpr_count(&self) -> u32 {
        self.descriptor
            .rsrc2()
            .get(crate::hsa::PgmRsrc2::USER_SGPR_COUNT)
    }

    /// User SGPRs the inputs enabled in `kernel_code_properties` take, in allocation order.
    #[must_use]
    pub const fn required_user_sgprs(&self) -> u32 {
        self.properties().user_sgpr_count()
    }

    /// RSRC2.LDS_SIZE for this kernel's static LDS: granules of [`LDS_GRANULE_BYTES`], rounded
    /// up (what the runtime ORs into RSRC2 at dispatch).
    #[must_use]
    pub const fn lds_granules(&self) -> u32 {
        self.group_segment_size().div_ceil(LDS_GRANULE_BYTES)
    }

    /// Compares the metadata with the descriptor where both say the same thing.
    pub(super) fn check_metadata(&self, m: &KernelMeta<'_>) -> Result<(), CodeObjectError> {
        let d = &self.descriptor;
        let props = self.properties();
        let checks: [(&'static str, u64, u64); 5] = [
            (
                "kernarg_segment_size",
                m.kernarg_segment_size.into(),
                d.kernarg_size.into(),
            ),
            (
                "group_segment_fixed_size",
                m.group_segment_fixed_size.into(),
                d.group_segment_fixed_size.into(),
            ),
            (
                "private_segment_fixed_size",
                m.private_segment_fixed_size.into(),
                d.private_segment_fixed_size.into(),
            ),
            (
                "wavefront_size",
                m.wavefront_size.into(),
                self.wavefront_size().into(),
            ),
            (
                "uses_dynamic_stack",
                m.uses_dynamic_stack.map_or(
                    u64::from(props.get(KernelCodeProperties::USES_DYNAMIC_STACK)),
                    u64::from,
                ),
                props.get(KernelCodeProperties::USES_DYNAMIC_STACK).into(),
            ),
        ];
        for (field, metadata, descriptor) in checks {
            if metadata != descriptor {
                return Err(CodeObjectError::MetadataMismatch {
                    kernel: short_name(self.name),
                    field,
                    metadata,
                    descriptor,
                });
            }
        }
        Ok(())
    }

    /// Refuses a kernel whose static LDS or scratch exceed the device's `limits`.
    ///
    /// # Errors
    /// [`CodeObjectError::GroupSegmentTooLarge`], [`CodeObjectError::PrivateSegmentTooLarge`].
    pub fn check_resources(&self, limits: &DeviceLimits) -> Result<(), CodeObjectError> {
        let size = self.group_segment_size();
        if size > limits.lds_bytes || self.lds_granules() > MAX_LDS_GRANULES {
            return Err(CodeObjectError::GroupSegmentTooLarge {
                kernel: short_name(self.name),
                size,
                limit: limits.lds_bytes.min(MAX_LDS_GRANULES * LDS_GRANULE_BYTES),
            });
        }
        let size = self.private_segment_size();
        if size > limits.max_private_segment_bytes {
            return Err(CodeObjectError::PrivateSegmentTooLarge {
                kernel: short_name(self.name),
                size,
                limit: limits.max_private_segment_bytes,
            });
        }
        Ok(())
    }
}
