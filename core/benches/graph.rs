//! Patching a recorded 1000-kernel graph for a replay (`graph_patch_1000`): every kernel's
//! launch dims change and one input buffer (an argument of every kernel) moves. Budgeted (in
//! `hcq bench`) as at most 2x plain stores of the same dwords (`graph_patch_1000_floor_stores`
//! here). Also the no-change replay (only comparisons).

use core::hint::black_box;
use core::sync::atomic::{AtomicU32, Ordering};

use criterion::{Criterion, criterion_group, criterion_main};
use hcq_core::addr::GpuVa;
use hcq_core::arch::GFX11;
use hcq_core::cmd::Pm4List;
use hcq_core::patch::{DimLimits, Dims, PatchTable, Value};
use hcq_core::pm4::Program;

const KERNELS: usize = 1000;
type Table = PatchTable<1024, 4096, 2>;

struct Graph {
    table: Box<Table>,
    ib: Vec<AtomicU32>,
    ka: Vec<AtomicU32>,
}

fn dims(i: usize, replay: u32) -> Dims {
    // CAST: small test values.
    let i = i as u32;
    Dims {
        global: [1 + (i + replay) % 64, 1 + replay % 3, 1],
        local: [32 + (replay % 2) * 32, 1, 1],
    }
}

fn record() -> Graph {
    let mut list: Box<Pm4List<{ 70 * KERNELS }, 1024>> = Box::new(Pm4List::new(&GFX11));
    let mut table: Box<Table> = Box::new(PatchTable::new());
    let input = table
        .declare(Value::Addr {
            addr: GpuVa(0x1_0000_0000),
            bytes: 1 << 20,
        })
        .unwrap();
    let prog = Program {
        prog_addr: GpuVa(0x4000_0000),
        ..Program::default()
    };
    let ka_base = 0x2_0000_0000u64;
    let mut ka = vec![0u32; 4 * KERNELS];
    let mut execs = Vec::new();
    for i in 0..KERNELS {
        let d = dims(i, 0);
        let (h, _) = list
            .exec(&prog, GpuVa(ka_base + 16 * i as u64), d.global, d.local)
            .unwrap();
        execs.push((h, table.declare(Value::Dims(d)).unwrap()));
        // Kernargs: input + 8 * i, then a fixed output pointer.
        let p = 0x1_0000_0000u64 + 8 * i as u64;
        ka[4 * i] = p as u32;
        ka[4 * i + 1] = (p >> 32) as u32;
        table
            .bind_u64(input, 1, Some(&ka[..]), (4 * i) as u32, 8 * i as u64)
            .unwrap();
    }
    for (h, v) in &execs {
        table
            .bind_exec(*v, 0, list.as_dwords(), h, DimLimits::AMD, None)
            .unwrap();
    }
    table.seal();
    Graph {
        table,
        ib: list
            .as_dwords()
            .iter()
            .map(|&d| AtomicU32::new(d))
            .collect(),
        ka: ka.into_iter().map(AtomicU32::new).collect(),
    }
}

fn values(replay: u32) -> Vec<Option<Value>> {
    let mut v = vec![Some(Value::Addr {
        addr: GpuVa(0x1_0000_0000 + 0x10_0000 * u64::from(replay % 16)),
        bytes: 1 << 20,
    })];
    v.extend((0..KERNELS).map(|i| Some(Value::Dims(dims(i, replay)))));
    v
}

fn bench(c: &mut Criterion) {
    let mut g = record();
    let sets: Vec<_> = (1..=2).map(values).collect();
    let mut k = 0usize;
    c.bench_function("graph_patch_1000", |b| {
        b.iter(|| {
            k ^= 1;
            let mut t: [&[AtomicU32]; 2] = [&g.ib, &g.ka];
            black_box(g.table.apply(black_box(&sets[k]), &mut t).unwrap())
        })
    });
    // The floor: the same dword stores from a precomputed list.
    let mut writes: Vec<(u8, u32, u32)> = Vec::new();
    for e in g.table.entries() {
        for k in 0..e.op.span() {
            writes.push((e.target, e.dword + k as u32, k as u32));
        }
    }
    c.bench_function("graph_patch_1000_floor_stores", |b| {
        b.iter(|| {
            k ^= 1;
            let t: [&[AtomicU32]; 2] = [&g.ib, &g.ka];
            for &(tg, d, v) in &writes {
                t[tg as usize][d as usize].store(v ^ k as u32, Ordering::Relaxed);
            }
        })
    });
    let same = values(5);
    let mut t: [&[AtomicU32]; 2] = [&g.ib, &g.ka];
    g.table.apply(&same, &mut t).unwrap();
    c.bench_function("graph_patch_1000_unchanged", |b| {
        b.iter(|| {
            let mut t: [&[AtomicU32]; 2] = [&g.ib, &g.ka];
            black_box(g.table.apply(black_box(&same), &mut t).unwrap())
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
