//! Host stand-ins (opt-in, `ExecMode::HostStandIns`): the Rust closure registered for a
//! kernel's machine code runs per workgroup in place of the interpreter, after the same
//! launch checks (its descriptor, scratch, kernargs).

#[allow(clippy::wildcard_imports)]
use super::*;

/// The host stand-in registered for the machine code at COMPUTE_PGM, whose descriptor the
/// loaded code object must carry.
pub(super) fn registered_kernel<'e>(
    regs: &Regs,
    desc: &QueueDesc,
    env: &Env<'e>,
) -> Result<&'e RegisteredKernel, Cause> {
    let r = &desc.arch.regs;
    let sh = |off: u32| regs.sh(off);
    let (pgm_lo, pgm_hi) = (sh(r.pgm_lo), sh(r.pgm_lo + 1));
    if pgm_hi > 0xff {
        return hw(format!("COMPUTE_PGM_HI {pgm_hi:#x} has bits above 7"));
    }
    let pgm = join64(pgm_lo, pgm_hi) << 8;
    let mut code = [0u8; KEY_BYTES];
    env.read(pgm, &mut code, Access::Execute)?;
    let key = code_key(&code);
    let Some(k) = env.registry.lookup(key) else {
        return hw(format!(
            "no host kernel is registered for the machine code at program address {pgm:#x} (key {key:#018x}): the code object was loaded wrongly, or its kernel was never registered"
        ));
    };
    let name = &k.name;
    // CAST: i64 -> u64 two's complement; the descriptor is this far before the entry.
    let kd_va = pgm.wrapping_sub(k.descriptor.kernel_code_entry_byte_offset as u64);
    let mut kdb = [0u8; KernelDescriptor::SIZE];
    env.read(kd_va, &mut kdb, Access::Read)?;
    if KernelDescriptor::read(&kdb) != Some(k.descriptor) {
        return hw(format!(
            "the kernel descriptor at {kd_va:#x} (program address {pgm:#x} minus kernel_code_entry_byte_offset) does not match kernel {name}'s"
        ));
    }
    Ok(k)
}

/// A kernel with a private segment needs COMPUTE_TMPRING_SIZE to give each wave enough and
/// the whole programmed region mapped.
pub(super) fn check_host_scratch(
    regs: &Regs,
    desc: &QueueDesc,
    env: &Env<'_>,
    k: &RegisteredKernel,
    scratch_base: u64,
) -> Result<(), Cause> {
    let r = &desc.arch.regs;
    let (kd, name) = (&k.descriptor, &k.name);
    let props = kd.properties();
    let private = kd.private_segment_fixed_size;
    if private > 0 {
        let tmpring = regs.sh(r.tmpring_size);
        let waves = tmpring & 0xfff;
        let bits = desc.arch.tmpring_wavesize_hi - 12 + 1;
        let wavesize = (tmpring >> 12) & ((1u32 << bits) - 1);
        let unit = u64::from(desc.arch.tmpring_wavesize_unit);
        let lanes = if props.get(KernelCodeProperties::ENABLE_WAVEFRONT_SIZE32) != 0 {
            32
        } else {
            64
        };
        let need = u64::from(private) * lanes;
        if waves == 0 || u64::from(wavesize) * unit < need {
            return hw(format!(
                "COMPUTE_TMPRING_SIZE {tmpring:#x} gives {} scratch bytes per wave ({waves} waves) but kernel {name} needs {need}",
                u64::from(wavesize) * unit
            ));
        }
        check_scratch_region(
            env,
            tmpring,
            scratch_base,
            waves,
            u64::from(wavesize) * unit,
        )?;
    }
    Ok(())
}

/// Runs the stand-in once per workgroup of `groups`, each with `lds` zeroed bytes of LDS.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_host_workgroups(
    k: &RegisteredKernel,
    mem: &dyn KernelMem,
    kernarg: &[u8],
    dispatch: Option<&DispatchPacket>,
    groups: [u32; 3],
    local: [u32; 3],
    lds: u32,
    lds_buf: &mut Vec<u8>,
) -> Result<Exec, Cause> {
    let name = &k.name;
    let total = groups
        .iter()
        .try_fold(1u64, |acc, &g| acc.checked_mul(u64::from(g)))
        .unwrap_or(u64::MAX);
    if total > MAX_WORKGROUPS {
        return hw(format!(
            "dispatch of {groups:?} = {total} workgroups exceeds the simulator's limit of {MAX_WORKGROUPS}"
        ));
    }
    // CAST: lds <= 64 KiB.
    let lds_len = lds as usize;
    for z in 0..groups[2] {
        for y in 0..groups[1] {
            for x in 0..groups[0] {
                lds_buf.clear();
                lds_buf.resize(lds_len, 0);
                let mut ctx = KernelCtx {
                    mem,
                    kernarg,
                    workgroup_id: [x, y, z],
                    local_size: local,
                    num_workgroups: groups,
                    dispatch,
                    lds: lds_buf,
                };
                match k.kernel.run(&mut ctx) {
                    Ok(()) => {}
                    Err(KernelError::Vm(v)) => return Err(Cause::Vm(v)),
                    Err(e) => {
                        return hw(format!("kernel {name} workgroup [{x}, {y}, {z}]: {e}"));
                    }
                }
            }
        }
    }
    Ok(Exec::Done)
}

/// Runs the registered host stand-in (opt-in), its stores going to `mem`.
pub(super) fn host(
    regs: &Regs,
    lds_buf: &mut Vec<u8>,
    desc: &QueueDesc,
    env: &Env<'_>,
    d: &DispatchDirect,
    mem: &dyn KernelMem,
) -> Result<Exec, Cause> {
    let r = &desc.arch.regs;
    let sh = |off: u32| regs.sh(off);
    if d.initiator.get(DispatchInitiator::COMPUTE_SHADER_EN) == 0 {
        return hw("DISPATCH_DIRECT with COMPUTE_SHADER_EN clear".into());
    }
    let k = registered_kernel(regs, desc, env)?;
    let name = &k.name;
    let kd = &k.descriptor;
    let (rsrc1, rsrc2) = (sh(r.pgm_rsrc1), sh(r.pgm_rsrc1 + 1));
    if rsrc1 != kd.compute_pgm_rsrc1 {
        return hw(format!(
            "COMPUTE_PGM_RSRC1 {rsrc1:#x} differs from kernel {name}'s descriptor ({:#x})",
            kd.compute_pgm_rsrc1
        ));
    }
    let lds_mask = PgmRsrc2::GRANULATED_LDS_SIZE.mask64() << PgmRsrc2::GRANULATED_LDS_SIZE.lo;
    // CAST: the mask covers bits 15..=23 of a u32.
    let lds_mask = lds_mask as u32;
    if rsrc2 & !lds_mask != kd.compute_pgm_rsrc2 & !lds_mask {
        return hw(format!(
            "COMPUTE_PGM_RSRC2 {rsrc2:#x} differs from kernel {name}'s descriptor ({:#x}) outside the LDS size",
            kd.compute_pgm_rsrc2
        ));
    }
    let props = kd.properties();
    let need = props.user_sgpr_count();
    let have = PgmRsrc2(rsrc2).get(PgmRsrc2::USER_SGPR_COUNT);
    if have < need || have > 16 {
        return hw(format!(
            "RSRC2.USER_SGPR_COUNT {have} but kernel {name}'s kernel_code_properties need {need} user SGPRs (at most 16)"
        ));
    }
    // User SGPRs in allocation order.
    let on = |f| props.get(f) != 0;
    let mut at = 0u32;
    let mut take = |f, n: u32| {
        on(f).then(|| {
            at += n;
            at - n
        })
    };
    let psb_at = take(KernelCodeProperties::ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER, 4);
    let dispatch_at = take(KernelCodeProperties::ENABLE_SGPR_DISPATCH_PTR, 2);
    take(KernelCodeProperties::ENABLE_SGPR_QUEUE_PTR, 2);
    let kernarg_at = take(KernelCodeProperties::ENABLE_SGPR_KERNARG_SEGMENT_PTR, 2);
    take(KernelCodeProperties::ENABLE_SGPR_DISPATCH_ID, 2);
    let fsi_at = take(KernelCodeProperties::ENABLE_SGPR_FLAT_SCRATCH_INIT, 2);
    let user = |i: u32| join64(sh(r.user_data_0 + i), sh(r.user_data_0 + i + 1));
    // The queue's scratch as the runtime set it up for this dispatch.
    let scratch_base = join64(sh(r.pgm_lo + 4), sh(r.pgm_lo + 5)) << 8;
    let wave32 = on(KernelCodeProperties::ENABLE_WAVEFRONT_SIZE32);
    if let Some(i) = psb_at {
        let words = [0, 1, 2, 3].map(|k| sh(r.user_data_0 + i + k));
        check_private_segment_buffer(desc, name, i, words, scratch_base, wave32, kd)?;
    }
    if let Some(i) = fsi_at {
        let v = user(i);
        if v != scratch_base {
            return hw(format!(
                "USER_DATA_{i}/{} (flat scratch init of kernel {name}) is {v:#x}, not the queue's scratch base {scratch_base:#x} (COMPUTE_DISPATCH_SCRATCH_BASE)",
                i + 1
            ));
        }
    }
    // Kernarg segment.
    let ka_size = usize::try_from(kd.kernarg_size).unwrap_or(usize::MAX);
    let kernarg = match kernarg_at {
        Some(i) => {
            let p = user(i);
            if p == 0 {
                return hw(format!(
                    "USER_DATA_{i}/{} (kernarg pointer of kernel {name}) is 0",
                    i + 1
                ));
            }
            let mut v = vec![0u8; ka_size];
            env.rec.kernarg(p, ka_size);
            env.read(p, &mut v, Access::Read)?;
            v
        }
        None if ka_size > 0 => {
            return hw(format!(
                "kernel {name} has {ka_size} bytes of kernargs but its descriptor does not enable the kernarg pointer"
            ));
        }
        None => Vec::new(),
    };
    let dispatch = match dispatch_at {
        Some(i) => {
            let p = user(i);
            let mut b = [0u8; DispatchPacket::SIZE];
            env.read(p, &mut b, Access::Read)?;
            Some(DispatchPacket::from_bytes(&b))
        }
        None => None,
    };
    // LDS.
    let granules = PgmRsrc2(rsrc2).get(PgmRsrc2::GRANULATED_LDS_SIZE);
    let lds = granules * LDS_GRANULE_BYTES;
    if lds < kd.group_segment_fixed_size || lds > LDS_LIMIT {
        return hw(format!(
            "RSRC2 LDS size {granules} granules ({lds} bytes) for kernel {name}, which needs {} bytes (limit {LDS_LIMIT})",
            kd.group_segment_fixed_size
        ));
    }
    // Workgroup shape.
    let nt = |i: u32| sh(r.start_x + 3 + i) & 0xffff;
    let local = [nt(0), nt(1), nt(2)];
    let items: u64 = local.iter().map(|&l| u64::from(l)).product();
    if items == 0 || items > MAX_WORKGROUP_SIZE {
        return hw(format!(
            "COMPUTE_NUM_THREAD {local:?}: a workgroup must have 1..={MAX_WORKGROUP_SIZE} work-items"
        ));
    }
    let start = [sh(r.start_x), sh(r.start_x + 1), sh(r.start_x + 2)];
    if start != [0; 3] {
        return hw(format!(
            "COMPUTE_START {start:?} is not supported (must be 0)"
        ));
    }
    if desc.arch.has_cs_w32_en {
        let w32 = d.initiator.get(DispatchInitiator::CS_W32_EN) != 0;
        let kw32 = on(KernelCodeProperties::ENABLE_WAVEFRONT_SIZE32);
        if w32 != kw32 {
            return hw(format!(
                "kernel {name} is wave{} but DISPATCH_INITIATOR.CS_W32_EN is {}",
                if kw32 { 32 } else { 64 },
                u32::from(w32)
            ));
        }
    }
    if let Some(i) = kernarg_at {
        check_kernarg_is_no_packet(&kernarg, user(i), i, name, d.dim, local)?;
    }
    check_host_scratch(regs, desc, env, k, scratch_base)?;
    run_host_workgroups(
        k,
        mem,
        &kernarg,
        dispatch.as_ref(),
        d.dim,
        local,
        lds,
        lds_buf,
    )
}
