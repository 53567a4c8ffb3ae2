//! Operands: scalar and vector reads and writes, the lane loops every VALU operation
//! shares, and compares.

use super::*;

impl Exec<'_, '_> {
    pub(super) fn err(&self, what: &str) -> IsaError {
        self.at.msg(what)
    }

    pub(super) fn unsupported(&self, i: &Inst) -> IsaError {
        self.err(&format!(
            "unsupported instruction {} (word {:#010x}) in the simulator",
            i.op.name(),
            i.words[0]
        ))
    }

    // ---- scalar operands ----

    pub(super) fn sread(&self, code: u16, lit: u32, width: Width) -> Result<u64, IsaError> {
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

    #[inline(always)]
    pub(super) fn s32(&self, code: u16, lit: u32) -> Result<u32, IsaError> {
        if code < 128 && code != self.cd.null {
            return Ok(self.w.s[usize::from(code)]);
        }
        // CAST: 32-bit view.
        self.sread(code, lit, Width::B32).map(|v| v as u32)
    }

    pub(super) fn s64(&self, code: u16, lit: u32) -> Result<u64, IsaError> {
        self.sread(code, lit, Width::B64)
    }

    pub(super) fn swrite(&mut self, code: u16, v: u32) -> Result<(), IsaError> {
        if code == self.cd.null || code == NONE {
            return Ok(());
        }
        if code >= 128 || (108..=123).contains(&code) {
            return Err(self.err(&format!("scalar destination code {code} is not writable")));
        }
        self.w.s[usize::from(code)] = v;
        Ok(())
    }

    pub(super) fn swrite64(&mut self, code: u16, v: u64) -> Result<(), IsaError> {
        // CAST: halves of a u64.
        self.swrite(code, v as u32)?;
        if code != self.cd.null && code != NONE {
            self.swrite(code.saturating_add(1), (v >> 32) as u32)?;
        }
        Ok(())
    }

    /// A lane mask to an SGPR (pair in wave64).
    pub(super) fn write_mask(&mut self, code: u16, m: u64) -> Result<(), IsaError> {
        if self.w.lanes == 64 {
            self.swrite64(code, m)
        } else {
            // CAST: wave32 mask.
            self.swrite(code, m as u32)
        }
    }

    pub(super) fn read_mask(&self, code: u16, lit: u32) -> Result<u64, IsaError> {
        let m = if self.w.lanes == 64 {
            self.s64(code, lit)?
        } else {
            u64::from(self.s32(code, lit)?)
        };
        Ok(m & self.w.lane_mask())
    }

    // ---- vector operands ----

    #[inline]
    pub(super) fn vreg(&self, code: u16, n: usize) -> Result<usize, IsaError> {
        let r = usize::from(code.wrapping_sub(VGPR));
        if (VGPR..AGPR).contains(&code) && r + n <= self.w.nvgpr {
            return Ok(r * self.w.lanes);
        }
        if code >= AGPR && code != NONE {
            return self.areg(code, n);
        }
        Err(self.vreg_err(code, n))
    }

    #[cold]
    #[inline(never)]
    fn vreg_err(&self, code: u16, n: usize) -> IsaError {
        let Some(r) = code.checked_sub(VGPR).filter(|_| code != NONE) else {
            return self.err(&format!("operand code {code} is not a VGPR"));
        };
        let r = usize::from(r);
        self.err(&format!(
            "VGPR v{r}{} beyond the {} VGPRs COMPUTE_PGM_RSRC1 grants",
            if n > 1 {
                format!("..v{}", r + n - 1)
            } else {
                String::new()
            },
            self.w.nvgpr
        ))
    }

    /// The `n` lanes of the VGPR row at `o` (from [`Self::vreg`]).
    #[inline]
    pub(super) fn row(&self, o: usize) -> Result<&[u32], IsaError> {
        let n = self.w.lanes;
        match self.w.v.get(o..o + n) {
            Some(r) => Ok(r),
            None => Err(self.range_err()),
        }
    }

    #[cold]
    #[inline(never)]
    pub(super) fn range_err(&self) -> IsaError {
        self.err("VGPR out of range")
    }

    /// AGPR `code` (gfx90a/gfx942): VGPR `accum_offset + N` of the unified file, within the
    /// RSRC1 budget like any VGPR.
    fn areg(&self, code: u16, n: usize) -> Result<usize, IsaError> {
        let Some(a) = code.checked_sub(AGPR).filter(|_| code != NONE) else {
            return Err(self.err(&format!("operand code {code} is not a VGPR")));
        };
        let a = usize::from(a);
        // CAST: at most (63 + 1) * 4.
        let base = self.l.accum_offset as usize;
        if base + a + n > self.w.nvgpr {
            return Err(self.err(&format!(
                "AGPR a{a}{} is VGPR v{} of the unified file (COMPUTE_PGM_RSRC3.ACCUM_OFFSET puts a0 at v{base}), beyond the {} VGPRs COMPUTE_PGM_RSRC1 grants",
                if n > 1 {
                    format!("..a{}", a + n - 1)
                } else {
                    String::new()
                },
                base + a,
                self.w.nvgpr
            )));
        }
        Ok((base + a) * self.w.lanes)
    }

    #[inline]
    pub(super) fn src(&self, code: u16, lit: u32, width: Width) -> Result<Src, IsaError> {
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
    #[inline(always)]
    pub(super) fn lanes32(
        &self,
        i: &Inst,
        k: usize,
        width: Width,
        out: &mut Lanes,
    ) -> Result<(), IsaError> {
        // The common cases inline: a VGPR, an SGPR or an integer inline constant, without
        // modifiers (32-bit views: what `sread` gives for these codes).
        let code = i.src[k];
        if i.mods == 0 && i.opsel == 0 && i.sdwa.is_none() {
            let n = self.w.lanes;
            if code >= VGPR && code != NONE {
                // VGPRs only: an AGPR lives at RSRC3's offset (`vreg`).
                let r = usize::from(code - VGPR);
                if code < AGPR
                    && r < self.w.nvgpr
                    && let Some(s) = self.w.v.get(r * n..(r + 1) * n)
                {
                    copy_lanes(&mut out[..n], s);
                    return Ok(());
                }
            } else if matches!(width, Width::B32 | Width::F16) {
                let c = match code {
                    _ if code == self.cd.null => None,
                    0..=127 => Some(self.w.s[usize::from(code)]),
                    128..=192 => Some(u32::from(code - 128)),
                    // CAST: -1..-16 as two's complement.
                    193..=208 => Some((-(i32::from(code) - 192)) as u32),
                    _ => None,
                };
                if let Some(c) = c {
                    out.fill(c);
                    return Ok(());
                }
            }
        }
        self.lanes32_any(i, k, width, out)
    }

    /// [`Self::lanes32`] for any operand.
    #[inline(never)]
    fn lanes32_any(
        &self,
        i: &Inst,
        k: usize,
        width: Width,
        out: &mut Lanes,
    ) -> Result<(), IsaError> {
        let n = self.w.lanes;
        let (am, xm) = mods_masks(i, k, width);
        // 16-bit sources: VOP3 op_sel reads the high half; gfx9 SDWA selects a byte or word
        // (before the modifiers).
        let hi = width == Width::F16 && k < 3 && (i.opsel >> k) & 1 == 1;
        let sel = i
            .sdwa
            .filter(|_| k < 2)
            .map(|sd| (sd >> (16 + 8 * k)) & 0xf);
        if hi || sel.is_some() {
            let pick = |x: u32| {
                let x = if hi { x >> 16 } else { x };
                let x = sel.map_or(x, |s| sdwa_select(x, s & 7, s & 8 != 0));
                (x & am) ^ xm
            };
            match self.src(i.src[k], i.lit, width)? {
                Src::V(o) => {
                    for (d, x) in out.iter_mut().zip(self.row(o)?) {
                        *d = pick(*x);
                    }
                }
                Src::C(c) => out[..n].fill(pick(c)),
            }
            return Ok(());
        }
        match self.src(i.src[k], i.lit, width)? {
            Src::V(o) => {
                let s = self.row(o)?;
                if (am, xm) == (!0, 0) {
                    copy_lanes(&mut out[..n], s);
                } else {
                    for (d, x) in out.iter_mut().zip(s) {
                        *d = (*x & am) ^ xm;
                    }
                }
            }
            Src::C(c) => out[..n].fill((c & am) ^ xm),
        }
        Ok(())
    }

    /// Source k of `i` as 64-bit lanes.
    #[inline]
    pub(super) fn lanes64(
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
            if let (Ok(lo), Ok(hi)) = (<&[u32; 32]>::try_from(lo), <&[u32; 32]>::try_from(hi)) {
                // Wave32 without modifiers mostly: a fixed-size interleave.
                for l in 0..32 {
                    out[l] = ((u64::from(lo[l]) | (u64::from(hi[l]) << 32)) & am) ^ xm;
                }
            } else {
                for ((d, a), b) in out.iter_mut().zip(lo).zip(hi) {
                    *d = ((u64::from(*a) | (u64::from(*b) << 32)) & am) ^ xm;
                }
            }
        } else {
            let c = self.sread(code, i.lit, width)?;
            out[..n].fill((c & am) ^ xm);
        }
        Ok(())
    }

    #[inline(always)]
    pub(super) fn write_lanes(&mut self, dst: u16, r: &Lanes) -> Result<(), IsaError> {
        // The common case inline: a valid VGPR, every lane live.
        let n = self.w.lanes;
        let reg = usize::from(dst.wrapping_sub(VGPR));
        // VGPRs only: an AGPR lives at RSRC3's offset (`vreg`).
        if (VGPR..AGPR).contains(&dst) && reg < self.w.nvgpr && self.w.exec() == self.w.lane_mask()
        {
            if let Some(d) = self.w.v.get_mut(reg * n..(reg + 1) * n) {
                copy_lanes(d, &r[..n]);
                return Ok(());
            }
        }
        self.write_lanes_any(dst, r)
    }

    /// [`Self::write_lanes`] for any destination and EXEC.
    #[inline(never)]
    fn write_lanes_any(&mut self, dst: u16, r: &Lanes) -> Result<(), IsaError> {
        let n = self.w.lanes;
        let o = self.vreg(dst, 1)?;
        let exec = self.w.exec();
        let full = self.w.lane_mask();
        let Some(d) = self.w.v.get_mut(o..o + n) else {
            return Err(self.range_err());
        };
        if exec == full {
            copy_lanes(d, &r[..n]);
        } else {
            // A select per lane from the spread mask: a straight loop.
            let e = mask::spread(exec);
            for ((x, v), e) in d.iter_mut().zip(&r[..n]).zip(&e[..n]) {
                *x = if *e != 0 { *v } else { *x };
            }
        }
        Ok(())
    }

    pub(super) fn write_lanes64(&mut self, dst: u16, r: &[u64; MAX_LANES]) -> Result<(), IsaError> {
        let mut lo = [0u32; MAX_LANES];
        let mut hi = [0u32; MAX_LANES];
        for l in 0..MAX_LANES {
            // CAST: halves of a u64.
            lo[l] = r[l] as u32;
            hi[l] = (r[l] >> 32) as u32;
        }
        self.vreg(dst, 2)?;
        self.write_lanes(dst, &lo)?;
        self.write_lanes(dst + 1, &hi)
    }

    pub(super) fn f32_mode_out(&self, i: &Inst, r: &mut Lanes) {
        let n = self.w.lanes;
        // IEEE-754 (which the ISA guide's float ops follow): an operation on a signaling NaN
        // returns it quieted.
        for x in &mut r[..n] {
            // V_FREXP_MANT and V_DIV_FIXUP return a NaN operand as it is (RDNA3 ISA: D = S0,
            // D = abs(S0)).
            if *x & 0x7fff_ffff > 0x7f80_0000
                && !matches!(i.op, Op::VFrexpMantF32 | Op::VDivFixupF32)
            {
                *x |= 0x0040_0000;
            }
        }
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
        if !self.w.denorm32() {
            for x in &mut r[..n] {
                *x = flush32(*x);
            }
        }
    }

    pub(super) fn in_f32(&self, a: &mut Lanes) {
        if !self.w.denorm32() {
            for x in &mut a[..self.w.lanes] {
                *x = flush32(*x);
            }
        }
    }

    /// dst = f(src0, src1) on 32-bit lanes.
    pub(super) fn v2(
        &mut self,
        i: &Inst,
        w: Width,
        f: impl Fn(u32, u32) -> u32,
    ) -> Result<(), IsaError> {
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
        if f32_result(i.op) {
            self.f32_mode_out(i, &mut r);
        }
        self.write_lanes(i.dst, &r)
    }

    pub(super) fn v1(
        &mut self,
        i: &Inst,
        w: Width,
        f: impl Fn(u32) -> u32,
    ) -> Result<(), IsaError> {
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
        if f32_result(i.op) {
            self.f32_mode_out(i, &mut r);
        }
        self.write_lanes(i.dst, &r)
    }

    pub(super) fn v3(
        &mut self,
        i: &Inst,
        w: Width,
        f: impl Fn(u32, u32, u32) -> u32,
    ) -> Result<(), IsaError> {
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
        if f32_result(i.op) {
            self.f32_mode_out(i, &mut r);
        }
        self.write_lanes(i.dst, &r)
    }

    /// 64-bit lanes: dst = f(src0, src1, src2) (absent sources read as 0).
    pub(super) fn v64(
        &mut self,
        i: &Inst,
        w: [Width; 3],
        f: impl Fn(u64, u64, u64) -> u64,
    ) -> Result<(), IsaError> {
        let mut s0 = [0u64; MAX_LANES];
        let mut s1 = [0u64; MAX_LANES];
        let mut s2 = [0u64; MAX_LANES];
        for (k, s) in [&mut s0, &mut s1, &mut s2].into_iter().enumerate() {
            if i.src[k] == NONE {
                continue;
            }
            if matches!(w[k], Width::B64 | Width::F64) {
                self.lanes64(i, k, w[k], s)?;
            } else {
                let mut t = [0u32; MAX_LANES];
                self.lanes32(i, k, w[k], &mut t)?;
                for (d, x) in s.iter_mut().zip(&t) {
                    *d = u64::from(*x);
                }
            }
        }
        let mut r = [0u64; MAX_LANES];
        let n = self.w.lanes.min(MAX_LANES);
        for l in 0..n {
            r[l] = f(s0[l], s1[l], s2[l]);
        }
        if w[0] == Width::F64 {
            f64_out(i, &mut r[..n]);
        }
        self.write_lanes64(i.dst, &r)
    }

    /// 64-bit shifts: dst = f(src0 (the 32-bit amount), src1 (64-bit)), without the 64-bit
    /// staging of [`Self::v64`].
    pub(super) fn vshift64(
        &mut self,
        i: &Inst,
        f: impl Fn(u64, u64) -> u64,
    ) -> Result<(), IsaError> {
        let mut s = [0u32; MAX_LANES];
        self.lanes32(i, 0, Width::B32, &mut s)?;
        let mut x = [0u64; MAX_LANES];
        self.lanes64(i, 1, Width::B64, &mut x)?;
        let mut lo = [0u32; MAX_LANES];
        let mut hi = [0u32; MAX_LANES];
        let n = self.w.lanes.min(MAX_LANES);
        for l in 0..n {
            let r = f(u64::from(s[l]), x[l]);
            // CAST: halves of a u64.
            lo[l] = r as u32;
            hi[l] = (r >> 32) as u32;
        }
        self.vreg(i.dst, 2)?;
        self.write_lanes(i.dst, &lo)?;
        self.write_lanes(i.dst + 1, &hi)
    }

    /// 64-bit result into a 32-bit destination (conversions from f64).
    pub(super) fn v64to32(&mut self, i: &Inst, f: impl Fn(u64) -> u32) -> Result<(), IsaError> {
        let mut s = [0u64; MAX_LANES];
        self.lanes64(i, 0, Width::F64, &mut s)?;
        let mut r = [0u32; MAX_LANES];
        for (r, x) in r.iter_mut().zip(&s) {
            *r = f(*x);
        }
        if f32_result(i.op) {
            self.f32_mode_out(i, &mut r);
        }
        self.write_lanes(i.dst, &r)
    }

    /// 32-bit source into a 64-bit destination.
    pub(super) fn v32to64(
        &mut self,
        i: &Inst,
        w: Width,
        f: impl Fn(u32) -> u64,
    ) -> Result<(), IsaError> {
        let mut a = [0u32; MAX_LANES];
        self.lanes32(i, 0, w, &mut a)?;
        let mut r = [0u64; MAX_LANES];
        for (r, x) in r.iter_mut().zip(&a) {
            *r = f(*x);
        }
        // Every 32-to-64-bit op is a conversion to f64.
        f64_out(i, &mut r);
        self.write_lanes64(i.dst, &r)
    }

    /// Carry-out ops: the 32-bit result per lane, the carry (or borrow) mask to sdst.
    /// `sub`: src0 - src1 (src1 - src0 when `rev`), else src0 + src1; `ci`: with the
    /// carry-in (borrow-in) mask of src2.
    pub(super) fn vcarry(
        &mut self,
        i: &Inst,
        sub: bool,
        rev: bool,
        ci: bool,
    ) -> Result<(), IsaError> {
        let mut a = [0u32; MAX_LANES];
        let mut b = [0u32; MAX_LANES];
        self.lanes32(i, 0, Width::B32, &mut a)?;
        self.lanes32(i, 1, Width::B32, &mut b)?;
        if rev {
            core::mem::swap(&mut a, &mut b);
        }
        let cin = if ci && i.src[2] != NONE {
            Some(mask::spread(self.read_mask(i.src[2], i.lit)?))
        } else {
            None
        };
        let exec = self.w.exec();
        let mut r = [0u32; MAX_LANES];
        let mut c = [0u8; MAX_LANES];
        // Branch-free 32-bit lanes (vectorised): a carry out of either add, or a borrow out
        // of either subtract.
        let n = self.w.lanes.min(MAX_LANES);
        match (sub, cin) {
            (false, None) => {
                for l in 0..n {
                    r[l] = a[l].wrapping_add(b[l]);
                    c[l] = u8::from(r[l] < a[l]);
                }
            }
            (true, None) => {
                for l in 0..n {
                    r[l] = a[l].wrapping_sub(b[l]);
                    c[l] = u8::from(a[l] < b[l]);
                }
            }
            (false, Some(cin)) => {
                for l in 0..n {
                    let t = a[l].wrapping_add(b[l]);
                    r[l] = t.wrapping_add(u32::from(cin[l]));
                    c[l] = u8::from(t < a[l]) | u8::from(r[l] < t);
                }
            }
            (true, Some(cin)) => {
                for l in 0..n {
                    let t = a[l].wrapping_sub(b[l]);
                    let ci = u32::from(cin[l]);
                    r[l] = t.wrapping_sub(ci);
                    c[l] = u8::from(a[l] < b[l]) | u8::from(t < ci);
                }
            }
        }
        if i.clamp {
            // Clamp saturates: a carry out gives all ones, a borrow zero (RDNA3 ISA, VOP3
            // CLAMP); the carry mask is written as without it.
            let sat = if sub { 0 } else { u32::MAX };
            for l in 0..n {
                if c[l] != 0 {
                    r[l] = sat;
                }
            }
        }
        self.write_lanes(i.dst, &r)?;
        self.write_mask(i.sdst, mask::pack(&c) & exec)
    }

    pub(super) fn vcmp(&mut self, i: &Inst) -> Result<(), IsaError> {
        let n = self.w.lanes;
        let c = i.sub;
        let m = match i.op {
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
                match i.op {
                    Op::VCmpF64 => {
                        let fa = a.map(f64::from_bits);
                        let fb = b.map(f64::from_bits);
                        mask::fcmp(c, n, &fa, &fb)
                    }
                    // CAST: two's complement reinterpretation.
                    Op::VCmpI64 => mask::icmp(c, n, &a.map(|x| x as i64), &b.map(|x| x as i64)),
                    Op::VCmpU64 => mask::icmp(c, n, &a, &b),
                    // CAST: the class mask is 10 bits.
                    _ => mask::cmp(n, &a, &b, |x, y| class64(f64::from_bits(x), y as u32)),
                }
            }
            _ => {
                // The 16-bit integer compares read a high half by op_sel too (e32: bit 7 of
                // the VGPR number), with integer inline constants.
                let int16_hi = |k: usize| {
                    matches!(i.op, Op::VCmpI16 | Op::VCmpU16 | Op::VCmpClassF16)
                        && (i.opsel >> k) & 1 == 1
                };
                let w = if matches!(i.op, Op::VCmpF16 | Op::VCmpClassF16) || int16_hi(0) {
                    Width::F16
                } else {
                    Width::B32
                };
                let mut a = [0u32; MAX_LANES];
                let mut b = [0u32; MAX_LANES];
                self.lanes32(i, 0, w, &mut a)?;
                let w1 = if int16_hi(1) {
                    Width::F16
                } else if matches!(
                    i.op,
                    Op::VCmpClassF32 | Op::VCmpClassF16 | Op::VCmpI16 | Op::VCmpU16
                ) {
                    Width::B32
                } else {
                    w
                };
                self.lanes32(i, 1, w1, &mut b)?;
                let denorm = self.w.denorm32();
                match i.op {
                    Op::VCmpF32 => {
                        let fl = |x: u32| f32v(if denorm { x } else { flush32(x) });
                        mask::fcmp(c, n, &a.map(fl), &b.map(fl))
                    }
                    Op::VCmpF16 => mask::fcmp(c, n, &a.map(f16_to_f32), &b.map(f16_to_f32)),
                    // CAST: two's complement reinterpretation.
                    Op::VCmpI32 => mask::icmp(c, n, &a.map(|x| x as i32), &b.map(|x| x as i32)),
                    Op::VCmpU32 => mask::icmp(c, n, &a, &b),
                    // CAST: low 16 bits, signed.
                    Op::VCmpI16 => mask::icmp(
                        c,
                        n,
                        &a.map(|x| x as u16 as i16),
                        &b.map(|x| x as u16 as i16),
                    ),
                    Op::VCmpU16 => mask::icmp(c, n, &a.map(|x| x & 0xffff), &b.map(|x| x & 0xffff)),
                    Op::VCmpClassF32 => mask::cmp(n, &a, &b, |x, y| class32(f32v(x), y)),
                    Op::VCmpClassF16 => mask::cmp(n, &a, &b, class16),
                    _ => 0,
                }
            }
        };
        let m = m & self.w.exec();
        if i.cmpx {
            self.w.set_exec(m);
            if i.sdst == NONE {
                return Ok(());
            }
        }
        self.write_mask(i.sdst, m)
    }
}

/// The result modifiers of an f64 result: a signaling NaN comes out quiet (IEEE-754), omod
/// scales, clamp limits to [0, 1] (NaN to 0) (RDNA3 ISA, VOP3 CLAMP and OMOD).
pub(super) fn f64_out(i: &Inst, r: &mut [u64]) {
    for x in r.iter_mut() {
        // V_FREXP_MANT and V_DIV_FIXUP return a NaN operand as it is (RDNA3 ISA: D = S0,
        // D = abs(S0)).
        if *x & !(1 << 63) > 0x7ff0_0000_0000_0000
            && !matches!(i.op, Op::VFrexpMantF64 | Op::VDivFixupF64)
        {
            *x |= 1 << 51;
        }
        if i.omod != 0 {
            let k = [1.0f64, 2.0, 4.0, 0.5][usize::from(i.omod & 3)];
            *x = (f64::from_bits(*x) * k).to_bits();
        }
        if i.clamp {
            let f = f64::from_bits(*x);
            *x = if f.is_nan() {
                0
            } else {
                f.clamp(0.0, 1.0).to_bits()
            };
        }
    }
}
