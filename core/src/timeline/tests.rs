use super::*;

/// The GPU side of the test: two 32-bit signal values, written as RELEASE_MEM would.
struct Gpu {
    primary: u32,
    shadow: u32,
}

impl Gpu {
    fn get(&self, w: Which) -> u32 {
        match w {
            Which::Primary => self.primary,
            Which::Shadow => self.shadow,
        }
    }
    fn set(&mut self, w: Which, v: u32) {
        match w {
            Which::Primary => self.primary = v,
            Which::Shadow => self.shadow = v,
        }
    }
}

/// tinygrad's `test_timeline_signal_rollover`: start at 2^32 - 20, then 40 rounds of
/// wait(value - 1) / signal(value) / synchronize, checking the 32-bit values the GPU sees.
#[test]
fn tinygrad_rollover() {
    let start = u32::MAX - 19; // (1 << 32) - 20
    let mut t = Timeline::starting_at(start);
    let mut gpu = Gpu {
        primary: start - 1,
        shadow: 0x5555_5555, // stale garbage until the wrap resets it
    };
    let mut seen = [0u32; 40];
    for (round, slot) in seen.iter_mut().enumerate() {
        // The queue waits for the previous value, then signals the next.
        let wait = t.gpu_value(t.last_signaled());
        let v = t.signal().unwrap();
        let sig = t.gpu_value(v).unwrap();
        if let Some(w) = wait {
            assert_eq!(w.signal, sig.signal);
            assert!(
                gpu.get(w.signal) >= w.value,
                "round {round}: wait would hang"
            );
        }
        // The GPU runs it.
        gpu.set(sig.signal, sig.value);
        *slot = sig.value;
        // synchronize(): wait for the last value, then wrap if past 2^31.
        let observed = gpu.get(t.active());
        assert!(t.is_complete(t.last_signaled(), observed));
        if t.needs_wrap() {
            let w = t.wrap(observed).unwrap();
            gpu.set(w.signal, w.reset_to);
        }
    }
    // Round 0 signals 2^32 - 20 on the primary; the synchronize wraps to the shadow, so the
    // following rounds signal 1, 2, ... 39 there.
    assert_eq!(seen[0], 0xFFFF_FFEC);
    let expect: [u32; 39] = core::array::from_fn(|i| i as u32 + 1);
    assert_eq!(&seen[1..], &expect);
    assert_eq!(t.active(), Which::Shadow);
    assert_eq!(gpu.shadow, 39);
    assert_eq!(gpu.primary, 0xFFFF_FFEC);
    // Host values never went backwards.
    assert_eq!(t.last_signaled().get(), u64::from(start) + 39);
}

#[test]
fn boundary_2_pow_31() {
    let mut t = Timeline::starting_at((1 << 31) - 1);
    assert!(!t.needs_wrap());
    let a = t.signal().unwrap();
    assert_eq!(t.gpu_value(a).unwrap().value, 0x7FFF_FFFF);
    assert!(!t.needs_wrap()); // next is exactly 2^31
    let b = t.signal().unwrap();
    assert_eq!(t.gpu_value(b).unwrap().value, 0x8000_0000);
    assert!(t.needs_wrap()); // next would pass 2^31
    assert_eq!(
        t.wrap(0x7FFF_FFFF),
        Err(TimelineError::Busy {
            waiting_for: 0x8000_0000,
            observed: 0x7FFF_FFFF
        })
    );
    assert_eq!(t.active(), Which::Primary);
    assert_eq!(
        t.wrap(0x8000_0000),
        Ok(WrapTo {
            signal: Which::Shadow,
            reset_to: 0
        })
    );
    assert!(!t.needs_wrap());
    let c = t.signal().unwrap();
    assert_eq!(
        t.gpu_value(c),
        Some(GpuValue {
            signal: Which::Shadow,
            value: 1
        })
    );
    // Values before the wrap: complete, nothing to wait for.
    assert_eq!(t.gpu_value(a), None);
    assert!(t.is_complete(a, 0) && t.is_complete(b, 0));
    assert!(!t.is_complete(c, 0));
    assert_eq!(t.completed(1), c);
    // The second wrap goes back to the primary.
    assert_eq!(
        t.wrap(1),
        Ok(WrapTo {
            signal: Which::Primary,
            reset_to: 0
        })
    );
}

#[test]
fn refuses_values_past_32_bits() {
    let mut t = Timeline::starting_at(u32::MAX);
    let v = t.signal().unwrap();
    assert_eq!(t.gpu_value(v).unwrap().value, u32::MAX);
    assert_eq!(t.signal(), Err(TimelineError::MustWrap { next: 1 << 32 }));
    t.wrap(u32::MAX).unwrap();
    let n = t.signal().unwrap();
    assert_eq!(t.gpu_value(n).unwrap().value, 1);
}

#[test]
fn fresh_timeline() {
    let mut t = Timeline::new();
    assert_eq!(t.last_signaled(), TimelineValue::ZERO);
    assert!(t.is_complete(t.last_signaled(), 0));
    assert_eq!(t.signal().unwrap().get(), 1);
    assert!(!t.is_complete(TimelineValue::new(1), 0));
    assert_eq!(Timeline::starting_at(0), Timeline::new());
    let sig = AtomicU64::new(0xdead_0000_0000_0001);
    assert_eq!(observe(&sig), 1);
}

mod arena {
    use super::super::{ArenaError, Region, TimelineArena, TimelineValue as V};

    #[test]
    fn bump_align_wrap_and_wait() {
        let mut a = TimelineArena::<4>::new(256).unwrap();
        assert_eq!(
            a.alloc(10, 8, V::new(1), V::ZERO),
            Ok(Region {
                offset: 0,
                size: 10
            })
        );
        assert_eq!(
            a.alloc(10, 64, V::new(1), V::ZERO),
            Ok(Region {
                offset: 64,
                size: 10
            })
        );
        assert_eq!(
            a.alloc(100, 16, V::new(2), V::ZERO),
            Ok(Region {
                offset: 80,
                size: 100
            })
        );
        // 70 more at 192 would pass the end: skip to 0, which tag 1 still uses (0..74).
        assert_eq!(
            a.alloc(70, 16, V::new(3), V::ZERO),
            Err(ArenaError::MustWait { value: V::new(1) })
        );
        assert_eq!(a.in_use(), 180);
        assert_eq!(
            a.alloc(70, 16, V::new(3), V::new(1)),
            Ok(Region {
                offset: 0,
                size: 70
            })
        );
        // 70..110 overlaps tag 2 (80..180).
        assert_eq!(
            a.alloc(40, 2, V::new(3), V::new(1)),
            Err(ArenaError::MustWait { value: V::new(2) })
        );
        assert_eq!(
            a.alloc(40, 2, V::new(3), V::new(2)),
            Ok(Region {
                offset: 70,
                size: 40
            })
        );
        assert_eq!(a.in_use(), 110 + 76);
        assert_eq!(
            a.alloc(512, 4, V::new(3), V::new(2)),
            Err(ArenaError::TooLarge {
                size: 512,
                capacity: 256
            })
        );
        assert_eq!(
            a.alloc(1, 3, V::new(3), V::new(2)),
            Err(ArenaError::BadAlign { align: 3 })
        );
        assert_eq!(
            a.alloc(1, 512, V::new(3), V::new(2)),
            Err(ArenaError::BadAlign { align: 512 })
        );
        assert!(matches!(
            TimelineArena::<4>::new(100),
            Err(ArenaError::BadCapacity { capacity: 100 })
        ));
    }

    #[test]
    fn full_record_table_merges_conservatively() {
        let mut a = TimelineArena::<2>::new(1024).unwrap();
        for t in 1..=4 {
            assert!(a.alloc(100, 4, V::new(t), V::ZERO).is_ok());
        }
        // Records: [0..100) tag 1, [100..400) tag 4 (tags 2..4 merged into the newest record).
        assert!(a.alloc(600, 4, V::new(5), V::ZERO).is_ok()); // 400..1000: merged, tag 5
        // 100 bytes skip to offset 0: only tag 1 used it.
        assert_eq!(
            a.alloc(100, 4, V::new(6), V::ZERO),
            Err(ArenaError::MustWait { value: V::new(1) })
        );
        assert_eq!(
            a.alloc(100, 4, V::new(6), V::new(3)),
            Ok(Region {
                offset: 0,
                size: 100
            })
        );
        // Offset 100 was tag 2, but that record was merged with 3, 4 and 5: wait for 5.
        assert_eq!(
            a.alloc(200, 4, V::new(7), V::new(4)),
            Err(ArenaError::MustWait { value: V::new(5) })
        );
        assert_eq!(
            a.alloc(200, 4, V::new(7), V::new(5)),
            Ok(Region {
                offset: 100,
                size: 200
            })
        );
        assert_eq!(a.in_use(), 1324 - 1000);
    }

    #[test]
    fn empty_arena_skips_freely() {
        let mut a = TimelineArena::<2>::new(256).unwrap();
        assert!(a.alloc(200, 4, V::new(1), V::ZERO).is_ok());
        // All complete: a 100-byte region skips the 56-byte tail without waiting.
        assert_eq!(
            a.alloc(100, 4, V::new(2), V::new(1)),
            Ok(Region {
                offset: 0,
                size: 100
            })
        );
        assert_eq!(a.in_use(), 100);
        // Allocating the whole arena after everything completed.
        assert_eq!(
            a.alloc(256, 4, V::new(3), V::new(2)),
            Ok(Region {
                offset: 0,
                size: 256
            })
        );
    }
}

/// `observe` returns the low 32 bits of the signal word, whatever the high half holds.
#[test]
fn observe_reads_the_low_half() {
    use crate::sync::atomic::AtomicU64;
    assert_eq!(observe(&AtomicU64::new(0)), 0);
    assert_eq!(observe(&AtomicU64::new(0x1234_5678)), 0x1234_5678);
    assert_eq!(observe(&AtomicU64::new(0xdead_beef_0000_0005)), 5);
    assert_eq!(observe(&AtomicU64::new(u64::MAX)), u32::MAX);
}

/// Timeline errors name their values (the one survivor of `cargo mutants` over this module
/// was this Display impl returning nothing).
#[test]
fn errors_display_the_values() {
    let mut buf = heapless::String::<160>::new();
    let e = TimelineError::Busy {
        waiting_for: 0x20,
        observed: 0x1f,
    };
    core::fmt::write(&mut buf, format_args!("{e}")).unwrap();
    assert_eq!(
        buf.as_str(),
        "cannot wrap the timeline while work is in flight: signal shows 0x1f, last signaled 0x20"
    );
    buf.clear();
    let e = TimelineError::MustWrap { next: 1 << 32 };
    core::fmt::write(&mut buf, format_args!("{e}")).unwrap();
    assert!(
        buf.starts_with("timeline value 0x100000000 does not fit"),
        "{buf}"
    );
}
