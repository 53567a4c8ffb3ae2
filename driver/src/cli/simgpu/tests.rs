use super::*;

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| (*x).to_owned()).collect()
}

#[test]
fn flags_are_taken_out_and_the_rest_kept_in_order() {
    let (c, rest) = split(&s(&[
        "--json",
        "--sim-target",
        "gfx942",
        "--xcc=8",
        "k.co",
        "--gpus",
        "2",
    ]))
    .unwrap();
    assert_eq!(
        c,
        SimChoice {
            target: Some("gfx942".into()),
            xcc: Some(8),
            gpus: Some(2)
        }
    );
    assert!(c.any());
    assert_eq!(rest, s(&["--json", "k.co"]));
    let (c, rest) = split(&s(&["--sim", "--mib", "4"])).unwrap();
    assert!(!c.any());
    assert_eq!(rest, s(&["--sim", "--mib", "4"]));
}

#[test]
fn bad_values_are_usage_errors_naming_what_is_accepted() {
    for (args, want) in [
        (
            &["--sim-target", "gfx803"][..],
            "gfx1100, gfx90a, gfx942, gfx1201",
        ),
        (&["--xcc", "3"][..], "1, 2, 4 or 8"),
        (&["--gpus", "0"][..], "1 to 16"),
        (&["--xcc"][..], "needs a value"),
    ] {
        match split(&s(args)) {
            Err(CliError::Usage(m)) => assert!(m.contains(want), "{args:?}: {m}"),
            other => panic!("{args:?}: {other:?}"),
        }
    }
}

#[test]
fn the_config_has_the_asked_gpus_and_xccs() {
    let c = SimChoice {
        target: Some("gfx942".into()),
        xcc: Some(8),
        gpus: Some(2),
    };
    let (cfg, desc) = sim_config_from(&c, hcq_sim::SimConfig::default(), "gfx1100", 1).unwrap();
    assert_eq!(cfg.gpus.len(), 2);
    assert_eq!(cfg.xcc, 8);
    assert_eq!(desc, "2 x gfx942 (8 XCCs)");
    let sim = hcq_sim::SimKfd::new(cfg).unwrap();
    let id = sim.gpu_ids()[0];
    assert_eq!(sim.properties(id).unwrap().num_xcc, 8);
}
