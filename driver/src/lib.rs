//! # hcq-driver
//!
//! Binds `hcq-core` to Linux's `/dev/kfd` through rustix: devices, GPU buffers, compute and copy
//! queues, code-object programs, copies and graph replay. With the `sim` feature (default) the
//! same API runs on `hcq-sim`'s simulated GPU.
#![deny(missing_docs)]
pub mod graph;
