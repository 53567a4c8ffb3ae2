//! What KFD's topology (and amdgpu's sysfs) say about a GPU beyond its `properties`: memory
//! banks, caches, memory totals and the process's XNACK mode, read through the same port (the
//! real sysfs, or the simulator's copy of it) and parsed by `hcq_core::kfd::topology`.

use hcq_core::kfd::Errno;
use hcq_core::kfd::topology::{
    CacheProperties, MemBankProperties, data_cache_bytes,
    paths::{NodeFile, NodePath},
};
use hcq_core::kfd::{AMDKFD_IOC_SET_XNACK_MODE, SetXnackModeArgs};

use crate::error::{Error, Result};
use crate::kfd::{GpuInfo, Kfd};

/// Everything `hcq info` shows about one GPU that its [`GpuInfo`] does not carry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuDetails {
    /// `mem_banks/*/properties`, in order.
    pub mem_banks: Vec<MemBankProperties>,
    /// `caches/*/properties`, in order.
    pub caches: Vec<CacheProperties>,
    /// amdgpu's `mem_info_vis_vram_total` (`None` when the file cannot be read).
    pub vram_visible_bytes: Option<u64>,
    /// amdgpu's `mem_info_gtt_total` (`None` when the file cannot be read).
    pub gtt_bytes: Option<u64>,
}

impl GpuDetails {
    /// VRAM bytes: the memory banks' total, else the node's `local_mem_size`.
    #[must_use]
    pub fn vram_bytes(&self, gpu: &GpuInfo) -> u64 {
        let banks: u64 = self
            .mem_banks
            .iter()
            .filter(|b| b.is_vram())
            .map(|b| b.size_in_bytes)
            .sum();
        if banks == 0 {
            gpu.properties.local_mem_size
        } else {
            banks
        }
    }

    /// CPU-visible VRAM bytes: amdgpu's figure, else all of VRAM when the bank is public
    /// (large BAR); `None` when neither says.
    #[must_use]
    pub fn vram_visible(&self, gpu: &GpuInfo) -> Option<u64> {
        self.vram_visible_bytes.or_else(|| {
            self.mem_banks
                .iter()
                .any(|b| b.heap_type == MemBankProperties::HEAP_FB_PUBLIC)
                .then(|| self.vram_bytes(gpu))
        })
    }

    /// The first data cache of `level` (1, 2, 3), bytes.
    #[must_use]
    pub fn data_cache(&self, level: u32) -> Option<u64> {
        data_cache_bytes(&self.caches, level)
    }
}

fn read(kfd: &Kfd, path: &str) -> core::result::Result<String, Errno> {
    let mut buf = vec![0u8; 4096];
    let n = kfd.inner.core.sys.read_file(path, &mut buf)?;
    buf.truncate(n);
    String::from_utf8(buf).map_err(|_| Errno::EIO)
}

/// A sysfs number file (`mem_info_gtt_total`): `None` when absent or unreadable.
fn read_u64(kfd: &Kfd, path: &str) -> Option<u64> {
    read(kfd, path).ok().and_then(|t| t.trim().parse().ok())
}

impl Kfd {
    /// Reads `gpu`'s memory banks and caches from the topology, and amdgpu's memory totals
    /// from `/sys/class/drm/renderD<minor>/device/`.
    ///
    /// # Errors
    /// A bank or cache the node's count promises that cannot be read or parsed.
    pub fn gpu_details(&self, gpu: &GpuInfo) -> Result<GpuDetails> {
        let p = &gpu.properties;
        let file = |f| {
            let path = NodePath(gpu.node, f).to_string();
            read(self, &path)
                .map_err(|e| Error::Protocol(format!("reading {path}: {e}")))
                .map(|t| (path, t))
        };
        let mut mem_banks = Vec::new();
        for i in 0..p.mem_banks_count {
            let (path, text) = file(NodeFile::MemBank(i))?;
            mem_banks.push(
                MemBankProperties::parse(&text)
                    .map_err(|e| Error::Protocol(format!("{path}: {e}")))?,
            );
        }
        let mut caches = Vec::new();
        for i in 0..p.caches_count {
            let (path, text) = file(NodeFile::Cache(i))?;
            caches.push(
                CacheProperties::parse(&text)
                    .map_err(|e| Error::Protocol(format!("{path}: {e}")))?,
            );
        }
        let drm = format!("/sys/class/drm/renderD{}/device", p.drm_render_minor);
        Ok(GpuDetails {
            mem_banks,
            caches,
            vram_visible_bytes: read_u64(self, &format!("{drm}/mem_info_vis_vram_total")),
            gtt_bytes: read_u64(self, &format!("{drm}/mem_info_gtt_total")),
        })
    }

    /// The process's XNACK mode (`SET_XNACK_MODE` query): `None` where KFD has no
    /// per-process mode (gfx10 and later, or a kernel without the ioctl).
    ///
    /// # Errors
    /// Never for a missing mode; other ioctl failures.
    pub fn xnack_mode(&self) -> Result<Option<bool>> {
        let mut a = SetXnackModeArgs { xnack_enabled: -1 };
        match self.inner.core.ioctl(AMDKFD_IOC_SET_XNACK_MODE, &mut a) {
            Ok(()) => Ok(Some(a.xnack_enabled > 0)),
            Err(Errno::EPERM | Errno::EINVAL | Errno::ENOTTY) => Ok(None),
            Err(e) => Err(Error::sys("SET_XNACK_MODE", e)),
        }
    }
}
