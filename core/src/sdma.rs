//! TODO(owner): sdma
