//! `hcq decode --engine pm4|sdma`: reads dwords on stdin (hex `0x..` or decimal, separated by
//! whitespace or commas) and prints one packet per line, `<dword index>: <packet>`. A malformed
//! stream prints the packets before the fault and fails with the fault's dword index.

use std::io::Read as _;

use hcq_core::{pm4, sdma};

use super::encode::{EngineArg, parse_args};

const USAGE: &str = "usage: hcq decode --engine pm4|sdma < dwords.txt";

/// `hcq decode`'s help text.
pub const HELP: &str = "\
usage: hcq decode --engine pm4|sdma < dwords.txt

Reads dwords on stdin (hex 0x.. or decimal, separated by whitespace or commas) and prints one
packet per line, `<dword index>: <packet>` with every field. A ring dump starts at a packet
boundary (the read pointer; SDMA pointers count bytes: start at rptr / 4).

options:
  --engine pm4|sdma   the queue the dwords come from (required)
  --arch gfxNNNN      accepted for symmetry with encode (default gfx1100)
";

/// Parses the dword tokens.
pub(crate) fn parse_dwords(input: &str) -> Result<Vec<u32>, String> {
    input
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|t| !t.is_empty())
        .enumerate()
        .map(|(i, t)| {
            let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                Some(h) => u32::from_str_radix(h, 16),
                None => t.parse::<u32>(),
            };
            r.map_err(|e| {
                format!("dword {i}: `{t}` is not a 32-bit hex (0x..) or decimal number: {e}")
            })
        })
        .collect()
}

/// Decodes `dwords`: the output lines, or the lines so far plus the error.
pub(crate) fn decode_lines(dwords: &[u32], engine: EngineArg) -> (Vec<String>, Option<String>) {
    let mut out = Vec::new();
    match engine {
        EngineArg::Pm4 => {
            for r in pm4::decode(dwords) {
                match r {
                    Ok((at, p)) => out.push(format!("{at}: {p}")),
                    Err(e) => return (out, Some(e.to_string())),
                }
            }
        }
        EngineArg::Sdma => {
            for r in sdma::decode(dwords) {
                match r {
                    Ok((at, p)) => out.push(format!("{at}: {p}")),
                    Err(e) => return (out, Some(e.to_string())),
                }
            }
        }
    }
    (out, None)
}

/// Runs `hcq decode`.
pub fn run(args: &[String]) -> Result<(), super::CliError> {
    let (engine, _arch) = parse_args(args, USAGE).map_err(super::CliError::Usage)?;
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .map_err(|e| format!("cannot read stdin: {e}"))?;
    let dwords = parse_dwords(&input).map_err(|e| {
        super::CliError::failed_with(e, "pass 32-bit words only: 0x1f, 31, separated by spaces")
    })?;
    let (lines, error) = decode_lines(&dwords, engine);
    for l in lines {
        println!("{l}");
    }
    match error {
        Some(e) => Err(super::CliError::failed_with(
            e,
            "the packets before it decoded; check that the dump starts at a packet boundary \
             (the read pointer) and that --engine matches the ring",
        )),
        None => Ok(()),
    }
}
