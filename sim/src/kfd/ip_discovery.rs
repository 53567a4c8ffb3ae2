//! amdgpu's IP-discovery tree in sysfs, `/sys/class/drm/renderD<minor>/device/ip_discovery/`,
//! and the listing of every sysfs file the simulated kernel serves.
//!
//! Layout (Linux `drivers/gpu/drm/amd/amdgpu/amdgpu_discovery.c`, `amdgpu_discovery_sysfs_init`
//! and its `ip_die_entry`/`ip_hw_instance` attributes): `ip_discovery/die/<die>/num_ips`, and per
//! IP `die/<die>/<hw_id>/<instance>/{hw_id, num_instance, major, minor, revision, harvest}`,
//! where `<hw_id>` is the decimal hardware id of `drivers/gpu/drm/amd/include/soc15_hw_ip.h`
//! (MP1 1, SMUIO 4, GC 11, UVD/VCN 12, MMHUB 34, ATHUB 35, OSSSYS 40, HDP 41, SDMA0 42, DF 46,
//! LSDMA 91, NBIF 108, UMC 150, MP0 255, DMU 271).
//!
//! The tree is built from the discovery table the GPU's firmware carries. Aldebaran (gfx90a)
//! reads none: `amdgpu_discovery_set_ip_blocks` fills its versions from the hard-coded
//! `case CHIP_ALDEBARAN:` branch, so it has no `ip_discovery` directory (ENOENT, as on such a
//! machine). The versions of the other chips are those their discovery tables carry, as
//! Linux's per-IP drivers name them: gfx942 (MI300, "aqua vanjaram", GC 9.4.3:
//! `gfx_v9_4_3.c`, `sdma_v4_4_2.c`, `nbio_v7_9.c`, `mmhub_v1_8.c`, `hdp_v4_0.c` 4.4.2,
//! `umc_v12_0.c`, `smu_v13_0_6`/`psp_v13_0` 13.0.6, `df_v4_3.c`); gfx1100 (Navi 31, GC 11.0.0:
//! `gfx_v11_0.c`, `sdma_v6_0.c` 6.0.0, `nbio_v4_3.c`, `mmhub_v3_0.c`, `athub_v3_0.c`,
//! `hdp_v6_0.c`, `umc_v8_10.c`, `smu_v13_0_0`/`psp_v13_0` 13.0.0, `vcn_v4_0.c`); gfx1201
//! (Navi 48, GC 12.0.1: `gfx_v12_0.c`, `sdma_v7_0.c` 7.0.1, `nbif_v6_3_1.c`, `mmhub_v4_1_0.c`,
//! `athub_v4_1_0.c`, `hdp_v7_0.c`, `umc_v8_14.c`, `smu_v14_0_2`/`psp_v14_0` 14.0.3,
//! `vcn_v5_0_0.c`). Only instance 0 of each IP is listed, and one die: the simulated GPUs
//! have one XCC and one SDMA engine (see sim/README.md).

use super::*;

/// Hardware ids (`soc15_hw_ip.h`).
const MP1: u32 = 1;
const GC: u32 = 11;
const VCN: u32 = 12;
const MMHUB: u32 = 34;
const ATHUB: u32 = 35;
const OSSSYS: u32 = 40;
const HDP: u32 = 41;
const SDMA0: u32 = 42;
const DF: u32 = 46;
const NBIF: u32 = 108;
const UMC: u32 = 150;
const MP0: u32 = 255;

/// `(hw_id, (major, minor, revision))` of one IP.
type IpVersion = (u32, (u32, u32, u32));

/// The IPs a chip's discovery table lists, or `None` for a chip whose driver reads no
/// discovery table.
fn ip_versions(gfx_target_version: u32) -> Option<&'static [IpVersion]> {
    Some(match gfx_target_version {
        90402 => &[
            (MP1, (13, 0, 6)),
            (GC, (9, 4, 3)),
            (VCN, (4, 0, 3)),
            (MMHUB, (1, 8, 0)),
            (OSSSYS, (4, 4, 2)),
            (HDP, (4, 4, 2)),
            (SDMA0, (4, 4, 2)),
            (DF, (4, 3, 0)),
            (NBIF, (7, 9, 0)),
            (UMC, (12, 0, 0)),
            (MP0, (13, 0, 6)),
        ],
        110000 => &[
            (MP1, (13, 0, 0)),
            (GC, (11, 0, 0)),
            (VCN, (4, 0, 0)),
            (MMHUB, (3, 0, 0)),
            (ATHUB, (3, 0, 0)),
            (OSSSYS, (6, 0, 0)),
            (HDP, (6, 0, 0)),
            (SDMA0, (6, 0, 0)),
            (NBIF, (4, 3, 0)),
            (UMC, (8, 10, 0)),
            (MP0, (13, 0, 0)),
        ],
        120001 => &[
            (MP1, (14, 0, 3)),
            (GC, (12, 0, 1)),
            (VCN, (5, 0, 0)),
            (MMHUB, (4, 1, 0)),
            (ATHUB, (4, 1, 0)),
            (OSSSYS, (7, 0, 0)),
            (HDP, (7, 0, 0)),
            (SDMA0, (7, 0, 1)),
            (NBIF, (6, 3, 1)),
            (UMC, (8, 14, 0)),
            (MP0, (14, 0, 3)),
        ],
        _ => return None,
    })
}

/// Files of one IP instance directory.
const INSTANCE_FILES: [&str; 6] = [
    "hw_id",
    "num_instance",
    "major",
    "minor",
    "revision",
    "harvest",
];

impl SimKfd {
    /// A file under `ip_discovery/` of the GPU with gfx target `target` (`rest` is the path
    /// below `ip_discovery/`).
    pub(super) fn ip_discovery_file(target: u32, rest: &str) -> Result<String, Errno> {
        let ips = ip_versions(target).ok_or(Errno::ENOENT)?;
        let rest = rest.strip_prefix("die/0/").ok_or(Errno::ENOENT)?;
        if rest == "num_ips" {
            return Ok(format!("{}\n", ips.len()));
        }
        let mut parts = rest.split('/');
        let (Some(hw), Some("0"), Some(file), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(Errno::ENOENT);
        };
        let hw: u32 = hw.parse().map_err(|_| Errno::ENOENT)?;
        let &(_, (major, minor, rev)) = ips.iter().find(|(h, _)| *h == hw).ok_or(Errno::ENOENT)?;
        let v = match file {
            "hw_id" => hw,
            "num_instance" => 0,
            "major" => major,
            "minor" => minor,
            "revision" => rev,
            "harvest" => 0,
            _ => return Err(Errno::ENOENT),
        };
        Ok(format!("{v}\n"))
    }

    /// Every sysfs file the simulated kernel serves (KFD topology under both roots, amdgpu's
    /// memory totals and IP-discovery tree per render node), for clients that list
    /// directories: a directory exists exactly when a served file lies under it.
    #[must_use]
    pub fn sysfs_files(&self) -> Vec<String> {
        let mut out = Vec::new();
        for root in [
            "/sys/devices/virtual/kfd/kfd/topology",
            "/sys/class/kfd/kfd/topology",
        ] {
            let mut push = |p: String| {
                let ok = self.topology_file(&p).is_ok();
                if ok {
                    out.push(p);
                }
                ok
            };
            push(format!("{root}/generation_id"));
            push(format!("{root}/system_properties"));
            let mut n = 0;
            while push(format!("{root}/nodes/{n}/gpu_id")) {
                for f in ["name", "properties", "mem_banks/0/properties"] {
                    push(format!("{root}/nodes/{n}/{f}"));
                }
                let mut i = 0;
                while push(format!("{root}/nodes/{n}/caches/{i}/properties")) {
                    i += 1;
                }
                n += 1;
            }
        }
        let minors: Vec<u32> = self
            .lock()
            .gpus
            .iter()
            .map(|g| g.props.drm_render_minor)
            .collect();
        for (i, minor) in minors.into_iter().enumerate() {
            let dev = format!("/sys/class/drm/renderD{minor}/device");
            for f in [
                "mem_info_vram_total",
                "mem_info_vis_vram_total",
                "mem_info_gtt_total",
            ] {
                out.push(format!("{dev}/{f}"));
            }
            let target = self.cfg.gpus.get(i).map_or(0, |g| g.gfx_target_version);
            if let Some(ips) = ip_versions(target) {
                out.push(format!("{dev}/ip_discovery/die/0/num_ips"));
                for (hw, _) in ips {
                    for f in INSTANCE_FILES {
                        out.push(format!("{dev}/ip_discovery/die/0/{hw}/0/{f}"));
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_per_target_and_enoent_for_gfx90a() {
        let f = |t, p: &str| SimKfd::ip_discovery_file(t, p);
        assert_eq!(f(110000, "die/0/11/0/major").as_deref(), Ok("11\n"));
        assert_eq!(f(110000, "die/0/42/0/major").as_deref(), Ok("6\n"));
        assert_eq!(f(120001, "die/0/108/0/minor").as_deref(), Ok("3\n"));
        assert_eq!(f(120001, "die/0/11/0/revision").as_deref(), Ok("1\n"));
        assert_eq!(f(90402, "die/0/11/0/revision").as_deref(), Ok("3\n"));
        assert_eq!(f(90402, "die/0/108/0/minor").as_deref(), Ok("9\n"));
        assert_eq!(f(90010, "die/0/11/0/major"), Err(Errno::ENOENT));
        assert_eq!(f(110000, "die/0/11/1/major"), Err(Errno::ENOENT));
        assert_eq!(f(110000, "die/0/999/0/major"), Err(Errno::ENOENT));
        assert_eq!(f(110000, "die/0/11/0/nope"), Err(Errno::ENOENT));
        assert_eq!(f(110000, "die/0/num_ips").as_deref(), Ok("11\n"));
    }
}
