//! The kernel registry: host stand-ins for kernels, and how a dispatch executes
//! ([`ExecMode`]).
//!
//! By default ([`ExecMode::MachineCode`]) a dispatch runs the kernel's machine code on the
//! instruction interpreter ([`crate::isa`]), from the registers the driver programmed; the
//! registry's host kernels are not used. Tests opt in to [`ExecMode::HostStandIns`] (or
//! [`ExecMode::Differential`], both at once) where a [`HostKernel`] registered for the machine
//! code at the dispatch's program address runs instead: the engine reads [`KEY_BYTES`] bytes
//! there through the GPU's page table (as an instruction fetch) and looks up their hash, so a
//! kernel the driver loaded wrongly (wrong bytes, wrong address, not executable) is not found
//! and faults the queue.
//!
//! Ready-made implementations of the repository's fixture kernels (`kernels/README.md`) follow
//! their exact kernarg layouts; [`KernelRegistry::register_fixture`] registers every kernel of a
//! fixture code object.

use crate::vm::VmFault;
use core::fmt;
use hcq_core::codeobj::CodeObject;
use hcq_core::hsa::{DispatchPacket, KernelDescriptor};
use std::collections::HashMap;
use std::sync::Arc;

/// Bytes of machine code at the entry point that identify a kernel.
pub const KEY_BYTES: usize = 256;

/// FNV-1a (64-bit) of `bytes`: the registry key of a kernel's first [`KEY_BYTES`] bytes.
#[must_use]
pub fn code_key(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Why a host kernel stopped; it faults the queue.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KernelError {
    /// A memory access outside GPU-mapped memory (raised as a VM fault).
    Vm(VmFault),
    /// Anything else (raised as a HW exception with this message).
    Failed(String),
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelError::Vm(v) => write!(f, "{v}"),
            KernelError::Failed(m) => f.write_str(m),
        }
    }
}

impl core::error::Error for KernelError {}

impl From<VmFault> for KernelError {
    fn from(v: VmFault) -> Self {
        KernelError::Vm(v)
    }
}

/// Checked GPU memory as a kernel sees it.
pub(crate) trait KernelMem {
    fn read(&self, va: u64, buf: &mut [u8]) -> Result<(), VmFault>;
    fn write(&self, va: u64, data: &[u8]) -> Result<(), VmFault>;
}

/// What one workgroup of a dispatch sees.
pub struct KernelCtx<'a> {
    pub(crate) mem: &'a dyn KernelMem,
    pub(crate) kernarg: &'a [u8],
    pub(crate) workgroup_id: [u32; 3],
    pub(crate) local_size: [u32; 3],
    pub(crate) num_workgroups: [u32; 3],
    pub(crate) dispatch: Option<&'a DispatchPacket>,
    pub(crate) lds: &'a mut [u8],
}

impl fmt::Debug for KernelCtx<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KernelCtx")
            .field("workgroup_id", &self.workgroup_id)
            .field("local_size", &self.local_size)
            .field("num_workgroups", &self.num_workgroups)
            .field("kernarg_len", &self.kernarg.len())
            .finish_non_exhaustive()
    }
}

fn arg_err(off: usize, n: usize, len: usize) -> KernelError {
    KernelError::Failed(format!(
        "kernarg read of {n} bytes at offset {off} is beyond the {len}-byte kernarg segment"
    ))
}

impl KernelCtx<'_> {
    /// This workgroup's id (x, y, z).
    #[must_use]
    pub fn workgroup_id(&self) -> [u32; 3] {
        self.workgroup_id
    }

    /// Work-items per workgroup (COMPUTE_NUM_THREAD_X/Y/Z).
    #[must_use]
    pub fn local_size(&self) -> [u32; 3] {
        self.local_size
    }

    /// Workgroups in the dispatch (DISPATCH_DIRECT dims).
    #[must_use]
    pub fn num_workgroups(&self) -> [u32; 3] {
        self.num_workgroups
    }

    /// Work-items in the dispatch per dimension (workgroups x local size).
    #[must_use]
    pub fn grid_size(&self) -> [u64; 3] {
        let g = |i: usize| {
            u64::from(self.num_workgroups.get(i).copied().unwrap_or(0))
                * u64::from(self.local_size.get(i).copied().unwrap_or(0))
        };
        [g(0), g(1), g(2)]
    }

    /// The kernarg segment (the descriptor's `kernarg_size` bytes at the kernarg pointer).
    #[must_use]
    pub fn kernarg(&self) -> &[u8] {
        self.kernarg
    }

    fn arg<const N: usize>(&self, off: usize) -> Result<[u8; N], KernelError> {
        off.checked_add(N)
            .and_then(|end| self.kernarg.get(off..end))
            .and_then(|s| <[u8; N]>::try_from(s).ok())
            .ok_or_else(|| arg_err(off, N, self.kernarg.len()))
    }

    /// The u32 kernel argument at byte `off`.
    ///
    /// # Errors
    /// An offset beyond the kernarg segment.
    pub fn arg_u32(&self, off: usize) -> Result<u32, KernelError> {
        self.arg::<4>(off).map(u32::from_le_bytes)
    }

    /// The u16 kernel argument at byte `off` (hidden group sizes, remainders, grid dims).
    ///
    /// # Errors
    /// An offset beyond the kernarg segment.
    pub fn arg_u16(&self, off: usize) -> Result<u16, KernelError> {
        self.arg::<2>(off).map(u16::from_le_bytes)
    }

    /// The u64 (pointer) kernel argument at byte `off`.
    ///
    /// # Errors
    /// An offset beyond the kernarg segment.
    pub fn arg_u64(&self, off: usize) -> Result<u64, KernelError> {
        self.arg::<8>(off).map(u64::from_le_bytes)
    }

    /// The f32 kernel argument at byte `off`.
    ///
    /// # Errors
    /// An offset beyond the kernarg segment.
    pub fn arg_f32(&self, off: usize) -> Result<f32, KernelError> {
        self.arg::<4>(off).map(f32::from_le_bytes)
    }

    /// The dispatch packet the dispatch pointer points to.
    ///
    /// # Errors
    /// The kernel's descriptor does not enable the dispatch pointer.
    pub fn dispatch_packet(&self) -> Result<&DispatchPacket, KernelError> {
        self.dispatch.ok_or_else(|| {
            KernelError::Failed(
                "kernel reads the dispatch packet but its descriptor does not enable ENABLE_SGPR_DISPATCH_PTR".into(),
            )
        })
    }

    /// The workgroup's LDS (group segment), zeroed at workgroup start.
    pub fn lds(&mut self) -> &mut [u8] {
        self.lds
    }

    /// Reads bytes of GPU memory.
    ///
    /// # Errors
    /// A VM fault.
    pub fn read_bytes(&self, va: u64, buf: &mut [u8]) -> Result<(), KernelError> {
        Ok(self.mem.read(va, buf)?)
    }

    /// Writes bytes of GPU memory.
    ///
    /// # Errors
    /// A VM fault.
    pub fn write_bytes(&self, va: u64, data: &[u8]) -> Result<(), KernelError> {
        Ok(self.mem.write(va, data)?)
    }

    /// Reads the u32 at `va`.
    ///
    /// # Errors
    /// A VM fault.
    pub fn read_u32(&self, va: u64) -> Result<u32, KernelError> {
        let mut b = [0u8; 4];
        self.read_bytes(va, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    /// Writes the u32 at `va`.
    ///
    /// # Errors
    /// A VM fault.
    pub fn write_u32(&self, va: u64, v: u32) -> Result<(), KernelError> {
        self.write_bytes(va, &v.to_le_bytes())
    }

    /// Reads the f32 at `va`.
    ///
    /// # Errors
    /// A VM fault.
    pub fn read_f32(&self, va: u64) -> Result<f32, KernelError> {
        self.read_u32(va).map(f32::from_bits)
    }

    /// Writes the f32 at `va`.
    ///
    /// # Errors
    /// A VM fault.
    pub fn write_f32(&self, va: u64, v: f32) -> Result<(), KernelError> {
        self.write_u32(va, v.to_bits())
    }

    /// Reads `out.len()` consecutive u32 from `va`.
    ///
    /// # Errors
    /// A VM fault.
    pub fn read_u32s(&self, va: u64, out: &mut [u32]) -> Result<(), KernelError> {
        self.read_bytes(va, bytemuck::cast_slice_mut(out))
    }

    /// Writes consecutive u32 to `va`.
    ///
    /// # Errors
    /// A VM fault.
    pub fn write_u32s(&self, va: u64, data: &[u32]) -> Result<(), KernelError> {
        self.write_bytes(va, bytemuck::cast_slice(data))
    }
}

/// A host implementation of a GPU kernel, run once per workgroup.
pub trait HostKernel: Send + Sync {
    /// Runs one workgroup.
    ///
    /// # Errors
    /// Any error faults the queue (a VM fault as a memory exception, anything else as a HW
    /// exception).
    fn run(&self, wg: &mut KernelCtx<'_>) -> Result<(), KernelError>;
}

impl<F> HostKernel for F
where
    F: Fn(&mut KernelCtx<'_>) -> Result<(), KernelError> + Send + Sync,
{
    fn run(&self, wg: &mut KernelCtx<'_>) -> Result<(), KernelError> {
        self(wg)
    }
}

/// A kernel the registry knows.
#[derive(Clone)]
pub struct RegisteredKernel {
    /// Kernel name (for messages and traces).
    pub name: String,
    /// Its descriptor as the code object holds it (the loaded one must match byte for byte).
    pub descriptor: KernelDescriptor,
    /// The implementation.
    pub kernel: Arc<dyn HostKernel>,
}

impl fmt::Debug for RegisteredKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredKernel")
            .field("name", &self.name)
            .field("descriptor", &self.descriptor)
            .finish_non_exhaustive()
    }
}

/// Why a kernel could not be registered.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegistryError {
    /// The code object is invalid.
    CodeObject(String),
    /// Fewer than [`KEY_BYTES`] bytes of machine code at the entry point.
    ShortCode {
        /// Kernel name.
        name: String,
        /// Bytes available.
        have: usize,
    },
    /// No ready-made implementation for a fixture kernel of this name.
    NoImplementation(String),
    /// The code object has no kernel of this name.
    NoSuchKernel(String),
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryError::CodeObject(e) => write!(f, "invalid code object: {e}"),
            RegistryError::ShortCode { name, have } => write!(
                f,
                "kernel {name}: only {have} bytes of machine code at the entry point, the registry needs {KEY_BYTES}"
            ),
            RegistryError::NoImplementation(n) => write!(
                f,
                "no ready-made host implementation for kernel {n} (register one with KernelRegistry::register)"
            ),
            RegistryError::NoSuchKernel(n) => write!(f, "the code object has no kernel {n}"),
        }
    }
}

impl core::error::Error for RegistryError {}

/// How dispatches run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ExecMode {
    /// The kernel's machine code runs on the instruction interpreter ([`crate::isa`]), from
    /// the registers the driver programmed. The registry's host kernels are not used.
    #[default]
    MachineCode,
    /// Opt-in: the host stand-in registered for the machine code runs instead (tests of
    /// behaviour the interpreter cannot give cheaply, custom closures, ISAs not interpreted
    /// yet). The loaded descriptor must match the registered one.
    HostStandIns,
    /// Both run, each against its own record of the stores it made; the dispatch faults
    /// unless both stored the same bytes at the same addresses (then those stores are made).
    Differential,
}

/// Default for [`KernelRegistry::instruction_budget`]: no budget. A legal kernel may run a
/// wave for as long as it likes (tinygrad's convolutions run ~1.3e9 wave instructions per
/// dispatch, and a single wave's loop may be as long as its data); the interpreter finds an
/// endless loop by lack of progress instead (`isa/interp/hang.rs`, sim/README.md "Endless
/// loops"): a wave whose state repeats faults with its place.
pub const DEFAULT_INSTRUCTION_BUDGET: u64 = u64::MAX;

pub use crate::config::{INSTRUCTION_BUDGET_ENV, env_instruction_budget};

/// Instructions the interpreter executed (for benchmarks).
#[derive(Debug, Default)]
pub struct IsaCounters {
    /// Wave instructions.
    pub wave_instructions: core::sync::atomic::AtomicU64,
    /// Instructions per active lane (scalar ones count 1).
    pub lane_instructions: core::sync::atomic::AtomicU64,
}

/// Host implementations keyed by the hash of their machine code, and how dispatches run.
#[derive(Clone)]
pub struct KernelRegistry {
    by_key: HashMap<u64, RegisteredKernel>,
    mode: ExecMode,
    budget: u64,
    counters: Arc<IsaCounters>,
    /// Whether tolerated out-of-range accesses fault ([`crate::findings`]).
    strict: bool,
    /// Where they are recorded otherwise.
    findings: Arc<crate::findings::Findings>,
    /// Host threads a dispatch runs on ([`crate::SimConfig::threads`]).
    threads: usize,
}

impl Default for KernelRegistry {
    fn default() -> Self {
        Self {
            by_key: HashMap::new(),
            mode: ExecMode::default(),
            // A malformed value was refused by `SimKfd::new` (`config::check_env`); a
            // registry made without a simulator takes the default then.
            budget: env_instruction_budget()
                .ok()
                .flatten()
                .unwrap_or(DEFAULT_INSTRUCTION_BUDGET),
            counters: Arc::default(),
            strict: true,
            findings: Arc::default(),
            // SimKfd::new refuses a malformed HCQ_SIM_THREADS (check_env).
            threads: crate::config::default_threads()
                .unwrap_or_else(|_| crate::config::host_threads()),
        }
    }
}

impl fmt::Debug for KernelRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.by_key.iter().map(|(k, v)| (k, &v.name)))
            .finish()
    }
}

impl KernelRegistry {
    /// An empty registry.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `kernel` for the machine code whose first [`KEY_BYTES`] bytes are
    /// `code[..KEY_BYTES]`, with the descriptor the loaded code object must carry. Replaces
    /// an earlier registration with the same key. Returns the key.
    ///
    /// # Errors
    /// [`RegistryError::ShortCode`] when `code` is shorter than [`KEY_BYTES`].
    pub fn register(
        &mut self,
        code: &[u8],
        name: &str,
        descriptor: KernelDescriptor,
        kernel: Arc<dyn HostKernel>,
    ) -> Result<u64, RegistryError> {
        let key_bytes = code.get(..KEY_BYTES).ok_or(RegistryError::ShortCode {
            name: name.into(),
            have: code.len(),
        })?;
        let key = code_key(key_bytes);
        self.by_key.insert(
            key,
            RegisteredKernel {
                name: name.into(),
                descriptor,
                kernel,
            },
        );
        Ok(key)
    }

    /// Registers `kernel` for the kernel `name` of the code object `co` (its machine code as
    /// [`CodeObject::load_into`] lays it out).
    ///
    /// # Errors
    /// An invalid object, no such kernel, or too little code.
    pub fn register_from_code_object(
        &mut self,
        co: &[u8],
        name: &str,
        kernel: Arc<dyn HostKernel>,
    ) -> Result<u64, RegistryError> {
        let obj = CodeObject::parse(co).map_err(|e| RegistryError::CodeObject(e.to_string()))?;
        let image = load_image(&obj)?;
        let k = obj
            .kernel(name)
            .map_err(|_| RegistryError::NoSuchKernel(name.into()))?;
        let code = usize::try_from(k.entry_offset)
            .ok()
            .and_then(|o| image.get(o..))
            .unwrap_or_default();
        self.register(code, k.name, k.descriptor, kernel)
    }

    /// Registers every kernel of a fixture code object (`core/tests/fixtures/kernels/*.co`)
    /// with its ready-made implementation from [`fixtures`]. Returns how many.
    ///
    /// # Errors
    /// An invalid object, or a kernel without a ready-made implementation.
    pub fn register_fixture(&mut self, co: &[u8]) -> Result<usize, RegistryError> {
        let obj = CodeObject::parse(co).map_err(|e| RegistryError::CodeObject(e.to_string()))?;
        let image = load_image(&obj)?;
        let mut n = 0;
        for k in obj.kernels() {
            let imp = fixtures::for_name(k.name)
                .ok_or_else(|| RegistryError::NoImplementation(k.name.into()))?;
            let code = usize::try_from(k.entry_offset)
                .ok()
                .and_then(|o| image.get(o..))
                .unwrap_or_default();
            self.register(code, k.name, k.descriptor, imp)?;
            n += 1;
        }
        Ok(n)
    }

    /// How dispatches run (default: [`ExecMode::MachineCode`]).
    #[must_use]
    pub fn mode(&self) -> ExecMode {
        self.mode
    }

    /// Chooses how dispatches run.
    pub fn set_mode(&mut self, mode: ExecMode) {
        self.mode = mode;
    }

    /// Most instructions one wave may execute on the interpreter before it faults the queue
    /// (default [`DEFAULT_INSTRUCTION_BUDGET`]: none, endless loops are found by lack of
    /// progress; or [`INSTRUCTION_BUDGET_ENV`] when the registry was made).
    #[must_use]
    pub fn instruction_budget(&self) -> u64 {
        self.budget
    }

    /// Sets the per-wave instruction budget (`u64::MAX`: none).
    pub fn set_instruction_budget(&mut self, budget: u64) {
        self.budget = budget;
    }

    /// Whether an access the hardware tolerates faults the queue (default: strict; a
    /// [`SimKfd`](crate::SimKfd)'s engines follow [`SimConfig::strict`](crate::SimConfig)).
    #[must_use]
    pub fn strict(&self) -> bool {
        self.strict
    }

    /// Chooses strictness and the list non-strict findings go to.
    pub fn set_judge(&mut self, strict: bool, findings: Arc<crate::findings::Findings>) {
        self.strict = strict;
        self.findings = findings;
    }

    /// Host threads a dispatch's workgroups run on (default: `HCQ_SIM_THREADS`, else the
    /// cores the process may use; a [`SimKfd`](crate::SimKfd)'s engines follow
    /// [`SimConfig::threads`](crate::SimConfig)). Results do not depend on it.
    #[must_use]
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Sets the host threads a dispatch runs on (0 counts as 1).
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    /// The list findings go to.
    #[must_use]
    pub fn findings(&self) -> &crate::findings::Findings {
        &self.findings
    }

    /// What the interpreter has executed so far (all dispatches of these engines).
    #[must_use]
    pub fn isa_counters(&self) -> Arc<IsaCounters> {
        Arc::clone(&self.counters)
    }

    /// The kernel registered under `key`.
    #[must_use]
    pub fn lookup(&self, key: u64) -> Option<&RegisteredKernel> {
        self.by_key.get(&key)
    }

    /// Number of registered kernels.
    #[must_use]
    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    /// Whether nothing is registered.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }
}

fn load_image(obj: &CodeObject<'_>) -> Result<Vec<u8>, RegistryError> {
    let size = usize::try_from(obj.image_size())
        .map_err(|_| RegistryError::CodeObject("image too large".into()))?;
    let mut image = vec![0u8; size];
    obj.load_into(&mut image)
        .map_err(|e| RegistryError::CodeObject(e.to_string()))?;
    Ok(image)
}

/// Ready-made implementations of the fixture kernels (`kernels/README.md`): work-item
/// `i = group_id_x * 64 + local_id_x` for `local_id_x < local_size_x`, 1-D.
pub mod fixtures {
    use super::{HostKernel, KernelCtx, KernelError};
    use std::sync::Arc;

    /// The implementation for the fixture kernel `name`, if there is one.
    #[must_use]
    pub fn for_name(name: &str) -> Option<Arc<dyn HostKernel>> {
        Some(match name {
            "vector_add" => Arc::new(vector_add),
            "fill" => Arc::new(fill),
            "lds_reverse" => Arc::new(lds_reverse),
            "grid_size" => Arc::new(grid_size),
            "vector_add_f32" => Arc::new(vector_add_f32),
            "scale_f32" => Arc::new(scale_f32),
            "copy_u32" => Arc::new(copy_u32),
            "scratch_sum" => Arc::new(scratch_sum),
            "agpr_mix" => Arc::new(agpr_mix),
            "global_id" => Arc::new(global_id),
            "scale" => Arc::new(scale),
            _ => return None,
        })
    }

    /// This workgroup's work-items below `n`: (first global index, count). Memory is accessed
    /// a workgroup at a time (one checked access per array, not per element).
    fn span(wg: &KernelCtx<'_>, n: u64) -> (u64, usize) {
        let first = u64::from(wg.workgroup_id()[0]) * 64;
        let end = (first + u64::from(wg.local_size()[0])).min(n);
        // CAST: at most 1024 work-items per workgroup.
        (first, end.saturating_sub(first) as usize)
    }

    fn at(base: u64, i: u64) -> u64 {
        base.wrapping_add(i.wrapping_mul(4))
    }

    fn read(
        wg: &KernelCtx<'_>,
        base: u64,
        first: u64,
        count: usize,
    ) -> Result<Vec<u32>, KernelError> {
        let mut v = vec![0u32; count];
        if count > 0 {
            wg.read_u32s(at(base, first), &mut v)?;
        }
        Ok(v)
    }

    fn write(wg: &KernelCtx<'_>, base: u64, first: u64, v: &[u32]) -> Result<(), KernelError> {
        if v.is_empty() {
            return Ok(());
        }
        wg.write_u32s(at(base, first), v)
    }

    /// `vector_add(u32* a @0, u32* b @8, u32* c @16, u32 n @24)`: `c[i] = a[i] + b[i]`.
    ///
    /// # Errors
    /// VM faults.
    pub fn vector_add(wg: &mut KernelCtx<'_>) -> Result<(), KernelError> {
        let (a, b, c, n) = (
            wg.arg_u64(0)?,
            wg.arg_u64(8)?,
            wg.arg_u64(16)?,
            wg.arg_u32(24)?,
        );
        let (first, count) = span(wg, u64::from(n));
        let mut x = read(wg, a, first, count)?;
        let y = read(wg, b, first, count)?;
        for (x, y) in x.iter_mut().zip(&y) {
            *x = x.wrapping_add(*y);
        }
        write(wg, c, first, &x)
    }

    /// `fill(u32* buf @0, u32 value @8, u32 n @12)`: `buf[i] = value`.
    ///
    /// # Errors
    /// VM faults.
    pub fn fill(wg: &mut KernelCtx<'_>) -> Result<(), KernelError> {
        let (buf, value, n) = (wg.arg_u64(0)?, wg.arg_u32(8)?, wg.arg_u32(12)?);
        let (first, count) = span(wg, u64::from(n));
        write(wg, buf, first, &vec![value; count])
    }

    /// `lds_reverse(u32* buf @0)`: each block of 64 reversed in place through LDS.
    ///
    /// # Errors
    /// VM faults, or less than 256 bytes of LDS.
    pub fn lds_reverse(wg: &mut KernelCtx<'_>) -> Result<(), KernelError> {
        let buf = wg.arg_u64(0)?;
        let g = u64::from(wg.workgroup_id()[0]);
        let local = wg.local_size()[0];
        let mut vals = Vec::new();
        for l in 0..u64::from(local) {
            vals.push(wg.read_u32(at(buf, g * 64 + l))?);
        }
        let lds = wg.lds();
        for (l, v) in vals.iter().enumerate() {
            let slot = lds.get_mut(l * 4..l * 4 + 4).ok_or_else(|| {
                KernelError::Failed(format!(
                    "LDS access at byte {} beyond the group segment",
                    l * 4
                ))
            })?;
            slot.copy_from_slice(&v.to_le_bytes());
        }
        let lds: Vec<u8> = wg.lds().to_vec();
        for l in 0..u64::from(local) {
            // Work-item l reads LDS slot 63 - l (the kernel's fixed size).
            let src = 63u64.checked_sub(l).ok_or_else(|| {
                KernelError::Failed(format!("local id {l} beyond the kernel's 64 work-items"))
            })?;
            let o = usize::try_from(src * 4).unwrap_or(usize::MAX);
            let v = lds
                .get(o..o.saturating_add(4))
                .and_then(|s| <[u8; 4]>::try_from(s).ok())
                .map(u32::from_le_bytes)
                .ok_or_else(|| {
                    KernelError::Failed(format!("LDS access at byte {o} beyond the group segment"))
                })?;
            wg.write_u32(at(buf, g * 64 + l), v)?;
        }
        Ok(())
    }

    /// `grid_size(u32* out @0)`, dispatch pointer: `out[i] = grid_size_x` for `i < grid_size_x`.
    ///
    /// # Errors
    /// VM faults, or no dispatch packet.
    pub fn grid_size(wg: &mut KernelCtx<'_>) -> Result<(), KernelError> {
        let out = wg.arg_u64(0)?;
        let gsx = wg.dispatch_packet()?.grid_size_x;
        let (first, count) = span(wg, u64::from(gsx));
        write(wg, out, first, &vec![gsx; count])
    }

    /// `vector_add_f32(f32* a @0, f32* b @8, f32* c @16, u32 n @24)`.
    ///
    /// # Errors
    /// VM faults.
    pub fn vector_add_f32(wg: &mut KernelCtx<'_>) -> Result<(), KernelError> {
        let (a, b, c, n) = (
            wg.arg_u64(0)?,
            wg.arg_u64(8)?,
            wg.arg_u64(16)?,
            wg.arg_u32(24)?,
        );
        let (first, count) = span(wg, u64::from(n));
        let mut x = read(wg, a, first, count)?;
        let y = read(wg, b, first, count)?;
        for (x, y) in x.iter_mut().zip(&y) {
            *x = (f32::from_bits(*x) + f32::from_bits(*y)).to_bits();
        }
        write(wg, c, first, &x)
    }

    /// `scale_f32(f32* buf @0, f32 s @8, u32 n @12)`: `buf[i] *= s`.
    ///
    /// # Errors
    /// VM faults.
    pub fn scale_f32(wg: &mut KernelCtx<'_>) -> Result<(), KernelError> {
        let (buf, s, n) = (wg.arg_u64(0)?, wg.arg_f32(8)?, wg.arg_u32(12)?);
        let (first, count) = span(wg, u64::from(n));
        let mut x = read(wg, buf, first, count)?;
        for x in &mut x {
            *x = (f32::from_bits(*x) * s).to_bits();
        }
        write(wg, buf, first, &x)
    }

    /// `copy_u32(u32* dst @0, u32* src @8, u32 n @16)`.
    ///
    /// # Errors
    /// VM faults.
    pub fn copy_u32(wg: &mut KernelCtx<'_>) -> Result<(), KernelError> {
        let (dst, src, n) = (wg.arg_u64(0)?, wg.arg_u64(8)?, wg.arg_u32(16)?);
        let (first, count) = span(wg, u64::from(n));
        let x = read(wg, src, first, count)?;
        write(wg, dst, first, &x)
    }

    /// Offset of `hidden_group_size_x` (u16) in the kernarg segment of `global_id` and `scale`:
    /// code object v5's hidden arguments start 8-aligned after the explicit ones (at 16 for
    /// both), block counts x/y/z (3 x u32) first, then group sizes x/y/z (u16).
    const HIDDEN_GROUP_SIZE_X: usize = 16 + 12;

    /// Like the real kernel, the work-group size comes from the hidden argument
    /// `hidden_group_size_x`, not from the dispatch: `i = group_id_x * hidden_group_size_x +
    /// local_id_x` for `local_id_x < local_size_x`, below `n`. A zeroed hidden argument makes
    /// every group cover the first elements, as on the GPU.
    fn hidden_span(wg: &KernelCtx<'_>, n: u64) -> Result<(u64, usize), KernelError> {
        let gsx = u64::from(wg.arg_u16(HIDDEN_GROUP_SIZE_X)?);
        let first = u64::from(wg.workgroup_id()[0]) * gsx;
        let end = (first + u64::from(wg.local_size()[0])).min(n);
        // CAST: at most 1024 work-items per workgroup.
        Ok((first, end.saturating_sub(first) as usize))
    }

    /// `global_id(u32* out @0, u32 n @8)` with code object v5 hidden arguments: `out[i] = i`
    /// for `i < n`, `i` built from `hidden_group_size_x`.
    ///
    /// # Errors
    /// VM faults, or a kernarg segment without the hidden arguments.
    pub fn global_id(wg: &mut KernelCtx<'_>) -> Result<(), KernelError> {
        let (out, n) = (wg.arg_u64(0)?, wg.arg_u32(8)?);
        let (first, count) = hidden_span(wg, u64::from(n))?;
        // CAST: i < n <= u32::MAX.
        let v: Vec<u32> = (0..count).map(|j| (first + j as u64) as u32).collect();
        write(wg, out, first, &v)
    }

    /// HIP `scale(f32* x @0, f32 s @8, u32 n @12)` with hidden arguments: `x[i] *= s` for
    /// `i < n`, `i` built from `hidden_group_size_x` (blockDim.x).
    ///
    /// # Errors
    /// VM faults, or a kernarg segment without the hidden arguments.
    pub fn scale(wg: &mut KernelCtx<'_>) -> Result<(), KernelError> {
        let (x, s, n) = (wg.arg_u64(0)?, wg.arg_f32(8)?, wg.arg_u32(12)?);
        let (first, count) = hidden_span(wg, u64::from(n))?;
        let mut v = read(wg, x, first, count)?;
        for e in &mut v {
            *e = (f32::from_bits(*e) * s).to_bits();
        }
        write(wg, x, first, &v)
    }

    /// `scratch_sum(u32* out @0, u32 k @8)`: `out[i] = k * 120` for every work-item.
    ///
    /// # Errors
    /// VM faults.
    pub fn scratch_sum(wg: &mut KernelCtx<'_>) -> Result<(), KernelError> {
        let (out, k) = (wg.arg_u64(0)?, wg.arg_u32(8)?);
        let (first, count) = span(wg, u64::MAX);
        write(wg, out, first, &vec![k.wrapping_mul(120); count])
    }

    /// `agpr_mix`'s value for work-item input `x` (0 beyond `n`), its lane partner's input
    /// `nb` (work-item `i ^ 1`, 0 beyond `n`) and `k` (kernels/agpr.cl).
    #[must_use]
    pub fn agpr_mix_value(x: u32, nb: u32, k: u32) -> u32 {
        let y0 = x.wrapping_mul(3).wrapping_add(k);
        let y12 = (x ^ 0x9e37_79b9) ^ x.rotate_left(5);
        let y45 = x.wrapping_add(0x7f4a_7c15) ^ ((x >> 3) ^ k);
        let y6 = x.wrapping_mul(0x85eb_ca6b);
        let a3 = x.wrapping_mul(k).wrapping_add(1);
        (x ^ y0)
            .wrapping_add(y12)
            .wrapping_add(y45)
            .wrapping_add(y6.wrapping_mul(7))
            .wrapping_add(a3.wrapping_mul(x.wrapping_sub(k)))
            .wrapping_add(nb)
    }

    /// `agpr_mix(u32* out @0, u32* in @8, u32 k @16, u32 n @20)`: for `i < n`,
    /// `out[i] = agpr_mix_value(in[i], in[i ^ 1], k)`.
    ///
    /// # Errors
    /// VM faults.
    pub fn agpr_mix(wg: &mut KernelCtx<'_>) -> Result<(), KernelError> {
        let (out, inp, k, n) = (
            wg.arg_u64(0)?,
            wg.arg_u64(8)?,
            wg.arg_u32(16)?,
            wg.arg_u32(20)?,
        );
        let (first, count) = span(wg, u64::from(n));
        // A partner at or beyond n reads 0 (the kernel loads nothing there).
        let x = read(wg, inp, first, count)?;
        let v: Vec<u32> = (0..count)
            .map(|l| {
                let at = |j: usize| x.get(j).copied().unwrap_or(0);
                agpr_mix_value(at(l), at(l ^ 1), k)
            })
            .collect();
        write(wg, out, first, &v)
    }
}

#[cfg(test)]
mod tests {
    use crate::config::parse_budget;

    #[test]
    fn budgets_parse_as_decimal_hex_or_not_at_all() {
        assert_eq!(parse_budget("4000000000"), Some(4_000_000_000));
        assert_eq!(parse_budget(" 4_000_000_000\n"), Some(4_000_000_000));
        assert_eq!(parse_budget("0x40000000"), Some(1 << 30));
        assert_eq!(parse_budget("0"), None);
        assert_eq!(parse_budget("lots"), None);
        assert_eq!(parse_budget("-5"), None);
    }
}
