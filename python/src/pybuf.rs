//! The CPython buffer protocol, declared here because PyO3 exposes it under the stable ABI only
//! from Python 3.11 on, and this module is an abi3 wheel for CPython >= 3.10.
//!
//! `PyObject_GetBuffer`, `PyBuffer_Release` and the `Py_buffer` layout have been exported and
//! unchanged since Python 3.0; 3.11 added them to the limited API as they were. Copies in and
//! out of GPU buffers read and write the exporter's memory with raw-pointer copies (see
//! [`Exported`] for why never through a Rust reference), without a Python-side copy; `copy_in`
//! hands the raw range to the driver ([`Exported::as_ptr`], `Device::copy_in_raw`).

use core::ffi::{c_char, c_int, c_void};

use pyo3::exceptions::PyBufferError;
use pyo3::ffi::{Py_ssize_t, PyObject};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// `Py_buffer` (Include/pybuffer.h).
#[repr(C)]
struct RawBuffer {
    buf: *mut c_void,
    obj: *mut PyObject,
    len: Py_ssize_t,
    itemsize: Py_ssize_t,
    readonly: c_int,
    ndim: c_int,
    format: *mut c_char,
    shape: *mut Py_ssize_t,
    strides: *mut Py_ssize_t,
    suboffsets: *mut Py_ssize_t,
    internal: *mut c_void,
}

/// `PyBUF_WRITABLE`.
const PYBUF_WRITABLE: c_int = 0x0001;

unsafe extern "C" {
    fn PyObject_GetBuffer(obj: *mut PyObject, view: *mut RawBuffer, flags: c_int) -> c_int;
    fn PyBuffer_Release(view: *mut RawBuffer);
}

/// A contiguous buffer exported by a Python object (bytes, bytearray, memoryview, numpy
/// array, ...), held until drop (the exporter cannot resize or free it meanwhile).
///
/// An export does not stop other writers: another Python thread (or C code that released the
/// GIL, as numpy's loops do) may write a bytearray or an array while we read it. So no Rust
/// reference (`&[u8]`, `&mut [u8]`, which promise the bytes do not change under them) is ever
/// formed over exported memory, except over an exact `bytes` object, which is immutable:
/// everything else is read and written with raw-pointer copies ([`Exported::read_into`],
/// [`Exported::write_at`]) into and out of memory Rust owns. A racing writer then makes the
/// bytes copied a mix of old and new, as it would for a C reader, and nothing worse.
pub struct Exported {
    raw: Box<RawBuffer>,
    /// Exported by an exact `bytes` object: its memory never changes while it is alive.
    immutable: bool,
}

// SAFETY: the exporter keeps the memory valid and in place until `PyBuffer_Release` (done on
// drop, with the GIL); the pointer is only read or written with raw copies (no reference over
// it, see the type's docs), from any thread.
unsafe impl Send for Exported {}
// SAFETY: shared access only reads: `len`, the borrow of an immutable `bytes` object's
// memory, and raw copies out of the buffer; writing takes `&mut self`.
unsafe impl Sync for Exported {}

impl Exported {
    /// Exports `obj`'s memory as one C-contiguous byte range (`PyBUF_SIMPLE`, plus
    /// `PyBUF_WRITABLE` when `writable`). Non-contiguous objects are refused by the exporter.
    pub fn get(obj: &Bound<'_, PyAny>, writable: bool) -> PyResult<Self> {
        let mut raw = Box::new(RawBuffer {
            buf: core::ptr::null_mut(),
            obj: core::ptr::null_mut(),
            len: 0,
            itemsize: 0,
            readonly: 0,
            ndim: 0,
            format: core::ptr::null_mut(),
            shape: core::ptr::null_mut(),
            strides: core::ptr::null_mut(),
            suboffsets: core::ptr::null_mut(),
            internal: core::ptr::null_mut(),
        });
        let flags = if writable { PYBUF_WRITABLE } else { 0 };
        // SAFETY: `obj` is a live object (we hold the GIL through `Bound`), `raw` points to a
        // writable Py_buffer; on success the exporter filled it and we release it on drop.
        let rc = unsafe { PyObject_GetBuffer(obj.as_ptr(), &mut *raw, flags) };
        if rc != 0 {
            return Err(PyErr::take(obj.py()).unwrap_or_else(|| {
                PyBufferError::new_err("the object does not export a contiguous buffer")
            }));
        }
        let immutable = obj.is_exact_instance_of::<PyBytes>();
        Ok(Self { raw, immutable })
    }

    /// Bytes in the buffer.
    pub fn len(&self) -> usize {
        if self.raw.buf.is_null() {
            return 0;
        }
        usize::try_from(self.raw.len).unwrap_or(0)
    }

    /// The buffer's start as a raw pointer, valid for reads of [`Self::len`] bytes while
    /// `self` lives (the export holds the exporter's memory in place). Only for raw copies
    /// (`hcq_driver::Device::copy_in_raw`): never make a reference over it.
    pub fn as_ptr(&self) -> *const u8 {
        self.raw.buf.cast::<u8>().cast_const()
    }

    /// The buffer's start as a raw pointer for writes, valid for [`Self::len`] bytes while
    /// `self` lives: only for buffers exported writable (as [`Self::write_at`]). Only for raw
    /// copies (`hcq_driver::Device::copy_out_raw`): never make a reference over it.
    pub fn as_mut_ptr(&mut self) -> PyResult<*mut u8> {
        if self.raw.readonly != 0 || self.immutable {
            return Err(PyBufferError::new_err(
                "the destination buffer is read-only",
            ));
        }
        Ok(self.raw.buf.cast::<u8>())
    }

    /// The bytes, borrowed, when nobody can change them while the export lives (an exact
    /// `bytes` object); None otherwise (read them with [`Self::read_into`]).
    pub fn immutable(&self) -> Option<&[u8]> {
        if !self.immutable {
            return None;
        }
        if self.len() == 0 {
            return Some(&[]);
        }
        // SAFETY: a `bytes` object's contents never change after creation, and the export
        // keeps the object (and so its `len` bytes at `buf`) alive until release on drop,
        // after this borrow ends.
        Some(unsafe { core::slice::from_raw_parts(self.raw.buf.cast::<u8>(), self.len()) })
    }

    /// Copies bytes `at .. at + dst.len()` of the buffer into `dst` (a raw copy: no reference
    /// over the exporter's memory). Refuses a range past the end.
    pub fn read_into(&self, at: usize, dst: &mut [u8]) -> PyResult<()> {
        self.check_range(at, dst.len())?;
        if dst.is_empty() {
            return Ok(());
        }
        // SAFETY: `at + dst.len() <= len` (checked): in bounds of the `len` readable bytes the
        // exporter guarantees at `buf` until release (on drop, after this call). `dst` is
        // Rust-owned memory that cannot overlap the exporter's (we hold `&mut` to it). No
        // reference to the exporter's bytes is formed; a concurrent writer there only makes
        // the copied bytes a mix of old and new.
        unsafe {
            core::ptr::copy_nonoverlapping(
                self.raw.buf.cast::<u8>().cast_const().add(at),
                dst.as_mut_ptr(),
                dst.len(),
            );
        }
        Ok(())
    }

    /// The whole buffer, copied into a vector Rust owns.
    pub fn to_vec(&self) -> PyResult<Vec<u8>> {
        let mut v = vec![0u8; self.len()];
        self.read_into(0, &mut v)?;
        Ok(v)
    }

    /// Runs `f` on the buffer's bytes: borrowed when immutable, else copied into a vector Rust
    /// owns first.
    pub fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> PyResult<R> {
        match self.immutable() {
            Some(b) => Ok(f(b)),
            None => Ok(f(&self.to_vec()?)),
        }
    }

    /// Copies `src` into bytes `at .. at + src.len()` of the buffer (a raw copy, as
    /// [`Self::read_into`]). Only for buffers exported writable; refuses a range past the end.
    pub fn write_at(&mut self, at: usize, src: &[u8]) -> PyResult<()> {
        if self.raw.readonly != 0 || self.immutable {
            return Err(PyBufferError::new_err(
                "the destination buffer is read-only",
            ));
        }
        self.check_range(at, src.len())?;
        if src.is_empty() {
            return Ok(());
        }
        // SAFETY: exported with PyBUF_WRITABLE and not read-only: `len` writable bytes at
        // `buf` until release on drop; `at + src.len() <= len` (checked). `src` is Rust-owned
        // memory that is not the exporter's (it is borrowed shared while we write there).
        // No reference to the exporter's bytes is formed.
        unsafe {
            core::ptr::copy_nonoverlapping(
                src.as_ptr(),
                self.raw.buf.cast::<u8>().add(at),
                src.len(),
            );
        }
        Ok(())
    }

    fn check_range(&self, at: usize, n: usize) -> PyResult<()> {
        if at.checked_add(n).is_none_or(|end| end > self.len()) {
            return Err(PyBufferError::new_err(format!(
                "bytes {at}..{at}+{n} of a {}-byte buffer",
                self.len()
            )));
        }
        Ok(())
    }
}

impl Drop for Exported {
    fn drop(&mut self) {
        // Releasing needs the GIL (it may run Python code of the exporter).
        Python::with_gil(|_| {
            // SAFETY: `raw` was filled by a successful PyObject_GetBuffer and is released once.
            unsafe { PyBuffer_Release(&mut *self.raw) };
        });
    }
}
