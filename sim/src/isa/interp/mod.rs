//! Executing decoded instructions: wave state, per-lane loops over fixed arrays (no
//! allocation per instruction), EXEC as a bitmask, workgroups run wave by wave up to each
//! barrier.

use super::decode::{
    self, AGPR, DualHalf, Enc, Inst, LIT, NONE, SEG_FLAT, SEG_GLOBAL, SEG_SCRATCH, VGPR,
};
use super::model::{self, Cost};
use super::ops::Op;
use super::{Isa, IsaError, Launch, Memory, Stats};
use crate::vm::Access;

mod buffer;
mod control;
mod dpp;
mod ext_num;
mod fast;
mod format;
mod fp8;
mod hang;
mod init;
mod lds;
mod mask;
mod matrix;
mod memory;
mod num;
mod oor;
mod operands;
mod packed;
mod parallel;
mod race;
mod scalar;
mod smem;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests16;
mod valu;
mod valu16;
mod valu_ext;
mod vinterp;

use num::*;
pub(crate) use parallel::run_dispatch;
use valu16::sdwa_select;

/// Most lanes a wave has.
pub const MAX_LANES: usize = 64;
type Lanes = [u32; MAX_LANES];

/// The mask of a wave of `lanes` lanes (32 or 64).
fn lane_bits(lanes: usize) -> u64 {
    if lanes == 64 { !0 } else { 0xffff_ffff }
}

/// What registers the hardware leaves undefined start as (never zero).
pub const UNDEFINED: u32 = 0xBAAD_F00D;

/// Instructions decoded so far in one dispatch, by word offset from the program address.
pub(crate) struct CodeCache {
    slots: Vec<Option<Entry>>,
}

/// A decoded instruction, its modelled cost, its pre-resolved fast form ([`fast`]) and
/// what the loop does with it besides running it.
#[derive(Clone)]
struct Entry {
    inst: Inst,
    cost: Cost,
    quick: Option<fast::Fast>,
    kind: Kind,
}

/// How `run_wave` counts an instruction: the encoding and op class, resolved at decode.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A vector instruction: counted per active lane, subject to gfx9's VSKIP and index mode.
    Vector,
    /// A scalar (SALU, SMEM) instruction: counted once.
    Scalar,
    /// A scalar instruction without architectural effect ([`waits_only`]): counted, then
    /// skipped.
    Wait,
}

impl Kind {
    fn of(i: &Inst) -> Self {
        if matches!(
            i.enc,
            Enc::Sop1 | Enc::Sop2 | Enc::Sopk | Enc::Sopc | Enc::Sopp | Enc::Smem
        ) {
            if waits_only(i.op) {
                Kind::Wait
            } else {
                Kind::Scalar
            }
        } else {
            Kind::Vector
        }
    }
}

/// The scalar data cache of one dispatch: 64-byte lines of memory that SMEM loads read. As
/// the hardware's K$, it is not coherent with vector stores; `s_dcache_inv`/`s_gl1_inv`
/// empty it, and every dispatch starts with it empty.
pub(crate) struct KCache {
    lines: Vec<(u64, [u8; 64])>,
    /// Bytes the kernel used from filled lines and not yet reported to [`Memory::used`]: one
    /// range `lo..hi` that grows while uses touch or overlap it (a loop's scalar loads walk an
    /// array), reported when a use falls outside it and when the dispatch ends
    /// ([`KCache::flush_used`]). What is reported is the same union of bytes as one report
    /// per load, without a call (and the race recorder's lock) per load.
    used: Option<(u64, u64)>,
}

/// Lines the scalar cache holds (oldest replaced first).
const KCACHE_LINES: usize = 16;

impl KCache {
    pub(crate) fn new() -> Self {
        Self {
            lines: Vec::new(),
            used: None,
        }
    }

    /// Notes that the kernel used `n` bytes at `a` (see [`KCache::used`]).
    #[inline]
    fn note_used(&mut self, mem: &dyn Memory, a: u64, n: usize) {
        // CAST: usize -> u64 widens.
        let (lo, hi) = (a, a.saturating_add(n as u64));
        match &mut self.used {
            Some((l, h)) if lo <= *h && hi >= *l => {
                *l = (*l).min(lo);
                *h = (*h).max(hi);
            }
            pending => {
                if let Some((l, h)) = pending.replace((lo, hi)) {
                    // CAST: a range of used bytes, below 2^64.
                    mem.used(l, (h - l) as usize);
                }
            }
        }
    }

    /// Reports the pending used range to `mem`.
    pub(crate) fn flush_used(&mut self, mem: &dyn Memory) {
        if let Some((l, h)) = self.used.take() {
            // CAST: a range of used bytes, below 2^64.
            mem.used(l, (h - l) as usize);
        }
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
                    if mem.fill(line, &mut data, Access::Read).is_err() {
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
            self.note_used(mem, a, n);
            done += n;
        }
        Ok(())
    }

    /// Writes `data` at `va` to memory (scalar stores and atomics write through) and into
    /// any line holding it, so later scalar loads of the wave read what it wrote.
    fn write(&mut self, mem: &dyn Memory, va: u64, data: &[u8]) -> Result<(), IsaError> {
        mem.write(va, data).map_err(IsaError::Vm)?;
        for (k, x) in data.iter().enumerate() {
            let a = va.wrapping_add(k as u64);
            if let Some((_, line)) = self.lines.iter_mut().find(|(l, _)| *l == a & !63) {
                // CAST: below 64.
                line[(a & 63) as usize] = *x;
            }
        }
        Ok(())
    }
}

/// Bytes past the LDS grant where a tolerated out-of-range access lands (zeroed before each:
/// a read gives 0, a write is lost); the widest LDS access is 16 bytes.
pub(crate) const LDS_SINK: usize = 64;

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
    /// Every lane's bit (`lanes` of them): EXEC and VCC are read through it.
    full: u64,
    id: u32,
    state: WaveState,
    scratch_slot: u64,
    /// The wave's serial clock ([`model`]).
    clock: model::WaveClock,
    /// The MODE hardware register (`s_setreg`/`s_getreg`, `s_round_mode`, `s_denorm_mode`):
    /// its FP_DENORM field (7:4) is what the VALU flushes denormals by; on gfx9 GPR_IDX_EN
    /// (27), VSKIP (28) and the fork/join stack pointer CSP (31:29) live here too.
    mode: u32,
    /// The exception flags a wave may write: TRAPSTS (gfx9, gfx11), EXCP_FLAG_USER (gfx12).
    trapsts: u32,
    /// Instructions this wave has executed since launch, held against [`Launch::budget`].
    executed: u64,
    /// Hang detection by lack of progress ([`hang`]).
    hang: hang::Watch,
    /// Whether an access the hardware tolerates faults ([`crate::isa::run_with`]).
    strict: bool,
    /// Such accesses since launch, and the first.
    oob: (u64, Option<crate::isa::OutOfRange>),
}

/// A workgroup's barrier: waves that signalled it since it last completed (gfx12's
/// S_BARRIER_SIGNAL_ISFIRST and S_GET_BARRIER_STATE read it), and its member count.
pub(crate) struct WgBarrier {
    signals: u32,
    members: u32,
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
        IsaError::Fault(format!("{}: {what} {}", self.l.isa.name(), self.place()))
    }

    /// `at kernel offset 0x.. (program address 0x..), wave W of workgroup [x, y, z]`.
    fn place(&self) -> String {
        format!(
            "at kernel offset {:#x} (program address {:#x}), wave {} of workgroup {:?}",
            self.pc.wrapping_sub(self.l.pgm),
            self.pc,
            self.wave,
            self.wg
        )
    }

    /// A page fault of this wave's instruction, with where it happened.
    fn locate(&self, e: IsaError) -> IsaError {
        match e {
            IsaError::Vm(v) => IsaError::VmAt(v, self.place()),
            e => e,
        }
    }
}

/// Where a dispatch's waves start taking scratch slots: the hardware may give a wave any slot
/// up to COMPUTE_TMPRING_SIZE.WAVES, so the simulator does not start at 0 (a scratch buffer
/// short of the programmed region would then go unnoticed by small launches) but at a spread
/// chosen from `HCQ_SIM_SEED` and the dispatch (program address, grid), the same on every run.
fn scratch_spread(l: &Launch) -> u64 {
    static SEED: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    // SimKfd::new refused a malformed value (check_env).
    let seed = *SEED.get_or_init(|| crate::config::env_seed().unwrap_or_default());
    // splitmix64 of the seed and the dispatch.
    let mut z = seed
        ^ l.pgm.rotate_left(17)
        ^ (u64::from(l.groups[0]) << 32 | u64::from(l.groups[1]) << 16 | u64::from(l.groups[2]));
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Runs workgroups `first..first + count` (linear, x fastest), using scratch slots
/// `slots.0..slots.0 + slots.1`; with `stored`, each workgroup's stores are added to it
/// ([`race`]). A fault comes with its workgroup's linear index.
fn run_range(
    l: &Launch,
    mem: &dyn Memory,
    first: u64,
    count: u64,
    slots: (u32, u32),
    strict: bool,
    mut stored: Option<&mut Vec<race::Stored>>,
) -> Result<Stats, (u64, IsaError)> {
    let track = stored.is_some().then(|| race::Track::new(mem, l));
    let mem: &dyn Memory = match &track {
        Some(t) => t,
        None => mem,
    };
    let mut cache = CodeCache::new();
    let mut kcache = KCache::new();
    let mut stats = Stats::default();
    let items: u32 = l.local.iter().product();
    let lanes = if l.wave64 { 64 } else { 32 };
    let nwaves = items.div_ceil(lanes);
    let mut waves: Vec<Wave> = (0..nwaves)
        .map(|id| Wave {
            s: [UNDEFINED; 128],
            scc: false,
            pc: l.pgm,
            // One row more than RSRC1 grants: DPP stages its permuted src0 there.
            v: vec![UNDEFINED; (l.vgprs as usize + 1) * lanes as usize],
            nvgpr: l.vgprs as usize,
            lanes: lanes as usize,
            full: lane_bits(lanes as usize),
            id,
            state: WaveState::Running,
            scratch_slot: 0,
            clock: model::WaveClock::default(),
            mode: 0,
            trapsts: 0,
            executed: 0,
            hang: hang::Watch::default(),
            strict,
            oob: (0, None),
        })
        .collect();
    // CAST: at most 64 KiB. The sink past the grant takes what a tolerated out-of-range
    // access reads and writes (`lds_range`).
    let mut lds = vec![0u8; l.lds_bytes as usize + LDS_SINK];
    let mut wave_counter: u64 = 0;
    let n_slots = u64::from(slots.1.max(1));
    let spread = scratch_spread(l) % n_slots;
    let (gx, gy) = (u64::from(l.groups[0]).max(1), u64::from(l.groups[1]).max(1));
    // A multi-XCC dispatch: each work-group runs as its XCC's share (`Launch::on_xcc`).
    let xccs = l.xcc.count.max(1);
    let per_xcc: Vec<Launch> = if xccs > 1 {
        (0..xccs).map(|k| l.on_xcc(k)).collect()
    } else {
        Vec::new()
    };
    let whole = l;
    for g in first..first + count {
        // CAST: g % xccs < xccs, a u32.
        let l = per_xcc.get((g % u64::from(xccs)) as usize).unwrap_or(whole);
        // CAST: each coordinate is below its u32 dimension.
        let (x, y, z) = (
            (g % gx) as u32,
            ((g / gx) % gy) as u32,
            (g / (gx * gy)) as u32,
        );
        lds.fill(0xA5);
        for w in &mut waves {
            w.scratch_slot = u64::from(slots.0) + (wave_counter + spread) % n_slots;
            wave_counter += 1;
            init::init_wave(l, w, [x, y, z], nwaves);
        }
        let r = run_workgroup(
            l,
            mem,
            (&mut cache, &mut kcache),
            &mut waves,
            &mut lds,
            [x, y, z],
            &mut stats,
        );
        for w in &mut waves {
            let (n, first) = core::mem::take(&mut w.oob);
            stats.out_of_range += n;
            stats.first_out_of_range = stats.first_out_of_range.or(first);
        }
        if let Err(e) = r {
            kcache.flush_used(mem);
            return Err((g, e));
        }
        if let (Some(t), Some(out)) = (&track, stored.as_deref_mut()) {
            t.end_group(g, out);
        }
    }
    kcache.flush_used(mem);
    Ok(stats)
}

impl Wave {
    pub(crate) fn reset(&mut self, pc: u64) {
        self.s.fill(UNDEFINED);
        self.v.fill(UNDEFINED);
        // SCC reads 0 at a wave's first instruction ([`init`]).
        self.scc = false;
        self.pc = pc;
        self.state = WaveState::Running;
        self.clock.reset();
        self.executed = 0;
        self.hang = hang::Watch::default();
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
    /// VGPR `r`'s lanes.
    pub(crate) fn v_row_mut(&mut self, r: usize) -> Option<&mut [u32]> {
        let n = self.lanes;
        self.v.get_mut(r * n..(r + 1) * n)
    }
    pub(crate) fn set_v(&mut self, r: usize, lane: usize, v: u32) {
        let n = self.lanes;
        if let Some(x) = self.v.get_mut(r * n + lane) {
            *x = v;
        }
    }
    #[inline]
    fn lane_mask(&self) -> u64 {
        self.full
    }
    #[inline]
    fn exec(&self) -> u64 {
        (u64::from(self.s[126]) | (u64::from(self.s[127]) << 32)) & self.lane_mask()
    }
    /// MODE.FP_DENORM keeps f32 denormals (mode 3: in and out; else they flush).
    #[inline]
    fn denorm32(&self) -> bool {
        (self.mode >> 4) & 3 == 3
    }
    /// MODE.FP_DENORM keeps f16/f64 denormals.
    #[inline]
    fn denorm16_64(&self) -> bool {
        (self.mode >> 6) & 3 == 3
    }
    #[inline]
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
    let mut bar = WgBarrier {
        signals: 0,
        // CAST: at most 1024 work-items, so at most 32 waves.
        members: waves.len() as u32,
    };
    loop {
        for w in waves.iter_mut() {
            if w.state == WaveState::Running {
                run_wave(l, mem, (cache, kcache, &mut bar), w, lds, wg, stats)?;
            }
        }
        if waves.iter().all(|w| w.state == WaveState::Done) {
            return Ok(());
        }
        // Every live wave waits at the barrier: it completes (its signal count resets) and
        // releases them.
        bar.signals = 0;
        for w in waves.iter_mut() {
            if w.state == WaveState::Barrier {
                w.state = WaveState::Running;
            }
        }
    }
}

/// Decodes the instruction at `pc` (fetching through `mem`) into its cache slot, and returns
/// the slot's index, or the decoded instruction itself when `pc` has no slot.
fn fetch(
    l: &Launch,
    mem: &dyn Memory,
    cache: &mut CodeCache,
    pc: u64,
    lanes: usize,
    at: &At<'_>,
) -> Result<Result<usize, Entry>, IsaError> {
    let off = pc.wrapping_sub(l.pgm);
    let slot = (off % 4 == 0 && off / 4 < CACHE_WORDS).then_some(off / 4);
    if pc % 4 != 0 {
        return Err(at.msg(&format!("instruction fetch from unaligned address {pc:#x}")));
    }
    let mut words = [0u32; 3];
    let mut got = 0;
    // The words inside pc's 64-byte line in one read (one I$ lookup); the rest, or all of
    // them when that read fails, word by word, so a fault names the first word that cannot
    // be fetched.
    // CAST: below 64, so at most 16 words.
    let in_line = (((64 - pc % 64) / 4) as usize).min(3);
    let mut b = [0u8; 12];
    if let Some(head) = b.get_mut(..4 * in_line)
        && mem.read(pc, head, Access::Execute).is_ok()
    {
        for (w, c) in words.iter_mut().zip(head.chunks_exact(4)) {
            *w = c.first_chunk::<4>().map_or(0, |c| u32::from_le_bytes(*c));
        }
        got = in_line;
    }
    for (k, w) in words.iter_mut().enumerate().skip(got) {
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
    let inst = decode::decode_for(l.isa, l.gfx940, &words).map_err(|u| {
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
    let entry = Entry {
        cost: model::cost(l.isa, lanes, &inst),
        quick: fast::classify(l, &inst),
        kind: Kind::of(&inst),
        inst,
    };
    if let Some(s) = slot {
        // CAST: below CACHE_WORDS.
        let s = s as usize;
        if cache.slots.len() <= s {
            cache.slots.resize(s + 1, None);
        }
        if let Some(x) = cache.slots.get_mut(s) {
            *x = Some(entry);
            return Ok(Ok(s));
        }
    }
    Ok(Err(entry))
}

fn run_wave(
    l: &Launch,
    mem: &dyn Memory,
    (cache, kcache, bar): (&mut CodeCache, &mut KCache, &mut WgBarrier),
    w: &mut Wave,
    lds: &mut [u8],
    wg: [u32; 3],
    stats: &mut Stats,
) -> Result<(), IsaError> {
    let cd = codes(l.isa);
    let at = At {
        l,
        wg,
        wave: w.id,
        pc: w.pc,
    };
    hang::resume(&mut w.hang, w.executed, l.budget);
    // What a watched wave's memory accesses go through ([`hang`]): installed while a window
    // is open, so an unwatched wave pays nothing for it.
    let watched = hang::Watched::new(mem);
    // One executor for the whole run: only the fault context's pc changes per instruction.
    let mut x = Exec {
        l,
        w,
        at,
        cd,
        mem,
        lds,
        kcache,
        bar,
    };
    let mut uncached: Entry;
    let mut indexed: Inst;
    while x.w.state == WaveState::Running {
        let pc = x.w.pc;
        x.at.pc = pc;
        // One bounds-checked lookup per instruction; a miss decodes and fills the slot. The
        // word index rotated: an unaligned offset's low bits land on top, far past any slot
        // (`fetch` then faults on it); beyond usize it is simply not cached.
        let idx = usize::try_from(pc.wrapping_sub(l.pgm).rotate_right(2)).unwrap_or(usize::MAX);
        let entry: &Entry = match cache.slots.get(idx) {
            Some(Some(c)) => c,
            _ => match fetch(l, mem, cache, pc, x.w.lanes, &x.at).map_err(|e| x.at.locate(e))? {
                Ok(s) => match cache.slots.get(s) {
                    Some(Some(c)) => c,
                    _ => return Err(x.at.msg("instruction cache slot vanished")),
                },
                Err(d) => {
                    uncached = d;
                    &uncached
                }
            },
        };
        // Hang detection and the user's budget, when the count reaches the next check.
        if x.w.executed >= x.w.hang.check_at {
            hang::tick(&mut x, &watched, &entry.inst)?;
        }
        let (i, cost, quick) = (&entry.inst, &entry.cost, &entry.quick);
        stats.wave_instructions += 1;
        x.w.executed += 1;
        stats.simd_cycles += u64::from(cost.cycles);
        x.w.clock.issue(cost);
        let next = pc.wrapping_add(u64::from(i.len));
        x.w.pc = next;
        if entry.kind != Kind::Vector {
            stats.lane_instructions += 1;
            if entry.kind == Kind::Wait {
                continue;
            }
        } else {
            let exec = x.w.exec();
            // Mostly every lane: no population count (a software one on baseline x86-64).
            let active = if exec == x.w.lane_mask() {
                // CAST: usize -> u64 widens.
                x.w.lanes as u64
            } else {
                u64::from(exec.count_ones())
            };
            stats.lane_instructions += active;
            stats.mem_bytes += active * u64::from(cost.lane_bytes);
            // gfx9 MODE: VSKIP skips vector instructions; GPR_IDX_EN offsets the VGPR operands
            // M0[15:12] selects by M0[7:0] (s_setvskip, s_set_gpr_idx_on).
            if x.w.mode & (control::MODE_VSKIP | control::MODE_GPR_IDX_EN) != 0
                && l.isa == Isa::Gfx9
            {
                if x.w.mode & control::MODE_VSKIP != 0 {
                    continue;
                }
                indexed = control::gpr_indexed(i, x.w.s[124]);
                x.step(&indexed, next)?;
                continue;
            }
        }
        if let Some(f) = quick
            && let Some(r) = x.fast(f, next)
        {
            r.map_err(|e| x.at.locate(e))?;
            continue;
        }
        if let Err(e) = x.step(i, next) {
            return Err(x.at.locate(e));
        }
    }
    let t = if x.w.state == WaveState::Done {
        x.w.clock.finish()
    } else {
        x.w.clock.t
    };
    stats.wave_cycles = stats.wave_cycles.max(t);
    Ok(())
}

/// Scalar instructions with no architectural effect in the interpreter (waits, scheduling
/// hints): counted, then skipped without dispatching them (`scalar` returns at once for these).
fn waits_only(op: Op) -> bool {
    use Op::*;
    matches!(
        op,
        SNop | SClause
            | SSetInstPrefetchDistance
            | SDelayAlu
            | SWaitcnt
            | SWaitcntDepctr
            | SSleep
            | SSetprio
            | SWaitcntVscnt
            | SWaitcntVmcnt
            | SWaitcntExpcnt
            | SWaitcntLgkmcnt
            | SWaitLoadcnt
            | SWaitStorecnt
            | SWaitSamplecnt
            | SWaitBvhcnt
            | SWaitExpcnt
            | SWaitDscnt
            | SWaitKmcnt
            | SWaitLoadcntDscnt
            | SWaitStorecntDscnt
            | SWaitAlu
    )
}

struct Exec<'a, 'b> {
    l: &'a Launch,
    w: &'a mut Wave,
    at: At<'b>,
    cd: Codes,
    mem: &'a dyn Memory,
    lds: &'a mut [u8],
    kcache: &'a mut KCache,
    /// The workgroup's barrier counts.
    bar: &'a mut WgBarrier,
}

/// Copies lanes `s` into `d` (the shorter length), as fixed-size moves for a wave's 32 or 64
/// lanes.
#[inline(always)]
fn copy_lanes(d: &mut [u32], s: &[u32]) {
    if let (Ok(d), Ok(s)) = (
        <&mut [u32; 32]>::try_from(&mut *d),
        <&[u32; 32]>::try_from(s),
    ) {
        *d = *s;
    } else if let (Ok(d), Ok(s)) = (
        <&mut [u32; 64]>::try_from(&mut *d),
        <&[u32; 64]>::try_from(s),
    ) {
        *d = *s;
    } else {
        for (d, s) in d.iter_mut().zip(s) {
            *d = *s;
        }
    }
}

/// One source operand, resolved for a lane loop.
#[derive(Clone, Copy)]
enum Src {
    /// VGPR at this offset in `v`.
    V(usize),
    /// The same value in every lane.
    C(u32),
}
