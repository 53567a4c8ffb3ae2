//! Command lists from core (`Pm4List`, `SdmaList`) submitted as they are, or bound: copied into
//! GPU memory once and sent as an indirect buffer, patched in place between runs.

use crate::device::{BufferKind, Device, GpuBuffer};
use crate::error::{Error, Result};
use crate::sync::lock;
use core::sync::atomic::AtomicU32;
use hcq_core::addr::GpuVa;
use hcq_core::cmd::{CmdError, Pm4List, SdmaList};
use hcq_core::timeline::TimelineValue;
use std::sync::Mutex;

fn cmd_err(e: CmdError) -> Error {
    Error::Command(e)
}

impl Device {
    /// Submits a PM4 command list on the compute queue (after the work so far; the driver
    /// brackets it with its timeline wait and signal). Returns its timeline value.
    ///
    /// # Safety
    /// The [submission contract](Device#submission-contract), for every packet of `list`.
    ///
    /// # Errors
    /// Ring errors, a list larger than the ring, faults while waiting for space.
    pub unsafe fn submit_pm4<const N: usize, const C: usize>(
        &self,
        list: &Pm4List<N, C>,
    ) -> Result<TimelineValue> {
        self.inner.submit_compute(|s| s.cmds.raw(list.as_dwords()))
    }

    /// Submits an SDMA command list on the copy queue, like [`Device::submit_pm4`].
    ///
    /// # Safety
    /// As [`Device::submit_pm4`].
    ///
    /// # Errors
    /// As [`Device::submit_pm4`].
    pub unsafe fn submit_sdma<const N: usize, const C: usize, const P: usize>(
        &self,
        list: &SdmaList<N, C, P>,
    ) -> Result<TimelineValue> {
        self.inner.submit_copy(|s| s.cmds.raw(list.as_dwords()))
    }

    /// Copies a PM4 command list into GPU memory, for [`BoundList::submit`] (one
    /// INDIRECT_BUFFER packet per run) and in-place patching.
    ///
    /// # Errors
    /// An empty list, allocation failures.
    pub fn bind_pm4<const N: usize, const C: usize>(
        &self,
        list: &Pm4List<N, C>,
    ) -> Result<BoundList> {
        let dwords = list.as_dwords();
        if dwords.is_empty() {
            return Err(Error::InvalidArgument(
                "cannot bind an empty command list".into(),
            ));
        }
        let len = u32::try_from(dwords.len())
            .map_err(|_| Error::InvalidArgument("command list too long to bind".into()))?;
        let buf = self.alloc(u64::from(len) * 4, BufferKind::GttUncached)?;
        let bytes: Vec<u8> = dwords.iter().flat_map(|d| d.to_le_bytes()).collect();
        buf.write(0, &bytes)?;
        Ok(BoundList {
            device: self.clone(),
            buf,
            dwords: len,
            last: Mutex::new(TimelineValue::ZERO),
        })
    }
}

/// A PM4 command list living in GPU memory (tinygrad's `bind`): each [`BoundList::submit`]
/// puts one INDIRECT_BUFFER on the ring; [`BoundList::patch`] edits it in place once the
/// previous run finished.
#[derive(Debug)]
pub struct BoundList {
    device: Device,
    buf: GpuBuffer,
    dwords: u32,
    /// Timeline value of the last run.
    last: Mutex<TimelineValue>,
}

impl BoundList {
    /// GPU address of the commands.
    #[must_use]
    pub fn va(&self) -> GpuVa {
        self.buf.va()
    }

    /// Length in dwords.
    #[must_use]
    pub fn dwords(&self) -> u32 {
        self.dwords
    }

    /// Runs the bound commands once; returns the timeline value that completes the run.
    ///
    /// # Safety
    /// The [submission contract](Device#submission-contract), for every packet of the bound
    /// list as it is now (after any [`BoundList::patch`]).
    ///
    /// # Errors
    /// Ring errors.
    pub unsafe fn submit(&self) -> Result<TimelineValue> {
        let mut last = lock(&self.last);
        let (va, n) = (self.buf.va(), self.dwords);
        let v = self
            .device
            .inner
            .submit_compute(|s| s.cmds.indirect_buffer(va, n))?;
        *last = v;
        Ok(v)
    }

    /// Waits for the last run to finish, then lets `f` patch the commands in GPU memory with
    /// core's patch operations (`hcq_core::cmd::patch::*` on the `&[AtomicU32]` view, with the
    /// handles the list's builders returned).
    ///
    /// # Errors
    /// The wait's errors, or the patch's (a handle that does not name the packet it patches).
    pub fn patch(
        &self,
        f: impl FnOnce(&mut &[AtomicU32]) -> core::result::Result<(), CmdError>,
    ) -> Result<()> {
        let last = lock(&self.last);
        self.device.inner.wait_value(*last)?;
        let all = self.buf.bo.mapping().u32s();
        // CAST: u32 -> usize is lossless on 64-bit hosts.
        let mut view = all.get(..self.dwords as usize).unwrap_or_default();
        f(&mut view).map_err(cmd_err)
    }
}
