//! Two GPUs (tinygrad's test_multidevice_signal_wait, cross_device_signal,
//! test_small_copies_from_host_buf_transfer, peer transfers), on the deterministic and the
//! threaded simulator.

mod hcq_common;

use hcq_common::{
    LONG, P4, Sd, SimMode, both_modes, gpu_u64, pattern, programs, read_u32s, rig, write_u32s,
};
use hcq_driver::{BufferKind, Device};
use hcq_tests::Rig;
use hcq_tests::fixtures::VectorAddArgs;

fn two(mode: SimMode) -> (Rig, Device, Device) {
    let r = rig(mode, 2, LONG);
    let d0 = Device::open(&r.kfd, 0).unwrap();
    let d1 = Device::open(&r.kfd, 1).unwrap();
    assert_ne!(d0.gpu_id(), d1.gpu_id());
    (r, d0, d1)
}

/// One GPU waits on a signal another writes, each way and on each queue type; the waiting
/// GPU's work is submitted first, so it really waits.
fn one_gpu_waits_on_a_signal_written_by_another(mode: SimMode) {
    let (rig, d0, d1) = two(mode);
    let mut v = 0u32;
    for (waiter, writer) in [(&d1, &d0), (&d0, &d1)] {
        for waiter_compute in [true, false] {
            for writer_compute in [true, false] {
                v += 1;
                let sig = writer.new_signal(0).unwrap();
                let done = waiter.new_signal(0).unwrap();
                if waiter_compute {
                    let mut l = P4::new(waiter.arch());
                    l.wait(&sig.signal_ref(), v).unwrap();
                    l.signal(&done.signal_ref(), u64::from(v)).unwrap();
                    // SAFETY: the list only waits on and sets signals this test created, alive past the
                    // waits below.
                    unsafe { waiter.submit_pm4(&l) }.unwrap();
                } else {
                    let mut l = Sd::new(waiter.arch());
                    l.wait(&sig.signal_ref(), v).unwrap();
                    l.signal(&done.signal_ref(), v).unwrap();
                    // SAFETY: the list only waits on and sets signals this test created, alive past the
                    // waits below.
                    unsafe { waiter.submit_sdma(&l) }.unwrap();
                }
                if writer_compute {
                    let mut l = P4::new(writer.arch());
                    l.signal(&sig.signal_ref(), u64::from(v)).unwrap();
                    // SAFETY: the list only waits on and sets signals this test created, alive past the
                    // waits below.
                    unsafe { writer.submit_pm4(&l) }.unwrap();
                } else {
                    let mut l = Sd::new(writer.arch());
                    l.signal(&sig.signal_ref(), v).unwrap();
                    // SAFETY: the list only waits on and sets signals this test created, alive past the
                    // waits below.
                    unsafe { writer.submit_sdma(&l) }.unwrap();
                }
                waiter.wait(&done, u64::from(v)).unwrap();
                assert_eq!(done.value(), u64::from(v));
                // The waiter's GPU reads the writer's value at the same address.
                let va = sig.signal_ref().value_addr();
                assert_eq!(gpu_u64(&rig.sim, waiter.gpu_id(), va), u64::from(v));
                assert_eq!(gpu_u64(&rig.sim, writer.gpu_id(), va), u64::from(v));
            }
        }
    }
    d0.synchronize().unwrap();
    d1.synchronize().unwrap();
}

/// GPU 1 waits on GPU 0's timeline (the signal and 32-bit value GPU 0 names for a value):
/// GPU 0 fills a buffer with a kernel, GPU 1's copy of it (a peer read) waits for that.
fn one_gpu_waits_on_another_timeline(mode: SimMode) {
    let (_rig, d0, d1) = two(mode);
    let (fill, _) = programs(&d0);
    let n = 4096u32;
    let src = d0.alloc(u64::from(n) * 4, BufferKind::Vram).unwrap();
    src.map_to(&d1).unwrap();
    let dst = d1.alloc(u64::from(n) * 4, BufferKind::Vram).unwrap();
    let args = hcq_tests::fixtures::FillArgs {
        buf: src.va().get(),
        value: 0x600d_f00d,
        n,
    };
    // A gate on GPU 0 holds the fill back until GPU 1's copy is queued behind its wait.
    let gate = d0.new_signal(0).unwrap();
    let mut l = P4::new(d0.arch());
    l.wait(&gate.signal_ref(), 1).unwrap();
    // SAFETY: the list only waits on and sets signals this test created, alive past the
    // waits below.
    unsafe { d0.submit_pm4(&l) }.unwrap();
    // SAFETY: src holds n u32s and lives until after both devices synchronized.
    let v = unsafe { fill.launch_pod(&args, [n / 64, 1, 1], [64, 1, 1]) }.unwrap();
    let (sig, gv) = d0.timeline_target(v).unwrap();
    // SAFETY: waits on GPU 0's timeline (a wait only), then copies n u32s between `src` and
    // `dst` (both that large, mapped to GPU 1, alive until after both devices synchronized).
    let copied = unsafe {
        d1.submit_copy(|c| {
            c.wait(&sig, gv)?;
            c.copy(dst.va(), src.va(), u64::from(n) * 4)
        })
    }
    .unwrap();
    gate.set(1);
    d1.wait_value(copied).unwrap();
    assert_eq!(
        read_u32s(&d1, &dst, n as usize),
        vec![0x600d_f00d; n as usize]
    );
    d0.synchronize().unwrap();
}

/// Peer transfers both ways, odd sizes across the 4 MiB chunk edge; a kernel on the
/// destination GPU submitted right after the transfer (no host wait) sees the data.
fn peer_transfer(mode: SimMode) {
    let (_rig, d0, d1) = two(mode);
    for (n, from, to) in [
        (5 << 20, &d0, &d1),
        ((4 << 20) + 3, &d1, &d0),
        (8, &d0, &d1),
    ] {
        let src = from.alloc(n as u64, BufferKind::Vram).unwrap();
        let dst = to.alloc(n as u64, BufferKind::Vram).unwrap();
        let data = pattern(n, n as u32);
        from.copy_in(&src, &data).unwrap();
        Device::transfer(to, &dst, from, &src).unwrap();
        let mut out = vec![0u8; n];
        to.copy_out(&dst, &mut out).unwrap();
        assert!(out == data, "{n} bytes");
    }
    let (_, add) = programs(&d1);
    let n = 1024u32;
    let a = d0.alloc(u64::from(n) * 4, BufferKind::Vram).unwrap();
    let b = d1.alloc(u64::from(n) * 4, BufferKind::Vram).unwrap();
    let c = d1.alloc(u64::from(n) * 4, BufferKind::Vram).unwrap();
    write_u32s(&d0, &a, &(0..n).collect::<Vec<_>>());
    write_u32s(&d1, &c, &vec![1; n as usize]);
    Device::transfer(&d1, &b, &d0, &a).unwrap();
    let args = VectorAddArgs {
        a: b.va().get(),
        b: c.va().get(),
        c: c.va().get(),
        n,
    };
    // SAFETY: b and c hold n u32s and outlive the launch (read_u32s waits).
    unsafe { add.launch_pod(&args, [n / 64, 1, 1], [64, 1, 1]) }.unwrap();
    assert_eq!(read_u32s(&d1, &c, n as usize), (1..=n).collect::<Vec<_>>());
}

/// 256 one-byte transfers from a host buffer on GPU 0 into a buffer on GPU 1.
fn small_transfers_from_a_host_buffer(mode: SimMode) {
    let (_rig, d0, d1) = two(mode);
    let host = d0.alloc(256, BufferKind::Host).unwrap();
    let data: Vec<u8> = (0..=255u8).map(|b| b ^ 0xa5).collect();
    host.write(0, &data).unwrap();
    let dst = d1.alloc(256, BufferKind::Vram).unwrap();
    dst.map_to(&d0).unwrap();
    for i in 0..256u64 {
        d0.copy_range(&dst, i, &host, 255 - i, 1).unwrap();
    }
    d0.synchronize().unwrap();
    let mut out = vec![0u8; 256];
    d1.copy_out(&dst, &mut out).unwrap();
    let want: Vec<u8> = data.iter().rev().copied().collect();
    assert_eq!(out, want);
}

/// GPU 1 follows GPU 0's timeline across GPU 0's wrap (from 2^32 - 10): each round GPU 1's
/// copy queue waits for the signal and 32-bit value GPU 0 names for its latest submission,
/// gated by the host so the wait is real, then signals its own value.
fn waits_on_another_timeline_across_its_wrap(mode: SimMode) {
    let (_rig, d0, d1) = two(mode);
    d0.set_timeline_value((1 << 32) - 10).unwrap();
    let done = d1.new_signal(0).unwrap();
    let mut wrapped = false;
    for round in 1..=30u32 {
        let gate = d0.new_signal(0).unwrap();
        let mut l = P4::new(d0.arch());
        l.wait(&gate.signal_ref(), 1).unwrap();
        // SAFETY: the list only waits on and sets signals this test created, alive past the
        // waits below.
        let v0 = unsafe { d0.submit_pm4(&l) }.unwrap();
        let (sig, gv) = d0.timeline_target(v0).unwrap();
        wrapped |= u64::from(gv) != v0.get();
        let mut w = Sd::new(d1.arch());
        w.wait(&sig, gv).unwrap();
        w.signal(&done.signal_ref(), round).unwrap();
        // SAFETY: the list waits on GPU 0's timeline value (a wait only) and sets `done`, a signal this test created.
        let v1 = unsafe { d1.submit_sdma(&w) }.unwrap();
        gate.set(1);
        d1.wait_value(v1).unwrap();
        assert_eq!(done.value(), u64::from(round));
        if round % 3 == 0 {
            d0.synchronize().unwrap();
        }
    }
    assert!(wrapped, "GPU 0's timeline never wrapped");
    assert_eq!(d0.last_value().get(), (1 << 32) - 10 + 29);
    d0.synchronize().unwrap();
    d1.synchronize().unwrap();
}

both_modes!(
    waits_on_another_timeline_across_its_wrap,
    one_gpu_waits_on_a_signal_written_by_another,
    one_gpu_waits_on_another_timeline,
    peer_transfer,
    small_transfers_from_a_host_buffer,
);
