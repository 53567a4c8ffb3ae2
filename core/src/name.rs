//! [`Name`]: a short name kept inside an error value (a kernel, device or argument-kind name),
//! truncated so that errors stay allocation-free. Its own module because the code-object, the
//! metadata and the bundle parsers all report names, and none of them should import another
//! just for this type.

/// A short name kept inside an error (kernel or device name, truncated to 64 bytes).
pub type Name = heapless::String<64>;

/// `s` as a [`Name`]: its longest prefix of whole characters that fits in 64 bytes.
#[must_use]
pub fn short_name(s: &str) -> Name {
    let mut out = Name::new();
    for c in s.chars() {
        if out.push(c).is_err() {
            break;
        }
    }
    out
}
