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

/// An SDMA queue (ring, rptr/wptr page) on `p`'s first GPU; returns its id and buffers.
fn sdma_queue(p: &Proc) -> (u32, Buf, Buf) {
    let (gart, ring) = (p.alloc(4096, GTT_FLAGS), p.alloc(4096, GTT_FLAGS));
    let mut a = CreateQueueArgs {
        ring_base_address: ring.va,
        write_pointer_address: gart.va + 0x38,
        read_pointer_address: gart.va + 0x80,
        ring_size: 4096,
        gpu_id: p.gpu(),
        queue_type: KFD_IOC_QUEUE_TYPE_SDMA,
        queue_percentage: 100,
        ..Default::default()
    };
    p.ioctl(AMDKFD_IOC_CREATE_QUEUE, &mut a).unwrap();
    (a.queue_id, gart, ring)
}

/// SET_CU_MASK of `mask` on `queue_id` with `num_cu_mask` as the caller wrote it.
fn cu_mask(p: &Proc, queue_id: u32, bits: u32, mask: &[u32]) -> Result<(), Errno> {
    let mut a = SetCuMaskArgs {
        queue_id,
        ..Default::default()
    };
    p.ioctl_count(Request::set_cu_mask(&mut a, mask), 4, bits)
}

#[test]
fn set_cu_mask_copies_the_mask_onto_the_queue() {
    let p = Proc::one(); // gfx1100: CUs pair up in WGPs
    let (id, _b) = compute_queue(&p, 100);
    assert_eq!(p.sim.queue_cu_mask(id), None, "no mask before SET_CU_MASK");
    // The typed constructor asks for 32 bits per word.
    let mask = [0x0000_0FF0u32, 0xC000_0003];
    let mut a = SetCuMaskArgs {
        queue_id: id,
        ..Default::default()
    };
    p.sim
        .ioctl(p.kfd, Request::set_cu_mask(&mut a, &mask))
        .unwrap();
    assert_eq!(a.num_cu_mask, 64);
    assert_eq!(p.sim.queue_cu_mask(id), Some(mask.to_vec()));
    // 0 bits, or not a multiple of 32: EINVAL before anything is copied.
    assert_eq!(cu_mask(&p, id, 0, &mask), Err(Errno::EINVAL));
    assert_eq!(cu_mask(&p, id, 40, &mask), Err(Errno::EINVAL));
    let mut a = SetCuMaskArgs::default();
    assert_eq!(
        p.sim.ioctl(p.kfd, Request::set_cu_mask(&mut a, &[])),
        Err(Errno::EINVAL)
    );
    // More words than the borrowed slice holds: memdup_user faults.
    assert_eq!(cu_mask(&p, id, 96, &mask), Err(Errno::EFAULT));
    // Fewer: only those are copied.
    cu_mask(&p, id, 32, &[0xFF, 0xFFFF_FFFF]).unwrap();
    assert_eq!(p.sim.queue_cu_mask(id), Some(vec![0xFF]));
    // Past 1024 bits the kernel takes the first 1024, so a 32-word slice is enough.
    let big: Vec<u32> = (0..32).map(|i| if i % 2 == 0 { 0x3 } else { 0 }).collect();
    cu_mask(&p, id, 4096, &big).unwrap();
    assert_eq!(p.sim.queue_cu_mask(id), Some(big.clone()));
    // An unknown queue: pqm_update_mqd's EFAULT, the old mask stays.
    assert_eq!(cu_mask(&p, id + 1, 32, &[0xF]), Err(Errno::EFAULT));
    // GC 10-12.0: a half-enabled WGP pair is EINVAL (CUs 4 and 5 here), even on SDMA queues.
    assert_eq!(cu_mask(&p, id, 32, &[0x10]), Err(Errno::EINVAL));
    assert_eq!(cu_mask(&p, id, 64, &[0x3, 1 << 31]), Err(Errno::EINVAL));
    let (sdma, _g, _r) = sdma_queue(&p);
    assert_eq!(cu_mask(&p, sdma, 32, &[0x1]), Err(Errno::EINVAL));
    cu_mask(&p, sdma, 32, &[0x3]).unwrap();
    assert_eq!(p.sim.queue_cu_mask(sdma), Some(vec![0x3]));
    assert_eq!(p.sim.queue_cu_mask(id), Some(big));
}

#[test]
fn set_cu_mask_on_gfx9_takes_single_cus() {
    let p = Proc::new(SimConfig {
        gpus: vec![hcq_sim::GpuConfig::gfx90a()],
        ..SimConfig::default()
    });
    let (sdma, _g, _r) = sdma_queue(&p);
    // No WGPs before GC 10: any CU alone; bits past the GPU's CUs are accepted (and unused).
    cu_mask(&p, sdma, 32, &[0x1]).unwrap();
    cu_mask(&p, sdma, 128, &[0x5, 0, 0, 1 << 31]).unwrap();
    assert_eq!(p.sim.queue_cu_mask(sdma), Some(vec![0x5, 0, 0, 1 << 31]));
}

/// GET_TILE_CONFIG of `gpu_id` into `tiles`/`macros`, counts as the caller wrote them.
fn tile_config(
    p: &Proc,
    gpu_id: u32,
    tiles: &mut [u32],
    macros: &mut [u32],
    counts: (u32, u32),
) -> (Result<(), Errno>, GetTileConfigArgs) {
    let mut a = GetTileConfigArgs {
        gpu_id,
        ..Default::default()
    };
    let mut req = Request::get_tile_config(&mut a, tiles, macros);
    req.arg_mut()[16..20].copy_from_slice(&counts.0.to_le_bytes());
    req.arg_mut()[20..24].copy_from_slice(&counts.1.to_le_bytes());
    let r = p.sim.ioctl(p.kfd, req);
    (r, a)
}

#[test]
fn get_tile_config_fills_the_borrowed_arrays() {
    let p = Proc::one();
    let (mut tiles, mut macros) = ([0xAAAA_AAAAu32; 40], [0xBBBB_BBBBu32; 20]);
    // The typed form asks for the slices' lengths; the kernel fills its 32 + 16 modes, all 0
    // from GFX9 on (amdgpu never fills the arrays), and says how many.
    let mut a = GetTileConfigArgs {
        gpu_id: p.gpu(),
        gb_addr_config: 7,
        num_banks: 7,
        num_ranks: 7,
        ..Default::default()
    };
    p.sim
        .ioctl(
            p.kfd,
            Request::get_tile_config(&mut a, &mut tiles, &mut macros),
        )
        .unwrap();
    assert_eq!((a.num_tile_configs, a.num_macro_tile_configs), (32, 16));
    assert_eq!((a.gb_addr_config, a.num_banks, a.num_ranks), (0x545, 0, 0));
    assert!(tiles[..32].iter().all(|&t| t == 0));
    assert!(tiles[32..].iter().all(|&t| t == 0xAAAA_AAAA), "{tiles:x?}");
    assert!(macros[..16].iter().all(|&t| t == 0));
    assert!(macros[16..].iter().all(|&t| t == 0xBBBB_BBBB));
    // Fewer asked: that many written.
    let (mut t, mut m) = ([9u32; 4], [9u32; 4]);
    let (r, a) = tile_config(&p, p.gpu(), &mut t, &mut m, (3, 1));
    r.unwrap();
    assert_eq!((a.num_tile_configs, a.num_macro_tile_configs), (3, 1));
    assert_eq!((t, m), ([0, 0, 0, 9], [0, 9, 9, 9]));
    // A count past a slice: copy_to_user faults, that count reads 0. The tile array comes
    // first: with it faulting, the macro count is left as the caller wrote it.
    let (r, a) = tile_config(&p, p.gpu(), &mut t, &mut m, (5, 2));
    assert_eq!(r, Err(Errno::EFAULT));
    assert_eq!((a.num_tile_configs, a.num_macro_tile_configs), (0, 2));
    let (r, a) = tile_config(&p, p.gpu(), &mut t, &mut m, (4, 6));
    assert_eq!(r, Err(Errno::EFAULT));
    assert_eq!((a.num_tile_configs, a.num_macro_tile_configs), (4, 0));
    // No arrays: nothing to copy.
    let (r, a) = tile_config(&p, p.gpu(), &mut [], &mut [], (0, 0));
    r.unwrap();
    assert_eq!((a.num_tile_configs, a.gb_addr_config), (0, 0x545));
    // An unknown GPU: EINVAL, nothing written.
    let (r, a) = tile_config(&p, 0xBAD, &mut t, &mut m, (4, 4));
    assert_eq!((r, a.gb_addr_config), (Err(Errno::EINVAL), 0));
    // gfx90a: ALDEBARAN's fixed GB_ADDR_CONFIG.
    let p9 = Proc::new(SimConfig {
        gpus: vec![hcq_sim::GpuConfig::gfx90a()],
        ..SimConfig::default()
    });
    let (r, a) = tile_config(&p9, p9.gpu(), &mut t, &mut m, (4, 4));
    r.unwrap();
    assert_eq!(a.gb_addr_config, 0x2201_4042);
}

fn wave_state(
    p: &Proc,
    queue_id: u32,
    area: &mut [u8],
) -> (Result<(), Errno>, GetQueueWaveStateArgs) {
    let mut a = GetQueueWaveStateArgs {
        queue_id,
        ctl_stack_used_size: 0xFFFF,
        save_area_used_size: 0xFFFF,
        ..Default::default()
    };
    let r = p.sim.ioctl(p.kfd, Request::queue_wave_state(&mut a, area));
    (r, a)
}

#[test]
fn get_queue_wave_state_writes_the_header_of_a_queue_that_saved_nothing() {
    let p = Proc::one();
    let mut area = vec![0xCCu8; 4096];
    // An unknown queue: EFAULT; an active one: EINVAL (only a preempted queue has state).
    assert_eq!(wave_state(&p, 77, &mut area).0, Err(Errno::EFAULT));
    let (active, _a) = compute_queue(&p, 100);
    assert_eq!(wave_state(&p, active, &mut area).0, Err(Errno::EINVAL));
    let (sdma, _g, _r) = sdma_queue(&p);
    assert_eq!(wave_state(&p, sdma, &mut area).0, Err(Errno::EINVAL));
    assert!(area.iter().all(|&b| b == 0xCC));
    // Inactive (percentage 0): nothing saved, the header as init_mqd left the MQD.
    let (idle, b) = compute_queue(&p, 0);
    let (r, a) = wave_state(&p, idle, &mut area);
    r.unwrap();
    assert_eq!((a.ctl_stack_used_size, a.save_area_used_size), (0, 0));
    assert_eq!(&area[..16], &words(&[CTL, 0, CTL, 0])[..]);
    assert!(area[16..].iter().all(|&b| b == 0xCC), "only the header");
    // A slice shorter than the header: copy_to_user faults after the sizes are written.
    let (r, a) = wave_state(&p, idle, &mut area[..15]);
    assert_eq!(r, Err(Errno::EFAULT));
    assert_eq!((a.ctl_stack_used_size, a.save_area_used_size), (0, 0));
    // Once the queue runs again it is active.
    assert_eq!(update(&p, b.ring.va, idle, 4096, 50, 7), Ok(()));
    assert_eq!(wave_state(&p, idle, &mut area).0, Err(Errno::EINVAL));
}

#[test]
fn get_dmabuf_info_allocates_then_looks_the_fd_up() {
    let p = Proc::one();
    let mut meta = [0u8; 64];
    let mut a = GetDmabufInfoArgs {
        dmabuf_fd: 12345,
        ..Default::default()
    };
    let req = Request::dmabuf_info(&mut a, &mut meta);
    assert_eq!(p.sim.ioctl(p.kfd, req), Err(Errno::EBADF));
    assert_eq!(a.metadata_size, 64);
    let mut a = GetDmabufInfoArgs {
        dmabuf_fd: p.kfd.0 as u32,
        ..Default::default()
    };
    let req = Request::dmabuf_info(&mut a, &mut []);
    assert_eq!(p.sim.ioctl(p.kfd, req), Err(Errno::EINVAL));
    // The metadata buffer is kzalloc'ed first: past 4 MiB, ENOMEM before the fd is looked up.
    let req = Request::dmabuf_info(&mut a, &mut meta);
    assert_eq!(p.ioctl_count(req, 16, (4 << 20) + 1), Err(Errno::ENOMEM));
    assert!(meta.iter().all(|&b| b == 0), "no DMA-buf: nothing written");
}

#[test]
fn get_queue_wave_state_writes_one_header_per_xcc_on_gc_9_4_3() {
    // A two-XCC gfx942 partition: get_wave_state_v9_4_3 writes each XCC's header at its own
    // save area, ctx_save_restore_size apart.
    let p = Proc::new(SimConfig {
        gpus: vec![hcq_sim::GpuConfig {
            num_xcc: 2,
            cu_count: 76,
            ..hcq_sim::GpuConfig::gfx942()
        }],
        ..SimConfig::default()
    });
    let sizes = p.sim.queue_sizes(p.gpu()).unwrap();
    assert_eq!(sizes.num_xcc, 2);
    let (gart, ring, eop) = (
        p.alloc(4096, GTT_FLAGS),
        p.alloc(4096, GTT_FLAGS),
        p.alloc(4096, VRAM_FLAGS),
    );
    let cwsr = p.alloc(
        sizes.cwsr_mapping_size(sizes.cwsr_size).unwrap(),
        VRAM_FLAGS,
    );
    let mut a = CreateQueueArgs {
        ring_base_address: ring.va,
        write_pointer_address: gart.va + 0x38,
        read_pointer_address: gart.va + 0x80,
        ring_size: 4096,
        gpu_id: p.gpu(),
        queue_type: KFD_IOC_QUEUE_TYPE_COMPUTE,
        eop_buffer_address: eop.va,
        eop_buffer_size: eop.size,
        ctx_save_restore_address: cwsr.va,
        ctx_save_restore_size: sizes.cwsr_size,
        ctl_stack_size: sizes.ctl_stack_size,
        ..Default::default()
    };
    p.ioctl(AMDKFD_IOC_CREATE_QUEUE, &mut a).unwrap();
    let stride = sizes.cwsr_size as usize;
    let mut area = vec![0xCCu8; 2 * stride];
    let (r, w) = wave_state(&p, a.queue_id, &mut area);
    r.unwrap();
    assert_eq!((w.ctl_stack_used_size, w.save_area_used_size), (0, 0));
    let header = words(&[sizes.ctl_stack_size, 0, sizes.ctl_stack_size, 0]);
    assert_eq!(&area[..16], &header[..]);
    assert_eq!(&area[stride..stride + 16], &header[..]);
    assert!(area[16..stride].iter().all(|&b| b == 0xCC));
    // Room for the first XCC's header only: the second copy faults.
    let mut area = vec![0xCCu8; stride + 8];
    assert_eq!(wave_state(&p, a.queue_id, &mut area).0, Err(Errno::EFAULT));
    assert_eq!(&area[..16], &header[..]);
}
