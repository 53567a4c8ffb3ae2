//! TODO(owner): codeobj
