//! The state a wave starts with, from the dispatch registers only (LLVM AMDGPUUsage, "Initial
//! Kernel Execution State", and the RDNA3, RDNA4 and CDNA3 ISA guides).
//!
//! What the documents leave undefined at launch (VCC, M0, the SGPRs and VGPRs no enable bit
//! loads, LDS contents) starts as a recognisable poison ([`super::UNDEFINED`], LDS 0xA5), so
//! a kernel that reads it shows up. Set by the hardware:
//! - EXEC: the wave's live work-items (a partial last wave has fewer).
//! - SCC: 0 at the first instruction. gfx11: tinygrad's hardware-validated suite
//!   (test/amd/hw, helpers.py) writes no SCC before a test's body and compares SCC with the
//!   GPU's afterwards; it passes on gfx1100 with SCC 0 (`s_cselect_b32` after an SCC-neutral
//!   body reads 0). gfx9 and gfx12: no guide states a value; the simulator takes gfx11's
//!   (`isa_hw_validated.rs` holds the case).
//! - MODE: from RSRC1 (FLOAT_MODE, DX10_CLAMP, IEEE; `control::initial_mode`).
//! - Trap state: TRAPSTS (gfx12's EXCP_FLAG_USER) 0; no trap handler is installed.

use super::Wave;
use crate::isa::{Isa, Launch};

/// Sets up wave `w` of workgroup `wg` (of `nwaves`) for a fresh start.
pub(crate) fn init_wave(l: &Launch, w: &mut Wave, wg: [u32; 3], nwaves: u32) {
    w.reset(l.pgm);
    w.mode = super::control::initial_mode(l);
    w.trapsts = 0;
    let lanes = w.lanes();
    let id = w_id(w);
    // User SGPRs, then the enabled system SGPRs in order.
    for (k, v) in l.user_sgprs.iter().enumerate() {
        w.set_s(k, *v);
    }
    let mut next = l.user_sgprs.len();
    let en = |bit: u32| (l.rsrc2 >> bit) & 1 == 1;
    let gfx12 = l.isa == Isa::Gfx12;
    for (d, bit) in [7u32, 8, 9].into_iter().enumerate() {
        if en(bit) && !gfx12 {
            w.set_s(next, wg[d]);
            next += 1;
        }
    }
    if en(10) {
        // Workgroup info: waves in the workgroup (bits 5:0), as TG_SIZE.
        w.set_s(next, nwaves & 0x3f);
        next += 1;
    }
    if en(0) && l.isa == Isa::Gfx9 {
        // Private segment wave byte offset: this wave's slot in the scratch ring (kernels
        // without architected flat scratch add it to the scratch V#'s base).
        // CAST: slot offsets of the simulator's scratch rings fit 32 bits.
        w.set_s(
            next,
            w.scratch_slot().wrapping_mul(l.scratch.wave_bytes) as u32,
        );
    }
    if gfx12 {
        // ttmp9 = workgroup id X, ttmp7 = Y | Z << 16.
        w.set_s(108 + 9, wg[0]);
        w.set_s(108 + 7, (wg[1] & 0xffff) | (wg[2] << 16));
    }
    // Workitem ids, packed in v0 (X 9:0, Y 19:10, Z 29:20) per TIDIG_COMP_CNT.
    let comp = (l.rsrc2 >> 11) & 3;
    let [nx, ny, nz] = l.local;
    let items = nx * ny * nz;
    // Ids counted up from the wave's first work-item (no division per lane).
    // CAST: lanes <= 64.
    let t0 = id * lanes as u32;
    let (mut x, mut y, mut z) = (t0 % nx, (t0 / nx) % ny, t0 / (nx * ny));
    let live = items.saturating_sub(t0).min(lanes as u32) as usize;
    let exec = if live >= 64 { !0 } else { (1u64 << live) - 1 };
    // CAST: live <= 64.
    if x + live as u32 <= nx {
        // The wave's ids stay in one row of X: one straight loop.
        let mut hi = 0;
        if comp >= 1 {
            hi |= y << 10;
        }
        if comp >= 2 {
            hi |= z << 20;
        }
        if let Some(row) = w.v_row_mut(0) {
            for (lane, v) in row.iter_mut().take(live).enumerate() {
                // CAST: lane < 64.
                *v = (x + lane as u32) | hi;
            }
        }
        w.set_exec(exec);
        return;
    }
    for lane in 0..live {
        let mut v0 = x;
        if comp >= 1 {
            v0 |= y << 10;
        }
        if comp >= 2 {
            v0 |= z << 20;
        }
        w.set_v(0, lane, v0);
        x += 1;
        if x == nx {
            x = 0;
            y += 1;
            if y == ny {
                y = 0;
                z += 1;
            }
        }
    }
    w.set_exec(exec);
}

fn w_id(w: &Wave) -> u32 {
    w.id()
}
