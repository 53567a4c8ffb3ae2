//! The kernel-table ioctls other KFD clients call (libhsakmt, rocm-smi, debuggers): the
//! checks and errnos of `kfd_chardev.c` / `kfd_process_queue_manager.c`, and their effects.

mod common;

use common::{Buf, GTT_FLAGS, Proc, VRAM_FLAGS};
use hcq_core::kfd::*;
use hcq_sim::{SimConfig, SimKfd};

const CTL: u32 = 0xA000;
const CWSR: u32 = 0x2BE_A000;
const CWSR_MAP: u64 = 0x2C0_2000;

struct QueueBufs {
    gart: Buf,
    ring: Buf,
    eop: Buf,
    cwsr: Buf,
}

/// A compute queue with every buffer the 6.12 kernel checks; returns its id and buffers.
fn compute_queue(p: &Proc, percentage: u32) -> (u32, QueueBufs) {
    let b = QueueBufs {
        gart: p.alloc(4096, GTT_FLAGS),
        ring: p.alloc(4096, GTT_FLAGS),
        eop: p.alloc(4096, VRAM_FLAGS),
        cwsr: p.alloc(CWSR_MAP, VRAM_FLAGS),
    };
    let mut a = CreateQueueArgs {
        ring_base_address: b.ring.va,
        write_pointer_address: b.gart.va + 0x38,
        read_pointer_address: b.gart.va + 0x80,
        ring_size: 4096,
        gpu_id: p.gpu(),
        queue_type: KFD_IOC_QUEUE_TYPE_COMPUTE,
        queue_percentage: percentage,
        queue_priority: 7,
        eop_buffer_address: b.eop.va,
        eop_buffer_size: b.eop.size,
        ctx_save_restore_address: b.cwsr.va,
        ctx_save_restore_size: CWSR,
        ctl_stack_size: CTL,
        ..Default::default()
    };
    p.ioctl(AMDKFD_IOC_CREATE_QUEUE, &mut a).unwrap();
    (a.queue_id, b)
}

fn bytes24(a: u64, b: u64, c: u32, d: u32) -> [u8; 24] {
    let mut v = [0u8; 24];
    v[0..8].copy_from_slice(&a.to_le_bytes());
    v[8..16].copy_from_slice(&b.to_le_bytes());
    v[16..20].copy_from_slice(&c.to_le_bytes());
    v[20..24].copy_from_slice(&d.to_le_bytes());
    v
}

fn words(w: &[u32]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// UPDATE_QUEUE {u64 ring_base_address, u32 queue_id, u32 ring_size, u32 queue_percentage,
/// u32 queue_priority}.
fn update(p: &Proc, ring: u64, id: u32, size: u32, pct: u32, prio: u32) -> Result<(), Errno> {
    let mut v = [0u8; 24];
    v[0..8].copy_from_slice(&ring.to_le_bytes());
    v[8..24].copy_from_slice(&words(&[id, size, pct, prio]));
    p.ioctl_raw(AMDKFD_IOC_UPDATE_QUEUE.request(), &mut v)
}

/// A simulator with /dev/kfd open but no VM acquired.
fn unbound() -> (SimKfd, Fd, u32) {
    let sim = SimKfd::new(SimConfig::default()).unwrap();
    let kfd = sim.open("/dev/kfd").unwrap();
    let gpu = sim.gpu_ids()[0];
    (sim, kfd, gpu)
}

#[test]
fn set_trap_handler_records_tba_and_tma() {
    let p = Proc::one();
    let mut v = bytes24(0x7000_0000, 0x7000_1000, 0xDEAD, 0);
    let io = AMDKFD_IOC_SET_TRAP_HANDLER.request();
    assert_eq!(
        p.ioctl_raw(io, &mut v),
        Err(Errno::EINVAL),
        "unknown gpu_id"
    );
    assert_eq!(p.sim.trap_handler(p.gpu()), None);
    let mut v = bytes24(0x7000_0000, 0x7000_1000, p.gpu(), 0);
    p.ioctl_raw(io, &mut v).unwrap();
    assert_eq!(
        p.sim.trap_handler(p.gpu()),
        Some((0x7000_0000, 0x7000_1000))
    );

    // Before ACQUIRE_VM, kfd_bind_process_to_device fails: ESRCH.
    let (sim, kfd, gpu) = unbound();
    let mut v = bytes24(1, 2, gpu, 0);
    let r = sim.ioctl(kfd, Request::raw(io, &mut v).unwrap());
    assert_eq!(r, Err(Errno::ESRCH));
    assert_eq!(sim.trap_handler(gpu), None);
}

#[test]
fn set_scratch_backing_va_records_the_va() {
    let p = Proc::one();
    let io = AMDKFD_IOC_SET_SCRATCH_BACKING_VA.request();
    let mut v = [0u8; 16];
    v[0..8].copy_from_slice(&0x5555_0000u64.to_le_bytes());
    v[8..12].copy_from_slice(&0x1234u32.to_le_bytes());
    assert_eq!(
        p.ioctl_raw(io, &mut v),
        Err(Errno::EINVAL),
        "unknown gpu_id"
    );
    v[8..12].copy_from_slice(&p.gpu().to_le_bytes());
    p.ioctl_raw(io, &mut v).unwrap();
    assert_eq!(p.sim.scratch_backing_va(p.gpu()), Some(0x5555_0000));

    // Unbound: kfd_bind_process_to_device's own ENODEV (not SET_TRAP_HANDLER's ESRCH).
    let (sim, kfd, gpu) = unbound();
    v[8..12].copy_from_slice(&gpu.to_le_bytes());
    let r = sim.ioctl(kfd, Request::raw(io, &mut v).unwrap());
    assert_eq!(r, Err(Errno::ENODEV));
    assert_eq!(sim.scratch_backing_va(gpu), Some(0));
}

#[test]
fn update_queue_checks_in_the_kernels_order() {
    let p = Proc::one();
    let (id, b) = compute_queue(&p, 100);
    let ring = b.ring.va;
    // Percentage above 100 (bits 7:0), priority above 15, a ring size not a power of two.
    assert_eq!(update(&p, ring, id, 4096, 101, 7), Err(Errno::EINVAL));
    assert_eq!(update(&p, ring, id, 4096, 100, 16), Err(Errno::EINVAL));
    assert_eq!(update(&p, ring, id, 3000, 100, 7), Err(Errno::EINVAL));
    // A ring address past the user address space: access_ok fails, EFAULT.
    assert_eq!(
        update(&p, 0x7FFF_FFFF_FFFC, id, 4096, 100, 7),
        Err(Errno::EFAULT)
    );
    // Checks come before the queue lookup: an unknown queue with a bad percentage is EINVAL.
    assert_eq!(update(&p, ring, 999, 4096, 101, 7), Err(Errno::EINVAL));
    // No such queue: pqm_update_queue_properties' EFAULT.
    assert_eq!(update(&p, ring, 999, 4096, 100, 7), Err(Errno::EFAULT));
    // 6.12: the new ring must be a GPU mapping starting at its page and, for a ring of a page
    // or more, exactly ring_size bytes: 8 KiB over the 4 KiB ring, or an unmapped address, is
    // EFAULT.
    assert_eq!(update(&p, ring, id, 8192, 100, 7), Err(Errno::EFAULT));
    assert_eq!(
        update(&p, ring + 4096 * 16, id, 4096, 100, 7),
        Err(Errno::EFAULT)
    );
    // Size 0 is clamped to KFD_MIN_QUEUE_RING_SIZE (1024), under a page: no size check.
    update(&p, ring, id, 0, 100, 7).unwrap();
    assert_eq!(p.sim.queue(id).unwrap().ring_size, 1024);
    // Bits 15:8 are the PM4 target XCC, not part of the percentage.
    update(&p, ring, id, 4096, 0x0164, 9).unwrap();
    let q = p.sim.queue(id).unwrap();
    assert_eq!((q.percentage, q.priority, q.active), (100, 9, true));
    // Nothing failed above changed the queue.
    assert_eq!((q.ring_base, q.ring_size), (ring, 4096));
}

#[test]
fn update_queue_deactivates_and_moves_the_ring() {
    let p = Proc::one();
    let (id, b) = compute_queue(&p, 100);
    assert!(p.sim.queue(id).unwrap().active);
    // Percentage 0: the queue stays, inactive (QUEUE_IS_ACTIVE), the CP fetches nothing.
    update(&p, b.ring.va, id, 4096, 0, 7).unwrap();
    let q = p.sim.queue(id).unwrap();
    assert!(!q.active);
    assert_eq!(q.percentage, 0);
    // A NULL ring disables it too, whatever the percentage.
    update(&p, 0, id, 4096, 100, 7).unwrap();
    assert!(!p.sim.queue(id).unwrap().active);
    // A new ring of another size takes effect.
    let ring2 = p.alloc(8192, GTT_FLAGS);
    update(&p, ring2.va, id, 8192, 50, 3).unwrap();
    let q = p.sim.queue(id).unwrap();
    assert_eq!(
        (q.ring_base, q.ring_size, q.percentage, q.active),
        (ring2.va, 8192, 50, true)
    );
    // The queue holds the new ring, not the old one: the old ring can be unmapped and freed,
    // the new one cannot be unmapped while the queue lives.
    let g = [p.gpu()];
    assert_eq!(p.unmap(ring2.handle, &g), Err(Errno::EBUSY));
    p.release(b.ring, &g);
    let mut d = DestroyQueueArgs {
        queue_id: id,
        pad: 0,
    };
    p.ioctl(AMDKFD_IOC_DESTROY_QUEUE, &mut d).unwrap();
    p.release(ring2, &g);
}

#[test]
fn gws_smi_and_dmabuf_answer_as_the_kernel_without_them() {
    let p = Proc::one();
    let (id, _b) = compute_queue(&p, 100);
    // ALLOC_QUEUE_GWS: EINVAL without the queue, ENODEV on a device without GWS.
    let mut v = words(&[id + 1, 1, 0, 0]);
    let io = AMDKFD_IOC_ALLOC_QUEUE_GWS.request();
    assert_eq!(p.ioctl_raw(io, &mut v), Err(Errno::EINVAL));
    let mut v = words(&[id, 1, 0, 0]);
    assert_eq!(p.ioctl_raw(io, &mut v), Err(Errno::ENODEV));
    // SMI_EVENTS: EINVAL for an unknown GPU.
    let io = AMDKFD_IOC_SMI_EVENTS.request();
    let mut v = words(&[0xBAD, 0]);
    assert_eq!(p.ioctl_raw(io, &mut v), Err(Errno::EINVAL));
    let mut v = words(&[p.gpu(), 0]);
    assert_eq!(p.ioctl_raw(io, &mut v), Err(Errno::ENODEV));
    // IMPORT_DMABUF: dma_buf_get first: EBADF for a closed fd, EINVAL for a non-DMA-buf one.
    let io = AMDKFD_IOC_IMPORT_DMABUF.request();
    let mut v = bytes24(0x1_0000_0000, 0, p.gpu(), 12345);
    assert_eq!(p.ioctl_raw(io, &mut v), Err(Errno::EBADF));
    let mut v = bytes24(0x1_0000_0000, 0, p.gpu(), p.kfd.0 as u32);
    assert_eq!(p.ioctl_raw(io, &mut v), Err(Errno::EINVAL));
    // EXPORT_DMABUF {u64 handle, u32 flags, u32 dmabuf_fd}: EINVAL for an unknown handle.
    let io = AMDKFD_IOC_EXPORT_DMABUF.request();
    let buf = p.alloc(4096, VRAM_FLAGS);
    let mut v = [0u8; 16];
    v[0..8].copy_from_slice(&(buf.handle + 77).to_le_bytes());
    assert_eq!(p.ioctl_raw(io, &mut v), Err(Errno::EINVAL));
    v[0..8].copy_from_slice(&(u64::from(0xBADu32) << 32).to_le_bytes());
    assert_eq!(p.ioctl_raw(io, &mut v), Err(Errno::EINVAL));
    v[0..8].copy_from_slice(&buf.handle.to_le_bytes());
    assert_eq!(p.ioctl_raw(io, &mut v), Err(Errno::ENODEV));
}
