//! Cases `cargo mutants` over `core/src/patch/` showed untested: each test pins a boundary or a
//! branch that a mutant of the patch table changed without any other test failing.

use hcq_core::addr::GpuVa;
use hcq_core::arch::GFX11;
use hcq_core::cmd::{CmdError, CopyCmd, ExecCmd, Pm4List, SdmaList};
use hcq_core::patch::{DimLimits, Dims, Kind, PatchError, PatchTable, Value};
use hcq_core::pm4::{DispatchInfo, Program};
use hcq_core::sdma;
use hcq_core::signal::{SignalRef, VALUE_OFFSET};

const REC: Dims = Dims {
    global: [2, 2, 2],
    local: [2, 2, 2],
};

/// A list with one exec recorded at `REC`, and a table with one dims variable bound to it
/// under `limits`.
fn exec_table(limits: DimLimits) -> (Pm4List<512, 8>, PatchTable<2, 8>) {
    let mut list: Pm4List<512, 8> = Pm4List::new(&GFX11);
    let (exec, _) = list
        .exec(&Program::default(), GpuVa(0x1000), REC.global, REC.local)
        .unwrap();
    let mut table: PatchTable<2, 8> = PatchTable::new();
    let dims = table.declare(Value::Dims(REC)).unwrap();
    table
        .bind_exec(dims, 0, list.as_dwords(), &exec, limits, None)
        .unwrap();
    (list, table)
}

fn apply_dims(limits: DimLimits, d: Dims) -> Result<usize, PatchError> {
    let (list, mut table) = exec_table(limits);
    let mut ib = list.as_dwords().to_vec();
    table.apply(&[Some(Value::Dims(d))], &mut [&mut ib[..]])
}

const SMALL: DimLimits = DimLimits {
    max_global: [4; 3],
    max_local: [4; 3],
    max_threads: 1024,
};

#[test]
fn dims_one_past_the_limit_on_every_axis_are_refused() {
    let over = Dims {
        global: [5; 3],
        local: [5; 3],
    };
    assert!(matches!(
        apply_dims(SMALL, over),
        Err(PatchError::BadDim {
            what: "global",
            axis: 0,
            value: 5,
            max: 4,
            ..
        })
    ));
    // Exactly at the limits is fine.
    let at = Dims {
        global: [4; 3],
        local: [4; 3],
    };
    assert_eq!(apply_dims(SMALL, at), Ok(6));
}

#[test]
fn zero_dims_on_every_axis_are_refused() {
    let zero = Dims {
        global: [0; 3],
        local: [0; 3],
    };
    assert!(matches!(
        apply_dims(SMALL, zero),
        Err(PatchError::BadDim {
            what: "global",
            axis: 0,
            value: 0,
            ..
        })
    ));
    assert!(matches!(
        apply_dims(DimLimits::AMD, zero),
        Err(PatchError::BadDim { value: 0, .. })
    ));
}

#[test]
fn a_scalar_equal_to_its_field_maximum_is_accepted() {
    let sig = SignalRef::new(0x2000);
    let mut list: Pm4List<512, 8> = Pm4List::new(&GFX11);
    let wait = list.wait(&sig, 7).unwrap();
    let mut table: PatchTable<2, 8> = PatchTable::new();
    let v = table.declare(Value::Scalar(7)).unwrap();
    table
        .bind_wait_value(v, 0, list.as_dwords(), &wait)
        .unwrap();
    let mut ib = list.as_dwords().to_vec();
    assert_eq!(
        table.apply(&[Some(Value::Scalar(u32::MAX.into()))], &mut [&mut ib[..]]),
        Ok(1)
    );
    assert_eq!(ib[wait.offset as usize + 4], u32::MAX);
    assert_eq!(
        table.apply(&[Some(Value::Scalar(1 << 32))], &mut [&mut ib[..]]),
        Err(PatchError::ScalarTooLarge {
            var: v,
            value: 1 << 32,
            max: u32::MAX.into()
        })
    );
}

#[test]
fn a_global_size_at_its_limit_is_not_what_a_refusal_blames() {
    // global x = its max, local x = one past its max: the refusal names the local size.
    let d = Dims {
        global: [4, 1, 1],
        local: [5, 1, 1],
    };
    assert!(matches!(
        apply_dims(SMALL, d),
        Err(PatchError::BadDim {
            what: "local",
            axis: 0,
            value: 5,
            max: 4,
            ..
        })
    ));
}

#[test]
fn a_packet_grid_of_exactly_u32_max_is_not_what_a_refusal_blames() {
    // With a dispatch packet, grid x = 65537 * 65535 = u32::MAX fits; the refusal is for the
    // 131070 threads per workgroup.
    let limits = DimLimits {
        max_global: [u32::MAX; 3],
        max_local: [u32::MAX; 3],
        max_threads: 65535,
    };
    let prog = Program {
        dispatch: Some(DispatchInfo {
            packet_offset: 0x40,
            group_segment_size: 0,
            private_segment_size: 0,
        }),
        ..Program::default()
    };
    let mut list: Pm4List<512, 8> = Pm4List::new(&GFX11);
    let (exec, _) = list
        .exec(&prog, GpuVa(0x1000), REC.global, REC.local)
        .unwrap();
    let mut table: PatchTable<2, 8> = PatchTable::new();
    let dims = table.declare(Value::Dims(REC)).unwrap();
    table
        .bind_exec(dims, 0, list.as_dwords(), &exec, limits, Some((1, 16)))
        .unwrap();
    let mut ib = list.as_dwords().to_vec();
    let mut kernargs = [0u32; 32];
    let d = Dims {
        global: [65537, 1, 1],
        local: [65535, 2, 1],
    };
    assert_eq!(
        table.apply(
            &[Some(Value::Dims(d))],
            &mut [&mut ib[..], &mut kernargs[..]]
        ),
        Err(PatchError::BadDim {
            var: dims,
            what: "local (threads per workgroup)",
            axis: 3,
            value: 131_070,
            max: 65535,
        })
    );
    // One thread fewer per workgroup in y and the grid of u32::MAX is accepted and written.
    let ok = Dims {
        global: [65537, 1, 1],
        local: [65535, 1, 1],
    };
    assert!(
        table
            .apply(
                &[Some(Value::Dims(ok))],
                &mut [&mut ib[..], &mut kernargs[..]]
            )
            .is_ok()
    );
    assert_eq!(kernargs[16 + 3], u32::MAX);
}

#[test]
fn var_count_counts_declarations() {
    let mut table: PatchTable<4, 8> = PatchTable::new();
    assert_eq!(table.var_count(), 0);
    table.declare(Value::Scalar(1)).unwrap();
    table.declare(Value::Dims(REC)).unwrap();
    assert_eq!(table.var_count(), 2);
}

#[test]
fn a_binding_past_the_end_names_its_last_dword() {
    let mut table: PatchTable<2, 8> = PatchTable::new();
    let v = table.declare(Value::Scalar(0)).unwrap();
    let mem = [0u32; 4];
    // A lo/hi pair at dwords 3 and 4 of a 4-dword memory.
    assert_eq!(
        table.bind_u64(v, 0, Some(&mem[..]), 3, 0),
        Err(PatchError::Cmd(CmdError::OutOfRange { offset: 4, len: 4 }))
    );
    assert_eq!(table.bind_u64(v, 0, Some(&mem[..]), 2, 0), Ok(()));
}

#[test]
fn an_exec_cut_inside_its_dispatch_direct_is_refused() {
    let mut list: Pm4List<512, 8> = Pm4List::new(&GFX11);
    let (exec, _) = list
        .exec(&Program::default(), GpuVa(0x1000), REC.global, REC.local)
        .unwrap();
    // DISPATCH_DIRECT is 5 dwords from `d`; keep all but its last.
    let d = exec.offset as usize + exec.layout.dispatch_at;
    let cut = &list.as_dwords()[..d + 4];
    let mut table: PatchTable<2, 8> = PatchTable::new();
    let dims = table.declare(Value::Dims(REC)).unwrap();
    assert_eq!(
        table.bind_exec(dims, 0, cut, &exec, DimLimits::AMD, None),
        Err(PatchError::Cmd(CmdError::OutOfRange {
            offset: d + 4,
            len: d + 4
        }))
    );
    assert!(table.entries().is_empty());
}

#[test]
fn an_exec_at_the_start_of_its_memory_binds() {
    // The handle may describe an exec whose COMPUTE_START_X header is dword 0 of the memory
    // (a copy of just the dispatch part): nothing before it is needed.
    let mut list: Pm4List<512, 8> = Pm4List::new(&GFX11);
    let (exec, _) = list
        .exec(&Program::default(), GpuVa(0x1000), REC.global, REC.local)
        .unwrap();
    let s = exec.offset as usize + exec.layout.start_at;
    let tail = &list.as_dwords()[s..];
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
    let mut table: PatchTable<2, 8> = PatchTable::new();
    let dims = table.declare(Value::Dims(REC)).unwrap();
    table
        .bind_exec(dims, 0, tail, &moved, DimLimits::AMD, None)
        .unwrap();
    let mut copy = tail.to_vec();
    let d = Dims {
        global: [3, 1, 1],
        local: [64, 1, 1],
    };
    assert_eq!(
        table.apply(&[Some(Value::Dims(d))], &mut [&mut copy[..]]),
        Ok(6)
    );
    assert_eq!(
        copy[layout.dispatch_at + 1..layout.dispatch_at + 4],
        [3, 1, 1]
    );
    assert_eq!(copy[layout.local_at..layout.local_at + 3], [64, 1, 1]);
}

#[test]
fn a_signal_address_variable_needs_the_whole_value_field() {
    let need = VALUE_OFFSET + 8;
    let sig = SignalRef::new(0x2000);
    let mut pm4: Pm4List<512, 8> = Pm4List::new(&GFX11);
    let wait = pm4.wait(&sig, 1).unwrap();
    let signal = pm4.signal(&sig, 2).unwrap();
    let rec = Value::Addr {
        addr: GpuVa(0x2000),
        bytes: 0x40,
    };
    let mut table: PatchTable<2, 8> = PatchTable::new();
    let w = table.declare(rec).unwrap();
    let s = table.declare(rec).unwrap();
    table
        .bind_wait_signal(w, 0, pm4.as_dwords(), &wait)
        .unwrap();
    table
        .bind_signal_addr(s, 0, pm4.as_dwords(), &signal)
        .unwrap();
    assert_eq!(table.required_bytes(w), Ok(need));
    assert_eq!(table.required_bytes(s), Ok(need));
    let mut ib = pm4.as_dwords().to_vec();
    let small = Value::Addr {
        addr: GpuVa(0x3000),
        bytes: need - 1,
    };
    assert_eq!(
        table.apply(&[Some(small), Some(rec)], &mut [&mut ib[..]]),
        Err(PatchError::BufferTooSmall {
            var: w,
            bytes: need - 1,
            needed: need
        })
    );
    assert_eq!(
        table.apply(&[Some(rec), Some(small)], &mut [&mut ib[..]]),
        Err(PatchError::BufferTooSmall {
            var: s,
            bytes: need - 1,
            needed: need
        })
    );
    let enough = Value::Addr {
        addr: GpuVa(0x3000),
        bytes: need,
    };
    assert!(
        table
            .apply(&[Some(enough), Some(enough)], &mut [&mut ib[..]])
            .is_ok()
    );
}

#[test]
fn a_copy_cut_after_its_opening_gcr_req_names_the_missing_copy_linear() {
    let mut sdma: SdmaList<256> = SdmaList::new(&GFX11);
    let copy = sdma.copy(GpuVa(0x8000), GpuVa(0x4000), 0x100).unwrap();
    let o = copy.offset as usize;
    let (g, c) = (sdma::GCR_REQ_DWORDS, sdma::COPY_LINEAR_DWORDS);
    let cut = &sdma.as_dwords()[..o + g];
    let mut table: PatchTable<2, 8> = PatchTable::new();
    let src = table
        .declare(Value::Addr {
            addr: GpuVa(0x4000),
            bytes: 0x100,
        })
        .unwrap();
    assert_eq!(
        table.bind_copy(Some(src), None, 1, cut, &copy),
        Err(PatchError::Cmd(CmdError::OutOfRange {
            offset: o + g + c - 1,
            len: o + g
        }))
    );
    assert_eq!(
        table.bind_copy(Some(src), None, 1, sdma.as_dwords(), &copy),
        Ok(())
    );
    assert_eq!(table.required_bytes(src), Ok(0x100));
}

#[test]
fn a_copy_handle_whose_length_is_not_gcr_copies_gcr_is_refused() {
    let mut sdma: SdmaList<256> = SdmaList::new(&GFX11);
    let copy = sdma.copy(GpuVa(0x8000), GpuVa(0x4000), 0x100).unwrap();
    let (g, c) = (sdma::GCR_REQ_DWORDS as u32, sdma::COPY_LINEAR_DWORDS as u32);
    assert_eq!(copy.dwords, 2 * g + c);
    let mut table: PatchTable<2, 8> = PatchTable::new();
    let src = table
        .declare(Value::Addr {
            addr: GpuVa(0x4000),
            bytes: 0x100,
        })
        .unwrap();
    let shape = "copy command of GCR_REQ, COPY_LINEAR * n, GCR_REQ";
    let bind = |t: &mut PatchTable<2, 8>, dwords: u32| {
        let h = CopyCmd {
            offset: copy.offset,
            dwords,
        };
        t.bind_copy(Some(src), None, 1, sdma.as_dwords(), &h)
    };
    for dwords in [2 * g - 1, 2 * g + c + 1, 2 * g + c - 1] {
        assert_eq!(
            bind(&mut table, dwords),
            Err(PatchError::Cmd(CmdError::WrongPacket {
                offset: copy.offset as usize,
                expected: shape,
                found: dwords,
            })),
            "{dwords} dwords"
        );
    }
    // Two GCR_REQs and no copy is a shape; this list has a COPY_LINEAR where the second is.
    assert!(matches!(
        bind(&mut table, 2 * g),
        Err(PatchError::Cmd(CmdError::WrongPacket {
            expected: "SDMA GCR_REQ (copy end)",
            ..
        }))
    ));
    assert!(table.entries().is_empty());
    assert_eq!(bind(&mut table, 2 * g + c), Ok(()));
}

#[test]
fn a_copy_cut_anywhere_is_refused_at_the_first_missing_dword() {
    let mut sdma: SdmaList<256> = SdmaList::new(&GFX11);
    let copy = sdma.copy(GpuVa(0x8000), GpuVa(0x4000), 0x100).unwrap();
    let o = copy.offset as usize;
    let (g, c) = (sdma::GCR_REQ_DWORDS, sdma::COPY_LINEAR_DWORDS);
    let mut table: PatchTable<2, 8> = PatchTable::new();
    let src = table
        .declare(Value::Addr {
            addr: GpuVa(0x4000),
            bytes: 0x100,
        })
        .unwrap();
    // Cut after the COPY_LINEAR: the closing GCR_REQ is missing.
    // Cut inside the closing GCR_REQ: its last dword is missing.
    for (len, last) in [
        (o + g + c, o + 2 * g + c - 1),
        (o + 2 * g + c - 1, o + 2 * g + c - 1),
    ] {
        assert_eq!(
            table.bind_copy(Some(src), None, 1, &sdma.as_dwords()[..len], &copy),
            Err(PatchError::Cmd(CmdError::OutOfRange { offset: last, len })),
            "cut at {len}"
        );
    }
    assert!(table.entries().is_empty());
}

#[test]
fn copies_above_4_gib_bind_and_patch_both_halves() {
    let (src_at, dst_at) = (0x1_0000_4000u64, 0x2_0000_8000u64);
    let mut sdma: SdmaList<256> = SdmaList::new(&GFX11);
    let copy = sdma.copy(GpuVa(dst_at), GpuVa(src_at), 0x100).unwrap();
    let mut table: PatchTable<2, 8> = PatchTable::new();
    let buf = |a: u64| Value::Addr {
        addr: GpuVa(a),
        bytes: 0x100,
    };
    let src = table.declare(buf(src_at)).unwrap();
    let dst = table.declare(buf(dst_at)).unwrap();
    table
        .bind_copy(Some(src), Some(dst), 0, sdma.as_dwords(), &copy)
        .unwrap();
    assert_eq!(table.required_bytes(src), Ok(0x100));
    assert_eq!(table.required_bytes(dst), Ok(0x100));
    let mut ring = sdma.as_dwords().to_vec();
    let (new_src, new_dst) = (0x3_0000_0000u64, 0x4_0000_1000u64);
    assert_eq!(
        table.apply(
            &[Some(buf(new_src)), Some(buf(new_dst))],
            &mut [&mut ring[..]]
        ),
        Ok(4)
    );
    let mut fresh: SdmaList<256> = SdmaList::new(&GFX11);
    fresh.copy(GpuVa(new_dst), GpuVa(new_src), 0x100).unwrap();
    assert_eq!(ring, fresh.as_dwords());
}

#[test]
fn a_wrong_kind_refusal_names_both_kinds() {
    let mut table: PatchTable<2, 8> = PatchTable::new();
    let v = table.declare(Value::Scalar(3)).unwrap();
    let mut mem = [0u32; 4];
    let e = table
        .apply(&[Some(Value::Dims(REC))], &mut [&mut mem[..]])
        .unwrap_err();
    assert_eq!(
        e,
        PatchError::WrongKind {
            var: v,
            expected: Kind::Scalar,
            found: Kind::Dims
        }
    );
    assert_eq!(
        e.to_string(),
        "variable 0 is a scalar variable, used as a launch dims"
    );
    assert_eq!(
        Kind::Addr.to_string() + "/" + &Kind::Scalar.to_string(),
        "address/scalar"
    );
}

#[test]
fn launch_dims_write_only_the_half_that_changed() {
    let (list, mut table) = exec_table(DimLimits::AMD);
    let mut ib = list.as_dwords().to_vec();
    let only_global = Dims {
        global: [7, 1, 1],
        local: REC.local,
    };
    assert_eq!(
        table.apply(&[Some(Value::Dims(only_global))], &mut [&mut ib[..]]),
        Ok(3)
    );
    let only_local = Dims {
        global: [7, 1, 1],
        local: [32, 2, 1],
    };
    assert_eq!(
        table.apply(&[Some(Value::Dims(only_local))], &mut [&mut ib[..]]),
        Ok(3)
    );
    let mut fresh: Pm4List<512, 8> = Pm4List::new(&GFX11);
    fresh
        .exec(&Program::default(), GpuVa(0x1000), [7, 1, 1], [32, 2, 1])
        .unwrap();
    assert_eq!(ib, fresh.as_dwords());
}

#[test]
fn a_dispatch_packet_gets_grid_and_workgroup_and_keeps_reserved0() {
    let prog = Program {
        dispatch: Some(DispatchInfo {
            packet_offset: 0x40,
            group_segment_size: 0,
            private_segment_size: 0,
        }),
        ..Program::default()
    };
    let mut list: Pm4List<512, 8> = Pm4List::new(&GFX11);
    let (exec, _) = list
        .exec(&prog, GpuVa(0x1000), REC.global, REC.local)
        .unwrap();
    let mut table: PatchTable<2, 8> = PatchTable::new();
    let dims = table.declare(Value::Dims(REC)).unwrap();
    table
        .bind_exec(
            dims,
            0,
            list.as_dwords(),
            &exec,
            DimLimits::AMD,
            Some((1, 16)),
        )
        .unwrap();
    let mut ib = list.as_dwords().to_vec();
    // A pattern whose high halves differ per dword.
    let orig: [u32; 32] = core::array::from_fn(|i| 0x0101_0000 * i as u32 + 0x5A5A);
    let mut kernargs = orig;
    let d = Dims {
        global: [3, 5, 7],
        local: [64, 2, 4],
    };
    assert!(
        table
            .apply(
                &[Some(Value::Dims(d))],
                &mut [&mut ib[..], &mut kernargs[..]]
            )
            .is_ok()
    );
    assert_eq!(kernargs[17], 64 | 2 << 16);
    assert_eq!(kernargs[18], (orig[18] & 0xFFFF_0000) | 4);
    assert_eq!(kernargs[19..22], [3 * 64, 5 * 2, 7 * 4]);
    for (i, (k, o)) in kernargs.iter().zip(orig.iter()).enumerate() {
        if !(17..22).contains(&i) {
            assert_eq!(k, o, "dword {i} is not the packet's");
        }
    }
}
