//! CREATE_QUEUE / DESTROY_QUEUE: argument checks, buffer validation (6.12+), doorbells.

mod common;

use common::{Buf, GTT_FLAGS, Proc, VRAM_FLAGS, cpu_write};
use hcq_core::kfd::*;
use hcq_sim::{QueueBufferRules, QueueKind, SimConfig};

/// The buffers of one queue, allocated and mapped the way the kernel wants them.
struct QueueBufs {
    gart: Buf,
    ring: Buf,
    eop: Option<Buf>,
    cwsr: Option<Buf>,
}

const CTL: u32 = 0xA000;
const CWSR: u32 = 0x2BE_A000;
const CWSR_MAP: u64 = 0x2C0_2000;

fn bufs(p: &Proc, ring_size: u64, compute: bool) -> QueueBufs {
    QueueBufs {
        gart: p.alloc(4096, GTT_FLAGS),
        ring: p.alloc(ring_size, GTT_FLAGS),
        eop: compute.then(|| p.alloc(4096, VRAM_FLAGS)),
        cwsr: compute.then(|| p.alloc(CWSR_MAP, VRAM_FLAGS)),
    }
}

fn args(p: &Proc, b: &QueueBufs, ty: u32) -> CreateQueueArgs {
    CreateQueueArgs {
        ring_base_address: b.ring.va,
        write_pointer_address: b.gart.va + 0x38,
        read_pointer_address: b.gart.va + 0x80,
        ring_size: b.ring.size as u32,
        gpu_id: p.gpu(),
        queue_type: ty,
        queue_percentage: KFD_MAX_QUEUE_PERCENTAGE,
        queue_priority: 7,
        eop_buffer_address: b.eop.map_or(0, |e| e.va),
        eop_buffer_size: b.eop.map_or(0, |e| e.size),
        ctx_save_restore_address: b.cwsr.map_or(0, |c| c.va),
        ctx_save_restore_size: if b.cwsr.is_some() { CWSR } else { 0 },
        ctl_stack_size: if b.cwsr.is_some() { CTL } else { 0 },
        ..Default::default()
    }
}

fn release(p: &Proc, b: QueueBufs) {
    let g = [p.gpu()];
    for x in [Some(b.gart), Some(b.ring), b.eop, b.cwsr]
        .into_iter()
        .flatten()
    {
        p.release(x, &g);
    }
}

fn create(p: &Proc, a: &mut CreateQueueArgs) -> Result<(), Errno> {
    p.ioctl(AMDKFD_IOC_CREATE_QUEUE, a)
}

fn destroy(p: &Proc, id: u32) -> Result<(), Errno> {
    let mut d = DestroyQueueArgs {
        queue_id: id,
        pad: 0,
    };
    p.ioctl(AMDKFD_IOC_DESTROY_QUEUE, &mut d)
}

#[test]
fn compute_and_sdma_queues() {
    let p = Proc::one();
    let gpu = p.gpu();
    let cb = bufs(&p, 1 << 20, true);
    let mut c = args(&p, &cb, KFD_IOC_QUEUE_TYPE_COMPUTE);
    create(&p, &mut c).unwrap();
    assert_eq!(c.queue_id, 0);
    assert_eq!(c.doorbell_offset, (3 << 62) | (u64::from(gpu) << 46));
    let sb = bufs(&p, 1 << 20, false);
    let mut s = args(&p, &sb, KFD_IOC_QUEUE_TYPE_SDMA);
    create(&p, &mut s).unwrap();
    assert_eq!(s.queue_id, 1);
    assert_eq!(
        doorbell_slice_offset(s.doorbell_offset),
        doorbell_slice_offset(c.doorbell_offset)
    );
    let s_db = doorbell_in_slice(s.doorbell_offset);
    assert!(s_db < KFD_DOORBELL_SLICE_SIZE && s_db != 0);

    let qs = p.sim.queues();
    assert_eq!(qs.len(), 2);
    assert_eq!(qs[0].kind, QueueKind::Compute);
    assert_eq!(qs[0].ring_base, cb.ring.va);
    assert_eq!(qs[0].ring_size, 1 << 20);
    assert_eq!(qs[0].wptr_addr, cb.gart.va + 0x38);
    assert_eq!(qs[0].rptr_addr, cb.gart.va + 0x80);
    assert!(qs[0].active);
    assert_eq!(qs[1].kind, QueueKind::Sdma);
    assert_eq!(qs[1].sdma_engine, Some((0, 0)));

    // The doorbell slice: a DOORBELL mmap of /dev/kfd; writes reach the engine's view.
    let kfd_file = MapKind::File {
        fd: p.kfd,
        offset: doorbell_slice_offset(c.doorbell_offset),
    };
    assert_eq!(
        p.sim.mmap(None, 4096, Prot::READ_WRITE, kfd_file),
        Err(Errno::EINVAL)
    );
    let bad_gpu = MapKind::File {
        fd: p.kfd,
        offset: KFD_MMAP_TYPE_DOORBELL,
    };
    assert_eq!(
        p.sim.mmap(None, 8192, Prot::READ_WRITE, bad_gpu),
        Err(Errno::ENODEV)
    );
    let db = p
        .sim
        .mmap(None, KFD_DOORBELL_SLICE_SIZE, Prot::READ_WRITE, kfd_file)
        .unwrap();
    cpu_write::<u64>(db + s_db, 0x40);
    assert_eq!(p.sim.doorbell(gpu, qs[1].doorbell_id), Some(0x40));
    assert_eq!(p.sim.doorbell(gpu, qs[0].doorbell_id), Some(0));
    // rptr/wptr through the engine interface.
    cpu_write::<u64>(cb.gart.va + 0x38, 123);
    assert_eq!(p.sim.read_wptr(&qs[0]).unwrap(), 123);
    p.sim.write_rptr(&qs[0], 120).unwrap();
    assert_eq!(common::cpu_read::<u64>(cb.gart.va + 0x80), 120);

    // Buffers in use by a queue cannot be unmapped.
    assert_eq!(p.unmap(cb.ring.handle, &[gpu]), Err(Errno::EBUSY));
    assert_eq!(p.unmap(cb.gart.handle, &[gpu]), Err(Errno::EBUSY));
    // XNACK change and RUNTIME_ENABLE with queues.
    let mut x = SetXnackModeArgs { xnack_enabled: 0 };
    assert_eq!(
        p.ioctl(AMDKFD_IOC_SET_XNACK_MODE, &mut x),
        Err(Errno::EBUSY)
    );
    let mut r = RuntimeEnableArgs {
        mode_mask: 1,
        ..Default::default()
    };
    assert_eq!(
        p.ioctl(AMDKFD_IOC_RUNTIME_ENABLE, &mut r),
        Err(Errno::EEXIST)
    );

    destroy(&p, c.queue_id).unwrap();
    assert_eq!(destroy(&p, c.queue_id), Err(Errno::EINVAL));
    destroy(&p, s.queue_id).unwrap();
    p.sim.munmap(db, KFD_DOORBELL_SLICE_SIZE).unwrap();
    release(&p, cb);
    release(&p, sb);
    assert!(
        p.sim.live_objects().nothing_leaked(),
        "{:?}",
        p.sim.live_objects()
    );
}

#[test]
fn argument_checks() {
    let p = Proc::one();
    let b = bufs(&p, 4096, false);
    let base = args(&p, &b, KFD_IOC_QUEUE_TYPE_SDMA);
    let check = |f: &dyn Fn(&mut CreateQueueArgs), want: Errno| {
        let mut a = base;
        f(&mut a);
        assert_eq!(create(&p, &mut a), Err(want), "{a:?}");
    };
    check(&|a| a.queue_percentage = 101, Errno::EINVAL);
    check(&|a| a.queue_priority = 16, Errno::EINVAL);
    check(
        &|a| a.ring_base_address = 0xFFFF_8000_0000_0000,
        Errno::EFAULT,
    );
    check(&|a| a.ring_size = 3000, Errno::EINVAL);
    check(&|a| a.read_pointer_address = u64::MAX - 2, Errno::EFAULT);
    check(&|a| a.eop_buffer_address = 1 << 63, Errno::EFAULT);
    check(&|a| a.queue_type = 5, Errno::ENOTSUPP);
    check(&|a| a.gpu_id = 0, Errno::EINVAL);
    // An AQL queue is a compute queue: without its EOP and CWSR buffers (these are an SDMA
    // queue's arguments) kfd_queue_acquire_buffers refuses it.
    check(
        &|a| a.queue_type = KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
        Errno::EINVAL,
    );
    check(
        &|a| {
            a.queue_type = KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID;
            a.sdma_engine_id = 2;
        },
        Errno::EINVAL,
    );
    check(
        &|a| a.queue_type = KFD_IOC_QUEUE_TYPE_SDMA_XGMI,
        Errno::ENOMEM,
    );
    // Bits 8-15 are the PM4 target XCC: 100 | 1<<8 is fine.
    let mut a = base;
    a.queue_percentage = 100 | (1 << 8);
    create(&p, &mut a).unwrap();
    destroy(&p, a.queue_id).unwrap();
    // Percentage 0: created but not active.
    let mut a = base;
    a.queue_percentage = 0;
    create(&p, &mut a).unwrap();
    assert!(!p.sim.queue(a.queue_id).unwrap().active);
    destroy(&p, a.queue_id).unwrap();
    // SDMA_BY_ENG_ID on engine 1.
    let mut a = base;
    a.queue_type = KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID;
    a.sdma_engine_id = 1;
    create(&p, &mut a).unwrap();
    assert_eq!(p.sim.queue(a.queue_id).unwrap().sdma_engine, Some((1, 0)));
    destroy(&p, a.queue_id).unwrap();
    // Without ACQUIRE_VM: ESRCH.
    let sim = hcq_sim::SimKfd::gfx1100().unwrap();
    let kfd = sim.open("/dev/kfd").unwrap();
    let mut a = base;
    a.gpu_id = sim.gpu_ids()[0];
    assert_eq!(
        sim.ioctl(kfd, Request::new(AMDKFD_IOC_CREATE_QUEUE, &mut a)),
        Err(Errno::ESRCH)
    );
    release(&p, b);
    assert!(p.sim.live_objects().nothing_leaked());
}

#[test]
fn small_rings_are_clamped_and_written_back() {
    let p = Proc::one();
    let b = bufs(&p, 4096, false);
    for (asked, got) in [(0u32, 1024u32), (256, 1024), (1024, 1024)] {
        let mut a = args(&p, &b, KFD_IOC_QUEUE_TYPE_SDMA);
        a.ring_size = asked;
        create(&p, &mut a).unwrap();
        assert_eq!(a.ring_size, got);
        assert_eq!(p.sim.queue(a.queue_id).unwrap().ring_size, got);
        destroy(&p, a.queue_id).unwrap();
    }
    // Clamped and written back even when the call then fails (the struct is always copied back).
    let mut a = args(&p, &b, KFD_IOC_QUEUE_TYPE_SDMA);
    a.ring_size = 512;
    a.gpu_id = 0;
    assert_eq!(create(&p, &mut a), Err(Errno::EINVAL));
    assert_eq!(a.ring_size, 1024);
    // A 2048-byte ring in a 4096-byte mapping: below a page only the start is checked.
    let mut a = args(&p, &b, KFD_IOC_QUEUE_TYPE_SDMA);
    a.ring_size = 2048;
    create(&p, &mut a).unwrap();
    destroy(&p, a.queue_id).unwrap();
    release(&p, b);
}

#[test]
fn buffer_validation() {
    let p = Proc::one();
    let b = bufs(&p, 1 << 16, true);
    let base = args(&p, &b, KFD_IOC_QUEUE_TYPE_COMPUTE);
    let check = |f: &dyn Fn(&mut CreateQueueArgs), want: Result<(), Errno>| {
        let mut a = base;
        f(&mut a);
        let r = create(&p, &mut a);
        assert_eq!(r, want, "{a:?}");
        if r.is_ok() {
            destroy(&p, a.queue_id).unwrap();
        }
    };
    check(&|_| {}, Ok(()));
    // Ring: not the start of a mapping / wrong size / not mapped.
    check(&|a| a.ring_base_address += 4096, Err(Errno::EINVAL));
    check(&|a| a.ring_size = 1 << 15, Err(Errno::EINVAL));
    check(&|a| a.ring_base_address = 0, Err(Errno::EINVAL));
    // rptr/wptr must sit in a mapping that is exactly one page: the ring is 64 KiB.
    check(
        &|a| a.write_pointer_address = a.ring_base_address + 8,
        Err(Errno::EINVAL),
    );
    check(&|a| a.read_pointer_address = 0x1000, Err(Errno::EINVAL));
    // EOP: size must be the node's; 0 address skips it.
    check(&|a| a.eop_buffer_size = 2048, Err(Errno::EINVAL));
    check(
        &|a| {
            a.eop_buffer_address = 0;
            a.eop_buffer_size = 0;
        },
        Ok(()),
    );
    // Control stack must be exact.
    check(&|a| a.ctl_stack_size = 0x9000, Err(Errno::EINVAL));
    // CWSR: smaller than the node's size, the seed's old mapping-size value, unmapped.
    check(
        &|a| a.ctx_save_restore_size = CWSR - 4096,
        Err(Errno::EINVAL),
    );
    check(
        &|a| a.ctx_save_restore_size = CWSR_MAP as u32,
        Err(Errno::EINVAL),
    );
    check(&|a| a.ctx_save_restore_address = 0, Err(Errno::EINVAL));
    // A queue holds the buffers until destroyed.
    let mut a = base;
    create(&p, &mut a).unwrap();
    assert_eq!(
        p.unmap(b.cwsr.unwrap().handle, &[p.gpu()]),
        Err(Errno::EBUSY)
    );
    assert_eq!(
        p.unmap(b.eop.unwrap().handle, &[p.gpu()]),
        Err(Errno::EBUSY)
    );
    destroy(&p, a.queue_id).unwrap();
    release(&p, b);
    assert!(p.sim.live_objects().nothing_leaked());
}

#[test]
fn relaxed_vs_strict_cwsr_rules() {
    // Relaxed (default): a larger ctx_save_restore_size works with the matching larger mapping.
    let p = Proc::one();
    let big = CWSR + 0x1000;
    let mut b = bufs(&p, 4096, true);
    let cw = b.cwsr.take().unwrap();
    p.release(cw, &[p.gpu()]);
    b.cwsr = Some(p.alloc(CWSR_MAP + 0x1000, VRAM_FLAGS));
    let mut a = args(&p, &b, KFD_IOC_QUEUE_TYPE_COMPUTE);
    a.ctx_save_restore_size = big;
    create(&p, &mut a).unwrap();
    destroy(&p, a.queue_id).unwrap();
    release(&p, b);

    // Linux 6.12 as merged: exact size only.
    let p = Proc::new(SimConfig {
        queue_buffer_rules: QueueBufferRules::Strict612,
        ..SimConfig::default()
    });
    let b = bufs(&p, 4096, true);
    let mut a = args(&p, &b, KFD_IOC_QUEUE_TYPE_COMPUTE);
    a.ctx_save_restore_size = big;
    assert_eq!(create(&p, &mut a), Err(Errno::EINVAL));
    let mut a = args(&p, &b, KFD_IOC_QUEUE_TYPE_COMPUTE);
    create(&p, &mut a).unwrap();
    destroy(&p, a.queue_id).unwrap();
    release(&p, b);
}

#[test]
fn queue_ids_and_doorbells_are_reused() {
    let p = Proc::one();
    let b = bufs(&p, 4096, false);
    let mut ids = Vec::new();
    for _ in 0..3 {
        let mut a = args(&p, &b, KFD_IOC_QUEUE_TYPE_SDMA);
        create(&p, &mut a).unwrap();
        ids.push((a.queue_id, a.doorbell_offset));
    }
    assert_eq!(ids.iter().map(|x| x.0).collect::<Vec<_>>(), vec![0, 1, 2]);
    // Engine 0 queue 0, engine 1 queue 0, engine 0 queue 1.
    let engines: Vec<_> = p
        .sim
        .queues()
        .iter()
        .map(|q| q.sdma_engine.unwrap())
        .collect();
    assert_eq!(engines, vec![(0, 0), (1, 0), (0, 1)]);
    destroy(&p, 1).unwrap();
    let mut a = args(&p, &b, KFD_IOC_QUEUE_TYPE_SDMA);
    create(&p, &mut a).unwrap();
    assert_eq!((a.queue_id, a.doorbell_offset), ids[1]);
    // 12 SDMA queues (2 engines x 6), then ENOMEM.
    let mut n = 3;
    loop {
        let mut a = args(&p, &b, KFD_IOC_QUEUE_TYPE_SDMA);
        match create(&p, &mut a) {
            Ok(()) => n += 1,
            Err(e) => {
                assert_eq!(e, Errno::ENOMEM);
                break;
            }
        }
    }
    assert_eq!(n, 12);
    for id in 0..12 {
        destroy(&p, id).unwrap();
    }
    release(&p, b);
    assert!(p.sim.live_objects().nothing_leaked());
}

#[test]
fn per_device_queue_limit_is_enospc() {
    let p = Proc::one();
    let b = bufs(&p, 4096, true);
    let mut made = Vec::new();
    let err = loop {
        // Queues may share buffers: each one takes another reference.
        let mut a = args(&p, &b, KFD_IOC_QUEUE_TYPE_COMPUTE);
        match create(&p, &mut a) {
            Ok(()) => made.push(a.queue_id),
            Err(e) => break e,
        }
    };
    assert_eq!((err, made.len()), (Errno::ENOSPC, 127));
    // Compute doorbells: 0, 8, 16, ... in the slice.
    let q5 = p.sim.queue(5).unwrap();
    assert_eq!(doorbell_in_slice(q5.doorbell_offset), 5 * 8);
    for id in made {
        destroy(&p, id).unwrap();
    }
    release(&p, b);
    assert!(p.sim.live_objects().nothing_leaked());
}
