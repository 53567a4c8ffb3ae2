//! The fixture kernels (built by LLVM 19 from `kernels/*.cl`, see
//! `core/tests/fixtures/kernels`), embedded: the `hcq` binary's demo, bench, run and selftest
//! kernels, from the copies in `driver/fixtures/` (inside the crate, so `cargo package` has
//! them; CI checks they are the same bytes as `core/tests/fixtures/kernels/`).
//!
//! This file is no module of the library. The binary includes it (`cli::fixtures`), and so do
//! the library's unit tests, the examples and `hcq-tests` (through `#[path]`): each includer
//! first defines `fixture_dir!()`, the directory (relative to its `CARGO_MANIFEST_DIR`) the
//! code objects are read from. `hcq-tests` reads the canonical `core/tests/fixtures/kernels/`.
//!
//! `vector_add(a, b, c, n)`: `c[i] = a[i] + b[i]` (u32, wrapping), 28 bytes of arguments.
//! `fill(buf, value, n)`: `buf[i] = value`, 16 bytes of arguments (12 used, padded).
//! Both have a fixed work-group size of 64; launch `ceil(n / 64)` groups.

use bytemuck::{Pod, Zeroable};

macro_rules! fixture {
    ($name:literal, $target:literal) => {
        include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            fixture_dir!(),
            $name,
            "-",
            $target,
            ".co"
        ))
    };
}

macro_rules! per_target {
    ($name:literal, $target:expr) => {
        match $target {
            "gfx1100" => Some(&fixture!($name, "gfx1100")[..]),
            "gfx1201" => Some(&fixture!($name, "gfx1201")[..]),
            "gfx90a" => Some(&fixture!($name, "gfx90a")[..]),
            "gfx942" => Some(&fixture!($name, "gfx942")[..]),
            _ => None,
        }
    };
}

/// Targets the fixtures are built for.
pub const TARGETS: [&str; 4] = ["gfx1100", "gfx1201", "gfx90a", "gfx942"];

/// The `vector_add` code object for `target`.
#[must_use]
pub fn vector_add(target: &str) -> Option<&'static [u8]> {
    per_target!("vector_add", target)
}

/// The `fill` code object for `target`.
#[must_use]
pub fn fill(target: &str) -> Option<&'static [u8]> {
    per_target!("fill", target)
}

/// The `dispatch_ptr` code object (kernel `grid_size(out)`: `out[i] = grid_size_x`, read
/// through the dispatch packet) for `target`.
#[must_use]
pub fn dispatch_ptr(target: &str) -> Option<&'static [u8]> {
    per_target!("dispatch_ptr", target)
}

/// The `global_id` code object (kernel `global_id(out, n)`: `out[i] = i`, with `i` built from
/// the hidden argument `hidden_group_size_x`; no fixed work-group size, max 256) for `target`.
#[must_use]
pub fn global_id(target: &str) -> Option<&'static [u8]> {
    per_target!("global_id", target)
}

/// Arguments of `global_id` as `launch_pod` takes them (the explicit 12 bytes; the driver fills
/// the hidden arguments after them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C, packed(4))]
pub struct GlobalIdArgs {
    /// Output (u32 array).
    pub out: u64,
    /// Element count.
    pub n: u32,
}

const _: () = assert!(size_of::<GlobalIdArgs>() == 12);

/// The HIP `scale(x, s, n)` kernel (`x[i] *= s`, `i` from `hidden_group_size_x`) as a clang
/// offload bundle holding a code object for every target in [`TARGETS`].
pub const SCALE_HIP_BUNDLE: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    fixture_dir!(),
    "scale-hip.bundle"
));

/// Arguments of `vector_add`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C, packed(4))]
pub struct VectorAddArgs {
    /// First input (u32 array).
    pub a: u64,
    /// Second input.
    pub b: u64,
    /// Output.
    pub c: u64,
    /// Element count.
    pub n: u32,
}

const _: () = assert!(size_of::<VectorAddArgs>() == 28);

/// Arguments of `fill`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct FillArgs {
    /// Output (u32 array).
    pub buf: u64,
    /// Value written.
    pub value: u32,
    /// Element count.
    pub n: u32,
}

const _: () = assert!(size_of::<FillArgs>() == 16);

/// Attaches the simulator's engines to `sim` and registers host-side implementations of the
/// fixture kernels (`vector_add`, `fill`, `grid_size`, `global_id`, and the HIP bundle's
/// `scale`, for every target), keyed by their
/// machine code, so dispatches of them run on the simulated GPU. Keep the returned handle: in
/// threaded mode it owns the engine thread.
///
/// # Errors
/// A fixture the simulator's registry refuses (a message naming it).
#[cfg(feature = "sim")]
pub fn attach_sim(
    sim: &std::sync::Arc<hcq_sim::SimKfd>,
) -> Result<hcq_sim::engine::attach::SimGpu, String> {
    let gpu = hcq_sim::engine::attach::SimGpu::attach(sim).map_err(|e| e.to_string())?;
    gpu.engines().with_kernels(|k| {
        for t in TARGETS {
            for co in [vector_add(t), fill(t), dispatch_ptr(t), global_id(t)]
                .into_iter()
                .flatten()
            {
                k.register_fixture(co)
                    .map_err(|e| format!("registering a {t} fixture kernel: {e}"))?;
            }
            let co = hcq_core::bundle::code_object_for(SCALE_HIP_BUNDLE, t)
                .map_err(|e| format!("the HIP scale bundle: {e}"))?;
            k.register_fixture(co)
                .map_err(|e| format!("registering the {t} HIP scale kernel: {e}"))?;
        }
        Ok::<(), String>(())
    })?;
    Ok(gpu)
}
