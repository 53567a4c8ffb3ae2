//! End-to-end tests of hcq-driver on hcq-sim live in `tests/`.
