//! SignalPool against a plain set: random alloc / free / double free / foreign free.
//! Checked: alloc hands out an in-range, 64-byte-spaced slot that is not in use, and refuses
//! exactly when every slot is in use; free succeeds exactly for slots in use; a double free or
//! a foreign slot is an error that changes nothing.

use hcq_core::signal::{PoolError, SignalPool, SignalSlot};
use proptest::prelude::*;
use std::collections::BTreeSet;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: if cfg!(miri) { 3 } else { 256 },
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

#[derive(Clone, Debug)]
enum Op {
    Alloc,
    Free(prop::sample::Index),
    DoubleFree(prop::sample::Index),
    Foreign,
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn pool_model(
        capacity in 1u32..=192,
        ops in prop::collection::vec(prop_oneof![
            4 => Just(Op::Alloc),
            3 => any::<prop::sample::Index>().prop_map(Op::Free),
            1 => any::<prop::sample::Index>().prop_map(Op::DoubleFree),
            1 => Just(Op::Foreign),
        ], 1..if cfg!(miri) { 40 } else { 400 }),
    ) {
        let base = 0x7f00_0000_0000u64;
        let pool = SignalPool::<3>::new(base, capacity).unwrap();
        let other = SignalPool::<3>::new(base + 0x10_0000, capacity).unwrap();
        let foreign = other.alloc().unwrap();
        let mut live: Vec<SignalSlot> = Vec::new();
        let mut freed: Vec<SignalSlot> = Vec::new();
        let mut in_use = BTreeSet::new();
        for op in ops {
            match op {
                Op::Alloc => match pool.alloc() {
                    Ok(s) => {
                        prop_assert!(s.index() < capacity);
                        prop_assert_eq!(s.addr(), base + 64 * u64::from(s.index()));
                        prop_assert!(in_use.insert(s.index()), "slot {} handed out twice", s.index());
                        freed.retain(|f| f.index() != s.index());
                        live.push(s);
                    }
                    Err(e) => {
                        prop_assert_eq!(e, PoolError::Exhausted { capacity });
                        prop_assert_eq!(in_use.len(), capacity as usize);
                    }
                },
                Op::Free(i) if !live.is_empty() => {
                    let s = live.swap_remove(i.index(live.len()));
                    prop_assert_eq!(pool.free(s), Ok(()));
                    in_use.remove(&s.index());
                    freed.push(s);
                }
                Op::DoubleFree(i) if !freed.is_empty() => {
                    let s = freed[i.index(freed.len())];
                    prop_assert_eq!(pool.free(s), Err(PoolError::DoubleFree { addr: s.addr() }));
                }
                Op::Foreign => {
                    prop_assert_eq!(
                        pool.free(foreign),
                        Err(PoolError::Foreign { addr: foreign.addr(), base, capacity })
                    );
                }
                _ => {}
            }
            prop_assert_eq!(pool.in_use() as usize, in_use.len());
        }
    }
}
