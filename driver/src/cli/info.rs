//! `hcq info [--sim]`: the GPUs KFD reports (the real /dev/kfd, else the simulator).

use super::demo::open_backend;

/// Runs `hcq info`.
pub fn run(args: &[String]) -> Result<(), String> {
    let mut force_sim = false;
    for a in args {
        match a.as_str() {
            "--sim" => force_sim = true,
            other => {
                return Err(format!(
                    "unknown option `{other}` (usage: hcq info [--sim])"
                ));
            }
        }
    }
    let backend = open_backend(force_sim)?;
    if let Some(note) = backend.note() {
        println!("{note}");
    }
    let kfd = backend.kfd();
    let (major, minor) = kfd.version();
    println!(
        "KFD ioctl interface {major}.{minor}, {} GPU(s)",
        kfd.gpus().len()
    );
    for (i, g) in kfd.gpus().iter().enumerate() {
        let p = &g.properties;
        let vram = if p.local_mem_size == 0 {
            "unknown".to_owned()
        } else {
            format!("{} MiB", p.local_mem_size >> 20)
        };
        println!(
            "gpu {i}: gpu_id {:#06x} node {} {} {} CUs, {} SIMDs, wave{} LDS {} KiB, VRAM {vram}, \
             queues: {} compute, {} SDMA engines x {}, render node renderD{}",
            g.gpu_id,
            g.node,
            g.target_name(),
            p.cu_count(),
            p.simd_count,
            p.wave_front_size,
            p.lds_size_in_kb,
            p.num_cp_queues,
            p.num_sdma_engines,
            p.num_sdma_queues_per_engine,
            p.drm_render_minor,
        );
    }
    Ok(())
}
