//! The CPython buffer protocol, declared here because PyO3 exposes it under the stable ABI only
//! from Python 3.11 on, and this module is an abi3 wheel for CPython >= 3.10.
//!
//! `PyObject_GetBuffer`, `PyBuffer_Release` and the `Py_buffer` layout have been exported and
//! unchanged since Python 3.0; 3.11 added them to the limited API as they were. Copies in and
//! out of GPU buffers read and write the exporter's memory in place: no Python-side copy.

use core::ffi::{c_char, c_int, c_void};

use pyo3::exceptions::PyBufferError;
use pyo3::ffi::{Py_ssize_t, PyObject};
use pyo3::prelude::*;

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
pub struct Exported {
    raw: Box<RawBuffer>,
}

// SAFETY: the exporter keeps the memory valid and in place until `PyBuffer_Release`; the
// pointer is only read or written as plain bytes, from any thread.
unsafe impl Send for Exported {}

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
        Ok(Self { raw })
    }

    /// Bytes in the buffer.
    pub fn len(&self) -> usize {
        usize::try_from(self.raw.len).unwrap_or(0)
    }

    /// The bytes, read-only.
    pub fn as_slice(&self) -> &[u8] {
        if self.raw.buf.is_null() || self.len() == 0 {
            return &[];
        }
        // SAFETY: the exporter guarantees `len` readable bytes at `buf` until release, which
        // happens on drop (after this borrow ends).
        unsafe { core::slice::from_raw_parts(self.raw.buf.cast::<u8>(), self.len()) }
    }

    /// The bytes, writable (only for buffers exported with `writable`).
    pub fn as_mut_slice(&mut self) -> PyResult<&mut [u8]> {
        if self.raw.readonly != 0 {
            return Err(PyBufferError::new_err(
                "the destination buffer is read-only",
            ));
        }
        if self.raw.buf.is_null() || self.len() == 0 {
            return Ok(&mut []);
        }
        // SAFETY: exported with PyBUF_WRITABLE and not read-only: `len` writable bytes at
        // `buf` until release on drop; `&mut self` makes this the only borrow.
        Ok(unsafe { core::slice::from_raw_parts_mut(self.raw.buf.cast::<u8>(), self.len()) })
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
