use super::*;

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| (*x).to_owned()).collect()
}

#[test]
fn fault_text_names_the_argument_of_each_buffer() {
    let t = "GPU VM fault: write at 0x2000: no GPU mapping (0 bytes past the end of the \
             4096-byte buffer at 0x1000..0x2000) at kernel offset 0x68";
    assert_eq!(
        name_buffers(t, &[(2, 0x5000), (0, 0x1000)]),
        "GPU VM fault: write at 0x2000: no GPU mapping (0 bytes past the end of the \
         4096-byte buffer at 0x1000..0x2000 (arg 0)) at kernel offset 0x68"
    );
    assert_eq!(
        name_buffers(t, &[(1, 0x10)]),
        t,
        "0x10 is not a buffer named there"
    );
}

#[test]
fn arg_syntax() {
    assert_eq!(
        parse_arg("u32:7").unwrap(),
        CliArg::Value {
            ty: Ty::U32,
            lanes: 1,
            bytes: vec![7, 0, 0, 0]
        }
    );
    assert_eq!(
        parse_arg("i8:-2").unwrap(),
        CliArg::Value {
            ty: Ty::I8,
            lanes: 1,
            bytes: vec![0xfe]
        }
    );
    assert_eq!(
        parse_arg("buf:u16:1,2,3").unwrap(),
        CliArg::Buf {
            ty: Ty::U16,
            bytes: vec![1, 0, 2, 0, 3, 0],
            shape: vec![3],
            out: false
        }
    );
    assert_eq!(
        parse_arg("buf:u8:4*9").unwrap(),
        CliArg::Buf {
            ty: Ty::U8,
            bytes: vec![9; 4],
            shape: vec![4],
            out: false
        }
    );
    assert_eq!(
        parse_arg("buf:u8:iota:3").unwrap(),
        CliArg::Buf {
            ty: Ty::U8,
            bytes: vec![0, 1, 2],
            shape: vec![3],
            out: false
        }
    );
    assert_eq!(
        parse_arg("f32:2.5").unwrap(),
        CliArg::Value {
            ty: Ty::F32,
            lanes: 1,
            bytes: 2.5f32.to_le_bytes().to_vec()
        }
    );
    assert_eq!(
        parse_arg("u8:300").unwrap_err(),
        "`u8:300`: 300 does not fit u8"
    );
    assert!(
        parse_arg("q32:1")
            .unwrap_err()
            .contains("unknown type `q32`")
    );
    assert!(parse_arg("buf:u32:0*1").unwrap_err().contains("count 0"));
    assert!(parse_arg("buf:u32").unwrap_err().contains("buf:TYPE:SPEC"));
    assert!(parse_arg("7").unwrap_err().contains("TYPE:VALUE"));
}

#[test]
fn new_arg_syntax() {
    assert_eq!(
        parse_arg("u32x2:1,2").unwrap(),
        CliArg::Value {
            ty: Ty::U32,
            lanes: 2,
            bytes: vec![1, 0, 0, 0, 2, 0, 0, 0]
        }
    );
    // A 3-vector takes 4 elements' room, as OpenCL's uint3.
    assert_eq!(
        parse_arg("u8x3:1,2,3").unwrap(),
        CliArg::Value {
            ty: Ty::U8,
            lanes: 3,
            bytes: vec![1, 2, 3, 0]
        }
    );
    let CliArg::Value { bytes, .. } =
        parse_arg("f64x16:1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16").unwrap()
    else {
        panic!()
    };
    assert_eq!(bytes.len(), 128);
    assert!(
        parse_arg("u32x5:1,2,3,4,5")
            .unwrap_err()
            .contains("2, 3, 4, 8, 16")
    );
    assert!(
        parse_arg("f32x4:1,2,3")
            .unwrap_err()
            .contains("takes 4 comma-separated values, got 3")
    );
    assert_eq!(parse_arg("lds:1024").unwrap(), CliArg::Lds { bytes: 1024 });
    assert!(parse_arg("lds:x").unwrap_err().contains("lds:BYTES"));
    assert_eq!(
        parse_arg("out:f32:3").unwrap(),
        CliArg::Buf {
            ty: Ty::F32,
            bytes: vec![0; 12],
            shape: vec![3],
            out: true
        }
    );
    assert_eq!(
        parse_arg("buf:f32:@x.npy").unwrap(),
        CliArg::File {
            ty: Ty::F32,
            path: "x.npy".into()
        }
    );
    assert!(
        parse_arg("buf:f32:@")
            .unwrap_err()
            .contains("needs a file name")
    );
}

#[test]
fn c_types_with_vectors() {
    assert_eq!(c_type("uint"), Some((Ty::U32, 1)));
    assert_eq!(c_type("float4*"), Some((Ty::F32, 4)));
    assert_eq!(c_type("const float*"), Some((Ty::F32, 1)));
    assert_eq!(c_type("uint2"), Some((Ty::U32, 2)));
    assert_eq!(c_type("half16"), Some((Ty::F16, 16)));
    assert_eq!(c_type("uint5"), None);
    assert_eq!(c_type("struct S"), None);
}

/// The .npy format as numpy's `numpy.lib.format` documents version 1.0: magic, version
/// 1.0, a little-endian u16 header length, a Python dict literal ending in '\n' and padded
/// with spaces so the data starts at a multiple of 64.
#[test]
fn npy_bytes_follow_the_format() {
    let data: Vec<u8> = [1.5f32, -2.0, 3.25]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let f = write_npy(Ty::F32, &[3], &data);
    assert_eq!(&f[..8], b"\x93NUMPY\x01\x00");
    let hl = usize::from(u16::from_le_bytes([f[8], f[9]]));
    assert_eq!((10 + hl) % 64, 0);
    let header = core::str::from_utf8(&f[10..10 + hl]).unwrap();
    assert!(
        header.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"),
        "{header}"
    );
    assert!(header.ends_with('\n'));
    assert!(header.trim_end_matches('\n').ends_with(['}', ' ']));
    assert_eq!(&f[10 + hl..], &data[..]);
    let g = write_npy(Ty::U8, &[2, 3], &[0; 6]);
    let hl = usize::from(u16::from_le_bytes([g[8], g[9]]));
    let header = core::str::from_utf8(&g[10..10 + hl]).unwrap();
    assert!(
        header.contains("'descr': '|u1'") && header.contains("'shape': (2, 3)"),
        "{header}"
    );
    // Round trip, and what numpy itself writes (version 1.0, shape with a trailing L from
    // Python 2 is accepted too).
    assert_eq!(read_npy(Ty::F32, "t", &f).unwrap(), (data.clone(), vec![3]));
    assert_eq!(read_npy(Ty::U8, "t", &g).unwrap(), (vec![0; 6], vec![2, 3]));
    let e = read_npy(Ty::U32, "t.npy", &f).unwrap_err();
    assert!(
        e.contains("the array's dtype is '<f4', but the argument is u32 ('<u4')"),
        "{e}"
    );
    let mut big = f.clone();
    let at = big.windows(3).position(|w| w == b"<f4").unwrap();
    big[at] = b'>';
    assert!(
        read_npy(Ty::F32, "t", &big)
            .unwrap_err()
            .contains("dtype is '>f4'")
    );
    assert!(
        read_npy(Ty::F32, "t", &f[..f.len() - 1])
            .unwrap_err()
            .contains("needs 12 bytes")
    );
    assert!(
        read_npy(Ty::F32, "t", b"nope")
            .unwrap_err()
            .contains("magic")
    );
}

#[test]
fn f16_conversion_round_trips() {
    for v in [0.0f32, 1.0, -2.5, 65504.0, 6.1035156e-5, 5.9604645e-8] {
        assert_eq!(f16_to_f32(f32_to_f16(v)), v, "{v}");
    }
    assert_eq!(f32_to_f16(1.0), 0x3c00);
    assert_eq!(f32_to_f16(1e6), 0x7c00);
    assert!(f16_to_f32(f32_to_f16(f32::NAN)).is_nan());
}

#[test]
fn command_line() {
    let o = parse(&s(&[
        "k.co",
        "k",
        "--groups",
        "4",
        "--block",
        "64,2",
        "buf:u32:iota:4",
        "u32:4",
        "--json",
    ]))
    .unwrap()
    .unwrap();
    assert_eq!(o.groups, [4, 1, 1]);
    assert_eq!(o.block, [64, 2, 1]);
    assert_eq!(o.args.len(), 2);
    assert!(o.json);
    assert_eq!(o.print, Print::Written);
    assert_eq!(o.save, None);
    let o = parse(&s(&[
        "k.co", "k", "--groups", "1", "--block", "1", "--print", "all", "--save", "d",
    ]))
    .unwrap()
    .unwrap();
    assert_eq!((o.print, o.save.as_deref()), (Print::All, Some("d")));
    assert!(!o.strict);
    let o = parse(&s(&[
        "k.co", "k", "--groups", "1", "--block", "1", "--strict",
    ]))
    .unwrap()
    .unwrap();
    assert!(o.strict);
    let text = to_text(
        &json!({"kernel": "k", "target": "gfx1100", "groups": [1, 1, 1], "block": [1, 1, 1],
                "buffers": [], "gpu_time_ns": 1, "gpu_time_kind": "modelled",
                "findings": ["kernel at 0x1000, ds_load_b32 at kernel offset 0x8: ..."]}),
        Print::Written,
    );
    assert!(
        text.contains("  finding: kernel at 0x1000, ds_load_b32"),
        "{text}"
    );
    assert!(
        parse(&s(&[
            "k.co", "k", "--groups", "1", "--block", "1", "--print", "x"
        ]))
        .unwrap_err()
        .contains("all, written or none")
    );
    assert!(parse(&s(&["--help"])).unwrap().is_none());
    assert_eq!(
        parse(&s(&["k.co", "k", "--block", "1"])).unwrap_err(),
        "missing --groups"
    );
    assert!(parse(&s(&["k.co", "k", "--groups", "1,2,3,4"])).is_err());
    assert!(parse(&s(&["k.co", "--groups"])).is_err());
    assert!(parse(&s(&["k.co", "k", "--frob"])).is_err());
}
