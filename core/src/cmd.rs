//! TODO(owner): cmd
