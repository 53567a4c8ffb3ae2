//! Multi-XCC GPUs (gfx942 partitions): `SimConfig::xcc` / `HCQ_SIM_XCC`, the topology a
//! partitioned node shows, and the refusals of counts a target has no partition for.

use hcq_sim::{GpuConfig, SimConfig, SimError, SimKfd, XCC_ENV};

fn gfx942_with(xcc: u32) -> SimConfig {
    SimConfig {
        gpus: vec![GpuConfig::gfx942()],
        xcc,
        ..SimConfig::default()
    }
}

#[test]
fn spx_mi300x_shows_eight_xccs_of_38_cus() {
    let sim = SimKfd::new(gfx942_with(8)).unwrap();
    let id = sim.gpu_ids()[0];
    let p = sim.properties(id).unwrap();
    assert_eq!(p.num_xcc, 8);
    // 304 CUs of 4 SIMDs, 8 x 4 shader arrays (kfd_crat.c counts the node's CUs over its XCCs).
    assert_eq!(p.simd_count, 304 * 4);
    assert_eq!(p.array_count, 32);
    assert_eq!(p.simd_arrays_per_engine, 1);
    assert_eq!(p.local_mem_size, 192 << 30);
    // The CWSR sizes are per XCC: the same as one CPX partition's.
    let one = SimKfd::new(gfx942_with(1)).unwrap();
    let s1 = one.queue_sizes(one.gpu_ids()[0]).unwrap();
    let s8 = sim.queue_sizes(id).unwrap();
    assert_eq!(s8.num_xcc, 8);
    assert_eq!(
        (s8.cwsr_size, s8.ctl_stack_size),
        (s1.cwsr_size, s1.ctl_stack_size)
    );
    // kfd_queue.c: ALIGN((ctx_save_restore_size + debug_memory_size) * NUM_XCC, PAGE_SIZE).
    let per_xcc = u64::from(s1.cwsr_size) + u64::from(s1.debug_memory_size);
    assert_eq!(
        s8.cwsr_mapping_size(s8.cwsr_size),
        Some((per_xcc * 8).next_multiple_of(4096))
    );
    // The served properties file says so too.
    let text = sim.gpu_config(id).unwrap().properties(0);
    assert_eq!(text.num_xcc, 8);
}

#[test]
fn dpx_and_qpx_partitions_scale_the_node() {
    for (xcc, cus) in [(2, 76), (4, 152)] {
        let sim = SimKfd::new(gfx942_with(xcc)).unwrap();
        let p = sim.properties(sim.gpu_ids()[0]).unwrap();
        assert_eq!((p.num_xcc, p.simd_count / p.simd_per_cu), (xcc, cus));
    }
}

#[test]
fn counts_a_target_has_no_partition_for_are_refused_with_what_it_takes() {
    let e = SimKfd::new(gfx942_with(3)).err().unwrap();
    assert!(matches!(e, SimError::Xcc(0, _)), "{e:?}");
    let text = e.to_string();
    assert!(text.contains("gfx942 has no partition of 3 XCCs"), "{text}");
    assert!(text.contains("SPX 8"), "{text}");
    let e = SimKfd::new(SimConfig {
        xcc: 8,
        ..SimConfig::default()
    })
    .err()
    .unwrap();
    let text = e.to_string();
    assert!(text.contains("gfx1100 has one XCC, not 8"), "{text}");
    assert!(text.contains("next:"), "{text}");
    // A GPU described with 8 XCCs keeps them under the default, and refuses another count.
    let spx = GpuConfig::gfx942().with_xcc(8).unwrap();
    let mut cfg = SimConfig {
        gpus: vec![spx.clone()],
        xcc: 1,
        ..SimConfig::default()
    };
    let sim = SimKfd::new(cfg.clone()).unwrap();
    assert_eq!(sim.properties(sim.gpu_ids()[0]).unwrap().num_xcc, 8);
    cfg.xcc = 4;
    assert!(matches!(SimKfd::new(cfg).err(), Some(SimError::Xcc(0, _))));
    // Re-partitioning is relative to one XCC's resources.
    assert_eq!(spx.with_xcc(2).unwrap().cu_count, 76);
}

/// Run by [`bad_env_values_are_refused`] in a child process with `HCQ_SIM_XCC` set.
#[test]
#[ignore = "run by bad_env_values_are_refused with HCQ_SIM_XCC set"]
fn child_env_xcc() {
    let v = std::env::var(XCC_ENV).unwrap();
    match SimKfd::new(gfx942_with(1)) {
        Err(SimError::Env(e)) => {
            assert_eq!(e.var, XCC_ENV);
            assert_eq!(e.value, v);
            println!("REFUSED: {e}");
        }
        Ok(_) => {
            // A good value: the default config takes it.
            let sim = SimKfd::new(SimConfig {
                gpus: vec![GpuConfig::gfx942()],
                ..SimConfig::default()
            })
            .unwrap();
            let n = sim.properties(sim.gpu_ids()[0]).unwrap().num_xcc;
            println!("XCC {n}");
        }
        Err(e) => panic!("{e}"),
    }
}

fn child(value: &str) -> String {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "child_env_xcc", "--nocapture"])
        .env(XCC_ENV, value)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn bad_env_values_are_refused() {
    for bad in ["3", "0", "eight", "16", ""] {
        let out = child(bad);
        assert!(out.contains("REFUSED: HCQ_SIM_XCC="), "{bad:?}: {out}");
        assert!(out.contains("8 for an MI300X in SPX mode"), "{out}");
    }
    assert!(child("8").contains("XCC 8"));
    assert!(child(" 4 ").contains("XCC 4"));
}

// ---- queues on a multi-XCC node -------------------------------------------------------------

mod common;

use common::{Buf, GTT_FLAGS, Proc, VRAM_FLAGS, cpu_read, cpu_write};
use hcq_core::addr::GpuVa;
use hcq_core::kfd::*;
use hcq_core::pm4::{self, WriteDataCntl};
use hcq_sim::engine::attach::SimGpu;
use hcq_sim::engine::{QueueId, QueueState};

const PRED_EXEC: u32 = 0x23;

struct Node {
    p: Proc,
    gpu: SimGpu,
    data: Buf,
    db_slice: u64,
}

struct Q {
    id: u32,
    ring: Buf,
    gart: Buf,
    db: u64,
    put: u64,
}

fn node(target: GpuConfig, xcc: u32) -> Node {
    let p = Proc::new(SimConfig {
        gpus: vec![target],
        xcc,
        ..SimConfig::default()
    });
    let gpu = SimGpu::attach(&p.sim).unwrap();
    let data = p.alloc_at(0, 1 << 20, GTT_FLAGS).unwrap();
    p.map(data.handle, &p.gpus.clone()).unwrap();
    Node {
        p,
        gpu,
        data,
        db_slice: 0,
    }
}

impl Node {
    /// A PM4 (target XCC `xcc`) or AQL queue with the node's CWSR sizes (a save area per XCC).
    fn queue(&mut self, aql: bool, target_xcc: u32) -> Q {
        let p = &self.p;
        let g = [p.gpus[0]];
        let mk = |size, flags| {
            let b = p.alloc_at(0, size, flags).unwrap();
            p.map(b.handle, &g).unwrap();
            b
        };
        let sizes = p.sim.queue_sizes(p.gpus[0]).unwrap();
        let eop = mk(u64::from(sizes.eop_buffer_size), VRAM_FLAGS);
        let cwsr = mk(
            sizes.cwsr_mapping_size(sizes.cwsr_size).unwrap(),
            VRAM_FLAGS,
        );
        let ring = mk(4096, GTT_FLAGS);
        let gart = mk(4096, GTT_FLAGS);
        if aql {
            for i in 0..64 {
                cpu_write::<u32>(ring.va + i * 64, 1); // INVALID
            }
            cpu_write::<u32>(gart.va + 136, 128);
        }
        let mut a = CreateQueueArgs {
            ring_base_address: ring.va,
            write_pointer_address: gart.va + 56,
            read_pointer_address: gart.va + 128,
            ring_size: ring.size as u32,
            gpu_id: p.gpus[0],
            queue_type: if aql {
                KFD_IOC_QUEUE_TYPE_COMPUTE_AQL
            } else {
                KFD_IOC_QUEUE_TYPE_COMPUTE
            },
            queue_percentage: KFD_MAX_QUEUE_PERCENTAGE | target_xcc << 8,
            queue_priority: 7,
            eop_buffer_address: eop.va,
            eop_buffer_size: eop.size,
            ctx_save_restore_address: cwsr.va,
            ctx_save_restore_size: sizes.cwsr_size,
            ctl_stack_size: sizes.ctl_stack_size,
            ..Default::default()
        };
        p.ioctl(AMDKFD_IOC_CREATE_QUEUE, &mut a).unwrap();
        if self.db_slice == 0 {
            self.db_slice = p
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
            db: self.db_slice + doorbell_in_slice(a.doorbell_offset),
            put: 0,
        }
    }

    /// An indirect buffer at `data + 0x8000` holding `dwords`: (address, dwords).
    fn ib(&self, dwords: &[u32]) -> (u64, u32) {
        let at = self.data.va + 0x8000;
        for (i, &d) in dwords.iter().enumerate() {
            cpu_write::<u32>(at + 4 * i as u64, d);
        }
        (at, dwords.len() as u32)
    }

    fn pm4_submit(&self, q: &mut Q, dwords: &[u32]) {
        for &d in dwords {
            cpu_write::<u32>(q.ring.va + (q.put % 1024) * 4, d);
            q.put += 1;
        }
        cpu_write::<u64>(q.gart.va + 56, q.put);
        cpu_write::<u64>(q.db, q.put);
        self.gpu.engines().run_until_idle();
    }

    fn aql_pm4_ib(&self, q: &mut Q, ib: (u64, u32)) {
        let mut ibp = [0u32; 4];
        pm4::indirect_buffer(&mut ibp, GpuVa(ib.0), ib.1).unwrap();
        let at = q.ring.va + (q.put % 64) * 64;
        let mut w = [0u32; 16];
        // VENDOR_SPECIFIC | barrier | system acquire and release scopes, AMD_AQL_FORMAT_PM4_IB.
        w[0] = (1 << 8) | (2 << 9) | (2 << 11) | (1 << 16);
        w[1..5].copy_from_slice(&ibp);
        w[5] = 0xA;
        for (i, v) in w.iter().enumerate().skip(1) {
            cpu_write::<u32>(at + 4 * i as u64, *v);
        }
        cpu_write::<u32>(at, w[0]);
        q.put += 1;
        cpu_write::<u64>(q.db, q.put - 1);
        self.gpu.engines().run_until_idle();
    }

    fn state(&self, q: &Q) -> QueueState {
        self.gpu.engines().queue(QueueId(q.id)).unwrap().state
    }

    fn slots(&self) -> Vec<u32> {
        (0..8)
            .map(|k| cpu_read::<u32>(self.data.va + 4 * k))
            .collect()
    }
}

/// For each XCC `k` of 8: PRED_EXEC(1 << k) over a WRITE_DATA of `k + 1` to slot `k`.
fn per_xcc_writes(data: u64) -> Vec<u32> {
    let mut out = Vec::new();
    for k in 0..8u32 {
        let mut wd = [0u32; 5];
        let n = pm4::write_data(
            &mut wd,
            WriteDataCntl::zeroed()
                .with(WriteDataCntl::DST_SEL, 5)
                .with(WriteDataCntl::WR_CONFIRM, 1),
            GpuVa(data + 4 * u64::from(k)),
            &[k + 1],
        )
        .unwrap();
        out.push((3 << 30) | (PRED_EXEC << 8));
        out.push((1 << (24 + k)) | n as u32);
        out.extend_from_slice(&wd[..n]);
    }
    out
}

#[test]
fn an_aql_queues_pm4_ib_runs_on_every_xcc_each_honouring_pred_exec() {
    let mut n = node(GpuConfig::gfx942(), 8);
    let mut q = n.queue(true, 0);
    let ib = n.ib(&per_xcc_writes(n.data.va));
    n.aql_pm4_ib(&mut q, ib);
    assert!(matches!(n.state(&q), QueueState::Idle), "{:?}", n.state(&q));
    assert_eq!(n.slots(), [1, 2, 3, 4, 5, 6, 7, 8]);
    // The packet completed once: read_dispatch_id moved by one.
    assert_eq!(cpu_read::<u64>(q.gart.va + 128), 1);

    // One XCC (a CPX partition): only XCC 0's packet runs.
    let mut one = node(GpuConfig::gfx942(), 1);
    let mut q = one.queue(true, 0);
    let ib = one.ib(&per_xcc_writes(one.data.va));
    one.aql_pm4_ib(&mut q, ib);
    assert_eq!(one.slots(), [1, 0, 0, 0, 0, 0, 0, 0]);
}

#[test]
fn a_pm4_queue_runs_on_its_target_xcc_only() {
    let mut n = node(GpuConfig::gfx942(), 8);
    let mut q = n.queue(false, 3);
    let (ib, len) = n.ib(&per_xcc_writes(n.data.va));
    let mut ibp = [0u32; 4];
    pm4::indirect_buffer(&mut ibp, GpuVa(ib), len).unwrap();
    n.pm4_submit(&mut q, &ibp);
    assert!(matches!(n.state(&q), QueueState::Idle), "{:?}", n.state(&q));
    assert_eq!(n.slots(), [0, 0, 0, 4, 0, 0, 0, 0]);
    assert_eq!(cpu_read::<u64>(q.gart.va + 128), 4);
}

#[test]
fn a_pm4_target_xcc_past_the_node_faults_the_queue_with_the_cause() {
    let mut n = node(GpuConfig::gfx942(), 4);
    let mut q = n.queue(false, 4);
    n.pm4_submit(&mut q, &[pm4::Pm4Header::packet3(0x10, 0).raw(), 0]);
    let QueueState::Faulted(f) = n.state(&q) else {
        panic!("{:?}", n.state(&q));
    };
    assert!(
        f.message.contains("PM4 target XCC 4") && f.message.contains("node of 4 XCCs"),
        "{}",
        f.message
    );
}

#[test]
fn pred_exec_in_the_ring_faults_the_queue_with_the_cause() {
    let mut n = node(GpuConfig::gfx942(), 8);
    let mut q = n.queue(false, 0);
    let dwords = per_xcc_writes(n.data.va);
    n.pm4_submit(&mut q, &dwords);
    let QueueState::Faulted(f) = n.state(&q) else {
        panic!("{:?}", n.state(&q));
    };
    assert!(f.message.contains("PRED_EXEC in the ring"), "{}", f.message);
    assert_eq!(n.slots(), [0; 8]);
}

/// SET_SH_REG COMPUTE_TG_CHUNK_SIZE = 1 (GC 9.4.3 0xe27), then a DISPATCH_DIRECT of 8 groups.
fn chunked_dispatch() -> Vec<u32> {
    use hcq_core::arch::GFX9;
    use hcq_core::pm4::{DispatchDirect, DispatchInitiator};
    let mut out = vec![0u32; 16];
    let mut n = pm4::set_sh_reg(&mut out, GFX9.regs.pgm_lo + (0xe27 - 0xe0c), &[1]).unwrap();
    n += pm4::dispatch_direct(
        &mut out[n..],
        &DispatchDirect {
            dim: [8, 1, 1],
            initiator: DispatchInitiator::zeroed().with(DispatchInitiator::COMPUTE_SHADER_EN, 1),
        },
    )
    .unwrap();
    out.truncate(n);
    out
}

#[test]
fn a_pm4_dispatch_shared_out_by_tg_chunk_size_is_refused_with_the_cause() {
    let mut n = node(GpuConfig::gfx942(), 8);
    let mut q = n.queue(false, 2);
    n.pm4_submit(&mut q, &chunked_dispatch());
    let QueueState::Faulted(f) = n.state(&q) else {
        panic!("{:?}", n.state(&q));
    };
    assert!(
        f.message.contains("COMPUTE_TG_CHUNK_SIZE 1 on XCC 2 of 8")
            && f.message.contains("only logical XCC 0's chunks"),
        "{}",
        f.message
    );
}

#[test]
fn a_dispatch_direct_in_an_aql_pm4_ib_on_8_xccs_is_refused_with_the_cause() {
    let mut n = node(GpuConfig::gfx942(), 8);
    let mut q = n.queue(true, 0);
    let ib = n.ib(&chunked_dispatch());
    n.aql_pm4_ib(&mut q, ib);
    let QueueState::Faulted(f) = n.state(&q) else {
        panic!("{:?}", n.state(&q));
    };
    assert!(
        f.message
            .contains("every XCC runs the IB and dispatches its own share"),
        "{}",
        f.message
    );
}

/// PRED_EXEC(1 << `xcc`) over `body`.
fn on_xcc(xcc: u32, body: &[u32]) -> Vec<u32> {
    let mut out = vec![
        (3 << 30) | (PRED_EXEC << 8),
        (1 << (24 + xcc)) | body.len() as u32,
    ];
    out.extend_from_slice(body);
    out
}

/// WAIT_REG_MEM until the dword at `addr` >= `value`.
fn wait_for(addr: u64, value: u32) -> Vec<u32> {
    let mut w = [0u32; 8];
    let n = pm4::wait_reg_mem(&mut w, &pm4::wait_packet(GpuVa(addr), value)).unwrap();
    w[..n].to_vec()
}

/// WRITE_DATA of `value` to `addr`.
fn write(addr: u64, value: u32) -> Vec<u32> {
    let mut wd = [0u32; 5];
    let n = pm4::write_data(
        &mut wd,
        WriteDataCntl::zeroed()
            .with(WriteDataCntl::DST_SEL, 5)
            .with(WriteDataCntl::WR_CONFIRM, 1),
        GpuVa(addr),
        &[value],
    )
    .unwrap();
    wd[..n].to_vec()
}

#[test]
fn the_xccs_of_an_aql_pm4_ib_run_concurrently_so_xcc_0_may_wait_for_a_later_xcc() {
    // XCC 0 waits for the value XCC 7 writes, then writes its own: on the hardware the 8 CPs
    // run the IB at once; run one after another (XCC 0 first) this deadlocked.
    let mut n = node(GpuConfig::gfx942(), 8);
    let mut q = n.queue(true, 0);
    let d = n.data.va;
    let mut ib = on_xcc(0, &wait_for(d + 4 * 7, 8));
    ib.extend(per_xcc_writes(d));
    ib.extend(on_xcc(0, &write(d + 4 * 8, 99)));
    let ib = n.ib(&ib);
    n.aql_pm4_ib(&mut q, ib);
    assert!(matches!(n.state(&q), QueueState::Idle), "{:?}", n.state(&q));
    assert_eq!(n.slots(), [1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(cpu_read::<u32>(d + 4 * 8), 99);
    assert_eq!(cpu_read::<u64>(q.gart.va + 128), 1);

    // Each XCC waits for the next one's write, XCC 7 for XCC 0's: every CP runs its turn, so
    // the chain resolves whichever order they are stepped in.
    let mut n = node(GpuConfig::gfx942(), 8);
    let mut q = n.queue(true, 0);
    let d = n.data.va;
    let mut ib = Vec::new();
    for k in 0..8u32 {
        let mut body = if k == 7 {
            Vec::new()
        } else {
            wait_for(d + 4 * u64::from(k + 1), 1)
        };
        body.extend(write(d + 4 * u64::from(k), 1));
        ib.extend(on_xcc(k, &body));
    }
    let ib = n.ib(&ib);
    n.aql_pm4_ib(&mut q, ib);
    assert!(matches!(n.state(&q), QueueState::Idle), "{:?}", n.state(&q));
    assert_eq!(n.slots(), [1; 8]);
}

#[test]
fn an_aql_pm4_ib_whose_xccs_all_wait_on_what_nobody_writes_waits() {
    let mut n = node(GpuConfig::gfx942(), 8);
    let mut q = n.queue(true, 0);
    let d = n.data.va;
    // Every XCC waits for slot 8, then writes its slot: none may pass.
    let mut ib = wait_for(d + 4 * 8, 1);
    ib.extend(per_xcc_writes(d));
    let ib = n.ib(&ib);
    n.aql_pm4_ib(&mut q, ib);
    assert!(
        matches!(n.state(&q), QueueState::Waiting(_)),
        "{:?}",
        n.state(&q)
    );
    assert_eq!(n.slots(), [0; 8]);
    // The host writes the value: every XCC passes, and the packet completes once.
    cpu_write::<u32>(d + 4 * 8, 1);
    n.gpu.engines().run_until_idle();
    assert!(matches!(n.state(&q), QueueState::Idle), "{:?}", n.state(&q));
    assert_eq!(n.slots(), [1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(cpu_read::<u64>(q.gart.va + 128), 1);
}
