//! Hot-path costs of the packet layer: building one kernel launch (wait + memory_barrier + exec
//! + signal, 105 dwords), one patch, and decoding the launch.

use core::hint::black_box;
use criterion::{Criterion, criterion_group, criterion_main};
use hcq_core::arch::{GFX11, GpuVa};
use hcq_core::cmd::Pm4List;
use hcq_core::pm4::{self, Program};
use hcq_core::signal::SignalRef;

fn prog() -> Program {
    Program {
        prog_addr: GpuVa(0x7f00_0000_1000),
        scratch_addr: GpuVa(0x7e00_0000_0000),
        tmpring_size: 0x1234,
        rsrc1: 0x11,
        rsrc2: 0x22,
        dispatch: None,
    }
}

fn bench(c: &mut Criterion) {
    let s = SignalRef {
        addr: 0x1000,
        event_mailbox_ptr: 0x2000,
        event_id: 3,
    };
    let p = prog();
    let mut l: Box<Pm4List<512, 16>> = Box::new(Pm4List::new(&GFX11));
    c.bench_function("build launch (wait+barrier+exec+signal, 105 dwords)", |b| {
        b.iter(|| {
            l.clear();
            l.wait(black_box(&s), black_box(5)).unwrap();
            l.memory_barrier().unwrap();
            l.exec(
                black_box(&p),
                GpuVa(0x3000),
                black_box([4, 1, 1]),
                black_box([32, 1, 1]),
            )
            .unwrap();
            l.signal(black_box(&s), black_box(6)).unwrap();
            black_box(l.as_dwords().len())
        })
    });
    l.clear();
    let w = l.wait(&s, 5).unwrap();
    l.memory_barrier().unwrap();
    let (e, _) = l.exec(&p, GpuVa(0x3000), [4, 1, 1], [32, 1, 1]).unwrap();
    let sg = l.signal(&s, 6).unwrap();
    c.bench_function("patch wait value", |b| {
        b.iter(|| l.update_wait(&w, None, Some(black_box(7))).unwrap())
    });
    c.bench_function("patch signal value", |b| {
        b.iter(|| l.update_signal(&sg, None, Some(black_box(7))).unwrap())
    });
    c.bench_function("patch launch dims", |b| {
        b.iter(|| {
            l.update_exec(&e, black_box([8, 1, 1]), black_box([64, 1, 1]))
                .unwrap()
        })
    });
    let d = l.as_dwords().to_vec();
    c.bench_function("decode launch (15 packets)", |b| {
        b.iter(|| pm4::decode(black_box(&d)).count())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
