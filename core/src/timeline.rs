//! TODO(owner): timeline
