//! # hcq-sim
//!
//! A simulated amdkfd and AMD GPU that the real driver cannot tell from hardware.
#![deny(missing_docs)]

pub mod engine;
pub mod kernels;
