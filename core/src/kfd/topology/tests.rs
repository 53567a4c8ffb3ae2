use super::*;

const XTX: &str = "cpu_cores_count 0\nsimd_count 192\nmem_banks_count 1\ncaches_count 206\n\
    max_waves_per_simd 16\nlds_size_in_kb 64\nwave_front_size 32\narray_count 12\n\
    simd_arrays_per_engine 2\ncu_per_simd_array 8\nsimd_per_cu 2\nmax_slots_scratch_cu 32\n\
    gfx_target_version 110000\nvendor_id 4098\ndevice_id 29772\ndrm_render_minor 128\n\
    num_sdma_engines 2\nnum_sdma_xgmi_engines 0\nmax_engine_clk_fcompute 2482\n\
    local_mem_size 25753026560\nnum_xcc 1\n";

#[test]
fn parse_7900xtx() {
    let p = NodeProperties::parse(XTX).unwrap();
    assert_eq!(p.simd_count, 192);
    assert_eq!(p.cu_count(), 96);
    assert_eq!(p.gfx_version(), (11, 0, 0));
    assert_eq!(p.drm_render_minor, 128);
    assert_eq!(p.local_mem_size, 25_753_026_560);
    assert_eq!(p.num_sdma_engines, 2);
    assert_eq!(p.wave_front_size, 32);
    assert_eq!(p.unique_id, 0);
    assert!(p.is_gpu());
}

#[test]
fn parse_errors_name_the_key() {
    let no_minor = XTX.replace("drm_render_minor 128\n", "");
    assert_eq!(
        NodeProperties::parse(&no_minor),
        Err(PropertiesError::MissingKey("drm_render_minor"))
    );
    let bad = XTX.replace("simd_count 192", "simd_count x");
    assert_eq!(
        NodeProperties::parse(&bad),
        Err(PropertiesError::BadValue { key: "simd_count" })
    );
    let too_big = XTX.replace("num_xcc 1", "num_xcc 4294967296");
    assert_eq!(
        NodeProperties::parse(&too_big),
        Err(PropertiesError::BadValue { key: "num_xcc" })
    );
    assert_eq!(
        NodeProperties::parse("simd_count\n"),
        Err(PropertiesError::BadLine { line: 1 })
    );
    assert_eq!(parse_gpu_id("48362\n"), Ok(48362));
    assert_eq!(parse_gpu_id("-1"), Err(PropertiesError::BadGpuId));
    // What a user reads when a topology file is off.
    let says =
        |e: PropertiesError, want: &str| assert_eq!(crate::testing::shown(&e).as_str(), want);
    says(
        PropertiesError::MissingKey("drm_render_minor"),
        "topology properties lack the key `drm_render_minor`",
    );
    says(
        PropertiesError::BadValue { key: "num_xcc" },
        "topology property `num_xcc` is not an integer that fits",
    );
    says(
        PropertiesError::BadLine { line: 3 },
        "topology properties line 3 is not `key value`",
    );
    says(
        PropertiesError::BadGpuId,
        "topology gpu_id is not a 32-bit decimal integer",
    );
}

#[test]
fn round_trip() {
    let p = NodeProperties::parse(XTX).unwrap();
    let mut s = heapless::String::<2048>::new();
    p.write_to(&mut s).unwrap();
    assert_eq!(NodeProperties::parse(&s), Ok(p));
}

#[test]
fn gfx9_wavesize_counts_kib() {
    // An MI210-like node: 104 CUs, 4 SIMDs of 8 waves, 32 scratch slots per CU.
    let mut p = props(90010, 104, 8);
    p.simd_per_cu = 4;
    p.simd_count = 416;
    p.max_waves_per_simd = 8;
    p.simd_arrays_per_engine = 1;
    let s = ScratchSizing::for_node(&p).unwrap();
    // 32 waves per CU * 4096 bytes per lane, in 1 KiB units.
    assert_eq!(s.wave_scratch_len, 32 * 4096);
    assert_eq!(s.tmpring_size >> 12, 32 * 4096 / 1024);
    assert_eq!(
        u64::from(s.tmpring_size & 0xfff),
        s.scratch_len / (s.wave_scratch_len * u64::from(s.engines))
    );
    // The same node as gfx11 counts 256-byte units.
    p.gfx_target_version = 110000;
    assert_eq!(
        ScratchSizing::for_node(&p).unwrap().tmpring_size >> 12,
        32 * 4096 / 256
    );
    p.gfx_target_version = 80003;
    assert_eq!(ScratchSizing::for_node(&p), Err(SizingError::Target(80003)));
}

#[test]
fn seed_scratch_for_7900xtx() {
    let s = ScratchSizing::for_node(&NodeProperties::parse(XTX).unwrap()).unwrap();
    assert_eq!(s.wave_scratch_len, 0x2_0000);
    assert_eq!(s.scratch_len, 96 * 32 * 0x2_0000);
    assert_eq!(s.engines, 6);
    assert_eq!(s.tmpring_size, (0x200 << 12) | 0x200);
}

#[test]
fn banks_caches_and_derived_values() {
    let bank = MemBankProperties::parse(
        "heap_type 1\nsize_in_bytes 25753026560\nflags 0\nwidth 384\nmem_clk_max 1250\n",
    )
    .unwrap();
    assert!(bank.is_vram());
    assert_eq!(bank.size_in_bytes, 25_753_026_560);
    for (heap, vram) in [(0, false), (1, true), (2, true), (3, false)] {
        let b = MemBankProperties {
            heap_type: heap,
            ..bank
        };
        assert_eq!(b.is_vram(), vram, "heap_type {heap}");
    }
    assert_eq!(
        MemBankProperties::parse("size_in_bytes 1\n"),
        Err(PropertiesError::MissingKey("heap_type"))
    );
    let caches = [
        "processor_id_low 2147487744\nlevel 1\nsize 64\ncache_line_size 64\ntype 10\n",
        "processor_id_low 2147487744\nlevel 1\nsize 32\ncache_line_size 128\ntype 9\n",
        "level 2\nsize 6144\ntype 9\n",
        "level 3\nsize 98304\ntype 9\n",
    ]
    .map(|t| CacheProperties::parse(t).unwrap());
    // The instruction cache (type 10 = INSTRUCTION | HSACU) is not the L1 data cache.
    assert_eq!(data_cache_bytes(&caches, 1), Some(32 << 10));
    assert_eq!(data_cache_bytes(&caches, 2), Some(6144 << 10));
    assert_eq!(data_cache_bytes(&caches, 3), Some(96 << 20));
    assert_eq!(data_cache_bytes(&caches[..2], 3), None);
    let mut text = heapless::String::<256>::new();
    caches[2].write_to(&mut text).unwrap();
    assert_eq!(CacheProperties::parse(&text).unwrap(), caches[2]);
    let p = NodeProperties::parse(XTX).unwrap();
    assert_eq!(p.max_waves_per_cu(), p.max_waves_per_simd * p.simd_per_cu);
    assert_eq!(p.doorbell_bytes(), 8);
    assert!(!p.has_xnack() && !p.has_sramecc());
    assert_eq!(marketing_name(0x744C), Some("AMD Radeon RX 7900 XTX"));
    assert_eq!(marketing_name(0x1234), None);
    assert_eq!(
        alloc_free_path(paths::NodePath(1, paths::NodeFile::Cache(3))),
        "/sys/devices/virtual/kfd/kfd/topology/nodes/1/caches/3/properties"
    );
}

fn alloc_free_path(p: paths::NodePath) -> heapless::String<128> {
    use core::fmt::Write as _;
    let mut s = heapless::String::new();
    write!(s, "{p}").unwrap();
    s
}

fn props(gfx: u32, cus: u32, arrays: u32) -> NodeProperties {
    let mut p = NodeProperties::parse(XTX).unwrap();
    p.gfx_target_version = gfx;
    p.simd_count = cus * 2;
    p.array_count = arrays;
    p
}

#[test]
fn cwsr_table() {
    // (gfx, CUs, ctl_stack, cwsr_size, debug, mapping) from kfd_validation.md §13.
    let table = [
        (110000, 96, 0xA000, 0x2BEA000, 0x18000, 0x2C02000),
        (110002, 32, 0x4000, 0xAA4000, 0x8000, 0xAAC000),
        (120001, 64, 0x7000, 0x1D47000, 0x10000, 0x1D57000),
        (100102, 20, 0x2000, 0x6A6000, 0x5000, 0x6AB000),
    ];
    for (gfx, cus, ctl, cwsr, dbg, map) in table {
        let s = CwsrSizes::for_node(&props(gfx, cus, 4)).unwrap();
        assert_eq!(s.ctl_stack_size, ctl, "gfx {gfx}");
        assert_eq!(s.cwsr_size, cwsr, "gfx {gfx}");
        assert_eq!(s.debug_memory_size, dbg, "gfx {gfx}");
        assert_eq!(s.eop_buffer_size, 4096, "gfx {gfx}");
        assert_eq!(s.min_cwsr_mapping_size(), Some(map), "gfx {gfx}");
    }
}

#[test]
fn cwsr_edges() {
    assert_eq!(
        CwsrSizes::for_node(&props(80000, 8, 4)).unwrap().cwsr_size,
        0
    );
    // gfx 8.0.1 (Carrizo) is the first with CWSR: 320 waves, 8 bytes each.
    let carrizo = CwsrSizes::for_node(&props(80001, 8, 4)).unwrap();
    assert_eq!(
        (carrizo.ctl_stack_size, carrizo.eop_buffer_size),
        (0x1000, 4096)
    );
    assert_eq!(carrizo.cwsr_size, 0x1000 + 8 * 0x55000);
    assert_eq!(
        CwsrSizes::for_node(&props(80002, 8, 4))
            .unwrap()
            .eop_buffer_size,
        0x8000
    );
    // gfx10.1 with many CUs: control stack capped at 0x7000.
    assert_eq!(
        CwsrSizes::for_node(&props(100100, 80, 4))
            .unwrap()
            .ctl_stack_size,
        0x7000
    );
    // gfx9: waves = min(cu*40, arrays/arrays_per_engine*512), 8 bytes per wave.
    let g9 = CwsrSizes::for_node(&props(90000, 64, 4)).unwrap();
    assert_eq!(g9.ctl_stack_size, 0x3000); // 40 + 1024*8 + 8 -> 0x3000
    let mut zero = props(110000, 96, 12);
    zero.simd_per_cu = 0;
    assert_eq!(
        CwsrSizes::for_node(&zero),
        Err(SizingError::ZeroProperty("simd_per_cu"))
    );
    assert_eq!(
        ScratchSizing::for_node(&zero),
        Err(SizingError::ZeroProperty("simd_per_cu"))
    );
    let s = CwsrSizes::for_node(&props(110000, 96, 12)).unwrap();
    assert_eq!(s.cwsr_mapping_size(u32::MAX), None);
}

#[test]
fn marketing_names_are_libdrms() {
    // libdrm data/amdgpu.ids: (device_id, revision_id, product_name) of each GPU hcq names (the
    // revision of the part the name stands for; hcq does not look at revisions).
    let ids = [
        (0x744C, 0xC8, "AMD Radeon RX 7900 XTX"),
        (0x7448, 0x00, "AMD Radeon Pro W7900"),
        (0x747E, 0xC8, "AMD Radeon RX 7800 XT"),
        (0x73BF, 0xC0, "AMD Radeon RX 6900 XT"),
        (0x740F, 0x02, "AMD Instinct MI210"),
        (0x7408, 0x00, "AMD Instinct MI250X"),
        (0x740C, 0x01, "AMD Instinct MI250X / MI250"),
        (0x74A1, 0x00, "AMD Instinct MI300X"),
        (0x7550, 0xC0, "AMD Radeon RX 9070 XT"),
    ];
    for (id, _rev, name) in ids {
        assert_eq!(marketing_name(id), Some(name), "{id:#x}");
    }
    assert_eq!(marketing_name(0x1002), None);
    assert_eq!(marketing_name(0), None);
}

#[test]
fn target_features_and_doorbells_by_version() {
    let base = NodeProperties::parse(XTX).unwrap();
    let with = |gfx: u32, capability: u32| NodeProperties {
        gfx_target_version: gfx,
        capability,
        ..base
    };
    // (gfx_target_version, sramecc, xnack): gfx906/908/90a and gfx94x have sramecc; gfx9 has
    // xnack, gfx10 on do not.
    for (gfx, sramecc, xnack) in [
        (90000, false, true),
        (90006, true, true),
        (90008, true, true),
        (90010, true, true),
        (90012, false, true),
        (90400, true, true),
        (90402, true, true),
        (90500, false, true),
        (99999, false, true),
        (100000, false, false),
        (100300, false, false),
        (110000, false, false),
        (120001, false, false),
    ] {
        let p = with(gfx, 0);
        assert_eq!(p.has_sramecc(), sramecc, "{gfx} sramecc");
        assert_eq!(p.has_xnack(), xnack, "{gfx} xnack");
    }
    // Doorbell type (capability bits 13:12) 2 means 64-bit doorbells even before gfx9; gfx9
    // and later have them whatever the bits say.
    assert_eq!(with(80003, 0).doorbell_bytes(), 4);
    assert_eq!(with(80003, 1 << 12).doorbell_bytes(), 4);
    assert_eq!(with(80003, 2 << 12).doorbell_bytes(), 8);
    assert_eq!(with(80003, 3 << 12).doorbell_bytes(), 8);
    assert_eq!(with(80003, 0xFFFF_CFFF).doorbell_bytes(), 4);
    assert_eq!(with(90000, 0).doorbell_bytes(), 8);
    // A CPU node has no SIMDs.
    let cpu = NodeProperties {
        simd_count: 0,
        ..base
    };
    assert!(base.is_gpu() && !cpu.is_gpu());
}

#[test]
fn gfx_versions_and_sizing_errors_read_right() {
    let base = NodeProperties::parse(XTX).unwrap();
    for (v, want) in [
        (90010, (9, 0, 10)),
        (90402, (9, 4, 2)),
        (100300, (10, 3, 0)),
        (110001, (11, 0, 1)),
        (120001, (12, 0, 1)),
    ] {
        let p = NodeProperties {
            gfx_target_version: v,
            ..base
        };
        assert_eq!(p.gfx_version(), want, "{v}");
    }
    let says = |e: SizingError, want: &str| assert_eq!(crate::testing::shown(&e).as_str(), want);
    says(
        SizingError::ZeroProperty("simd_count"),
        "topology property `simd_count` is 0; cannot size",
    );
    says(
        SizingError::Overflow("scratch length"),
        "scratch length overflows",
    );
    says(
        SizingError::Target(80003),
        "gfx_target_version 80003 is not a gfx9..gfx12 GPU; cannot size its scratch",
    );
}

/// WAVESIZE counts 1 KiB units on gfx9 and gfx10, 256 bytes from gfx11 (ROCR's
/// `mem_alignment_size`): the same node's scratch per wave, in each family's units.
#[test]
fn wavesize_units_follow_the_family() {
    let base = NodeProperties::parse(XTX).unwrap();
    for (version, unit) in [(90010, 1024), (100300, 1024), (110000, 256), (120001, 256)] {
        let node = NodeProperties {
            gfx_target_version: version,
            ..base
        };
        let s = ScratchSizing::for_node(&node).unwrap();
        assert_eq!(
            u64::from(s.tmpring_size >> 12) * unit,
            s.wave_scratch_len,
            "{version}"
        );
    }
}

#[test]
fn tmpring_fields_refuse_one_past_their_bits() {
    let base = NodeProperties::parse(XTX).unwrap();
    let info = crate::arch::GfxTarget::from_kfd_version(base.gfx_target_version)
        .unwrap()
        .info();
    let bits = info.tmpring_wavesize_hi - 12 + 1;
    let per_wave = u64::from(ScratchSizing::MAX_PRIVATE_SEGMENT_SIZE);
    let unit = u64::from(info.tmpring_wavesize_unit);
    // WAVES (bits 11:0) = CUs * slots / engines: one engine, one slot, 4095 vs 4096 CUs.
    let waves = |cus: u32| NodeProperties {
        simd_count: cus * base.simd_per_cu,
        max_slots_scratch_cu: 1,
        array_count: base.simd_arrays_per_engine,
        ..base
    };
    let s = ScratchSizing::for_node(&waves(4095)).unwrap();
    assert_eq!(s.tmpring_size & 0xFFF, 4095);
    assert_eq!(s.engines, 1);
    assert_eq!(
        ScratchSizing::for_node(&waves(4096)),
        Err(SizingError::Overflow("COMPUTE_TMPRING_SIZE field"))
    );
    // WAVESIZE = waves per CU * 4096 / unit: the largest that fits, and one CU-wave more.
    let per_simd = |m: u32| NodeProperties {
        max_waves_per_simd: m,
        simd_per_cu: 1,
        simd_count: base.simd_count / base.simd_per_cu,
        ..base
    };
    // CAST: test values below 2^32.
    let fits = (((1u64 << bits) - 1) * unit / per_wave) as u32;
    let s = ScratchSizing::for_node(&per_simd(fits)).unwrap();
    assert_eq!(
        u64::from(s.tmpring_size >> 12),
        u64::from(fits) * per_wave / unit
    );
    assert!(u64::from(s.tmpring_size >> 12) < 1 << bits);
    assert_eq!(
        ScratchSizing::for_node(&per_simd(fits + 1)),
        Err(SizingError::Overflow("COMPUTE_TMPRING_SIZE field"))
    );
}

#[test]
fn cwsr_gfx9_wave_limits_vgpr_sizes_and_xccs() {
    // kfd_validation.md §13's formula worked by hand: (gfx, CUs over all XCCs, XCCs, arrays,
    // ctl_stack, cwsr_size, debug, mapping). gfx90a/gfx908/gfx942 save 0x80000 VGPR bytes a CU,
    // gfx900 0x40000; gfx9 waves are min(CUs*40, arrays/arrays_per_engine*512); gfx942's CUs
    // split over its 8 XCCs, and the mapping holds one save area per XCC.
    let table = [
        (90010, 104, 1, 32, 0x9000, 0x3C91000, 0x20800, 0x3CB2000),
        (90010, 104, 1, 8, 0x5000, 0x3C8D000, 0x10000, 0x3C9D000),
        (90008, 120, 1, 32, 0xA000, 0x45E2000, 0x25800, 0x4608000),
        (90402, 304, 8, 32, 0x3000, 0x1621000, 0xBE00, 0xB167000),
        (90000, 64, 1, 32, 0x6000, 0x1546000, 0x14000, 0x155A000),
    ];
    for (gfx, cus, xcc, arrays, ctl, cwsr, dbg, map) in table {
        let mut p = props(gfx, cus, arrays);
        p.num_xcc = xcc;
        let s = CwsrSizes::for_node(&p).unwrap();
        assert_eq!(s.ctl_stack_size, ctl, "gfx {gfx} arrays {arrays}");
        assert_eq!(s.cwsr_size, cwsr, "gfx {gfx} arrays {arrays}");
        assert_eq!(s.debug_memory_size, dbg, "gfx {gfx} arrays {arrays}");
        assert_eq!(s.num_xcc, xcc, "gfx {gfx}");
        assert_eq!(
            s.min_cwsr_mapping_size(),
            Some(map),
            "gfx {gfx} arrays {arrays}"
        );
    }
}

#[test]
fn cwsr_lds_sized_targets() {
    // gfx950 and gfx12.5 save the node's whole LDS (`lds_size_in_kb << 10`), gfx12.5 also
    // 64 waves a CU and larger SGPR/HWREG areas (kfd_validation.md §13, worked by hand):
    // (gfx, CUs, XCCs, LDS KiB, ctl_stack, cwsr_size, debug, mapping).
    for (gfx, cus, xcc, lds, ctl, cwsr, dbg, map) in [
        (90500, 256, 8, 160, 0x3000, 0x15A3000, 0xA000, 0xAD68000),
        (120500, 96, 1, 320, 0x13000, 0x5413000, 0x30000, 0x5443000),
    ] {
        let mut p = props(gfx, cus, 32);
        p.num_xcc = xcc;
        p.lds_size_in_kb = lds;
        let s = CwsrSizes::for_node(&p).unwrap();
        assert_eq!(
            (s.ctl_stack_size, s.cwsr_size, s.debug_memory_size),
            (ctl, cwsr, dbg),
            "gfx {gfx}"
        );
        assert_eq!(s.min_cwsr_mapping_size(), Some(map), "gfx {gfx}");
    }
}
