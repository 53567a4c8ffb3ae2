//! [`KfdCore`]: the raw KFD handle. The port, the `/dev/kfd` file and the render nodes whose
//! VM was acquired; every buffer object and event holds it, so the files close last.
//!
//! It sits right over the OS port: buffers, signals and queues are built on it, and the public
//! [`Kfd`](crate::Kfd) (topology, shared signal pages) over those.

use crate::error::{Error, Result};
use crate::sync::lock;
use hcq_core::kfd::{self as abi, Errno, Fd, Ioctl, KfdSys, PlainArgs, Request};
use log::{debug, trace};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The open files: what every buffer object and event needs to be freed. Closes them on drop.
pub(crate) struct KfdCore {
    pub(crate) sys: Arc<dyn KfdSys>,
    pub(crate) fd: Fd,
    /// Render-node fds whose VM was acquired, by gpu_id (ACQUIRE_VM once per GPU and file).
    render_fds: Mutex<HashMap<u32, Fd>>,
}

impl core::fmt::Debug for KfdCore {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("KfdCore")
            .field("fd", &self.fd)
            .finish_non_exhaustive()
    }
}

impl KfdCore {
    /// Owns `fd` (`/dev/kfd` opened through `sys`) from here on: dropping closes it.
    pub(crate) fn new(sys: Arc<dyn KfdSys>, fd: Fd) -> Self {
        Self {
            sys,
            fd,
            render_fds: Mutex::new(HashMap::new()),
        }
    }

    /// Issues `io` on the argument struct `arg` (no user pointers in it), logging it.
    pub(crate) fn ioctl<A: PlainArgs>(&self, io: Ioctl<A>, arg: &mut A) -> Result<(), Errno> {
        self.request(io.name(), Request::new(io, arg))
    }

    /// Issues a request built by one of [`Request`]'s constructors, logging it as `name`.
    pub(crate) fn request(&self, name: &str, req: Request<'_>) -> Result<(), Errno> {
        let r = self.sys.ioctl(self.fd, req);
        match r {
            Ok(()) => trace!("{name} ok"),
            Err(e) => debug!("{name} failed: {e}"),
        }
        r
    }

    /// A teardown ioctl (FREE, DESTROY_*), retried once: teardown runs in `Drop`, where a
    /// transient failure (EINTR, EAGAIN, an injected fault) would otherwise leak the object.
    pub(crate) fn ioctl_teardown<A: PlainArgs>(
        &self,
        io: Ioctl<A>,
        arg: &mut A,
    ) -> Result<(), Errno> {
        match self.ioctl(io, arg) {
            Ok(()) => Ok(()),
            Err(e) => {
                log::warn!("{} failed ({e}); retrying once", io.name());
                self.ioctl(io, arg)
            }
        }
    }

    /// UNMAP_MEMORY_FROM_GPU from `device_ids`, retried once as [`KfdCore::ioctl_teardown`].
    /// The kernel writes the arguments back even on failure (`n_success` says where a retry
    /// resumes), so the retry reuses them as they came back.
    pub(crate) fn unmap_teardown(
        &self,
        arg: &mut abi::MapMemoryToGpuArgs,
        device_ids: &[u32],
    ) -> Result<(), Errno> {
        let io = abi::AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU;
        match self.request(io.name(), Request::map_memory(io, arg, device_ids)) {
            Ok(()) => Ok(()),
            Err(e) => {
                log::warn!("{} failed ({e}); retrying once", io.name());
                self.request(io.name(), Request::map_memory(io, arg, device_ids))
            }
        }
    }

    /// The render-node fd of GPU `gpu_id` (DRM render minor `render_minor`), opening it and
    /// acquiring the VM the first time.
    pub(crate) fn acquire_vm(&self, gpu_id: u32, render_minor: u32) -> Result<Fd> {
        let mut fds = lock(&self.render_fds);
        if let Some(fd) = fds.get(&gpu_id) {
            return Ok(*fd);
        }
        let path = format!("/dev/dri/renderD{render_minor}");
        let fd = self
            .sys
            .open(&path)
            .map_err(|e| Error::sys("open render node", e))?;
        let raw = u32::try_from(fd.0).map_err(|_| {
            let _ = self.sys.close(fd);
            Error::Protocol(format!("open({path}) returned negative fd {}", fd.0))
        })?;
        let mut args = abi::AcquireVmArgs {
            drm_fd: raw,
            gpu_id,
        };
        if let Err(e) = self.ioctl(abi::AMDKFD_IOC_ACQUIRE_VM, &mut args) {
            let _ = self.sys.close(fd);
            return Err(Error::sys("ACQUIRE_VM", e));
        }
        debug!("gpu {gpu_id:#x}: VM acquired on {path}");
        fds.insert(gpu_id, fd);
        Ok(fd)
    }

    /// The render-node fd whose VM [`KfdCore::acquire_vm`] acquired for `gpu_id` (buffer objects
    /// are mapped through it).
    pub(crate) fn render_fd(&self, gpu_id: u32) -> Result<Fd> {
        lock(&self.render_fds).get(&gpu_id).copied().ok_or_else(|| {
            Error::InvalidArgument(format!(
                "gpu {gpu_id:#x} has no acquired VM (open its Device first)"
            ))
        })
    }
}

impl Drop for KfdCore {
    fn drop(&mut self) {
        // Every buffer object and event holds an Arc to this, so they are all gone already.
        for (_, fd) in lock(&self.render_fds).drain() {
            let _ = self.sys.close(fd);
        }
        if let Err(e) = self.sys.close(self.fd) {
            log::error!("closing /dev/kfd failed: {e}");
        }
    }
}
