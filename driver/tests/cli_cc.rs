//! `hcq cc`: OpenCL C with built-ins (get_global_id, barrier, sqrt, exp) built for all four
//! fixture targets with Debian's clang-19 and rocm-device-libs (whose ISA-version files stop
//! before gfx942, gfx1100 and gfx1201: hcq generates them), as one offload bundle and as one
//! code object per target, each run under `hcq run` on the simulator; a HIP source without
//! the HIP headers; and the install line when no clang is found.
//!
//! The build tests need clang-19, lld-19 and rocm-device-libs: they are `#[ignore]`d here and
//! run by `.ci/run` after it installs them (`cargo test ... --test cli_cc -- --ignored`).

use std::path::PathBuf;
use std::process::{Command, Output};

fn hcq(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hcq"))
        .args(args)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hcq-cli-cc-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const TARGETS: [&str; 4] = ["gfx1100", "gfx90a", "gfx942", "gfx1201"];

const OPENCL: &str = r"
__kernel void mix(__global float *x, __local float *tmp, uint n) {
  size_t g = get_global_id(0), l = get_local_id(0), size = get_local_size(0);
  tmp[l] = g < n ? x[g] : 0.0f;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (g < n)
    x[g] = sqrt(tmp[size - 1 - l]) + exp(tmp[l] * SCALE);
}
";

/// The values `mix` writes for x = 0..8 in one group of 8 with SCALE 0.25, to f32 precision.
fn want() -> Vec<f32> {
    (0..8)
        .map(|l| ((7 - l) as f32).sqrt() + (l as f32 * 0.25).exp())
        .collect()
}

fn values(o: &Output) -> Vec<f32> {
    assert!(o.status.success(), "{}", stderr(o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["buffers"][0]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

fn run_mix(co: &str) -> Vec<f32> {
    values(&hcq(&[
        "run",
        co,
        "mix",
        "--groups",
        "1",
        "--block",
        "8",
        "buf:f32:iota:8",
        "lds:32",
        "u32:8",
        "--json",
    ]))
}

fn close(got: &[f32], want: &[f32]) -> bool {
    got.len() == want.len()
        && got
            .iter()
            .zip(want)
            .all(|(g, w)| (g - w).abs() <= 4.0 * f32::EPSILON * w.abs().max(1.0))
}

#[test]
#[ignore = "needs clang-19, lld-19 and rocm-device-libs: .ci/run installs them and runs it"]
fn opencl_with_builtins_builds_and_runs_on_all_four_targets() {
    let d = tmp("cl");
    let src = d.join("mix.cl");
    std::fs::write(&src, OPENCL).unwrap();
    let src = src.to_str().unwrap();
    let bundle = d.join("mix.bundle");
    let mut args = vec!["cc", src, "-DSCALE=0.25f", "-o", bundle.to_str().unwrap()];
    for t in TARGETS {
        args.extend(["--target", t]);
    }
    let o = hcq(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(
        out.contains("an offload bundle for gfx1100, gfx90a, gfx942, gfx1201"),
        "{out}"
    );
    assert!(out.contains("device libraries from"), "{out}");
    let data = std::fs::read(&bundle).unwrap();
    let b = hcq_core::bundle::Bundle::parse(&data).unwrap();
    let procs: Vec<&str> = b.entries().filter_map(|e| e.processor()).collect();
    assert_eq!(procs, TARGETS);
    // The bundle runs (on the simulated GPU of its first target).
    assert!(close(&run_mix(bundle.to_str().unwrap()), &want()));
    for t in TARGETS {
        let co = d.join(format!("mix-{t}.co"));
        let co = co.to_str().unwrap();
        let o = hcq(&[
            "cc",
            src,
            "--target",
            t,
            "-O3",
            "-D",
            "SCALE=0.25f",
            "-o",
            co,
        ]);
        assert!(o.status.success(), "{t}: {}", stderr(&o));
        let got = run_mix(co);
        assert!(close(&got, &want()), "{t}: {got:?} vs {:?}", want());
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
#[ignore = "needs clang-19 and lld-19: .ci/run installs them and runs it"]
fn hip_without_the_hip_headers() {
    let d = tmp("hip");
    let src = d.join("k.hip");
    std::fs::write(
        &src,
        "extern \"C\" __global__ void twice(float *x, int n) {\n\
           int i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x()\n\
                   + __builtin_amdgcn_workitem_id_x();\n\
           if (i < n) x[i] = __builtin_sqrtf(x[i]) * 2.0f;\n\
         }\n",
    )
    .unwrap();
    let out = d.join("k.bundle");
    let o = hcq(&[
        "cc",
        src.to_str().unwrap(),
        "--target",
        "gfx942",
        "--target",
        "gfx1100",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = hcq(&[
        "run",
        out.to_str().unwrap(),
        "twice",
        "--groups",
        "1",
        "--block",
        "4",
        "buf:f32:0,1,4,9",
        "i32:4",
        "--json",
    ]);
    assert_eq!(values(&o), [0.0, 2.0, 4.0, 6.0]);
    let _ = std::fs::remove_dir_all(&d);
}

/// Without any clang on PATH, the error says what to install (exit 1).
#[test]
fn missing_clang_names_the_packages() {
    let d = tmp("noclang");
    let src = d.join("k.cl");
    std::fs::write(&src, "__kernel void k(void) {}\n").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_hcq"))
        .args(["cc", src.to_str().unwrap(), "--target", "gfx1100", "-o"])
        .arg(d.join("k.co"))
        .env("PATH", &d)
        .env_remove("HCQ_CLANG")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "no clang found; install it: apt-get install clang-19 lld-19 rocm-device-libs"
        ),
        "{}",
        stderr(&o)
    );
    let o = hcq(&["cc", "k.cl", "-o", "x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("missing --target"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&d);
}
