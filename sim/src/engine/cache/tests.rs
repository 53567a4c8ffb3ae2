use super::{GpuCaches, ICACHE_LINES, LINE};
use hcq_core::arch::{GFX9, GFX11};
use hcq_core::pm4::{AcquireMem, CpCoherCntl, GcrCntl};

/// Fills one line of each cache (the fetch returns `v` everywhere).
fn fill(c: &GpuCaches, va: u64, v: u8) {
    let mut b = [0u8; 4];
    let f = |_: u64, d: &mut [u8; 64]| {
        d.fill(v);
        Ok(())
    };
    c.icache.lock().unwrap().read(va, &mut b, f).unwrap();
    c.kcache.lock().unwrap().read(va, &mut b, f).unwrap();
}

fn acquire(coher_cntl: u32, gcr: Option<GcrCntl>) -> AcquireMem {
    AcquireMem {
        coher_cntl,
        size: u64::MAX,
        base: 0,
        poll_interval: 0,
        gcr_cntl: gcr,
    }
}

#[test]
fn a_hit_returns_the_cached_bytes_until_an_invalidate() {
    let c = GpuCaches::default();
    fill(&c, 0x1000, 1);
    let mut b = [0u8; 4];
    // The fetch would now return 2; the line holds 1.
    let f = |_: u64, d: &mut [u8; 64]| {
        d.fill(2);
        Ok(())
    };
    c.kcache.lock().unwrap().read(0x1008, &mut b, f).unwrap();
    assert_eq!(b, [1; 4]);
    c.invalidate(false, true);
    c.kcache.lock().unwrap().read(0x1008, &mut b, f).unwrap();
    assert_eq!(b, [2; 4]);
}

#[test]
fn acquire_mem_bits_per_family() {
    let c = GpuCaches::default();
    fill(&c, 0, 1);
    // gfx11: GLK_INV alone keeps the I$.
    c.acquire(
        &GFX11,
        &acquire(0, Some(GcrCntl::zeroed().with(GcrCntl::GLK_INV, 1))),
    );
    assert_eq!(c.lines(), (1, 0));
    // RELEASE_MEM-style bits (GL2/GLV) reach neither.
    fill(&c, 0, 1);
    let l2 = GcrCntl::zeroed()
        .with(GcrCntl::GL2_INV, 1)
        .with(GcrCntl::GLV_INV, 1);
    c.acquire(&GFX11, &acquire(0, Some(l2)));
    assert_eq!(c.lines(), (1, 1));
    c.acquire(
        &GFX11,
        &acquire(0, Some(GcrCntl::zeroed().with(GcrCntl::GLI_INV, 1))),
    );
    assert_eq!(c.lines(), (0, 1));
    // gfx9: CP_COHER_CNTL SH_ICACHE / SH_KCACHE.
    fill(&c, 0, 1);
    let k = CpCoherCntl::zeroed().with(CpCoherCntl::SH_KCACHE_ACTION_ENA, 1);
    c.acquire(&GFX9, &acquire(k.raw(), None));
    assert_eq!(c.lines(), (1, 0));
    let i = CpCoherCntl::zeroed().with(CpCoherCntl::SH_ICACHE_ACTION_ENA, 1);
    c.acquire(&GFX9, &acquire(i.raw(), None));
    assert_eq!(c.lines(), (0, 0));
}

#[test]
fn which_cache_actions_write_the_l2_back() {
    use super::{acquire_writes_back_l2, gcr_writes_back_l2, release_writes_back_l2};
    use hcq_core::pm4::ReleaseMemEventCntl;
    // RELEASE_MEM: the seed's signal flush writes back on every family; gfx10+ needs
    // GL2_WB (bit 21), gfx9 TC_WB_ACTION_ENA (15) or TC_ACTION_ENA (17).
    for arch in [&GFX9, &GFX11] {
        let ev = ReleaseMemEventCntl(arch.release_mem_cache_flush);
        assert!(release_writes_back_l2(arch, ev), "{:?}", arch.family);
        assert!(!release_writes_back_l2(arch, ReleaseMemEventCntl(0)));
    }
    let gl2_wb = ReleaseMemEventCntl::zeroed().with(ReleaseMemEventCntl::GCR_GL2_WB, 1);
    assert!(release_writes_back_l2(&GFX11, gl2_wb));
    let inv_only = ReleaseMemEventCntl::zeroed().with(ReleaseMemEventCntl::GCR_GL2_INV, 1);
    assert!(!release_writes_back_l2(&GFX11, inv_only));
    assert!(release_writes_back_l2(&GFX9, ReleaseMemEventCntl(1 << 15)));
    assert!(release_writes_back_l2(&GFX9, ReleaseMemEventCntl(1 << 17)));
    assert!(!release_writes_back_l2(&GFX9, ReleaseMemEventCntl(1 << 16)));
    // ACQUIRE_MEM and SDMA GCR_REQ.
    let wb = GcrCntl::zeroed().with(GcrCntl::GL2_WB, 1);
    assert!(acquire_writes_back_l2(&GFX11, &acquire(0, Some(wb))));
    let inv = GcrCntl::zeroed().with(GcrCntl::GL2_INV, 1);
    assert!(!acquire_writes_back_l2(&GFX11, &acquire(0, Some(inv))));
    assert!(gcr_writes_back_l2(wb) && !gcr_writes_back_l2(inv));
    for bit in [CpCoherCntl::TC_WB_ACTION_ENA, CpCoherCntl::TC_ACTION_ENA] {
        let c = CpCoherCntl::zeroed().with(bit, 1);
        assert!(acquire_writes_back_l2(&GFX9, &acquire(c.raw(), None)));
    }
    let k = CpCoherCntl::zeroed().with(CpCoherCntl::SH_KCACHE_ACTION_ENA, 1);
    assert!(!acquire_writes_back_l2(&GFX9, &acquire(k.raw(), None)));
}

#[test]
fn a_cached_byte_memory_no_longer_has_is_stale() {
    let c = GpuCaches::default();
    fill(&c, 0x1000, 1);
    let mem = |v: u8| {
        move |_: u64, d: &mut [u8; 64]| {
            d.fill(1);
            d[9] = v;
            Ok(())
        }
    };
    // Unchanged memory, and bytes outside the range asked about, are not stale.
    assert_eq!(c.kcache_stale(0x1000, 0x1100, mem(1)), None);
    assert_eq!(c.kcache_stale(0x1000, 0x1009, mem(2)), None);
    let s = c.kcache_stale(0x1008, 0x1100, mem(2)).unwrap();
    assert_eq!((s.va, s.cached, s.memory), (0x1009, 1, 2));
    // After an invalidate the K$ holds nothing.
    c.invalidate(false, true);
    assert_eq!(c.kcache_stale(0x1000, 0x1100, mem(2)), None);
}

#[test]
fn the_oldest_line_is_replaced_when_full() {
    let c = GpuCaches::default();
    for k in 0..=ICACHE_LINES as u64 {
        let mut b = [0u8; 4];
        let f = |_: u64, d: &mut [u8; 64]| {
            d.fill(1);
            Ok(())
        };
        c.icache.lock().unwrap().read(k * LINE, &mut b, f).unwrap();
    }
    let ic = c.icache.lock().unwrap();
    assert_eq!(ic.map.len(), ICACHE_LINES);
    assert!(!ic.map.contains_key(&0));
    assert!(ic.map.contains_key(&(ICACHE_LINES as u64 * LINE)));
}
