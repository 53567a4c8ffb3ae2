//! TODO(owner): pm4
