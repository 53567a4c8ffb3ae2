//! `hcq cc FILE.cl|FILE.hip --target gfxNNNN [--target ...] [-O0..3] [-DNAME[=V]] [-IDIR]
//! -o OUT`: OpenCL C or HIP source to a code object (one target) or a clang offload bundle
//! (several), with no ROCm installed: clang (19, or the newest that knows every target), ld.lld,
//! and Debian's `rocm-device-libs` bitcode when present, with the ISA-version file the package
//! lacks for newer targets generated on the fly.

use super::{CliError, emit};
use std::path::{Path, PathBuf};
use std::process::Command;

const USAGE: &str = "\
usage: hcq cc FILE.cl|FILE.hip --target gfxNNNN [--target ...] [-O0|-O1|-O2|-O3]
              [-DNAME[=VALUE]]... [-IDIR]... [--nogpulib] [-v] -o OUT

Compiles OpenCL C (.cl) or HIP (.hip) device code for AMD GPUs:
  one --target:   OUT is the code object (an AMDGPU ELF, what `hcq run` and Program::load take)
  several:        OUT is a clang offload bundle with one code object per target (what
                  `hipcc --genco` writes; `hcq run` picks the entry of the GPU it runs on)
It finds clang-19 (or the newest clang that knows every target) and its ld.lld, and links the
ROCm device libraries (Debian/Ubuntu: rocm-device-libs) when they are installed, so OpenCL
built-ins (get_global_id, barrier, sqrt, exp, ...) and HIP's math work; HIP builds without
the HIP headers (__global__, __device__, __shared__ are defined; ids come from
__builtin_amdgcn_workitem_id_x() and friends). What the package lacks
for a target (its oclc_isa_version_NNNN.bc: Debian's stops at gfx1036 and gfx940) is generated.
  -O0..-O3      optimisation (default -O2)
  -DNAME[=V]    preprocessor definition (also -D NAME[=V])
  -IDIR         include directory (also -I DIR)
  --nogpulib    do not link the device libraries (only __builtin_* functions then)
  -v            print each compiler command on stderr
Environment: HCQ_CLANG (the clang to use), HCQ_DEVICE_LIBS (the directory of ocml.bc and
friends).
Missing tools are named with the command that installs them:
  apt-get install clang-19 lld-19 rocm-device-libs
Exit status: 0 success, 1 the compiler failed or a tool is missing, 2 usage error.
";

/// Its help text.
pub const HELP: &str = USAGE;

/// What to install when a tool is missing.
const INSTALL: &str = "apt-get install clang-19 lld-19 rocm-device-libs";

/// Where distributions put the device-library bitcode (Debian/Ubuntu's package, then ROCm's
/// own layouts).
const LIB_DIRS: [&str; 5] = [
    "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode",
    "/usr/lib/aarch64-linux-gnu/amdgcn/bitcode",
    "/usr/lib/amdgcn/bitcode",
    "/usr/share/amdgcn/bitcode",
    "/opt/rocm/amdgcn/bitcode",
];

/// The source language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lang {
    OpenCl,
    Hip,
}

/// The parsed command line.
#[derive(Debug, PartialEq, Eq)]
struct Opts {
    src: String,
    lang: Lang,
    targets: Vec<String>,
    opt: String,
    defines: Vec<String>,
    includes: Vec<String>,
    out: String,
    nogpulib: bool,
    verbose: bool,
}

/// `Ok(None)`: help was asked for.
fn parse(args: &[String]) -> Result<Option<Opts>, String> {
    let (mut src, mut out, mut opt) = (None, None, "-O2".to_owned());
    let (mut targets, mut defines, mut includes) = (Vec::new(), Vec::new(), Vec::new());
    let (mut nogpulib, mut verbose) = (false, false);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |flag: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match a.as_str() {
            "-h" | "--help" => return Ok(None),
            "--target" => targets.push(value("--target")?),
            "-o" => out = Some(value("-o")?),
            "-D" => defines.push(value("-D")?),
            "-I" => includes.push(value("-I")?),
            "--nogpulib" => nogpulib = true,
            "-v" => verbose = true,
            "-O0" | "-O1" | "-O2" | "-O3" => opt.clone_from(a),
            s if s.starts_with("--target=") => targets.push(s["--target=".len()..].to_owned()),
            s if s.starts_with("-D") && s.len() > 2 => defines.push(s[2..].to_owned()),
            s if s.starts_with("-I") && s.len() > 2 => includes.push(s[2..].to_owned()),
            s if s.starts_with('-') => return Err(format!("unknown option `{s}`")),
            s => {
                if src.replace(s.to_owned()).is_some() {
                    return Err("one source file at a time".into());
                }
            }
        }
    }
    let src = src.ok_or("missing FILE")?;
    let lang = if src.ends_with(".cl") {
        Lang::OpenCl
    } else if src.ends_with(".hip") || src.ends_with(".cu") || src.ends_with(".cpp") {
        Lang::Hip
    } else {
        return Err(format!(
            "{src}: the language comes from the extension: .cl (OpenCL C) or .hip"
        ));
    };
    if targets.is_empty() {
        return Err("missing --target gfxNNNN (e.g. --target gfx1100)".into());
    }
    for t in &targets {
        if gfx_version(t).is_none() {
            return Err(format!(
                "--target {t}: a target is gfx followed by its version (gfx90a, gfx942, gfx1100, gfx1201)"
            ));
        }
    }
    targets.dedup();
    Ok(Some(Opts {
        src,
        lang,
        targets,
        opt,
        defines,
        includes,
        out: out.ok_or("missing -o OUT")?,
        nogpulib,
        verbose,
    }))
}

/// `__oclc_ISA_version` of `target`, as the device libraries' `oclc_isa_version_*.bc` hold
/// it: major * 1000 + minor * 100 + stepping, where the last two characters of the name are
/// the minor version and the stepping (hex) and the rest the major (gfx90a: 9010, gfx942:
/// 9402, gfx1100: 11000, gfx1201: 12001).
fn gfx_version(target: &str) -> Option<u32> {
    let v = target.strip_prefix("gfx")?;
    if v.len() < 3 || !v.is_ascii() {
        return None;
    }
    let (major, rest) = v.split_at(v.len() - 2);
    let major: u32 = major.parse().ok()?;
    let mut digits = rest.chars().map(|c| c.to_digit(16));
    let minor = digits.next()??;
    let stepping = digits.next()??;
    Some(major * 1000 + minor * 100 + stepping)
}

/// Whether `cmd` runs (`cmd --version` succeeds).
fn runs(cmd: &str) -> bool {
    Command::new(cmd)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether `clang` compiles an empty OpenCL kernel for `target`.
fn knows_target(clang: &str, target: &str, dir: &Path) -> bool {
    let src = dir.join("probe.cl");
    if std::fs::write(&src, "__kernel void k(void) {}\n").is_err() {
        return false;
    }
    Command::new(clang)
        .args([
            "-x",
            "cl",
            "-target",
            "amdgcn-amd-amdhsa",
            "-nogpulib",
            "-c",
        ])
        .arg(format!("-mcpu={target}"))
        .arg("-o")
        .arg(dir.join("probe.o"))
        .arg(&src)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The clang to use and its ld.lld: `HCQ_CLANG`, else clang-19, else the newest versioned
/// clang that knows every target, else `clang`.
fn find_clang(targets: &[String], dir: &Path) -> Result<(String, String), String> {
    let mut candidates: Vec<String> = Vec::new();
    if let Ok(c) = std::env::var("HCQ_CLANG") {
        candidates.push(c);
    }
    candidates.push("clang-19".into());
    candidates.extend(
        (14..=30)
            .rev()
            .filter(|&v| v != 19)
            .map(|v| format!("clang-{v}")),
    );
    candidates.push("clang".into());
    let mut found = Vec::new();
    for c in candidates {
        if !runs(&c) {
            continue;
        }
        if targets.iter().all(|t| knows_target(&c, t, dir)) {
            let lld = c
                .strip_prefix("clang")
                .map_or("ld.lld".to_owned(), |v| format!("ld.lld{v}"));
            let lld = if runs(&lld) { lld } else { "ld.lld".to_owned() };
            if !runs(&lld) {
                return Err(format!(
                    "{c} is installed but no ld.lld to link AMDGPU code objects; install it: apt-get install lld-{}",
                    c.strip_prefix("clang-").unwrap_or("19")
                ));
            }
            return Ok((c, lld));
        }
        found.push(c);
    }
    if found.is_empty() {
        Err(format!("no clang found; install it: {INSTALL}"))
    } else {
        Err(format!(
            "{} do not know every target of {}; install a newer clang: {INSTALL}",
            found.join(", "),
            targets.join(", ")
        ))
    }
}

/// The directory holding `ocml.bc` and the rest of the device libraries, if any.
fn find_device_libs() -> Option<PathBuf> {
    let env = std::env::var("HCQ_DEVICE_LIBS").ok().map(PathBuf::from);
    env.into_iter()
        .chain(LIB_DIRS.iter().map(PathBuf::from))
        .find(|d| d.join("ocml.bc").is_file())
}

/// A directory with every file of `libs` (linked) and an `oclc_isa_version_NNNN.bc` for each
/// target that lacks one, compiled by `clang` from the one constant such a file defines.
fn stage_device_libs(
    clang: &str,
    libs: &Path,
    targets: &[String],
    dir: &Path,
    verbose: bool,
) -> Result<(PathBuf, Vec<String>), String> {
    let staged = dir.join("bitcode");
    std::fs::create_dir_all(&staged).map_err(|e| format!("creating {}: {e}", staged.display()))?;
    let entries =
        std::fs::read_dir(libs).map_err(|e| format!("reading {}: {e}", libs.display()))?;
    for e in entries.flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "bc") {
            let to = staged.join(e.file_name());
            std::os::unix::fs::symlink(&p, &to)
                .map_err(|e| format!("linking {} into {}: {e}", p.display(), staged.display()))?;
        }
    }
    let mut generated = Vec::new();
    for t in targets {
        let name = format!("oclc_isa_version_{}.bc", &t[3..]);
        if staged.join(&name).exists() {
            continue;
        }
        let Some(v) = gfx_version(t) else { continue };
        let src = dir.join(format!("isa_version_{}.cl", &t[3..]));
        // What the device libraries' oclc/src/isa_version_*.cl define.
        std::fs::write(
            &src,
            format!("const __constant int __oclc_ISA_version = {v};\n"),
        )
        .map_err(|e| format!("writing {}: {e}", src.display()))?;
        let mut cmd = Command::new(clang);
        cmd.args([
            "-x",
            "cl",
            "-target",
            "amdgcn-amd-amdhsa",
            "-nogpulib",
            "-O2",
        ])
        .args(["-emit-llvm", "-c", "-o"])
        .arg(staged.join(&name))
        .arg(&src);
        run_tool(cmd, verbose)?;
        generated.push(name);
    }
    Ok((staged, generated))
}

/// Runs `cmd`; its stderr is the error when it fails.
fn run_tool(mut cmd: Command, verbose: bool) -> Result<(), String> {
    if verbose {
        eprintln!("hcq cc: {cmd:?}");
    }
    let o = cmd
        .output()
        .map_err(|e| format!("running {:?}: {e}", cmd.get_program()))?;
    let err = String::from_utf8_lossy(&o.stderr);
    if !o.status.success() {
        return Err(format!(
            "{} failed:\n{}",
            cmd.get_program().to_string_lossy(),
            err.trim_end()
        ));
    }
    if !err.trim().is_empty() {
        eprint!("{err}");
    }
    Ok(())
}

/// A clang offload bundle (the uncompressed format clang-offload-bundler writes: the magic, the
/// entry count, per entry its offset, size and id, then the code objects at 4096-byte
/// boundaries), with the empty host entry clang writes first.
fn bundle(objects: &[(String, Vec<u8>)]) -> Vec<u8> {
    const ALIGN: usize = 4096;
    let mut ids: Vec<(String, &[u8])> = vec![("host-x86_64-unknown-linux-gnu-".into(), &[])];
    for (t, co) in objects {
        ids.push((format!("hipv4-amdgcn-amd-amdhsa--{t}"), co));
    }
    let header: usize = 24 + 8 + ids.iter().map(|(id, _)| 24 + id.len()).sum::<usize>();
    let mut offsets = Vec::new();
    let mut at = header.div_ceil(ALIGN) * ALIGN;
    for (_, co) in &ids {
        offsets.push(at);
        at = (at + co.len()).div_ceil(ALIGN) * ALIGN;
    }
    let mut out = b"__CLANG_OFFLOAD_BUNDLE__".to_vec();
    // CAST (all below): usize -> u64 is lossless on 64-bit hosts.
    out.extend_from_slice(&(ids.len() as u64).to_le_bytes());
    for ((id, co), off) in ids.iter().zip(&offsets) {
        out.extend_from_slice(&(*off as u64).to_le_bytes());
        out.extend_from_slice(&(co.len() as u64).to_le_bytes());
        out.extend_from_slice(&(id.len() as u64).to_le_bytes());
        out.extend_from_slice(id.as_bytes());
    }
    for ((_, co), off) in ids.iter().zip(&offsets) {
        if !co.is_empty() {
            out.resize(*off, 0);
            out.extend_from_slice(co);
        }
    }
    out
}

/// Included before a HIP source: what the HIP headers (absent without ROCm) spell the
/// attributes with, so `__global__` kernels and `__shared__` arrays build. Work-item ids come
/// from clang's `__builtin_amdgcn_*` functions.
const HIP_PRELUDE: &str = "\
#ifndef __HIP_INCLUDE_HIP_HIP_RUNTIME_H
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __launch_bounds__(...) __attribute__((amdgpu_flat_work_group_size(1, __VA_ARGS__)))
#endif
";

/// A temporary directory removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<Self, String> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let p = std::env::temp_dir().join(format!("hcq-cc-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&p).map_err(|e| format!("creating {}: {e}", p.display()))?;
        Ok(Self(p))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Compiles; returns what was written, for the summary line.
fn compile(o: &Opts) -> Result<String, String> {
    if !Path::new(&o.src).is_file() {
        return Err(format!("cannot read {}: no such file", o.src));
    }
    let tmp = TempDir::new()?;
    let (clang, lld) = find_clang(&o.targets, &tmp.0)?;
    let libs = if o.nogpulib { None } else { find_device_libs() };
    let mut note = String::new();
    let staged = match &libs {
        Some(l) => {
            let (dir, generated) = stage_device_libs(&clang, l, &o.targets, &tmp.0, o.verbose)?;
            if !generated.is_empty() {
                note = format!(" (generated {})", generated.join(", "));
            }
            Some(dir)
        }
        None => None,
    };
    let mut objects = Vec::new();
    for t in &o.targets {
        let co = tmp.0.join(format!("{t}.co"));
        let mut cmd = Command::new(&clang);
        match o.lang {
            Lang::OpenCl => {
                cmd.args(["-x", "cl", "-Xclang", "-finclude-default-header"])
                    .args(["-target", "amdgcn-amd-amdhsa"])
                    .arg(format!("-mcpu={t}"));
            }
            Lang::Hip => {
                let prelude = tmp.0.join("hcq_hip_prelude.h");
                std::fs::write(&prelude, HIP_PRELUDE)
                    .map_err(|e| format!("writing {}: {e}", prelude.display()))?;
                cmd.args(["-x", "hip", "--offload-device-only"])
                    .arg("--no-gpu-bundle-output")
                    .arg(format!("--offload-arch={t}"))
                    .arg("-nogpuinc")
                    .arg("-include")
                    .arg(&prelude)
                    // The id HIP mixes into symbol names: fixed, so builds are reproducible.
                    .arg("-cuid=hcq");
            }
        }
        cmd.arg(&o.opt).arg("-mcode-object-version=5");
        match &staged {
            Some(d) => {
                cmd.arg(format!("--rocm-device-lib-path={}", d.display()));
            }
            None => {
                cmd.arg("-nogpulib");
            }
        }
        for d in &o.defines {
            cmd.arg(format!("-D{d}"));
        }
        for i in &o.includes {
            cmd.arg(format!("-I{i}"));
        }
        cmd.arg("-fuse-ld=lld")
            .arg(format!("--ld-path={}", which(&lld).unwrap_or(lld.clone())))
            .arg("-o")
            .arg(&co)
            .arg(&o.src);
        run_tool(cmd, o.verbose).map_err(|e| {
            if libs.is_none() && !o.nogpulib && e.contains("undefined") {
                format!(
                    "{e}\nthe ROCm device libraries (built-ins such as get_global_id and sqrt) are not installed: {INSTALL}"
                )
            } else {
                e
            }
        })?;
        let bytes = std::fs::read(&co).map_err(|e| format!("reading {}: {e}", co.display()))?;
        objects.push((t.clone(), bytes));
    }
    let (data, what) = match objects.as_slice() {
        [(t, co)] => (co.clone(), format!("a code object for {t}")),
        _ => (
            bundle(&objects),
            format!("an offload bundle for {}", o.targets.join(", ")),
        ),
    };
    std::fs::write(&o.out, &data).map_err(|e| format!("writing {}: {e}", o.out))?;
    let libs = match &libs {
        Some(l) => format!("device libraries from {}{note}", l.display()),
        None if o.nogpulib => "no device libraries (--nogpulib)".to_owned(),
        None => format!("no device libraries (not installed: {INSTALL})"),
    };
    Ok(format!(
        "{}: {what}, {} bytes ({clang}, {libs})\n",
        o.out,
        data.len()
    ))
}

/// The absolute path of `cmd` on `PATH`.
fn which(cmd: &str) -> Option<String> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(cmd))
        .find(|p| p.is_file())
        .map(|p| p.display().to_string())
}

/// Runs `hcq cc` with `args` (after the sub-command name).
pub fn main(args: &[String]) -> Result<(), CliError> {
    let Some(o) = parse(args).map_err(CliError::Usage)? else {
        return emit(USAGE).map_err(CliError::from);
    };
    let summary = compile(&o).map_err(|e| {
        CliError::failed_with(
            e,
            format!(
                "fix the source or the command line; -v prints each compiler command; missing tools: {INSTALL}"
            ),
        )
    })?;
    emit(&summary).map_err(CliError::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_owned()).collect()
    }

    #[test]
    fn isa_versions_as_the_device_libraries_write_them() {
        // oclc_isa_version_90a.bc holds 9010, _1030 10300, _940 9400 (Debian's package).
        assert_eq!(gfx_version("gfx90a"), Some(9010));
        assert_eq!(gfx_version("gfx1030"), Some(10300));
        assert_eq!(gfx_version("gfx940"), Some(9400));
        assert_eq!(gfx_version("gfx942"), Some(9402));
        assert_eq!(gfx_version("gfx1100"), Some(11000));
        assert_eq!(gfx_version("gfx1201"), Some(12001));
        assert_eq!(gfx_version("gfx9"), None);
        assert_eq!(gfx_version("sm_80"), None);
    }

    #[test]
    fn command_line() {
        let o = parse(&s(&[
            "k.cl",
            "--target",
            "gfx1100",
            "--target=gfx90a",
            "-O3",
            "-DN=4",
            "-D",
            "M",
            "-I",
            "inc",
            "-o",
            "k.co",
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(o.lang, Lang::OpenCl);
        assert_eq!(o.targets, ["gfx1100", "gfx90a"]);
        assert_eq!(o.opt, "-O3");
        assert_eq!(o.defines, ["N=4", "M"]);
        assert_eq!(o.includes, ["inc"]);
        assert_eq!(o.out, "k.co");
        assert!(
            parse(&s(&["k.c", "--target", "gfx1100", "-o", "x"]))
                .unwrap_err()
                .contains(".cl")
        );
        assert!(
            parse(&s(&["k.cl", "-o", "x"]))
                .unwrap_err()
                .contains("--target")
        );
        assert!(
            parse(&s(&["k.cl", "--target", "gfx1100"]))
                .unwrap_err()
                .contains("-o")
        );
        assert!(
            parse(&s(&["k.cl", "--target", "sm_80", "-o", "x"]))
                .unwrap_err()
                .contains("gfx")
        );
        assert!(parse(&s(&["--help"])).unwrap().is_none());
    }

    #[test]
    fn bundle_layout_is_clangs() {
        let b = bundle(&[
            ("gfx1100".into(), vec![1; 10]),
            ("gfx90a".into(), vec![2; 5000]),
        ]);
        let parsed = hcq_core::bundle::Bundle::parse(&b).unwrap();
        let ids: Vec<String> = parsed.entries().map(|e| e.id.to_owned()).collect();
        assert_eq!(
            ids,
            [
                "host-x86_64-unknown-linux-gnu-",
                "hipv4-amdgcn-amd-amdhsa--gfx1100",
                "hipv4-amdgcn-amd-amdhsa--gfx90a"
            ]
        );
        assert_eq!(
            hcq_core::bundle::code_object_for(&b, "gfx90a").unwrap(),
            &[2; 5000][..]
        );
        assert_eq!(
            hcq_core::bundle::code_object_for(&b, "gfx1100").unwrap(),
            &[1; 10][..]
        );
        assert_eq!(b.len(), 4096 * 2 + 5000);
    }
}
