//! The engines inside `SimKfd`, driven through raw ioctls: interrupts waking WAIT_EVENTS,
//! unsatisfiable waits timing out at once, VM faults and bad packets as KFD events, fixture
//! kernels dispatched from loaded code objects, two GPUs waiting on each other, threaded mode.

mod common;

use common::{Buf, GTT_FLAGS, Proc, VRAM_FLAGS, cpu_read, cpu_write};
use hcq_core::addr::GpuVa;
use hcq_core::arch::GFX11;
use hcq_core::codeobj::CodeObject;
use hcq_core::kfd::*;
use hcq_core::pm4;
use hcq_core::sdma;
use hcq_core::signal::SignalRef;
use hcq_sim::engine::attach::SimGpu;
use hcq_sim::engine::{QueueFaultKind, QueueId, QueueState};
use hcq_sim::{GpuConfig, SimConfig, SimMode};

const COMPLETE: u32 = KFD_IOC_WAIT_RESULT_COMPLETE;
const TIMEOUT: u32 = KFD_IOC_WAIT_RESULT_TIMEOUT;

struct Q {
    id: u32,
    ring: Buf,
    gart: Buf,
    db: u64,
    wptr: u64,
    sdma: bool,
}

struct World {
    p: Proc,
    gpu: SimGpu,
    page: Buf,
    data: Buf,
    dbs: Vec<u64>,
    page_given: core::cell::Cell<bool>,
}

fn world(cfg: SimConfig) -> World {
    let p = Proc::new(cfg);
    let gpu = SimGpu::attach(&p.sim).unwrap();
    let all = p.gpus.clone();
    let page = p.alloc_at(0, KFD_EVENT_PAGE_SIZE, GTT_FLAGS).unwrap();
    p.map(page.handle, &all).unwrap();
    let data = p.alloc_at(0, 1 << 20, GTT_FLAGS).unwrap();
    p.map(data.handle, &all).unwrap();
    World {
        p,
        gpu,
        page,
        data,
        dbs: Vec::new(),
        page_given: core::cell::Cell::new(false),
    }
}

impl World {
    fn queue(&mut self, gpu: usize, sdma: bool, ring_size: u64) -> Q {
        let p = &self.p;
        let g = [p.gpus[gpu]];
        let mk = |size, flags| {
            let b = p.alloc_at(gpu, size, flags).unwrap();
            p.map(b.handle, &g).unwrap();
            b
        };
        let gart = mk(4096, GTT_FLAGS);
        let ring = mk(ring_size, GTT_FLAGS);
        let (eop, cwsr) = if sdma {
            (None, None)
        } else {
            (Some(mk(4096, VRAM_FLAGS)), Some(mk(0x2C0_2000, VRAM_FLAGS)))
        };
        let mut a = CreateQueueArgs {
            ring_base_address: ring.va,
            write_pointer_address: gart.va + 0x38,
            read_pointer_address: gart.va + 0x80,
            ring_size: ring_size as u32,
            gpu_id: p.gpus[gpu],
            queue_type: if sdma {
                KFD_IOC_QUEUE_TYPE_SDMA
            } else {
                KFD_IOC_QUEUE_TYPE_COMPUTE
            },
            queue_percentage: KFD_MAX_QUEUE_PERCENTAGE,
            queue_priority: 7,
            eop_buffer_address: eop.map_or(0, |e| e.va),
            eop_buffer_size: eop.map_or(0, |e| e.size),
            ctx_save_restore_address: cwsr.map_or(0, |c| c.va),
            ctx_save_restore_size: if sdma { 0 } else { 0x2BE_A000 },
            ctl_stack_size: if sdma { 0 } else { 0xA000 },
            ..Default::default()
        };
        p.ioctl(AMDKFD_IOC_CREATE_QUEUE, &mut a).unwrap();
        while self.dbs.len() <= gpu {
            self.dbs.push(0);
        }
        if self.dbs[gpu] == 0 {
            self.dbs[gpu] = p
                .sim
                .mmap(
                    None,
                    KFD_DOORBELL_SLICE_SIZE,
                    Prot::READ_WRITE,
                    MapKind::File {
                        fd: p.kfd,
                        offset: doorbell_slice_offset(a.doorbell_offset),
                    },
                )
                .unwrap();
        }
        Q {
            id: a.queue_id,
            ring,
            gart,
            db: self.dbs[gpu] + doorbell_in_slice(a.doorbell_offset),
            wptr: 0,
            sdma,
        }
    }

    /// Writes packets at wptr (modulo the ring), publishes wptr, rings the doorbell.
    fn submit(&self, q: &mut Q, dwords: &[u32]) {
        let upd = if q.sdma { 4 } else { 1 };
        let size_dw = q.ring.size / 4;
        for &d in dwords {
            cpu_write::<u32>(q.ring.va + (q.wptr / upd % size_dw) * 4, d);
            q.wptr += upd;
        }
        cpu_write::<u64>(q.gart.va + 0x38, q.wptr);
        cpu_write::<u64>(q.db, q.wptr);
    }

    fn rptr(&self, q: &Q) -> u64 {
        cpu_read::<u64>(q.gart.va + 0x80)
    }

    fn signal_event(&self) -> (u32, SignalRef) {
        // The event page goes with the first signal event only.
        let page = if self.page_given.replace(true) {
            0
        } else {
            self.page.handle
        };
        let id = self
            .p
            .create_event(KFD_IOC_EVENT_SIGNAL, true, page)
            .unwrap()
            .event_id;
        let s = SignalRef {
            addr: self.data.va + 0x1000 + u64::from(id) * 64,
            event_mailbox_ptr: self.page.va + 8 * u64::from(id),
            event_id: id,
        };
        (id, s)
    }

    fn wait(&self, id: u32, timeout: u32) -> (u32, EventData) {
        let mut e = [EventData::for_event(id)];
        let r = self.p.wait(&mut e, true, timeout).unwrap();
        (r, e[0])
    }
}

fn buf(f: impl FnOnce(&mut [u32]) -> Result<usize, hcq_core::packet::EncodeError>) -> Vec<u32> {
    let mut b = vec![0u32; 2048];
    let n = f(&mut b).unwrap();
    b.truncate(n);
    b
}

#[test]
fn interrupt_wakes_wait_events_and_rptr_is_written_back() {
    let mut w = world(SimConfig::default());
    let mut q = w.queue(0, false, 4096);
    let (id, s) = w.signal_event();
    let pkt = buf(|b| pm4::signal(b, &GFX11, &s, 41));
    w.submit(&mut q, &pkt);
    // Nothing runs until someone waits (deterministic mode).
    assert_eq!(cpu_read::<u32>(s.value_addr()), 0);
    let (r, _) = w.wait(id, 5000);
    assert_eq!(r, COMPLETE);
    assert_eq!(cpu_read::<u32>(s.value_addr()), 41);
    assert_eq!(w.rptr(&q), 16);
    let t = w.gpu.engines().trace_text();
    assert!(t.contains("RELEASE_MEM"), "{t}");
    assert!(t.contains(&format!("interrupt context {id:#x}")), "{t}");
}

#[test]
fn unsatisfiable_wait_times_out_at_once_then_completes() {
    let mut w = world(SimConfig::default());
    let mut q = w.queue(0, false, 4096);
    let (id, s) = w.signal_event();
    let gate = w.data.va + 0x100;
    let mut pkt = buf(|b| pm4::wait(b, &SignalRef::new(gate - 8), 1));
    pkt.extend(buf(|b| pm4::signal(b, &GFX11, &s, 1)));
    w.submit(&mut q, &pkt);
    // 30 s timeout, but the engines are idle and blocked: TIMEOUT now.
    let (r, _) = w.wait(id, 30_000);
    assert_eq!(r, TIMEOUT);
    assert!(matches!(
        w.gpu.engines().queue(QueueId(q.id)).unwrap().state,
        QueueState::Waiting(_)
    ));
    cpu_write::<u32>(gate, 1);
    assert_eq!(w.wait(id, 30_000).0, COMPLETE);
    assert_eq!(w.rptr(&q), 23);
}

#[test]
fn vm_fault_sets_the_memory_event_and_evicts() {
    let mut w = world(SimConfig::default());
    let mut q = w.queue(0, false, 4096);
    let mem =
        w.p.create_event(KFD_IOC_EVENT_MEMORY, false, 0)
            .unwrap()
            .event_id;
    w.submit(
        &mut q,
        &buf(|b| pm4::signal(b, &GFX11, &SignalRef::new(0xDEAD_B000), 1)),
    );
    let (r, e) = w.wait(mem, 1000);
    assert_eq!(r, COMPLETE);
    let d = e.memory_exception();
    assert_eq!(d.va, 0xDEAD_B000);
    assert_eq!(d.gpu_id, w.p.gpus[0]);
    assert_eq!((d.failure.not_present, d.failure.read_only), (1, 1));
    assert!(
        !w.p.sim.queue(q.id).unwrap().active,
        "KFD evicted the queues"
    );
    let info = w.gpu.engines().queue(QueueId(q.id)).unwrap();
    let QueueState::Faulted(f) = info.state else {
        panic!("{info:?}")
    };
    assert!(matches!(f.kind, QueueFaultKind::Vm(v) if v.va == 0xDEAD_B008));
}

#[test]
fn bad_packets_set_the_hw_exception_event() {
    let mut w = world(SimConfig::default());
    let hw =
        w.p.create_event(KFD_IOC_EVENT_HW_EXCEPTION, false, 0)
            .unwrap()
            .event_id;
    let mut q = w.queue(0, true, 4096);
    // SDMA packet crossing the ring end: 1021 dwords of NOP, a TRAP at 1021..1023 fits, a
    // TRAP at dword 1023 of 1024 does not.
    w.submit(&mut q, &buf(|b| sdma::nop(b, 1021)));
    assert_eq!(w.wait(hw, 1000).0, TIMEOUT);
    w.submit(&mut q, &buf(|b| sdma::trap(b, 1)));
    assert_eq!(w.wait(hw, 1000).0, TIMEOUT);
    assert_eq!(w.rptr(&q), 1023 * 4);
    w.submit(&mut q, &buf(|b| sdma::trap(b, 2)));
    let (r, e) = w.wait(hw, 1000);
    assert_eq!(r, COMPLETE);
    assert_eq!(e.hw_exception().gpu_id, w.p.gpus[0]);
    let QueueState::Faulted(f) = w.gpu.engines().queue(QueueId(q.id)).unwrap().state else {
        panic!()
    };
    assert!(
        f.message.contains("crosses the end of the ring"),
        "{}",
        f.message
    );
}

fn fixture(name: &str) -> Vec<u8> {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/tests/fixtures/kernels");
    std::fs::read(dir.join(name)).unwrap()
}

/// Loads `co` into VRAM on GPU 0 (mapped to every GPU), returns the image base.
fn load(w: &World, co: &[u8]) -> (Buf, u64) {
    let obj = CodeObject::parse(co).unwrap();
    let size = obj.image_size();
    let mut image = vec![0u8; size as usize];
    obj.load_into(&mut image).unwrap();
    let b = w.p.alloc_at(0, size, VRAM_FLAGS).unwrap();
    w.p.map(b.handle, &w.p.gpus).unwrap();
    for (i, c) in image.chunks_exact(4).enumerate() {
        cpu_write::<u32>(
            b.va + i as u64 * 4,
            u32::from_le_bytes(c.try_into().unwrap()),
        );
    }
    (b, b.va)
}

struct Launch<'a> {
    co: &'a [u8],
    kernel: &'a str,
    args: &'a [u8],
    groups: u32,
    scratch: Option<(u64, u32)>,
}

/// Dispatches a kernel as tinygrad does and signals an event; returns the wait result.
fn launch(w: &World, q: &mut Q, base: u64, l: &Launch<'_>) -> u32 {
    let obj = CodeObject::parse(l.co).unwrap();
    let k = obj.kernel(l.kernel).unwrap();
    let kd = k.descriptor;
    let kernargs = w.data.va + 0x8_0000;
    for (i, b) in l.args.iter().enumerate() {
        cpu_write::<u8>(kernargs + i as u64, *b);
    }
    let dispatch = k.uses_dispatch_ptr().then(|| pm4::DispatchInfo {
        packet_offset: (u64::from(kd.kernarg_size) + 63) & !63,
        group_segment_size: kd.group_segment_fixed_size,
        private_segment_size: kd.private_segment_fixed_size,
    });
    if let Some(d) = dispatch {
        let dp = pm4::dispatch_packet(&d, GpuVa(kernargs), [l.groups, 1, 1], [64, 1, 1]).unwrap();
        for (i, b) in dp.to_bytes().iter().enumerate() {
            cpu_write::<u8>(kernargs + d.packet_offset + i as u64, *b);
        }
    }
    let (scratch_addr, tmpring) = l.scratch.unwrap_or((0, 0));
    let prog = pm4::Program {
        prog_addr: GpuVa(base + k.entry_offset),
        scratch_addr: GpuVa(scratch_addr),
        tmpring_size: tmpring,
        rsrc1: kd.compute_pgm_rsrc1,
        rsrc2: kd.compute_pgm_rsrc2 | k.lds_granules() << 15,
        rsrc3: kd.compute_pgm_rsrc3,
        dispatch,
        private_segment_buffer: None,
        flat_scratch_init: None,
    };
    let (id, s) = w.signal_event();
    // The code and kernargs were written through the CPU's VRAM mapping: flush HDP first.
    let mut pkt = buf(|b| pm4::memory_barrier(b, &GFX11));
    pkt.extend(buf(|b| {
        pm4::exec(
            b,
            &GFX11,
            &prog,
            GpuVa(kernargs),
            [l.groups, 1, 1],
            [64, 1, 1],
        )
    }));
    pkt.extend(buf(|b| pm4::signal(b, &GFX11, &s, 1)));
    w.submit(q, &pkt);
    let (r, _) = w.wait(id, 1000);
    r
}

fn args(parts: &[u64]) -> Vec<u8> {
    parts.iter().flat_map(|p| p.to_le_bytes()).collect()
}

#[test]
fn fixture_kernels_run_from_loaded_code_objects() {
    // Strict, as hcq's suites judge: an out-of-range scratch access below faults.
    let mut w = world(SimConfig {
        strict: true,
        ..SimConfig::default()
    });
    let mut q = w.queue(0, false, 1 << 16);
    let d = w.data.va;
    let (a, b, c) = (d + 0x1_0000, d + 0x2_0000, d + 0x3_0000);
    for i in 0..200u64 {
        cpu_write::<u32>(a + i * 4, i as u32);
        cpu_write::<u32>(b + i * 4, 1000 + 2 * i as u32);
    }
    // vector_add: c[i] = a[i] + b[i] for i < 150 (3 groups of 64 cover 192).
    let co = fixture("vector_add-gfx1100.co");
    w.gpu
        .engines()
        .with_kernels(|k| k.register_fixture(&co))
        .unwrap();
    let (_, base) = load(&w, &co);
    let mut ka = args(&[a, b, c]);
    ka.extend(150u32.to_le_bytes());
    let r = launch(
        &w,
        &mut q,
        base,
        &Launch {
            co: &co,
            kernel: "vector_add",
            args: &ka,
            groups: 3,
            scratch: None,
        },
    );
    assert_eq!(r, COMPLETE, "{}", w.gpu.engines().trace_text());
    for i in 0..150u64 {
        assert_eq!(cpu_read::<u32>(c + i * 4), 1000 + 3 * i as u32);
    }
    assert_eq!(cpu_read::<u32>(c + 150 * 4), 0);

    // lds_reverse over 128 elements of a.
    let co = fixture("lds_reverse-gfx1100.co");
    w.gpu
        .engines()
        .with_kernels(|k| k.register_fixture(&co))
        .unwrap();
    let (_, base) = load(&w, &co);
    let r = launch(
        &w,
        &mut q,
        base,
        &Launch {
            co: &co,
            kernel: "lds_reverse",
            args: &args(&[a]),
            groups: 2,
            scratch: None,
        },
    );
    assert_eq!(r, COMPLETE, "{}", w.gpu.engines().trace_text());
    assert_eq!(cpu_read::<u32>(a), 63);
    assert_eq!(cpu_read::<u32>(a + 63 * 4), 0);
    assert_eq!(cpu_read::<u32>(a + 64 * 4), 127);

    // grid_size with the dispatch pointer.
    let co = fixture("dispatch_ptr-gfx1100.co");
    w.gpu
        .engines()
        .with_kernels(|k| k.register_fixture(&co))
        .unwrap();
    let (_, base) = load(&w, &co);
    let out = d + 0x4_0000;
    let r = launch(
        &w,
        &mut q,
        base,
        &Launch {
            co: &co,
            kernel: "grid_size",
            args: &args(&[out]),
            groups: 2,
            scratch: None,
        },
    );
    assert_eq!(r, COMPLETE, "{}", w.gpu.engines().trace_text());
    assert_eq!(cpu_read::<u32>(out), 128);
    assert_eq!(cpu_read::<u32>(out + 127 * 4), 128);
    assert_eq!(cpu_read::<u32>(out + 128 * 4), 0);

    // scratch_sum needs TMPRING and a mapped scratch base.
    let co = fixture("scratch-gfx1100.co");
    w.gpu
        .engines()
        .with_kernels(|k| k.register_fixture(&co))
        .unwrap();
    let (_, base) = load(&w, &co);
    let scratch = w.p.alloc(1 << 16, VRAM_FLAGS);
    let out = d + 0x5_0000;
    let mut ka = args(&[out]);
    ka.extend(3u32.to_le_bytes());
    let r = launch(
        &w,
        &mut q,
        base,
        &Launch {
            co: &co,
            kernel: "scratch_sum",
            args: &ka,
            groups: 1,
            scratch: Some((scratch.va, 9 << 12 | 1)),
        },
    );
    assert_eq!(r, COMPLETE, "{}", w.gpu.engines().trace_text());
    assert_eq!(cpu_read::<u32>(out + 63 * 4), 360);
    // Too little scratch per wave: the lanes' accesses past their private size fault the
    // strict simulator (a GPU reads 0 and drops the writes: a finding when not strict).
    let r = launch(
        &w,
        &mut q,
        base,
        &Launch {
            co: &co,
            kernel: "scratch_sum",
            args: &ka,
            groups: 1,
            scratch: Some((scratch.va, 4 << 12 | 1)),
        },
    );
    assert_eq!(r, TIMEOUT);
    let QueueState::Faulted(f) = w.gpu.engines().queue(QueueId(q.id)).unwrap().state else {
        panic!()
    };
    // The machine code's first store beyond 32 bytes per lane faults, naming where.
    assert!(
        f.message
            .contains("scratch access of 4 bytes at private offset 0x20")
            && f.message.contains("COMPUTE_TMPRING_SIZE"),
        "{}",
        f.message
    );
}

/// The scratch region must be mapped without a hole: a region whose first and last bytes
/// lie in two buffers with an unmapped gap between them is short at the gap, named at
/// dispatch (before any wave runs into it, whichever slot it takes).
#[test]
fn a_hole_inside_the_scratch_region_is_named_at_dispatch() {
    let mut w = world(SimConfig::default());
    let mut q = w.queue(0, false, 1 << 16);
    let co = fixture("scratch-gfx1100.co");
    w.gpu
        .engines()
        .with_kernels(|k| k.register_fixture(&co))
        .unwrap();
    let (_, base) = load(&w, &co);
    const S: u64 = 64 << 10;
    let r =
        w.p.sim
            .mmap(None, 3 * S, Prot::NONE, MapKind::Reserve)
            .unwrap();
    for va in [r, r + 2 * S] {
        let mut a = AllocMemoryOfGpuArgs {
            va_addr: va,
            size: S,
            gpu_id: w.p.gpu(),
            flags: VRAM_FLAGS,
            ..Default::default()
        };
        w.p.ioctl(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &mut a).unwrap();
        w.p.map(a.handle, &[w.p.gpu()]).unwrap();
    }
    let out = w.data.va + 0x5_0000;
    let mut ka = args(&[out]);
    ka.extend(3u32.to_le_bytes());
    // 20 wave slots of 36 x 256 bytes: 180 KiB from the base, ending inside the second buffer.
    let tmpring = 36 << 12 | 20;
    let res = launch(
        &w,
        &mut q,
        base,
        &Launch {
            co: &co,
            kernel: "scratch_sum",
            args: &ka,
            groups: 1,
            scratch: Some((r, tmpring)),
        },
    );
    assert_eq!(res, TIMEOUT);
    let QueueState::Faulted(f) = w.gpu.engines().queue(QueueId(q.id)).unwrap().state else {
        panic!()
    };
    assert!(
        f.message.contains(&format!(
            "programs 20 wave slots of 9216 bytes = 184320 bytes from COMPUTE_DISPATCH_SCRATCH_BASE {r:#x}, but only 65536 bytes are mapped there"
        )),
        "{}",
        f.message
    );
}

#[test]
fn unregistered_or_misloaded_kernels_fault() {
    // The host stand-ins are an explicit opt-in; this is their lookup by machine code.
    let opt_in = |w: &World| {
        w.gpu
            .engines()
            .with_kernels(|k| k.set_mode(hcq_sim::stand_ins::ExecMode::HostStandIns))
    };
    let mut w = world(SimConfig::default());
    opt_in(&w);
    let hw =
        w.p.create_event(KFD_IOC_EVENT_HW_EXCEPTION, false, 0)
            .unwrap()
            .event_id;
    let mut q = w.queue(0, false, 1 << 16);
    let co = fixture("fill-gfx1100.co");
    let (_, base) = load(&w, &co);
    let mut ka = args(&[w.data.va]);
    ka.extend(7u32.to_le_bytes());
    ka.extend(64u32.to_le_bytes());
    let l = Launch {
        co: &co,
        kernel: "fill",
        args: &ka,
        groups: 1,
        scratch: None,
    };
    assert_eq!(launch(&w, &mut q, base, &l), TIMEOUT);
    let QueueState::Faulted(f) = w.gpu.engines().queue(QueueId(q.id)).unwrap().state else {
        panic!()
    };
    assert!(
        f.message.contains("no host kernel is registered"),
        "{}",
        f.message
    );
    assert_eq!(w.wait(hw, 0).0, COMPLETE);
    assert_eq!(cpu_read::<u32>(w.data.va), 0);

    // Registered, but the code was loaded one page off: not found either.
    let mut w = world(SimConfig::default());
    opt_in(&w);
    let mut q = w.queue(0, false, 1 << 16);
    w.gpu
        .engines()
        .with_kernels(|k| k.register_fixture(&co))
        .unwrap();
    let (b, base) = load(&w, &co);
    // Corrupt one byte of machine code.
    let entry = base
        + CodeObject::parse(&co)
            .unwrap()
            .kernel("fill")
            .unwrap()
            .entry_offset;
    cpu_write::<u8>(entry + 5, cpu_read::<u8>(entry + 5) ^ 0xff);
    assert_eq!(launch(&w, &mut q, base, &l), TIMEOUT);
    let _ = b;
    // Correctly loaded: runs.
    let mut w = world(SimConfig::default());
    opt_in(&w);
    let mut q = w.queue(0, false, 1 << 16);
    w.gpu
        .engines()
        .with_kernels(|k| k.register_fixture(&co))
        .unwrap();
    let (_, base) = load(&w, &co);
    let mut ka = args(&[w.data.va]);
    ka.extend(7u32.to_le_bytes());
    ka.extend(64u32.to_le_bytes());
    let l = Launch {
        co: &co,
        kernel: "fill",
        args: &ka,
        groups: 1,
        scratch: None,
    };
    assert_eq!(launch(&w, &mut q, base, &l), COMPLETE);
    assert_eq!(cpu_read::<u32>(w.data.va + 63 * 4), 7);
}

#[test]
fn two_gpus_one_waits_on_a_signal_written_by_the_other() {
    let mut w = world(SimConfig {
        gpus: vec![GpuConfig::gfx1100(), GpuConfig::gfx1100()],
        ..SimConfig::default()
    });
    let mut waiter = w.queue(1, false, 4096);
    let mut writer = w.queue(0, true, 4096);
    let (id, done) = w.signal_event();
    let x = SignalRef::new(w.data.va + 0x200);
    let mut pkt = buf(|b| pm4::wait(b, &x, 5));
    pkt.extend(buf(|b| pm4::signal(b, &GFX11, &done, 1)));
    w.submit(&mut waiter, &pkt);
    assert_eq!(w.wait(id, 1000).0, TIMEOUT);
    w.submit(&mut writer, &buf(|b| sdma::signal(b, &GFX11, &x, 5)));
    assert_eq!(w.wait(id, 1000).0, COMPLETE);
    assert_eq!(cpu_read::<u32>(done.value_addr()), 1);
    let t = w.gpu.engines().trace();
    let gpus: std::collections::BTreeSet<u32> = t.iter().map(|e| e.gpu_id).collect();
    assert_eq!(gpus.len(), 2);
    // Memory mapped only to GPU 0 faults on GPU 1.
    let only0 = w.p.alloc(4096, GTT_FLAGS);
    let mem =
        w.p.create_event(KFD_IOC_EVENT_MEMORY, false, 0)
            .unwrap()
            .event_id;
    w.submit(
        &mut waiter,
        &buf(|b| pm4::signal(b, &GFX11, &SignalRef::new(only0.va), 1)),
    );
    let (r, e) = w.wait(mem, 1000);
    assert_eq!(r, COMPLETE);
    assert_eq!(e.memory_exception().gpu_id, w.p.gpus[1]);
    assert_eq!(e.memory_exception().va, only0.va);
}

#[test]
fn threaded_engines_race_the_host() {
    let mut w = world(SimConfig {
        mode: SimMode::Threaded,
        ..SimConfig::default()
    });
    let mut q = w.queue(0, false, 1024);
    let s = SignalRef::new(w.data.va + 0x300);
    // Many submissions through a small ring: the host waits for ring space like a driver.
    for i in 1..=2000u32 {
        let pkt = buf(|b| pm4::signal(b, &GFX11, &s, u64::from(i)));
        let mut spins = 0u64;
        while q.wptr + pkt.len() as u64 - w.rptr(&q) > 256 {
            spins += 1;
            assert!(spins < 1 << 32, "engine thread stopped consuming");
            core::hint::spin_loop();
        }
        w.submit(&mut q, &pkt);
    }
    let (id, ev) = w.signal_event();
    w.submit(&mut q, &buf(|b| pm4::signal(b, &GFX11, &ev, 1)));
    assert_eq!(w.wait(id, 60_000).0, COMPLETE);
    assert_eq!(cpu_read::<u32>(s.value_addr()), 2000);
    assert_eq!(w.rptr(&q), q.wptr);
    drop(w);
}

/// Threaded mode: the engines know a queue as soon as CREATE_QUEUE returns (fault injection by
/// its id works at once, no polling) and forget it as soon as DESTROY_QUEUE returns.
#[test]
fn threaded_engines_know_queues_when_create_queue_returns() {
    let mut w = world(SimConfig {
        mode: SimMode::Threaded,
        ..SimConfig::default()
    });
    for (i, sdma) in [false, true].into_iter().enumerate() {
        let mut q = w.queue(0, sdma, 1024);
        w.gpu.engines().hang(QueueId(q.id), true).unwrap();
        let (id, ev) = w.signal_event();
        let s = SignalRef::new(w.data.va + 0x400 + 0x40 * i as u64);
        let mut pkt = if sdma {
            buf(|b| sdma::signal(b, &GFX11, &s, 7))
        } else {
            buf(|b| pm4::signal(b, &GFX11, &s, 7))
        };
        pkt.extend(if sdma {
            buf(|b| sdma::signal(b, &GFX11, &ev, 1))
        } else {
            buf(|b| pm4::signal(b, &GFX11, &ev, 1))
        });
        w.submit(&mut q, &pkt);
        assert_eq!(w.wait(id, 50).0, TIMEOUT, "a hung queue ran");
        assert_eq!(cpu_read::<u32>(s.value_addr()), 0);
        assert_eq!(w.rptr(&q), 0);
        w.gpu.engines().hang(QueueId(q.id), false).unwrap();
        w.gpu.kick();
        assert_eq!(w.wait(id, 60_000).0, COMPLETE);
        assert_eq!(cpu_read::<u32>(s.value_addr()), 7);
        let mut d = DestroyQueueArgs {
            queue_id: q.id,
            pad: 0,
        };
        w.p.ioctl(AMDKFD_IOC_DESTROY_QUEUE, &mut d).unwrap();
        assert!(w.gpu.engines().queue(QueueId(q.id)).is_none());
        assert!(w.gpu.engines().hang(QueueId(q.id), true).is_err());
    }
}
