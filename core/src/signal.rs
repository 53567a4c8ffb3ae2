//! `amd_signal_t` (64 bytes, 64-byte aligned): the memory a timeline signal lives in.
//!
//! The GPU writes `value` (32 bits: RELEASE_MEM / SDMA FENCE), compares it (WAIT_REG_MEM /
//! POLL_REGMEM, 32 bits), writes timestamps to `start_ts`, and when `event_mailbox_ptr` is set,
//! writes `event_id` there and raises an interrupt that wakes KFD's WAIT_EVENTS.

use bytemuck::{Pod, Zeroable};
use core::mem::{offset_of, size_of};

/// `amd_signal_kind_t::AMD_SIGNAL_KIND_USER`.
pub const SIGNAL_KIND_USER: i64 = 1;

/// `amd_signal_t` as the GPU and ROCR lay it out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C, align(64))]
pub struct AmdSignal {
    /// Signal kind (1: user).
    pub kind: i64,
    /// Current value (the GPU reads and writes the low 32 bits).
    pub value: i64,
    /// Address of this signal's KFD event slot (events page + 8 x slot), or 0.
    pub event_mailbox_ptr: u64,
    /// KFD event id written to the mailbox, or 0.
    pub event_id: u32,
    /// Reserved.
    pub reserved1: u32,
    /// GPU clock at the start timestamp (100 MHz).
    pub start_ts: u64,
    /// GPU clock at the end timestamp (100 MHz).
    pub end_ts: u64,
    /// Queue pointer / reserved.
    pub queue_ptr: u64,
    /// Reserved.
    pub reserved3: [u32; 2],
}

/// Size of an `amd_signal_t` in bytes.
pub const SIGNAL_SIZE: usize = 64;
/// Byte offset of `value`.
pub const VALUE_OFFSET: u64 = 8;
/// Byte offset of `event_mailbox_ptr`.
pub const EVENT_MAILBOX_PTR_OFFSET: u64 = 16;
/// Byte offset of `event_id`.
pub const EVENT_ID_OFFSET: u64 = 24;
/// Byte offset of `start_ts`.
pub const START_TS_OFFSET: u64 = 32;
/// Byte offset of `end_ts`.
pub const END_TS_OFFSET: u64 = 40;

const _: () = assert!(size_of::<AmdSignal>() == SIGNAL_SIZE);
const _: () = assert!(core::mem::align_of::<AmdSignal>() == 64);
const _: () = assert!(offset_of!(AmdSignal, kind) == 0);
const _: () = assert!(offset_of!(AmdSignal, value) as u64 == VALUE_OFFSET);
const _: () = assert!(offset_of!(AmdSignal, event_mailbox_ptr) as u64 == EVENT_MAILBOX_PTR_OFFSET);
const _: () = assert!(offset_of!(AmdSignal, event_id) as u64 == EVENT_ID_OFFSET);
const _: () = assert!(offset_of!(AmdSignal, reserved1) == 28);
const _: () = assert!(offset_of!(AmdSignal, start_ts) as u64 == START_TS_OFFSET);
const _: () = assert!(offset_of!(AmdSignal, end_ts) as u64 == END_TS_OFFSET);
const _: () = assert!(offset_of!(AmdSignal, queue_ptr) == 48);
const _: () = assert!(offset_of!(AmdSignal, reserved3) == 56);

/// What a packet needs to know about a signal: where it lives on the GPU and, when it has a
/// KFD event, where the mailbox is. `addr` is the base of the 64-byte `amd_signal_t`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SignalRef {
    /// GPU virtual address of the `amd_signal_t` (64-byte aligned).
    pub addr: u64,
    /// GPU address of the KFD event mailbox slot, or 0 for a signal without an event.
    pub event_mailbox_ptr: u64,
    /// KFD event id (written to the mailbox and used as the interrupt context).
    pub event_id: u32,
}

impl SignalRef {
    /// A signal without a KFD event.
    #[must_use]
    pub const fn new(addr: u64) -> Self {
        Self {
            addr,
            event_mailbox_ptr: 0,
            event_id: 0,
        }
    }

    /// Address of `value` (what waits and signals target).
    #[must_use]
    pub const fn value_addr(&self) -> u64 {
        self.addr.wrapping_add(VALUE_OFFSET)
    }

    /// Address of `start_ts`.
    #[must_use]
    pub const fn start_ts_addr(&self) -> u64 {
        self.addr.wrapping_add(START_TS_OFFSET)
    }

    /// Address of `end_ts`.
    #[must_use]
    pub const fn end_ts_addr(&self) -> u64 {
        self.addr.wrapping_add(END_TS_OFFSET)
    }

    /// Whether completing this signal must also write its KFD event mailbox and interrupt.
    #[must_use]
    pub const fn has_event(&self) -> bool {
        self.event_mailbox_ptr != 0
    }
}
