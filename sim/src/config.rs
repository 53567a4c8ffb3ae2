//! What the simulated machine looks like: GPUs, KFD version, execution mode, kernel rules.

use hcq_core::kfd::topology::{CacheProperties, MemBankProperties, NodeProperties};

mod env;
pub use env::*;

/// One simulated GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuConfig {
    /// `gfx_target_version` (gfx1100 = 110000).
    pub gfx_target_version: u32,
    /// Compute units.
    pub cu_count: u32,
    /// SIMDs per CU.
    pub simd_per_cu: u32,
    /// Waves per SIMD.
    pub max_waves_per_simd: u32,
    /// Scratch wave slots per CU.
    pub max_slots_scratch_cu: u32,
    /// Shader arrays.
    pub array_count: u32,
    /// Shader arrays per engine.
    pub simd_arrays_per_engine: u32,
    /// LDS per workgroup processor, KiB.
    pub lds_size_in_kb: u32,
    /// VRAM bytes (ALLOC of VRAM past this is ENOMEM).
    pub vram_size: u64,
    /// SDMA engines.
    pub num_sdma_engines: u32,
    /// SDMA queues per engine.
    pub num_sdma_queues_per_engine: u32,
    /// XCCs (accelerated compute complexes) of this KFD node, each with its own command
    /// processor running every queue of the node. [`GpuConfig::with_xcc`] partitions a one-XCC
    /// description; [`SimConfig::xcc`] does it for every GPU of a simulator.
    pub num_xcc: u32,
    /// PCI device id.
    pub device_id: u32,
    /// Maximum compute clock, MHz.
    pub max_engine_clk_fcompute: u32,
    /// Whole VRAM CPU-visible (large BAR): VRAM|PUBLIC allowed, peers can map VRAM.
    pub large_bar: bool,
    /// Per-CU instruction cache, KiB (0: none listed).
    pub l1_instruction_kib: u32,
    /// Per-CU L1 data cache (the vector L0 on RDNA), KiB.
    pub l1_kib: u32,
    /// L2 cache, KiB.
    pub l2_kib: u32,
    /// L3 (Infinity Cache / MALL), KiB (0: none).
    pub l3_kib: u32,
    /// SRAM ECC on (`HSA_CAP_SRAM_EDCSUPPORTED`, the `sramecc+` feature).
    pub sramecc: bool,
    /// VRAM bus width, bits.
    pub vram_width: u32,
    /// Maximum memory clock, MHz.
    pub mem_clk_max: u32,
}

impl GpuConfig {
    /// A Radeon RX 7900 XTX (gfx1100, 96 CUs, 24 GiB).
    #[must_use]
    pub fn gfx1100() -> Self {
        Self {
            gfx_target_version: 110000,
            cu_count: 96,
            simd_per_cu: 2,
            max_waves_per_simd: 16,
            max_slots_scratch_cu: 32,
            array_count: 12,
            simd_arrays_per_engine: 2,
            lds_size_in_kb: 64,
            vram_size: 24 << 30,
            num_sdma_engines: 2,
            num_sdma_queues_per_engine: 6,
            num_xcc: 1,
            device_id: 0x744C,
            max_engine_clk_fcompute: 2482,
            large_bar: true,
            l1_instruction_kib: 64,
            l1_kib: 32,
            l2_kib: 6 << 10,
            l3_kib: 96 << 10,
            sramecc: false,
            vram_width: 384,
            mem_clk_max: 1250,
        }
    }

    /// A Radeon RX 9070 XT (gfx1201, RDNA4: 64 CUs of 2 SIMD32s, 16 GiB of 256-bit GDDR6 at
    /// 20 Gbps). Architected flat scratch, workgroup ids in TTMP registers.
    #[must_use]
    pub fn gfx1201() -> Self {
        Self {
            gfx_target_version: 120001,
            cu_count: 64,
            simd_per_cu: 2,
            max_waves_per_simd: 16,
            max_slots_scratch_cu: 32,
            array_count: 8,
            simd_arrays_per_engine: 2,
            lds_size_in_kb: 64,
            vram_size: 16 << 30,
            num_sdma_engines: 2,
            num_sdma_queues_per_engine: 8,
            num_xcc: 1,
            device_id: 0x7550,
            max_engine_clk_fcompute: 2970,
            large_bar: true,
            l1_instruction_kib: 64,
            l1_kib: 32,
            l2_kib: 8 << 10,
            l3_kib: 64 << 10,
            sramecc: false,
            vram_width: 256,
            mem_clk_max: 1250,
        }
    }

    /// An Instinct MI210 (gfx90a, CDNA2: 104 CUs of 4 SIMDs, wave64, 64 GiB). Its code
    /// objects use absolute flat scratch: kernels touching scratch take the private segment
    /// buffer.
    #[must_use]
    pub fn gfx90a() -> Self {
        Self {
            gfx_target_version: 90010,
            cu_count: 104,
            simd_per_cu: 4,
            max_waves_per_simd: 8,
            max_slots_scratch_cu: 32,
            array_count: 8,
            simd_arrays_per_engine: 1,
            lds_size_in_kb: 64,
            vram_size: 64 << 30,
            num_sdma_engines: 2,
            num_sdma_queues_per_engine: 8,
            num_xcc: 1,
            device_id: 0x740F,
            max_engine_clk_fcompute: 1700,
            large_bar: true,
            l1_instruction_kib: 64,
            l1_kib: 16,
            l2_kib: 8 << 10,
            l3_kib: 0,
            sramecc: true,
            vram_width: 4096,
            mem_clk_max: 1600,
        }
    }

    /// One CPX-mode partition of an Instinct MI300X (gfx942, CDNA3: one XCC of 38 CUs of 4
    /// SIMDs, wave64, 24 GiB). Architected flat scratch: no private segment buffer.
    #[must_use]
    pub fn gfx942() -> Self {
        Self {
            gfx_target_version: 90402,
            cu_count: 38,
            simd_per_cu: 4,
            max_waves_per_simd: 8,
            max_slots_scratch_cu: 32,
            array_count: 4,
            simd_arrays_per_engine: 1,
            lds_size_in_kb: 64,
            vram_size: 24 << 30,
            num_sdma_engines: 2,
            num_sdma_queues_per_engine: 8,
            num_xcc: 1,
            device_id: 0x74A1,
            max_engine_clk_fcompute: 2100,
            large_bar: true,
            l1_instruction_kib: 64,
            l1_kib: 32,
            l2_kib: 4 << 10,
            l3_kib: 256 << 10,
            sramecc: true,
            vram_width: 8192,
            mem_clk_max: 1300,
        }
    }

    /// This GPU as a KFD node of `xcc` XCCs (a partition mode of the same silicon): the CUs,
    /// shader arrays and VRAM of one XCC times `xcc`, as KFD's topology shows a partitioned
    /// node (`kfd_topology.c`: `num_xcc = NUM_XCC(xcc_mask)`; `kfd_crat.c`'s
    /// `kfd_create_vcrat_image_gpu` counts the node's CUs over all its XCCs, so `simd_count`
    /// and `array_count` scale). gfx942 (MI300X, 8 XCCs of 38 CUs) runs as SPX (8 XCCs, one
    /// node), DPX (4), QPX (2) or CPX (1: [`GpuConfig::gfx942`]); other targets have one XCC.
    ///
    /// # Errors
    /// A count the target has no partition mode for, with what it takes.
    pub fn with_xcc(&self, xcc: u32) -> Result<Self, XccError> {
        let err = || XccError {
            gfx_target_version: self.gfx_target_version,
            xcc,
        };
        let per_xcc = self.num_xcc.max(1);
        if self.cu_count % per_xcc != 0 || self.array_count % per_xcc != 0 {
            return Err(err());
        }
        if !XccError::accepted_for(self.gfx_target_version).contains(&xcc) {
            return Err(err());
        }
        let scale = |v: u32| (v / per_xcc).checked_mul(xcc).ok_or_else(err);
        Ok(Self {
            cu_count: scale(self.cu_count)?,
            array_count: scale(self.array_count)?,
            vram_size: (self.vram_size / u64::from(per_xcc))
                .checked_mul(u64::from(xcc))
                .ok_or_else(err)?,
            num_xcc: xcc,
            ..self.clone()
        })
    }

    /// The node's `properties` as the sim serves them (`index`: GPU index, from 0).
    #[must_use]
    pub fn properties(&self, index: u32) -> NodeProperties {
        NodeProperties {
            cpu_cores_count: 0,
            simd_count: self.cu_count.saturating_mul(self.simd_per_cu),
            max_waves_per_simd: self.max_waves_per_simd,
            lds_size_in_kb: self.lds_size_in_kb,
            array_count: self.array_count,
            simd_arrays_per_engine: self.simd_arrays_per_engine,
            cu_per_simd_array: self.cu_count.checked_div(self.array_count).unwrap_or(0),
            simd_per_cu: self.simd_per_cu,
            max_slots_scratch_cu: self.max_slots_scratch_cu,
            gfx_target_version: self.gfx_target_version,
            drm_render_minor: 128 + index,
            vendor_id: 0x1002,
            device_id: self.device_id,
            location_id: (index + 3) << 8,
            domain: 0,
            wave_front_size: if self.gfx_target_version >= 100000 {
                32
            } else {
                64
            },
            num_sdma_engines: self.num_sdma_engines,
            num_sdma_xgmi_engines: 0,
            num_sdma_queues_per_engine: self.num_sdma_queues_per_engine,
            num_cp_queues: 8,
            max_engine_clk_fcompute: self.max_engine_clk_fcompute,
            local_mem_size: self.vram_size,
            num_xcc: self.num_xcc,
            unique_id: 0x5151_0000_0000_0000 | u64::from(index),
            // 64-bit doorbells (doorbell type 2, gfx9 on), and SRAM ECC when on.
            capability: 0x2000
                | if self.sramecc {
                    NodeProperties::CAP_SRAM_EDCSUPPORTED
                } else {
                    0
                },
            mem_banks_count: 1,
            // CAST: at most 4 caches.
            caches_count: self.caches().len() as u32,
            io_links_count: 0,
            hive_id: 0,
            fw_version: 0,
            sdma_fw_version: 0,
        }
    }

    /// The node's one memory bank (`mem_banks/0/properties`): all of VRAM, public (CPU-visible)
    /// with a large BAR, private otherwise, as KFD's CRAT parsing reports it.
    #[must_use]
    pub fn mem_bank(&self) -> MemBankProperties {
        MemBankProperties {
            heap_type: if self.large_bar {
                MemBankProperties::HEAP_FB_PUBLIC
            } else {
                MemBankProperties::HEAP_FB_PRIVATE
            },
            size_in_bytes: self.vram_size,
            flags: 0,
            width: self.vram_width,
            mem_clk_max: self.mem_clk_max,
        }
    }

    /// CPU-visible VRAM bytes (amdgpu's `mem_info_vis_vram_total`): all of it with a large BAR,
    /// else the 256 MiB BAR.
    #[must_use]
    pub fn vram_visible(&self) -> u64 {
        if self.large_bar {
            self.vram_size
        } else {
            self.vram_size.min(256 << 20)
        }
    }

    /// The node's caches (`caches/N/properties`): one entry per kind (KFD lists one per CU or
    /// CU group, with the same level, size and type), instruction L1 first as KFD does.
    #[must_use]
    pub fn caches(&self) -> Vec<CacheProperties> {
        let cache = |level, kib, ty, line| CacheProperties {
            level,
            size: kib,
            r#type: ty | CacheProperties::TYPE_HSACU,
            processor_id_low: 0x8000_1000,
            cache_line_size: line,
            cache_lines_per_tag: 1,
            association: 16,
            latency: 0,
        };
        let data = CacheProperties::TYPE_DATA;
        [
            (
                1,
                self.l1_instruction_kib,
                CacheProperties::TYPE_INSTRUCTION,
                64,
            ),
            (1, self.l1_kib, data, 128),
            (2, self.l2_kib, data, 128),
            (3, self.l3_kib, data, 64),
        ]
        .into_iter()
        .filter(|&(_, kib, _, _)| kib != 0)
        .map(|(level, kib, ty, line)| cache(level, kib, ty, line))
        .collect()
    }
}

/// A number of XCCs a GPU has no partition mode for ([`GpuConfig::with_xcc`],
/// [`SimConfig::xcc`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XccError {
    /// The GPU's `gfx_target_version`.
    pub gfx_target_version: u32,
    /// The XCC count asked for.
    pub xcc: u32,
}

impl XccError {
    /// The XCC counts a target's KFD nodes come in: gfx942 (MI300X/MI300A/MI325X) as CPX 1,
    /// QPX 2, DPX 4 or SPX 8 (amdgpu's `gfx_v9_4_3.c` compute partition modes); every other
    /// simulated target has one XCC.
    #[must_use]
    pub fn accepted_for(gfx_target_version: u32) -> &'static [u32] {
        if gfx_target_version == 90402 {
            &[1, 2, 4, 8]
        } else {
            &[1]
        }
    }
}

impl core::fmt::Display for XccError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let v = self.gfx_target_version;
        let target = format!("gfx{}{:x}{:x}", v / 10000, (v / 100) % 100, v % 100);
        if v == 90402 {
            write!(
                f,
                "{target} has no partition of {} XCCs (it runs as SPX 8, DPX 4, QPX 2 or CPX 1)\nnext: pass --xcc 8 (or HCQ_SIM_XCC=8) for an MI300X as it ships, or 1, 2 or 4",
                self.xcc
            )
        } else {
            write!(
                f,
                "{target} has one XCC, not {}\nnext: use --xcc 1 (the default), or --target gfx942 for a multi-XCC GPU",
                self.xcc
            )
        }
    }
}

impl core::error::Error for XccError {}

/// The token that lets a simulator serve any client: only [`SimConfig::for_any_client`], an
/// `unsafe fn`, makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AnyClientGrant(());

/// Which clients the simulator serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SimClient {
    /// hcq's own driver (through its `KfdSys` port), held to hcq's habits: `MAP_FIXED` only
    /// inside ranges the simulator handed out, `munmap` of whole such ranges, USERPTR only over
    /// memory the simulator mapped. Nothing the client passes can reach memory it does not own.
    #[default]
    Hcq,
    /// Any in-process client, under the kernel's rules: `MAP_FIXED` of buffer objects,
    /// doorbells and event pages over any mapped range of the process (the client's own
    /// reservations), `munmap` of any range, USERPTR over any range the process has mapped
    /// read-write. See [`SimConfig::for_any_client`] for what the embedder promises.
    Any(AnyClientGrant),
}

/// The simulated machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimConfig {
    /// GPUs (topology nodes 1..).
    pub gpus: Vec<GpuConfig>,
    /// `minor_version` GET_VERSION reports (major is 1).
    pub kfd_minor_version: u32,
    /// Execution mode.
    pub mode: SimMode,
    /// CREATE_QUEUE buffer validation flavour.
    pub queue_buffer_rules: QueueBufferRules,
    /// GTT bytes the process may allocate (ENOMEM past it).
    pub gtt_size: u64,
    /// How DISPATCH_DIRECT runs: asynchronously with the race detector (the default), or
    /// synchronously (faster, forgiving); the default comes from `HCQ_SIM_DISPATCH`
    /// ([`env_dispatch`]; a malformed value is refused by [`crate::SimKfd::new`]).
    pub dispatch: DispatchMode,
    /// Seed of the asynchronous dispatch's choices (when each dispatch lands, how long it
    /// lingers); the default comes from `HCQ_SIM_SEED` ([`env_seed`]).
    pub seed: u64,
    /// Which clients are served ([`SimClient::Hcq`] unless granted by
    /// [`SimConfig::for_any_client`]).
    pub client: SimClient,
    /// Whether the host's own reads and writes of GPU memory join the race detector and the
    /// HDP model (sim/README.md "Host accesses"): the simulator then installs a process-wide
    /// SIGSEGV handler and changes the protection of the process's mappings of its buffers.
    /// Off by default (a library gets no signal handler it did not ask for); hcq's own test
    /// suites turn it on. [`HOST_GUARD_ENV`] overrides it: `1` on, `0` off.
    pub host_guard: bool,
    /// Whether an access the hardware tolerates (an LDS, buffer or scratch access past its
    /// allocation: reads 0, writes dropped) faults the queue instead of being recorded as a finding
    /// ([`crate::findings`]); the default comes from `HCQ_SIM_STRICT` ([`env_strict`]).
    pub strict: bool,
    /// Host threads a dispatch's work-groups run on (sim/README.md "Threads"): results do not
    /// depend on it. The default comes from `HCQ_SIM_THREADS` ([`env_threads`]), else the
    /// cores the process may use ([`host_threads`]); 0 counts as 1.
    pub threads: usize,
    /// XCCs of each GPU (1, the default, or 2, 4 or 8 for gfx942: its QPX, DPX and SPX
    /// partition modes; an MI300X ships as SPX, 8): [`crate::SimKfd::new`] partitions every GPU
    /// of `gpus` that has one XCC with [`GpuConfig::with_xcc`] and refuses a count its target
    /// has none of ([`XccError`]); a GPU already described with more than one XCC keeps its
    /// count (a different `xcc` above 1 is refused). The default comes from `HCQ_SIM_XCC`
    /// ([`env_xcc`]).
    pub xcc: u32,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            gpus: vec![GpuConfig::gfx1100()],
            kfd_minor_version: 14,
            mode: SimMode::Deterministic,
            // A malformed variable is not used here, and SimKfd::new refuses it (check_env).
            queue_buffer_rules: env_kernel()
                .ok()
                .flatten()
                .unwrap_or(QueueBufferRules::Relaxed),
            gtt_size: 64 << 30,
            dispatch: env_dispatch().unwrap_or_default(),
            seed: env_seed().unwrap_or_default(),
            client: SimClient::Hcq,
            host_guard: false,
            strict: env_strict().unwrap_or_default(),
            // A malformed variable is not used here, and SimKfd::new refuses it (check_env).
            threads: default_threads().unwrap_or_else(|_| host_threads()),
            xcc: env_xcc().ok().flatten().unwrap_or(1),
        }
    }
}

impl SimConfig {
    /// A GPU of `gpus` as the simulator runs it: partitioned into [`SimConfig::xcc`]
    /// XCCs when its description has one ([`GpuConfig::with_xcc`]).
    ///
    /// # Errors
    /// An XCC count the GPU's target has no partition for, or a GPU described with another
    /// count above 1.
    pub fn gpu_as_run(&self, gpu: &GpuConfig) -> Result<GpuConfig, XccError> {
        match (gpu.num_xcc, self.xcc) {
            // Described as it runs: only the count is checked.
            (n, x) if n == x || x == 1 => {
                if XccError::accepted_for(gpu.gfx_target_version).contains(&n) {
                    Ok(gpu.clone())
                } else {
                    Err(XccError {
                        gfx_target_version: gpu.gfx_target_version,
                        xcc: n,
                    })
                }
            }
            (1, x) => gpu.with_xcc(x),
            (_, x) => Err(XccError {
                gfx_target_version: gpu.gfx_target_version,
                xcc: x,
            }),
        }
    }

    /// `n` identical gfx1100 GPUs.
    #[must_use]
    pub fn with_gpus(n: usize) -> Self {
        Self {
            gpus: vec![GpuConfig::gfx1100(); n],
            ..Self::default()
        }
    }

    /// This machine serving any in-process KFD client ([`SimClient::Any`]), with its engines on
    /// their own thread ([`SimMode::Threaded`]: such clients spin on signal memory and ring
    /// doorbells by plain stores, so the GPU must run while the host does).
    ///
    /// # Safety
    /// In this mode the simulator does to the process's address space what the kernel does on
    /// a client's word, and the caller vouches for that word. For the simulator's whole life:
    /// - every `MAP_FIXED` address range passed to `mmap` is the client's own mapping (a
    ///   reservation it made), holding no Rust object and nothing other code relies on: the
    ///   simulator replaces the pages there;
    /// - every range passed to `munmap` is the client's (its reservations, or what the
    ///   simulator mapped for it): the simulator unmaps it;
    /// - every USERPTR range passed to ALLOC_MEMORY_OF_GPU is memory the client owns and lets
    ///   the simulated GPU read and write at any time while registered (no Rust reference into
    ///   it), and the client unmaps or replaces it only through this simulator's `munmap` /
    ///   `mmap` (which run the MMU notifier first).
    #[must_use]
    pub unsafe fn for_any_client(self) -> Self {
        Self {
            client: SimClient::Any(AnyClientGrant(())),
            mode: SimMode::Threaded,
            ..self
        }
    }
}

/// A stable nonzero 16-bit gpu_id for GPU `index` (KFD hashes device facts the same way),
/// distinct from `taken`.
pub(crate) fn gpu_id_for(index: u32, cfg: &GpuConfig, taken: &[u32]) -> u32 {
    let mut h: u32 = 0x811C_9DC5;
    for b in index
        .to_le_bytes()
        .into_iter()
        .chain(cfg.device_id.to_le_bytes())
        .chain(cfg.gfx_target_version.to_le_bytes())
    {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    let mut id = (h ^ (h >> 16)) & 0xFFFF;
    while id == 0 || taken.contains(&id) {
        id = (id.wrapping_mul(31).wrapping_add(7)) & 0xFFFF;
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_errors_name_the_variable_the_value_and_what_it_takes() {
        let e = EnvError {
            var: SEED_ENV,
            value: "12abc".into(),
            accepted: SEED_ACCEPTED,
        };
        let text = e.to_string();
        assert!(
            text.starts_with("HCQ_SIM_SEED=\"12abc\" is not a value the simulator accepts (it takes a 64-bit number, decimal or 0x hex)"),
            "{text}"
        );
        assert!(text.contains("next: set HCQ_SIM_SEED"), "{text}");
    }

    #[test]
    fn thread_counts_are_decimal_from_1_to_the_limit() {
        assert_eq!(parse_threads("4"), Some(4));
        assert_eq!(parse_threads(" 1 "), Some(1));
        assert_eq!(parse_threads("1024"), Some(MAX_THREADS));
        for bad in ["0", "1025", "-1", "two", "", "0x4", "4.0"] {
            assert_eq!(parse_threads(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn host_threads_is_at_least_one() {
        assert!((1..=MAX_THREADS).contains(&host_threads()));
    }
}
