use super::*;

/// A memory that only has the byte methods: the trait's defaults of the dword ones.
struct Bytes<'a>(&'a FlatMemory);

impl Memory for Bytes<'_> {
    fn read(&self, va: u64, buf: &mut [u8], access: Access) -> Result<(), VmFault> {
        self.0.read(va, buf, access)
    }
    fn write(&self, va: u64, data: &[u8]) -> Result<(), VmFault> {
        self.0.write(va, data)
    }
}

#[test]
fn dword_access_matches_the_byte_access() {
    const BASE: u64 = 0x1000;
    const LEN: usize = 96;
    let pattern = |m: &FlatMemory| {
        let b: Vec<u8> = (0..LEN).map(|k| (k * 37 + 11) as u8).collect();
        m.poke(BASE, &b).map(|()| b)
    };
    // Word-aligned, half-word-aligned and unaligned starts; odd and even counts; the
    // last byte of the block; past the end (a fault naming the first missing byte).
    for start in [0u64, 4, 8, 12, 1, 2, 3, 5, 7, 84, 88, 92, 93] {
        for n in [0usize, 1, 2, 3, 4, 5, 8] {
            let va = BASE + start;
            let (words, bytes) = (FlatMemory::new(BASE, LEN), FlatMemory::new(BASE, LEN));
            let (Ok(_), Ok(init)) = (pattern(&words), pattern(&bytes)) else {
                panic!("pattern");
            };
            // Reads: each way, the same values and the same fault.
            let mut a = vec![0u32; n];
            let mut b = vec![0u32; n];
            let ra = words.read_dwords(va, &mut a);
            let rb = Bytes(&bytes).read_dwords(va, &mut b);
            assert_eq!(ra, rb, "read {start} {n}");
            if ra.is_ok() {
                let want: Vec<u32> = (0..n)
                    .map(|k| {
                        let o = start as usize + 4 * k;
                        u32::from_le_bytes([init[o], init[o + 1], init[o + 2], init[o + 3]])
                    })
                    .collect();
                assert_eq!(a, want, "read {start} {n}");
                assert_eq!(b, want, "read {start} {n}");
            }
            // Writes: the same bytes after, the same fault.
            let data: Vec<u32> = (0..n)
                .map(|k| 0xa0b0_c0d0 ^ (k as u32 * 0x0101_0101))
                .collect();
            let wa = words.write_dwords(va, &data);
            let wb = Bytes(&bytes).write_dwords(va, &data);
            assert_eq!(wa, wb, "write {start} {n}");
            let mut after_a = vec![0u8; LEN];
            let mut after_b = vec![0u8; LEN];
            assert!(words.peek(BASE, &mut after_a).is_ok());
            assert!(bytes.peek(BASE, &mut after_b).is_ok());
            assert_eq!(after_a, after_b, "write {start} {n}");
        }
    }
}

#[test]
fn lane_gather_and_scatter_match_the_byte_access() {
    const BASE: u64 = 0x1000;
    const LEN: usize = 256;
    let pattern = |m: &FlatMemory| {
        let b: Vec<u8> = (0..LEN).map(|k| (k * 37 + 11) as u8).collect();
        m.poke(BASE, &b)
    };
    // Lane address sets: whole words, dwords off the 8-byte grid, unaligned, lanes that
    // repeat an address (a later lane's store wins), one that leaves the block, one
    // below it.
    let sets: [&[u64]; 7] = [
        &[0, 48, 16, 200, 96],
        &[4, 36, 4, 100],
        &[1, 70, 9],
        &[32, 32, 32],
        &[0, 16, 252, 64],
        &[0, 240, 248],
        &[64, 8, 0],
    ];
    for (s, rel) in sets.iter().enumerate() {
        for n in [1usize, 2, 3, 4] {
            let mut addrs: Vec<u64> = rel.iter().map(|r| BASE + r).collect();
            if s == 6 {
                addrs[1] = BASE - 8;
            }
            let (words, bytes) = (FlatMemory::new(BASE, LEN), FlatMemory::new(BASE, LEN));
            assert!(pattern(&words).is_ok() && pattern(&bytes).is_ok());
            let mut a = vec![0u32; n * addrs.len()];
            let mut b = vec![0u32; n * addrs.len()];
            let ra = words.read_lanes(&addrs, &mut a);
            let rb = Bytes(&bytes).read_lanes(&addrs, &mut b);
            assert_eq!(ra, rb, "read set {s} n {n}");
            if ra.is_ok() {
                assert_eq!(a, b, "read set {s} n {n}");
            }
            let data: Vec<u32> = (0..n * addrs.len())
                .map(|k| 0xa0b0_c0d0 ^ (k as u32 * 0x0101_0101))
                .collect();
            let wa = words.write_lanes(&addrs, &data);
            let wb = Bytes(&bytes).write_lanes(&addrs, &data);
            assert_eq!(wa, wb, "write set {s} n {n}");
            let mut after_a = vec![0u8; LEN];
            let mut after_b = vec![0u8; LEN];
            assert!(words.peek(BASE, &mut after_a).is_ok());
            assert!(bytes.peek(BASE, &mut after_b).is_ok());
            assert_eq!(after_a, after_b, "write set {s} n {n}");
        }
    }
}
