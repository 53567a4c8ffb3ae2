//! Property tests: for every PM4 and SDMA encoder, decoding what it wrote gives back its input;
//! the decoders never panic on arbitrary dwords and agree with `packet_len`.

use hcq_core::addr::GpuVa;
use hcq_core::arch::{GFX9, GFX11};
use hcq_core::pm4::{self, Pm4Packet};
use hcq_core::rsrc::ScratchRsrc;
use hcq_core::sdma::{self, SdmaPacket};
use hcq_core::sel::{DataSel, IntSel};
use hcq_core::signal::SignalRef;
use proptest::prelude::*;

fn one_pm4(b: &[u32]) -> Pm4Packet<'_> {
    let (p, n) = pm4::decode_one(b).unwrap();
    assert_eq!(n, b.len());
    assert_eq!(pm4::packet_len(b[0]), Ok(n));
    p
}

fn one_sdma(b: &[u32]) -> SdmaPacket<'_> {
    let (p, n) = sdma::decode_one(b).unwrap();
    assert_eq!(n, b.len());
    assert_eq!(sdma::packet_len(b), Ok(n));
    p
}

fn va() -> impl Strategy<Value = GpuVa> {
    any::<u64>().prop_map(GpuVa)
}

fn signal() -> impl Strategy<Value = SignalRef> {
    (
        any::<u64>(),
        prop_oneof![Just(0u64), any::<u64>()],
        0u32..0x0FFF_FFFF,
    )
        .prop_map(|(a, m, e)| SignalRef {
            addr: a & !0x3f & (u64::MAX - 0x40),
            event_mailbox_ptr: m,
            event_id: if m == 0 { 0 } else { e },
        })
}

proptest! {
    #[test]
    fn release_mem(e in any::<u32>(), d in any::<u32>(), addr in va(), data in any::<u64>(), ctx in any::<u32>()) {
        let r = pm4::ReleaseMem { event: pm4::ReleaseMemEventCntl(e), data_cntl: pm4::ReleaseMemDataCntl(d), addr, data, int_ctxid: ctx };
        let mut b = [0; 8];
        prop_assert_eq!(pm4::release_mem(&mut b, &r), Ok(8));
        prop_assert_eq!(one_pm4(&b), Pm4Packet::ReleaseMem(r));
    }

    #[test]
    fn wait_reg_mem(w in any::<[u32; 6]>()) {
        let p = pm4::WaitRegMem { control: pm4::WaitRegMemCtl(w[0]), addr_lo: w[1], addr_hi: w[2], reference: w[3], mask: w[4], poll_interval: w[5] };
        let mut b = [0; 7];
        pm4::wait_reg_mem(&mut b, &p).unwrap();
        prop_assert_eq!(one_pm4(&b), Pm4Packet::WaitRegMem(p));
    }

    #[test]
    fn acquire_mem(c in any::<u32>(), size in any::<u64>(), base in any::<u64>(), poll in any::<u32>(), gcr in proptest::option::of(any::<u32>())) {
        let a = pm4::AcquireMem { coher_cntl: c, size, base, poll_interval: poll, gcr_cntl: gcr.map(pm4::GcrCntl) };
        let mut b = [0; 8];
        let n = pm4::acquire_mem(&mut b, &a).unwrap();
        prop_assert_eq!(n, if gcr.is_some() { 8 } else { 7 });
        prop_assert_eq!(one_pm4(&b[..n]), Pm4Packet::AcquireMem(a));
    }

    #[test]
    fn ib_dispatch_event(addr in va(), size in 0u32..(1 << 20), dim in any::<[u32; 3]>(), init in any::<u32>(), ev in any::<u32>()) {
        let mut b = [0; 5];
        pm4::indirect_buffer(&mut b, addr, size).unwrap();
        let Pm4Packet::IndirectBuffer(ib) = one_pm4(&b[..4]) else { panic!() };
        prop_assert_eq!(ib.addr, addr);
        prop_assert_eq!(ib.control.get(pm4::IbControl::IB_SIZE), size);
        prop_assert_eq!(ib.control.get(pm4::IbControl::VALID), 1);
        let d = pm4::DispatchDirect { dim, initiator: pm4::DispatchInitiator(init) };
        pm4::dispatch_direct(&mut b, &d).unwrap();
        prop_assert_eq!(one_pm4(&b), Pm4Packet::DispatchDirect(d));
        pm4::event_write(&mut b, pm4::EventWriteCntl(ev)).unwrap();
        prop_assert_eq!(one_pm4(&b[..2]), Pm4Packet::EventWrite(pm4::EventWriteCntl(ev)));
    }

    #[test]
    fn set_reg_write_data_nop(off in any::<u32>(), vals in proptest::collection::vec(any::<u32>(), 1..64), addr in va(), ctl in any::<u32>(), n in 1usize..200) {
        let mut b = [0; 256];
        let k = pm4::set_sh_reg(&mut b, off, &vals).unwrap();
        prop_assert_eq!(one_pm4(&b[..k]), Pm4Packet::SetShReg { reg_offset: off, values: &vals });
        let k = pm4::set_uconfig_reg(&mut b, off, &vals).unwrap();
        prop_assert_eq!(one_pm4(&b[..k]), Pm4Packet::SetUconfigReg { reg_offset: off, values: &vals });
        let k = pm4::write_data(&mut b, pm4::WriteDataCntl(ctl), addr, &vals).unwrap();
        prop_assert_eq!(one_pm4(&b[..k]), Pm4Packet::WriteData { control: pm4::WriteDataCntl(ctl), addr, data: &vals });
        let k = pm4::nop(&mut b, n).unwrap();
        prop_assert_eq!(k, n);
        let Pm4Packet::Nop { body } = one_pm4(&b[..k]) else { panic!() };
        prop_assert_eq!(body.len(), n - 1);
    }

    #[test]
    fn seed_commands(s in signal(), v in any::<u64>(), w in any::<u32>(), gfx9 in any::<bool>(),
                     prog_addr in va(), scratch in va(), regs in any::<[u32; 3]>(), kernargs in 0u64..(1 << 60),
                     g in any::<[u32; 3]>(), l in any::<[u32; 3]>(), dp in any::<bool>(),
                     psb in any::<bool>(), fsi in any::<bool>(), rsrc3 in any::<u32>()) {
        let arch = if gfx9 { &GFX9 } else { &GFX11 };
        let mut b = [0u32; 128];
        let n = pm4::signal(&mut b, arch, &s, v).unwrap();
        prop_assert_eq!(n, pm4::signal_dwords(&s));
        let pk: Vec<_> = pm4::decode(&b[..n]).map(|r| r.unwrap().1).collect();
        prop_assert_eq!(pk[0], Pm4Packet::ReleaseMem(pm4::release_packet(arch, DataSel::Data32, IntSel::InterruptAfterWrite, GpuVa(s.value_addr()), v, 0, true)));
        if s.has_event() {
            prop_assert_eq!(pk[1], Pm4Packet::ReleaseMem(pm4::mailbox_packet(arch, &s)));
        }
        let n = pm4::wait(&mut b, &s, w).unwrap();
        prop_assert_eq!(one_pm4(&b[..n]), Pm4Packet::WaitRegMem(pm4::wait_packet(GpuVa(s.value_addr()), w)));
        let n = pm4::timestamp(&mut b, arch, &s).unwrap();
        let Pm4Packet::ReleaseMem(r) = one_pm4(&b[..n]) else { panic!() };
        prop_assert_eq!(r.addr, GpuVa(s.start_ts_addr()));
        prop_assert_eq!(r.data_cntl.get(pm4::ReleaseMemDataCntl::DATA_SEL), 3);
        let n = pm4::memory_barrier(&mut b, arch).unwrap();
        prop_assert_eq!(n, pm4::memory_barrier_dwords(arch));
        prop_assert_eq!(pm4::decode(&b[..n]).count(), 2);
        let prog = pm4::Program {
            prog_addr, scratch_addr: scratch, tmpring_size: regs[0], rsrc1: regs[1], rsrc2: regs[2], rsrc3,
            dispatch: dp.then_some(pm4::DispatchInfo { packet_offset: 0x40, group_segment_size: 1, private_segment_size: 2 }),
            private_segment_buffer: psb.then_some(ScratchRsrc([regs[0], regs[1], regs[2], 7])),
            flat_scratch_init: fsi.then_some(scratch),
        };
        let n = pm4::exec(&mut b, arch, &prog, GpuVa(kernargs), g, l).unwrap();
        let layout = pm4::exec_layout(arch, &prog);
        prop_assert_eq!(n, layout.dwords);
        let pk: Vec<_> = pm4::decode(&b[..n]).map(|r| r.unwrap()).collect();
        // gfx9 writes COMPUTE_PGM_RSRC3 (then a NOP) where gfx11 writes SE4..SE7.
        let extra = usize::from(arch.exec_writes_pgm_rsrc3);
        prop_assert_eq!(pk.len(), 13 + extra);
        if gfx9 {
            prop_assert_eq!(pk[7].1, Pm4Packet::SetShReg { reg_offset: 0x22d, values: &[rsrc3] });
        }
        // USER_DATA in allocation order: V#, dispatch pointer, kernarg pointer, flat scratch init.
        let Pm4Packet::SetShReg { reg_offset, values } = pk[8 + extra].1 else { panic!() };
        prop_assert_eq!(reg_offset, arch.regs.user_data_0);
        let mut want = Vec::new();
        if psb { want.extend([regs[0], regs[1], regs[2], 7]); }
        if dp { want.extend([(kernargs + 0x40) as u32, ((kernargs + 0x40) >> 32) as u32]); }
        want.extend([kernargs as u32, (kernargs >> 32) as u32]);
        if fsi { want.extend([scratch.lo(), scratch.hi()]); }
        prop_assert_eq!(values, &want[..]);
        let (at, d) = pk[11 + extra];
        prop_assert_eq!(at, layout.dispatch_at);
        prop_assert_eq!(d, Pm4Packet::DispatchDirect(pm4::DispatchDirect { dim: g, initiator: pm4::dispatch_initiator(arch) }));
        prop_assert_eq!(&b[layout.local_at..layout.local_at + 3], &l[..]);
        // Too small a buffer is an error, never a panic.
        prop_assert!(pm4::exec(&mut b[..n - 1], arch, &prog, GpuVa(kernargs), g, l).is_err());
    }

    #[test]
    fn sdma_fixed(h in any::<u32>(), count in 0u32..(1 << 30), p in any::<u32>(), a in va(), c in va(), data in any::<u32>(), ctx in 0u32..(1 << 28), dw5 in any::<u32>(), mask in any::<u32>(), size in 0u32..(1 << 20)) {
        let flags = h & 0xFFFF_0000;
        let mut b = [0u32; 8];
        let cl = sdma::CopyLinear { header: sdma::CopyLinearHeader(flags), count, params: sdma::CopyLinearParams(p), src: a, dst: c };
        sdma::copy_linear(&mut b, &cl).unwrap();
        prop_assert_eq!(one_sdma(&b[..7]), SdmaPacket::CopyLinear(cl));
        let f = sdma::Fence { header: sdma::FenceHeader(flags), addr: a, data };
        sdma::fence(&mut b, &f).unwrap();
        prop_assert_eq!(one_sdma(&b[..4]), SdmaPacket::Fence(f));
        sdma::trap(&mut b, ctx).unwrap();
        prop_assert_eq!(one_sdma(&b[..2]), SdmaPacket::Trap { int_context: ctx });
        let pr = sdma::PollRegmem { header: sdma::PollRegmemHeader(flags), addr: a, value: data, mask, dw5: sdma::PollRegmemDw5(dw5) };
        sdma::poll_regmem(&mut b, &pr).unwrap();
        prop_assert_eq!(one_sdma(&b[..6]), SdmaPacket::PollRegmem(pr));
        sdma::timestamp_to(&mut b, a).unwrap();
        prop_assert_eq!(one_sdma(&b[..3]), SdmaPacket::Timestamp { addr: a });
        let cf = sdma::ConstFill { header: sdma::ConstFillHeader(flags), dst: a, data, count };
        sdma::const_fill_raw(&mut b, &cf).unwrap();
        prop_assert_eq!(one_sdma(&b[..5]), SdmaPacket::ConstFill(cf));
        let ind = sdma::Indirect { header: sdma::IndirectHeader(flags), ib: a, size_dwords: size, csa: c };
        sdma::indirect(&mut b, &ind).unwrap();
        prop_assert_eq!(one_sdma(&b[..6]), SdmaPacket::Indirect(ind));
        let g = sdma::GcrReq { sub_op: count & 1, base_va: a.get() & 0xffff_ffff_ff80, limit_va: c.get() & 0xffff_ffff_ff80, gcr: pm4::GcrCntl(data & 0x7ffff), vmid: ctx & 0xf };
        sdma::gcr_req(&mut b, &g).unwrap();
        prop_assert_eq!(one_sdma(&b[..5]), SdmaPacket::GcrReq(g));
    }

    #[test]
    fn sdma_variable(vals in proptest::collection::vec(any::<u32>(), 1..64), dst in va(), n in 1usize..100) {
        let mut b = [0u32; 128];
        let k = sdma::write(&mut b, dst, &vals).unwrap();
        let SdmaPacket::Write { dst: d, dw3, data } = one_sdma(&b[..k]) else { panic!() };
        prop_assert_eq!((d, data), (dst, &vals[..]));
        prop_assert_eq!(dw3.get(sdma::WriteDw3::COUNT) as usize, vals.len() - 1);
        let k = sdma::nop(&mut b, n).unwrap();
        let SdmaPacket::Nop { body } = one_sdma(&b[..k]) else { panic!() };
        prop_assert_eq!(body.len(), n - 1);
    }

    #[test]
    fn sdma_seed_commands(s in signal(), v in any::<u32>(), size in 0u64..(64 << 20), src in 0u64..(1 << 62), dst in 0u64..(1 << 62), hw in any::<bool>()) {
        let mut b = vec![0u32; 200];
        let opts = sdma::CopyOptions { gcr: if hw { sdma::GcrPlacement::Hardware } else { sdma::GcrPlacement::Seed }, max_copy_bytes: 0x40_0000 };
        let n = sdma::copy_with(&mut b, &opts, GpuVa(dst), GpuVa(src), size).unwrap();
        let pk: Vec<_> = sdma::decode(&b[..n]).map(|r| r.unwrap().1).collect();
        prop_assert_eq!(pk.len() as u64, 2 + size.div_ceil(0x40_0000));
        let total: u64 = pk.iter().filter_map(|p| match p { SdmaPacket::CopyLinear(c) => Some(u64::from(c.count) + 1), _ => None }).sum();
        prop_assert_eq!(total, size);
        prop_assert_eq!(pk[0], SdmaPacket::GcrReq(sdma::copy_gcr(sdma::COPY_GCR_INVALIDATE, opts.gcr)));
        if hw {
            let SdmaPacket::GcrReq(g) = pk[0] else { panic!() };
            prop_assert_eq!(g.gcr, sdma::COPY_GCR_INVALIDATE);
        }
        let n = sdma::signal(&mut b, &GFX11, &s, v).unwrap();
        let pk: Vec<_> = sdma::decode(&b[..n]).map(|r| r.unwrap().1).collect();
        prop_assert_eq!(pk.len(), if s.has_event() { 3 } else { 1 });
        prop_assert_eq!(pk[0], SdmaPacket::Fence(sdma::Fence { header: sdma::fence_header(&GFX11), addr: GpuVa(s.value_addr()), data: v }));
        if s.has_event() {
            prop_assert_eq!(pk[2], SdmaPacket::Trap { int_context: s.event_id });
        }
        let n = sdma::wait(&mut b, &s, v).unwrap();
        prop_assert_eq!(one_sdma(&b[..n]), SdmaPacket::PollRegmem(sdma::wait_packet(GpuVa(s.value_addr()), v)));
    }

    #[test]
    fn decoders_never_panic(d in proptest::collection::vec(prop_oneof![any::<u32>(), (0u32..0x100, 0u32..0x40).prop_map(|(o, c)| 0xC000_0000 | c << 16 | o << 8), 0u32..0x20_0000], 0..64)) {
        let mut at = 0;
        for r in pm4::decode(&d) {
            match r {
                Ok((off, p)) => {
                    prop_assert_eq!(off, at);
                    at += pm4::packet_len(d[off]).unwrap();
                    let _ = p.to_string();
                }
                Err(e) => { prop_assert_eq!(e.at, at); let _ = e.to_string(); }
            }
        }
        let mut at = 0;
        for r in sdma::decode(&d) {
            match r {
                Ok((off, p)) => {
                    prop_assert_eq!(off, at);
                    at += sdma::packet_len(&d[off..]).unwrap();
                    let _ = p.to_string();
                }
                Err(e) => { prop_assert_eq!(e.at, at); let _ = e.to_string(); }
            }
        }
    }
}

proptest! {
    #[test]
    fn gfx_target_roundtrips(major in 9u32..=12, minor in 0u32..16, stepping in 0u32..16, junk in ".{0,8}", v in any::<u32>()) {
        use hcq_core::arch::GfxTarget;
        let t = GfxTarget::new(major, minor, stepping).unwrap();
        prop_assert_eq!(GfxTarget::parse(&t.to_string()), Ok(t));
        prop_assert_eq!(GfxTarget::from_kfd_version(t.kfd_version()), Ok(t));
        let _ = GfxTarget::parse(&junk);
        let _ = GfxTarget::parse(&format!("gfx{junk}"));
        if let Ok(t) = GfxTarget::from_kfd_version(v) {
            prop_assert_eq!(t.kfd_version(), v);
        }
    }
}
