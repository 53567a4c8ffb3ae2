//! tinygrad's copy behaviours (test_copy, test_copy_long, the 4 MiB SDMA chunking,
//! test_small_copies_from_host_buf(_intercopy), test_memory_barrier_before_copy, chained
//! copies) on the deterministic and the threaded simulator.

mod hcq_common;

use hcq_common::{SimMode, both_modes, one, pattern};
use hcq_driver::{BufferKind, Device, GpuBuffer};
use hcq_sim::engine::TraceEvent;
use hcq_tests::Rig;

const MIB: u64 = 1 << 20;
/// SDMA COPY_LINEAR moves at most this much per packet (gfx11: `sdma_max_copy_bytes`).
const CHUNK: u64 = 4 * MIB;

/// (count, src, dst) of every SDMA COPY_LINEAR the simulated GPU executed whose destination
/// lies in `dst`, in execution order.
fn copies_into(rig: &Rig, dst: &GpuBuffer) -> Vec<(u64, u64, u64)> {
    rig.gpu
        .engines()
        .trace()
        .into_iter()
        .filter_map(|e| match e.event {
            TraceEvent::Packet { dwords, len: 7 } if dwords[0] & 0xffff == 0x0001 => {
                let src = u64::from(dwords[3]) | u64::from(dwords[4]) << 32;
                let d = u64::from(dwords[5]) | u64::from(dwords[6]) << 32;
                Some((u64::from(dwords[1]) + 1, src, d))
            }
            _ => None,
        })
        .filter(|&(_, _, d)| d >= dst.va().get() && d < dst.va().get() + dst.len())
        .collect()
}

/// Device copy of `n` bytes from the start of `a` to offset `off` of a larger `b`; the
/// bytes around the destination keep their old values; the SDMA packets are exactly the
/// 4 MiB chunks.
fn copy_case(rig: &Rig, dev: &Device, n: u64, off: u64) {
    let guard = 4096;
    let a = dev.alloc(n, BufferKind::Vram).unwrap();
    let b = dev
        .alloc(off + n + guard, BufferKind::VramCpuVisible)
        .unwrap();
    let data = pattern(n as usize, n as u32);
    // Only the bytes around the destination get old values (CPU writes; the middle is 0).
    let mut old = vec![0u8; (off + n + guard) as usize];
    let (o, e) = (off as usize, (off + n) as usize);
    old[..o].copy_from_slice(&pattern(o, 0xdead));
    old[e..].copy_from_slice(&pattern(guard as usize, 0xbeef));
    b.write(0, &old[..o]).unwrap();
    b.write(off + n, &old[e..]).unwrap();
    dev.copy_in(&a, &data).unwrap();
    dev.synchronize().unwrap();
    rig.gpu.engines().clear_trace();
    let v = dev.copy_range(&b, off, &a, 0, n).unwrap();
    dev.wait_value(v).unwrap();
    let mut want = Vec::new();
    let mut done = 0;
    while done < n {
        let step = CHUNK.min(n - done);
        want.push((step, a.va().get() + done, b.va().get() + off + done));
        done += step;
    }
    assert_eq!(copies_into(rig, &b), want, "copy of {n} bytes");
    let mut out = vec![0u8; (off + n + guard) as usize];
    dev.copy_out(&b, &mut out).unwrap();
    let (o, n) = (off as usize, n as usize);
    assert!(
        out[..o] == old[..o],
        "{n} bytes: bytes before the copy changed"
    );
    assert!(out[o..o + n] == data[..], "{n} bytes: copied bytes differ");
    assert!(
        out[o + n..] == old[o + n..],
        "{n} bytes: bytes after the copy changed"
    );
}

/// test_copy: 8 bytes, host -> VRAM -> VRAM -> host.
fn copy_8_bytes(mode: SimMode) {
    let (rig, dev) = one(mode);
    copy_case(&rig, &dev, 8, 0);
    copy_case(&rig, &dev, 8, 4);
}

/// test_copy_long: 64 MiB in one device copy (16 COPY_LINEAR packets).
fn copy_64_mib(mode: SimMode) {
    let (rig, dev) = one(mode);
    copy_case(&rig, &dev, 64 * MIB, 0);
}

/// Sizes around the 4 MiB packet limit: one packet below and at it, two just above,
/// three for 9 MiB + 12 and for 12 MiB - 1 (an odd length); at a dword-aligned and an odd
/// destination offset.
fn copies_across_chunk_boundaries(mode: SimMode) {
    let (rig, dev) = one(mode);
    for n in [CHUNK - 4, CHUNK, CHUNK + 4, 9 * MIB + 12, 3 * CHUNK - 1] {
        copy_case(&rig, &dev, n, 0);
    }
    copy_case(&rig, &dev, CHUNK + 4, 3);
}

/// test_small_copies_from_host_buf: 256 one-byte copies from a host (USERPTR) buffer, each
/// to a different place (reversed order), then the same from VRAM (intercopy).
fn small_copies_from_a_host_buffer(mode: SimMode) {
    let (_rig, dev) = one(mode);
    let host = dev.alloc(256, BufferKind::Host).unwrap();
    let data: Vec<u8> = (0..=255u8).map(|b| b.wrapping_mul(37) ^ 0x5c).collect();
    host.write(0, &data).unwrap();
    let dst = dev.alloc(256, BufferKind::Vram).unwrap();
    let dst2 = dev.alloc(256, BufferKind::Vram).unwrap();
    for i in 0..256u64 {
        dev.copy_range(&dst, 255 - i, &host, i, 1).unwrap();
    }
    for i in 0..256u64 {
        dev.copy_range(&dst2, i, &dst, 255 - i, 1).unwrap();
    }
    let mut out = vec![0u8; 256];
    dev.copy_out(&dst, &mut out).unwrap();
    let rev: Vec<u8> = data.iter().rev().copied().collect();
    assert_eq!(out, rev);
    dev.copy_out(&dst2, &mut out).unwrap();
    assert_eq!(out, data);
    // Back into the host buffer: the CPU sees the GPU's writes.
    host.write(0, &[0; 256]).unwrap();
    let v = dev.copy(&host, &dst).unwrap();
    dev.wait_value(v).unwrap();
    host.read(0, &mut out).unwrap();
    assert_eq!(out, rev);
}

/// Chained copies A -> B -> C -> D -> E, each ordered after the one before on the queue.
fn chained_copies(mode: SimMode) {
    let (_rig, dev) = one(mode);
    let n = 100_003usize;
    let bufs: Vec<_> = (0..5)
        .map(|_| dev.alloc(n as u64, BufferKind::Vram).unwrap())
        .collect();
    let data = pattern(n, 3);
    dev.copy_in(&bufs[0], &data).unwrap();
    for w in bufs.windows(2) {
        dev.copy(&w[1], &w[0]).unwrap();
    }
    for b in &bufs {
        let mut out = vec![0u8; n];
        dev.copy_out(b, &mut out).unwrap();
        assert!(out == data);
    }
}

/// test_memory_barrier_before_copy: 256 rounds of a CPU write to CPU-visible VRAM followed
/// by an SDMA copy out of it; each copy sees that round's bytes.
fn cpu_writes_visible_to_copies(mode: SimMode) {
    let (_rig, dev) = one(mode);
    let a = dev.alloc(256, BufferKind::VramCpuVisible).unwrap();
    let b = dev.alloc(256, BufferKind::GttUncached).unwrap();
    for i in 0..256u32 {
        let vals = pattern(256, i);
        a.write(0, &vals).unwrap();
        let v = dev.copy(&b, &a).unwrap();
        dev.wait_value(v).unwrap();
        let mut out = vec![0u8; 256];
        b.read(0, &mut out).unwrap();
        assert_eq!(out, vals, "round {i}");
    }
}

both_modes!(
    copy_8_bytes,
    copy_64_mib,
    copies_across_chunk_boundaries,
    small_copies_from_a_host_buffer,
    chained_copies,
    cpu_writes_visible_to_copies,
);

/// copy_1000_times: 1000 eight-byte copies to distinct offsets, each its own submission;
/// every byte lands, and the timeline word the GPU wrote is exactly the last value (the
/// signal never passed what was submitted).
fn copy_1000_times(mode: SimMode) {
    let (rig, dev) = one(mode);
    let src = dev.alloc(8000, BufferKind::Vram).unwrap();
    let dst = dev.alloc(8000, BufferKind::Vram).unwrap();
    let data = pattern(8000, 1000);
    dev.copy_in(&src, &data).unwrap();
    let first = dev.last_value().get() + 1;
    for i in 0..1000u64 {
        let v = dev.copy_range(&dst, 8 * i, &src, 8 * (999 - i), 8).unwrap();
        assert_eq!(v.get(), first + i);
    }
    dev.synchronize().unwrap();
    let (sig, gv) = dev.timeline_target(dev.last_value()).unwrap();
    assert_eq!(
        hcq_common::gpu_u64(&rig.sim, dev.gpu_id(), sig.value_addr()),
        u64::from(gv)
    );
    assert_eq!(u64::from(gv), dev.last_value().get());
    let mut out = vec![0u8; 8000];
    dev.copy_out(&dst, &mut out).unwrap();
    for i in 0..1000 {
        assert_eq!(
            out[8 * i..8 * i + 8],
            data[8 * (999 - i)..8 * (1000 - i)],
            "copy {i}"
        );
    }
}

both_modes!(copy_1000_times);

/// `copy_in_raw` and `copy_out_raw` (the Python binding's copies: raw pointers copied straight
/// into and out of the staging buffers) move the same bytes as `copy_in`/`copy_out`, across
/// staging chunks, from and to unaligned host memory, at an offset in the buffer, with the
/// bytes around untouched; a range past the end is refused before anything is copied.
fn copy_in_from_a_raw_pointer(mode: SimMode) {
    let (_rig, dev) = one(mode);
    let n = 9 * MIB as usize + 12_345;
    let src = pattern(n + 1, 7);
    let buf = dev.alloc(n as u64 + 8192, BufferKind::Vram).unwrap();
    dev.copy_in(&buf, &vec![0xee; n + 8192]).unwrap();
    // SAFETY: `src[1..]` is `n` readable bytes of a vector alive past the call.
    unsafe { dev.copy_in_raw(&buf, 4096, src.as_ptr().wrapping_add(1), n) }.unwrap();
    let mut out = vec![0u8; n + 8192];
    dev.copy_out(&buf, &mut out).unwrap();
    assert!(
        out[..4096]
            .iter()
            .chain(&out[4096 + n..])
            .all(|&b| b == 0xee)
    );
    assert!(out[4096..4096 + n] == src[1..], "the copied bytes differ");
    // SAFETY: as above (refused before reading).
    let e = unsafe { dev.copy_in_raw(&buf, 8193, src.as_ptr(), n) }.unwrap_err();
    assert!(e.to_string().contains("does not fit"), "{e}");
    // copy_out_raw: the same bytes back, into an unaligned destination, its neighbours kept.
    let mut back = vec![0x5au8; n + 2];
    // SAFETY: `back[1..n + 1]` is `n` writable bytes of a vector alive past the call.
    unsafe { dev.copy_out_raw(&buf, 4096, back.as_mut_ptr().wrapping_add(1), n) }.unwrap();
    assert_eq!((back[0], back[n + 1]), (0x5a, 0x5a));
    assert!(back[1..n + 1] == src[1..], "the bytes read back differ");
    // SAFETY: as above (refused before writing).
    let e = unsafe { dev.copy_out_raw(&buf, 8193, back.as_mut_ptr(), n) }.unwrap_err();
    assert!(e.to_string().contains("does not fit"), "{e}");
}

both_modes!(copy_in_from_a_raw_pointer);

/// Edges: zero-byte copies and transfers complete; 1-byte buffers round-trip; ranges past a
/// buffer, a source larger than the destination and a buffer of another GPU are refused with
/// messages naming the sizes, offsets and address, before anything reaches the queue.
fn copy_edges_and_refusals(mode: SimMode) {
    let r = hcq_common::rig(mode, 2, hcq_common::LONG);
    let dev = Device::open(&r.kfd, 0).unwrap();
    let d1 = Device::open(&r.kfd, 1).unwrap();
    let a = dev.alloc(1, BufferKind::Vram).unwrap();
    let b = dev.alloc(1, BufferKind::Vram).unwrap();
    let v = dev.copy_range(&b, 0, &a, 0, 0).unwrap();
    dev.wait_value(v).unwrap();
    dev.copy_in(&b, &[]).unwrap();
    dev.copy_out(&b, &mut []).unwrap();
    dev.copy_in(&a, &[7]).unwrap();
    dev.copy(&b, &a).unwrap();
    let mut o = [0u8; 1];
    dev.copy_out(&b, &mut o).unwrap();
    assert_eq!(o, [7]);
    let last = dev.last_value();
    let msg = |e: hcq_driver::Error| {
        assert!(matches!(e, hcq_driver::Error::InvalidArgument(_)), "{e:?}");
        e.to_string()
    };
    assert_eq!(
        msg(dev.copy_range(&b, u64::MAX, &a, 0, 1).unwrap_err()),
        format!(
            "invalid argument: copy of 1 bytes from offset 0 of 1 B to offset {} of 1 B",
            u64::MAX
        )
    );
    let two = dev.alloc(2, BufferKind::Vram).unwrap();
    assert_eq!(
        msg(dev.copy(&a, &two).unwrap_err()),
        "invalid argument: copy of 2 bytes into a 1-byte buffer"
    );
    let foreign = d1.alloc(16, BufferKind::Vram).unwrap();
    assert_eq!(
        msg(dev.copy(&foreign, &a).unwrap_err()),
        format!(
            "invalid argument: buffer at {} is not mapped to gpu {:#x} (use map_to)",
            foreign.va(),
            dev.gpu_id()
        )
    );
    assert_eq!(
        dev.last_value(),
        last,
        "a refused copy took a timeline value"
    );
    dev.synchronize().unwrap();
}

both_modes!(copy_edges_and_refusals);

/// copy_in_at/copy_out_at (tinygrad's sub-buffers): bytes at an offset, across a staging
/// chunk boundary; the bytes around them keep their values; a range past the end is refused.
fn copy_at_offsets(mode: SimMode) {
    let (_rig, dev) = one(mode);
    let n = 5 * MIB as usize;
    let buf = dev.alloc(6 * MIB, BufferKind::Vram).unwrap();
    dev.copy_in(&buf, &vec![0xAAu8; 6 * MIB as usize]).unwrap();
    let data = pattern(n, 7);
    dev.copy_in_at(&buf, 4096 + 3, &data).unwrap();
    let mut back = vec![0u8; n];
    dev.copy_out_at(&buf, 4096 + 3, &mut back).unwrap();
    assert!(back == data, "copy_out_at returns what copy_in_at wrote");
    let mut all = vec![0u8; 6 * MIB as usize];
    dev.copy_out(&buf, &mut all).unwrap();
    assert!(all[..4099].iter().all(|&b| b == 0xAA) && all[4099 + n..].iter().all(|&b| b == 0xAA));
    assert!(dev.copy_in_at(&buf, 6 * MIB - 1, &[1, 2]).is_err());
    assert!(dev.copy_out_at(&buf, 6 * MIB, &mut [0u8; 1]).is_err());
}

both_modes!(copy_at_offsets);
