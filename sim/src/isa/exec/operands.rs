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

    pub(super) fn s32(&self, code: u16, lit: u32) -> Result<u32, IsaError> {
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

    pub(super) fn vreg(&self, code: u16, n: usize) -> Result<usize, IsaError> {
        let Some(r) = code.checked_sub(VGPR).filter(|_| code < AGPR) else {
            return self.areg(code, n);
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
    pub(super) fn lanes32(
        &self,
        i: &Inst,
        k: usize,
        width: Width,
        out: &mut Lanes,
    ) -> Result<(), IsaError> {
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
            for ((d, a), b) in out.iter_mut().zip(lo).zip(hi) {
                *d = ((u64::from(*a) | (u64::from(*b) << 32)) & am) ^ xm;
            }
        } else {
            let c = self.sread(code, i.lit, width)?;
            out[..n].fill((c & am) ^ xm);
        }
        Ok(())
    }

    pub(super) fn write_lanes(&mut self, dst: u16, r: &Lanes) -> Result<(), IsaError> {
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

    pub(super) fn write_lanes64(&mut self, dst: u16, r: &[u64; MAX_LANES]) -> Result<(), IsaError> {
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

    pub(super) fn f32_mode_out(&self, i: &Inst, r: &mut Lanes) {
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

    pub(super) fn in_f32(&self, a: &mut Lanes) {
        if !self.l.float.denorm32 {
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
        if f32op {
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
        if f32op {
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
        if f32op {
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
    pub(super) fn v64to32(&mut self, i: &Inst, f: impl Fn(u64) -> u32) -> Result<(), IsaError> {
        let mut s = [0u64; MAX_LANES];
        self.lanes64(i, 0, Width::F64, &mut s)?;
        let mut r = [0u32; MAX_LANES];
        for (r, x) in r.iter_mut().zip(&s) {
            *r = f(*x);
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
        self.write_lanes64(i.dst, &r)
    }

    /// Carry-out ops: (result, carry) per lane; carry mask to sdst.
    pub(super) fn vcarry(
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
        let mut c = [0u8; MAX_LANES];
        let n = self.w.lanes;
        // Branch-free lanes, then the carry bits gathered into a mask.
        for (l, ((r, c), (a, b))) in r[..n]
            .iter_mut()
            .zip(&mut c[..n])
            .zip(a[..n].iter().zip(&b[..n]))
            .enumerate()
        {
            let (v, co) = f(*a, *b, cin >> l & 1 == 1);
            *r = v;
            *c = u8::from(co);
        }
        let m = c[..n]
            .iter()
            .enumerate()
            .fold(0u64, |m, (l, c)| m | (u64::from(*c) << l));
        self.write_lanes(i.dst, &r)?;
        self.write_mask(i.sdst, m & exec)
    }

    pub(super) fn vcmp(&mut self, i: &Inst) -> Result<(), IsaError> {
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
}
