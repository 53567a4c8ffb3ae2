//! TODO(owner): kfd
