//! Replays the committed seed corpus of each target (fuzz/corpus/<target>/*) through its
//! harness, plus a few thousand pseudo-random inputs, so `cargo test` exercises the targets
//! without libFuzzer.

use std::path::Path;

fn replay(target: &str, f: fn(&[u8])) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(target);
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.unwrap().path();
        f(&std::fs::read(&p).unwrap());
        n += 1;
    }
    n
}

fn random_inputs(f: fn(&[u8]), count: usize) {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in 0..count {
        let len = (i * 7) % 600;
        let data: Vec<u8> = (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect();
        f(&data);
    }
}

#[test]
fn decode_corpus() {
    assert!(replay("decode", hcq_fuzz::decode) >= 3);
    random_inputs(hcq_fuzz::decode, 3000);
}

#[test]
fn patching_corpus() {
    assert!(replay("patching", hcq_fuzz::patching) >= 3);
    random_inputs(hcq_fuzz::patching, 3000);
}

#[test]
fn patch_table_corpus() {
    assert!(replay("patch_table", hcq_fuzz::patch_table::run) >= 3);
    random_inputs(hcq_fuzz::patch_table::run, 3000);
}

#[test]
fn codeobj_corpus() {
    assert!(
        replay("codeobj", |d| {
            hcq_fuzz::codeobj::run(d);
            hcq_fuzz::codeobj::run_patched(d);
        }) >= 3
    );
    random_inputs(hcq_fuzz::codeobj::run, 2000);
}

#[test]
fn sim_exec_corpus() {
    assert!(replay("sim_exec", hcq_fuzz::sim_exec::run) >= 3);
    random_inputs(hcq_fuzz::sim_exec::run, 3000);
}

#[test]
fn ring_wrap_corpus() {
    assert!(replay("ring_wrap", hcq_fuzz::ring::ring_wrap) >= 3);
    random_inputs(hcq_fuzz::ring::ring_wrap, 3000);
}

#[test]
fn arena_corpus() {
    assert!(replay("arena", hcq_fuzz::ring::arena) >= 3);
    random_inputs(hcq_fuzz::ring::arena, 3000);
}

#[test]
fn metadata_corpus() {
    assert!(replay("metadata", hcq_fuzz::metadata::run) >= 3);
    // The seeds are real documents (clang-19's), so the harness checks past the parse.
    let seed = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/metadata/global_id_gfx1100"),
    )
    .unwrap();
    assert_eq!(
        hcq_core::metadata::Metadata::parse(&seed)
            .unwrap()
            .kernel_count,
        1
    );
    random_inputs(hcq_fuzz::metadata::run, 3000);
}

#[test]
fn isa_corpus() {
    assert!(replay("isa", hcq_fuzz::isa::run_input) >= 3);
    random_inputs(hcq_fuzz::isa::run_input, 3000);
    // Random words rarely decode far: also mutate the seeds (real kernels) a little.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/isa");
    let seeds: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| std::fs::read(e.unwrap().path()).unwrap())
        .collect();
    let mut x: u64 = 0x1234_5678_9ABC_DEF1;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for i in 0..5000 {
        let mut d = seeds[i % seeds.len()].clone();
        for _ in 0..1 + rnd() % 8 {
            let p = (rnd() as usize) % d.len();
            d[p] ^= 1 << (rnd() % 8);
        }
        hcq_fuzz::isa::run_input(&d);
    }
}
