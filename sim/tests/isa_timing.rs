//! The modelled dispatch time is never below the longest wave's serial cost: a single-wave
//! dependent chain of global loads takes its issue cycles plus one memory latency per link,
//! computed by hand below from the model's constants (`hcq_sim::isa::model`), while a wide
//! kernel keeps the throughput bound (cycles spread over every SIMD). The programs are
//! assembled with `llvm-mc-19 -show-encoding` (source beside each; branch offsets by hand).

use hcq_sim::isa::model::{GpuShape, VMEM_LATENCY};
use hcq_sim::isa::{FlatMemory, FloatMode, Isa, Launch, ScratchSetup, Stats, run};

const BASE: u64 = 0x1_0000;
const CODE: u64 = 0x1_0000;
const OUT: u64 = 0x2_0000;

/// A 7900 XTX: 96 CUs x 2 SIMDs at 2.5 GHz, 960 GB/s.
const XTX: GpuShape = GpuShape {
    cus: 96,
    simds_per_cu: 2,
    clock_mhz: 2500,
    mem_bytes_per_us: 960_000,
};

fn launch(isa: Isa, groups: u32) -> Launch {
    Launch {
        isa,
        gfx940: true,
        pgm: CODE,
        wave64: false,
        user_sgprs: vec![OUT as u32, (OUT >> 32) as u32],
        rsrc2: 2 << 1 | 1 << 7,
        local: [32, 1, 1],
        groups: [groups, 1, 1],
        lds_bytes: 0,
        vgprs: 8,
        scratch: ScratchSetup::default(),
        scratch_waves: 0,
        accum_offset: 0,
        float: FloatMode {
            denorm32: true,
            denorm16_64: true,
        },
        budget: 1 << 24,
        clock: 0,
        xcc: Default::default(),
    }
}

fn stats(code: &[u32], l: &Launch) -> Stats {
    let mem = FlatMemory::new(BASE, 0x2_0000);
    let bytes: Vec<u8> = code.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.poke(CODE, &bytes).unwrap();
    run(l, &mem).unwrap()
}

// s_mov_b32 s4, 10 / v_mov_b32 v1, 0
// .L: global_load_b32 v1, v1, s[0:1] / s_waitcnt vmcnt(0) / s_add_i32 s4, s4, -1 /
//     s_cmp_lg_u32 s4, 0 / s_cbranch_scc1 .L
// global_store_b32 v1, v1, s[0:1] / s_endpgm
const CHAIN_GFX11: &[u32] = &[
    0xBE84_008A,
    0x7E02_0280,
    0xDC52_0000,
    0x0100_0001,
    0xBF89_03F7,
    0x8104_C104,
    0xBF07_8004,
    0xBFA2_FFFA,
    0xDC6A_0000,
    0x0000_0101,
    0xBFB0_0000,
];

// The same with gfx12's s_wait_loadcnt 0 and s_add_co_i32.
const CHAIN_GFX12: &[u32] = &[
    0xBE84_008A,
    0x7E02_0280,
    0xEE05_0000,
    0x0000_0001,
    0x0000_0001,
    0xBFC0_0000,
    0x8104_C104,
    0xBF07_8004,
    0xBFA2_FFF9,
    0xEE06_8000,
    0x0080_0000,
    0x0000_0001,
    0xBFB0_0000,
];

/// The chain by hand (wave32: one pass each): 2 setup cycles; per link the load (4), the wait
/// (1, then the load's latency from its issue), the loop's 3 scalar cycles; then the store (4)
/// and s_endpgm (1), and the end waits for the store's latency.
fn chain_cycles(links: u64) -> u64 {
    let lat = u64::from(VMEM_LATENCY);
    let per_link = 4 + lat + 3;
    let before_store = 2 + links * per_link;
    (before_store + 4 + lat).max(before_store + 4 + 1)
}

#[test]
fn a_single_wave_chain_of_loads_takes_its_serial_cost() {
    for (isa, code) in [(Isa::Gfx11, CHAIN_GFX11), (Isa::Gfx12, CHAIN_GFX12)] {
        let s = stats(code, &launch(isa, 1));
        assert_eq!(s.wave_cycles, chain_cycles(10), "{isa:?}");
        assert_eq!(s.wave_cycles, 6676, "{isa:?}: 2 + 10 x 607 + 4 + 600");
        // 6676 cycles at 2.5 GHz: 2671 ns, where the throughput bounds alone (87 issue cycles
        // over 192 SIMDs, 11 x 128 bytes at 960 GB/s) would say 2 ns.
        assert_eq!(s.simd_cycles, 2 + 10 * 8 + 4 + 1);
        assert_eq!(s.modelled_ns(&XTX), 2671, "{isa:?}");
        assert_eq!(XTX.dispatch_ns(s.simd_cycles, s.mem_bytes, 0), 2);
    }
}

// s_mov_b32 s4, 100 / v_mov_b32 v1, 0
// .L: v_add_nc_u32 v1, 3, v1 / v_add_nc_u32 v1, 5, v1 / s_add_i32 s4, s4, -1 /
//     s_cmp_lg_u32 s4, 0 / s_cbranch_scc1 .L
// s_endpgm
const ALU_GFX11: &[u32] = &[
    0xBE84_00FF,
    0x0000_0064,
    0x7E02_0280,
    0x4A02_0283,
    0x4A02_0285,
    0x8104_C104,
    0xBF07_8004,
    0xBFA2_FFFB,
    0xBFB0_0000,
];

#[test]
fn a_wide_kernel_keeps_the_throughput_bound() {
    // One wave: 2 + 100 x 5 + 1 cycles, serial.
    let one = stats(ALU_GFX11, &launch(Isa::Gfx11, 1));
    assert_eq!((one.wave_cycles, one.simd_cycles), (503, 503));
    assert_eq!(one.modelled_ns(&XTX), 202, "503 cycles at 2.5 GHz");
    // 4000 waves of the same: 4000 x 503 cycles over 192 SIMDs at 2.5 GHz is 4192 ns, far
    // above one wave's 202 ns.
    let wide = stats(ALU_GFX11, &launch(Isa::Gfx11, 4000));
    assert_eq!(wide.wave_cycles, 503);
    assert_eq!(wide.simd_cycles, 4000 * 503);
    assert_eq!(wide.modelled_ns(&XTX), 4192);
}
