//! TODO(owner): ring
