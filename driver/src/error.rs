//! The driver's error type: every failure is a value whose message names what was wrong.

use core::fmt;
use hcq_core::addr::GpuVa;
use hcq_core::cmd::CmdError;
use hcq_core::codeobj::CodeObjectError;
use hcq_core::kfd::Errno;
use hcq_core::packet::EncodeError;
use hcq_core::patch::PatchError;

/// Result with the driver's [`Error`].
pub type Result<T, E = Error> = core::result::Result<T, E>;

/// Which memory pool an allocation asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryKind {
    /// Device memory (VRAM).
    Vram,
    /// System memory the GPU reaches through the GART (GTT).
    Gtt,
    /// Host memory registered with the GPU (USERPTR).
    Host,
    /// Virtual address space (the reservation a buffer is placed in).
    AddressSpace,
}

impl fmt::Display for MemoryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Vram => "VRAM",
            Self::Gtt => "GTT",
            Self::Host => "host memory",
            Self::AddressSpace => "virtual address space",
        })
    }
}

/// Where one queue's pointers stood when a wait failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueState {
    /// Queue name (`compute`, `sdma`) and the device's gpu_id.
    pub name: String,
    /// Read pointer the GPU last published (queue units: PM4 dwords, SDMA bytes).
    pub rptr: u64,
    /// Write pointer the driver last published (same unit).
    pub wptr: u64,
}

/// What a failed wait was waiting for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Waited {
    /// A signal's value to reach [`WaitReport::expected`] (at [`WaitReport::signal_addr`]).
    Signal,
    /// Room in the named queue's ring: its read pointer ([`WaitReport::seen`], whose address
    /// is [`WaitReport::signal_addr`]) to move.
    RingSpace(String),
    /// Nothing: the fault was already there when the device was opened.
    DeviceOpen,
}

/// What a failed wait saw: enough to tell a slow GPU from a hung or faulted one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitReport {
    /// What the wait was for.
    pub waited: Waited,
    /// The signal's GPU address (the read pointer's for [`Waited::RingSpace`]).
    pub signal_addr: GpuVa,
    /// The value waited for.
    pub expected: u64,
    /// The last value read.
    pub seen: u64,
    /// How long the wait lasted, in milliseconds.
    pub waited_ms: u64,
    /// Every queue of the device, at the time of the failure.
    pub queues: Vec<QueueState>,
    /// The faulting GPU virtual address, when KFD reported a memory fault.
    pub fault_addr: Option<u64>,
    /// KFD's hardware-exception or memory-fault description, with the reason the port gave
    /// (a simulator's), when there was a fault.
    pub fault: Option<String>,
}

impl fmt::Display for WaitReport {
    /// A fault first (what and where), then what the wait saw, then the queues. The signal
    /// part never claims a value is short of its target when it is not: a signal that reached
    /// its target before the fault was found says so (the fault is in later work).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let faulted = self.fault_addr.is_some() || self.fault.is_some();
        match (self.fault_addr, &self.fault) {
            (Some(addr), Some(what)) => write!(f, "GPU memory fault at {addr:#x}: {what}")?,
            (Some(addr), None) => write!(f, "GPU memory fault at {addr:#x}")?,
            (None, Some(what)) => f.write_str(what)?,
            (None, None) => {}
        }
        let sep = if faulted { "; then " } else { "" };
        let ms = self.waited_ms;
        match &self.waited {
            Waited::DeviceOpen => {
                if faulted {
                    f.write_str("; found when the device was opened")?;
                }
            }
            Waited::Signal if self.seen >= self.expected => write!(
                f,
                "{sep}signal at {} had reached {} (waited for >= {}) after {ms} ms{}",
                self.signal_addr,
                self.seen,
                self.expected,
                if faulted {
                    ": the work waited for completed, the fault is in work queued after it"
                } else {
                    ", just as the wait gave up"
                }
            )?,
            Waited::Signal => write!(
                f,
                "{sep}signal at {} expected >= {} but is {} after {ms} ms",
                self.signal_addr, self.expected, self.seen
            )?,
            Waited::RingSpace(queue) => write!(
                f,
                "{sep}{queue} ring full: its read pointer stayed at {} for {ms} ms",
                self.seen
            )?,
        }
        for q in &self.queues {
            write!(f, "; {} rptr {} wptr {}", q.name, q.rptr, q.wptr)?;
        }
        Ok(())
    }
}

/// Everything that can go wrong in the driver.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A system call (ioctl, mmap, open, ...) failed.
    Sys {
        /// What was being done (`"ALLOC_MEMORY_OF_GPU"`, `"mmap doorbells"`, ...).
        op: &'static str,
        /// The kernel's error.
        errno: Errno,
    },
    /// An allocation did not fit.
    OutOfMemory {
        /// Bytes asked for.
        requested: u64,
        /// Which pool.
        kind: MemoryKind,
        /// The kernel's error (ENOMEM / ENOSPC).
        errno: Errno,
    },
    /// No usable GPU with that index or gpu_id.
    NoSuchDevice {
        /// What was asked for.
        wanted: String,
        /// How many usable GPUs there are.
        available: usize,
    },
    /// The kernel or the topology answered something the driver cannot use.
    Protocol(String),
    /// An argument was out of range (sizes, launch dimensions, kernel name, ...).
    InvalidArgument(String),
    /// A code object could not be loaded, or a kernel in it cannot run with hcq's dispatch.
    CodeObject {
        /// The kernel asked for and, when core's parser is not the cause, what is wrong.
        what: String,
        /// core's error when it rejected the code object (also [`std::error::Error::source`]):
        /// match on it to tell a bad file from a wrong target or a missing kernel. Boxed, as
        /// it is larger than every other variant.
        source: Option<Box<CodeObjectError>>,
    },
    /// A packet did not encode (a value out of the range its field holds).
    Encode {
        /// What was being encoded.
        what: &'static str,
        /// core's encoder error.
        source: EncodeError,
    },
    /// A command list refused an operation (full, or a patch handle that does not name the
    /// packet it patches).
    Command(CmdError),
    /// A graph's patch table refused a binding or a replay value (missing, too small, out of
    /// the kernels' limits).
    Patch(PatchError),
    /// A wait passed its deadline.
    Timeout(Box<WaitReport>),
    /// The GPU faulted (memory fault or hardware exception) while the driver waited.
    DeviceFault(Box<WaitReport>),
    /// A resource the driver needs is exhausted (signal slots, KFD events, ...).
    Exhausted(&'static str),
    /// A two-queue submission ([`crate::Device::submit_pair`]) reached the copy ring but the
    /// compute ring refused its part: the copy part waits for a timeline value that nothing
    /// will complete, so `value` never completes and the device must be dropped and opened
    /// again.
    PartialSubmit {
        /// The timeline value of the submission (it stays taken).
        value: u64,
        /// Why the compute ring refused.
        cause: Box<Error>,
    },
}

impl Error {
    /// A failed system call.
    #[must_use]
    pub const fn sys(op: &'static str, errno: Errno) -> Self {
        Self::Sys { op, errno }
    }

    /// An allocation failure: ENOMEM/ENOSPC become [`Error::OutOfMemory`], other errnos stay
    /// [`Error::Sys`].
    #[must_use]
    pub fn alloc(op: &'static str, errno: Errno, requested: u64, kind: MemoryKind) -> Self {
        if errno == Errno::ENOMEM || errno == Errno::ENOSPC {
            Self::OutOfMemory {
                requested,
                kind,
                errno,
            }
        } else {
            Self::Sys { op, errno }
        }
    }

    /// A code object problem core's parser did not report (a kernel hcq's dispatch cannot
    /// serve, an image too large).
    #[must_use]
    pub fn code_object(what: impl Into<String>) -> Self {
        Self::CodeObject {
            what: what.into(),
            source: None,
        }
    }

    /// core's parser rejected the code object while loading `kernel`.
    #[must_use]
    pub fn code_object_parse(kernel: &str, source: CodeObjectError) -> Self {
        Self::CodeObject {
            what: format!("kernel {kernel}"),
            source: Some(Box::new(source)),
        }
    }

    /// The wait report, for [`Error::Timeout`] and [`Error::DeviceFault`].
    #[must_use]
    pub fn wait_report(&self) -> Option<&WaitReport> {
        match self {
            Self::Timeout(r) | Self::DeviceFault(r) => Some(r),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sys { op, errno } => write!(f, "{op} failed: {errno}"),
            Self::OutOfMemory {
                requested,
                kind,
                errno,
            } => write!(f, "out of {kind}: {requested} bytes requested ({errno})"),
            Self::NoSuchDevice { wanted, available } => {
                write!(f, "no usable GPU {wanted} ({available} available)")
            }
            Self::Protocol(m) => write!(f, "unexpected reply from the kernel: {m}"),
            Self::InvalidArgument(m) => write!(f, "invalid argument: {m}"),
            Self::CodeObject {
                what,
                source: Some(e),
            } => write!(f, "code object: {what}: {e}"),
            Self::CodeObject { what, source: None } => write!(f, "code object: {what}"),
            Self::Encode { what, source } => write!(f, "encoding {what}: {source}"),
            Self::Command(e) => write!(f, "command list: {e}"),
            Self::Patch(e) => write!(f, "graph: {e}"),
            Self::Timeout(r) => write!(f, "wait timed out: {r}"),
            Self::DeviceFault(r) => write!(f, "device fault: {r}"),
            Self::Exhausted(what) => write!(f, "out of {what}"),
            Self::PartialSubmit { value, cause } => write!(
                f,
                "submission of timeline value {value} reached the copy queue but not the \
                 compute queue ({cause}); the value will never complete: drop the device and \
                 open it again"
            ),
        }
    }
}

impl core::error::Error for Error {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::Sys { errno, .. } | Self::OutOfMemory { errno, .. } => Some(errno),
            Self::PartialSubmit { cause, .. } => Some(&**cause),
            Self::CodeObject {
                source: Some(e), ..
            } => Some(&**e),
            Self::Encode { source, .. } => Some(source),
            Self::Command(e) => Some(e),
            Self::Patch(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_maps_enomem_to_out_of_memory() {
        let e = Error::alloc("ALLOC", Errno::ENOMEM, 4096, MemoryKind::Vram);
        assert!(matches!(
            e,
            Error::OutOfMemory {
                requested: 4096,
                kind: MemoryKind::Vram,
                ..
            }
        ));
        assert_eq!(
            e.to_string(),
            "out of VRAM: 4096 bytes requested (ENOMEM (12))"
        );
        let e = Error::alloc("ALLOC", Errno::EINVAL, 4096, MemoryKind::Vram);
        assert_eq!(e.to_string(), "ALLOC failed: EINVAL (22)");
    }

    fn report(waited: Waited, expected: u64, seen: u64) -> WaitReport {
        WaitReport {
            waited,
            signal_addr: GpuVa(0x1000),
            expected,
            seen,
            waited_ms: 0,
            queues: vec![],
            fault_addr: None,
            fault: None,
        }
    }

    /// The case issue 16 met: the awaited value was reached, then a later kernel faulted.
    #[test]
    fn a_fault_after_the_target_leads_and_does_not_contradict() {
        let r = WaitReport {
            fault: Some(
                "hardware exception on gpu 0x4928: GPU hang, memory lost: false; simulator: \
                 compute queue 1 at ring dword 88: no host kernel is registered"
                    .into(),
            ),
            ..report(Waited::Signal, 2, 3)
        };
        let msg = Error::DeviceFault(Box::new(r)).to_string();
        assert_eq!(
            msg,
            "device fault: hardware exception on gpu 0x4928: GPU hang, memory lost: false; \
             simulator: compute queue 1 at ring dword 88: no host kernel is registered; then \
             signal at 0x1000 had reached 3 (waited for >= 2) after 0 ms: the work waited for \
             completed, the fault is in work queued after it"
        );
        assert!(!msg.contains("but is"), "{msg}");
    }

    #[test]
    fn every_wait_kind_reads_consistently() {
        // A timeout short of the target.
        let msg = Error::Timeout(Box::new(report(Waited::Signal, 5, 4))).to_string();
        assert_eq!(
            msg,
            "wait timed out: signal at 0x1000 expected >= 5 but is 4 after 0 ms"
        );
        // The value arrived as the wait gave up: no "but is".
        let msg = Error::Timeout(Box::new(report(Waited::Signal, 5, 5))).to_string();
        assert_eq!(
            msg,
            "wait timed out: signal at 0x1000 had reached 5 (waited for >= 5) after 0 ms, just \
             as the wait gave up"
        );
        // A ring that stays full names the queue and the pointer, not a signal target.
        let msg = Error::Timeout(Box::new(report(
            Waited::RingSpace("compute gpu 0x1".into()),
            0,
            96,
        )))
        .to_string();
        assert_eq!(
            msg,
            "wait timed out: compute gpu 0x1 ring full: its read pointer stayed at 96 for 0 ms"
        );
        // A fault found when the device was opened says so, with no signal.
        let r = WaitReport {
            fault: Some("hardware exception on gpu 0x1: GPU hang".into()),
            ..report(Waited::DeviceOpen, 0, 0)
        };
        assert_eq!(
            Error::DeviceFault(Box::new(r)).to_string(),
            "device fault: hardware exception on gpu 0x1: GPU hang; found when the device was \
             opened"
        );
    }

    /// core's typed errors stay reachable: in the variant and through `source()`.
    #[test]
    fn core_errors_are_sources() {
        use core::error::Error as _;
        let enc = EncodeError::ValueTooLarge {
            field: "size",
            value: 1 << 40,
            max: 1 << 22,
        };
        let e = Error::Encode {
            what: "a packet",
            source: enc,
        };
        assert_eq!(e.source().and_then(|s| s.downcast_ref()), Some(&enc));
        assert!(e.to_string().starts_with("encoding a packet: "), "{e}");
        let cmd = CmdError::TooManyCommands { capacity: 8 };
        let e = Error::Command(cmd);
        assert_eq!(e.source().and_then(|s| s.downcast_ref()), Some(&cmd));
        let patch = PatchError::TooManyVars { capacity: 4 };
        let e = Error::Patch(patch);
        assert_eq!(e.source().and_then(|s| s.downcast_ref()), Some(&patch));
        let e = Error::code_object_parse("fill", CodeObjectError::NoSymbolTable);
        assert!(matches!(
            e.source().and_then(|s| s.downcast_ref::<CodeObjectError>()),
            Some(CodeObjectError::NoSymbolTable)
        ));
        assert!(
            e.to_string().starts_with("code object: kernel fill: "),
            "{e}"
        );
        let e = Error::code_object("kernel fill takes the dispatch id");
        assert!(e.source().is_none());
        let e = Error::sys("FREE_MEMORY_OF_GPU", Errno::EIO);
        assert_eq!(e.source().and_then(|s| s.downcast_ref()), Some(&Errno::EIO));
    }

    /// The encoder's errors come out of a command list as [`Error::Encode`].
    #[test]
    fn encoder_errors_keep_their_type() {
        let arch = hcq_core::arch::GfxTarget::parse("gfx1100").unwrap().info();
        let mut c = crate::encode::Cmds::new(crate::queue::QueueType::Compute, arch);
        let e = c
            .indirect_buffer(hcq_core::addr::GpuVa(0x4000), u32::MAX)
            .unwrap_err();
        assert!(
            matches!(
                e,
                Error::Encode {
                    source: EncodeError::ValueTooLarge { .. },
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(
            c.dwords().is_empty(),
            "a refused packet leaves the list unchanged"
        );
    }

    #[test]
    fn error_stays_small() {
        // Results carry it everywhere; large sources are boxed.
        assert!(size_of::<Error>() <= 64, "{}", size_of::<Error>());
    }

    #[test]
    fn wait_report_names_everything() {
        let r = WaitReport {
            waited: Waited::Signal,
            signal_addr: GpuVa(0x1000),
            expected: 5,
            seen: 4,
            waited_ms: 30,
            queues: vec![QueueState {
                name: "compute gpu 1".into(),
                rptr: 10,
                wptr: 20,
            }],
            fault_addr: Some(0xdead_bee1),
            fault: None,
        };
        assert_eq!(
            Error::DeviceFault(Box::new(r)).to_string(),
            "device fault: GPU memory fault at 0xdeadbee1; then signal at 0x1000 expected >= 5 \
             but is 4 after 30 ms; compute gpu 1 rptr 10 wptr 20"
        );
    }
}
