//! GPU memory as the interpreter's waves see it: the [`Memory`] trait (byte, dword and
//! per-lane gather/scatter accesses, with defaults built on the byte ones) and [`FlatMemory`],
//! one flat block of memory for tests, benches and fuzzing.

use crate::vm::{Access, VmFault, VmFaultKind};
use core::sync::atomic::{AtomicU64, Ordering};

/// GPU memory as the waves see it.
pub trait Memory {
    /// Copies `buf.len()` bytes at `va` into `buf` (`access`: read or instruction fetch).
    ///
    /// # Errors
    /// The first byte that is not accessible.
    fn read(&self, va: u64, buf: &mut [u8], access: Access) -> Result<(), VmFault>;
    /// Copies `data` to `va`.
    ///
    /// # Errors
    /// The first byte that is not writable.
    fn write(&self, va: u64, data: &[u8]) -> Result<(), VmFault>;
    /// Reads `out.len()` little-endian dwords at `va`: the same bytes, fault and access as
    /// [`Memory::read`] of `4 * out.len()` bytes (which the default does), in a form a
    /// memory of words may copy without the byte view.
    ///
    /// # Errors
    /// As [`Memory::read`].
    fn read_dwords(&self, va: u64, out: &mut [u32]) -> Result<(), VmFault> {
        read_dwords_bytes(self, va, out)
    }
    /// Writes `data` as little-endian dwords at `va`: the same bytes and fault as
    /// [`Memory::write`] of their bytes (which the default does).
    ///
    /// # Errors
    /// As [`Memory::write`].
    fn write_dwords(&self, va: u64, data: &[u32]) -> Result<(), VmFault> {
        write_dwords_bytes(self, va, data)
    }
    /// Reads `out.len() / addrs.len()` dwords at each of `addrs` (a wave's lanes) into
    /// consecutive runs of `out`, lane `l`'s at `out[l * n..(l + 1) * n]`: the same bytes,
    /// faults and accesses as one [`Memory::read_dwords`] per address in lane order (which
    /// the default does), in a form a memory may run without a call per lane.
    ///
    /// # Errors
    /// As [`Memory::read_dwords`], of the first lane that faults.
    fn read_lanes(&self, addrs: &[u64], out: &mut [u32]) -> Result<(), VmFault> {
        let n = out.len().checked_div(addrs.len()).unwrap_or(0);
        for (va, chunk) in addrs.iter().zip(out.chunks_exact_mut(n.max(1))) {
            self.read_dwords(*va, chunk)?;
        }
        Ok(())
    }
    /// Writes `data.len() / addrs.len()` dwords at each of `addrs` (a wave's lanes) from
    /// consecutive runs of `data`: the same bytes and faults as one [`Memory::write_dwords`]
    /// per address in lane order (which the default does; a later lane's bytes overwrite an
    /// earlier one's).
    ///
    /// # Errors
    /// As [`Memory::write_dwords`], of the first lane that faults (earlier lanes written).
    fn write_lanes(&self, addrs: &[u64], data: &[u32]) -> Result<(), VmFault> {
        let n = data.len().checked_div(addrs.len()).unwrap_or(0);
        for (va, chunk) in addrs.iter().zip(data.chunks_exact(n.max(1))) {
            self.write_dwords(*va, chunk)?;
        }
        Ok(())
    }
    /// A line fill of the scalar cache: reads as [`Memory::read`] does, but the bytes are
    /// fetched ahead, not used; what the kernel uses of them is [`Memory::used`] (the race
    /// detector records that, so a kernel reading 32 bytes of kernargs does not read the next
    /// launch's bytes in the same line). Default: [`Memory::read`].
    ///
    /// # Errors
    /// As [`Memory::read`].
    fn fill(&self, va: u64, buf: &mut [u8], access: Access) -> Result<(), VmFault> {
        self.read(va, buf, access)
    }
    /// The kernel used `len` bytes at `va` that a [`Memory::fill`] fetched. Default: nothing.
    fn used(&self, va: u64, len: usize) {
        let _ = (va, len);
    }
    /// Reads as [`Memory::read`] (a data read), except that bytes the CPU wrote through its
    /// VRAM mapping after the last HDP flush read as GPU engines see them (what the HDP held)
    /// instead of faulting: the tail of a widened scalar load ([`Space::StaleTail`](super::Space::StaleTail)).
    /// Default: [`Memory::read`].
    ///
    /// # Errors
    /// The first byte that is not accessible (never a stale one, where the memory models the
    /// HDP).
    fn read_visible(&self, va: u64, buf: &mut [u8]) -> Result<(), VmFault> {
        self.read(va, buf, Access::Read)
    }
    /// This memory as one several threads may use at once, when it is: the interpreter then
    /// may run a dispatch's workgroups on several threads (deterministically: see
    /// [`run_threads`](super::run_threads)). `None`, the default, keeps every dispatch on one thread.
    fn shared(&self) -> Option<&(dyn Memory + Sync)> {
        None
    }
}

/// [`Memory::read_dwords`] through [`Memory::read`]: 256 dwords at a time.
fn read_dwords_bytes<M: Memory + ?Sized>(m: &M, va: u64, out: &mut [u32]) -> Result<(), VmFault> {
    let mut buf = [0u8; 1024];
    let mut done = 0;
    for chunk in out.chunks_mut(256) {
        let bytes = buf.get_mut(..4 * chunk.len()).unwrap_or_default();
        // CAST: usize -> u64 widens.
        m.read(va.wrapping_add(done as u64), bytes, Access::Read)?;
        for (x, c) in chunk.iter_mut().zip(bytes.chunks_exact(4)) {
            *x = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        }
        done += 4 * chunk.len();
    }
    Ok(())
}

/// [`Memory::write_dwords`] through [`Memory::write`]: 256 dwords at a time.
fn write_dwords_bytes<M: Memory + ?Sized>(m: &M, va: u64, data: &[u32]) -> Result<(), VmFault> {
    let mut buf = [0u8; 1024];
    let mut done = 0;
    for chunk in data.chunks(256) {
        let bytes = buf.get_mut(..4 * chunk.len()).unwrap_or_default();
        for (c, x) in bytes.chunks_exact_mut(4).zip(chunk) {
            c.copy_from_slice(&x.to_le_bytes());
        }
        // CAST: usize -> u64 widens.
        m.write(va.wrapping_add(done as u64), bytes)?;
        done += 4 * chunk.len();
    }
    Ok(())
}

/// One contiguous block of memory at a GPU address (tests, fuzzing, benchmarks): everything
/// outside it faults as not present.
///
/// The bytes live in relaxed atomic words, not behind a lock: the interpreter's threads (and
/// a wave's every access) read and write them without taking a mutex, and a kernel's racing
/// lanes tear per byte at worst, as on the hardware.
#[derive(Debug)]
pub struct FlatMemory {
    base: u64,
    len: usize,
    words: Box<[AtomicU64]>,
}

impl FlatMemory {
    /// `len` zero bytes at `base`.
    #[must_use]
    pub fn new(base: u64, len: usize) -> Self {
        Self {
            base,
            len,
            words: (0..len.div_ceil(8)).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Copies `data` in at `va` (host side, unchecked beyond the block's bounds).
    ///
    /// # Errors
    /// `va..va+len` outside the block.
    pub fn poke(&self, va: u64, data: &[u8]) -> Result<(), VmFault> {
        Memory::write(self, va, data)
    }

    /// Copies bytes out at `va`.
    ///
    /// # Errors
    /// Outside the block.
    pub fn peek(&self, va: u64, buf: &mut [u8]) -> Result<(), VmFault> {
        Memory::read(self, va, buf, Access::Read)
    }

    /// Whether `n` dwords at each of `addrs` lie inside the block at dword boundaries (then
    /// `Some`: with `true` when every lane's dwords are whole words, `n` even at 8-byte
    /// boundaries); `None` when a lane may fault or is unaligned (the per-lane path).
    #[inline]
    fn lanes_inside(&self, addrs: &[u64], n: usize) -> Option<bool> {
        // CAST: usize -> u64 widens.
        let (bytes, len) = (4 * n as u64, self.len as u64);
        let (mut lo, mut hi, mut bits) = (u64::MAX, 0u64, 0u64);
        for a in addrs {
            lo = lo.min(*a);
            hi = hi.max(*a);
            bits |= a.wrapping_sub(self.base);
        }
        let end = hi.checked_add(bytes)?;
        let inside = lo >= self.base && end - self.base <= len;
        let even = n % 2 == 0 && bits % 8 == 0;
        (inside && bits % 4 == 0 && !addrs.is_empty()).then_some(even)
    }

    /// [`Memory::read_dwords`] (inlined into the lane gather).
    #[inline(always)]
    fn dwords_in(&self, va: u64, out: &mut [u32]) -> Result<(), VmFault> {
        let r = self.range(va, 4 * out.len(), Access::Read)?;
        if r.start % 4 != 0 {
            return read_dwords_bytes(self, va, out);
        }
        // Aligned dwords: each is one half of a word (little-endian: the low half first).
        let mut off = r.start;
        let mut rest = out;
        if off % 8 == 4
            && let Some((first, tail)) = core::mem::take(&mut rest).split_first_mut()
        {
            if let Some(w) = self.words.get(off / 8) {
                // CAST: the high half.
                *first = (w.load(Ordering::Relaxed) >> 32) as u32;
            }
            rest = tail;
            off += 4;
        }
        let words = self.words.get(off / 8..).unwrap_or_default();
        let (pairs, last) = rest.split_at_mut(rest.len() & !1);
        for (p, w) in pairs.chunks_exact_mut(2).zip(words) {
            let x = w.load(Ordering::Relaxed);
            // CAST: halves of a word.
            p[0] = x as u32;
            p[1] = (x >> 32) as u32;
        }
        if let ([x], Some(w)) = (last, words.get(pairs.len() / 2)) {
            // CAST: the low half.
            *x = w.load(Ordering::Relaxed) as u32;
        }
        Ok(())
    }
    /// [`Memory::write_dwords`] (inlined into the lane scatter).
    #[inline(always)]
    fn dwords_out(&self, va: u64, data: &[u32]) -> Result<(), VmFault> {
        let r = self.range(va, 4 * data.len(), Access::Write)?;
        if r.start % 4 != 0 {
            return write_dwords_bytes(self, va, data);
        }
        // A half word replaces only its bytes (other threads may write the other half), as
        // `write` does; whole words are stored.
        let half = |w: &AtomicU64, x: u32, hi: bool| {
            let (mask, val) = if hi {
                (0xffff_ffff_0000_0000, u64::from(x) << 32)
            } else {
                (0xffff_ffff, u64::from(x))
            };
            let _ = w.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |old| {
                Some((old & !mask) | val)
            });
        };
        let mut off = r.start;
        let mut rest = data;
        if off % 8 == 4
            && let Some((first, tail)) = rest.split_first()
        {
            if let Some(w) = self.words.get(off / 8) {
                half(w, *first, true);
            }
            rest = tail;
            off += 4;
        }
        let words = self.words.get(off / 8..).unwrap_or_default();
        let (pairs, last) = rest.split_at(rest.len() & !1);
        for (p, w) in pairs.chunks_exact(2).zip(words) {
            w.store(u64::from(p[0]) | (u64::from(p[1]) << 32), Ordering::Relaxed);
        }
        if let ([x], Some(w)) = (last, words.get(pairs.len() / 2)) {
            half(w, *x, false);
        }
        Ok(())
    }
    #[inline]
    fn range(
        &self,
        va: u64,
        len: usize,
        access: Access,
    ) -> Result<core::ops::Range<usize>, VmFault> {
        let n = self.len;
        let fault = VmFault {
            va,
            access,
            kind: VmFaultKind::NotPresent,
        };
        let off = va.checked_sub(self.base).ok_or(fault)?;
        let off = usize::try_from(off).map_err(|_| fault)?;
        match off.checked_add(len) {
            Some(end) if end <= n => Ok(off..end),
            _ => Err(VmFault {
                va: va.max(self.base + n as u64),
                ..fault
            }),
        }
    }
}

impl Memory for FlatMemory {
    fn shared(&self) -> Option<&(dyn Memory + Sync)> {
        Some(self)
    }
    fn read(&self, va: u64, buf: &mut [u8], access: Access) -> Result<(), VmFault> {
        let r = self.range(va, buf.len(), access)?;
        let mut off = r.start;
        let mut out = buf;
        // Bytes of a word up to alignment, whole words, then the last word's bytes.
        while !out.is_empty() {
            let at = off % 8;
            if at == 0 && out.len() >= 8 {
                let body = out.len() / 8;
                let (dst, rest) = out.split_at_mut(body * 8);
                let src = self.words.get(off / 8..off / 8 + body).unwrap_or_default();
                for (d, w) in dst.chunks_exact_mut(8).zip(src) {
                    d.copy_from_slice(&w.load(Ordering::Relaxed).to_le_bytes());
                }
                out = rest;
                off += body * 8;
                continue;
            }
            let Some(word) = self.words.get(off / 8) else {
                break;
            };
            let w = word.load(Ordering::Relaxed).to_le_bytes();
            let n = (8 - at).min(out.len());
            let (dst, rest) = out.split_at_mut(n);
            for (d, b) in dst.iter_mut().zip(&w[at..]) {
                *d = *b;
            }
            out = rest;
            off += n;
        }
        Ok(())
    }
    fn read_dwords(&self, va: u64, out: &mut [u32]) -> Result<(), VmFault> {
        self.dwords_in(va, out)
    }
    fn read_lanes(&self, addrs: &[u64], out: &mut [u32]) -> Result<(), VmFault> {
        let n = out.len().checked_div(addrs.len()).unwrap_or(0);
        if let Some(even) = self.lanes_inside(addrs, n) {
            // Every lane inside the block at a dword boundary: no fault, each dword one
            // half of a word (the low half first).
            for (va, chunk) in addrs.iter().zip(out.chunks_exact_mut(n.max(1))) {
                // CAST: inside the block, checked above.
                let off = (*va - self.base) as usize;
                if even {
                    let words = self.words.get(off / 8..).unwrap_or_default();
                    for (p, w) in chunk.chunks_exact_mut(2).zip(words) {
                        let x = w.load(Ordering::Relaxed);
                        // CAST: halves of a word.
                        p[0] = x as u32;
                        p[1] = (x >> 32) as u32;
                    }
                } else {
                    for (k, x) in chunk.iter_mut().enumerate() {
                        let o = off + 4 * k;
                        let w = self
                            .words
                            .get(o / 8)
                            .map_or(0, |w| w.load(Ordering::Relaxed));
                        // CAST: the half at o.
                        *x = (w >> (8 * (o % 8))) as u32;
                    }
                }
            }
            return Ok(());
        }
        for (va, chunk) in addrs.iter().zip(out.chunks_exact_mut(n.max(1))) {
            self.dwords_in(*va, chunk)?;
        }
        Ok(())
    }
    fn write_lanes(&self, addrs: &[u64], data: &[u32]) -> Result<(), VmFault> {
        let n = data.len().checked_div(addrs.len()).unwrap_or(0);
        if self.lanes_inside(addrs, n) == Some(true) {
            // Every lane inside the block, whole words: stored in lane order.
            for (va, chunk) in addrs.iter().zip(data.chunks_exact(n.max(1))) {
                // CAST: inside the block, checked above.
                let off = (*va - self.base) as usize;
                let words = self.words.get(off / 8..).unwrap_or_default();
                for (p, w) in chunk.chunks_exact(2).zip(words) {
                    w.store(u64::from(p[0]) | (u64::from(p[1]) << 32), Ordering::Relaxed);
                }
            }
            return Ok(());
        }
        for (va, chunk) in addrs.iter().zip(data.chunks_exact(n.max(1))) {
            self.dwords_out(*va, chunk)?;
        }
        Ok(())
    }
    fn write_dwords(&self, va: u64, data: &[u32]) -> Result<(), VmFault> {
        self.dwords_out(va, data)
    }
    fn write(&self, va: u64, data: &[u8]) -> Result<(), VmFault> {
        let r = self.range(va, data.len(), Access::Write)?;
        let mut off = r.start;
        let mut src = data;
        while !src.is_empty() {
            let at = off % 8;
            if at == 0 && src.len() >= 8 {
                let body = src.len() / 8;
                let (bytes, rest) = src.split_at(body * 8);
                let dst = self.words.get(off / 8..off / 8 + body).unwrap_or_default();
                for (w, b) in dst.iter().zip(bytes.chunks_exact(8)) {
                    let mut x = [0u8; 8];
                    x.copy_from_slice(b);
                    w.store(u64::from_le_bytes(x), Ordering::Relaxed);
                }
                src = rest;
                off += body * 8;
                continue;
            }
            let Some(word) = self.words.get(off / 8) else {
                break;
            };
            // Part of a word: replace only these bytes (other threads may write the rest).
            let n = (8 - at).min(src.len());
            let (bytes, rest) = src.split_at(n);
            let mut w = [0u8; 8];
            for (d, b) in w[at..].iter_mut().zip(bytes) {
                *d = *b;
            }
            let val = u64::from_le_bytes(w);
            let mask = (u64::MAX >> (64 - 8 * n)) << (8 * at);
            let _ = word.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |old| {
                Some((old & !mask) | val)
            });
            src = rest;
            off += n;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
