//! The `hidden_args` fixture kernel (`kernels/hidden_args.cl`): every code object v5 hidden
//! argument hcq fills, as the kernel read it, checked against the launch.

use hcq_driver::{BufferKind, Device, Program};

/// u32s per work-group record the kernel writes.
pub const RECORD: usize = 16;

/// The hidden arguments of one record, by name, with the record index that holds each.
pub const FIELDS: [(&str, usize); 16] = [
    ("hidden_block_count_x", 0),
    ("hidden_block_count_y", 1),
    ("hidden_block_count_z", 2),
    ("hidden_group_size_x", 3),
    ("hidden_group_size_y", 4),
    ("hidden_group_size_z", 5),
    ("hidden_remainder_x", 6),
    ("hidden_remainder_y", 7),
    ("hidden_remainder_z", 8),
    ("hidden_grid_dims", 9),
    ("hidden_global_offset_x", 10),
    ("hidden_global_offset_y", 11),
    ("hidden_global_offset_z", 12),
    ("workgroup size x (group size or remainder)", 13),
    ("workgroup size y (group size or remainder)", 14),
    ("workgroup size z (group size or remainder)", 15),
];

/// What every record must hold for a launch of `groups` work-groups of `block` (hcq launches
/// whole work-groups: the remainders are 0, every group is full).
#[must_use]
pub fn expected(groups: [u32; 3], block: [u32; 3]) -> [u32; RECORD] {
    let dims = if groups[2] * block[2] > 1 {
        3
    } else if groups[1] * block[1] > 1 {
        2
    } else {
        1
    };
    [
        groups[0], groups[1], groups[2], block[0], block[1], block[2], 0, 0, 0, dims, 0, 0, 0,
        block[0], block[1], block[2],
    ]
}

/// The `hidden_args` code object for `target`.
///
/// # Panics
/// If the fixture is missing (a test failure).
#[must_use]
pub fn code_object(target: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
        "../core/tests/fixtures/kernels/hidden_args-{target}.co"
    ));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Launches `hidden_args` on `dev` over `groups` x `block` and returns, for every work-group
/// whose record differs from [`expected`], `"group g: <hidden argument> read v, the launch
/// has w"` (empty when the kernel read every hidden argument right).
///
/// # Errors
/// The launch's or the wait's.
///
/// # Panics
/// On a test setup failure (loading the fixture, allocating).
pub fn mismatches(
    dev: &Device,
    groups: [u32; 3],
    block: [u32; 3],
) -> hcq_driver::Result<Vec<String>> {
    let co = code_object(&dev.target_name());
    let prog = Program::load(dev, &co, "hidden_args")?;
    let n: u32 = groups.iter().product();
    let len = n as usize * RECORD;
    let out = dev.alloc((len * 4) as u64, BufferKind::Gtt)?;
    out.write(0, &vec![0xff; len * 4])?;
    // SAFETY: the kernel writes one record of RECORD u32s per work-group into `out`, which
    // holds exactly that many, at an index built from the block counts it reads (a wrong count
    // faults on the simulator's page table rather than writing host memory); `out` outlives
    // the read below, which waits for the launch.
    unsafe {
        prog.launch_builder()
            .arg(&out)
            .groups(groups)
            .block(block)
            .launch()?;
    }
    let mut b = vec![0u8; len * 4];
    out.read(0, &mut b)?;
    let got: Vec<u32> = b
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect();
    let want = expected(groups, block);
    let mut bad = Vec::new();
    for (g, rec) in got.chunks_exact(RECORD).enumerate() {
        for &(name, i) in &FIELDS {
            if rec[i] != want[i] {
                bad.push(format!(
                    "group {g}: {name} read {}, the launch has {}",
                    rec[i], want[i]
                ));
            }
        }
    }
    Ok(bad)
}
