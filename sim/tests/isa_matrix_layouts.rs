//! Every data type of the matrix cores against a reference matrix product: one wave loads A,
//! B and C into VGPRs in the layout AMD documents for the instruction (AMD's matrix
//! instruction calculator, `amd_matrix_instruction_calculator`, whose register tables the
//! CDNA2/CDNA3 ISA guides' "Matrix Arithmetic Instructions" and the RDNA3/RDNA4 guides' "WMMA"
//! sections draw), runs the instruction and stores D; the test computes D = A x B + C from the
//! row-major matrices and reads D back through the documented layout. Each case's layout is
//! written out beside it (register, lane, bits of element (i, k) / (k, j) / (i, j)), with
//! spot checks quoted from the calculator's tables. Values are small integers and halves, so
//! every product and sum is exact. Where A and B share one layout function, a k order applied
//! to both is not observable in an exact D (the sum over k does not depend on it); what these
//! cases pin is the row/column/block placement, the block-and-k interleaving (f64 4x4x4,
//! the broadcasts), the sparse instructions' A and index layouts against the dense B, and the
//! result layouts.
//!
//! Programs (hand-assembled, checked with `llvm-mc-19 -show-encoding`): v1 = lane * 4; one
//! `global_load_dword` per register of A, B, C (and the sparse instructions' D) from s[2:3],
//! v1 advancing by a register's row; the instruction; one `global_store_dword` per register
//! of D to s[0:1].

use hcq_sim::isa::{FlatMemory, FloatMode, Isa, Launch, ScratchSetup, run};

const MEM: usize = 0x10_0000;
const CODE: u64 = 0x8_0000;
const OUT: u64 = 0x1_0000;
const DATA: u64 = 0x4_0000;

/// An encoder and a value generator (element, matrix).
type Codec = (fn(f64) -> u64, fn(usize, usize) -> f64);

/// Where an element lives: (register, lane, bit offset).
type At = (usize, usize, u32);

/// Runs one matrix instruction (`w0`, `w1` without register fields) with A at v2, B after
/// it, src2 (C, or the sparse index) after B, D after src2. `d_init` is D's content before
/// (the sparse instructions accumulate into D). Returns D's registers, `[reg][lane]`.
#[allow(clippy::too_many_arguments)]
fn run_mm(
    isa: Isa,
    w0: u32,
    w1: u32,
    a: &[Vec<u32>],
    b: &[Vec<u32>],
    c: &[Vec<u32>],
    d_init: &[Vec<u32>],
    dw: usize,
) -> Vec<Vec<u32>> {
    // gfx9: as gfx90a when it names the opcode, else as gfx942 (opcodes 100, 102, 104, 108
    // are gfx90a's bf16/i8 MFMA and gfx942's SMFMAC: their gfx942 tests use `run_mm_on`).
    let opc = (w0 >> 16) & 0x7f;
    let gfx940 = hcq_sim::isa::mai::find_for(isa, false, opc)
        .and_then(|r| hcq_sim::isa::mai::TABLE.get(r))
        .is_none_or(|r| r.name.is_empty());
    run_mm_on(isa, gfx940, w0, w1, a, b, c, d_init, dw)
}

/// As [`run_mm`] on the chip `gfx940` selects (gfx9).
#[allow(clippy::too_many_arguments)]
fn run_mm_on(
    isa: Isa,
    gfx940: bool,
    w0: u32,
    w1: u32,
    a: &[Vec<u32>],
    b: &[Vec<u32>],
    c: &[Vec<u32>],
    d_init: &[Vec<u32>],
    dw: usize,
) -> Vec<Vec<u32>> {
    let gfx9 = isa == Isa::Gfx9;
    let lanes = if gfx9 { 64 } else { 32 };
    let stride = 4 * lanes as u32;
    let (va, vb, vc) = (2, 2 + a.len(), 2 + a.len() + b.len());
    let vd = vc + c.len();
    let regs: Vec<(usize, &Vec<u32>)> = a
        .iter()
        .chain(b)
        .chain(c)
        .chain(d_init)
        .enumerate()
        .map(|(k, r)| (2 + k, r))
        .collect();
    let mut code = vec![if gfx9 { 0x2402_0082 } else { 0x3002_0082 }];
    let add = if gfx9 { 0x6802_02FF } else { 0x4A02_02FF };
    for &(v, _) in &regs {
        // global_load_dword vV, v1, s[2:3]
        // CAST: register numbers below 256.
        let v = v as u32;
        match isa {
            Isa::Gfx9 => code.extend([0xDC50_8000, 0x0002_0001 | v << 24]),
            Isa::Gfx11 => code.extend([0xDC52_0000, 0x0002_0001 | v << 24]),
            Isa::Gfx12 => code.extend([0xEE05_0002, v, 1]),
        }
        code.extend([add, stride]);
    }
    // CAST: as above.
    let (d, a0, b0, c0) = (vd as u32, va as u32, vb as u32, vc as u32);
    code.extend([w0 | d, w1 | (256 + a0) | (256 + b0) << 9 | (256 + c0) << 18]);
    code.push(if gfx9 { 0x2402_0082 } else { 0x3002_0082 });
    for r in 0..dw {
        // CAST: as above.
        let v = (vd + r) as u32;
        match isa {
            Isa::Gfx9 => code.extend([0xDC70_8000, 0x0000_0001 | v << 8]),
            Isa::Gfx11 => code.extend([0xDC6A_0000, 0x0000_0001 | v << 8]),
            Isa::Gfx12 => code.extend([0xEE06_8000, v << 23, 1]),
        }
        code.extend([add, stride]);
    }
    code.push(if gfx9 { 0xBF81_0000 } else { 0xBFB0_0000 });
    let mem = FlatMemory::new(0, MEM);
    let bytes: Vec<u8> = code.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.poke(CODE, &bytes).unwrap();
    let data: Vec<u8> = regs
        .iter()
        .flat_map(|(_, r)| r.iter().flat_map(|w| w.to_le_bytes()))
        .collect();
    mem.poke(DATA, &data).unwrap();
    let l = Launch {
        isa,
        gfx940,
        pgm: CODE,
        wave64: gfx9,
        user_sgprs: vec![OUT as u32, 0, DATA as u32, 0],
        rsrc2: 4 << 1,
        local: [lanes as u32, 1, 1],
        groups: [1, 1, 1],
        lds_bytes: 0,
        vgprs: 512,
        accum_offset: 256,
        scratch: ScratchSetup::default(),
        scratch_waves: 0,
        float: FloatMode {
            denorm32: true,
            denorm16_64: true,
        },
        budget: 1 << 16,
        clock: 0,
        xcc: Default::default(),
    };
    run(&l, &mem).unwrap();
    let mut out = vec![0u8; dw * lanes * 4];
    mem.peek(OUT, &mut out).unwrap();
    let w: Vec<u32> = out
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    w.chunks(lanes).map(<[u32]>::to_vec).collect()
}

/// `n` registers of `lanes` zeros.
fn regs(n: usize, lanes: usize) -> Vec<Vec<u32>> {
    vec![vec![0; lanes]; n]
}

fn put(r: &mut [Vec<u32>], (reg, lane, off): At, bits: u32, v: u64) {
    if bits == 64 {
        r[reg][lane] = v as u32;
        r[reg + 1][lane] = (v >> 32) as u32;
    } else {
        let mask = if bits == 32 {
            !0
        } else {
            ((1u32 << bits) - 1) << off
        };
        r[reg][lane] = (r[reg][lane] & !mask) | (((v as u32) << off) & mask);
    }
}

fn get(r: &[Vec<u32>], (reg, lane, off): At, bits: u32) -> u64 {
    match bits {
        64 => u64::from(r[reg][lane]) | u64::from(r[reg + 1][lane]) << 32,
        32 => u64::from(r[reg][lane]),
        _ => u64::from((r[reg][lane] >> off) & ((1 << bits) - 1)),
    }
}

/// A deterministic small value for element `e` of matrix `salt`: one of -2.0 .. 2.0 in
/// halves (exact in every float type here).
fn val(e: usize, salt: usize) -> f64 {
    ((e * 7 + salt * 5 + e / 3) % 9) as f64 * 0.5 - 2.0
}

fn f16(v: f64) -> u64 {
    if v == 0.0 {
        return 0;
    }
    let s = if v < 0.0 { 0x8000 } else { 0 };
    let e = v.abs().log2().floor() as i32;
    let m = ((v.abs() / 2f64.powi(e) - 1.0) * 1024.0).round() as u64;
    s | (((e + 15) as u64) << 10) | m
}

fn f16v(h: u64) -> f64 {
    let e = ((h >> 10) & 31) as i32;
    let m = (h & 1023) as f64 / 1024.0;
    let x = if e == 0 {
        m * 2f64.powi(-14)
    } else {
        (1.0 + m) * 2f64.powi(e - 15)
    };
    if h & 0x8000 != 0 { -x } else { x }
}

/// bf16 bits of `v`, rounded to nearest even.
fn bf16(v: f64) -> u64 {
    let b = (v as f32).to_bits();
    u64::from((b + 0x7fff + ((b >> 16) & 1)) >> 16)
}

/// An 8-bit float's bits for `v` (exact here): `e`/`m` exponent and mantissa bits, `bias`.
fn f8(v: f64, m: u32, bias: i32) -> u64 {
    if v == 0.0 {
        return 0;
    }
    let s = if v < 0.0 { 0x80 } else { 0 };
    let e = v.abs().log2().floor() as i32;
    let man = ((v.abs() / 2f64.powi(e) - 1.0) * f64::from(1u32 << m)).round() as u64;
    s | (((e + bias) as u64) << m) | man
}

/// D = A (m x k) x B (k x n) + C, per block, row-major.
fn mma(m: usize, n: usize, k: usize, a: &[f64], b: &[f64], c: &[f64]) -> Vec<f64> {
    let mut d = c.to_vec();
    for r in 0..m {
        for col in 0..n {
            for x in 0..k {
                d[r * n + col] += a[r * k + x] * b[x * n + col];
            }
        }
    }
    d
}

/// One dense case: shape, element codecs, layouts. Runs it and compares D with the
/// reference product (`tol` 0: exact).
struct Dense {
    isa: Isa,
    w: [u32; 2],
    mnkb: [usize; 4],
    /// Registers of A, B, C/D.
    r: [usize; 3],
    /// Element bits of A, B, C/D.
    bits: [u32; 3],
    a_at: fn(usize, usize, usize) -> At,
    b_at: fn(usize, usize, usize) -> At,
    d_at: fn(usize, usize, usize) -> At,
    /// A's and B's encoders; the result's decoder and C's encoder.
    enc_a: fn(f64) -> u64,
    enc_b: fn(f64) -> u64,
    enc_c: fn(f64) -> u64,
    dec_d: fn(u64) -> f64,
    /// Which block's A each block reads (CBSZ/ABID).
    a_block: fn(usize) -> usize,
    /// Values: A's, B's, C's of element e.
    av: fn(usize) -> f64,
    bv: fn(usize) -> f64,
    cv: fn(usize) -> f64,
}

impl Dense {
    fn check(&self, what: &str) {
        let [m, n, k, blocks] = self.mnkb;
        let lanes = if self.isa == Isa::Gfx9 { 64 } else { 32 };
        let (mut ar, mut br, mut cr) = (
            regs(self.r[0], lanes),
            regs(self.r[1], lanes),
            regs(self.r[2], lanes),
        );
        let (mut a, mut b, mut c) = (vec![], vec![], vec![]);
        for blk in 0..blocks {
            for i in 0..m {
                for x in 0..k {
                    let v = (self.av)((blk * m + i) * k + x);
                    a.push(v);
                    put(
                        &mut ar,
                        (self.a_at)(i, x, blk),
                        self.bits[0],
                        (self.enc_a)(v),
                    );
                    if self.isa == Isa::Gfx11 {
                        // RDNA3: lanes 16..31 hold a copy of lanes 0..15's A and B.
                        let (r, l, o) = (self.a_at)(i, x, blk);
                        put(&mut ar, (r, l + 16, o), self.bits[0], (self.enc_a)(v));
                    }
                }
            }
            for x in 0..k {
                for j in 0..n {
                    let v = (self.bv)((blk * k + x) * n + j);
                    b.push(v);
                    put(
                        &mut br,
                        (self.b_at)(x, j, blk),
                        self.bits[1],
                        (self.enc_b)(v),
                    );
                    if self.isa == Isa::Gfx11 {
                        let (r, l, o) = (self.b_at)(x, j, blk);
                        put(&mut br, (r, l + 16, o), self.bits[1], (self.enc_b)(v));
                    }
                }
            }
            for i in 0..m {
                for j in 0..n {
                    let v = (self.cv)((blk * m + i) * n + j);
                    c.push(v);
                    put(
                        &mut cr,
                        (self.d_at)(i, j, blk),
                        self.bits[2],
                        (self.enc_c)(v),
                    );
                }
            }
        }
        let d = run_mm(
            self.isa,
            self.w[0],
            self.w[1],
            &ar,
            &br,
            &cr,
            &[],
            self.r[2],
        );
        for blk in 0..blocks {
            let ab = (self.a_block)(blk);
            let want = mma(
                m,
                n,
                k,
                &a[ab * m * k..][..m * k],
                &b[blk * k * n..][..k * n],
                &c[blk * m * n..][..m * n],
            );
            for i in 0..m {
                for j in 0..n {
                    let got = (self.dec_d)(get(&d, (self.d_at)(i, j, blk), self.bits[2]));
                    // The exact sum, rounded once to the result type.
                    let want = (self.dec_d)((self.enc_c)(want[i * n + j]));
                    assert_eq!(got, want, "{what}: D[{i}][{j}] of block {blk}");
                }
            }
        }
    }
}

fn same(b: usize) -> usize {
    b
}
fn f32e(v: f64) -> u64 {
    u64::from((v as f32).to_bits())
}
fn f32d(v: u64) -> f64 {
    f64::from(f32::from_bits(v as u32))
}
fn f64e(v: f64) -> u64 {
    v.to_bits()
}
fn f64d(v: u64) -> f64 {
    f64::from_bits(v)
}
fn i32e(v: f64) -> u64 {
    u64::from(v as i32 as u32)
}
fn i32d(v: u64) -> f64 {
    f64::from(v as u32 as i32)
}
fn i8e(v: f64) -> u64 {
    u64::from(v as i8 as u8)
}
fn va(e: usize) -> f64 {
    val(e, 1)
}
fn vb(e: usize) -> f64 {
    val(e, 2)
}
fn vc(e: usize) -> f64 {
    val(e, 3) * 4.0
}
/// Integers -100..100 for the 8-bit cases.
fn ia(e: usize) -> f64 {
    ((e * 37 + 11) % 201) as f64 - 100.0
}
fn ib(e: usize) -> f64 {
    ((e * 53 + 7) % 201) as f64 - 100.0
}
fn ic(e: usize) -> f64 {
    ((e * 1009) % 20001) as f64 - 10000.0
}

/// MFMA words: VOP3P-MAI opcode, CBSZ/ABID (word 0), BLGP (word 1).
fn mfma(opc: u32, cbsz: u32, abid: u32, blgp: u32) -> [u32; 2] {
    [0xD380_0000 | opc << 16 | cbsz << 8 | abid << 11, blgp << 29]
}

#[test]
fn mfma_f16_4x4x4_16_blocks_with_and_without_a_broadcast() {
    // calculator, v_mfma_f32_4x4x4f16: A[i][k] of block b is v{k/2}.[16(k%2)+15:16(k%2)]
    // of lane 4b + i (A[0][0].B1 in v0{4}); B[k][j] likewise in lane 4b + j; D[i][j] of
    // block b is v{i} of lane 4b + j. CBSZ 2, ABID 1: every block of each group of 4 reads
    // the A of the group's block 1.
    let mut c = Dense {
        isa: Isa::Gfx9,
        w: mfma(74, 0, 0, 0),
        mnkb: [4, 4, 4, 16],
        r: [2, 2, 4],
        bits: [16, 16, 32],
        a_at: |i, k, b| (k / 2, 4 * b + i, 16 * (k % 2) as u32),
        b_at: |k, j, b| (k / 2, 4 * b + j, 16 * (k % 2) as u32),
        d_at: |i, j, b| (i, 4 * b + j, 0),
        enc_a: f16,
        enc_b: f16,
        enc_c: f32e,
        dec_d: f32d,
        a_block: same,
        av: va,
        bv: vb,
        cv: vc,
    };
    c.check("v_mfma_f32_4x4x4f16");
    c.w = mfma(74, 2, 1, 0);
    c.a_block = |b| (b & !3) | 1;
    c.check("v_mfma_f32_4x4x4f16 cbsz:2 abid:1");
}

#[test]
fn mfma_f32_32x32x1_two_blocks_and_16x16x4_with_blgp() {
    // calculator, v_mfma_f32_32x32x1f32: A[i][0] of block b in v0 of lane 32b + i; D[i][j]
    // of block b in v{16b + 4(i/8) + i%4} of lane 32((i/4)%2) + j (D[4][0].B0 in v0{32},
    // D[8][0].B0 in v4{0}).
    Dense {
        isa: Isa::Gfx9,
        w: mfma(64, 0, 0, 0),
        mnkb: [32, 32, 1, 2],
        r: [1, 1, 32],
        bits: [32, 32, 32],
        a_at: |i, _, b| (0, 32 * b + i, 0),
        b_at: |_, j, b| (0, 32 * b + j, 0),
        d_at: |i, j, b| (16 * b + 4 * (i / 8) + i % 4, 32 * ((i / 4) % 2) + j, 0),
        enc_a: f32e,
        enc_b: f32e,
        enc_c: f32e,
        dec_d: f32d,
        a_block: same,
        av: va,
        bv: vb,
        cv: vc,
    }
    .check("v_mfma_f32_32x32x1f32");
    // v_mfma_f32_16x16x4f32: B[k][j] in lane 16k + j; BLGP 3 rotates B's lanes down by 16
    // (lane l reads lane (l + 16) % 64), so B[k][j] is placed where that read finds it.
    Dense {
        isa: Isa::Gfx9,
        w: mfma(69, 0, 0, 3),
        mnkb: [16, 16, 4, 1],
        r: [1, 1, 4],
        bits: [32, 32, 32],
        a_at: |i, k, _| (0, 16 * k + i, 0),
        b_at: |k, j, _| (0, (16 * k + j + 16) % 64, 0),
        d_at: |i, j, _| (i % 4, 16 * (i / 4) + j, 0),
        enc_a: f32e,
        enc_b: f32e,
        enc_c: f32e,
        dec_d: f32d,
        a_block: same,
        av: va,
        bv: vb,
        cv: vc,
    }
    .check("v_mfma_f32_16x16x4f32 blgp:3");
}

#[test]
fn mfma_bf16_16x16x2_four_blocks_and_bf16_1k() {
    // calculator, v_mfma_f32_16x16x2bf16: A[i][k] of block b in v0.[16k+15:16k] of lane
    // 16b + i; D[i][j] of block b in v{4b + i%4} of lane 16(i/4) + j.
    Dense {
        isa: Isa::Gfx9,
        w: mfma(105, 0, 0, 0),
        mnkb: [16, 16, 2, 4],
        r: [1, 1, 16],
        bits: [16, 16, 32],
        a_at: |i, k, b| (0, 16 * b + i, 16 * k as u32),
        b_at: |k, j, b| (0, 16 * b + j, 16 * k as u32),
        d_at: |i, j, b| (4 * b + i % 4, 16 * (i / 4) + j, 0),
        enc_a: bf16,
        enc_b: bf16,
        enc_c: f32e,
        dec_d: f32d,
        a_block: same,
        av: va,
        bv: vb,
        cv: vc,
    }
    .check("v_mfma_f32_16x16x2bf16");
    // v_mfma_f32_32x32x8bf16_1k: A[i][k] in v{(k%4)/2}.[16(k%2)..] of lane 32(k/4) + i.
    Dense {
        isa: Isa::Gfx9,
        w: mfma(102, 0, 0, 0),
        mnkb: [32, 32, 8, 1],
        r: [2, 2, 16],
        bits: [16, 16, 32],
        a_at: |i, k, _| ((k % 4) / 2, 32 * (k / 4) + i, 16 * (k % 2) as u32),
        b_at: |k, j, _| ((k % 4) / 2, 32 * (k / 4) + j, 16 * (k % 2) as u32),
        d_at: |i, j, _| (4 * (i / 8) + i % 4, 32 * ((i / 4) % 2) + j, 0),
        enc_a: bf16,
        enc_b: bf16,
        enc_c: f32e,
        dec_d: f32d,
        a_block: same,
        av: va,
        bv: vb,
        cv: vc,
    }
    .check("v_mfma_f32_32x32x8bf16_1k");
}

#[test]
fn mfma_i8_products_sum_and_wrap_to_32_bits() {
    // calculator, v_mfma_i32_16x16x16i8: A[i][k] in v0.[8(k%4)+7:8(k%4)] of lane
    // 16(k/4) + i; D as the 16x16 f32 layout. C near i32::MAX: the sum wraps (the ISA's
    // D.i32 = C.i32 + sum, 32-bit).
    let mut c = Dense {
        isa: Isa::Gfx9,
        w: mfma(85, 0, 0, 0),
        mnkb: [16, 16, 16, 1],
        r: [1, 1, 4],
        bits: [8, 8, 32],
        a_at: |i, k, _| (0, 16 * (k / 4) + i, 8 * (k % 4) as u32),
        b_at: |k, j, _| (0, 16 * (k / 4) + j, 8 * (k % 4) as u32),
        d_at: |i, j, _| (i % 4, 16 * (i / 4) + j, 0),
        enc_a: i8e,
        enc_b: i8e,
        enc_c: i32e,
        dec_d: i32d,
        a_block: same,
        av: ia,
        bv: ib,
        cv: ic,
    };
    c.check("v_mfma_i32_16x16x16i8");
    // gfx942's v_mfma_i32_16x16x32_i8: 8 bytes a lane, A[i][k] in v{(k%8)/4} of lane
    // 16(k/8) + i.
    c.w = mfma(87, 0, 0, 0);
    c.mnkb = [16, 16, 32, 1];
    c.r = [2, 2, 4];
    c.a_at = |i, k, _| ((k % 8) / 4, 16 * (k / 8) + i, 8 * (k % 4) as u32);
    c.b_at = |k, j, _| ((k % 8) / 4, 16 * (k / 8) + j, 8 * (k % 4) as u32);
    c.check("v_mfma_i32_16x16x32_i8");
    // Wrap: all products 100 * 100 * 16 = 160000 on C = i32::MAX - 1000.
    let d = run_mm(
        Isa::Gfx9,
        mfma(85, 0, 0, 0)[0],
        0,
        &[vec![0x6464_6464; 64]],
        &[vec![0x6464_6464; 64]],
        &vec![vec![(i32::MAX - 1000) as u32; 64]; 4],
        &[],
        4,
    );
    let want = (i32::MAX - 1000).wrapping_add(160_000) as u32;
    assert!(d.iter().flatten().all(|&w| w == want), "{:#x}", d[0][0]);
}

#[test]
fn mfma_f64_4x4x4_four_blocks_and_16x16x4() {
    // calculator, v_mfma_f64_4x4x4f64: A[i][k] of block b in v[1:0] of lane 16k + 4b + i
    // (A[0][1].B1 in v[1:0]{20}); D[i][j] of block b in v[1:0] of lane 16i + 4b + j
    // (lane 4: D[0][0].B1, lane 16: D[1][0].B0).
    Dense {
        isa: Isa::Gfx9,
        w: mfma(111, 0, 0, 0),
        mnkb: [4, 4, 4, 4],
        r: [2, 2, 2],
        bits: [64, 64, 64],
        a_at: |i, k, b| (0, 16 * k + 4 * b + i, 0),
        b_at: |k, j, b| (0, 16 * k + 4 * b + j, 0),
        d_at: |i, j, b| (0, 16 * i + 4 * b + j, 0),
        enc_a: f64e,
        enc_b: f64e,
        enc_c: f64e,
        dec_d: f64d,
        a_block: same,
        av: |e| val(e, 1) * 1e100,
        bv: |e| val(e, 2) * 1e-90,
        cv: |e| val(e, 3) * 1e10,
    }
    .check("v_mfma_f64_4x4x4f64");
    // v_mfma_f64_16x16x4f64: A[i][k] in lane 16k + i; D[i][j] in v[2(i/4)+1:2(i/4)] of lane
    // 16(i%4) + j (lane 0: D[0][0], D[4][0], D[8][0], D[12][0]).
    Dense {
        isa: Isa::Gfx9,
        w: mfma(110, 0, 0, 0),
        mnkb: [16, 16, 4, 1],
        r: [2, 2, 8],
        bits: [64, 64, 64],
        a_at: |i, k, _| (0, 16 * k + i, 0),
        b_at: |k, j, _| (0, 16 * k + j, 0),
        d_at: |i, j, _| (2 * (i / 4), 16 * (i % 4) + j, 0),
        enc_a: f64e,
        enc_b: f64e,
        enc_c: f64e,
        dec_d: f64d,
        a_block: same,
        av: va,
        bv: vb,
        cv: vc,
    }
    .check("v_mfma_f64_16x16x4f64");
}

#[test]
fn gfx942_xf32_and_fp8_bf8_mfma() {
    // calculator, v_mfma_f32_16x16x8_xf32: A[i][k] in v{k%2} of lane 16(k/2) + i. The values
    // need at most 10 mantissa bits, so XF32's reduced-precision products are exact.
    Dense {
        isa: Isa::Gfx9,
        w: mfma(62, 0, 0, 0),
        mnkb: [16, 16, 8, 1],
        r: [2, 2, 4],
        bits: [32, 32, 32],
        a_at: |i, k, _| (k % 2, 16 * (k / 2) + i, 0),
        b_at: |k, j, _| (k % 2, 16 * (k / 2) + j, 0),
        d_at: |i, j, _| (i % 4, 16 * (i / 4) + j, 0),
        enc_a: f32e,
        enc_b: f32e,
        enc_c: f32e,
        dec_d: f32d,
        a_block: same,
        av: va,
        bv: vb,
        cv: vc,
    }
    .check("v_mfma_f32_16x16x8_xf32");
    // v_mfma_f32_16x16x32_fp8_bf8: A FP8, B BF8 (MI300's: E4M3 bias 8 and E5M2 bias 16,
    // 0x80 NaN); A[i][k] in v{(k%8)/4}.[8(k%4)+7:8(k%4)] of lane 16(k/8) + i.
    Dense {
        isa: Isa::Gfx9,
        w: mfma(114, 0, 0, 0),
        mnkb: [16, 16, 32, 1],
        r: [2, 2, 4],
        bits: [8, 8, 32],
        a_at: |i, k, _| ((k % 8) / 4, 16 * (k / 8) + i, 8 * (k % 4) as u32),
        b_at: |k, j, _| ((k % 8) / 4, 16 * (k / 8) + j, 8 * (k % 4) as u32),
        d_at: |i, j, _| (i % 4, 16 * (i / 4) + j, 0),
        enc_a: |v| f8(v, 3, 8),
        enc_b: |v| f8(v, 2, 16),
        enc_c: f32e,
        dec_d: f32d,
        a_block: same,
        av: va,
        bv: vb,
        cv: vc,
    }
    .check("v_mfma_f32_16x16x32_fp8_bf8");
    // Spot values: FNUZ FP8 1.0 is 0x40, BF8 1.0 is 0x40, 0x80 is NaN.
    assert_eq!(
        (f8(1.0, 3, 8), f8(1.0, 2, 16), f8(-1.5, 3, 8)),
        (0x40, 0x40, 0xC4)
    );
}

#[test]
fn gfx942_smfmac_f16_selects_k_by_its_index_set() {
    // CDNA3 ISA, SMFMAC: A is 4:2 sparse: each group of 4 k holds 2 stored values, each with
    // a 2-bit index of its k within the group. calculator, v_smfmac_f32_16x16x32_f16: the
    // stored A is an A of K 16 (v{(kc%4)/2}.[16(kc%2)..] of lane 16(kc/4) + i; k 0..3 of
    // row 0 in v0{0}, 4..7 in v1{0}, 8..11 in v0{16}); the index of stored value kc is
    // bits 2(kc%4)+1:2(kc%4) of the same lane's index VGPR, in the 8-bit set ABID picks.
    // B is dense (K 32: v{(k%8)/2} of lane 16(k/8) + j). D accumulates in place.
    let (m, n, k) = (16, 16, 32);
    let mut ar = regs(2, 64);
    let mut br = regs(4, 64);
    let mut idx = regs(1, 64);
    let mut dr = regs(4, 64);
    let mut a = vec![0f64; m * k];
    for i in 0..m {
        for g in 0..k / 4 {
            // Two distinct positions of the group, varying by row and group.
            let (p0, p1) = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)][(i + g) % 6];
            for (q, p) in [(0, p0), (1, p1)] {
                let kc = 2 * g + q;
                let v = val(i * k + 4 * g + p, 1);
                a[i * k + 4 * g + p] = v;
                let lane = 16 * (kc / 4) + i;
                put(
                    &mut ar,
                    ((kc % 4) / 2, lane, 16 * (kc % 2) as u32),
                    16,
                    f16(v),
                );
                // ABID 1: the second 8-bit set; set 0 holds garbage that must not be read.
                put(&mut idx, (0, lane, 8 + 2 * (kc % 4) as u32), 2, p as u64);
                put(&mut idx, (0, lane, 2 * (kc % 4) as u32), 2, 3 - p as u64);
            }
        }
    }
    let mut b = vec![0f64; k * n];
    for x in 0..k {
        for j in 0..n {
            b[x * n + j] = vb(x * n + j);
            put(
                &mut br,
                ((x % 8) / 2, 16 * (x / 8) + j, 16 * (x % 2) as u32),
                16,
                f16(b[x * n + j]),
            );
        }
    }
    let mut c = vec![0f64; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = vc(i * n + j);
            put(
                &mut dr,
                (i % 4, 16 * (i / 4) + j, 0),
                32,
                f32e(c[i * n + j]),
            );
        }
    }
    let w = mfma(98, 0, 1, 0);
    let d = run_mm(Isa::Gfx9, w[0], w[1], &ar, &br, &idx, &dr, 4);
    let want = mma(m, n, k, &a, &b, &c);
    for i in 0..m {
        for j in 0..n {
            let got = f32d(get(&d, (i % 4, 16 * (i / 4) + j, 0), 32));
            assert_eq!(got, want[i * n + j], "D[{i}][{j}]");
        }
    }
}

/// gfx11/gfx12 VOP3P words of WMMA opcode `opc`: op_sel_hi all set, `w0`/`w1` extra bits.
fn wmma(opc: u32, w0: u32, w1: u32) -> [u32; 2] {
    [0xCC00_4000 | opc << 16 | w0, 3 << 27 | w1]
}

#[test]
fn gfx1100_wmma_bf16_result_iu8_and_iu4() {
    // RDNA3 ISA, WMMA (calculator InstCalcGfx11): lane i (and its copy i + 16) holds row i
    // of A (column i of B), k in order: 16-bit k in v{k/2}.[16(k%2)..], 8-bit in
    // v{k/4}.[8(k%4)..], 4-bit in v{k/8}.[4(k%8)..]. D[i][j] is v{i/2} of lane 16(i%2) + j;
    // 16-bit results in the half OPSEL[2] picks, the other half kept.
    let mut c = Dense {
        isa: Isa::Gfx11,
        w: wmma(0x43, 1 << 13, 0),
        mnkb: [16, 16, 16, 1],
        r: [8, 8, 8],
        bits: [16, 16, 16],
        a_at: |i, k, _| (k / 2, i, 16 * (k % 2) as u32),
        b_at: |k, j, _| (k / 2, j, 16 * (k % 2) as u32),
        d_at: |i, j, _| (i / 2, 16 * (i % 2) + j, 16),
        enc_a: bf16,
        enc_b: bf16,
        enc_c: bf16,
        dec_d: |v| f64::from(f32::from_bits((v as u32) << 16)),
        a_block: same,
        av: |e| val(e, 1) / 4.0,
        bv: |e| val(e, 2) / 4.0,
        cv: va,
    };
    c.check("v_wmma_bf16_16x16x16_bf16 op_sel:[0,0,1]");
    // IU8, A signed (NEG_LO[0]), B unsigned: bytes 0x80.. of B are 128.. .
    c.w = wmma(0x44, 0, 1 << 29);
    c.r = [4, 4, 8];
    c.bits = [8, 8, 32];
    c.a_at = |i, k, _| (k / 4, i, 8 * (k % 4) as u32);
    c.b_at = |k, j, _| (k / 4, j, 8 * (k % 4) as u32);
    c.d_at = |i, j, _| (i / 2, 16 * (i % 2) + j, 0);
    c.enc_a = i8e;
    c.enc_b = |v| v as u64;
    c.enc_c = i32e;
    c.dec_d = i32d;
    c.av = ia;
    c.bv = |e| ((e * 53 + 7) % 256) as f64;
    c.cv = ic;
    c.check("v_wmma_i32_16x16x16_iu8 neg_lo:[1,0,0]");
    // IU4 unsigned.
    c.w = wmma(0x45, 0, 0);
    c.r = [2, 2, 8];
    c.bits = [4, 4, 32];
    c.a_at = |i, k, _| (k / 8, i, 4 * (k % 8) as u32);
    c.b_at = |k, j, _| (k / 8, j, 4 * (k % 8) as u32);
    c.enc_a = |v| v as u64;
    c.av = |e| (e % 16) as f64;
    c.bv = |e| ((e * 7) % 16) as f64;
    c.check("v_wmma_i32_16x16x16_iu4");
}

#[test]
fn gfx1100_wmma_iu8_clamp_saturates() {
    // RDNA3 ISA, WMMA: CLAMP saturates the i32 result. All A = B = 127 (signed):
    // 16 * 16129 on C = i32::MAX - 1 saturates to i32::MAX.
    let w = wmma(0x44, 1 << 15, 3 << 29);
    let d = run_mm(
        Isa::Gfx11,
        w[0],
        w[1],
        &vec![vec![0x7f7f_7f7f; 32]; 4],
        &vec![vec![0x7f7f_7f7f; 32]; 4],
        &vec![vec![(i32::MAX - 1) as u32; 32]; 8],
        &[],
        8,
    );
    assert!(d.iter().flatten().all(|&w| w == i32::MAX as u32));
}

#[test]
fn gfx1201_wmma_layouts_differ_from_rdna3() {
    // RDNA4 ISA, WMMA (calculator InstCalcGfx12, wave32): 16-bit A[i][k] in
    // v{2(k/8) + (k/2)%2}.[16(k%2)..] of lane 16((k/4)%2) + i (lanes 0..15 hold k 0..3 and
    // 8..11); f32 D[i][j] in v{i%8} of lane 16(i/8) + j; 16-bit D packed: v{(i/2)%4}.[16(i%2)..].
    let mut c = Dense {
        isa: Isa::Gfx12,
        w: wmma(0x40, 0, 0),
        mnkb: [16, 16, 16, 1],
        r: [4, 4, 8],
        bits: [16, 16, 32],
        a_at: |i, k, _| {
            (
                2 * (k / 8) + (k / 2) % 2,
                16 * ((k / 4) % 2) + i,
                16 * (k % 2) as u32,
            )
        },
        b_at: |k, j, _| {
            (
                2 * (k / 8) + (k / 2) % 2,
                16 * ((k / 4) % 2) + j,
                16 * (k % 2) as u32,
            )
        },
        d_at: |i, j, _| (i % 8, 16 * (i / 8) + j, 0),
        enc_a: f16,
        enc_b: f16,
        enc_c: f32e,
        dec_d: f32d,
        a_block: same,
        av: va,
        bv: vb,
        cv: vc,
    };
    c.check("v_wmma_f32_16x16x16_f16");
    c.w = wmma(0x42, 0, 0);
    c.r = [4, 4, 4];
    c.bits = [16, 16, 16];
    c.d_at = |i, j, _| ((i / 2) % 4, 16 * (i / 8) + j, 16 * (i % 2) as u32);
    c.enc_c = f16;
    c.dec_d = f16v;
    c.check("v_wmma_f16_16x16x16_f16");
    // OCP FP8 (E4M3, bias 7) x BF8 (E5M2, bias 15): 8-bit A[i][k] in v{(k/4)%2}.[8(k%4)..]
    // of lane 16(k/8) + i.
    c.w = wmma(0x47, 0, 0);
    c.r = [2, 2, 8];
    c.bits = [8, 8, 32];
    c.a_at = |i, k, _| ((k / 4) % 2, 16 * (k / 8) + i, 8 * (k % 4) as u32);
    c.b_at = |k, j, _| ((k / 4) % 2, 16 * (k / 8) + j, 8 * (k % 4) as u32);
    c.d_at = |i, j, _| (i % 8, 16 * (i / 8) + j, 0);
    c.enc_a = |v| f8(v, 3, 7);
    c.enc_b = |v| f8(v, 2, 15);
    c.enc_c = f32e;
    c.dec_d = f32d;
    c.check("v_wmma_f32_16x16x16_fp8_bf8");
    // IU4, K 32, both signed: A[i][k] in v{(k/8)%2}.[4(k%8)..] of lane 16(k/16) + i.
    c.w = wmma(0x4a, 0, 3 << 29);
    c.mnkb = [16, 16, 32, 1];
    c.bits = [4, 4, 32];
    c.a_at = |i, k, _| ((k / 8) % 2, 16 * (k / 16) + i, 4 * (k % 8) as u32);
    c.b_at = |k, j, _| ((k / 8) % 2, 16 * (k / 16) + j, 4 * (k % 8) as u32);
    c.enc_a = |v| (v as i64 as u64) & 15;
    c.enc_b = |v| (v as i64 as u64) & 15;
    c.enc_c = i32e;
    c.dec_d = i32d;
    c.av = |e| (e % 16) as f64 - 8.0;
    c.bv = |e| ((e * 7) % 16) as f64 - 8.0;
    c.cv = ic;
    c.check("v_wmma_i32_16x16x32_iu4 neg_lo:[1,1,0]");
}

#[test]
fn gfx1201_swmmac_f16_and_iu8_select_k_by_index() {
    // RDNA4 ISA, SWMMAC (calculator InstCalcGfx12, wave32): A is 4:2 sparse. 16-bit: the 2
    // stored values of k group g (k/4) are the halves of v{2(g/4) + g%2} of lane
    // 16((g/2)%2) + i, their indices bits 8(g/4) + 4(g%2) + 2q of the same lane's index VGPR
    // (index_key 1: 16 bits up); B (K 32) in v{4(k/16) + (k/2)%4}.[16(k%2)..] of lane
    // 16((k/8)%2) + j. 8-bit: stored value q of group g in v{(g/2)%2}.[16(g%2) + 8q..] of lane
    // 16(g/4) + i, index bits 4(g%4) + 2q; B in v{(k/4)%4}.[8(k%4)..] of lane 16(k/16) + j.
    for (opc, key, bits, ra, rb) in [(0x50u32, 1u32, 16u32, 4usize, 8usize), (0x54, 0, 8, 2, 4)] {
        let (m, n, k) = (16, 16, 32);
        let mut ar = regs(ra, 32);
        let mut br = regs(rb, 32);
        let mut idx = regs(1, 32);
        let mut dr = regs(8, 32);
        let int = bits == 8;
        let (enc, valf): Codec = if int {
            (i8e, |e, s| if s == 1 { ia(e) } else { ib(e) })
        } else {
            (f16, val)
        };
        let mut a = vec![0f64; m * k];
        for i in 0..m {
            for g in 0..k / 4 {
                let (p0, p1) = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)][(i * 5 + g) % 6];
                for (q, p) in [(0usize, p0), (1, p1)] {
                    let v = valf(i * k + 4 * g + p, 1);
                    a[i * k + 4 * g + p] = v;
                    let (at, ib0) = if int {
                        (
                            ((g / 2) % 2, 16 * (g / 4) + i, (16 * (g % 2) + 8 * q) as u32),
                            4 * (g % 4),
                        )
                    } else {
                        (
                            (2 * (g / 4) + g % 2, 16 * ((g / 2) % 2) + i, 16 * q as u32),
                            8 * (g / 4) + 4 * (g % 2),
                        )
                    };
                    put(&mut ar, at, bits, enc(v));
                    let bit = (16 * key as usize + ib0 + 2 * q) as u32;
                    put(&mut idx, (0, at.1, bit), 2, p as u64);
                    if key == 1 {
                        // The unused set holds other positions.
                        put(&mut idx, (0, at.1, bit - 16), 2, 3 - p as u64);
                    }
                }
            }
        }
        let mut b = vec![0f64; k * n];
        for x in 0..k {
            for j in 0..n {
                let v = valf(x * n + j, 2);
                b[x * n + j] = v;
                let at = if int {
                    ((x / 4) % 4, 16 * (x / 16) + j, 8 * (x % 4) as u32)
                } else {
                    (
                        4 * (x / 16) + (x / 2) % 4,
                        16 * ((x / 8) % 2) + j,
                        16 * (x % 2) as u32,
                    )
                };
                put(&mut br, at, bits, enc(v));
            }
        }
        let mut c = vec![0f64; m * n];
        for i in 0..m {
            for j in 0..n {
                c[i * n + j] = if int { ic(i * n + j) } else { vc(i * n + j) };
                let v = if int {
                    i32e(c[i * n + j])
                } else {
                    f32e(c[i * n + j])
                };
                put(&mut dr, (i % 8, 16 * (i / 8) + j, 0), 32, v);
            }
        }
        // IU8: both signed (NEG_LO[0], [1]).
        let w = wmma(opc, key << 11, if int { 3 << 29 } else { 0 });
        let d = run_mm(Isa::Gfx12, w[0], w[1], &ar, &br, &idx, &dr, 8);
        let want = mma(m, n, k, &a, &b, &c);
        for i in 0..m {
            for j in 0..n {
                let raw = get(&d, (i % 8, 16 * (i / 8) + j, 0), 32);
                let got = if int { i32d(raw) } else { f32d(raw) };
                assert_eq!(got, want[i * n + j], "opcode {opc:#x}: D[{i}][{j}]");
            }
        }
    }
}

/// gfx942's SMFMAC on opcodes gfx90a gives bf16 MFMA (CDNA3 ISA guide, SMFMAC): 16-bit A
/// 4:2 sparse as [`gfx942_smfmac_f16_selects_k_by_its_index_set`], with `m` rows per lane
/// group (stored A value kc of row i in v{(kc%4)/2}.[16(kc%2)..] of lane m(kc/4) + i), dense B
/// (v{(k%8)/2}.[16(k%2)..] of lane m(k/8) + j), D in the 16x16 or 32x32 MFMA layout.
fn smfmac16(opc: u32, mnk: [usize; 3], bf: bool, what: &str) {
    let [m, n, k] = mnk;
    let enc = |v: f64| if bf { bf16(v) } else { f16(v) };
    let dec = |h: u64| {
        if bf {
            // CAST: a 16-bit pattern.
            f64::from(f32::from_bits((h as u32) << 16))
        } else {
            f16v(h)
        }
    };
    let d_at = |i: usize, j: usize| {
        if m == 16 {
            (i % 4, 16 * (i / 4) + j, 0)
        } else {
            (4 * (i / 8) + i % 4, 32 * ((i / 4) % 2) + j, 0)
        }
    };
    let dregs = m * n / 64;
    let mut ar = regs(2, 64);
    let mut br = regs(4, 64);
    let mut idx = regs(1, 64);
    let mut dr = regs(dregs, 64);
    let mut a = vec![0f64; m * k];
    for i in 0..m {
        for g in 0..k / 4 {
            let (p0, p1) = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)][(i + g) % 6];
            for (q, p) in [(0, p0), (1, p1)] {
                let kc = 2 * g + q;
                let h = enc(val(i * k + 4 * g + p, 1));
                a[i * k + 4 * g + p] = dec(h);
                let lane = m * (kc / 4) + i;
                put(&mut ar, ((kc % 4) / 2, lane, 16 * (kc % 2) as u32), 16, h);
                // ABID 1: the second 8-bit set; set 0 holds garbage that must not be read.
                put(&mut idx, (0, lane, 8 + 2 * (kc % 4) as u32), 2, p as u64);
                put(&mut idx, (0, lane, 2 * (kc % 4) as u32), 2, 3 - p as u64);
            }
        }
    }
    let mut b = vec![0f64; k * n];
    for x in 0..k {
        for j in 0..n {
            let h = enc(vb(x * n + j));
            b[x * n + j] = dec(h);
            put(
                &mut br,
                ((x % 8) / 2, m * (x / 8) + j, 16 * (x % 2) as u32),
                16,
                h,
            );
        }
    }
    let mut c = vec![0f64; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = vc(i * n + j);
            put(&mut dr, d_at(i, j), 32, f32e(c[i * n + j]));
        }
    }
    let w = mfma(opc, 0, 1, 0);
    let d = run_mm_on(Isa::Gfx9, true, w[0], w[1], &ar, &br, &idx, &dr, dregs);
    let want = mma(m, n, k, &a, &b, &c);
    for i in 0..m {
        for j in 0..n {
            let got = f32d(get(&d, d_at(i, j), 32));
            let want = f32d(f32e(want[i * n + j]));
            assert_eq!(got, want, "{what}: D[{i}][{j}]");
        }
    }
}

#[test]
fn gfx942_smfmac_on_gfx90a_bf16_mfma_opcodes() {
    smfmac16(100, [32, 32, 16], false, "v_smfmac_f32_32x32x16_f16");
    smfmac16(102, [16, 16, 32], true, "v_smfmac_f32_16x16x32_bf16");
    smfmac16(104, [32, 32, 16], true, "v_smfmac_f32_32x32x16_bf16");
}

#[test]
fn gfx942_smfmac_i32_32x32x32_i8_on_a_gfx90a_mfma_opcode() {
    // CDNA3 ISA, SMFMAC (calculator layout): the stored A is an i8 A of K 16 (8 bytes a lane:
    // value kc of row i in v{(kc%8)/4}.[8(kc%4)..] of lane 32(kc/8) + i); its 2-bit indices in
    // the 16-bit set ABID picks; B dense i8 K 32 (v{(k%16)/4}.[8(k%4)..] of lane 32(k/16) + j).
    let (m, n, k) = (32, 32, 32);
    let d_at = |i: usize, j: usize| (4 * (i / 8) + i % 4, 32 * ((i / 4) % 2) + j, 0);
    let mut ar = regs(2, 64);
    let mut br = regs(4, 64);
    let mut idx = regs(1, 64);
    let mut dr = regs(16, 64);
    let mut a = vec![0f64; m * k];
    for i in 0..m {
        for g in 0..k / 4 {
            let (p0, p1) = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)][(i + g) % 6];
            for (q, p) in [(0, p0), (1, p1)] {
                let kc = 2 * g + q;
                let v = ia(i * k + 4 * g + p);
                a[i * k + 4 * g + p] = v;
                let lane = 32 * (kc / 8) + i;
                put(
                    &mut ar,
                    ((kc % 8) / 4, lane, 8 * (kc % 4) as u32),
                    8,
                    i8e(v),
                );
                // ABID 1: the second 16-bit set; set 0 holds garbage that must not be read.
                put(&mut idx, (0, lane, 16 + 2 * (kc % 8) as u32), 2, p as u64);
                put(&mut idx, (0, lane, 2 * (kc % 8) as u32), 2, 3 - p as u64);
            }
        }
    }
    let mut b = vec![0f64; k * n];
    for x in 0..k {
        for j in 0..n {
            b[x * n + j] = ib(x * n + j);
            put(
                &mut br,
                ((x % 16) / 4, 32 * (x / 16) + j, 8 * (x % 4) as u32),
                8,
                i8e(b[x * n + j]),
            );
        }
    }
    let mut c = vec![0f64; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = ic(i * n + j);
            put(&mut dr, d_at(i, j), 32, i32e(c[i * n + j]));
        }
    }
    let w = mfma(108, 0, 1, 0);
    let d = run_mm_on(Isa::Gfx9, true, w[0], w[1], &ar, &br, &idx, &dr, 16);
    let want = mma(m, n, k, &a, &b, &c);
    for i in 0..m {
        for j in 0..n {
            let got = i32d(get(&d, d_at(i, j), 32));
            assert_eq!(
                got,
                want[i * n + j],
                "v_smfmac_i32_32x32x32_i8: D[{i}][{j}]"
            );
        }
    }
}
