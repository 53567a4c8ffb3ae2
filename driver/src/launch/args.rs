//! Kernel arguments: the kernarg buffer, [`BufferView`], [`LaunchArg`] and the checks of each
//! argument against the kernel's metadata.

#[allow(clippy::wildcard_imports)]
use super::*;

/// Largest kernarg segment [`Program::load`] accepts (LLVM's own limit is far below; a bigger
/// one is a lying code object).
pub(super) const MAX_KERNARG_BYTES: u64 = 1 << 20;

/// Kernarg words a full segment keeps inline (512 bytes: no allocation per launch); larger
/// segments use the heap.
pub(super) const INLINE_KERNARG_WORDS: usize = 64;

/// Explicit-argument words a [`LaunchBuilder`] keeps inline (128 bytes; kernels with more use
/// the heap, once per builder). Small, so a builder is cheap to create and move.
pub(super) const INLINE_EXPLICIT_WORDS: usize = 16;

/// A kernarg segment (or its explicit part) being laid out, in 8-byte words (so it is copied
/// into the arena a word at a time): inline up to `N` words.
#[derive(Debug)]
pub(super) struct KernargBuf<const N: usize = INLINE_KERNARG_WORDS> {
    pub(super) inline: [u64; N],
    pub(super) heap: Vec<u64>,
    /// Bytes of the segment.
    pub(super) len: usize,
}

impl<const N: usize> KernargBuf<N> {
    /// A copy of `template` (the words of a segment of `size` bytes).
    pub(super) fn from_template(template: &[u64], size: u64) -> Self {
        let mut b = Self::zeroed(size);
        if template.len() > N {
            b.heap = template.to_vec();
        } else if let Some(d) = b.inline.get_mut(..template.len()) {
            d.copy_from_slice(template);
        }
        b
    }

    /// A zeroed segment of `size` bytes.
    pub(super) fn zeroed(size: u64) -> Self {
        let len = usize::try_from(size).unwrap_or(usize::MAX);
        let n = len.div_ceil(8);
        Self {
            inline: [0; N],
            heap: if n > N { vec![0; n] } else { Vec::new() },
            len,
        }
    }

    /// The segment's words (the last one zero padded).
    pub(super) fn words(&self) -> &[u64] {
        let n = self.len.div_ceil(8);
        if n > N {
            self.heap.get(..n).unwrap_or_default()
        } else {
            self.inline.get(..n).unwrap_or_default()
        }
    }

    /// The segment's words, mutable.
    pub(super) fn words_mut(&mut self) -> &mut [u64] {
        let n = self.len.div_ceil(8);
        if n > N {
            self.heap.get_mut(..n).unwrap_or_default()
        } else {
            self.inline.get_mut(..n).unwrap_or_default()
        }
    }

    /// The segment's bytes.
    pub(super) fn bytes_mut(&mut self) -> &mut [u8] {
        let len = self.len;
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(self.words_mut());
        bytes.get_mut(..len).unwrap_or_default()
    }
}

/// A typed view of part of a [`GpuBuffer`], passed to a `global_buffer` argument as the
/// address of its first element.
#[derive(Clone, Copy, Debug)]
pub struct BufferView<'a, T> {
    pub(super) buf: &'a GpuBuffer,
    pub(super) offset: u64,
    pub(super) len: u64,
    pub(super) _elem: core::marker::PhantomData<T>,
}

impl<'a, T: Pod> BufferView<'a, T> {
    /// The whole buffer as elements of `T` (a trailing partial element is left out).
    #[must_use]
    pub fn new(buf: &'a GpuBuffer) -> Self {
        // CAST: size_of::<T>() fits u64.
        let elem = (size_of::<T>() as u64).max(1);
        Self {
            buf,
            offset: 0,
            len: buf.len() / elem,
            _elem: core::marker::PhantomData,
        }
    }

    /// Elements `start..start + len` of this view.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the range is outside the view.
    pub fn slice(&self, start: u64, len: u64) -> Result<Self> {
        let end = start.checked_add(len).filter(|&e| e <= self.len);
        if end.is_none() {
            return Err(Error::InvalidArgument(format!(
                "view elements {start}..{start}+{len} are outside its {} elements",
                self.len
            )));
        }
        // CAST: size_of::<T>() fits u64.
        let elem = size_of::<T>() as u64;
        Ok(Self {
            offset: self.offset + start * elem,
            len,
            ..*self
        })
    }

    /// GPU address of the first element.
    #[must_use]
    pub fn va(&self) -> GpuVa {
        self.buf.va().offset(self.offset)
    }

    /// Elements in the view.
    #[must_use]
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the view has no elements.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// What [`LaunchBuilder::arg`] accepts: a buffer for a `global_buffer` argument, a plain
/// value for a `by_value` one.
pub trait LaunchArg {
    /// Buffer or value.
    fn class(&self) -> ArgClass;
    /// The bytes placed in the kernarg segment (a buffer's GPU address).
    fn bytes(&self) -> ArgBytes;
    /// Alignment the argument's offset must have.
    fn align(&self) -> u32;
    /// The buffer, for checking it is mapped on the launching device.
    fn buffer(&self) -> Option<&GpuBuffer> {
        None
    }
}

/// Bytes an argument may have ([`ArgBytes`] holds them inline): a 16-element vector of 8-byte
/// elements (`double16`, `ulong16`).
pub const MAX_ARG_BYTES: usize = 128;

/// An argument's bytes, inline (at most [`MAX_ARG_BYTES`]; a longer one is refused).
#[derive(Clone, Copy, Debug)]
pub struct ArgBytes {
    pub(super) data: [u8; MAX_ARG_BYTES],
    pub(super) len: usize,
}

impl ArgBytes {
    pub(super) fn of(b: &[u8]) -> Self {
        let mut data = [0; MAX_ARG_BYTES];
        let len = b.len().min(MAX_ARG_BYTES);
        if let (Some(d), Some(s)) = (data.get_mut(..len), b.get(..len)) {
            d.copy_from_slice(s);
        }
        Self { data, len: b.len() }
    }

    pub(super) fn as_slice(&self) -> Option<&[u8]> {
        self.data.get(..self.len)
    }
}

impl LaunchArg for GpuBuffer {
    fn class(&self) -> ArgClass {
        ArgClass::Buffer
    }
    fn bytes(&self) -> ArgBytes {
        ArgBytes::of(&self.va().get().to_le_bytes())
    }
    fn align(&self) -> u32 {
        8
    }
    fn buffer(&self) -> Option<&GpuBuffer> {
        Some(self)
    }
}

impl<T: Pod> LaunchArg for BufferView<'_, T> {
    fn class(&self) -> ArgClass {
        ArgClass::Buffer
    }
    fn bytes(&self) -> ArgBytes {
        ArgBytes::of(&self.va().get().to_le_bytes())
    }
    fn align(&self) -> u32 {
        8
    }
    fn buffer(&self) -> Option<&GpuBuffer> {
        Some(self.buf)
    }
}

macro_rules! value_args {
    ($($t:ty),*) => {$(
        impl LaunchArg for $t {
            fn class(&self) -> ArgClass {
                ArgClass::Value
            }
            fn bytes(&self) -> ArgBytes {
                ArgBytes::of(&self.to_le_bytes())
            }
            fn align(&self) -> u32 {
                // CAST: primitive alignments are at most 16.
                align_of::<$t>() as u32
            }
        }
    )*};
}

value_args!(u8, u16, u32, u64, i8, i16, i32, i64, f32, f64);

/// A `by_value` argument of any `Pod` type (a struct, a vector such as `[f32; 4]`), at most
/// [`MAX_ARG_BYTES`] bytes: `builder.arg(&ByValue(my_struct))`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByValue<T>(pub T);

impl<T: Pod> LaunchArg for ByValue<T> {
    fn class(&self) -> ArgClass {
        ArgClass::Value
    }
    fn bytes(&self) -> ArgBytes {
        ArgBytes::of(bytemuck::bytes_of(&self.0))
    }
    fn align(&self) -> u32 {
        // CAST: alignments fit u32.
        align_of::<T>() as u32
    }
}

/// A `by_value` argument given as its little-endian bytes and the alignment its type has (an
/// OpenCL `uint3` is 16 bytes, 16-aligned): what a tool that learns the types at run time
/// passes. At most [`MAX_ARG_BYTES`] bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawValue<'a> {
    /// The value's bytes.
    pub bytes: &'a [u8],
    /// The alignment its kernarg offset must have.
    pub align: u32,
}

impl LaunchArg for RawValue<'_> {
    fn class(&self) -> ArgClass {
        ArgClass::Value
    }
    fn bytes(&self) -> ArgBytes {
        ArgBytes::of(self.bytes)
    }
    fn align(&self) -> u32 {
        self.align
    }
}

/// A `dynamic_shared_pointer` argument (an OpenCL `__local T*`): the bytes of LDS it points
/// to in each work-group. The launch places every such argument after the kernel's static LDS,
/// each at the alignment its metadata asks for (`.pointee_align`), and passes its LDS address,
/// as ROCm's runtime does: `builder.arg(&Lds(256 * 4))`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lds(pub u32);

impl LaunchArg for Lds {
    fn class(&self) -> ArgClass {
        ArgClass::Lds
    }
    fn bytes(&self) -> ArgBytes {
        ArgBytes::of(&self.0.to_le_bytes())
    }
    fn align(&self) -> u32 {
        1
    }
}

/// Whether an argument of `class`, `size` bytes and `align` alignment may go where `info`
/// says; the refusal names the argument.
pub(super) fn check_arg(
    info: &ArgInfo,
    index: usize,
    class: ArgClass,
    size: u32,
    align: u32,
) -> core::result::Result<(), String> {
    let what = || info.describe(index);
    match (info.class, class) {
        (ArgClass::Unsupported, _) | (_, ArgClass::Unsupported) => {
            return Err(format!(
                "{} is a {} argument, which hcq cannot pass",
                what(),
                info.value_kind
            ));
        }
        (ArgClass::Buffer, ArgClass::Value) => {
            return Err(format!(
                "{} is a global_buffer: pass a GpuBuffer or BufferView, not a value",
                what()
            ));
        }
        (ArgClass::Value, ArgClass::Buffer) => {
            return Err(format!(
                "{} is a by_value argument: pass a value, not a buffer",
                what()
            ));
        }
        (ArgClass::Lds, ArgClass::Lds) => return Ok(()),
        (ArgClass::Lds, _) => {
            return Err(format!(
                "{} is a dynamic_shared_pointer (__local): pass Lds(bytes), the LDS it needs",
                what()
            ));
        }
        (_, ArgClass::Lds) => {
            return Err(format!(
                "{} is a {}, not a dynamic_shared_pointer: pass {}, not an LDS size",
                what(),
                info.value_kind,
                if info.class == ArgClass::Buffer {
                    "a GpuBuffer or BufferView"
                } else {
                    "a value"
                }
            ));
        }
        _ => {}
    }
    if size != info.size {
        return Err(format!("{} is {} bytes, got {size}", what(), info.size));
    }
    let align = align.max(1);
    // Alignments are powers of two (a mask, not a division), any other one divides.
    let misaligned = if align.is_power_of_two() {
        info.offset & (align - 1) != 0
    } else {
        info.offset % align != 0
    };
    if misaligned {
        return Err(format!(
            "{} is at kernarg offset {}, not a multiple of the value's {align}-byte alignment",
            what(),
            info.offset
        ));
    }
    Ok(())
}
