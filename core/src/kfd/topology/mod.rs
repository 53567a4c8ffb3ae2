//! KFD sysfs topology: `/sys/devices/virtual/kfd/kfd/topology/nodes/N/{gpu_id,properties}`,
//! parsed without allocation, and the sizes derived from a node's properties:
//! the runtime's scratch area and `COMPUTE_TMPRING_SIZE` ([`ScratchSizing`], as tinygrad's
//! `AMDDevice.__init__` computes them) and the kernel's CWSR / control-stack / EOP sizes that
//! CREATE_QUEUE validates ([`CwsrSizes`], `kfd_queue_ctx_save_restore_size` in kfd_queue.c).
//!
//! A `properties` file is `key value` lines, one integer per key, for example
//! `simd_count 192`. Node 0 is the CPU (`gpu_id` 0); GPUs follow.

use core::fmt;

/// Root of the KFD topology in sysfs.
pub const TOPOLOGY_NODES_DIR: &str = "/sys/devices/virtual/kfd/kfd/topology/nodes";

/// Why a `properties` or `gpu_id` file could not be parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PropertiesError {
    /// A key every GPU node has (and the runtime needs) is missing.
    MissingKey(&'static str),
    /// A known key's value is not a decimal integer that fits its field.
    BadValue {
        /// The key.
        key: &'static str,
    },
    /// A line is not `key value` (1-based line number).
    BadLine {
        /// Line number, from 1.
        line: usize,
    },
    /// The `gpu_id` file is not a decimal integer that fits in 32 bits.
    BadGpuId,
}

impl fmt::Display for PropertiesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MissingKey(k) => write!(f, "topology properties lack the key `{k}`"),
            Self::BadValue { key } => {
                write!(f, "topology property `{key}` is not an integer that fits")
            }
            Self::BadLine { line } => {
                write!(f, "topology properties line {line} is not `key value`")
            }
            Self::BadGpuId => write!(f, "topology gpu_id is not a 32-bit decimal integer"),
        }
    }
}

impl core::error::Error for PropertiesError {}

/// Parses the contents of a node's `gpu_id` file (decimal, trailing newline allowed).
///
/// # Errors
/// [`PropertiesError::BadGpuId`] when it is not a decimal u32.
pub fn parse_gpu_id(text: &str) -> Result<u32, PropertiesError> {
    text.trim()
        .parse::<u32>()
        .map_err(|_| PropertiesError::BadGpuId)
}

/// The sysfs key of a field (`r#type` is the key `type`).
fn key_name(field: &'static str) -> &'static str {
    field.strip_prefix("r#").unwrap_or(field)
}

/// Defines a sysfs `properties` file type: its fields, `parse` and `write_to`.
macro_rules! kfd_properties {
    (
        $(#[$sm:meta])*
        $name:ident
        required { $($(#[$rm:meta])* $rk:ident : $rt:ty),* $(,)? }
        optional { $($(#[$om:meta])* $ok:ident : $ot:ty = $od:expr),* $(,)? }
    ) => {
        $(#[$sm])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct $name {
            $( $(#[$rm])* pub $rk: $rt, )*
            $( $(#[$om])* #[doc = concat!("Default when absent: `", stringify!($od), "`.")] pub $ok: $ot, )*
        }

        impl $name {

            /// Parses a `properties` file: `key value` lines; unknown keys are ignored.
            ///
            /// # Errors
            /// A required key missing (named), a known key with a value that is not a decimal
            /// integer fitting its field, or a non-empty line without a value.
            pub fn parse(text: &str) -> Result<Self, PropertiesError> {
                $( let mut $rk: Option<$rt> = None; )*
                $( let mut $ok: $ot = $od; )*
                for (i, raw) in text.split('\n').enumerate() {
                    let line = raw.trim();
                    if line.is_empty() {
                        continue;
                    }
                    let Some((key, value)) = line.split_once(|c: char| c.is_ascii_whitespace()) else {
                        return Err(PropertiesError::BadLine { line: i + 1 });
                    };
                    let value = value.trim();
                    match key {
                        $( k if k == key_name(stringify!($rk)) => {
                            $rk = Some(value.parse::<$rt>().map_err(|_| PropertiesError::BadValue { key: key_name(stringify!($rk)) })?);
                        } )*
                        $( k if k == key_name(stringify!($ok)) => {
                            $ok = value.parse::<$ot>().map_err(|_| PropertiesError::BadValue { key: key_name(stringify!($ok)) })?;
                        } )*
                        _ => {}
                    }
                }
                Ok(Self {
                    $( $rk: $rk.ok_or(PropertiesError::MissingKey(key_name(stringify!($rk))))?, )*
                    $( $ok, )*
                })
            }

            /// Writes the properties as the kernel prints them (`key value\n`, required keys
            /// first): what the simulator serves and what [`Self::parse`] reads back.
            ///
            /// # Errors
            /// Only the writer's.
            pub fn write_to(&self, w: &mut dyn fmt::Write) -> fmt::Result {
                $( writeln!(w, "{} {}", key_name(stringify!($rk)), self.$rk)?; )*
                $( writeln!(w, "{} {}", key_name(stringify!($ok)), self.$ok)?; )*
                Ok(())
            }
        }
    };
}

kfd_properties! {
    /// The properties of one topology node that hcq reads (`nodes/N/properties`; other keys
    /// are ignored). Required keys are those every node prints and the runtime needs; optional
    /// ones appeared in later kernels or only on GPU nodes and have the documented default.
    NodeProperties
    required {
        /// CPU cores (0 on a GPU node).
        cpu_cores_count: u32,
        /// SIMDs on the node (0 on a CPU node). CUs = `simd_count / simd_per_cu`.
        simd_count: u32,
        /// Maximum waves per SIMD.
        max_waves_per_simd: u32,
        /// LDS per work-group processor, KiB.
        lds_size_in_kb: u32,
        /// Shader arrays (SEs x SAs per SE).
        array_count: u32,
        /// Shader arrays per engine (SE).
        simd_arrays_per_engine: u32,
        /// CUs per shader array.
        cu_per_simd_array: u32,
        /// SIMDs per CU.
        simd_per_cu: u32,
        /// Scratch wave slots per CU.
        max_slots_scratch_cu: u32,
        /// `major*10000 + minor*100 + stepping` (gfx1100 = 110000); 0 on a CPU node.
        gfx_target_version: u32,
        /// Minor number of the node's render device (`/dev/dri/renderD<minor>`).
        drm_render_minor: u32,
    }
    optional {
        /// PCI vendor id.
        vendor_id: u32 = 0,
        /// PCI device id.
        device_id: u32 = 0,
        /// PCI location id (bus << 8 | devfn).
        location_id: u32 = 0,
        /// PCI domain.
        domain: u32 = 0,
        /// Wavefront size reported by the kernel.
        wave_front_size: u32 = 64,
        /// SDMA engines usable by user queues.
        num_sdma_engines: u32 = 0,
        /// XGMI SDMA engines.
        num_sdma_xgmi_engines: u32 = 0,
        /// SDMA queues per engine.
        num_sdma_queues_per_engine: u32 = 0,
        /// Compute queues the CP exposes.
        num_cp_queues: u32 = 0,
        /// Maximum compute engine clock, MHz (GPU nodes only).
        max_engine_clk_fcompute: u32 = 0,
        /// VRAM bytes as the node reports them (0 on many kernels: see mem_banks).
        local_mem_size: u64 = 0,
        /// XCCs (compute dies) on the node (absent before ~6.5: 1).
        num_xcc: u32 = 1,
        /// Stable unique id of the GPU.
        unique_id: u64 = 0,
        /// `HSA_CAP_*` flags ([`NodeProperties::CAP_SRAM_EDCSUPPORTED`], doorbell type, ...).
        capability: u32 = 0,
        /// Entries under `mem_banks/`.
        mem_banks_count: u32 = 0,
        /// Entries under `caches/`.
        caches_count: u32 = 0,
        /// Entries under `io_links/`.
        io_links_count: u32 = 0,
        /// XGMI hive (0: none).
        hive_id: u64 = 0,
        /// MEC firmware version.
        fw_version: u32 = 0,
        /// SDMA firmware version.
        sdma_fw_version: u32 = 0,
    }
}

kfd_properties! {
    /// One memory bank of a node (`nodes/N/mem_banks/M/properties`): a heap and its size.
    MemBankProperties
    required {
        /// `HSA_MEM_HEAP_TYPE_*`: [`MemBankProperties::HEAP_FB_PUBLIC`] (VRAM the CPU can
        /// reach whole, a large BAR) or [`MemBankProperties::HEAP_FB_PRIVATE`] (VRAM behind a
        /// small BAR); 0 (system) on a CPU node.
        heap_type: u32,
        /// Bytes.
        size_in_bytes: u64,
    }
    optional {
        /// `HSA_MEM_FLAGS_*`.
        flags: u32 = 0,
        /// Bus width, bits.
        width: u32 = 0,
        /// Maximum memory clock, MHz.
        mem_clk_max: u32 = 0,
    }
}

impl MemBankProperties {
    /// `HSA_MEM_HEAP_TYPE_SYSTEM`.
    pub const HEAP_SYSTEM: u32 = 0;
    /// `HSA_MEM_HEAP_TYPE_FB_PUBLIC`: VRAM, all of it CPU-visible.
    pub const HEAP_FB_PUBLIC: u32 = 1;
    /// `HSA_MEM_HEAP_TYPE_FB_PRIVATE`: VRAM, not all of it CPU-visible.
    pub const HEAP_FB_PRIVATE: u32 = 2;

    /// Whether the bank is VRAM (frame buffer, public or private).
    #[must_use]
    pub const fn is_vram(&self) -> bool {
        matches!(self.heap_type, Self::HEAP_FB_PUBLIC | Self::HEAP_FB_PRIVATE)
    }
}

kfd_properties! {
    /// One cache of a node (`nodes/N/caches/M/properties`).
    CacheProperties
    required {
        /// Level (1, 2, 3).
        level: u32,
        /// Size in KiB.
        size: u32,
        /// `HSA_CACHE_TYPE_*` flags ([`CacheProperties::TYPE_DATA`], ...).
        r#type: u32,
    }
    optional {
        /// First processor (CU or CPU core) id it serves.
        processor_id_low: u32 = 0,
        /// Line size, bytes.
        cache_line_size: u32 = 0,
        /// Lines per tag.
        cache_lines_per_tag: u32 = 0,
        /// Associativity.
        association: u32 = 0,
        /// Latency, ns.
        latency: u32 = 0,
    }
}

impl CacheProperties {
    /// `HSA_CACHE_TYPE_DATA`.
    pub const TYPE_DATA: u32 = 0x1;
    /// `HSA_CACHE_TYPE_INSTRUCTION`.
    pub const TYPE_INSTRUCTION: u32 = 0x2;
    /// `HSA_CACHE_TYPE_CPU`.
    pub const TYPE_CPU: u32 = 0x4;
    /// `HSA_CACHE_TYPE_HSACU`: a GPU cache.
    pub const TYPE_HSACU: u32 = 0x8;

    /// Bytes.
    #[must_use]
    pub const fn bytes(&self) -> u64 {
        (self.size as u64) << 10
    }

    /// Whether it caches data (not only instructions).
    #[must_use]
    pub const fn is_data(&self) -> bool {
        self.r#type & Self::TYPE_DATA != 0
    }
}

/// A node's caches summed up the way rocminfo shows them: the size of the first data cache of
/// each level (per CU for L1, per device for L2 and L3); `None` for a level the node lacks.
#[must_use]
pub fn data_cache_bytes(caches: &[CacheProperties], level: u32) -> Option<u64> {
    caches
        .iter()
        .find(|c| c.level == level && c.is_data())
        .map(CacheProperties::bytes)
}

/// The largest workgroup (work-items) any AMD GPU KFD drives accepts: the HSA agent's
/// `HSA_AGENT_INFO_WORKGROUP_MAX_SIZE`, 1024 on every gfx9-gfx12 part (KFD's topology does not
/// carry it; ROCr hard-codes it too).
pub const MAX_WORKGROUP_SIZE: u32 = 1024;

/// Paths of a node's topology files.
pub mod paths {
    use core::fmt;

    /// `nodes/<node>/<file>` under [`super::TOPOLOGY_NODES_DIR`], for `file` in `gpu_id`,
    /// `properties`, `mem_banks/<i>/properties`, `caches/<i>/properties`.
    #[derive(Clone, Copy, Debug)]
    pub enum NodeFile {
        /// `gpu_id`.
        GpuId,
        /// `properties`.
        Properties,
        /// `mem_banks/<i>/properties`.
        MemBank(u32),
        /// `caches/<i>/properties`.
        Cache(u32),
    }

    /// Displays as the full path of `file` of `node`.
    #[derive(Clone, Copy, Debug)]
    pub struct NodePath(pub u32, pub NodeFile);

    impl fmt::Display for NodePath {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "{}/{}/", super::TOPOLOGY_NODES_DIR, self.0)?;
            match self.1 {
                NodeFile::GpuId => f.write_str("gpu_id"),
                NodeFile::Properties => f.write_str("properties"),
                NodeFile::MemBank(i) => write!(f, "mem_banks/{i}/properties"),
                NodeFile::Cache(i) => write!(f, "caches/{i}/properties"),
            }
        }
    }
}

/// The marketing name of a PCI device id (AMD's, vendor 0x1002), for the GPUs hcq knows
/// (libdrm's `amdgpu.ids` has the full table); `None` for others.
#[must_use]
pub const fn marketing_name(device_id: u32) -> Option<&'static str> {
    Some(match device_id {
        0x744C => "AMD Radeon RX 7900 XTX",
        0x7448 => "AMD Radeon Pro W7900",
        0x747E => "AMD Radeon RX 7800 XT",
        0x73BF => "AMD Radeon RX 6900 XT",
        0x740F => "AMD Instinct MI210",
        0x7408 => "AMD Instinct MI250X",
        0x740C => "AMD Instinct MI250X / MI250",
        0x74A1 => "AMD Instinct MI300X",
        0x7550 => "AMD Radeon RX 9070 XT",
        _ => return None,
    })
}

impl NodeProperties {
    /// `HSA_CAP_SRAM_EDCSUPPORTED`: SRAM ECC is on (the `sramecc+` target feature).
    pub const CAP_SRAM_EDCSUPPORTED: u32 = 0x0400_0000;
    /// `HSA_CAP_DOORBELL_TYPE_TOTALBITS_MASK`: the doorbell type (2: 64-bit doorbells).
    pub const CAP_DOORBELL_TYPE_MASK: u32 = 0x0000_3000;

    /// Maximum waves per CU: `max_waves_per_simd * simd_per_cu`.
    #[must_use]
    pub const fn max_waves_per_cu(&self) -> u32 {
        self.max_waves_per_simd.saturating_mul(self.simd_per_cu)
    }

    /// Bytes of a queue's doorbell: 8 from gfx9 on (64-bit doorbells, doorbell type 2), 4
    /// before.
    #[must_use]
    pub const fn doorbell_bytes(&self) -> u32 {
        if (self.capability & Self::CAP_DOORBELL_TYPE_MASK) >> 12 >= 2
            || self.gfx_target_version >= 90000
        {
            8
        } else {
            4
        }
    }

    /// Whether the target has the `sramecc` feature at all (gfx906, gfx908, gfx90a, gfx94x).
    #[must_use]
    pub const fn has_sramecc(&self) -> bool {
        matches!(self.gfx_target_version, 90006 | 90008 | 90010)
            || (self.gfx_target_version >= 90400 && self.gfx_target_version < 90500)
    }

    /// Whether the target has the `xnack` feature (gfx9 parts: gfx10 and later have none).
    #[must_use]
    pub const fn has_xnack(&self) -> bool {
        self.gfx_target_version >= 90000 && self.gfx_target_version < 100000
    }

    /// Whether this is a GPU node (has SIMDs).
    #[must_use]
    pub const fn is_gpu(&self) -> bool {
        self.simd_count != 0
    }

    /// Compute units: `simd_count / simd_per_cu` (0 when `simd_per_cu` is 0).
    #[must_use]
    pub const fn cu_count(&self) -> u32 {
        match self.simd_count.checked_div(self.simd_per_cu) {
            Some(v) => v,
            None => 0,
        }
    }

    /// The gfx target as `(major, minor, stepping)` (gfx1100 = `(11, 0, 0)`).
    #[must_use]
    pub const fn gfx_version(&self) -> (u32, u32, u32) {
        let v = self.gfx_target_version;
        (v / 10000, (v / 100) % 100, v % 100)
    }
}

/// Why a size could not be derived from a node's properties.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SizingError {
    /// A property the formula divides by is 0.
    ZeroProperty(&'static str),
    /// The result does not fit (in u32, or in its register field).
    Overflow(&'static str),
    /// `gfx_target_version` is not a GPU hcq supports (gfx9 to gfx12).
    Target(u32),
}

impl fmt::Display for SizingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ZeroProperty(k) => write!(f, "topology property `{k}` is 0; cannot size"),
            Self::Overflow(what) => write!(f, "{what} overflows"),
            Self::Target(v) => write!(
                f,
                "gfx_target_version {v} is not a gfx9..gfx12 GPU; cannot size its scratch"
            ),
        }
    }
}

impl core::error::Error for SizingError {}

fn nz(v: u32, key: &'static str) -> Result<u64, SizingError> {
    if v == 0 {
        Err(SizingError::ZeroProperty(key))
    } else {
        Ok(u64::from(v))
    }
}

const fn align_up(v: u64, a: u64) -> Option<u64> {
    match v.checked_add(a - 1) {
        Some(s) => Some(s / a * a),
        None => None,
    }
}

/// The runtime's scratch (private segment) area and `COMPUTE_TMPRING_SIZE`, as tinygrad's
/// `AMDDevice.__init__` (seed 000) computes them:
/// `wave_scratch_len = round_up(waves_per_cu * max_private_segment_size, 256)`,
/// `scratch_len = cus * max_slots_scratch_cu * wave_scratch_len`,
/// `engines = array_count / simd_arrays_per_engine`,
/// `tmpring_size = (wave_scratch_len / 256) << 12 | scratch_len / (wave_scratch_len * engines)`.
///
/// The seed is gfx11, where WAVESIZE counts 256-byte units; gfx9 and gfx10 count 1 KiB units
/// ([`ArchInfo::tmpring_wavesize_unit`](crate::arch::ArchInfo::tmpring_wavesize_unit)), so
/// there `wave_scratch_len` is rounded up to 1 KiB and WAVESIZE is `wave_scratch_len / 1024`
/// (with 256-byte units a gfx9 GPU would space waves 4x too far apart in the scratch area).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScratchSizing {
    /// Private bytes per lane the scratch is sized for (4096).
    pub max_private_segment_size: u32,
    /// Bytes of scratch per wave slot (a whole number of WAVESIZE units).
    pub wave_scratch_len: u64,
    /// Bytes of the whole scratch buffer (allocated in VRAM).
    pub scratch_len: u64,
    /// Shader engines.
    pub engines: u32,
    /// `COMPUTE_TMPRING_SIZE`: WAVESIZE (in the family's units) from bit 12, WAVES in bits
    /// 11:0.
    pub tmpring_size: u32,
}

impl ScratchSizing {
    /// Private segment bytes tinygrad sizes scratch for.
    pub const MAX_PRIVATE_SEGMENT_SIZE: u32 = 4096;

    /// Sizes the scratch area of a GPU node.
    ///
    /// # Errors
    /// A divisor property is 0, or a result overflows (its register field included).
    pub fn for_node(p: &NodeProperties) -> Result<Self, SizingError> {
        let simd_per_cu = nz(p.simd_per_cu, "simd_per_cu")?;
        let cus = u64::from(p.simd_count) / simd_per_cu;
        if cus == 0 {
            return Err(SizingError::ZeroProperty("simd_count"));
        }
        let waves = u64::from(p.max_waves_per_simd) * simd_per_cu;
        if waves == 0 {
            return Err(SizingError::ZeroProperty("max_waves_per_simd"));
        }
        let arch = crate::arch::GfxTarget::from_kfd_version(p.gfx_target_version)
            .map_err(|_| SizingError::Target(p.gfx_target_version))?
            .info();
        let unit = u64::from(arch.tmpring_wavesize_unit);
        let seg = u64::from(Self::MAX_PRIVATE_SEGMENT_SIZE);
        let wave_scratch_len = waves
            .checked_mul(seg)
            .and_then(|v| align_up(v, unit))
            .ok_or(SizingError::Overflow("wave scratch length"))?;
        let slots = nz(p.max_slots_scratch_cu, "max_slots_scratch_cu")?;
        let scratch_len = cus
            .checked_mul(slots)
            .and_then(|v| v.checked_mul(wave_scratch_len))
            .ok_or(SizingError::Overflow("scratch length"))?;
        let engines =
            u64::from(p.array_count) / nz(p.simd_arrays_per_engine, "simd_arrays_per_engine")?;
        if engines == 0 {
            return Err(SizingError::ZeroProperty("array_count"));
        }
        let wavesize = wave_scratch_len / unit;
        let tmp_waves = scratch_len / (wave_scratch_len * engines);
        let wavesize_bits = arch.tmpring_wavesize_hi - 12 + 1;
        if wavesize >= 1 << wavesize_bits || tmp_waves >= 1 << 12 {
            return Err(SizingError::Overflow("COMPUTE_TMPRING_SIZE field"));
        }
        // CAST: both fields were checked to fit their bits.
        let tmpring_size = ((wavesize as u32) << 12) | tmp_waves as u32;
        Ok(Self {
            max_private_segment_size: Self::MAX_PRIVATE_SEGMENT_SIZE,
            wave_scratch_len,
            scratch_len,
            // CAST: engines <= array_count, a u32.
            engines: engines as u32,
            tmpring_size,
        })
    }
}

/// Page size the kernel aligns queue buffers to.
pub const PAGE_SIZE: u64 = 4096;

/// The kernel's per-node queue buffer sizes (`kfd_queue_ctx_save_restore_size`), which
/// CREATE_QUEUE checks against (amdkfd's `kfd_queue_acquire_buffers` in `kfd_queue.c`).
///
/// A compute queue needs: an EOP buffer of exactly `eop_buffer_size` bytes, `ctl_stack_size`
/// passed as is, `ctx_save_restore_size >= cwsr_size` (pass `cwsr_size`) and a CWSR BO whose
/// GPU mapping is exactly [`CwsrSizes::cwsr_mapping_size`]`(ctx_save_restore_size)`, i.e. it
/// includes `debug_memory_size` per XCC. (tinygrad's old seed passed the mapping size
/// 0x2C02000 as `ctx_save_restore_size`, which kernels since 6.12 reject.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CwsrSizes {
    /// Control stack bytes (page-aligned; capped at 0x7000 on gfx10).
    pub ctl_stack_size: u32,
    /// Minimum `ctx_save_restore_size`: control stack + per-CU work-group context data.
    pub cwsr_size: u32,
    /// Debugger memory after each XCC's save area (`waves * 32`, 64-byte aligned).
    pub debug_memory_size: u32,
    /// EOP buffer bytes (4096; 0x8000 on Tonga).
    pub eop_buffer_size: u32,
    /// XCCs the save area is replicated for.
    pub num_xcc: u32,
}

impl CwsrSizes {
    /// The sizes of a node; all zero before gfx 8.0.1 (no CWSR).
    ///
    /// # Errors
    /// A divisor property is 0, or a size overflows u32.
    pub fn for_node(p: &NodeProperties) -> Result<Self, SizingError> {
        let gfxv = p.gfx_target_version;
        let num_xcc = nz(p.num_xcc, "num_xcc")?;
        if gfxv < 80001 {
            return Ok(Self {
                ctl_stack_size: 0,
                cwsr_size: 0,
                debug_memory_size: 0,
                eop_buffer_size: 0,
                // CAST: num_xcc came from a u32.
                num_xcc: num_xcc as u32,
            });
        }
        let cu = u64::from(p.simd_count) / nz(p.simd_per_cu, "simd_per_cu")? / num_xcc;
        let is_gfx125 = (120500..120600).contains(&gfxv);
        let waves = if gfxv < 100100 {
            let per_engine = u64::from(p.array_count)
                / nz(p.simd_arrays_per_engine, "simd_arrays_per_engine")?
                * 512;
            (cu * 40).min(per_engine)
        } else if is_gfx125 {
            cu * 64
        } else {
            cu * 32
        };
        let vgpr: u64 =
            if matches!(gfxv, 90008 | 90010 | 90500) || (90400..90500).contains(&gfxv) || is_gfx125
            {
                0x80000
            } else if matches!(gfxv, 110000 | 110001 | 110501 | 120000 | 120001) {
                0x60000
            } else {
                0x40000
            };
        let sgpr: u64 = if is_gfx125 { 0x8000 } else { 0x4000 };
        let lds: u64 = if gfxv == 90500 || is_gfx125 {
            u64::from(p.lds_size_in_kb) << 10
        } else {
            0x10000
        };
        let hwreg: u64 = if is_gfx125 { 0x8000 } else { 0x1000 };
        let wg = align_up(cu * (vgpr + sgpr + lds + hwreg), PAGE_SIZE)
            .ok_or(SizingError::Overflow("CWSR work-group data"))?;
        let per_wave: u64 = if gfxv >= 100100 { 12 } else { 8 };
        let mut ctl = align_up(40 + waves * per_wave + 8, PAGE_SIZE)
            .ok_or(SizingError::Overflow("control stack"))?;
        if gfxv / 10000 == 10 {
            ctl = ctl.min(0x7000);
        }
        let debug = align_up(waves * 32, 64).ok_or(SizingError::Overflow("debug memory size"))?;
        let eop = if gfxv == 80002 { 0x8000 } else { 4096 };
        let to32 =
            |v: u64, what: &'static str| u32::try_from(v).map_err(|_| SizingError::Overflow(what));
        Ok(Self {
            ctl_stack_size: to32(ctl, "control stack")?,
            cwsr_size: to32(ctl + wg, "CWSR size")?,
            debug_memory_size: to32(debug, "debug memory size")?,
            eop_buffer_size: eop,
            // CAST: num_xcc came from a u32.
            num_xcc: num_xcc as u32,
        })
    }

    /// Bytes of the GPU mapping the kernel requires for a CWSR area declared with
    /// `ctx_save_restore_size`: `ALIGN((ctx_save_restore_size + debug_memory_size) * num_xcc, 4K)`.
    /// `None` when that overflows u32 (the kernel returns EINVAL).
    #[must_use]
    pub fn cwsr_mapping_size(&self, ctx_save_restore_size: u32) -> Option<u64> {
        let total = (u64::from(ctx_save_restore_size) + u64::from(self.debug_memory_size))
            * u64::from(self.num_xcc);
        let aligned = align_up(total, PAGE_SIZE)?;
        if aligned > u64::from(u32::MAX) {
            None
        } else {
            Some(aligned)
        }
    }

    /// The mapping size for the minimum `ctx_save_restore_size` (`cwsr_size`): what a runtime
    /// allocates (gfx1100 with 96 CUs: 0x2C02000).
    #[must_use]
    pub fn min_cwsr_mapping_size(&self) -> Option<u64> {
        self.cwsr_mapping_size(self.cwsr_size)
    }
}

#[cfg(test)]
mod tests;
