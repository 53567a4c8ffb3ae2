//! The kernels `hcq selftest` runs, embedded from the crate's copies of the fixtures in
//! `driver/fixtures/` (kept byte for byte equal to `core/tests/fixtures/kernels/`, which
//! `scripts/build-kernels.sh` builds from `kernels/*.cl`; `driver/tests/cli_selftest.rs` and
//! `.ci/run` check they still are), so the crate needs no file outside it.

/// The fixture kernels embedded, per target.
pub(crate) const TARGETS: [&str; 4] = ["gfx1100", "gfx90a", "gfx942", "gfx1201"];

/// `(stem, target, code object)` of every embedded kernel object.
pub(crate) const OBJECTS: &[(&str, &str, &[u8])] = &[
    ("fill", "gfx1100", include_bytes!("../../../fixtures/fill-gfx1100.co")),
    ("fill", "gfx90a", include_bytes!("../../../fixtures/fill-gfx90a.co")),
    ("fill", "gfx942", include_bytes!("../../../fixtures/fill-gfx942.co")),
    ("fill", "gfx1201", include_bytes!("../../../fixtures/fill-gfx1201.co")),
    (
        "vector_add",
        "gfx1100",
        include_bytes!("../../../fixtures/vector_add-gfx1100.co"),
    ),
    (
        "vector_add",
        "gfx90a",
        include_bytes!("../../../fixtures/vector_add-gfx90a.co"),
    ),
    (
        "vector_add",
        "gfx942",
        include_bytes!("../../../fixtures/vector_add-gfx942.co"),
    ),
    (
        "vector_add",
        "gfx1201",
        include_bytes!("../../../fixtures/vector_add-gfx1201.co"),
    ),
    (
        "global_id",
        "gfx1100",
        include_bytes!("../../../fixtures/global_id-gfx1100.co"),
    ),
    (
        "global_id",
        "gfx90a",
        include_bytes!("../../../fixtures/global_id-gfx90a.co"),
    ),
    (
        "global_id",
        "gfx942",
        include_bytes!("../../../fixtures/global_id-gfx942.co"),
    ),
    (
        "global_id",
        "gfx1201",
        include_bytes!("../../../fixtures/global_id-gfx1201.co"),
    ),
    (
        "lds_reverse",
        "gfx1100",
        include_bytes!("../../../fixtures/lds_reverse-gfx1100.co"),
    ),
    (
        "lds_reverse",
        "gfx90a",
        include_bytes!("../../../fixtures/lds_reverse-gfx90a.co"),
    ),
    (
        "lds_reverse",
        "gfx942",
        include_bytes!("../../../fixtures/lds_reverse-gfx942.co"),
    ),
    (
        "lds_reverse",
        "gfx1201",
        include_bytes!("../../../fixtures/lds_reverse-gfx1201.co"),
    ),
    (
        "reduce_local",
        "gfx1100",
        include_bytes!("../../../fixtures/reduce_local-gfx1100.co"),
    ),
    (
        "reduce_local",
        "gfx90a",
        include_bytes!("../../../fixtures/reduce_local-gfx90a.co"),
    ),
    (
        "reduce_local",
        "gfx942",
        include_bytes!("../../../fixtures/reduce_local-gfx942.co"),
    ),
    (
        "reduce_local",
        "gfx1201",
        include_bytes!("../../../fixtures/reduce_local-gfx1201.co"),
    ),
    (
        "scratch",
        "gfx1100",
        include_bytes!("../../../fixtures/scratch-gfx1100.co"),
    ),
    (
        "scratch",
        "gfx90a",
        include_bytes!("../../../fixtures/scratch-gfx90a.co"),
    ),
    (
        "scratch",
        "gfx942",
        include_bytes!("../../../fixtures/scratch-gfx942.co"),
    ),
    (
        "scratch",
        "gfx1201",
        include_bytes!("../../../fixtures/scratch-gfx1201.co"),
    ),
    (
        "dispatch_ptr",
        "gfx1100",
        include_bytes!("../../../fixtures/dispatch_ptr-gfx1100.co"),
    ),
    (
        "dispatch_ptr",
        "gfx90a",
        include_bytes!("../../../fixtures/dispatch_ptr-gfx90a.co"),
    ),
    (
        "dispatch_ptr",
        "gfx942",
        include_bytes!("../../../fixtures/dispatch_ptr-gfx942.co"),
    ),
    (
        "dispatch_ptr",
        "gfx1201",
        include_bytes!("../../../fixtures/dispatch_ptr-gfx1201.co"),
    ),
];

/// The embedded object `stem` for `target`.
pub(crate) fn object(stem: &str, target: &str) -> Option<&'static [u8]> {
    OBJECTS
        .iter()
        .find(|(s, t, _)| *s == stem && *t == target)
        .map(|(_, _, co)| *co)
}
