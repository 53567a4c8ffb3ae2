//! The kernels loaded on a device, by entry address: what an AQL kernel dispatch packet needs
//! (the kernel descriptor's address, the kernel's segment sizes) for a launch that names the
//! kernel only by its PM4 program ([`hcq_core::pm4::Program`], as a graph records it).

use crate::buffer::Bo;
use crate::sync::lock;
use std::sync::{Arc, Mutex, Weak};

/// What an AQL dispatch of a loaded kernel takes from the kernel (its code object).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelObject {
    /// GPU address of the kernel descriptor (`kernel_object` of a dispatch packet).
    pub kernel_object: u64,
    /// The kernel's static group segment (LDS) bytes.
    pub group_segment_size: u32,
    /// The kernel's private segment bytes per work-item.
    pub private_segment_size: u32,
}

/// Loaded kernels by entry address, each with the image that holds it (an entry whose image
/// was freed is gone).
#[derive(Debug, Default)]
pub(crate) struct Kernels {
    by_entry: Mutex<Vec<(u64, KernelObject, Weak<Bo>)>>,
}

impl Kernels {
    /// Records a kernel loaded at `entry` in `image` (a later load at the same entry
    /// replaces it).
    pub(crate) fn insert(&self, entry: u64, k: KernelObject, image: &Arc<Bo>) {
        let mut v = lock(&self.by_entry);
        v.retain(|(e, _, img)| *e != entry && img.strong_count() > 0);
        v.push((entry, k, Arc::downgrade(image)));
    }

    /// The kernel whose entry is at `entry`, while its image is loaded.
    pub(crate) fn get(&self, entry: u64) -> Option<KernelObject> {
        lock(&self.by_entry)
            .iter()
            .find(|(e, _, img)| *e == entry && img.strong_count() > 0)
            .map(|(_, k, _)| *k)
    }
}
