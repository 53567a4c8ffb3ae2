//! Copies: host to GPU and back through two staging buffers and the SDMA queue (chunked, double
//! buffered), GPU to GPU on one device, and transfers between devices.

use crate::device::{Device, GpuBuffer, Staging};
use crate::error::{Error, Result};
use crate::sync::lock;
use hcq_core::addr::GpuVa;
use hcq_core::timeline::TimelineValue;

/// Refuses `len` bytes from `offset` that do not fit `buf`.
fn check_range_at(buf: &GpuBuffer, offset: u64, len: usize, what: &str) -> Result<()> {
    let n = u64::try_from(len).unwrap_or(u64::MAX);
    if offset.checked_add(n).is_none_or(|end| end > buf.len()) {
        return Err(Error::InvalidArgument(format!(
            "{what} of {n} bytes at offset {offset} does not fit the {}-byte buffer",
            buf.len()
        )));
    }
    Ok(())
}

impl Device {
    fn check_owner(&self, buf: &GpuBuffer) -> Result<()> {
        if !std::sync::Arc::ptr_eq(&buf.owner, &self.inner)
            && !buf.bo.mapped_gpus().contains(&self.gpu_id())
        {
            return Err(Error::InvalidArgument(format!(
                "buffer at {} is not mapped to gpu {:#x} (use map_to)",
                buf.va(),
                self.gpu_id()
            )));
        }
        Ok(())
    }

    /// Copies `data` into the start of `dst` through the staging buffers and the copy queue;
    /// returns when the data is queued (staging buffers are reused only after their copy
    /// completed). Later work on this device is ordered after it by the timeline.
    ///
    /// # Errors
    /// `data` longer than `dst`, ring or wait failures.
    pub fn copy_in(&self, dst: &GpuBuffer, data: &[u8]) -> Result<()> {
        self.copy_in_at(dst, 0, data)
    }
    /// [`Device::copy_in`] into `dst` from byte `offset` on (a sub-buffer's data).
    ///
    /// # Errors
    /// `offset + data.len()` past the end of `dst`, ring or wait failures.
    pub fn copy_in_at(&self, dst: &GpuBuffer, offset: u64, data: &[u8]) -> Result<()> {
        self.copy_in_with(dst, offset, data.len(), |m, at, n| {
            let piece = data.get(at..at + n).ok_or_else(|| {
                Error::Protocol(format!("copy_in chunk {at}+{n} of {} bytes", data.len()))
            })?;
            m.write_bytes(0, piece)
        })
    }

    /// [`Device::copy_in_at`] from `len` bytes at the raw pointer `src`, for memory Rust does
    /// not own and others may write meanwhile (a Python array another thread writes): each
    /// chunk is copied straight from `src` into a staging buffer with one raw copy, never
    /// through a `&[u8]` over `src` (which would promise the bytes do not change). A writer
    /// racing the copy makes the bytes copied a mix of old and new, as for a C `memcpy`.
    ///
    /// # Safety
    /// `src` is valid for reads of `len` bytes (it stays allocated and mapped) until this
    /// returns, and is not GPU memory of this device's staging buffers.
    ///
    /// # Errors
    /// As [`Device::copy_in_at`].
    pub unsafe fn copy_in_raw(
        &self,
        dst: &GpuBuffer,
        offset: u64,
        src: *const u8,
        len: usize,
    ) -> Result<()> {
        self.copy_in_with(dst, offset, len, |m, at, n| {
            // SAFETY: `at + n <= len` (the chunks of `copy_in_with` cover `0..len`), so the
            // caller's contract makes `n` bytes at `src + at` readable and outside the staging
            // buffer `m`; `wrapping_add` stays inside that range.
            unsafe { m.write_raw(0, src.wrapping_add(at), n) }
        })
    }

    /// The copy-in loop: `len` bytes in staging-sized chunks, `write(staging, at, n)` filling
    /// a staging buffer with source bytes `at .. at + n` once its last copy completed, then
    /// the SDMA copy of it into `dst` at `offset + at`.
    fn copy_in_with(
        &self,
        dst: &GpuBuffer,
        offset: u64,
        len: usize,
        mut write: impl FnMut(&crate::mem::Mapping, usize, usize) -> Result<()>,
    ) -> Result<()> {
        self.check_owner(dst)?;
        check_range_at(dst, offset, len, "copy_in")?;
        let dev = &self.inner;
        let mut guard = lock(&dev.staging);
        if guard.is_none() {
            *guard = Some(Staging::new(dev)?);
        }
        let Some(st) = guard.as_mut() else {
            return Err(Error::Protocol("staging buffers".into()));
        };
        let [first, _] = &st.bufs;
        let chunk = usize::try_from(first.size()).unwrap_or(usize::MAX).max(1);
        let mut at = 0;
        while at < len {
            let n = chunk.min(len - at);
            // 0 or 1 by construction (`& 1`): every chunk goes through a staging buffer, none
            // is skipped.
            let b = st.next & 1;
            st.next = b ^ 1;
            if !seeded!(CopyInReusesStaging) {
                // PANIC: `b` is 0 or 1 (`& 1`), the arrays have 2 entries.
                dev.wait_value(st.last[b])?;
            }
            // PANIC: as above.
            let bo = &st.bufs[b];
            write(bo.mapping(), at, n)?;
            // CAST: usize -> u64 is lossless on the 64-bit hosts KFD runs on.
            let off = offset + at as u64;
            // CAST: as above.
            let (src, n64) = (bo.va(), n as u64);
            let value = dev.submit_copy(|s| s.cmds.copy(dst.va().offset(off), GpuVa(src), n64))?;
            if let Some(l) = st.last.get_mut(b) {
                *l = value;
            }
            at += n;
        }
        Ok(())
    }

    /// Copies the start of `src` into `out` through the staging buffers; returns when `out` is
    /// filled (after all earlier work on this device).
    ///
    /// # Errors
    /// `out` longer than `src`, ring or wait failures.
    pub fn copy_out(&self, src: &GpuBuffer, out: &mut [u8]) -> Result<()> {
        self.copy_out_at(src, 0, out)
    }
    /// [`Device::copy_out`] from `src` at byte `offset` on (a sub-buffer's data).
    ///
    /// # Errors
    /// `offset + out.len()` past the end of `src`, ring or wait failures.
    pub fn copy_out_at(&self, src: &GpuBuffer, offset: u64, out: &mut [u8]) -> Result<()> {
        let total = out.len();
        self.copy_out_with(src, offset, total, |m, at, n| {
            let Some(dst) = out.get_mut(at..at + n) else {
                return Err(Error::Protocol(format!(
                    "copy_out chunk {at}+{n} of {total} bytes"
                )));
            };
            m.read_bytes(0, dst)
        })
    }

    /// [`Device::copy_out_at`] into `len` bytes at the raw pointer `dst`, for memory Rust does
    /// not own and others may use meanwhile (a Python array): each chunk is copied straight
    /// from a staging buffer into `dst` with one raw copy, never through a `&mut [u8]` over
    /// `dst`. Another thread reading or writing there meanwhile sees or leaves a mix of bytes,
    /// as with a C `memcpy`.
    ///
    /// # Safety
    /// `dst` is valid for writes of `len` bytes (it stays allocated and mapped writable) until
    /// this returns, and is not GPU memory of this device's staging buffers.
    ///
    /// # Errors
    /// As [`Device::copy_out_at`].
    pub unsafe fn copy_out_raw(
        &self,
        src: &GpuBuffer,
        offset: u64,
        dst: *mut u8,
        len: usize,
    ) -> Result<()> {
        self.copy_out_with(src, offset, len, |m, at, n| {
            // SAFETY: `at + n <= len` (the chunks of `copy_out_with` cover `0..len`), so the
            // caller's contract makes `n` bytes at `dst + at` writable and outside the staging
            // buffer `m`; `wrapping_add` stays inside that range.
            unsafe { m.read_raw(0, dst.wrapping_add(at), n) }
        })
    }

    /// The copy-out loop: `len` bytes in staging-sized chunks, each copied into a staging
    /// buffer by the SDMA queue (the next chunk's copy queued before this one is read back),
    /// then `read(staging, at, n)` once it completed, for bytes `at .. at + n`.
    fn copy_out_with(
        &self,
        src: &GpuBuffer,
        offset: u64,
        len: usize,
        mut read: impl FnMut(&crate::mem::Mapping, usize, usize) -> Result<()>,
    ) -> Result<()> {
        self.check_owner(src)?;
        check_range_at(src, offset, len, "copy_out")?;
        let dev = &self.inner;
        let mut guard = lock(&dev.staging);
        if guard.is_none() {
            *guard = Some(Staging::new(dev)?);
        }
        let Some(st) = guard.as_mut() else {
            return Err(Error::Protocol("staging buffers".into()));
        };
        let [first, _] = &st.bufs;
        let chunk = usize::try_from(first.size()).unwrap_or(usize::MAX).max(1);
        let n_chunks = len.div_ceil(chunk);
        // Pipelined: the copy of chunk i+1 is queued before chunk i is read back.
        // (chunk index, staging, value)
        let mut queued: Option<(usize, usize, TimelineValue)> = None;
        let total = len;
        let submit = |i: usize, b: usize, st: &mut Staging| -> Result<TimelineValue> {
            // PANIC: `b` is 0 or 1 (`next & 1`), the arrays have 2 entries.
            dev.wait_value(st.last[b])?;
            let off = i * chunk;
            // CAST: usize -> u64 is lossless on 64-bit hosts.
            let n = chunk.min(total - off) as u64;
            // PANIC: as above, `b` is 0 or 1.
            let dstva = GpuVa(st.bufs[b].va());
            // CAST: usize -> u64 is lossless on 64-bit hosts.
            let at = offset + off as u64;
            let value = dev.submit_copy(|s| s.cmds.copy(dstva, src.va().offset(at), n))?;
            // PANIC: as above.
            st.last[b] = value;
            Ok(value)
        };
        for i in 0..n_chunks {
            let b = st.next & 1;
            st.next = b ^ 1;
            let value = submit(i, b, st)?;
            if let Some((pi, pb, pv)) = queued.replace((i, b, value)) {
                self.read_back(st, pi, pb, pv, chunk, total, &mut read)?;
            }
        }
        if let Some((pi, pb, pv)) = queued {
            self.read_back(st, pi, pb, pv, chunk, total, &mut read)?;
        }
        Ok(())
    }

    /// Reads chunk `i` back from staging buffer `b` once `value` (its copy) completed.
    #[allow(clippy::too_many_arguments)]
    fn read_back(
        &self,
        st: &Staging,
        i: usize,
        b: usize,
        value: TimelineValue,
        chunk: usize,
        total: usize,
        read: &mut impl FnMut(&crate::mem::Mapping, usize, usize) -> Result<()>,
    ) -> Result<()> {
        let dev = &self.inner;
        if !seeded!(CopyOutSkipsWait) {
            dev.wait_value(value)?;
        }
        let off = i * chunk;
        let n = chunk.min(total.saturating_sub(off));
        let b = if seeded!(CopyOutReadsOtherStaging) {
            b ^ 1
        } else {
            b
        };
        let Some(bo) = st.bufs.get(b) else {
            return Err(Error::Protocol("staging buffer index".into()));
        };
        read(bo.mapping(), off, n)
    }

    /// Copies all of `src` into the start of `dst` on this device's copy queue; returns the
    /// timeline value that completes it.
    ///
    /// # Errors
    /// `src` larger than `dst`, buffers not mapped here, ring failures.
    pub fn copy(&self, dst: &GpuBuffer, src: &GpuBuffer) -> Result<TimelineValue> {
        self.check_owner(dst)?;
        self.check_owner(src)?;
        let n = src.len();
        if n > dst.len() {
            return Err(Error::InvalidArgument(format!(
                "copy of {n} bytes into a {}-byte buffer",
                dst.len()
            )));
        }
        // `src` may be VRAM the CPU wrote through its mapping: flush HDP before the copy reads.
        self.inner.submit_copy(|s| {
            if !seeded!(DeviceCopyWithoutHdpFlush) {
                s.cmds.memory_barrier()?;
            }
            s.cmds.copy(dst.va(), src.va(), n)
        })
    }

    /// Copies `size` bytes from `src` + `src_off` to `dst` + `dst_off` on this device's copy
    /// queue.
    ///
    /// # Errors
    /// Ranges outside the buffers, buffers not mapped here, ring failures.
    pub fn copy_range(
        &self,
        dst: &GpuBuffer,
        dst_off: u64,
        src: &GpuBuffer,
        src_off: u64,
        size: u64,
    ) -> Result<TimelineValue> {
        self.check_owner(dst)?;
        self.check_owner(src)?;
        let fits = |b: &GpuBuffer, off: u64| off.checked_add(size).is_some_and(|e| e <= b.len());
        if !fits(dst, dst_off) || !fits(src, src_off) {
            return Err(Error::InvalidArgument(format!(
                "copy of {size} bytes from offset {src_off} of {} B to offset {dst_off} of {} B",
                src.len(),
                dst.len()
            )));
        }
        self.inner.submit_copy(|s| {
            s.cmds.memory_barrier()?;
            s.cmds
                .copy(dst.va().offset(dst_off), src.va().offset(src_off), size)
        })
    }

    /// Copies all of `src` (on `src_dev`) into `dst` (on `dst_dev`) with `src_dev`'s copy
    /// queue, as the seed does: `dst` is mapped to `src_dev`, the copy waits for both devices'
    /// earlier work, and `dst_dev`'s compute queue waits for the copy, so later work on either
    /// device sees the data.
    ///
    /// # Errors
    /// Mapping the buffer to the peer, sizes, ring failures.
    pub fn transfer(
        dst_dev: &Device,
        dst: &GpuBuffer,
        src_dev: &Device,
        src: &GpuBuffer,
    ) -> Result<()> {
        src_dev.check_owner(src)?;
        dst.map_to(src_dev)?;
        let n = src.len();
        if n > dst.len() {
            return Err(Error::InvalidArgument(format!(
                "transfer of {n} bytes into a {}-byte buffer",
                dst.len()
            )));
        }
        // The copy waits for the destination device's work so far (it may still use `dst`).
        let dst_wait = dst_dev.timeline_target(dst_dev.last_value());
        let value = src_dev.inner.submit_copy(|s| {
            if let Some((sig, v)) = &dst_wait {
                s.cmds.wait(sig, *v)?;
            }
            s.cmds.memory_barrier()?;
            s.cmds.copy(dst.va(), src.va(), n)
        })?;
        // And the destination's later work waits for the copy.
        if let Some((sig, v)) = src_dev.timeline_target(value) {
            dst_dev.inner.submit_compute(|s| s.cmds.wait(&sig, v))?;
        }
        Ok(())
    }
}
