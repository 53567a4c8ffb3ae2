//! Harness for the `metadata` fuzz target: `hcq_core::metadata` (MessagePack reader, kernel
//! metadata, note lookup, hidden-argument filling) on arbitrary bytes. Nothing may panic, and a
//! parsed document keeps its promises: the iterators yield exactly the counted kernels and
//! arguments, every argument lies inside its kernarg segment, and filling the hidden arguments
//! of a segment-sized buffer never goes out of bounds.

use hcq_core::metadata::hidden::{self, HiddenError, LaunchShape};
use hcq_core::metadata::msgpack::Reader;
use hcq_core::metadata::{Metadata, find_note};

/// Parses `data` as a metadata document (and as a note section, and as raw MessagePack).
pub fn run(data: &[u8]) {
    let _ = find_note(data);
    let mut r = Reader::new(data);
    while r.remaining() > 0 && r.skip().is_ok() {}
    let Ok(md) = Metadata::parse(data) else {
        return;
    };
    let shape = LaunchShape {
        groups: [
            u32::from(data.len() as u8).max(1),
            1,
            u32::from(data.first().copied().unwrap_or(1)).max(1),
        ],
        block: [64, 2, 1],
        dynamic_lds: 256,
    };
    let mut kernels = 0;
    for k in md.kernels() {
        kernels += 1;
        assert!(k.kernarg_segment_align.is_power_of_two());
        assert_eq!(k.args().count(), k.arg_count as usize);
        let mut end = 0u64;
        let mut buf = vec![0u8; (k.kernarg_segment_size as usize).min(1 << 16)];
        for a in k.args() {
            let a_end = u64::from(a.offset) + u64::from(a.size);
            assert!(u64::from(a.offset) >= end);
            assert!(a_end <= u64::from(k.kernarg_segment_size));
            end = a_end;
            if a.is_hidden() && buf.len() == k.kernarg_segment_size as usize {
                match hidden::kind_of(&a) {
                    Ok(kind) => match hidden::write(&mut buf, kind, a.offset, a.size, &shape) {
                        Ok(()) | Err(HiddenError::TooSmall { .. }) => {}
                        Err(e) => panic!("{e}"),
                    },
                    Err(e) => assert!(e.to_string().contains(a.value_kind_str)),
                }
            }
        }
        assert_eq!(md.by_symbol(k.symbol).map(|m| m.symbol), Some(k.symbol));
    }
    assert_eq!(kernels, md.kernel_count);
}
