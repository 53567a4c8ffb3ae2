//! Cases `cargo mutants` over `core/src/cmd/` showed untested: the command lists' bookkeeping
//! (`len`, `is_empty`, `clear`) and their `Debug` output.

use hcq_core::addr::GpuVa;
use hcq_core::arch::GFX11;
use hcq_core::cmd::{CmdError, ExecCmd, PatchTarget, Pm4List, SdmaList, patch};
use hcq_core::pm4::Program;
use hcq_core::sdma;
use hcq_core::signal::SignalRef;

#[test]
fn a_pm4_list_counts_commands_and_clear_forgets_them() {
    let sig = SignalRef::new(0x2000);
    let mut list: Pm4List<512, 8> = Pm4List::new(&GFX11);
    assert_eq!(list.len(), 0);
    assert!(list.is_empty());
    list.wait(&sig, 1).unwrap();
    list.memory_barrier().unwrap();
    list.signal(&sig, 2).unwrap();
    assert_eq!(list.len(), 3);
    assert!(!list.is_empty());
    assert_eq!(list.cmd_offsets().len(), 3);
    let recorded = list.as_dwords().to_vec();
    let dbg = format!("{list:?}");
    assert!(
        dbg.starts_with("Pm4List") && dbg.contains("commands: 3"),
        "{dbg}"
    );

    list.clear();
    assert_eq!(list.len(), 0);
    assert!(list.is_empty());
    assert!(list.as_dwords().is_empty());
    // After a clear the list records from the start again.
    list.wait(&sig, 1).unwrap();
    list.memory_barrier().unwrap();
    list.signal(&sig, 2).unwrap();
    assert_eq!(list.as_dwords(), &recorded[..]);
}

#[test]
fn an_sdma_list_counts_commands_and_clear_forgets_them() {
    let sig = SignalRef::new(0x2000);
    let mut list: SdmaList<256> = SdmaList::new(&GFX11);
    assert_eq!(list.len(), 0);
    assert!(list.is_empty());
    list.copy(GpuVa(0x8000), GpuVa(0x4000), 0x100).unwrap();
    list.signal(&sig, 2).unwrap();
    assert_eq!(list.len(), 2);
    assert!(!list.is_empty());
    let recorded = list.as_dwords().to_vec();
    let dbg = format!("{list:?}");
    assert!(
        dbg.starts_with("SdmaList") && dbg.contains("commands: 2"),
        "{dbg}"
    );

    list.clear();
    assert_eq!(list.len(), 0);
    assert!(list.is_empty());
    assert!(list.as_dwords().is_empty());
    list.copy(GpuVa(0x8000), GpuVa(0x4000), 0x100).unwrap();
    list.signal(&sig, 2).unwrap();
    assert_eq!(list.as_dwords(), &recorded[..]);
}

/// A target that implements only the required methods, so `store_all` is the trait's default.
struct Plain(Vec<u32>);

impl PatchTarget for Plain {
    fn dword_len(&self) -> usize {
        self.0.len()
    }
    fn load(&self, i: usize) -> Option<u32> {
        self.0.get(i).copied()
    }
    fn store(&mut self, i: usize, v: u32) -> Option<()> {
        *self.0.get_mut(i)? = v;
        Some(())
    }
}

#[test]
fn the_default_store_all_stores_everything_or_nothing() {
    let mut t = Plain(vec![0; 4]);
    assert_eq!(t.store_all(1, &[7, 8, 9]), Some(()));
    assert_eq!(t.0, [0, 7, 8, 9]);
    assert_eq!(t.store_all(0, &[1, 2]), Some(()));
    assert_eq!(t.0, [1, 2, 8, 9]);
    // One past the end: nothing is stored.
    assert_eq!(t.store_all(2, &[5, 5, 5]), None);
    assert_eq!(t.store_all(usize::MAX, &[5]), None);
    assert_eq!(t.0, [1, 2, 8, 9]);
    assert_eq!(t.store_all(4, &[]), Some(()));
}

#[test]
fn an_sdma_list_takes_exactly_its_packet_capacity() {
    let sig = SignalRef::new(0x2000);
    // One copy is 3 packets (GCR_REQ, COPY_LINEAR, GCR_REQ); a plain signal is 1.
    let mut list: SdmaList<256, 8, 4> = SdmaList::new(&GFX11);
    list.copy(GpuVa(0x8000), GpuVa(0x4000), 0x100).unwrap();
    list.signal(&sig, 1).unwrap();
    assert_eq!(
        list.signal(&sig, 2),
        Err(CmdError::TooManyPackets {
            needed: 5,
            capacity: 4
        })
    );
    assert_eq!(list.len(), 2);
}

#[test]
fn a_huge_copy_is_refused_by_its_packet_count() {
    let mut list: SdmaList<256, 8, 4> = SdmaList::new(&GFX11);
    let opts = sdma::CopyOptions::seed(&GFX11);
    let size = 1u64 << 62;
    let chunks = usize::try_from(sdma::copy_chunks(size, opts.max_copy_bytes)).unwrap();
    assert_eq!(
        list.copy(GpuVa(0x1_0000), GpuVa(0x2_0000), size),
        Err(CmdError::TooManyPackets {
            needed: chunks + 2,
            capacity: 4
        })
    );
    assert!(list.is_empty());
}

#[test]
fn command_errors_say_what_was_wrong() {
    assert_eq!(
        CmdError::TooManyPackets {
            needed: 5,
            capacity: 4
        }
        .to_string(),
        "SDMA list would hold 5 packets but records at most 4"
    );
    assert_eq!(
        CmdError::OutOfRange { offset: 9, len: 4 }.to_string(),
        "patch at dword 9 is outside the 4-dword command list"
    );
}

fn exec_list() -> (Pm4List<512, 8>, ExecCmd) {
    let mut list: Pm4List<512, 8> = Pm4List::new(&GFX11);
    let (exec, _) = list
        .exec(&Program::default(), GpuVa(0x1000), [2, 2, 2], [2, 2, 2])
        .unwrap();
    (list, exec)
}

#[test]
fn update_exec_on_a_list_cut_inside_dispatch_direct_writes_nothing() {
    let (list, exec) = exec_list();
    let d = exec.offset as usize + exec.layout.dispatch_at;
    // DISPATCH_DIRECT's x, y, z are d+1..=d+3; keep up to d+2.
    let mut cut = list.as_dwords()[..d + 3].to_vec();
    let before = cut.clone();
    assert_eq!(
        patch::update_exec(&mut cut[..], &exec, [4, 4, 4], [8, 8, 8]),
        Err(CmdError::OutOfRange {
            offset: d + 3,
            len: d + 3
        })
    );
    assert_eq!(cut, before);
}

#[test]
fn update_exec_on_an_exec_at_the_start_of_its_memory() {
    // A handle whose COMPUTE_START_X header is dword 0 of the memory.
    let (list, exec) = exec_list();
    let s = exec.offset as usize + exec.layout.start_at;
    let mut tail = list.as_dwords()[s..].to_vec();
    let mut layout = exec.layout;
    layout.start_at = 0;
    layout.local_at -= exec.layout.start_at;
    layout.dispatch_at -= exec.layout.start_at;
    layout.dwords -= exec.layout.start_at;
    let moved = ExecCmd {
        offset: 0,
        layout,
        dispatch: None,
    };
    assert_eq!(
        patch::update_exec(&mut tail[..], &moved, [4, 5, 6], [8, 4, 2]),
        Ok(None)
    );
    let mut fresh: Pm4List<512, 8> = Pm4List::new(&GFX11);
    fresh
        .exec(&Program::default(), GpuVa(0x1000), [4, 5, 6], [8, 4, 2])
        .unwrap();
    assert_eq!(tail, fresh.as_dwords()[s..]);
}
