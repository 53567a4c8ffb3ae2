//! Harness for the `codeobj` fuzz target: `hcq_core::codeobj` on arbitrary bytes and on real
//! code objects with bytes patched. Nothing may panic, and a parsed object keeps its
//! promises (every range it hands out is inside the file or the image).

use hcq_core::codeobj::{CodeObject, DeviceLimits, MAX_IMAGE_SIZE};
use hcq_core::hsa::KernelDescriptor;

/// Real objects (clang-19) the patched mode starts from.
pub const FIXTURES: [&[u8]; 4] = [
    include_bytes!("../../core/tests/fixtures/kernels/vector_add-gfx1100.co"),
    include_bytes!("../../core/tests/fixtures/kernels/multi-gfx90a.co"),
    include_bytes!("../../core/tests/fixtures/kernels/dispatch_ptr-gfx942.co"),
    include_bytes!("../../core/tests/fixtures/kernels/lds_reverse-gfx1201.co"),
];

/// Parses `data` as a code object; if it parses, checks every invariant the loader relies on.
pub fn run(data: &[u8]) {
    // Offload bundles: every entry parsed is inside the file, and each AMDGPU entry is tried
    // as a code object.
    if let Ok(b) = hcq_core::bundle::Bundle::parse(data) {
        assert_eq!(b.entries().count() as u64, b.len());
        for e in b.entries() {
            let inside = e.code.as_ptr() as usize >= data.as_ptr() as usize
                && e.code.as_ptr() as usize + e.code.len() <= data.as_ptr() as usize + data.len();
            assert!(inside);
            if e.target().is_some() {
                let _ = CodeObject::parse(e.code);
            }
        }
        let _ = b.select("gfx1100");
    }
    let Ok(co) = CodeObject::parse(data) else {
        return;
    };
    let size = co.image_size();
    assert_eq!(size % 4096, 0);
    assert!(size > 0 && size <= MAX_IMAGE_SIZE);
    for s in co.segments() {
        assert!(s.file_range().end <= data.len());
        assert!(s.file_size as u64 <= s.mem_size);
        assert!(s.image_range().end <= size);
        let (z, zlen) = s.zero_fill();
        assert_eq!(z + zlen, s.image_range().end);
    }
    let limits = DeviceLimits {
        lds_bytes: 64 * 1024,
        max_private_segment_bytes: 1024,
    };
    let mut n = 0;
    for k in co.kernels() {
        n += 1;
        assert!(k.descriptor_offset + KernelDescriptor::SIZE as u64 <= size);
        assert_eq!((co.image_base() + k.entry_offset) % 256, 0);
        assert!(k.entry_offset < size);
        assert!(co.kernel(k.name).is_ok());
        let _ = k.check_resources(&limits);
        let _ = (k.lds_granules(), k.user_sgpr_count(), k.wavefront_size());
        let _ = format!("{:?}", k.descriptor);
    }
    assert_eq!(n, co.kernel_count());
    if let Err(e) = co.check_target("gfx1100") {
        let _ = e.to_string();
    }
    let _ = co.check_xnack(true);
    let _ = co.target().to_string();
    if size <= 1 << 20 {
        let mut image = vec![0u8; size as usize];
        co.load_into(&mut image).unwrap();
        for k in co.kernels() {
            let at = k.descriptor_offset as usize;
            let kd = KernelDescriptor::read(&image[at..]).unwrap();
            assert_eq!(kd, k.descriptor);
        }
        assert!(co.load_into(&mut image[..size as usize - 1]).is_err());
    }
}

/// `data[0]` picks a fixture; the rest is patches of 3 bytes each: a little-endian u16 offset
/// (taken modulo the fixture's length) and the byte to write there. The patched file goes
/// through [`run`]; the unpatched fixture must parse.
pub fn run_patched(data: &[u8]) {
    let Some((&pick, patches)) = data.split_first() else {
        return;
    };
    let base = FIXTURES[usize::from(pick) % FIXTURES.len()];
    let mut file = base.to_vec();
    for p in patches.chunks_exact(3) {
        let at = usize::from(u16::from_le_bytes([p[0], p[1]])) % file.len();
        file[at] = p[2];
    }
    // Also truncate when the pick byte's high bit is set (length from the last patch offset).
    if pick & 0x80 != 0
        && let Some(p) = patches.chunks_exact(3).last()
    {
        file.truncate(usize::from(u16::from_le_bytes([p[0], p[1]])) % (base.len() + 1));
    }
    run(&file);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixtures_parse_and_replay() {
        for f in FIXTURES {
            assert!(CodeObject::parse(f).is_ok());
            run(f);
        }
        for f in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/corpus/codeobj"))
            .into_iter()
            .flatten()
        {
            let bytes = std::fs::read(f.unwrap().path()).unwrap();
            run(&bytes);
            run_patched(&bytes);
        }
    }

    #[test]
    fn patched_sweep() {
        // Every header byte of each fixture set to a few values.
        for (i, f) in FIXTURES.iter().enumerate() {
            for at in 0..f.len().min(0x240) {
                for v in [0u8, 0xff, 0x41] {
                    let off = (at as u16).to_le_bytes();
                    run_patched(&[i as u8, off[0], off[1], v]);
                    run_patched(&[0x80 | i as u8, off[0], off[1], v]);
                }
            }
        }
    }
}
