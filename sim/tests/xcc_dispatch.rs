//! A kernel dispatch on the XCCs of an SPX MI300X (gfx942, 8 XCCs) as the waves see it: each
//! work-group on XCC `g % 8` (COMPUTE_TG_CHUNK_SIZE 1), `s_getreg_b32 HW_REG_XCC_ID` reading
//! that XCC, and each XCC's waves on that XCC's slice of the queue's scratch
//! (`scratch_backing_memory_location + xcc * scratch_backing_memory_byte_size`); an
//! `amd_queue_t` whose slices overlap is caught with the cause.

mod common;

use common::{Buf, GTT_FLAGS, Proc, cpu_read, cpu_write};
use hcq_core::kfd::*;
use hcq_sim::engine::attach::SimGpu;
use hcq_sim::engine::{QueueId, QueueState};
use hcq_sim::{GpuConfig, SimConfig};

/// gfx942 machine code (llvm-mc-19 -mcpu=gfx942): kernarg s[0:1] = {out}, s2 = work-group id.
/// ```text
/// s_load_dwordx2 s[4:5], s[0:1], 0x0
/// s_getreg_b32 s6, hwreg(HW_REG_XCC_ID)
/// v_mov_b32 v1, s2
/// v_add_u32 v1, 1, v1
/// scratch_store_dword off, v1, off      ; private offset 0 = work-group id + 1
/// s_waitcnt lgkmcnt(0)
/// s_lshl_b32 s7, s2, 2
/// s_add_u32 s4, s4, s7
/// s_addc_u32 s5, s5, 0
/// v_mov_b32 v0, 0
/// v_mov_b32 v1, s6
/// global_store_dword v0, v1, s[4:5]     ; out[work-group id] = XCC_ID
/// s_waitcnt vmcnt(0)
/// s_endpgm
/// ```
const CODE: [u32; 17] = [
    0xc0060100, 0x00000000, 0xb886f814, 0x7e020202, 0x68020281, 0xdc704000, 0x007f0100, 0xbf8cc07f,
    0x8e078202, 0x80040704, 0x82058005, 0x7e000280, 0x7e020206, 0xdc708000, 0x00040100, 0xbf8c0f70,
    0xbf810000,
];

/// Work-groups of 64 work-items (one wave64 each).
const GROUPS: u32 = 16;
/// Scratch wave slots per XCC and bytes per slot (WAVESIZE 1: 1 KiB on gfx9).
const WAVES: u64 = 8;
const WAVE_BYTES: u64 = 1024;
const PER_XCC: u64 = WAVES * WAVE_BYTES;

struct Node {
    /// The process (kept open).
    _p: Proc,
    gpu: SimGpu,
    data: Buf,
    scratch: Buf,
    ring: Buf,
    gart: Buf,
    db: u64,
    qid: u32,
}

fn node(xcc: u32, strict: bool) -> Node {
    node_with(xcc, strict, None)
}

/// A node with an AQL queue, or with `pm4_target: Some(k)` a PM4 queue on XCC `k`.
fn node_with(xcc: u32, strict: bool, pm4_target: Option<u32>) -> Node {
    let p = Proc::new(SimConfig {
        gpus: vec![GpuConfig::gfx942()],
        xcc,
        strict,
        ..SimConfig::default()
    });
    let gpu = SimGpu::attach(&p.sim).unwrap();
    let g = p.gpus.clone();
    let mk = |size| {
        let b = p.alloc_at(0, size, GTT_FLAGS).unwrap();
        p.map(b.handle, &g).unwrap();
        b
    };
    let data = mk(1 << 16);
    let scratch = mk(8 * PER_XCC);
    let ring = mk(4096);
    let gart = mk(4096);
    let sizes = p.sim.queue_sizes(p.gpus[0]).unwrap();
    let eop = mk(u64::from(sizes.eop_buffer_size));
    let cwsr = mk(sizes.cwsr_mapping_size(sizes.cwsr_size).unwrap());
    for i in 0..64 {
        cpu_write::<u32>(ring.va + i * 64, 1); // INVALID
    }
    cpu_write::<u32>(gart.va + 136, 128); // read_dispatch_id_field_base_byte_offset
    let mut a = CreateQueueArgs {
        ring_base_address: ring.va,
        write_pointer_address: gart.va + 56,
        read_pointer_address: gart.va + 128,
        ring_size: ring.size as u32,
        gpu_id: p.gpus[0],
        queue_type: if pm4_target.is_some() {
            KFD_IOC_QUEUE_TYPE_COMPUTE
        } else {
            KFD_IOC_QUEUE_TYPE_COMPUTE_AQL
        },
        queue_percentage: KFD_MAX_QUEUE_PERCENTAGE | pm4_target.unwrap_or(0) << 8,
        queue_priority: 7,
        eop_buffer_address: eop.va,
        eop_buffer_size: eop.size,
        ctx_save_restore_address: cwsr.va,
        ctx_save_restore_size: sizes.cwsr_size,
        ctl_stack_size: sizes.ctl_stack_size,
        ..Default::default()
    };
    p.ioctl(AMDKFD_IOC_CREATE_QUEUE, &mut a).unwrap();
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
    Node {
        _p: p,
        gpu,
        data,
        scratch,
        ring,
        gart,
        db: slice + doorbell_in_slice(a.doorbell_offset),
        qid: a.queue_id,
    }
}

impl Node {
    /// The queue's scratch as `amd_queue_t` describes it: 8 wave slots of 1 KiB per XCC
    /// (compute_tmpring_size), 16 bytes per lane, XCCs `xcc_bytes` apart.
    fn scratch_setup(&self, xcc_bytes: u64) {
        let q = self.gart.va;
        cpu_write::<u32>(q + 140, (1 << 12) | WAVES as u32); // WAVESIZE 1, WAVES 8
        cpu_write::<u64>(q + 160, self.scratch.va); // scratch_backing_memory_location
        cpu_write::<u64>(q + 168, xcc_bytes); // scratch_backing_memory_byte_size
        cpu_write::<u32>(q + 176, 16); // scratch_wave64_lane_byte_size
    }

    /// Loads the kernel; returns (its descriptor's address, the code's, the kernargs', out's).
    fn load(&self) -> (u64, u64, u64, u64) {
        let d = self.data.va;
        let (kd, code, kernargs, out) = (d + 0x1000, d + 0x2000, d + 0x3000, d + 0x4000);
        for (i, w) in CODE.iter().enumerate() {
            cpu_write::<u32>(code + 4 * i as u64, *w);
        }
        cpu_write::<u64>(kernargs, out);
        for g in 0..u64::from(GROUPS) {
            cpu_write::<u32>(out + 4 * g, 0xdead);
        }
        (kd, code, kernargs, out)
    }

    /// Loads the kernel and dispatches GROUPS work-groups of 64 with 4 bytes of private
    /// segment per work-item, then runs the GPU.
    fn dispatch(&self) {
        let (kd, code, kernargs, _) = self.load();
        for i in 0..16 {
            cpu_write::<u32>(kd + 4 * i, 0);
        }
        cpu_write::<u32>(kd + 4, 4); // private_segment_fixed_size
        cpu_write::<u32>(kd + 8, 8); // kernarg_size
        cpu_write::<i64>(kd + 16, (code - kd) as i64); // kernel_code_entry_byte_offset
        cpu_write::<u32>(kd + 48, 1 << 6); // rsrc1: 16 SGPRs, 8 VGPRs
        // rsrc2: ENABLE_PRIVATE_SEGMENT, USER_SGPR_COUNT 2, TGID_X_EN.
        cpu_write::<u32>(kd + 52, 1 | (2 << 1) | (1 << 7));
        cpu_write::<u16>(kd + 56, 1 << 3); // ENABLE_SGPR_KERNARG_SEGMENT_PTR
        let at = self.ring.va;
        let mut p = [0u32; 16];
        // KERNEL_DISPATCH | barrier | system acquire and release scopes; setup: 1 dimension.
        p[0] = 2 | (1 << 8) | (2 << 9) | (2 << 11) | (1 << 16);
        p[1] = 64 | (1 << 16);
        p[2] = 1;
        p[3] = 64 * GROUPS;
        p[4] = 1;
        p[5] = 1;
        p[6] = 4; // private_segment_size
        [p[8], p[9]] = [kd as u32, (kd >> 32) as u32];
        [p[10], p[11]] = [kernargs as u32, (kernargs >> 32) as u32];
        for (i, w) in p.iter().enumerate().skip(1) {
            cpu_write::<u32>(at + 4 * i as u64, *w);
        }
        cpu_write::<u32>(at, p[0]);
        cpu_write::<u64>(self.db, 0);
        self.gpu.engines().run_until_idle();
    }

    fn state(&self) -> QueueState {
        self.gpu.engines().queue(QueueId(self.qid)).unwrap().state
    }

    fn xcc_ids(&self) -> Vec<u32> {
        (0..u64::from(GROUPS))
            .map(|g| cpu_read::<u32>(self.data.va + 0x4000 + 4 * g))
            .collect()
    }

    /// The distinct non-zero dwords in XCC `k`'s slice of scratch (`stride` apart).
    fn slice_values(&self, k: u64, stride: u64) -> Vec<u32> {
        let base = self.scratch.va + k * stride;
        let mut v: Vec<u32> = (0..PER_XCC / 4)
            .map(|i| cpu_read::<u32>(base + 4 * i))
            .filter(|&x| x != 0)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

#[test]
fn each_work_group_reads_its_xcc_and_uses_its_xccs_scratch() {
    let n = node(8, true);
    n.scratch_setup(PER_XCC);
    n.dispatch();
    assert!(matches!(n.state(), QueueState::Idle), "{:?}", n.state());
    assert_eq!(cpu_read::<u64>(n.gart.va + 128), 1);
    // Work-group g ran on XCC g % 8 (one at a time, round-robin), and read it.
    let want: Vec<u32> = (0..GROUPS).map(|g| g % 8).collect();
    assert_eq!(n.xcc_ids(), want);
    // XCC k's waves (work-groups k and k + 8, storing k + 1 and k + 9) stored into XCC k's
    // slice only (a later wave may reuse an earlier one's slot).
    for k in 0..8u32 {
        let v = n.slice_values(u64::from(k), PER_XCC);
        assert!(
            !v.is_empty() && v.iter().all(|&x| x == k + 1 || x == k + 9),
            "XCC {k}'s scratch holds {v:?}"
        );
    }
}

#[test]
fn one_xcc_reads_xcc_id_0_and_uses_the_scratch_base() {
    let n = node(1, true);
    n.scratch_setup(PER_XCC);
    n.dispatch();
    assert!(matches!(n.state(), QueueState::Idle), "{:?}", n.state());
    assert_eq!(n.xcc_ids(), vec![0; GROUPS as usize]);
    let v = n.slice_values(0, 0);
    assert!(
        !v.is_empty() && v.iter().all(|&x| (1..=GROUPS).contains(&x)),
        "{v:?}"
    );
}

#[test]
fn xccs_whose_scratch_overlaps_are_caught_with_the_cause() {
    // scratch_backing_memory_byte_size left 0: every XCC's waves on the same slots.
    let n = node(8, true);
    n.scratch_setup(0);
    n.dispatch();
    let QueueState::Faulted(f) = n.state() else {
        panic!("{:?}", n.state());
    };
    for part in [
        "uses scratch on 8 XCCs, whose scratch overlaps",
        "8 wave slots of 1024 bytes (8192 bytes)",
        "scratch_backing_memory_byte_size",
        "is 0",
        "main_size / num_xcc",
    ] {
        assert!(f.message.contains(part), "{part:?}: {}", f.message);
    }
    // Half a slice apart: still overlapping. Outside the strict judge it is a finding and
    // the dispatch runs.
    let n = node(8, false);
    n.scratch_setup(PER_XCC / 2);
    n.dispatch();
    assert!(matches!(n.state(), QueueState::Idle), "{:?}", n.state());
    let found = n.gpu.engines().with_kernels(|k| k.findings().list());
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0]
            .what
            .contains("is 4096, so XCC k's scratch starts 4096 bytes after"),
        "{}",
        found[0].what
    );
}

#[test]
fn a_pm4_queues_dispatch_reads_its_target_xcc() {
    use hcq_core::addr::GpuVa;
    use hcq_core::arch::GFX9;
    use hcq_core::pm4;
    // A PM4 queue runs on its target XCC alone, the whole grid there ("drm/amdkfd: Add PM4
    // target XCC"): every work-group reads XCC 5.
    let n = node_with(8, true, Some(5));
    let (_, code, kernargs, _) = n.load();
    let prog = pm4::Program {
        prog_addr: GpuVa(code),
        scratch_addr: GpuVa(n.scratch.va),
        tmpring_size: (1 << 12) | WAVES as u32,
        rsrc1: 1 << 6,
        rsrc2: 1 | (2 << 1) | (1 << 7),
        rsrc3: 0,
        dispatch: None,
        private_segment_buffer: None,
        flat_scratch_init: None,
    };
    let mut s = vec![0u32; 256];
    let len = pm4::exec(
        &mut s,
        &GFX9,
        &prog,
        GpuVa(kernargs),
        [GROUPS, 1, 1],
        [64, 1, 1],
    )
    .unwrap();
    for (i, w) in s[..len].iter().enumerate() {
        cpu_write::<u32>(n.ring.va + 4 * i as u64, *w);
    }
    cpu_write::<u64>(n.gart.va + 56, len as u64);
    cpu_write::<u64>(n.db, len as u64);
    n.gpu.engines().run_until_idle();
    assert!(matches!(n.state(), QueueState::Idle), "{:?}", n.state());
    assert_eq!(n.xcc_ids(), vec![5; GROUPS as usize]);
}

#[test]
fn an_xccs_scratch_slice_past_the_buffer_faults_naming_the_xcc() {
    // scratch_backing_memory_byte_size set to far more than one XCC's scratch (e.g. the
    // whole buffer's size where the size per XCC belongs): XCC 1's slots are not mapped.
    let n = node(8, true);
    n.scratch_setup(1 << 40);
    n.dispatch();
    let QueueState::Faulted(f) = n.state() else {
        panic!("{:?}", n.state());
    };
    assert!(
        f.message
            .contains("XCC 1 of 8: its scratch starts 1 x 1099511627776 bytes after XCC 0's")
            && f.message.contains("mapped"),
        "{}",
        f.message
    );
}
