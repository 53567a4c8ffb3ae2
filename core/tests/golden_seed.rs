//! Golden vectors: every case in `golden/seed_vectors.json` (made by `golden/gen_golden.py` from
//! the seed's own HWPM4Queue / HWCopyQueue code) is replayed through `Pm4List` / `SdmaList` and
//! must give the same dwords, command offsets, SDMA packet sizes and dispatch packets. Every
//! stream must also decode cleanly, and re-encoding the decoded packets gives the same dwords.

use hcq_core::addr::GpuVa;
use hcq_core::arch::GFX11;
use hcq_core::cmd::{ExecCmd, Pm4List, SdmaList, SignalCmd, WaitCmd};
use hcq_core::pm4::{self, DispatchInfo, Program};
use hcq_core::sdma;
use hcq_core::signal::SignalRef;
use serde_json::Value;

const VECTORS: &str = include_str!("golden/seed_vectors.json");

fn u(v: &Value, k: &str) -> u64 {
    v.get(k)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("field {k} in {v}"))
}

fn u3(v: &Value, k: &str) -> [u32; 3] {
    let a = v[k].as_array().unwrap();
    [0, 1, 2].map(|i| u32::try_from(a[i].as_u64().unwrap()).unwrap())
}

fn sig(v: &Value) -> SignalRef {
    SignalRef {
        addr: u(v, "addr"),
        event_mailbox_ptr: u(v, "event_mailbox_ptr"),
        event_id: u(v, "event_id") as u32,
    }
}

fn prog(v: &Value) -> Program {
    Program {
        prog_addr: GpuVa(u(v, "prog_addr")),
        scratch_addr: GpuVa(u(v, "scratch_addr")),
        tmpring_size: u(v, "tmpring_size") as u32,
        rsrc1: u(v, "rsrc1") as u32,
        rsrc2: u(v, "rsrc2") as u32,
        rsrc3: 0,
        dispatch: v.get("dispatch_packet_offset").map(|_| DispatchInfo {
            packet_offset: u(v, "dispatch_packet_offset"),
            group_segment_size: u(v, "group_segment_size") as u32,
            private_segment_size: u(v, "private_segment_size") as u32,
        }),
        private_segment_buffer: None,
        flat_scratch_init: None,
    }
}

enum H {
    Exec(ExecCmd),
    Wait(WaitCmd),
    Signal(SignalCmd),
    Other,
}

fn dwords(case: &Value) -> Vec<u32> {
    case["dwords"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as u32)
        .collect()
}

fn offsets(case: &Value) -> Vec<u32> {
    case["cmd_offsets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as u32)
        .collect()
}

fn run_pm4(i: usize, case: &Value) {
    let mut l: Box<Pm4List<8192, 64>> = Box::new(Pm4List::new(&GFX11));
    let mut hs = Vec::new();
    let mut dps = std::collections::BTreeMap::new();
    for op in case["ops"].as_array().unwrap() {
        let name = op["op"].as_str().unwrap();
        match name {
            "memory_barrier" => {
                l.memory_barrier().unwrap();
                hs.push(H::Other);
            }
            "exec" => {
                let (h, dp) = l
                    .exec(
                        &prog(&op["program"]),
                        GpuVa(u(op, "kernargs")),
                        u3(op, "global"),
                        u3(op, "local"),
                    )
                    .unwrap();
                if let Some(dp) = dp {
                    dps.insert(hs.len(), dp.packet.to_bytes().to_vec());
                }
                hs.push(H::Exec(h));
            }
            "wait" => hs.push(H::Wait(
                l.wait(&sig(&op["signal"]), u(op, "value") as u32).unwrap(),
            )),
            "signal" => hs.push(H::Signal(
                l.signal(&sig(&op["signal"]), u(op, "value")).unwrap(),
            )),
            "timestamp" => {
                l.timestamp(&sig(&op["signal"])).unwrap();
                hs.push(H::Other);
            }
            "update_exec" => {
                let H::Exec(h) = &hs[u(op, "cmd") as usize] else {
                    panic!("case {i}: not exec")
                };
                let dp = l.update_exec(h, u3(op, "global"), u3(op, "local")).unwrap();
                if let Some(dp) = dp {
                    dps.insert(u(op, "cmd") as usize, dp.packet.to_bytes().to_vec());
                }
            }
            "update_wait" => {
                let H::Wait(h) = &hs[u(op, "cmd") as usize] else {
                    panic!("case {i}: not wait")
                };
                let s = op.get("signal").map(sig);
                l.update_wait(
                    h,
                    s.as_ref(),
                    op.get("value").map(|v| v.as_u64().unwrap() as u32),
                )
                .unwrap();
            }
            "update_signal" => {
                let H::Signal(h) = &hs[u(op, "cmd") as usize] else {
                    panic!("case {i}: not signal")
                };
                let s = op.get("signal").map(sig);
                l.update_signal(h, s.as_ref(), op.get("value").map(|v| v.as_u64().unwrap()))
                    .unwrap();
            }
            other => panic!("case {i}: op {other}"),
        }
    }
    let want = dwords(case);
    assert_eq!(l.as_dwords(), &want[..], "case {i} (pm4): {}", case["ops"]);
    assert_eq!(l.cmd_offsets(), &offsets(case)[..], "case {i} offsets");
    let want_dps: std::collections::BTreeMap<usize, Vec<u8>> = case["dispatch_packets"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            (
                k.parse().unwrap(),
                v.as_array()
                    .unwrap()
                    .iter()
                    .map(|b| b.as_u64().unwrap() as u8)
                    .collect(),
            )
        })
        .collect();
    assert_eq!(dps, want_dps, "case {i} dispatch packets");
    // Decode and re-encode.
    let mut re = vec![0u32; want.len()];
    let mut at = 0;
    for r in pm4::decode(&want) {
        let (off, p) = r.unwrap_or_else(|e| panic!("case {i}: {e}"));
        assert_eq!(off, at);
        at += reencode_pm4(&p, &mut re[at..]);
        assert!(!p.to_string().is_empty());
    }
    assert_eq!(re, want, "case {i} re-encode");
}

fn reencode_pm4(p: &pm4::Pm4Packet<'_>, b: &mut [u32]) -> usize {
    use pm4::Pm4Packet as P;
    match *p {
        P::SetShReg { reg_offset, values } => pm4::set_sh_reg(b, reg_offset, values),
        P::DispatchDirect(d) => pm4::dispatch_direct(b, &d),
        P::WaitRegMem(w) => pm4::wait_reg_mem(b, &w),
        P::ReleaseMem(r) => pm4::release_mem(b, &r),
        P::AcquireMem(a) => pm4::acquire_mem(b, &a),
        P::EventWrite(e) => pm4::event_write(b, e),
        ref other => panic!("unexpected packet {other}"),
    }
    .unwrap()
}

fn run_sdma(i: usize, case: &Value) {
    let mut l: Box<SdmaList<8192, 64, 1024>> = Box::new(SdmaList::new(&GFX11));
    let mut hs = Vec::new();
    for op in case["ops"].as_array().unwrap() {
        match op["op"].as_str().unwrap() {
            "copy" => {
                l.copy(GpuVa(u(op, "dst")), GpuVa(u(op, "src")), u(op, "size"))
                    .unwrap();
                hs.push(H::Other);
            }
            "wait" => hs.push(H::Wait(
                l.wait(&sig(&op["signal"]), u(op, "value") as u32).unwrap(),
            )),
            "signal" => hs.push(H::Signal(
                l.signal(&sig(&op["signal"]), u(op, "value") as u32)
                    .unwrap(),
            )),
            "timestamp" => {
                l.timestamp(&sig(&op["signal"])).unwrap();
                hs.push(H::Other);
            }
            "update_wait" => {
                let H::Wait(h) = &hs[u(op, "cmd") as usize] else {
                    panic!("case {i}: not wait")
                };
                let s = op.get("signal").map(sig);
                l.update_wait(
                    h,
                    s.as_ref(),
                    op.get("value").map(|v| v.as_u64().unwrap() as u32),
                )
                .unwrap();
            }
            "update_signal" => {
                let H::Signal(h) = &hs[u(op, "cmd") as usize] else {
                    panic!("case {i}: not signal")
                };
                let s = op.get("signal").map(sig);
                l.update_signal(
                    h,
                    s.as_ref(),
                    op.get("value").map(|v| v.as_u64().unwrap() as u32),
                )
                .unwrap();
            }
            other => panic!("case {i}: op {other}"),
        }
    }
    let want = dwords(case);
    assert_eq!(l.as_dwords(), &want[..], "case {i} (sdma): {}", case["ops"]);
    assert_eq!(l.cmd_offsets(), &offsets(case)[..], "case {i} offsets");
    let sizes: Vec<u16> = case["packet_sizes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as u16)
        .collect();
    assert_eq!(l.packet_sizes(), &sizes[..], "case {i} packet sizes");
    let mut re = vec![0u32; want.len()];
    let mut at = 0;
    for (n, r) in sdma::decode(&want).enumerate() {
        let (off, p) = r.unwrap_or_else(|e| panic!("case {i}: {e}"));
        assert_eq!(off, at);
        assert_eq!(
            usize::from(sizes[n]),
            sdma::packet_len(&want[off..]).unwrap()
        );
        at += reencode_sdma(&p, &mut re[at..]);
        assert!(!p.to_string().is_empty());
    }
    assert_eq!(re, want, "case {i} re-encode");
}

fn reencode_sdma(p: &sdma::SdmaPacket<'_>, b: &mut [u32]) -> usize {
    use sdma::SdmaPacket as P;
    match *p {
        P::CopyLinear(c) => sdma::copy_linear(b, &c),
        P::Fence(f) => sdma::fence(b, &f),
        P::Trap { int_context } => sdma::trap(b, int_context),
        P::PollRegmem(w) => sdma::poll_regmem(b, &w),
        P::Timestamp { addr } => sdma::timestamp_to(b, addr),
        P::GcrReq(g) => sdma::gcr_req(b, &g),
        ref other => panic!("unexpected packet {other}"),
    }
    .unwrap()
}

#[test]
#[cfg_attr(
    miri,
    ignore = "parses 170 KB of JSON: over 5 minutes under miri; the encoders run under miri in the unit tests"
)]
fn seed_vectors() {
    let cases: Vec<Value> = serde_json::from_str(VECTORS).unwrap();
    assert!(cases.len() >= 100);
    let (mut p, mut s) = (0, 0);
    for (i, c) in cases.iter().enumerate() {
        match c["engine"].as_str().unwrap() {
            "pm4" => {
                run_pm4(i, c);
                p += 1;
            }
            "sdma" => {
                run_sdma(i, c);
                s += 1;
            }
            e => panic!("engine {e}"),
        }
    }
    assert!(p > 50 && s > 50, "{p} pm4 and {s} sdma cases");
}
