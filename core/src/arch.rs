//! TODO(owner): arch
