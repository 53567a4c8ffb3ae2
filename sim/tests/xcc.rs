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
