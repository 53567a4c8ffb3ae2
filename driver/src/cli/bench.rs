//! `hcq bench [--json] [--quick]`: the hot paths of DESIGN.md's performance budgets (see
//! [`hcq_driver::bench`]). The table marks a missed budget with `MISSED`; `--json` prints one
//! object whose metrics are numbers, or null where the code they measure has not landed.

const USAGE: &str = "usage: hcq bench [--json] [--quick]";

/// Runs `hcq bench` with `args` (after the sub-command name).
pub fn run(args: &[String]) -> Result<(), String> {
    let mut json_out = false;
    let mut quick = false;
    for a in args {
        match a.as_str() {
            "--json" => json_out = true,
            "--quick" => quick = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            s => return Err(format!("unknown argument `{s}` ({USAGE})")),
        }
    }
    if cfg!(debug_assertions) && !json_out {
        eprintln!("hcq bench: this is a debug build; build with --release for real numbers");
    }
    let report = hcq_driver::bench::run(quick).map_err(|e| e.to_string())?;
    if json_out {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.to_table());
    }
    Ok(())
}
