//! [`GpuBuffer`]: GPU memory owned by a device, and its CPU access.

#[allow(clippy::wildcard_imports)]
use super::*;

/// GPU memory mapped at one virtual address for the CPU and every GPU it is mapped to.
///
/// Dropping it waits until the GPUs it is mapped to have finished the work submitted so far
/// (so nothing frees memory a queue may still use), then unmaps and frees it. If that wait
/// fails (the GPU hung), the memory is leaked rather than freed under the GPU.
#[derive(Debug)]
pub struct GpuBuffer {
    pub(crate) bo: Arc<Bo>,
    pub(super) len: u64,
    pub(super) kind: BufferKind,
    pub(crate) owner: Arc<DeviceInner>,
    pub(super) peers: Mutex<Vec<Arc<DeviceInner>>>,
}

impl GpuBuffer {
    /// GPU (and CPU) virtual address.
    #[must_use]
    pub fn va(&self) -> GpuVa {
        GpuVa(self.bo.va())
    }

    /// Size asked for, in bytes.
    #[must_use]
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the buffer is mapped on `dev` (allocated there, or mapped to it as a peer).
    #[must_use]
    pub fn is_mapped_on(&self, dev: &Device) -> bool {
        Arc::ptr_eq(&self.owner, &dev.inner)
            || lock(&self.peers).iter().any(|p| Arc::ptr_eq(p, &dev.inner))
    }

    /// Whether the buffer is empty (never: size 0 is refused).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The memory kind.
    #[must_use]
    pub fn kind(&self) -> BufferKind {
        self.kind
    }

    /// Maps the buffer into `other`'s VM (same address), for peer access and transfers.
    ///
    /// # Errors
    /// MAP_MEMORY_TO_GPU failing (a peer that cannot reach this memory).
    pub fn map_to(&self, other: &Device) -> Result<()> {
        self.bo.map_to(other.gpu_id())?;
        let mut peers = lock(&self.peers);
        if !Arc::ptr_eq(&other.inner, &self.owner)
            && !peers.iter().any(|p| Arc::ptr_eq(p, &other.inner))
        {
            peers.push(Arc::clone(&other.inner));
        }
        Ok(())
    }

    /// Writes `data` at byte `offset` from the CPU, after waiting for the GPUs' work so far.
    /// Only for CPU-visible kinds (everything but [`BufferKind::Vram`]).
    ///
    /// # Errors
    /// Out-of-range writes, a non-CPU-visible buffer, or a failed wait.
    pub fn write(&self, offset: u64, data: &[u8]) -> Result<()> {
        self.check_cpu(offset, data.len())?;
        self.quiesce()?;
        self.bo.mapping().write_bytes(offset, data)
    }

    /// Reads bytes at `offset` into `out` from the CPU, after waiting for the GPUs' work so far.
    ///
    /// # Errors
    /// As [`GpuBuffer::write`].
    pub fn read(&self, offset: u64, out: &mut [u8]) -> Result<()> {
        self.check_cpu(offset, out.len())?;
        self.quiesce()?;
        self.bo.mapping().read_bytes(offset, out)
    }

    pub(super) fn check_cpu(&self, offset: u64, len: usize) -> Result<()> {
        if self.kind == BufferKind::Vram {
            return Err(Error::InvalidArgument(
                "buffer is VRAM without CPU access: use copy_in/copy_out".into(),
            ));
        }
        let end = u64::try_from(len).ok().and_then(|l| offset.checked_add(l));
        if end.is_none_or(|e| e > self.len) {
            return Err(Error::InvalidArgument(format!(
                "{len} bytes at offset {offset} exceed the {}-byte buffer",
                self.len
            )));
        }
        Ok(())
    }

    /// Frees the buffer now, reporting failures that dropping it can only log: waits for
    /// the GPUs it is mapped to, unmaps it from them, FREEs it, then unmaps the CPU view.
    ///
    /// # Errors
    /// The wait's error ([`Error::Timeout`], [`Error::DeviceFault`]) or the UNMAP/FREE
    /// ioctl's, with the buffer handed back still allocated and usable as before (mapped
    /// back to its GPUs if the UNMAP had succeeded): retry, keep it, or drop it.
    pub fn free(mut self) -> core::result::Result<(), (Error, GpuBuffer)> {
        if let Err(e) = self.quiesce() {
            return Err((e, self));
        }
        let Some(bo) = Arc::get_mut(&mut self.bo) else {
            let e = Error::Protocol("buffer object shared beyond its GpuBuffer".into());
            return Err((e, self));
        };
        match bo.free_now() {
            // Drop waits again (nothing new: `self` was not used since) and unmaps the CPU
            // view; FREE is not repeated.
            Ok(()) => Ok(()),
            Err(e) => Err((e, self)),
        }
    }

    /// Waits until every device this buffer is mapped to has finished its submitted work.
    pub(crate) fn quiesce(&self) -> Result<()> {
        let mut devs = vec![Arc::clone(&self.owner)];
        devs.extend(lock(&self.peers).iter().cloned());
        for d in devs {
            let last = d.last_value();
            d.wait_value(last)?;
        }
        Ok(())
    }
}

impl Drop for GpuBuffer {
    fn drop(&mut self) {
        match self.quiesce() {
            Ok(()) => {}
            // The fault was the caller's error already, and a faulted queue runs nothing more
            // (KFD stops the process's queues): the buffer can be freed.
            Err(crate::Error::DeviceFault(_)) => {
                log::debug!("buffer at {}: freed after a device fault", self.va());
            }
            Err(e) => {
                log::error!(
                    "buffer at {} dropped while its GPU is not idle ({e}); leaking it",
                    self.va()
                );
                core::mem::forget(Arc::clone(&self.bo));
            }
        }
    }
}
