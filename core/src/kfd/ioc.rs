//! Linux ioctl request numbers: [`IoctlRequest`] (`_IOC(dir, type, nr, size)`) and the
//! `_IO`/`_IOR`/`_IOW`/`_IOWR` builders.

bitfield! {
    /// A Linux ioctl request number (`_IOC(dir, type, nr, size)`, asm-generic layout).
    pub struct IoctlRequest(u32) {
        /// Command number within the type (`_IOC_NR`).
        NR: 7:0,
        /// Type (`_IOC_TYPE`, `'K'` for KFD).
        TYPE: 15:8,
        /// Argument size in bytes (`_IOC_SIZE`, 14 bits).
        SIZE: 29:16,
        /// Direction (`_IOC_DIR`): bit 0 write (user to kernel), bit 1 read (kernel to user).
        DIR: 31:30,
    }
}

/// `_IOC_NONE`: no argument.
pub const IOC_NONE: u32 = 0;
/// `_IOC_WRITE`: the argument is copied from the user (`_IOW`).
pub const IOC_WRITE: u32 = 1;
/// `_IOC_READ`: the argument is copied to the user (`_IOR`).
pub const IOC_READ: u32 = 2;

/// `_IOC(dir, ty, nr, size)`. `size` is masked to the 14-bit field; every KFD argument struct is
/// far smaller (each ioctl constant below is built from a size-asserted struct).
#[must_use]
pub const fn ioc(dir: u32, ty: u8, nr: u8, size: usize) -> u32 {
    // CAST: masked to the 14-bit size field first, so the value fits in u32.
    let size = (size & 0x3FFF) as u32;
    IoctlRequest::zeroed()
        .with(IoctlRequest::DIR, dir)
        .with(IoctlRequest::SIZE, size)
        .with(IoctlRequest::TYPE, ty as u32)
        .with(IoctlRequest::NR, nr as u32)
        .raw()
}

/// `_IOR(ty, nr, T)` with `size = size_of::<T>()`: the kernel writes the struct back.
#[must_use]
pub const fn ior(ty: u8, nr: u8, size: usize) -> u32 {
    ioc(IOC_READ, ty, nr, size)
}

/// `_IOW(ty, nr, T)`: the kernel only reads the struct.
#[must_use]
pub const fn iow(ty: u8, nr: u8, size: usize) -> u32 {
    ioc(IOC_WRITE, ty, nr, size)
}

/// `_IOWR(ty, nr, T)`: the kernel reads the struct and writes it back.
#[must_use]
pub const fn iowr(ty: u8, nr: u8, size: usize) -> u32 {
    ioc(IOC_READ | IOC_WRITE, ty, nr, size)
}

/// `_IO(ty, nr)`: no argument.
#[must_use]
pub const fn io(ty: u8, nr: u8) -> u32 {
    ioc(IOC_NONE, ty, nr, 0)
}

#[cfg(test)]
mod tests {
    use super::super::*;

    #[test]
    fn ioctl_numbers_decode() {
        assert_eq!(AMDKFD_IOC_GET_VERSION.request(), 0x8008_4B01);
        assert_eq!(AMDKFD_IOC_CREATE_QUEUE.request(), 0xC060_4B02);
        let r = IoctlRequest::from_raw(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU.request());
        assert_eq!(r.get(IoctlRequest::NR), 0x16);
        assert_eq!(r.get(IoctlRequest::SIZE), 40);
        assert_eq!(r.get(IoctlRequest::DIR), IOC_READ | IOC_WRITE);
        assert_eq!(io(b'K', 0x27), 0x4B27);
    }

    #[test]
    fn builders_set_the_direction_bits() {
        // <asm-generic/ioctl.h>: _IOR('K', 1, 8), _IOW('K', 3, 8), _IOWR('K', 2, 96).
        assert_eq!(ior(b'K', 0x01, 8), 0x8008_4B01);
        assert_eq!(iow(b'K', 0x03, 8), 0x4008_4B03);
        assert_eq!(iowr(b'K', 0x02, 96), 0xC060_4B02);
        // The size is masked to its 14 bits, never spilling into the direction.
        assert_eq!(ior(b'K', 0x01, 0x4008), 0x8008_4B01);
    }
}
