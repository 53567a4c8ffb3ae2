//! AQL compute queues through the simulated KFD: a fixture kernel dispatched by a kernel
//! dispatch packet (after a vendor-specific PM4_IB packet that flushes HDP, as tinygrad 0.14's
//! AMD_AQL path sends it), completion signals decremented with their event, barrier-AND
//! waiting on a signal the host sets later, INVALID headers stalling, reserved packet types
//! faulting with a cause, headers reset to INVALID, and the ring wrapping.

mod common;

use common::{Buf, GTT_FLAGS, Proc, VRAM_FLAGS, cpu_read, cpu_write};
use hcq_core::arch::{ArchInfo, GFX9, GFX11};
use hcq_core::codeobj::CodeObject;
use hcq_core::kfd::*;
use hcq_core::pm4;
use hcq_sim::engine::attach::SimGpu;
use hcq_sim::engine::{QueueId, QueueKind, QueueState};
use hcq_sim::{GpuConfig, SimConfig, SimMode};

const COMPLETE: u32 = KFD_IOC_WAIT_RESULT_COMPLETE;
const TIMEOUT: u32 = KFD_IOC_WAIT_RESULT_TIMEOUT;

// hsa.h packet types and header bits.
const VENDOR: u32 = 0;
const INVALID: u32 = 1;
const KERNEL_DISPATCH: u32 = 2;
const BARRIER_AND: u32 = 3;
const BARRIER_OR: u32 = 5;
const BARRIER: u32 = 1 << 8;
const SYSTEM_SCOPES: u32 = (2 << 9) | (2 << 11);

struct World {
    p: Proc,
    gpu: SimGpu,
    page: Buf,
    data: Buf,
    ring: Buf,
    gart: Buf,
    db: u64,
    qid: u32,
    /// Packets written.
    put: u64,
}

fn create(p: &Proc, ring: &Buf, gart: &Buf) -> Result<CreateQueueArgs, Errno> {
    let g = [p.gpus[0]];
    let mk = |size, flags| {
        let b = p.alloc_at(0, size, flags).unwrap();
        p.map(b.handle, &g).unwrap();
        b
    };
    // The node's CWSR sizes (one save area per XCC: Linux 6.12 kfd_queue_acquire_buffers).
    let sizes = p.sim.queue_sizes(p.gpus[0]).unwrap();
    let eop = mk(u64::from(sizes.eop_buffer_size), VRAM_FLAGS);
    let cwsr = mk(
        sizes.cwsr_mapping_size(sizes.cwsr_size).unwrap(),
        VRAM_FLAGS,
    );
    let mut a = CreateQueueArgs {
        ring_base_address: ring.va,
        // amd_queue_t.write_dispatch_id and .read_dispatch_id, as ROCR and tinygrad pass them.
        write_pointer_address: gart.va + 56,
        read_pointer_address: gart.va + 128,
        ring_size: ring.size as u32,
        gpu_id: p.gpus[0],
        queue_type: KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
        queue_percentage: KFD_MAX_QUEUE_PERCENTAGE,
        queue_priority: 7,
        eop_buffer_address: eop.va,
        eop_buffer_size: eop.size,
        ctx_save_restore_address: cwsr.va,
        ctx_save_restore_size: sizes.cwsr_size,
        ctl_stack_size: sizes.ctl_stack_size,
        ..Default::default()
    };
    p.ioctl(AMDKFD_IOC_CREATE_QUEUE, &mut a)?;
    Ok(a)
}

fn world(ring_size: u64) -> World {
    world_on(GpuConfig::gfx1100(), ring_size)
}

fn world_on(gpu: GpuConfig, ring_size: u64) -> World {
    world_in(SimMode::Deterministic, gpu, ring_size)
}

fn world_in(mode: SimMode, gpu: GpuConfig, ring_size: u64) -> World {
    let p = Proc::new(SimConfig {
        mode,
        gpus: vec![gpu],
        ..SimConfig::default()
    });
    let gpu = SimGpu::attach(&p.sim).unwrap();
    let all = p.gpus.clone();
    let page = p.alloc_at(0, KFD_EVENT_PAGE_SIZE, GTT_FLAGS).unwrap();
    p.map(page.handle, &all).unwrap();
    let data = p.alloc_at(0, 1 << 20, GTT_FLAGS).unwrap();
    p.map(data.handle, &all).unwrap();
    let ring = p.alloc_at(0, ring_size, GTT_FLAGS).unwrap();
    p.map(ring.handle, &all).unwrap();
    let gart = p.alloc_at(0, 4096, GTT_FLAGS).unwrap();
    p.map(gart.handle, &all).unwrap();
    // The ring starts INVALID (ROCR AqlQueue fills it so); amd_queue_t as ROCR initialises it.
    for i in 0..ring_size / 64 {
        cpu_write::<u32>(ring.va + i * 64, INVALID);
    }
    cpu_write::<u32>(gart.va + 136, 128); // read_dispatch_id_field_base_byte_offset
    cpu_write::<u32>(gart.va + 180, (1 << 1) | (1 << 3)); // IS_PTR64 | ENABLE_PROFILING
    let a = create(&p, &ring, &gart).unwrap();
    let slice = p
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
    World {
        p,
        gpu,
        page,
        data,
        ring,
        gart,
        db: slice + doorbell_in_slice(a.doorbell_offset),
        qid: a.queue_id,
        put: 0,
    }
}

impl World {
    fn slot(&self, index: u64) -> u64 {
        self.ring.va + (index % (self.ring.size / 64)) * 64
    }

    /// Writes a packet (body first, then the header dword, as a producer must), returns its
    /// index; does not ring the doorbell.
    fn write(&mut self, words: [u32; 16]) -> u64 {
        let at = self.slot(self.put);
        for (i, w) in words.iter().enumerate().skip(1) {
            cpu_write::<u32>(at + i as u64 * 4, *w);
        }
        cpu_write::<u32>(at, words[0]);
        self.put += 1;
        self.put - 1
    }

    fn ring_doorbell(&self) {
        cpu_write::<u64>(self.db, self.put - 1);
    }

    fn read_dispatch_id(&self) -> u64 {
        cpu_read::<u64>(self.gart.va + 128)
    }

    /// A signal event and an amd_signal_t at `data + 0x4000 + 64 * n` of value `value` whose
    /// mailbox is the event's slot.
    fn signal(&self, n: u64, value: i64, with_event: bool) -> (u32, u64) {
        let id = if with_event {
            let first = n == 0;
            self.p
                .create_event(
                    KFD_IOC_EVENT_SIGNAL,
                    true,
                    if first { self.page.handle } else { 0 },
                )
                .unwrap()
                .event_id
        } else {
            0
        };
        let s = self.data.va + 0x4000 + 64 * n;
        cpu_write::<i64>(s, 1); // AMD_SIGNAL_KIND_USER
        cpu_write::<i64>(s + 8, value);
        let mailbox = if with_event {
            self.page.va + 8 * u64::from(id)
        } else {
            0
        };
        cpu_write::<u64>(s + 16, mailbox);
        cpu_write::<u32>(s + 24, id);
        (id, s)
    }

    fn wait(&self, id: u32, timeout: u32) -> u32 {
        let mut e = [EventData::for_event(id)];
        self.p.wait(&mut e, true, timeout).unwrap()
    }

    fn state(&self) -> QueueState {
        self.gpu.engines().queue(QueueId(self.qid)).unwrap().state
    }
}

fn halves(v: u64) -> [u32; 2] {
    [v as u32, (v >> 32) as u32]
}

fn barrier(ty: u32, deps: &[u64], signal: u64) -> [u32; 16] {
    let mut w = [0u32; 16];
    w[0] = ty | BARRIER | SYSTEM_SCOPES;
    for (i, d) in deps.iter().enumerate() {
        let [lo, hi] = halves(*d);
        w[2 + 2 * i] = lo;
        w[3 + 2 * i] = hi;
    }
    let [lo, hi] = halves(signal);
    w[14] = lo;
    w[15] = hi;
    w
}

/// A vendor-specific AMD_AQL_FORMAT_PM4_IB packet running `dwords` PM4 dwords at `ib`.
fn pm4_ib(ib: u64, dwords: u32, signal: u64) -> [u32; 16] {
    let mut w = [0u32; 16];
    w[0] = VENDOR | BARRIER | SYSTEM_SCOPES | (1 << 16);
    w[1] = (3 << 30) | (2 << 16) | (0x3F << 8); // PACKET3(INDIRECT_BUFFER, 2)
    w[2] = ib as u32;
    w[3] = (ib >> 32) as u32;
    w[4] = dwords | (1 << 23); // IB_SIZE | VALID
    w[5] = 10;
    let [lo, hi] = halves(signal);
    w[14] = lo;
    w[15] = hi;
    w
}

fn fixture(name: &str) -> Vec<u8> {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/tests/fixtures/kernels");
    std::fs::read(dir.join(name)).unwrap()
}

#[test]
fn kfd_creates_aql_queues_with_the_compute_checks() {
    let w = world(4096);
    let info = w.p.sim.queue(w.qid).unwrap();
    assert_eq!(info.kind, QueueKind::Aql);
    assert_eq!(
        w.gpu.engines().queue(QueueId(w.qid)).unwrap().kind,
        QueueKind::Aql
    );
    // The ring must be one GPU mapping of exactly ring_size bytes (kfd_queue_acquire_buffers).
    let big = w.p.alloc_at(0, 8192, GTT_FLAGS).unwrap();
    w.p.map(big.handle, &w.p.gpus).unwrap();
    let short = Buf { size: 4096, ..big };
    assert_eq!(create(&w.p, &short, &w.gart).unwrap_err(), Errno::EINVAL);
    // Nothing published: an empty queue (the doorbell's "last index" starts at -1).
    w.gpu.engines().run_until_idle();
    assert_eq!(w.read_dispatch_id(), 0);
    assert_eq!(w.state(), QueueState::Idle);
}

/// Loads vector_add into VRAM through the CPU and queues (optionally after an HDP flush in a
/// PM4_IB packet) a kernel dispatch of 192 work-items adding 150 elements; returns the event,
/// the completion signal, the dispatch's index and c's address.
fn vector_add(w: &mut World, hdp_flush: bool) -> (u32, u64, u64, u64) {
    vector_add_on(w, hdp_flush, "gfx1100", &GFX11)
}

fn vector_add_on(
    w: &mut World,
    hdp_flush: bool,
    target: &str,
    arch: &ArchInfo,
) -> (u32, u64, u64, u64) {
    let d = w.data.va;
    let (a, b, c) = (d + 0x1_0000, d + 0x2_0000, d + 0x3_0000);
    for i in 0..192u64 {
        cpu_write::<u32>(a + i * 4, i as u32);
        cpu_write::<u32>(b + i * 4, 1000 + 2 * i as u32);
    }
    let co = fixture(&format!("vector_add-{target}.co"));
    w.gpu
        .engines()
        .with_kernels(|k| k.register_fixture(&co))
        .unwrap();
    let obj = CodeObject::parse(&co).unwrap();
    let k = obj.kernel("vector_add").unwrap();
    let mut image = vec![0u8; obj.image_size() as usize];
    obj.load_into(&mut image).unwrap();
    let img = w.p.alloc_at(0, obj.image_size(), VRAM_FLAGS).unwrap();
    w.p.map(img.handle, &w.p.gpus).unwrap();
    for (i, ch) in image.chunks_exact(4).enumerate() {
        cpu_write::<u32>(
            img.va + i as u64 * 4,
            u32::from_le_bytes(ch.try_into().unwrap()),
        );
    }
    let kernel_object = img.va + k.entry_offset - k.descriptor.kernel_code_entry_byte_offset as u64;
    let kernargs = d + 0x8_0000;
    for (i, v) in [a, b, c].iter().enumerate() {
        cpu_write::<u64>(kernargs + i as u64 * 8, *v);
    }
    cpu_write::<u32>(kernargs + 24, 150);
    if hdp_flush {
        // The code went through the CPU's VRAM mapping: an HDP flush first, in a PM4 IB.
        let ib = d + 0x9_0000;
        let mut mb = vec![0u32; 64];
        let n = pm4::memory_barrier(&mut mb, arch).unwrap();
        for (i, v) in mb[..n].iter().enumerate() {
            cpu_write::<u32>(ib + i as u64 * 4, *v);
        }
        w.write(pm4_ib(ib, n as u32, 0));
    }
    let (id, sig) = w.signal(0, 1, true);
    let mut p = [0u32; 16];
    p[0] = KERNEL_DISPATCH | BARRIER | SYSTEM_SCOPES | (1 << 16); // setup: 1 dimension
    p[1] = 64 | (1 << 16); // workgroup 64 x 1
    p[2] = 1;
    p[3] = 192; // grid 192 x 1 x 1
    p[4] = 1;
    p[5] = 1;
    p[7] = k.descriptor.group_segment_fixed_size;
    [p[8], p[9]] = halves(kernel_object);
    [p[10], p[11]] = halves(kernargs);
    [p[14], p[15]] = halves(sig);
    let at = w.write(p);
    w.ring_doorbell();
    (id, sig, at, c)
}

#[test]
fn kernel_dispatch_runs_a_fixture_kernel_and_completes_its_signal() {
    let mut w = world(4096);
    let (id, sig, at, c) = vector_add(&mut w, true);
    assert_eq!(
        w.wait(id, 1000),
        COMPLETE,
        "{}",
        w.gpu.engines().trace_text()
    );
    for i in 0..150u64 {
        assert_eq!(cpu_read::<u32>(c + i * 4), 1000 + 3 * i as u32);
    }
    assert_eq!(cpu_read::<u32>(c + 150 * 4), 0);
    assert_eq!(
        cpu_read::<i64>(sig + 8),
        0,
        "the completion signal was decremented"
    );
    // The mailbox write woke the wait (KFD then resets the slot); the interrupt is traced.
    let t = w.gpu.engines().trace_text();
    assert!(t.contains(&format!("interrupt context {id:#x}")), "{t}");
    let (start, end) = (cpu_read::<u64>(sig + 32), cpu_read::<u64>(sig + 40));
    assert!(
        end >= start && end > 0,
        "profiling timestamps {start} {end}"
    );
    assert_eq!(w.read_dispatch_id(), 2);
    // Both headers went back to INVALID, setup kept.
    assert_eq!(cpu_read::<u32>(w.slot(0)), INVALID | (1 << 16));
    assert_eq!(cpu_read::<u32>(w.slot(at)), INVALID | (1 << 16));
}

#[test]
fn a_kernel_dispatch_without_the_hdp_flush_is_caught_as_on_pm4_queues() {
    let mut w = world(4096);
    let mem =
        w.p.create_event(KFD_IOC_EVENT_MEMORY, false, 0)
            .unwrap()
            .event_id;
    let (_, sig, _, _) = vector_add(&mut w, false);
    assert_eq!(w.wait(mem, 1000), COMPLETE);
    let QueueState::Faulted(f) = w.state() else {
        panic!("{:?}", w.state())
    };
    assert!(f.message.contains("HDP flush"), "{}", f.message);
    assert_eq!(
        cpu_read::<i64>(sig + 8),
        1,
        "no completion for a faulted dispatch"
    );
}

#[test]
fn barrier_and_waits_for_a_signal_the_host_sets_later() {
    let mut w = world(4096);
    let (_, dep) = w.signal(1, 1, false);
    let (_, dep2) = w.signal(2, 0, false);
    let (id, sig) = w.signal(0, 2, true);
    w.write(barrier(BARRIER_AND, &[dep, dep2], sig));
    w.ring_doorbell();
    assert_eq!(w.wait(id, 30_000), TIMEOUT);
    let QueueState::Waiting(wi) = w.state() else {
        panic!("{:?}", w.state())
    };
    assert_eq!(wi.addr, dep + 8);
    assert_eq!(w.read_dispatch_id(), 0);
    cpu_write::<i64>(dep + 8, 0);
    assert_eq!(w.wait(id, 30_000), COMPLETE);
    assert_eq!(cpu_read::<i64>(sig + 8), 1);
    assert_eq!(w.read_dispatch_id(), 1);
    // Barrier-OR: one of its signals at 0 is enough.
    cpu_write::<i64>(dep + 8, 5);
    w.write(barrier(BARRIER_OR, &[dep, dep2], sig));
    w.ring_doorbell();
    assert_eq!(w.wait(id, 30_000), COMPLETE);
    assert_eq!(cpu_read::<i64>(sig + 8), 0);
}

#[test]
fn an_invalid_header_stalls_until_the_producer_writes_it() {
    let mut w = world(4096);
    let (id, sig) = w.signal(0, 1, true);
    let words = barrier(BARRIER_AND, &[], sig);
    let at = w.slot(0);
    for (i, v) in words.iter().enumerate().skip(1) {
        cpu_write::<u32>(at + i as u64 * 4, *v);
    }
    w.put = 1;
    w.ring_doorbell(); // the doorbell before the header: the CP waits on INVALID
    assert_eq!(w.wait(id, 30_000), TIMEOUT);
    assert!(
        matches!(w.state(), QueueState::Waiting(_)),
        "{:?}",
        w.state()
    );
    cpu_write::<u32>(at, words[0]);
    assert_eq!(w.wait(id, 30_000), COMPLETE);
    assert_eq!(w.read_dispatch_id(), 1);
}

#[test]
fn a_reserved_packet_type_faults_the_queue_with_its_cause() {
    let mut w = world(4096);
    let hw =
        w.p.create_event(KFD_IOC_EVENT_HW_EXCEPTION, false, 0)
            .unwrap()
            .event_id;
    let mut p = barrier(BARRIER_AND, &[], 0);
    p[0] = 7 | BARRIER;
    w.write(p);
    w.ring_doorbell();
    assert_eq!(w.wait(hw, 1000), COMPLETE);
    let QueueState::Faulted(f) = w.state() else {
        panic!("{:?}", w.state())
    };
    assert!(
        f.message.contains("AQL packet type 7 is reserved"),
        "{}",
        f.message
    );
    assert!(f.message.starts_with("AQL queue"), "{}", f.message);
}

#[test]
fn a_bad_vendor_packet_faults_with_its_cause() {
    let mut w = world(4096);
    let hw =
        w.p.create_event(KFD_IOC_EVENT_HW_EXCEPTION, false, 0)
            .unwrap()
            .event_id;
    let mut p = pm4_ib(w.data.va, 4, 0);
    p[5] = 3;
    w.write(p);
    w.ring_doorbell();
    assert_eq!(w.wait(hw, 1000), COMPLETE);
    let QueueState::Faulted(f) = w.state() else {
        panic!("{:?}", w.state())
    };
    assert!(f.message.contains("dw_cnt_remain 3"), "{}", f.message);
}

#[test]
fn the_ring_wraps() {
    // 1 KiB: 16 packets; 40 barriers in batches that fit, each decrementing one signal.
    let mut w = world(1024);
    let (id, sig) = w.signal(0, 40, true);
    let mut done = 0;
    while done < 40 {
        for _ in 0..10 {
            w.write(barrier(BARRIER_AND, &[], sig));
        }
        w.ring_doorbell();
        done += 10;
        assert_eq!(w.wait(id, 1000), COMPLETE);
        assert_eq!(w.read_dispatch_id(), done);
        assert_eq!(cpu_read::<i64>(sig + 8), 40 - done as i64);
    }
    // Every slot went back to INVALID.
    for i in 0..16 {
        assert_eq!(cpu_read::<u32>(w.slot(i)) & 0xff, INVALID, "slot {i}");
    }
}

#[test]
fn an_overrun_doorbell_faults() {
    let mut w = world(1024);
    let hw =
        w.p.create_event(KFD_IOC_EVENT_HW_EXCEPTION, false, 0)
            .unwrap()
            .event_id;
    w.put = 17; // 17 packets announced on a 16-packet ring
    w.ring_doorbell();
    assert_eq!(w.wait(hw, 1000), COMPLETE);
    let QueueState::Faulted(f) = w.state() else {
        panic!("{:?}", w.state())
    };
    assert!(f.message.contains("ring overrun"), "{}", f.message);
}

#[test]
fn a_host_write_to_a_queued_dispatchs_kernargs_is_a_race() {
    let mut w = world(4096);
    let hw =
        w.p.create_event(KFD_IOC_EVENT_HW_EXCEPTION, false, 0)
            .unwrap()
            .event_id;
    let (_, sig, _, _) = vector_add(&mut w, true);
    // After the doorbell, before the GPU ran the dispatch: the element count changes under it.
    cpu_write::<u32>(w.data.va + 0x8_0000 + 24, 100);
    assert_eq!(w.wait(hw, 1000), COMPLETE);
    let QueueState::Faulted(f) = w.state() else {
        panic!("{:?}", w.state())
    };
    assert!(f.message.contains("host race"), "{}", f.message);
    assert_eq!(cpu_read::<i64>(sig + 8), 1);
}

#[test]
fn a_gfx942_kernel_dispatch_runs_on_an_aql_queue() {
    // MI300X's ISA, whose user SGPRs, RSRC3 (ACCUM_OFFSET) and wave64 the CP programs from
    // the descriptor.
    let mut w = world_on(GpuConfig::gfx942(), 4096);
    let (id, sig, _, c) = vector_add_on(&mut w, true, "gfx942", &GFX9);
    assert_eq!(
        w.wait(id, 1000),
        COMPLETE,
        "{}",
        w.gpu.engines().trace_text()
    );
    for i in 0..150u64 {
        assert_eq!(cpu_read::<u32>(c + i * 4), 1000 + 3 * i as u32);
    }
    assert_eq!(cpu_read::<i64>(sig + 8), 0);
    assert_eq!(w.read_dispatch_id(), 2);
}

#[test]
fn an_8_xcc_gfx942_runs_an_aql_dispatch_once() {
    // SPX MI300X: one node of 8 XCCs; KFD sizes the save area per XCC (`create` maps 8).
    let gpu = GpuConfig {
        num_xcc: 8,
        cu_count: 304,
        ..GpuConfig::gfx942()
    };
    let mut w = world_on(gpu, 4096);
    let sizes = w.p.sim.queue_sizes(w.p.gpus[0]).unwrap();
    assert_eq!(sizes.num_xcc, 8);
    let (id, sig, _, c) = vector_add_on(&mut w, true, "gfx942", &GFX9);
    assert_eq!(
        w.wait(id, 1000),
        COMPLETE,
        "{}",
        w.gpu.engines().trace_text()
    );
    for i in 0..150u64 {
        assert_eq!(cpu_read::<u32>(c + i * 4), 1000 + 3 * i as u32);
    }
    // One completion for the whole grid: the signal went from 1 to 0, not below.
    assert_eq!(cpu_read::<i64>(sig + 8), 0);
}

#[test]
fn threaded_engines_run_aql_packets_as_the_host_writes_them() {
    let mut w = world_in(SimMode::Threaded, GpuConfig::gfx1100(), 1024);
    let (id, sig) = w.signal(0, 20, true);
    let (_, gate) = w.signal(1, 1, false);
    w.write(barrier(BARRIER_AND, &[gate], sig));
    w.ring_doorbell();
    cpu_write::<i64>(gate + 8, 0);
    let deadline = std::time::Instant::now() + core::time::Duration::from_secs(20);
    for _ in 0..19 {
        // A producer reuses a slot only after the CP moved past it (16 slots).
        while w.put >= w.read_dispatch_id() + 16 {
            assert!(std::time::Instant::now() < deadline, "{:?}", w.state());
            std::thread::yield_now();
        }
        w.write(barrier(BARRIER_AND, &[], sig));
        w.ring_doorbell();
    }
    while cpu_read::<i64>(sig + 8) != 0 {
        assert!(std::time::Instant::now() < deadline, "{:?}", w.state());
        // A completion may already have been consumed by an earlier wait (auto-reset):
        // a timeout is fine as long as the queue has not faulted.
        w.wait(id, 100);
        assert!(
            !matches!(w.state(), QueueState::Faulted(_)),
            "{:?}",
            w.state()
        );
    }
    // The read index is published after the step that completed the last packet.
    while w.read_dispatch_id() != 20 {
        assert!(std::time::Instant::now() < deadline, "{:?}", w.state());
        std::thread::yield_now();
    }
    assert_eq!(cpu_read::<u32>(w.slot(19)) & 0xff, INVALID);
}

/// On 8 XCCs, a PM4_IB packet after a kernel dispatch that has neither a completion signal
/// nor a release fence: with `barrier` clear, the RELEASE_MEM in its IB writes its value while
/// the dispatch may still run on other XCCs (each XCC's CP runs the IB after its own share).
fn release_after_unfenced_dispatch(barrier: bool) -> (World, u64) {
    let gpu = GpuConfig {
        num_xcc: 8,
        cu_count: 304,
        ..GpuConfig::gfx942()
    };
    let mut w = world_on(gpu, 4096);
    let (_, _, at, _) = vector_add_on(&mut w, true, "gfx942", &GFX9);
    let slot = w.slot(at);
    cpu_write::<u64>(slot + 56, 0); // no completion signal
    let hdr = cpu_read::<u32>(slot);
    cpu_write::<u32>(slot, hdr & !(3 << 11)); // no release fence
    let flag = w.data.va + 0x7000;
    let mut rel = [0u32; 8];
    let p = pm4::release_packet(
        &GFX9,
        hcq_core::sel::DataSel::Data32,
        hcq_core::sel::IntSel::None,
        hcq_core::addr::GpuVa(flag),
        7,
        0,
        false,
    );
    let n = pm4::release_mem(&mut rel, &p).unwrap();
    let ib = w.data.va + 0xA_0000;
    for (i, v) in rel[..n].iter().enumerate() {
        cpu_write::<u32>(ib + i as u64 * 4, *v);
    }
    let mut v = pm4_ib(ib, n as u32, 0);
    if !barrier {
        v[0] &= !BARRIER;
    }
    w.write(v);
    w.ring_doorbell();
    w.gpu.engines().run_until_idle();
    (w, flag)
}

#[test]
fn a_value_released_before_every_xcc_finished_the_dispatch_is_caught_with_the_cause() {
    let (w, flag) = release_after_unfenced_dispatch(false);
    let QueueState::Faulted(f) = w.state() else {
        panic!("{:?}", w.state());
    };
    assert!(
        f.message.contains("RELEASE_MEM on XCC 0 of 8 writes 0x7")
            && f.message.contains("set the vendor packet's barrier bit"),
        "{}",
        f.message
    );
    assert_eq!(cpu_read::<u32>(flag), 0);
    // With the barrier bit every XCC's share is done first: each XCC writes the value.
    let (w, flag) = release_after_unfenced_dispatch(true);
    assert!(matches!(w.state(), QueueState::Idle), "{:?}", w.state());
    assert_eq!(cpu_read::<u32>(flag), 7);
}
