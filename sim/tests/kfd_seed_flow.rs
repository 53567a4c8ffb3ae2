//! The bring-up tinygrad's `AMDDevice.__init__` (seed 000) performs, on two simulated GPUs,
//! with the CWSR sizes a 6.12+ kernel accepts, then a full teardown with nothing leaked.

mod common;

use common::{Buf, GTT_FLAGS, Proc, VRAM_FLAGS, cpu_write};
use hcq_core::kfd::topology::{CwsrSizes, NodeProperties, ScratchSizing};
use hcq_core::kfd::*;
use hcq_core::signal::SIGNAL_SIZE;
use hcq_sim::SimConfig;

struct Dev {
    gpu: usize,
    bufs: Vec<Buf>,
    queues: Vec<u32>,
    doorbells: u64,
}

#[test]
fn seed_bring_up_and_teardown() {
    let p = Proc::new(SimConfig::with_gpus(2));
    let mut v = GetVersionArgs::default();
    p.ioctl(AMDKFD_IOC_GET_VERSION, &mut v).unwrap();
    if v.minor_version >= KFD_IOCTL_MINOR_RUNTIME_ENABLE {
        let mut r = RuntimeEnableArgs::default();
        p.ioctl(AMDKFD_IOC_RUNTIME_ENABLE, &mut r).unwrap();
    }

    // Process-wide: signals page and event page on GPU 0, mapped to every GPU.
    let signals = p
        .alloc_at(0, (SIGNAL_SIZE * 4096) as u64, GTT_FLAGS)
        .unwrap();
    let event_page = p.alloc_at(0, KFD_EVENT_PAGE_SIZE, GTT_FLAGS).unwrap();
    assert_eq!(p.map(signals.handle, &p.gpus).unwrap(), 2);
    assert_eq!(p.map(event_page.handle, &p.gpus).unwrap(), 2);
    let sync0 = p
        .create_event(KFD_IOC_EVENT_SIGNAL, true, event_page.handle)
        .unwrap();
    let sync1 = p.create_event(KFD_IOC_EVENT_SIGNAL, true, 0).unwrap();
    let mem_ev = p.create_event(KFD_IOC_EVENT_MEMORY, false, 0).unwrap();
    let hw_ev = p
        .create_event(KFD_IOC_EVENT_HW_EXCEPTION, false, 0)
        .unwrap();

    let mut devs = Vec::new();
    for gpu in 0..2 {
        let mut props_buf = [0u8; 4096];
        let n = p
            .sim
            .read_file(
                &format!("{}/properties", hcq_sim::node_dir(gpu + 1)),
                &mut props_buf,
            )
            .unwrap();
        let props = NodeProperties::parse(core::str::from_utf8(&props_buf[..n]).unwrap()).unwrap();
        let scratch = ScratchSizing::for_node(&props).unwrap();
        let cwsr = CwsrSizes::for_node(&props).unwrap();
        let alloc = |size, flags| {
            let b = p.alloc_at(gpu, size, flags).unwrap();
            p.map(b.handle, &[p.gpus[gpu]]).unwrap();
            b
        };
        let kernargs = alloc(0x100_0000, VRAM_FLAGS);
        let scratch_buf = alloc(scratch.scratch_len, VRAM_FLAGS);
        let mut bufs = vec![kernargs, scratch_buf];
        let mut queues = Vec::new();
        let mut doorbell_base = 0;
        for ty in [KFD_IOC_QUEUE_TYPE_COMPUTE, KFD_IOC_QUEUE_TYPE_SDMA] {
            let gart = alloc(0x1000, GTT_FLAGS);
            let ring = alloc(0x10_0000, GTT_FLAGS);
            let compute = ty == KFD_IOC_QUEUE_TYPE_COMPUTE;
            let (eop, ctx) = if compute {
                let ctx = alloc(cwsr.min_cwsr_mapping_size().unwrap(), VRAM_FLAGS);
                let eop = alloc(u64::from(cwsr.eop_buffer_size), VRAM_FLAGS);
                (Some(eop), Some(ctx))
            } else {
                (None, None)
            };
            let mut q = CreateQueueArgs {
                ring_base_address: ring.va,
                write_pointer_address: gart.va + 0x38,
                read_pointer_address: gart.va + 0x80,
                ring_size: 0x10_0000,
                gpu_id: p.gpus[gpu],
                queue_type: ty,
                queue_percentage: KFD_MAX_QUEUE_PERCENTAGE,
                queue_priority: KFD_MAX_QUEUE_PRIORITY,
                eop_buffer_address: eop.map_or(0, |b| b.va),
                eop_buffer_size: eop.map_or(0, |b| b.size),
                ctx_save_restore_address: ctx.map_or(0, |b| b.va),
                ctx_save_restore_size: if compute { cwsr.cwsr_size } else { 0 },
                ctl_stack_size: if compute { cwsr.ctl_stack_size } else { 0 },
                ..Default::default()
            };
            p.ioctl(AMDKFD_IOC_CREATE_QUEUE, &mut q).unwrap();
            queues.push(q.queue_id);
            if doorbell_base == 0 {
                doorbell_base = p
                    .sim
                    .mmap(
                        None,
                        KFD_DOORBELL_SLICE_SIZE,
                        Prot::READ_WRITE,
                        MapKind::File {
                            fd: p.kfd,
                            offset: doorbell_slice_offset(q.doorbell_offset),
                        },
                    )
                    .unwrap();
            }
            // Ring the doorbell: the engine view sees the value.
            cpu_write::<u64>(doorbell_base + doorbell_in_slice(q.doorbell_offset), 0x10);
            let info = p.sim.queue(q.queue_id).unwrap();
            assert_eq!(p.sim.doorbell(p.gpus[gpu], info.doorbell_id), Some(0x10));
            bufs.extend([Some(gart), Some(ring), eop, ctx].into_iter().flatten());
        }
        devs.push(Dev {
            gpu,
            bufs,
            queues,
            doorbells: doorbell_base,
        });
    }
    let live = p.sim.live_objects();
    assert_eq!(live.queues, 4);
    assert_eq!(live.events, 4);
    assert_eq!((live.bos, live.event_page_bo), (1 + 2 * 8, true));

    // Teardown in reverse.
    for d in devs {
        for q in d.queues {
            let mut a = DestroyQueueArgs {
                queue_id: q,
                pad: 0,
            };
            p.ioctl(AMDKFD_IOC_DESTROY_QUEUE, &mut a).unwrap();
        }
        p.sim.munmap(d.doorbells, KFD_DOORBELL_SLICE_SIZE).unwrap();
        for b in d.bufs {
            p.release(b, &[p.gpus[d.gpu]]);
        }
    }
    for e in [sync0, sync1, mem_ev, hw_ev] {
        p.destroy_event(e.event_id).unwrap();
    }
    p.release(signals, &p.gpus);
    // The event page stays registered with the process (FREE is EPERM, as in the kernel).
    p.unmap(event_page.handle, &p.gpus).unwrap();
    assert_eq!(p.free_raw(event_page.handle), Err(Errno::EPERM));
    p.sim.munmap(event_page.va, event_page.size).unwrap();
    let live = p.sim.live_objects();
    assert_eq!(
        (
            live.bos,
            live.gpu_mappings,
            live.cpu_mappings,
            live.queues,
            live.events
        ),
        (0, 0, 0, 0, 0),
        "nothing but the event page BO remains"
    );
    assert!(live.event_page_bo);
    assert!(live.nothing_leaked());
}
