//! Executing decoded instructions: wave state, per-lane loops over fixed arrays (no
//! allocation per instruction), EXEC as a bitmask, workgroups run wave by wave up to each
//! barrier.

use super::decode::{
    self, DualHalf, Enc, Inst, LIT, NONE, SEG_FLAT, SEG_GLOBAL, SEG_SCRATCH, VGPR,
};
use super::ops::Op;
use super::{Isa, IsaError, Launch, Memory, Stats};
use crate::engine::bus::Access;

/// Most lanes a wave has.
pub const MAX_LANES: usize = 64;
type Lanes = [u32; MAX_LANES];

/// What registers the hardware leaves undefined start as (never zero).
pub const UNDEFINED: u32 = 0xBAAD_F00D;

/// Instructions decoded so far in one dispatch, by word offset from the program address.
pub(crate) struct CodeCache {
    slots: Vec<Option<Inst>>,
}

/// The scalar data cache of one dispatch: 64-byte lines of memory that SMEM loads read. As
/// the hardware's K$, it is not coherent with vector stores; `s_dcache_inv`/`s_gl1_inv`
/// empty it, and every dispatch starts with it empty.
pub(crate) struct KCache {
    lines: Vec<(u64, [u8; 64])>,
}

/// Lines the scalar cache holds (oldest replaced first).
const KCACHE_LINES: usize = 16;

impl KCache {
    pub(crate) fn new() -> Self {
        Self { lines: Vec::new() }
    }

    /// Copies `buf.len()` bytes at `va` through the cache; a line that cannot be read whole
    /// is read uncached (exactly the bytes asked for, so a fault names the right address).
    fn read(&mut self, mem: &dyn Memory, va: u64, buf: &mut [u8]) -> Result<(), IsaError> {
        let mut done = 0;
        while done < buf.len() {
            let a = va.wrapping_add(done as u64);
            let line = a & !63;
            // CAST: below 64.
            let off = (a - line) as usize;
            let n = (64 - off).min(buf.len() - done);
            let hit = self.lines.iter().position(|(l, _)| *l == line);
            let idx = match hit {
                Some(k) => k,
                None => {
                    let mut data = [0u8; 64];
                    if mem.read(line, &mut data, Access::Read).is_err() {
                        return mem.read(va, buf, Access::Read).map_err(IsaError::Vm);
                    }
                    if self.lines.len() == KCACHE_LINES {
                        self.lines.remove(0);
                    }
                    self.lines.push((line, data));
                    self.lines.len() - 1
                }
            };
            if let (Some((_, data)), Some(dst)) = (self.lines.get(idx), buf.get_mut(done..done + n))
            {
                dst.copy_from_slice(&data[off..off + n]);
            }
            done += n;
        }
        Ok(())
    }
}

/// Most instruction words cached per dispatch (code beyond is decoded at every visit).
const CACHE_WORDS: u64 = 1 << 16;

impl CodeCache {
    pub(crate) fn new() -> Self {
        Self { slots: Vec::new() }
    }
}

/// Where a wave stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WaveState {
    Running,
    Barrier,
    Done,
}

/// One wave's architectural state.
pub(crate) struct Wave {
    /// Scalar registers by operand code 0..128 (SGPRs, VCC, TTMPs, M0, EXEC).
    s: [u32; 128],
    scc: bool,
    pc: u64,
    /// VGPRs, register-major: `v[r * lanes + lane]`.
    v: Vec<u32>,
    nvgpr: usize,
    lanes: usize,
    id: u32,
    state: WaveState,
    scratch_slot: u64,
}

/// Scalar operand codes that differ between families.
#[derive(Clone, Copy)]
struct Codes {
    null: u16,
}

fn codes(isa: Isa) -> Codes {
    match isa {
        Isa::Gfx9 => Codes { null: NONE },
        Isa::Gfx11 | Isa::Gfx12 => Codes { null: 124 },
    }
}

/// The fault context of one wave at one instruction.
struct At<'a> {
    l: &'a Launch,
    wg: [u32; 3],
    wave: u32,
    pc: u64,
}

impl At<'_> {
    fn msg(&self, what: &str) -> IsaError {
        IsaError::Fault(format!(
            "{}: {what} at kernel offset {:#x} (program address {:#x}), wave {} of workgroup {:?}",
            self.l.isa.name(),
            self.pc.wrapping_sub(self.l.pgm),
            self.pc,
            self.wave,
            self.wg
        ))
    }
}

fn f32v(x: u32) -> f32 {
    f32::from_bits(x)
}

fn inline_const(code: u16, width: Width) -> Option<u64> {
    Some(match code {
        128..=192 => u64::from(code - 128),
        // CAST: -1..-16 as two's complement.
        193..=208 => (-(i64::from(code) - 192)) as u64,
        240..=248 => {
            let k = usize::from(code - 240);
            match width {
                Width::F64 => [
                    0x3fe0_0000_0000_0000u64,
                    0xbfe0_0000_0000_0000,
                    0x3ff0_0000_0000_0000,
                    0xbff0_0000_0000_0000,
                    0x4000_0000_0000_0000,
                    0xc000_0000_0000_0000,
                    0x4010_0000_0000_0000,
                    0xc010_0000_0000_0000,
                    0x3fc4_5f30_6dc9_c882,
                ][k],
                Width::F16 => [
                    0x3800u64, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400, 0x3118,
                ][k],
                _ => [
                    0x3f00_0000u64,
                    0xbf00_0000,
                    0x3f80_0000,
                    0xbf80_0000,
                    0x4000_0000,
                    0xc000_0000,
                    0x4080_0000,
                    0xc080_0000,
                    0x3e22_f983,
                ][k],
            }
        }
        _ => return None,
    })
}

/// How an operand is read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Width {
    B32,
    F16,
    B64,
    F64,
}

fn is_f32(op: Op) -> bool {
    use Op::*;
    matches!(
        op,
        VAddF32
            | VSubF32
            | VSubrevF32
            | VMulF32
            | VMinF32
            | VMaxF32
            | VFmacF32
            | VFmamkF32
            | VFmaakF32
            | VFmaF32
            | VMin3F32
            | VMax3F32
            | VMed3F32
            | VLdexpF32
            | VCmpF32
            | VCmpClassF32
            | VCvtU32F32
            | VCvtI32F32
            | VCvtF16F32
            | VCvtF64F32
            | VFractF32
            | VTruncF32
            | VCeilF32
            | VRndneF32
            | VFloorF32
            | VExpF32
            | VLogF32
            | VRcpF32
            | VRcpIflagF32
            | VRsqF32
            | VSqrtF32
            | VSinF32
            | VCosF32
            | VFrexpExpI32F32
            | VFrexpMantF32
            | VCvtPkRtzF16F32
    )
}

/// Per-source bit masks for VOP3 abs/neg on a float of `width` (applied to the word holding
/// the sign).
fn mods_masks(i: &Inst, k: usize, w: Width) -> (u32, u32) {
    if i.mods == 0 {
        return (!0, 0);
    }
    let sign = match w {
        Width::F16 => 0x8000,
        _ => 0x8000_0000,
    };
    let neg = (i.mods >> k) & 1 == 1;
    let abs = (i.mods >> (4 + k)) & 1 == 1;
    (if abs { !sign } else { !0 }, if neg { sign } else { 0 })
}

fn f16_to_f32(h: u32) -> f32 {
    let h = h & 0xffff;
    let sign = (h >> 15) << 31;
    let exp = (h >> 10) & 0x1f;
    let man = h & 0x3ff;
    let bits = if exp == 0 {
        if man == 0 {
            sign
        } else {
            // Subnormal: normalise.
            let mut e = 127 - 15 + 1;
            let mut m = man;
            while m & 0x400 == 0 {
                m <<= 1;
                e -= 1;
            }
            sign | ((e as u32) << 23) | ((m & 0x3ff) << 13)
        }
    } else if exp == 0x1f {
        sign | 0x7f80_0000 | (man << 13)
    } else {
        sign | ((exp + 127 - 15) << 23) | (man << 13)
    };
    f32::from_bits(bits)
}

/// f32 → f16 bits, round to nearest even (`rtz`: toward zero).
fn f32_to_f16(f: f32, rtz: bool) -> u32 {
    let b = f.to_bits();
    let sign = (b >> 16) & 0x8000;
    let exp = ((b >> 23) & 0xff) as i32;
    let man = b & 0x7f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if man != 0 { 0x200 | (man >> 13) } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return if rtz { sign | 0x7bff } else { sign | 0x7c00 };
    }
    let (mant, shift) = if e <= 0 {
        if e < -10 {
            return sign;
        }
        (man | 0x80_0000, (14 - e) as u32)
    } else {
        (man, 13u32)
    };
    let mut h = mant >> shift;
    if !rtz {
        let rem = mant & ((1 << shift) - 1);
        let half = 1 << (shift - 1);
        if rem > half || (rem == half && h & 1 == 1) {
            h += 1;
        }
    }
    if e <= 0 {
        sign | h
    } else {
        // Carry from rounding may bump the exponent (correct: also reaches inf).
        sign | (((e as u32) << 10) + h)
    }
}

fn flush32(x: u32) -> u32 {
    if x & 0x7f80_0000 == 0 {
        x & 0x8000_0000
    } else {
        x
    }
}

fn fmin(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        return if b.is_nan() {
            f32::from_bits(0x7fc0_0000)
        } else {
            b
        };
    }
    if b.is_nan() {
        return a;
    }
    if a == b {
        // -0 < +0
        return f32::from_bits(a.to_bits() | b.to_bits());
    }
    a.min(b)
}

fn fmax(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        return if b.is_nan() {
            f32::from_bits(0x7fc0_0000)
        } else {
            b
        };
    }
    if b.is_nan() {
        return a;
    }
    if a == b {
        return f32::from_bits(a.to_bits() & b.to_bits());
    }
    a.max(b)
}

fn fmin64(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        return if b.is_nan() { f64::NAN } else { b };
    }
    if b.is_nan() { a } else { a.min(b) }
}

fn fmax64(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        return if b.is_nan() { f64::NAN } else { b };
    }
    if b.is_nan() { a } else { a.max(b) }
}

/// Float compare by condition (f lt eq le gt lg ge o u nge nlg ngt nle neq nlt t).
fn fcmp(c: u8, a: f64, b: f64) -> bool {
    use core::cmp::Ordering::{Equal, Greater, Less};
    let o = a.partial_cmp(&b);
    match c {
        0 => false,
        1 => o == Some(Less),
        2 => o == Some(Equal),
        3 => matches!(o, Some(Less | Equal)),
        4 => o == Some(Greater),
        5 => matches!(o, Some(Less | Greater)),
        6 => matches!(o, Some(Greater | Equal)),
        7 => o.is_some(),
        8 => o.is_none(),
        9 => !matches!(o, Some(Greater | Equal)),
        10 => !matches!(o, Some(Less | Greater)),
        11 => o != Some(Greater),
        12 => !matches!(o, Some(Less | Equal)),
        13 => o != Some(Equal),
        14 => o != Some(Less),
        _ => true,
    }
}

/// Integer compare by condition (f lt eq le gt ne ge t).
fn icmp<T: PartialOrd + PartialEq>(c: u8, a: T, b: T) -> bool {
    match c {
        0 => false,
        1 => a < b,
        2 => a == b,
        3 => a <= b,
        4 => a > b,
        5 => a != b,
        6 => a >= b,
        _ => true,
    }
}

/// v_cmp_class: `mask` bits: 0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denorm, 5 -0, 6 +0,
/// 7 +denorm, 8 +normal, 9 +inf.
fn class64(x: f64, mask: u32) -> bool {
    let neg = x.is_sign_negative();
    let bit = if x.is_nan() {
        // Quiet bit.
        if x.to_bits() & (1 << 51) != 0 { 1 } else { 0 }
    } else if x.is_infinite() {
        if neg { 2 } else { 9 }
    } else if x == 0.0 {
        if neg { 5 } else { 6 }
    } else if x.is_subnormal() {
        if neg { 4 } else { 7 }
    } else if neg {
        3
    } else {
        8
    };
    mask >> bit & 1 == 1
}

fn class32(x: f32, mask: u32) -> bool {
    let neg = x.is_sign_negative();
    let bit = if x.is_nan() {
        if x.to_bits() & (1 << 22) != 0 { 1 } else { 0 }
    } else if x.is_infinite() {
        if neg { 2 } else { 9 }
    } else if x == 0.0 {
        if neg { 5 } else { 6 }
    } else if x.is_subnormal() {
        if neg { 4 } else { 7 }
    } else if neg {
        3
    } else {
        8
    };
    mask >> bit & 1 == 1
}

fn rne32(x: f32) -> f32 {
    let r = x.round();
    if (x - x.trunc()).abs() == 0.5 {
        2.0 * (x / 2.0).round()
    } else {
        r
    }
}

fn rne64(x: f64) -> f64 {
    let r = x.round();
    if (x - x.trunc()).abs() == 0.5 {
        2.0 * (x / 2.0).round()
    } else {
        r
    }
}

fn cvt_i32(f: f64) -> u32 {
    // Saturating, NaN -> 0 (ISA).
    // CAST: `as` saturates and maps NaN to 0, as the ISA specifies.
    (f as i32) as u32
}

fn cvt_u32(f: f64) -> u32 {
    // CAST: `as` saturates and maps NaN to 0.
    f as u32
}

fn bfe(x: u32, off: u32, w: u32) -> u32 {
    let off = off & 31;
    let w = w & 31;
    if w == 0 {
        0
    } else {
        (x >> off) & ((1u64 << w) - 1) as u32
    }
}

fn bfe_i(x: u32, off: u32, w: u32) -> u32 {
    let off = off & 31;
    let w = w & 31;
    if w == 0 {
        return 0;
    }
    let v = ((x >> off) as u64) << (64 - w);
    // CAST: arithmetic shift of the field placed at the top sign-extends it.
    ((v as i64) >> (64 - w)) as u32
}

fn sext24(x: u32) -> i64 {
    // CAST: low 24 bits sign-extended.
    i64::from(((x << 8) as i32) >> 8)
}

fn perm_byte(s: u64, sel: u32) -> u32 {
    match sel {
        0..=7 => ((s >> (sel * 8)) & 0xff) as u32,
        8 => 0,
        9 => {
            if s >> 15 & 1 == 1 {
                0xff
            } else {
                0
            }
        }
        10 => {
            if s >> 31 & 1 == 1 {
                0xff
            } else {
                0
            }
        }
        11 => {
            if s >> 47 & 1 == 1 {
                0xff
            } else {
                0
            }
        }
        12 => {
            if s >> 63 & 1 == 1 {
                0xff
            } else {
                0
            }
        }
        _ => 0xff,
    }
}

/// Runs every workgroup of a dispatch.
pub(crate) fn run_dispatch(l: &Launch, mem: &dyn Memory) -> Result<Stats, IsaError> {
    let total = u64::from(l.groups[0]) * u64::from(l.groups[1]) * u64::from(l.groups[2]);
    run_range(l, mem, 0, total, (0, l.scratch_waves.max(1)), l.budget).map_err(|(_, e)| e)
}

/// Runs workgroups `first..first + count` (linear, x fastest), using scratch slots
/// `slots.0..slots.0 + slots.1`. A fault comes with its workgroup's linear index.
fn run_range(
    l: &Launch,
    mem: &dyn Memory,
    first: u64,
    count: u64,
    slots: (u32, u32),
    budget: u64,
) -> Result<Stats, (u64, IsaError)> {
    let mut cache = CodeCache::new();
    let mut kcache = KCache::new();
    let mut stats = Stats::default();
    let items: u32 = l.local.iter().product();
    let lanes = if l.wave64 { 64 } else { 32 };
    let nwaves = items.div_ceil(lanes);
    let mut waves: Vec<Wave> = (0..nwaves)
        .map(|id| Wave {
            s: [UNDEFINED; 128],
            scc: true,
            pc: l.pgm,
            v: vec![UNDEFINED; l.vgprs as usize * lanes as usize],
            nvgpr: l.vgprs as usize,
            lanes: lanes as usize,
            id,
            state: WaveState::Running,
            scratch_slot: 0,
        })
        .collect();
    // CAST: at most 64 KiB.
    let mut lds = vec![0u8; l.lds_bytes as usize];
    let mut wave_counter: u64 = 0;
    let (gx, gy) = (u64::from(l.groups[0]).max(1), u64::from(l.groups[1]).max(1));
    let lb = Launch {
        budget,
        ..l.clone()
    };
    for g in first..first + count {
        // CAST: each coordinate is below its u32 dimension.
        let (x, y, z) = (
            (g % gx) as u32,
            ((g / gx) % gy) as u32,
            (g / (gx * gy)) as u32,
        );
        lds.fill(0xA5);
        for w in &mut waves {
            w.scratch_slot = u64::from(slots.0) + wave_counter % u64::from(slots.1.max(1));
            wave_counter += 1;
            super::launch::init_wave(l, w, [x, y, z], nwaves);
        }
        run_workgroup(
            &lb,
            mem,
            (&mut cache, &mut kcache),
            &mut waves,
            &mut lds,
            [x, y, z],
            &mut stats,
        )
        .map_err(|e| (g, e))?;
    }
    Ok(stats)
}

impl Wave {
    pub(crate) fn reset(&mut self, pc: u64) {
        self.s.fill(UNDEFINED);
        self.v.fill(UNDEFINED);
        self.scc = true;
        self.pc = pc;
        self.state = WaveState::Running;
    }
    pub(crate) fn lanes(&self) -> usize {
        self.lanes
    }
    pub(crate) fn id(&self) -> u32 {
        self.id
    }
    pub(crate) fn scratch_slot(&self) -> u64 {
        self.scratch_slot
    }
    pub(crate) fn set_s(&mut self, i: usize, v: u32) {
        if let Some(s) = self.s.get_mut(i) {
            *s = v;
        }
    }
    pub(crate) fn set_exec(&mut self, e: u64) {
        // CAST: halves of a u64.
        self.s[126] = e as u32;
        self.s[127] = (e >> 32) as u32;
    }
    pub(crate) fn set_v(&mut self, r: usize, lane: usize, v: u32) {
        let n = self.lanes;
        if let Some(x) = self.v.get_mut(r * n + lane) {
            *x = v;
        }
    }
    fn lane_mask(&self) -> u64 {
        if self.lanes == 64 { !0 } else { 0xffff_ffff }
    }
    fn exec(&self) -> u64 {
        (u64::from(self.s[126]) | (u64::from(self.s[127]) << 32)) & self.lane_mask()
    }
    fn vcc(&self) -> u64 {
        (u64::from(self.s[106]) | (u64::from(self.s[107]) << 32)) & self.lane_mask()
    }
}

fn run_workgroup(
    l: &Launch,
    mem: &dyn Memory,
    (cache, kcache): (&mut CodeCache, &mut KCache),
    waves: &mut [Wave],
    lds: &mut [u8],
    wg: [u32; 3],
    stats: &mut Stats,
) -> Result<(), IsaError> {
    loop {
        for w in waves.iter_mut() {
            if w.state == WaveState::Running {
                run_wave(l, mem, (cache, kcache), w, lds, wg, stats)?;
            }
        }
        if waves.iter().all(|w| w.state == WaveState::Done) {
            return Ok(());
        }
        // Every live wave waits at the barrier: release them.
        for w in waves.iter_mut() {
            if w.state == WaveState::Barrier {
                w.state = WaveState::Running;
            }
        }
    }
}

fn fetch(
    l: &Launch,
    mem: &dyn Memory,
    cache: &mut CodeCache,
    pc: u64,
    at: &At<'_>,
) -> Result<Inst, IsaError> {
    let off = pc.wrapping_sub(l.pgm);
    let slot = (off % 4 == 0 && off / 4 < CACHE_WORDS).then_some(off / 4);
    if let Some(s) = slot {
        // CAST: below CACHE_WORDS.
        if let Some(Some(i)) = cache.slots.get(s as usize) {
            return Ok(*i);
        }
    }
    if pc % 4 != 0 {
        return Err(at.msg(&format!("instruction fetch from unaligned address {pc:#x}")));
    }
    let mut words = [0u32; 3];
    let mut got = 0;
    for (k, w) in words.iter_mut().enumerate() {
        let mut b = [0u8; 4];
        match mem.read(pc.wrapping_add(4 * k as u64), &mut b, Access::Execute) {
            Ok(()) => {
                *w = u32::from_le_bytes(b);
                got += 1;
            }
            Err(e) if k == 0 => return Err(IsaError::Vm(e)),
            Err(_) => break,
        }
    }
    let inst = decode::decode(l.isa, &words).map_err(|u| {
        at.msg(&format!(
            "unsupported instruction word {:#010x} ({} {})",
            u.word, u.what, u.opcode
        ))
    })?;
    if usize::from(inst.len / 4) > got {
        // The instruction runs into memory that cannot be fetched: fault on that word.
        let mut b = [0u8; 4];
        let va = pc.wrapping_add(4 * got as u64);
        mem.read(va, &mut b, Access::Execute)
            .map_err(IsaError::Vm)?;
    }
    if let Some(s) = slot {
        // CAST: below CACHE_WORDS.
        let s = s as usize;
        if cache.slots.len() <= s {
            cache.slots.resize(s + 1, None);
        }
        if let Some(x) = cache.slots.get_mut(s) {
            *x = Some(inst);
        }
    }
    Ok(inst)
}

fn run_wave(
    l: &Launch,
    mem: &dyn Memory,
    (cache, kcache): (&mut CodeCache, &mut KCache),
    w: &mut Wave,
    lds: &mut [u8],
    wg: [u32; 3],
    stats: &mut Stats,
) -> Result<(), IsaError> {
    let cd = codes(l.isa);
    while w.state == WaveState::Running {
        let at = At {
            l,
            wg,
            wave: w.id,
            pc: w.pc,
        };
        if stats.wave_instructions >= l.budget {
            return Err(at.msg(&format!(
                "the dispatch exceeded its instruction budget of {} wave instructions (an endless loop?); the budget is configurable",
                l.budget
            )));
        }
        // Decoded instructions are used in place (no copy) once cached.
        let off = w.pc.wrapping_sub(l.pgm);
        let slot = (off % 4 == 0 && off / 4 < CACHE_WORDS).then_some(off / 4);
        // CAST: below CACHE_WORDS.
        let slot = slot.map(|s| s as usize);
        let hit = slot.is_some_and(|s| matches!(cache.slots.get(s), Some(Some(_))));
        let fetched = if hit {
            None
        } else {
            Some(fetch(l, mem, cache, w.pc, &at)?)
        };
        let i: &Inst = match (
            &fetched,
            slot.and_then(|s| cache.slots.get(s))
                .and_then(Option::as_ref),
        ) {
            (Some(f), _) => f,
            (None, Some(c)) => c,
            (None, None) => return Err(at.msg("instruction cache lost an entry")),
        };
        stats.wave_instructions += 1;
        let next = w.pc.wrapping_add(u64::from(i.len));
        w.pc = next;
        if matches!(
            i.enc,
            Enc::Sop1 | Enc::Sop2 | Enc::Sopk | Enc::Sopc | Enc::Sopp | Enc::Smem
        ) {
            stats.lane_instructions += 1;
        } else {
            stats.lane_instructions += u64::from(w.exec().count_ones());
        }
        let mut x = Exec {
            l,
            w,
            at: &at,
            cd,
            mem,
            lds,
            kcache,
        };
        x.step(i, next)?;
    }
    Ok(())
}

struct Exec<'a, 'b> {
    l: &'a Launch,
    w: &'a mut Wave,
    at: &'a At<'b>,
    cd: Codes,
    mem: &'a dyn Memory,
    lds: &'a mut [u8],
    kcache: &'a mut KCache,
}

/// One source operand, resolved for a lane loop.
#[derive(Clone, Copy)]
enum Src {
    /// VGPR at this offset in `v`.
    V(usize),
    /// The same value in every lane.
    C(u32),
}

impl Exec<'_, '_> {
    fn err(&self, what: &str) -> IsaError {
        self.at.msg(what)
    }

    fn unsupported(&self, i: &Inst) -> IsaError {
        self.err(&format!(
            "unsupported instruction {} (word {:#010x}) in the simulator",
            i.op.name(),
            i.words[0]
        ))
    }

    // ---- scalar operands ----

    fn sread(&self, code: u16, lit: u32, width: Width) -> Result<u64, IsaError> {
        let s = &self.w.s;
        let wide = matches!(width, Width::B64 | Width::F64);
        let pair = |k: usize| -> Result<u64, IsaError> {
            let lo = *s
                .get(k)
                .ok_or_else(|| self.err("scalar operand out of range"))?;
            if !wide {
                return Ok(u64::from(lo));
            }
            let hi = *s
                .get(k + 1)
                .ok_or_else(|| self.err("scalar operand pair out of range"))?;
            Ok(u64::from(lo) | (u64::from(hi) << 32))
        };
        match code {
            c if c == self.cd.null => Ok(0),
            0..=127 => pair(usize::from(code)),
            LIT => Ok(match width {
                Width::F64 => u64::from(lit) << 32,
                _ => u64::from(lit),
            }),
            251 => Ok(u64::from(self.w.vcc() == 0)),
            252 => Ok(u64::from(self.w.exec() == 0)),
            253 => Ok(u64::from(self.w.scc)),
            _ => match inline_const(code, width) {
                Some(v) => Ok(match width {
                    // 32-bit integer views of negative inline constants.
                    Width::B32 | Width::F16 => v & 0xffff_ffff,
                    _ => v,
                }),
                None => Err(self.err(&format!("unsupported scalar operand code {code}"))),
            },
        }
    }

    fn s32(&self, code: u16, lit: u32) -> Result<u32, IsaError> {
        // CAST: 32-bit view.
        self.sread(code, lit, Width::B32).map(|v| v as u32)
    }

    fn s64(&self, code: u16, lit: u32) -> Result<u64, IsaError> {
        self.sread(code, lit, Width::B64)
    }

    fn swrite(&mut self, code: u16, v: u32) -> Result<(), IsaError> {
        if code == self.cd.null || code == NONE {
            return Ok(());
        }
        if code >= 128 || (108..=123).contains(&code) {
            return Err(self.err(&format!("scalar destination code {code} is not writable")));
        }
        self.w.s[usize::from(code)] = v;
        Ok(())
    }

    fn swrite64(&mut self, code: u16, v: u64) -> Result<(), IsaError> {
        // CAST: halves of a u64.
        self.swrite(code, v as u32)?;
        if code != self.cd.null && code != NONE {
            self.swrite(code.saturating_add(1), (v >> 32) as u32)?;
        }
        Ok(())
    }

    /// A lane mask to an SGPR (pair in wave64).
    fn write_mask(&mut self, code: u16, m: u64) -> Result<(), IsaError> {
        if self.w.lanes == 64 {
            self.swrite64(code, m)
        } else {
            // CAST: wave32 mask.
            self.swrite(code, m as u32)
        }
    }

    fn read_mask(&self, code: u16, lit: u32) -> Result<u64, IsaError> {
        let m = if self.w.lanes == 64 {
            self.s64(code, lit)?
        } else {
            u64::from(self.s32(code, lit)?)
        };
        Ok(m & self.w.lane_mask())
    }

    // ---- vector operands ----

    fn vreg(&self, code: u16, n: usize) -> Result<usize, IsaError> {
        let Some(r) = code.checked_sub(VGPR).filter(|_| code != NONE) else {
            return Err(self.err(&format!("operand code {code} is not a VGPR")));
        };
        let r = usize::from(r);
        if r + n > self.w.nvgpr {
            return Err(self.err(&format!(
                "VGPR v{r}{} beyond the {} VGPRs COMPUTE_PGM_RSRC1 grants",
                if n > 1 {
                    format!("..v{}", r + n - 1)
                } else {
                    String::new()
                },
                self.w.nvgpr
            )));
        }
        Ok(r * self.w.lanes)
    }

    fn src(&self, code: u16, lit: u32, width: Width) -> Result<Src, IsaError> {
        if code >= VGPR && code != NONE {
            let n = if matches!(width, Width::B64 | Width::F64) {
                2
            } else {
                1
            };
            return Ok(Src::V(self.vreg(code, n)?));
        }
        // CAST: 32-bit view.
        Ok(Src::C(self.sread(code, lit, width)? as u32))
    }

    /// Source k of `i` (32-bit lanes) into `out`, with VOP3 float modifiers.
    fn lanes32(&self, i: &Inst, k: usize, width: Width, out: &mut Lanes) -> Result<(), IsaError> {
        let n = self.w.lanes;
        let (am, xm) = mods_masks(i, k, width);
        match self.src(i.src[k], i.lit, width)? {
            Src::V(o) => {
                let s = self
                    .w
                    .v
                    .get(o..o + n)
                    .ok_or_else(|| self.err("VGPR out of range"))?;
                for (d, x) in out.iter_mut().zip(s) {
                    *d = (*x & am) ^ xm;
                }
            }
            Src::C(c) => out[..n].fill((c & am) ^ xm),
        }
        Ok(())
    }

    /// Source k of `i` as 64-bit lanes.
    fn lanes64(
        &self,
        i: &Inst,
        k: usize,
        width: Width,
        out: &mut [u64; MAX_LANES],
    ) -> Result<(), IsaError> {
        let n = self.w.lanes;
        let (am, xm) = mods_masks(i, k, width);
        let (am, xm) = ((u64::from(am) << 32) | 0xffff_ffff, u64::from(xm) << 32);
        let code = i.src[k];
        if code >= VGPR && code != NONE {
            let o = self.vreg(code, 2)?;
            let lo = self
                .w
                .v
                .get(o..o + n)
                .ok_or_else(|| self.err("VGPR out of range"))?;
            let hi = self
                .w
                .v
                .get(o + n..o + 2 * n)
                .ok_or_else(|| self.err("VGPR out of range"))?;
            for ((d, a), b) in out.iter_mut().zip(lo).zip(hi) {
                *d = ((u64::from(*a) | (u64::from(*b) << 32)) & am) ^ xm;
            }
        } else {
            let c = self.sread(code, i.lit, width)?;
            out[..n].fill((c & am) ^ xm);
        }
        Ok(())
    }

    fn write_lanes(&mut self, dst: u16, r: &Lanes) -> Result<(), IsaError> {
        let n = self.w.lanes;
        let o = self.vreg(dst, 1)?;
        let exec = self.w.exec();
        let d = self
            .w
            .v
            .get_mut(o..o + n)
            .ok_or_else(|| self.at.msg("VGPR out of range"))?;
        if exec == (if n == 64 { !0 } else { 0xffff_ffff }) {
            d.copy_from_slice(&r[..n]);
        } else {
            let mut m = exec;
            while m != 0 {
                let lane = m.trailing_zeros() as usize;
                m &= m - 1;
                if let (Some(x), Some(v)) = (d.get_mut(lane), r.get(lane)) {
                    *x = *v;
                }
            }
        }
        Ok(())
    }

    fn write_lanes64(&mut self, dst: u16, r: &[u64; MAX_LANES]) -> Result<(), IsaError> {
        let mut lo = [0u32; MAX_LANES];
        let mut hi = [0u32; MAX_LANES];
        for ((a, b), v) in lo.iter_mut().zip(hi.iter_mut()).zip(r) {
            // CAST: halves of a u64.
            *a = *v as u32;
            *b = (*v >> 32) as u32;
        }
        self.vreg(dst, 2)?;
        self.write_lanes(dst, &lo)?;
        self.write_lanes(dst + 1, &hi)
    }

    fn f32_mode_out(&self, i: &Inst, r: &mut Lanes) {
        let n = self.w.lanes;
        if i.omod != 0 {
            let k = [1.0f32, 2.0, 4.0, 0.5][usize::from(i.omod & 3)];
            for x in &mut r[..n] {
                *x = (f32v(*x) * k).to_bits();
            }
        }
        if i.clamp {
            for x in &mut r[..n] {
                let f = f32v(*x);
                *x = if f.is_nan() {
                    0
                } else {
                    f.clamp(0.0, 1.0).to_bits()
                };
            }
        }
        if !self.l.float.denorm32 {
            for x in &mut r[..n] {
                *x = flush32(*x);
            }
        }
    }

    fn in_f32(&self, a: &mut Lanes) {
        if !self.l.float.denorm32 {
            for x in &mut a[..self.w.lanes] {
                *x = flush32(*x);
            }
        }
    }

    /// dst = f(src0, src1) on 32-bit lanes.
    fn v2(&mut self, i: &Inst, w: Width, f: impl Fn(u32, u32) -> u32) -> Result<(), IsaError> {
        let mut a = [0u32; MAX_LANES];
        let mut b = [0u32; MAX_LANES];
        self.lanes32(i, 0, w, &mut a)?;
        self.lanes32(i, 1, w, &mut b)?;
        let f32op = is_f32(i.op);
        if f32op {
            self.in_f32(&mut a);
            self.in_f32(&mut b);
        }
        let mut r = [0u32; MAX_LANES];
        let n = self.w.lanes;
        for ((r, a), b) in r[..n].iter_mut().zip(&a[..n]).zip(&b[..n]) {
            *r = f(*a, *b);
        }
        if f32op {
            self.f32_mode_out(i, &mut r);
        }
        self.write_lanes(i.dst, &r)
    }

    fn v1(&mut self, i: &Inst, w: Width, f: impl Fn(u32) -> u32) -> Result<(), IsaError> {
        let mut a = [0u32; MAX_LANES];
        self.lanes32(i, 0, w, &mut a)?;
        let f32op = is_f32(i.op);
        if f32op {
            self.in_f32(&mut a);
        }
        let mut r = [0u32; MAX_LANES];
        let n = self.w.lanes;
        for (r, a) in r[..n].iter_mut().zip(&a[..n]) {
            *r = f(*a);
        }
        if f32op {
            self.f32_mode_out(i, &mut r);
        }
        self.write_lanes(i.dst, &r)
    }

    fn v3(&mut self, i: &Inst, w: Width, f: impl Fn(u32, u32, u32) -> u32) -> Result<(), IsaError> {
        let mut a = [0u32; MAX_LANES];
        let mut b = [0u32; MAX_LANES];
        let mut c = [0u32; MAX_LANES];
        self.lanes32(i, 0, w, &mut a)?;
        self.lanes32(i, 1, w, &mut b)?;
        self.lanes32(i, 2, w, &mut c)?;
        let f32op = is_f32(i.op);
        if f32op {
            self.in_f32(&mut a);
            self.in_f32(&mut b);
            self.in_f32(&mut c);
        }
        let mut r = [0u32; MAX_LANES];
        let n = self.w.lanes;
        for (((r, a), b), c) in r[..n].iter_mut().zip(&a[..n]).zip(&b[..n]).zip(&c[..n]) {
            *r = f(*a, *b, *c);
        }
        if f32op {
            self.f32_mode_out(i, &mut r);
        }
        self.write_lanes(i.dst, &r)
    }

    /// 64-bit lanes: dst = f(src0, src1, src2) (absent sources read as 0).
    fn v64(
        &mut self,
        i: &Inst,
        w: [Width; 3],
        f: impl Fn(u64, u64, u64) -> u64,
    ) -> Result<(), IsaError> {
        let mut s = [[0u64; MAX_LANES]; 3];
        for k in 0..3 {
            if i.src[k] == NONE {
                continue;
            }
            if matches!(w[k], Width::B64 | Width::F64) {
                self.lanes64(i, k, w[k], &mut s[k])?;
            } else {
                let mut t = [0u32; MAX_LANES];
                self.lanes32(i, k, w[k], &mut t)?;
                for (d, x) in s[k].iter_mut().zip(&t) {
                    *d = u64::from(*x);
                }
            }
        }
        let mut r = [0u64; MAX_LANES];
        for l in 0..self.w.lanes {
            r[l] = f(s[0][l], s[1][l], s[2][l]);
        }
        self.write_lanes64(i.dst, &r)
    }

    /// 64-bit result into a 32-bit destination (conversions from f64).
    fn v64to32(&mut self, i: &Inst, f: impl Fn(u64) -> u32) -> Result<(), IsaError> {
        let mut s = [0u64; MAX_LANES];
        self.lanes64(i, 0, Width::F64, &mut s)?;
        let mut r = [0u32; MAX_LANES];
        for (r, x) in r.iter_mut().zip(&s) {
            *r = f(*x);
        }
        self.write_lanes(i.dst, &r)
    }

    /// 32-bit source into a 64-bit destination.
    fn v32to64(&mut self, i: &Inst, w: Width, f: impl Fn(u32) -> u64) -> Result<(), IsaError> {
        let mut a = [0u32; MAX_LANES];
        self.lanes32(i, 0, w, &mut a)?;
        let mut r = [0u64; MAX_LANES];
        for (r, x) in r.iter_mut().zip(&a) {
            *r = f(*x);
        }
        self.write_lanes64(i.dst, &r)
    }

    /// Carry-out ops: (result, carry) per lane; carry mask to sdst.
    fn vcarry(
        &mut self,
        i: &Inst,
        f: impl Fn(u32, u32, bool) -> (u32, bool),
    ) -> Result<(), IsaError> {
        let mut a = [0u32; MAX_LANES];
        let mut b = [0u32; MAX_LANES];
        self.lanes32(i, 0, Width::B32, &mut a)?;
        self.lanes32(i, 1, Width::B32, &mut b)?;
        let cin = if i.src[2] != NONE {
            self.read_mask(i.src[2], i.lit)?
        } else {
            0
        };
        let exec = self.w.exec();
        let mut r = [0u32; MAX_LANES];
        let mut m = 0u64;
        for l in 0..self.w.lanes {
            let (v, c) = f(a[l], b[l], cin >> l & 1 == 1);
            r[l] = v;
            if c {
                m |= 1 << l;
            }
        }
        self.write_lanes(i.dst, &r)?;
        self.write_mask(i.sdst, m & exec)
    }

    fn vcmp(&mut self, i: &Inst) -> Result<(), IsaError> {
        let n = self.w.lanes;
        let c = i.sub;
        let mut m = 0u64;
        match i.op {
            Op::VCmpF64 | Op::VCmpI64 | Op::VCmpU64 | Op::VCmpClassF64 => {
                let mut a = [0u64; MAX_LANES];
                let w0 = if i.op == Op::VCmpF64 || i.op == Op::VCmpClassF64 {
                    Width::F64
                } else {
                    Width::B64
                };
                self.lanes64(i, 0, w0, &mut a)?;
                let mut b = [0u64; MAX_LANES];
                if i.op == Op::VCmpClassF64 {
                    let mut t = [0u32; MAX_LANES];
                    self.lanes32(i, 1, Width::B32, &mut t)?;
                    for (d, x) in b.iter_mut().zip(&t) {
                        *d = u64::from(*x);
                    }
                } else {
                    self.lanes64(i, 1, w0, &mut b)?;
                }
                for l in 0..n {
                    let (x, y) = (a[l], b[l]);
                    let t = match i.op {
                        Op::VCmpF64 => fcmp(c, f64::from_bits(x), f64::from_bits(y)),
                        // CAST: two's complement reinterpretation.
                        Op::VCmpI64 => icmp(c, x as i64, y as i64),
                        Op::VCmpU64 => icmp(c, x, y),
                        // CAST: the class mask is 10 bits.
                        _ => class64(f64::from_bits(x), y as u32),
                    };
                    m |= u64::from(t) << l;
                }
            }
            _ => {
                let w = if i.op == Op::VCmpF16 {
                    Width::F16
                } else {
                    Width::B32
                };
                let mut a = [0u32; MAX_LANES];
                let mut b = [0u32; MAX_LANES];
                self.lanes32(i, 0, w, &mut a)?;
                let w1 = if i.op == Op::VCmpClassF32 {
                    Width::B32
                } else {
                    w
                };
                self.lanes32(i, 1, w1, &mut b)?;
                let op = i.op;
                let denorm = self.l.float.denorm32;
                for l in 0..n {
                    let (x, y) = (a[l], b[l]);
                    let t = match op {
                        Op::VCmpF32 => {
                            let (x, y) = if denorm {
                                (x, y)
                            } else {
                                (flush32(x), flush32(y))
                            };
                            fcmp(c, f64::from(f32v(x)), f64::from(f32v(y)))
                        }
                        Op::VCmpF16 => fcmp(c, f64::from(f16_to_f32(x)), f64::from(f16_to_f32(y))),
                        // CAST: two's complement reinterpretation.
                        Op::VCmpI32 => icmp(c, x as i32, y as i32),
                        Op::VCmpU32 => icmp(c, x, y),
                        // CAST: low 16 bits, signed.
                        Op::VCmpI16 => icmp(c, x as u16 as i16, y as u16 as i16),
                        Op::VCmpU16 => icmp(c, x & 0xffff, y & 0xffff),
                        Op::VCmpClassF32 => class32(f32v(x), y),
                        _ => false,
                    };
                    m |= u64::from(t) << l;
                }
            }
        }
        let m = m & self.w.exec();
        if i.cmpx {
            self.w.set_exec(m);
            if i.sdst == NONE {
                return Ok(());
            }
        }
        self.write_mask(i.sdst, m)
    }

    fn step(&mut self, i: &Inst, next: u64) -> Result<(), IsaError> {
        match i.enc {
            Enc::Sop1 | Enc::Sop2 | Enc::Sopk | Enc::Sopc | Enc::Sopp => self.scalar(i, next),
            Enc::Smem => self.smem(i),
            Enc::Vopd => self.vopd(i),
            Enc::Ds => self.ds(i),
            Enc::Flat => self.flat(i),
            Enc::Mubuf => match i.op {
                Op::BufferGl0Inv | Op::BufferGl1Inv | Op::BufferWbinvl1Vol => Ok(()),
                _ => self.mubuf(i),
            },
            Enc::Vop1 | Enc::Vop2 | Enc::Vopc | Enc::Vop3 | Enc::Vop3sd => self.valu(i),
        }
    }

    fn branch(&mut self, next: u64, imm: i32, cond: bool) {
        if cond {
            // CAST: sign-extended word offset.
            self.w.pc = next.wrapping_add((i64::from(imm) * 4) as u64);
        }
    }

    fn scalar(&mut self, i: &Inst, next: u64) -> Result<(), IsaError> {
        use Op::*;
        let lit = i.lit;
        let a = || self.s32(i.src[0], lit);
        let b = || self.s32(i.src[1], lit);
        let a64 = || self.s64(i.src[0], lit);
        let b64 = || self.s64(i.src[1], lit);
        // Results: (value, Some(scc)).
        let r32: Option<(u32, Option<bool>)> = match i.op {
            SAddU32 => {
                let (x, y) = (a()?, b()?);
                let (v, c) = x.overflowing_add(y);
                Some((v, Some(c)))
            }
            SSubU32 => {
                let (x, y) = (a()?, b()?);
                Some((x.wrapping_sub(y), Some(y > x)))
            }
            SAddI32 => {
                // CAST: two's complement.
                let (x, y) = (a()? as i32, b()? as i32);
                let (v, o) = x.overflowing_add(y);
                Some((v as u32, Some(o)))
            }
            SSubI32 => {
                let (x, y) = (a()? as i32, b()? as i32);
                let (v, o) = x.overflowing_sub(y);
                Some((v as u32, Some(o)))
            }
            SAddcU32 => {
                let (x, y) = (a()?, b()?);
                let s = u64::from(x) + u64::from(y) + u64::from(self.w.scc);
                Some((s as u32, Some(s >> 32 != 0)))
            }
            SSubbU32 => {
                let (x, y) = (a()?, b()?);
                let s = u64::from(y) + u64::from(self.w.scc);
                Some((
                    x.wrapping_sub(y).wrapping_sub(u32::from(self.w.scc)),
                    Some(s > u64::from(x)),
                ))
            }
            SAbsdiffI32 => {
                let (x, y) = (a()? as i32, b()? as i32);
                let v = x.wrapping_sub(y).wrapping_abs() as u32;
                Some((v, Some(v != 0)))
            }
            SLshlB32 => {
                let v = a()? << (b()? & 31);
                Some((v, Some(v != 0)))
            }
            SLshrB32 => {
                let v = a()? >> (b()? & 31);
                Some((v, Some(v != 0)))
            }
            SAshrI32 => {
                let v = ((a()? as i32) >> (b()? & 31)) as u32;
                Some((v, Some(v != 0)))
            }
            SLshl1AddU32 | SLshl2AddU32 | SLshl3AddU32 | SLshl4AddU32 => {
                let k = match i.op {
                    SLshl1AddU32 => 1,
                    SLshl2AddU32 => 2,
                    SLshl3AddU32 => 3,
                    _ => 4,
                };
                let s = (u64::from(a()?) << k) + u64::from(b()?);
                Some((s as u32, Some(s >> 32 != 0)))
            }
            SMinI32 => {
                let (x, y) = (a()? as i32, b()? as i32);
                Some((x.min(y) as u32, Some(x < y)))
            }
            SMinU32 => {
                let (x, y) = (a()?, b()?);
                Some((x.min(y), Some(x < y)))
            }
            SMaxI32 => {
                let (x, y) = (a()? as i32, b()? as i32);
                Some((x.max(y) as u32, Some(x > y)))
            }
            SMaxU32 => {
                let (x, y) = (a()?, b()?);
                Some((x.max(y), Some(x > y)))
            }
            SAndB32 | SOrB32 | SXorB32 | SNandB32 | SNorB32 | SXnorB32 | SAndNot1B32
            | SOrNot1B32 => {
                let (x, y) = (a()?, b()?);
                let v = match i.op {
                    SAndB32 => x & y,
                    SOrB32 => x | y,
                    SXorB32 => x ^ y,
                    SNandB32 => !(x & y),
                    SNorB32 => !(x | y),
                    SXnorB32 => !(x ^ y),
                    SAndNot1B32 => x & !y,
                    _ => x | !y,
                };
                Some((v, Some(v != 0)))
            }
            SBfeU32 => {
                let (x, y) = (a()?, b()?);
                let v = bfe(x, y & 31, (y >> 16) & 0x7f);
                let v = if (y >> 16) & 0x7f >= 32 {
                    x >> (y & 31)
                } else {
                    v
                };
                Some((v, Some(v != 0)))
            }
            SBfeI32 => {
                let (x, y) = (a()?, b()?);
                let v = bfe_i(x, y & 31, (y >> 16) & 0x7f);
                Some((v, Some(v != 0)))
            }
            SBfmB32 => {
                let (x, y) = (a()?, b()?);
                Some((((1u64 << (x & 31)) - 1) as u32) << (y & 31)).map(|v| (v, None))
            }
            SMulI32 => Some((a()?.wrapping_mul(b()?), None)),
            SMulHiU32 => Some((((u64::from(a()?) * u64::from(b()?)) >> 32) as u32, None)),
            SMulHiI32 => Some((
                ((i64::from(a()? as i32) * i64::from(b()? as i32)) >> 32) as u32,
                None,
            )),
            SCselectB32 => {
                let (x, y) = (a()?, b()?);
                Some((if self.w.scc { x } else { y }, None))
            }
            SPackLlB32B16 => Some(((a()? & 0xffff) | (b()? << 16), None)),
            SPackLhB32B16 => Some(((a()? & 0xffff) | (b()? & 0xffff_0000), None)),
            SPackHhB32B16 => Some(((a()? >> 16) | (b()? & 0xffff_0000), None)),
            SMovB32 => Some((a()?, None)),
            SCmovB32 => {
                if self.w.scc {
                    Some((a()?, None))
                } else {
                    None
                }
            }
            SBrevB32 => Some((a()?.reverse_bits(), None)),
            SCtzI32B32 => {
                let x = a()?;
                Some((if x == 0 { u32::MAX } else { x.trailing_zeros() }, None))
            }
            SFf1I32B32 => {
                let x = a()?;
                Some((if x == 0 { u32::MAX } else { x.trailing_zeros() }, None))
            }
            SFf1I32B64 => {
                let x = a64()?;
                Some((if x == 0 { u32::MAX } else { x.trailing_zeros() }, None))
            }
            SClzI32U32 => {
                let x = a()?;
                Some((if x == 0 { u32::MAX } else { x.leading_zeros() }, None))
            }
            SCtzI32B64 => {
                let x = a64()?;
                Some((if x == 0 { u32::MAX } else { x.trailing_zeros() }, None))
            }
            SClzI32U64 => {
                let x = a64()?;
                Some((if x == 0 { u32::MAX } else { x.leading_zeros() }, None))
            }
            SSextI32I8 => Some((a()? as u8 as i8 as i32 as u32, None)),
            SSextI32I16 => Some((a()? as u16 as i16 as i32 as u32, None)),
            SAbsI32 => {
                let v = (a()? as i32).wrapping_abs() as u32;
                Some((v, Some(v != 0)))
            }
            SBcnt0I32B32 => {
                let v = a()?.count_zeros();
                Some((v, Some(v != 0)))
            }
            SBcnt1I32B32 => {
                let v = a()?.count_ones();
                Some((v, Some(v != 0)))
            }
            SBcnt1I32B64 => {
                let v = a64()?.count_ones();
                Some((v, Some(v != 0)))
            }
            SNotB32 => {
                let v = !a()?;
                Some((v, Some(v != 0)))
            }
            SBitset0B32 | SBitset1B32 => {
                let d = self.s32(i.dst, 0)?;
                let bit = 1u32 << (a()? & 31);
                Some((
                    if i.op == SBitset0B32 {
                        d & !bit
                    } else {
                        d | bit
                    },
                    None,
                ))
            }
            SMovkI32 => Some((i.imm as u32, None)),
            SCmovkI32 => self.w.scc.then_some((i.imm as u32, None)),
            SAddkI32 => {
                let d = self.s32(i.dst, 0)? as i32;
                let (v, o) = d.overflowing_add(i.imm);
                Some((v as u32, Some(o)))
            }
            SMulkI32 => Some((
                (self.s32(i.dst, 0)? as i32).wrapping_mul(i.imm) as u32,
                None,
            )),
            SVersion => None,
            _ => None,
        };
        if let Some((v, scc)) = r32 {
            self.swrite(i.dst, v)?;
            if let Some(c) = scc {
                self.w.scc = c;
            }
            return Ok(());
        }
        // 64-bit results.
        let r64: Option<(u64, Option<bool>)> = match i.op {
            SLshlB64 => {
                let v = a64()? << (b()? & 63);
                Some((v, Some(v != 0)))
            }
            SLshrB64 => {
                let v = a64()? >> (b()? & 63);
                Some((v, Some(v != 0)))
            }
            SAshrI64 => {
                let v = ((a64()? as i64) >> (b()? & 63)) as u64;
                Some((v, Some(v != 0)))
            }
            SAndB64 | SOrB64 | SXorB64 | SNandB64 | SNorB64 | SXnorB64 | SAndNot1B64
            | SOrNot1B64 => {
                let (x, y) = (a64()?, b64()?);
                let v = match i.op {
                    SAndB64 => x & y,
                    SOrB64 => x | y,
                    SXorB64 => x ^ y,
                    SNandB64 => !(x & y),
                    SNorB64 => !(x | y),
                    SXnorB64 => !(x ^ y),
                    SAndNot1B64 => x & !y,
                    _ => x | !y,
                };
                Some((v, Some(v != 0)))
            }
            SBfeU64 | SBfeI64 => {
                let (x, y) = (a64()?, b()?);
                let off = y & 63;
                let w = (y >> 16) & 0x7f;
                let v = if w == 0 {
                    0
                } else if w >= 64 {
                    x >> off
                } else {
                    let f = (x >> off) & ((1u64 << w) - 1);
                    if i.op == SBfeI64 {
                        (((f << (64 - w)) as i64) >> (64 - w)) as u64
                    } else {
                        f
                    }
                };
                Some((v, Some(v != 0)))
            }
            SBfmB64 => {
                let (x, y) = (a()?, b()?);
                let m = if x & 63 == 0 {
                    0
                } else {
                    u64::MAX >> (64 - (x & 63))
                };
                Some((m << (y & 63), None))
            }
            SCselectB64 => {
                let (x, y) = (a64()?, b64()?);
                Some((if self.w.scc { x } else { y }, None))
            }
            SMovB64 => Some((a64()?, None)),
            SCmovB64 => {
                if self.w.scc {
                    Some((a64()?, None))
                } else {
                    None
                }
            }
            SNotB64 => {
                let v = !a64()?;
                Some((v, Some(v != 0)))
            }
            SGetpcB64 => Some((next, None)),
            _ => None,
        };
        if let Some((v, scc)) = r64 {
            self.swrite64(i.dst, v)?;
            if let Some(c) = scc {
                self.w.scc = c;
            }
            return Ok(());
        }
        match i.op {
            SAndSaveexecB32 | SOrSaveexecB32 | SXorSaveexecB32 | SAndNot0SaveexecB32
            | SAndNot1SaveexecB32 | SAndSaveexecB64 | SOrSaveexecB64 | SXorSaveexecB64
            | SAndNot0SaveexecB64 | SAndNot1SaveexecB64 => {
                let wide = matches!(
                    i.op,
                    SAndSaveexecB64
                        | SOrSaveexecB64
                        | SXorSaveexecB64
                        | SAndNot0SaveexecB64
                        | SAndNot1SaveexecB64
                );
                let full = u64::from(self.w.s[126]) | (u64::from(self.w.s[127]) << 32);
                let old = if wide { full } else { full & 0xffff_ffff };
                let s = if wide { a64()? } else { u64::from(a()?) };
                let new = match i.op {
                    SAndSaveexecB32 | SAndSaveexecB64 => s & old,
                    SOrSaveexecB32 | SOrSaveexecB64 => s | old,
                    SXorSaveexecB32 | SXorSaveexecB64 => s ^ old,
                    SAndNot0SaveexecB32 | SAndNot0SaveexecB64 => !s & old,
                    _ => s & !old,
                };
                let new = if wide { new } else { new & 0xffff_ffff };
                if wide {
                    self.swrite64(i.dst, old)?;
                    self.w.set_exec(new);
                } else {
                    // CAST: wave32 halves.
                    self.swrite(i.dst, old as u32)?;
                    self.w.s[126] = new as u32;
                }
                self.w.scc = new != 0;
                Ok(())
            }
            SSetpcB64 => {
                self.w.pc = a64()?;
                Ok(())
            }
            SSwappcB64 => {
                let t = a64()?;
                self.swrite64(i.dst, next)?;
                self.w.pc = t;
                Ok(())
            }
            SCmpEqI32 | SCmpLgI32 | SCmpGtI32 | SCmpGeI32 | SCmpLtI32 | SCmpLeI32 => {
                let (x, y) = (a()? as i32, b()? as i32);
                let c = [2u8, 5, 4, 6, 1, 3][(i.op as usize) - (SCmpEqI32 as usize)];
                self.w.scc = icmp(c, x, y);
                Ok(())
            }
            SCmpEqU32 | SCmpLgU32 | SCmpGtU32 | SCmpGeU32 | SCmpLtU32 | SCmpLeU32 => {
                let (x, y) = (a()?, b()?);
                let c = [2u8, 5, 4, 6, 1, 3][(i.op as usize) - (SCmpEqU32 as usize)];
                self.w.scc = icmp(c, x, y);
                Ok(())
            }
            SCmpkEqI32 | SCmpkLgI32 | SCmpkGtI32 | SCmpkGeI32 | SCmpkLtI32 | SCmpkLeI32 => {
                let x = self.s32(i.dst, 0)? as i32;
                let c = [2u8, 5, 4, 6, 1, 3][(i.op as usize) - (SCmpkEqI32 as usize)];
                self.w.scc = icmp(c, x, i.imm);
                Ok(())
            }
            SCmpkEqU32 | SCmpkLgU32 | SCmpkGtU32 | SCmpkGeU32 | SCmpkLtU32 | SCmpkLeU32 => {
                let x = self.s32(i.dst, 0)?;
                let c = [2u8, 5, 4, 6, 1, 3][(i.op as usize) - (SCmpkEqU32 as usize)];
                // CAST: the u32 forms zero-extend simm16.
                self.w.scc = icmp(c, x, i.imm as u16 as u32);
                Ok(())
            }
            SBitcmp0B32 | SBitcmp1B32 => {
                let (x, y) = (a()?, b()?);
                let bit = x >> (y & 31) & 1;
                self.w.scc = (bit == 1) == (i.op == SBitcmp1B32);
                Ok(())
            }
            SCmpEqU64 | SCmpLgU64 => {
                let (x, y) = (a64()?, b64()?);
                self.w.scc = (x == y) == (i.op == SCmpEqU64);
                Ok(())
            }
            SNop | SClause | SDelayAlu | SWaitcnt | SWaitcntDepctr | SSleep | SSetprio
            | SIcacheInv | SWaitcntVscnt | SWaitcntVmcnt | SWaitcntExpcnt | SWaitcntLgkmcnt
            | SVersion | SCmovB32 | SCmovB64 | SCmovkI32 | SWaitLoadcnt | SWaitStorecnt
            | SWaitSamplecnt | SWaitBvhcnt | SWaitExpcnt | SWaitDscnt | SWaitKmcnt | SWaitAlu => {
                Ok(())
            }
            // gfx12 split barrier: the wave arrives at the signal and waits at the wait; waves
            // of a workgroup run in turn, so arriving is stopping at the wait.
            SBarrierSignal => Ok(()),
            SBarrierWait => {
                self.w.state = WaveState::Barrier;
                Ok(())
            }
            SBranch => {
                self.branch(next, i.imm, true);
                Ok(())
            }
            SCbranchScc0 => {
                self.branch(next, i.imm, !self.w.scc);
                Ok(())
            }
            SCbranchScc1 => {
                self.branch(next, i.imm, self.w.scc);
                Ok(())
            }
            SCbranchVccz => {
                self.branch(next, i.imm, self.w.vcc() == 0);
                Ok(())
            }
            SCbranchVccnz => {
                self.branch(next, i.imm, self.w.vcc() != 0);
                Ok(())
            }
            SCbranchExecz => {
                self.branch(next, i.imm, self.w.exec() == 0);
                Ok(())
            }
            SCbranchExecnz => {
                self.branch(next, i.imm, self.w.exec() != 0);
                Ok(())
            }
            SEndpgm => {
                self.w.state = WaveState::Done;
                Ok(())
            }
            SBarrier => {
                self.w.state = WaveState::Barrier;
                Ok(())
            }
            SSendmsg => {
                // MSG_DEALLOC_VGPRS (3) releases VGPRs early: nothing to model.
                if i.imm & 0xff == 3 {
                    Ok(())
                } else {
                    Err(self.err(&format!("unsupported s_sendmsg message {:#x}", i.imm)))
                }
            }
            STrap => Err(self.err(&format!(
                "s_trap {:#x} (no trap handler in the simulator)",
                i.imm
            ))),
            SCodeEnd => Err(self.err("executed s_code_end (padding after the kernel's code)")),
            _ => Err(self.unsupported(i)),
        }
    }

    fn smem(&mut self, i: &Inst) -> Result<(), IsaError> {
        use Op::*;
        let n = match i.op {
            SLoadB32 => 1,
            SLoadB64 => 2,
            SLoadB96 => 3,
            SLoadB128 => 4,
            SLoadB256 => 8,
            SLoadB512 => 16,
            SGl1Inv | SDcacheInv => {
                self.kcache.lines.clear();
                return Ok(());
            }
            SMemtime | SMemrealtime => {
                let t = self.l.clock;
                return self.swrite64(i.dst, t);
            }
            _ => return Err(self.unsupported(i)),
        };
        let base = self.s64(i.src[0], 0)?;
        let soff = if i.src[1] != NONE {
            u64::from(self.s32(i.src[1], 0)?)
        } else {
            0
        };
        // CAST: sign-extended offset.
        let va = base.wrapping_add(i.imm as i64 as u64).wrapping_add(soff) & !3;
        if usize::from(i.dst) + n > 106 {
            return Err(self.err(&format!(
                "{} writes s{}..s{}, beyond the SGPRs",
                i.op.name(),
                i.dst,
                usize::from(i.dst) + n - 1
            )));
        }
        let mut buf = [0u8; 64];
        self.kcache.read(self.mem, va, &mut buf[..n * 4])?;
        for k in 0..n {
            let v =
                u32::from_le_bytes([buf[k * 4], buf[k * 4 + 1], buf[k * 4 + 2], buf[k * 4 + 3]]);
            self.w.s[usize::from(i.dst) + k] = v;
        }
        Ok(())
    }

    fn vopd(&mut self, i: &Inst) -> Result<(), IsaError> {
        let Some([x, y]) = i.dual else {
            return Err(self.unsupported(i));
        };
        // Both halves read their sources before either writes.
        let rx = self.dual_half(i, &x)?;
        let ry = self.dual_half(i, &y)?;
        self.write_lanes(x.dst, &rx)?;
        self.write_lanes(y.dst, &ry)
    }

    fn dual_half(&self, i: &Inst, h: &DualHalf) -> Result<Lanes, IsaError> {
        let mut a = [0u32; MAX_LANES];
        let mut b = [0u32; MAX_LANES];
        let rd = |code: u16, out: &mut Lanes| -> Result<(), IsaError> {
            if code == NONE {
                return Ok(());
            }
            match self.src(code, i.lit, Width::B32)? {
                Src::V(o) => {
                    let s = self
                        .w
                        .v
                        .get(o..o + self.w.lanes)
                        .ok_or_else(|| self.err("VGPR out of range"))?;
                    out[..self.w.lanes].copy_from_slice(s);
                }
                Src::C(c) => out.fill(c),
            }
            Ok(())
        };
        rd(h.src[0], &mut a)?;
        rd(h.src[1], &mut b)?;
        let mut d = [0u32; MAX_LANES];
        let needs_d = matches!(h.op, Op::VFmacF32);
        if needs_d {
            let o = self.vreg(h.dst, 1)?;
            if let Some(s) = self.w.v.get(o..o + self.w.lanes) {
                d[..self.w.lanes].copy_from_slice(s);
            }
        }
        let vcc = self.w.vcc();
        let k = f32v(i.lit);
        let mut r = [0u32; MAX_LANES];
        for l in 0..self.w.lanes {
            let (x, y) = (f32v(a[l]), f32v(b[l]));
            r[l] = match h.op {
                Op::VFmacF32 => x.mul_add(y, f32v(d[l])).to_bits(),
                Op::VFmaakF32 => x.mul_add(y, k).to_bits(),
                Op::VFmamkF32 => x.mul_add(k, y).to_bits(),
                Op::VMulF32 => (x * y).to_bits(),
                Op::VAddF32 => (x + y).to_bits(),
                Op::VSubF32 => (x - y).to_bits(),
                Op::VSubrevF32 => (y - x).to_bits(),
                Op::VMovB32 => a[l],
                Op::VCndmaskB32 => {
                    if vcc >> l & 1 == 1 {
                        b[l]
                    } else {
                        a[l]
                    }
                }
                Op::VMaxF32 => fmax(x, y).to_bits(),
                Op::VMinF32 => fmin(x, y).to_bits(),
                Op::VAddNcU32 => a[l].wrapping_add(b[l]),
                Op::VLshlrevB32 => b[l] << (a[l] & 31),
                Op::VAndB32 => a[l] & b[l],
                _ => return Err(self.err(&format!("unsupported VOPD operation {}", h.op.name()))),
            };
        }
        if is_f32(h.op) && !self.l.float.denorm32 {
            for x in &mut r {
                *x = flush32(*x);
            }
        }
        Ok(r)
    }

    fn valu(&mut self, i: &Inst) -> Result<(), IsaError> {
        use Op::*;
        let b32 = Width::B32;
        let f16 = Width::F16;
        let denorm64 = self.l.float.denorm16_64;
        let fl64 = move |x: u64| -> u64 {
            if !denorm64 && x & 0x7ff0_0000_0000_0000 == 0 {
                x & (1 << 63)
            } else {
                x
            }
        };
        let d64 = move |x: u64| f64::from_bits(fl64(x));
        let o64 = move |x: f64| fl64(x.to_bits());
        match i.op {
            VNop => Ok(()),
            VMovB32 => self.v1(i, b32, |x| x),
            VNotB32 => self.v1(i, b32, |x| !x),
            VBfrevB32 => self.v1(i, b32, u32::reverse_bits),
            VClzI32U32 => self.v1(
                i,
                b32,
                |x| if x == 0 { u32::MAX } else { x.leading_zeros() },
            ),
            VCtzI32B32 => self.v1(
                i,
                b32,
                |x| if x == 0 { u32::MAX } else { x.trailing_zeros() },
            ),
            VCvtF32I32 => self.v1(i, b32, |x| (x as i32 as f32).to_bits()),
            VCvtF32U32 => self.v1(i, b32, |x| (x as f32).to_bits()),
            VCvtU32F32 => self.v1(i, b32, |x| cvt_u32(f64::from(f32v(x)))),
            VCvtI32F32 => self.v1(i, b32, |x| cvt_i32(f64::from(f32v(x)))),
            VCvtF16F32 => self.v1(i, b32, |x| f32_to_f16(f32v(x), false)),
            VCvtF32F16 => self.v1(i, f16, |x| f16_to_f32(x).to_bits()),
            VCvtF32Ubyte0 => self.v1(i, b32, |x| ((x & 0xff) as f32).to_bits()),
            VCvtF32Ubyte1 => self.v1(i, b32, |x| ((x >> 8 & 0xff) as f32).to_bits()),
            VCvtF32Ubyte2 => self.v1(i, b32, |x| ((x >> 16 & 0xff) as f32).to_bits()),
            VCvtF32Ubyte3 => self.v1(i, b32, |x| ((x >> 24) as f32).to_bits()),
            VFractF32 => self.v1(i, b32, |x| {
                let f = f32v(x);
                if f.is_infinite() {
                    f32::NAN.to_bits()
                } else {
                    (f - f.floor()).min(f32::from_bits(0x3f7f_ffff)).to_bits()
                }
            }),
            VTruncF32 => self.v1(i, b32, |x| f32v(x).trunc().to_bits()),
            VCeilF32 => self.v1(i, b32, |x| f32v(x).ceil().to_bits()),
            VRndneF32 => self.v1(i, b32, |x| rne32(f32v(x)).to_bits()),
            VFloorF32 => self.v1(i, b32, |x| f32v(x).floor().to_bits()),
            VExpF32 => self.v1(i, b32, |x| f32v(x).exp2().to_bits()),
            VLogF32 => self.v1(i, b32, |x| f32v(x).log2().to_bits()),
            VRcpF32 | VRcpIflagF32 => self.v1(i, b32, |x| (1.0 / f32v(x)).to_bits()),
            VRsqF32 => self.v1(i, b32, |x| (1.0 / f32v(x).sqrt()).to_bits()),
            VSqrtF32 => self.v1(i, b32, |x| f32v(x).sqrt().to_bits()),
            VSinF32 => self.v1(i, b32, |x| {
                (f32v(x) * core::f32::consts::TAU).sin().to_bits()
            }),
            VCosF32 => self.v1(i, b32, |x| {
                (f32v(x) * core::f32::consts::TAU).cos().to_bits()
            }),
            VFrexpExpI32F32 => self.v1(i, b32, |x| {
                let f = f32v(x);
                if f == 0.0 || !f.is_finite() {
                    0
                } else {
                    let (m, e) = frexp(f64::from(f));
                    let _ = m;
                    e as u32
                }
            }),
            VFrexpMantF32 => self.v1(i, b32, |x| {
                let f = f32v(x);
                if f == 0.0 || !f.is_finite() {
                    x
                } else {
                    (frexp(f64::from(f)).0 as f32).to_bits()
                }
            }),
            VReadfirstlaneB32 => {
                let exec = self.w.exec();
                let lane = if exec == 0 {
                    0
                } else {
                    exec.trailing_zeros() as usize
                };
                let v = match self.src(i.src[0], i.lit, b32)? {
                    Src::V(o) => *self
                        .w
                        .v
                        .get(o + lane)
                        .ok_or_else(|| self.err("VGPR out of range"))?,
                    Src::C(c) => c,
                };
                self.swrite(i.dst, v)
            }
            VReadlaneB32 => {
                let lane = (self.s32(i.src[1], i.lit)? as usize) & (self.w.lanes - 1);
                let v = match self.src(i.src[0], i.lit, b32)? {
                    Src::V(o) => *self
                        .w
                        .v
                        .get(o + lane)
                        .ok_or_else(|| self.err("VGPR out of range"))?,
                    Src::C(c) => c,
                };
                self.swrite(i.dst, v)
            }
            VWritelaneB32 => {
                let v = self.s32(i.src[0], i.lit)?;
                let lane = (self.s32(i.src[1], i.lit)? as usize) & (self.w.lanes - 1);
                let o = self.vreg(i.dst, 1)?;
                if let Some(x) = self.w.v.get_mut(o + lane) {
                    *x = v;
                }
                Ok(())
            }
            VCvtI32F64 => self.v64to32(i, |x| cvt_i32(d64(x))),
            VCvtU32F64 => self.v64to32(i, |x| cvt_u32(d64(x))),
            VCvtF32F64 => self.v64to32(i, |x| (d64(x) as f32).to_bits()),
            VCvtF64I32 => self.v32to64(i, b32, |x| f64::from(x as i32).to_bits()),
            VCvtF64U32 => self.v32to64(i, b32, |x| f64::from(x).to_bits()),
            VCvtF64F32 => self.v32to64(i, b32, |x| f64::from(f32v(x)).to_bits()),
            VTruncF64 => self.v64(i, [Width::F64; 3], |x, _, _| o64(d64(x).trunc())),
            VCeilF64 => self.v64(i, [Width::F64; 3], |x, _, _| o64(d64(x).ceil())),
            VFloorF64 => self.v64(i, [Width::F64; 3], |x, _, _| o64(d64(x).floor())),
            VRndneF64 => self.v64(i, [Width::F64; 3], |x, _, _| o64(rne64(d64(x)))),
            VFractF64 => self.v64(i, [Width::F64; 3], |x, _, _| {
                let f = d64(x);
                o64(if f.is_infinite() {
                    f64::NAN
                } else {
                    (f - f.floor()).min(f64::from_bits(0x3fef_ffff_ffff_ffff))
                })
            }),
            VRcpF64 => self.v64(i, [Width::F64; 3], |x, _, _| o64(1.0 / d64(x))),
            VRsqF64 => self.v64(i, [Width::F64; 3], |x, _, _| o64(1.0 / d64(x).sqrt())),
            VSqrtF64 => self.v64(i, [Width::F64; 3], |x, _, _| o64(d64(x).sqrt())),
            VAddF64 => self.v64(i, [Width::F64; 3], |x, y, _| o64(d64(x) + d64(y))),
            VMulF64 => self.v64(i, [Width::F64; 3], |x, y, _| o64(d64(x) * d64(y))),
            VMinF64 => self.v64(i, [Width::F64; 3], |x, y, _| o64(fmin64(d64(x), d64(y)))),
            VMaxF64 => self.v64(i, [Width::F64; 3], |x, y, _| o64(fmax64(d64(x), d64(y)))),
            VFmaF64 => self.v64(i, [Width::F64; 3], |x, y, z| {
                o64(d64(x).mul_add(d64(y), d64(z)))
            }),
            VLdexpF64 => self.v64(i, [Width::F64, b32, b32], |x, e, _| {
                o64(ldexp(d64(x), e as u32 as i32))
            }),
            VLshlrevB64 => self.v64(i, [b32, Width::B64, b32], |s, x, _| x << (s & 63)),
            VLshrrevB64 => self.v64(i, [b32, Width::B64, b32], |s, x, _| x >> (s & 63)),
            VAshrrevI64 => self.v64(i, [b32, Width::B64, b32], |s, x, _| {
                ((x as i64) >> (s & 63)) as u64
            }),
            VLshlAddU64 => self.v64(i, [Width::B64, b32, Width::B64], |x, s, y| {
                (x << (s & 7)).wrapping_add(y)
            }),
            VMadU64U32 | VMadI64I32 => {
                let signed = i.op == VMadI64I32;
                let mut a = [0u32; MAX_LANES];
                let mut b = [0u32; MAX_LANES];
                let mut c = [0u64; MAX_LANES];
                self.lanes32(i, 0, b32, &mut a)?;
                self.lanes32(i, 1, b32, &mut b)?;
                self.lanes64(i, 2, Width::B64, &mut c)?;
                let mut r = [0u64; MAX_LANES];
                let mut m = 0u64;
                for l in 0..self.w.lanes {
                    let (v, o) = if signed {
                        let p = i128::from(a[l] as i32) * i128::from(b[l] as i32)
                            + i128::from(c[l] as i64);
                        (
                            p as u64,
                            p > i128::from(i64::MAX) || p < i128::from(i64::MIN),
                        )
                    } else {
                        let p = u128::from(a[l]) * u128::from(b[l]) + u128::from(c[l]);
                        (p as u64, p >> 64 != 0)
                    };
                    r[l] = v;
                    m |= u64::from(o) << l;
                }
                self.write_lanes64(i.dst, &r)?;
                let exec = self.w.exec();
                self.write_mask(i.sdst, m & exec)
            }
            VDivScaleF32 | VDivScaleF64 => {
                let wide = i.op == VDivScaleF64;
                let mut s = [[0u64; MAX_LANES]; 3];
                for (k, sk) in s.iter_mut().enumerate() {
                    if wide {
                        self.lanes64(i, k, Width::F64, sk)?;
                    } else {
                        let mut t = [0u32; MAX_LANES];
                        self.lanes32(i, k, b32, &mut t)?;
                        for (d, x) in sk.iter_mut().zip(&t) {
                            *d = f64::from(f32v(*x)).to_bits();
                        }
                    }
                }
                let mut r = [0u64; MAX_LANES];
                let mut m = 0u64;
                for l in 0..self.w.lanes {
                    let (a, b, c) = (
                        f64::from_bits(s[0][l]),
                        f64::from_bits(s[1][l]),
                        f64::from_bits(s[2][l]),
                    );
                    let (d, v) = if wide {
                        div_scale(a, b, c, (768, 128, 53), exp64, f64::is_subnormal)
                    } else {
                        div_scale(a, b, c, (96, 64, 23), exp32of, sub32)
                    };
                    r[l] = if wide {
                        d.to_bits()
                    } else {
                        u64::from((d as f32).to_bits())
                    };
                    m |= u64::from(v) << l;
                }
                if wide {
                    self.write_lanes64(i.dst, &r)?;
                } else {
                    let mut r32 = [0u32; MAX_LANES];
                    for (d, x) in r32.iter_mut().zip(&r) {
                        // CAST: f32 bits in the low half.
                        *d = *x as u32;
                    }
                    self.write_lanes(i.dst, &r32)?;
                }
                let exec = self.w.exec();
                self.write_mask(i.sdst, m & exec)
            }
            VDivFmasF32 => {
                let vcc = self.w.vcc();
                let mut a = [0u32; MAX_LANES];
                let mut b = [0u32; MAX_LANES];
                let mut c = [0u32; MAX_LANES];
                self.lanes32(i, 0, b32, &mut a)?;
                self.lanes32(i, 1, b32, &mut b)?;
                self.lanes32(i, 2, b32, &mut c)?;
                let mut r = [0u32; MAX_LANES];
                for l in 0..self.w.lanes {
                    let f = f32v(a[l]).mul_add(f32v(b[l]), f32v(c[l]));
                    let f = if vcc >> l & 1 == 1 {
                        let up = (c[l] >> 23) & 0xff > 127;
                        (f64::from(f) * if up { 2f64.powi(32) } else { 2f64.powi(-32) }) as f32
                    } else {
                        f
                    };
                    r[l] = f.to_bits();
                }
                self.write_lanes(i.dst, &r)
            }
            VDivFmasF64 => {
                let vcc = self.w.vcc();
                let mut s = [[0u64; MAX_LANES]; 3];
                for (k, sk) in s.iter_mut().enumerate() {
                    self.lanes64(i, k, Width::F64, sk)?;
                }
                let mut r = [0u64; MAX_LANES];
                for l in 0..self.w.lanes {
                    let (x, y, z) = (d64(s[0][l]), d64(s[1][l]), d64(s[2][l]));
                    let f = x.mul_add(y, z);
                    let f = if vcc >> l & 1 == 1 {
                        ldexp(f, if exp64(z) > 1023 { 64 } else { -64 })
                    } else {
                        f
                    };
                    r[l] = o64(f);
                }
                self.write_lanes64(i.dst, &r)
            }
            VDivFixupF32 => self.v3(i, b32, |q, d, n| {
                (div_fixup(
                    f64::from(f32v(q)),
                    f64::from(f32v(d)),
                    f64::from(f32v(n)),
                    255,
                    exp32of,
                ) as f32)
                    .to_bits()
            }),
            VDivFixupF64 => self.v64(i, [Width::F64; 3], |q, d, n| {
                o64(div_fixup(d64(q), d64(d), d64(n), 2047, exp64))
            }),
            VFmaF16 | VFmamkF16 | VFmaakF16 => self.v3(i, f16, |x, y, z| {
                f32_to_f16(
                    (f64::from(f16_to_f32(x))
                        .mul_add(f64::from(f16_to_f32(y)), f64::from(f16_to_f32(z))))
                        as f32,
                    false,
                )
            }),
            VFmacF64 => {
                let mut i2 = *i;
                i2.src[2] = i.dst;
                self.v64(&i2, [Width::F64; 3], |x, y, z| {
                    o64(d64(x).mul_add(d64(y), d64(z)))
                })
            }
            VCndmaskB32 => {
                let mask = self.read_mask(i.src[2], i.lit)?;
                let mut a = [0u32; MAX_LANES];
                let mut b = [0u32; MAX_LANES];
                self.lanes32(i, 0, b32, &mut a)?;
                self.lanes32(i, 1, b32, &mut b)?;
                let mut r = [0u32; MAX_LANES];
                for l in 0..self.w.lanes {
                    r[l] = if mask >> l & 1 == 1 { b[l] } else { a[l] };
                }
                self.write_lanes(i.dst, &r)
            }
            VAddF32 => self.v2(i, b32, |x, y| (f32v(x) + f32v(y)).to_bits()),
            VSubF32 => self.v2(i, b32, |x, y| (f32v(x) - f32v(y)).to_bits()),
            VSubrevF32 => self.v2(i, b32, |x, y| (f32v(y) - f32v(x)).to_bits()),
            VMulF32 => self.v2(i, b32, |x, y| (f32v(x) * f32v(y)).to_bits()),
            VMinF32 => self.v2(i, b32, |x, y| fmin(f32v(x), f32v(y)).to_bits()),
            VMaxF32 => self.v2(i, b32, |x, y| fmax(f32v(x), f32v(y)).to_bits()),
            VLdexpF32 => self.v2(i, b32, |x, e| {
                (ldexp(f64::from(f32v(x)), e as i32) as f32).to_bits()
            }),
            VMulI32I24 => self.v2(i, b32, |x, y| (sext24(x) * sext24(y)) as u32),
            VMulHiI32I24 => self.v2(i, b32, |x, y| ((sext24(x) * sext24(y)) >> 32) as u32),
            VMulU32U24 => self.v2(i, b32, |x, y| (x & 0xff_ffff).wrapping_mul(y & 0xff_ffff)),
            VMulHiU32U24 => self.v2(i, b32, |x, y| {
                ((u64::from(x & 0xff_ffff) * u64::from(y & 0xff_ffff)) >> 32) as u32
            }),
            VMinI32 => self.v2(i, b32, |x, y| (x as i32).min(y as i32) as u32),
            VMaxI32 => self.v2(i, b32, |x, y| (x as i32).max(y as i32) as u32),
            VMinU32 => self.v2(i, b32, u32::min),
            VMaxU32 => self.v2(i, b32, u32::max),
            VLshlrevB32 => self.v2(i, b32, |s, x| x << (s & 31)),
            VLshrrevB32 => self.v2(i, b32, |s, x| x >> (s & 31)),
            VAshrrevI32 => self.v2(i, b32, |s, x| ((x as i32) >> (s & 31)) as u32),
            VAndB32 => self.v2(i, b32, |x, y| x & y),
            VOrB32 => self.v2(i, b32, |x, y| x | y),
            VXorB32 => self.v2(i, b32, |x, y| x ^ y),
            VXnorB32 => self.v2(i, b32, |x, y| !(x ^ y)),
            VAddNcU32 => self.v2(i, b32, u32::wrapping_add),
            VSubNcU32 => self.v2(i, b32, u32::wrapping_sub),
            VSubrevNcU32 => self.v2(i, b32, |x, y| y.wrapping_sub(x)),
            VAddNcI32 => self.v2(i, b32, |x, y| (x as i32).wrapping_add(y as i32) as u32),
            VSubNcI32 => self.v2(i, b32, |x, y| (x as i32).wrapping_sub(y as i32) as u32),
            VMulLoU32 => self.v2(i, b32, u32::wrapping_mul),
            VMulHiU32 => self.v2(i, b32, |x, y| ((u64::from(x) * u64::from(y)) >> 32) as u32),
            VMulHiI32 => self.v2(i, b32, |x, y| {
                ((i64::from(x as i32) * i64::from(y as i32)) >> 32) as u32
            }),
            VBfmB32 => self.v2(i, b32, |x, y| (((1u64 << (x & 31)) - 1) as u32) << (y & 31)),
            VBcntU32B32 => self.v2(i, b32, |x, y| x.count_ones().wrapping_add(y)),
            VMbcntLoU32B32 | VMbcntHiU32B32 => {
                let hi = i.op == VMbcntHiU32B32;
                let mut a = [0u32; MAX_LANES];
                let mut b = [0u32; MAX_LANES];
                self.lanes32(i, 0, b32, &mut a)?;
                self.lanes32(i, 1, b32, &mut b)?;
                let mut r = [0u32; MAX_LANES];
                for l in 0..self.w.lanes {
                    let below = if hi {
                        if l <= 32 {
                            0
                        } else {
                            ((1u64 << (l - 32)) - 1) as u32
                        }
                    } else if l >= 32 {
                        u32::MAX
                    } else {
                        ((1u64 << l) - 1) as u32
                    };
                    r[l] = (a[l] & below).count_ones().wrapping_add(b[l]);
                }
                self.write_lanes(i.dst, &r)
            }
            VCvtPkRtzF16F32 => self.v2(i, b32, |x, y| {
                f32_to_f16(f32v(x), true) | (f32_to_f16(f32v(y), true) << 16)
            }),
            VAddF16 => self.v2(i, f16, |x, y| {
                f32_to_f16(f16_to_f32(x) + f16_to_f32(y), false)
            }),
            VSubF16 => self.v2(i, f16, |x, y| {
                f32_to_f16(f16_to_f32(x) - f16_to_f32(y), false)
            }),
            VMulF16 => self.v2(i, f16, |x, y| {
                f32_to_f16(f16_to_f32(x) * f16_to_f32(y), false)
            }),
            VMaxF16 => self.v2(i, f16, |x, y| {
                f32_to_f16(fmax(f16_to_f32(x), f16_to_f32(y)), false)
            }),
            VMinF16 => self.v2(i, f16, |x, y| {
                f32_to_f16(fmin(f16_to_f32(x), f16_to_f32(y)), false)
            }),
            VFmacF16 => {
                let mut i2 = *i;
                i2.src[2] = i.dst;
                self.v3(&i2, f16, |x, y, z| {
                    f32_to_f16(
                        (f64::from(f16_to_f32(x))
                            .mul_add(f64::from(f16_to_f32(y)), f64::from(f16_to_f32(z))))
                            as f32,
                        false,
                    )
                })
            }
            VFfbhU32 => self.v1(
                i,
                b32,
                |x| if x == 0 { u32::MAX } else { x.leading_zeros() },
            ),
            VFfblB32 => self.v1(
                i,
                b32,
                |x| if x == 0 { u32::MAX } else { x.trailing_zeros() },
            ),
            VMacF32 => {
                // Unfused: the product rounds before the add.
                let mut i2 = *i;
                i2.src[2] = i.dst;
                self.v3(&i2, b32, |x, y, z| (f32v(x) * f32v(y) + f32v(z)).to_bits())
            }
            VFmacF32 => {
                let mut i2 = *i;
                i2.src[2] = i.dst;
                self.v3(&i2, b32, |x, y, z| {
                    f32v(x).mul_add(f32v(y), f32v(z)).to_bits()
                })
            }
            VFmaF32 | VFmamkF32 | VFmaakF32 => self.v3(i, b32, |x, y, z| {
                f32v(x).mul_add(f32v(y), f32v(z)).to_bits()
            }),
            VBfeU32 => self.v3(i, b32, bfe),
            VBfeI32 => self.v3(i, b32, bfe_i),
            VBfiB32 => self.v3(i, b32, |m, x, y| (m & x) | (!m & y)),
            VAlignbitB32 => self.v3(i, b32, |x, y, s| {
                (((u64::from(x) << 32) | u64::from(y)) >> (s & 31)) as u32
            }),
            VAlignbyteB32 => self.v3(i, b32, |x, y, s| {
                (((u64::from(x) << 32) | u64::from(y)) >> ((s & 3) * 8)) as u32
            }),
            VMin3F32 => self.v3(i, b32, |x, y, z| {
                fmin(fmin(f32v(x), f32v(y)), f32v(z)).to_bits()
            }),
            VMax3F32 => self.v3(i, b32, |x, y, z| {
                fmax(fmax(f32v(x), f32v(y)), f32v(z)).to_bits()
            }),
            VMed3F32 => self.v3(i, b32, |x, y, z| {
                let (a, b, c) = (f32v(x), f32v(y), f32v(z));
                fmax(fmin(a, b), fmin(fmax(a, b), c)).to_bits()
            }),
            VMin3I32 => self.v3(i, b32, |x, y, z| {
                (x as i32).min(y as i32).min(z as i32) as u32
            }),
            VMax3I32 => self.v3(i, b32, |x, y, z| {
                (x as i32).max(y as i32).max(z as i32) as u32
            }),
            VMed3I32 => self.v3(i, b32, |x, y, z| {
                let (a, b, c) = (x as i32, y as i32, z as i32);
                a.min(b).max(a.max(b).min(c)) as u32
            }),
            VMin3U32 => self.v3(i, b32, |x, y, z| x.min(y).min(z)),
            VMax3U32 => self.v3(i, b32, |x, y, z| x.max(y).max(z)),
            VMed3U32 => self.v3(i, b32, |a, b, c| a.min(b).max(a.max(b).min(c))),
            VXor3B32 => self.v3(i, b32, |x, y, z| x ^ y ^ z),
            VOr3B32 => self.v3(i, b32, |x, y, z| x | y | z),
            VAndOrB32 => self.v3(i, b32, |x, y, z| (x & y) | z),
            VLshlOrB32 => self.v3(i, b32, |x, s, z| (x << (s & 31)) | z),
            VLshlAddU32 => self.v3(i, b32, |x, s, z| (x << (s & 31)).wrapping_add(z)),
            VAddLshlU32 => self.v3(i, b32, |x, y, s| x.wrapping_add(y) << (s & 31)),
            VAdd3U32 => self.v3(i, b32, |x, y, z| x.wrapping_add(y).wrapping_add(z)),
            VXadU32 => self.v3(i, b32, |x, y, z| (x ^ y).wrapping_add(z)),
            VMadU32U24 => self.v3(i, b32, |x, y, z| {
                (x & 0xff_ffff).wrapping_mul(y & 0xff_ffff).wrapping_add(z)
            }),
            VMadI32I24 => self.v3(i, b32, |x, y, z| {
                ((sext24(x) * sext24(y)) as u32).wrapping_add(z)
            }),
            VPermB32 => self.v3(i, b32, |x, y, sel| {
                let s = (u64::from(x) << 32) | u64::from(y);
                (0..4).fold(0u32, |acc, k| {
                    acc | (perm_byte(s, (sel >> (8 * k)) & 0xff) << (8 * k))
                })
            }),
            VAddCoU32 => self.vcarry(i, |x, y, _| x.overflowing_add(y)),
            VSubCoU32 => self.vcarry(i, |x, y, _| (x.wrapping_sub(y), y > x)),
            VSubrevCoU32 => self.vcarry(i, |x, y, _| (y.wrapping_sub(x), x > y)),
            VAddCoCiU32 => self.vcarry(i, |x, y, c| {
                let s = u64::from(x) + u64::from(y) + u64::from(c);
                (s as u32, s >> 32 != 0)
            }),
            VSubCoCiU32 => self.vcarry(i, |x, y, c| {
                let t = u64::from(y) + u64::from(c);
                (
                    x.wrapping_sub(y).wrapping_sub(u32::from(c)),
                    t > u64::from(x),
                )
            }),
            VSubrevCoCiU32 => self.vcarry(i, |x, y, c| {
                let t = u64::from(x) + u64::from(c);
                (
                    y.wrapping_sub(x).wrapping_sub(u32::from(c)),
                    t > u64::from(y),
                )
            }),
            VCmpF16 | VCmpF32 | VCmpF64 | VCmpI16 | VCmpU16 | VCmpI32 | VCmpU32 | VCmpI64
            | VCmpU64 | VCmpClassF32 | VCmpClassF64 => self.vcmp(i),
            _ => Err(self.unsupported(i)),
        }
    }

    // ---- memory ----

    fn lds_range(&self, addr: u64, n: usize) -> Result<core::ops::Range<usize>, IsaError> {
        let a = usize::try_from(addr).unwrap_or(usize::MAX);
        match a.checked_add(n) {
            Some(end) if end <= self.lds.len() => Ok(a..end),
            _ => Err(self.err(&format!(
                "LDS access of {n} bytes at {addr:#x} beyond the {} bytes COMPUTE_PGM_RSRC2.LDS_SIZE grants",
                self.lds.len()
            ))),
        }
    }

    fn ds(&mut self, i: &Inst) -> Result<(), IsaError> {
        use Op::*;
        if i.op == DsNop {
            return Ok(());
        }
        let n = self.w.lanes;
        let mut addr = [0u32; MAX_LANES];
        self.lanes32(i, 0, Width::B32, &mut addr)?;
        let exec = self.w.exec();
        // CAST: non-negative offsets.
        let off0 = i.imm as u32;
        let off1 = u32::from(i.sub);
        let (size, two, stride) = match i.op {
            DsStoreB8 | DsLoadU8 | DsLoadI8 => (1usize, false, 0u32),
            DsStoreB16 | DsLoadU16 | DsLoadI16 => (2, false, 0),
            DsStoreB64 | DsLoadB64 => (8, false, 0),
            DsStoreB96 | DsLoadB96 => (12, false, 0),
            DsStoreB128 | DsLoadB128 => (16, false, 0),
            DsStore2B32 | DsLoad2B32 => (4, true, 4),
            DsStore2St64B32 | DsLoad2St64B32 => (4, true, 256),
            DsStore2B64 | DsLoad2B64 => (8, true, 8),
            _ => (4, false, 0),
        };
        let dwords = size.div_ceil(4);
        let is_load = matches!(
            i.op,
            DsLoadB32
                | DsLoad2B32
                | DsLoad2St64B32
                | DsLoadI8
                | DsLoadU8
                | DsLoadI16
                | DsLoadU16
                | DsLoadB64
                | DsLoad2B64
                | DsLoadB96
                | DsLoadB128
        );
        let is_store = matches!(
            i.op,
            DsStoreB8
                | DsStoreB16
                | DsStoreB32
                | DsStoreB64
                | DsStoreB96
                | DsStoreB128
                | DsStore2B32
                | DsStore2St64B32
                | DsStore2B64
        );
        let parts = if two { 2 } else { 1 };
        if is_load {
            let d = self.vreg(i.dst, dwords * parts)?;
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                for p in 0..parts {
                    let a = if two {
                        u64::from(addr[l])
                            + u64::from(if p == 0 { off0 } else { off1 }) * u64::from(stride)
                    } else {
                        u64::from(addr[l]) + u64::from(off0)
                    };
                    let r = self.lds_range(a, size)?;
                    let mut b = [0u8; 16];
                    b[..size].copy_from_slice(&self.lds[r]);
                    let vals: [u32; 4] = core::array::from_fn(|k| {
                        u32::from_le_bytes([b[4 * k], b[4 * k + 1], b[4 * k + 2], b[4 * k + 3]])
                    });
                    let v0 = match i.op {
                        DsLoadI8 => b[0] as i8 as i32 as u32,
                        DsLoadI16 => i16::from_le_bytes([b[0], b[1]]) as i32 as u32,
                        _ => vals[0],
                    };
                    for (k, &val) in vals.iter().enumerate().take(dwords) {
                        let v = if k == 0 { v0 } else { val };
                        if let Some(x) = self.w.v.get_mut(d + (p * dwords + k) * n + l) {
                            *x = v;
                        }
                    }
                }
            }
            return Ok(());
        }
        // Data operands.
        let d0 = if i.src[1] != NONE {
            self.vreg(i.src[1], dwords)?
        } else {
            0
        };
        let d1 = if i.src[2] != NONE {
            self.vreg(i.src[2], dwords)?
        } else {
            0
        };
        if is_store {
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                for p in 0..parts {
                    let a = if two {
                        u64::from(addr[l])
                            + u64::from(if p == 0 { off0 } else { off1 }) * u64::from(stride)
                    } else {
                        u64::from(addr[l]) + u64::from(off0)
                    };
                    let base = if p == 0 { d0 } else { d1 };
                    let mut b = [0u8; 16];
                    for k in 0..dwords {
                        let v = self.w.v.get(base + k * n + l).copied().unwrap_or(0);
                        b[4 * k..4 * k + 4].copy_from_slice(&v.to_le_bytes());
                    }
                    let r = self.lds_range(a, size)?;
                    self.lds[r].copy_from_slice(&b[..size]);
                }
            }
            return Ok(());
        }
        // Atomics on 32 bits.
        let rtn = i.dst != NONE;
        let dst = if rtn {
            Some(self.vreg(i.dst, 1)?)
        } else {
            None
        };
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let a = u64::from(addr[l]) + u64::from(off0);
            let r = self.lds_range(a, 4)?;
            let old = u32::from_le_bytes([
                self.lds[r.start],
                self.lds[r.start + 1],
                self.lds[r.start + 2],
                self.lds[r.start + 3],
            ]);
            let x = self.w.v.get(d0 + l).copied().unwrap_or(0);
            let y = self.w.v.get(d1 + l).copied().unwrap_or(0);
            let new = match i.op {
                DsAddU32 | DsAddRtnU32 => old.wrapping_add(x),
                DsSubU32 | DsSubRtnU32 => old.wrapping_sub(x),
                DsMinI32 => (old as i32).min(x as i32) as u32,
                DsMaxI32 => (old as i32).max(x as i32) as u32,
                DsMinU32 | DsMinRtnU32 => old.min(x),
                DsMaxU32 | DsMaxRtnU32 => old.max(x),
                DsAndB32 => old & x,
                DsOrB32 => old | x,
                DsXorB32 => old ^ x,
                DsSwapRtnB32 => x,
                // ds_cmpstore: data0 is the new value, data1 the compare value (gfx11).
                DsCmpswapRtnB32 => {
                    if old == y {
                        x
                    } else {
                        old
                    }
                }
                _ => return Err(self.unsupported(i)),
            };
            self.lds[r].copy_from_slice(&new.to_le_bytes());
            if let Some(d) = dst {
                if let Some(v) = self.w.v.get_mut(d + l) {
                    *v = old;
                }
            }
        }
        Ok(())
    }

    /// MUBUF loads and stores through the buffer resource (V#) in four SGPRs: raw, or
    /// swizzled with ADD_TID as the scratch V# is (gfx9 layout, `hcq_core::rsrc`).
    fn mubuf(&mut self, i: &Inst) -> Result<(), IsaError> {
        use Op::*;
        let n = self.w.lanes;
        let (dwords, load) = match i.op {
            BufferLoadDword => (1, true),
            BufferLoadDwordx2 => (2, true),
            BufferLoadDwordx4 => (4, true),
            BufferStoreDword => (1, false),
            BufferStoreDwordx2 => (2, false),
            BufferStoreDwordx4 => (4, false),
            _ => return Err(self.unsupported(i)),
        };
        let r = i.src[2];
        let v = [
            self.s32(r, 0)?,
            self.s32(r + 1, 0)?,
            self.s32(r + 2, 0)?,
            self.s32(r + 3, 0)?,
        ];
        let base = u64::from(v[0]) | (u64::from(v[1] & 0xffff) << 32);
        let stride = u64::from((v[1] >> 16) & 0x3fff);
        let swizzle = v[1] >> 31 == 1;
        let num_records = u64::from(v[2]);
        let add_tid = (v[3] >> 23) & 1 == 1;
        let index_stride = 8u64 << ((v[3] >> 21) & 3);
        let elem = 2u64 << ((v[3] >> 19) & 3);
        let soff = u64::from(self.s32(i.sdst, i.lit)?);
        let mut voff = [0u32; MAX_LANES];
        if i.src[0] != NONE {
            self.lanes32(i, 0, Width::B32, &mut voff)?;
        }
        let exec = self.w.exec();
        let data = if load {
            self.vreg(i.dst, dwords)?
        } else {
            self.vreg(i.src[1], dwords)?
        };
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            for k in 0..dwords {
                // CAST: offsets are 32-bit.
                let off = u64::from(i.imm as u32) + u64::from(voff[l]) + 4 * k as u64;
                let index = if add_tid { l as u64 } else { 0 };
                let boff = if swizzle {
                    let (imsb, ilsb) = (index / index_stride, index % index_stride);
                    let (omsb, olsb) = (off / elem, off % elem);
                    (imsb * stride + omsb * elem) * index_stride + ilsb * elem + olsb
                } else {
                    off + index * stride
                };
                if boff + 4 > num_records {
                    return Err(self.err(&format!(
                        "{} of lane {l} at buffer offset {boff:#x} beyond the V#'s NUM_RECORDS {num_records:#x}",
                        i.op.name()
                    )));
                }
                let va = base.wrapping_add(soff).wrapping_add(boff);
                let slot = data + k * n + l;
                if load {
                    let mut b = [0u8; 4];
                    self.mem
                        .read(va, &mut b, Access::Read)
                        .map_err(IsaError::Vm)?;
                    if let Some(x) = self.w.v.get_mut(slot) {
                        *x = u32::from_le_bytes(b);
                    }
                } else {
                    let x = self.w.v.get(slot).copied().unwrap_or(0);
                    self.mem.write(va, &x.to_le_bytes()).map_err(IsaError::Vm)?;
                }
            }
        }
        Ok(())
    }

    /// Per-lane address of a FLAT/GLOBAL instruction.
    fn global_addrs(&self, i: &Inst, out: &mut [u64; MAX_LANES]) -> Result<(), IsaError> {
        // CAST: sign-extended offset.
        let off = i.imm as i64 as u64;
        if i.src[2] != NONE {
            let base = self.s64(i.src[2], 0)?;
            let mut v = [0u32; MAX_LANES];
            self.lanes32(i, 0, Width::B32, &mut v)?;
            for (o, x) in out.iter_mut().zip(&v) {
                *o = base.wrapping_add(u64::from(*x)).wrapping_add(off);
            }
        } else {
            self.lanes64(i, 0, Width::B64, out)?;
            for o in out.iter_mut() {
                *o = o.wrapping_add(off);
            }
        }
        Ok(())
    }

    /// Per-lane private (scratch) offset of a SCRATCH instruction.
    fn scratch_addrs(&self, i: &Inst, out: &mut [u64; MAX_LANES]) -> Result<(), IsaError> {
        // CAST: sign-extended offset.
        let mut base = i.imm as i64 as u64;
        if i.src[2] != NONE {
            base = base.wrapping_add(u64::from(self.s32(i.src[2], 0)?));
        }
        let mut v = [0u32; MAX_LANES];
        if i.src[0] != NONE {
            self.lanes32(i, 0, Width::B32, &mut v)?;
        }
        for (o, x) in out.iter_mut().zip(&v) {
            *o = base.wrapping_add(u64::from(*x));
        }
        Ok(())
    }

    /// The GPU address of private byte `off` of `lane` (swizzled per dword across the wave,
    /// as the hardware lays out scratch), after the bounds check.
    fn scratch_va(&self, off: u64, size: u64, lane: usize) -> Result<u64, IsaError> {
        let sc = &self.l.scratch;
        let lanes = self.w.lanes as u64;
        let per_lane = sc.wave_bytes / lanes;
        if sc.wave_bytes == 0 || off.checked_add(size).is_none_or(|e| e > per_lane) {
            return Err(self.err(&format!(
                "scratch access of {size} bytes at private offset {off:#x} beyond the wave's slot ({per_lane} bytes per lane from COMPUTE_TMPRING_SIZE)"
            )));
        }
        let wave_base = sc
            .base
            .wrapping_add(self.w.scratch_slot.wrapping_mul(sc.wave_bytes));
        Ok(wave_base.wrapping_add((off / 4) * 4 * lanes + lane as u64 * 4 + off % 4))
    }

    fn flat(&mut self, i: &Inst) -> Result<(), IsaError> {
        use Op::*;
        let n = self.w.lanes;
        let exec = self.w.exec();
        if matches!(i.op, GlobalInv | GlobalWb) {
            return Ok(());
        }
        let mut addr = [0u64; MAX_LANES];
        let scratch = i.sub == SEG_SCRATCH;
        if scratch {
            self.scratch_addrs(i, &mut addr)?;
        } else {
            debug_assert!(i.sub == SEG_GLOBAL || i.sub == SEG_FLAT);
            self.global_addrs(i, &mut addr)?;
        }
        let size: usize = match i.op {
            MLoadU8 | MLoadI8 | MStoreB8 => 1,
            MLoadU16 | MLoadI16 | MStoreB16 => 2,
            MLoadB64 | MStoreB64 | MAtomicAddU64 | MAtomicSwapB64 => 8,
            MAtomicCmpswapB64 => 8,
            MLoadB96 | MStoreB96 => 12,
            MLoadB128 | MStoreB128 => 16,
            _ => 4,
        };
        let dwords = size.div_ceil(4);
        let load = matches!(
            i.op,
            MLoadU8 | MLoadI8 | MLoadU16 | MLoadI16 | MLoadB32 | MLoadB64 | MLoadB96 | MLoadB128
        );
        let store = matches!(
            i.op,
            MStoreB8 | MStoreB16 | MStoreB32 | MStoreB64 | MStoreB96 | MStoreB128
        );
        if load {
            let d = self.vreg(i.dst, dwords)?;
            // Fast path: every lane live and the lanes' addresses consecutive.
            let full = exec == self.w.lane_mask();
            if !scratch
                && full
                && size >= 4
                && (1..n).all(|l| addr[l] == addr[0].wrapping_add((l * size) as u64))
            {
                let mut buf = [0u8; MAX_LANES * 16];
                let total = n * size;
                self.mem
                    .read(addr[0], &mut buf[..total], Access::Read)
                    .map_err(IsaError::Vm)?;
                for l in 0..n {
                    for k in 0..dwords {
                        let p = l * size + 4 * k;
                        let v = u32::from_le_bytes([buf[p], buf[p + 1], buf[p + 2], buf[p + 3]]);
                        if let Some(x) = self.w.v.get_mut(d + k * n + l) {
                            *x = v;
                        }
                    }
                }
                return Ok(());
            }
            if scratch && full && size % 4 == 0 && (1..n).all(|l| addr[l] == addr[0]) {
                // Every lane at the same private offset: each dword is one contiguous row of
                // the swizzled wave slot.
                for k in 0..dwords {
                    let va = self.scratch_va(addr[0].wrapping_add(4 * k as u64), 4, 0)?;
                    self.scratch_va(addr[0].wrapping_add(4 * k as u64), 4, n - 1)?;
                    let mut buf = [0u8; MAX_LANES * 4];
                    self.mem
                        .read(va, &mut buf[..n * 4], Access::Read)
                        .map_err(IsaError::Vm)?;
                    let row = self
                        .w
                        .v
                        .get_mut(d + k * n..d + (k + 1) * n)
                        .ok_or_else(|| self.at.msg("VGPR out of range"))?;
                    for (x, c) in row.iter_mut().zip(buf.chunks_exact(4)) {
                        *x = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                    }
                }
                return Ok(());
            }
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let mut b = [0u8; 16];
                if scratch {
                    for k in 0..dwords {
                        let chunk = (size - 4 * k).min(4);
                        let va =
                            self.scratch_va(addr[l].wrapping_add(4 * k as u64), chunk as u64, l)?;
                        self.mem
                            .read(va, &mut b[4 * k..4 * k + chunk], Access::Read)
                            .map_err(IsaError::Vm)?;
                    }
                } else {
                    self.mem
                        .read(addr[l], &mut b[..size], Access::Read)
                        .map_err(IsaError::Vm)?;
                }
                let v0 = match i.op {
                    MLoadU8 => u32::from(b[0]),
                    MLoadI8 => b[0] as i8 as i32 as u32,
                    MLoadU16 => u32::from(u16::from_le_bytes([b[0], b[1]])),
                    MLoadI16 => i16::from_le_bytes([b[0], b[1]]) as i32 as u32,
                    _ => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
                };
                for k in 0..dwords {
                    let v = if k == 0 {
                        v0
                    } else {
                        u32::from_le_bytes([b[4 * k], b[4 * k + 1], b[4 * k + 2], b[4 * k + 3]])
                    };
                    if let Some(x) = self.w.v.get_mut(d + k * n + l) {
                        *x = v;
                    }
                }
            }
            return Ok(());
        }
        let data = self.vreg(
            i.src[1],
            if i.op == MAtomicCmpswapB32 {
                2
            } else if i.op == MAtomicCmpswapB64 {
                4
            } else {
                dwords
            },
        )?;
        if store {
            let full = exec == self.w.lane_mask();
            if !scratch
                && full
                && size >= 4
                && (1..n).all(|l| addr[l] == addr[0].wrapping_add((l * size) as u64))
            {
                let mut buf = [0u8; MAX_LANES * 16];
                for l in 0..n {
                    for k in 0..dwords {
                        let v = self.w.v.get(data + k * n + l).copied().unwrap_or(0);
                        let p = l * size + 4 * k;
                        buf[p..p + 4].copy_from_slice(&v.to_le_bytes());
                    }
                }
                return self
                    .mem
                    .write(addr[0], &buf[..n * size])
                    .map_err(IsaError::Vm);
            }
            if scratch && full && size % 4 == 0 && (1..n).all(|l| addr[l] == addr[0]) {
                for k in 0..dwords {
                    let va = self.scratch_va(addr[0].wrapping_add(4 * k as u64), 4, 0)?;
                    self.scratch_va(addr[0].wrapping_add(4 * k as u64), 4, n - 1)?;
                    let mut buf = [0u8; MAX_LANES * 4];
                    let row = self
                        .w
                        .v
                        .get(data + k * n..data + (k + 1) * n)
                        .ok_or_else(|| self.err("VGPR out of range"))?;
                    for (c, x) in buf.chunks_exact_mut(4).zip(row) {
                        c.copy_from_slice(&x.to_le_bytes());
                    }
                    self.mem.write(va, &buf[..n * 4]).map_err(IsaError::Vm)?;
                }
                return Ok(());
            }
            let mut m = exec;
            while m != 0 {
                let l = m.trailing_zeros() as usize;
                m &= m - 1;
                let mut b = [0u8; 16];
                for k in 0..dwords {
                    let v = self.w.v.get(data + k * n + l).copied().unwrap_or(0);
                    b[4 * k..4 * k + 4].copy_from_slice(&v.to_le_bytes());
                }
                if scratch {
                    for k in 0..dwords {
                        let chunk = (size - 4 * k).min(4);
                        let va =
                            self.scratch_va(addr[l].wrapping_add(4 * k as u64), chunk as u64, l)?;
                        self.mem
                            .write(va, &b[4 * k..4 * k + chunk])
                            .map_err(IsaError::Vm)?;
                    }
                } else {
                    self.mem.write(addr[l], &b[..size]).map_err(IsaError::Vm)?;
                }
            }
            return Ok(());
        }
        // Atomics: read-modify-write per lane, in lane order.
        let rtn = i.dst != NONE;
        let dst = if rtn {
            Some(self.vreg(i.dst, dwords)?)
        } else {
            None
        };
        let mut m = exec;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let a = addr[l];
            if a % size as u64 != 0 {
                return Err(self.err(&format!("misaligned {}-byte atomic at {a:#x}", size)));
            }
            let get = |k: usize| self.w.v.get(data + k * n + l).copied().unwrap_or(0);
            let mut b = [0u8; 8];
            self.mem
                .read(a, &mut b[..size], Access::Read)
                .map_err(IsaError::Vm)?;
            let (old, new): (u64, u64) = if size == 8 {
                let old = u64::from_le_bytes(b);
                let x = u64::from(get(0)) | (u64::from(get(1)) << 32);
                let new = match i.op {
                    MAtomicAddU64 => old.wrapping_add(x),
                    MAtomicSwapB64 => x,
                    _ => {
                        let cmp = u64::from(get(2)) | (u64::from(get(3)) << 32);
                        if old == cmp { x } else { old }
                    }
                };
                (old, new)
            } else {
                let old = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                let x = get(0);
                let new = match i.op {
                    MAtomicSwapB32 => x,
                    MAtomicCmpswapB32 => {
                        if old == get(1) {
                            x
                        } else {
                            old
                        }
                    }
                    MAtomicAddU32 => old.wrapping_add(x),
                    MAtomicSubU32 => old.wrapping_sub(x),
                    MAtomicMinI32 => (old as i32).min(x as i32) as u32,
                    MAtomicMinU32 => old.min(x),
                    MAtomicMaxI32 => (old as i32).max(x as i32) as u32,
                    MAtomicMaxU32 => old.max(x),
                    MAtomicAndB32 => old & x,
                    MAtomicOrB32 => old | x,
                    MAtomicXorB32 => old ^ x,
                    MAtomicIncU32 => {
                        if old >= x {
                            0
                        } else {
                            old + 1
                        }
                    }
                    MAtomicDecU32 => {
                        if old == 0 || old > x {
                            x
                        } else {
                            old - 1
                        }
                    }
                    MAtomicAddF32 => (f32v(old) + f32v(x)).to_bits(),
                    _ => return Err(self.unsupported(i)),
                };
                (u64::from(old), u64::from(new))
            };
            self.mem
                .write(a, &new.to_le_bytes()[..size])
                .map_err(IsaError::Vm)?;
            if let Some(d) = dst {
                for k in 0..dwords {
                    if let Some(v) = self.w.v.get_mut(d + k * n + l) {
                        // CAST: halves of the old value.
                        *v = (old >> (32 * k)) as u32;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Exponent field of an f64.
fn exp64(x: f64) -> i32 {
    // CAST: 11-bit field.
    ((x.to_bits() >> 52) & 0x7ff) as i32
}

/// V_DIV_SCALE (RDNA3/CDNA3 pseudocode): the numerator or denominator, scaled when the
/// quotient would leave the normal range; the bool is the lane's VCC. `k` = (exponent-
/// difference limit, scale exponent, mantissa bits, bias) of the format.
fn div_scale(
    s0: f64,
    s1: f64,
    s2: f64,
    k: (i32, i32, i32),
    e: fn(f64) -> i32,
    sub: fn(f64) -> bool,
) -> (f64, bool) {
    let (diff, scale, mant) = k;
    if s2 == 0.0 || s1 == 0.0 {
        return (f64::NAN, false);
    }
    if e(s2) - e(s1) >= diff {
        return (if s0 == s1 { ldexp(s0, scale) } else { s0 }, true);
    }
    if sub(s1) {
        return (ldexp(s0, scale), false);
    }
    let inv = 1.0 / s1;
    let q = s2 / s1;
    if sub(inv) && !sub(q) {
        return (if s0 == s1 { ldexp(s0, scale) } else { s0 }, true);
    }
    if sub(inv) {
        return (ldexp(s0, -scale), false);
    }
    if sub(q) {
        return (if s0 == s2 { ldexp(s0, scale) } else { s0 }, true);
    }
    if e(s2) <= mant {
        return (ldexp(s0, scale), false);
    }
    (s0, false)
}

fn exp32of(x: f64) -> i32 {
    // CAST: the f32 exponent field.
    (((x as f32).to_bits() >> 23) & 0xff) as i32
}

fn sub32(x: f64) -> bool {
    (x as f32).is_subnormal()
}

/// V_DIV_FIXUP: special cases of a quotient `s2 / s1` whose estimate is `s0`.
fn div_fixup(s0: f64, s1: f64, s2: f64, max_exp: i32, e: fn(f64) -> i32) -> f64 {
    let neg = s1.is_sign_negative() != s2.is_sign_negative();
    let signed = |m: f64| if neg { -m } else { m };
    if s2.is_nan() {
        return s2;
    }
    if s1.is_nan() {
        return s1;
    }
    if (s1 == 0.0 && s2 == 0.0) || (s1.is_infinite() && s2.is_infinite()) {
        return f64::NAN;
    }
    if s1 == 0.0 || s2.is_infinite() {
        return signed(f64::INFINITY);
    }
    if s1.is_infinite() || s2 == 0.0 {
        return signed(0.0);
    }
    if e(s1) == max_exp {
        return signed(f64::INFINITY);
    }
    signed(s0.abs())
}

fn ldexp(x: f64, e: i32) -> f64 {
    let e = e.clamp(-2200, 2200);
    let mut r = x;
    let mut e = e;
    while e > 1000 {
        r *= 2f64.powi(1000);
        e -= 1000;
    }
    while e < -1000 {
        r *= 2f64.powi(-1000);
        e += 1000;
    }
    r * 2f64.powi(e)
}

fn frexp(x: f64) -> (f64, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    let mut e = x.abs().log2().floor() as i32 + 1;
    let mut m = x / 2f64.powi(e);
    if m.abs() >= 1.0 {
        m /= 2.0;
        e += 1;
    }
    if m.abs() < 0.5 {
        m *= 2.0;
        e -= 1;
    }
    (m, e)
}
