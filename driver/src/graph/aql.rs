//! Graphs on an AQL compute queue (a multi-XCC GPU's, or one with AQL forced): each recorded
//! launch becomes a 64-byte HSA kernel dispatch packet instead of a PM4 DISPATCH_DIRECT,
//! the way ROCm replays a graph (CLR's hipGraph on ROCR submits every kernel node as an AQL
//! kernel dispatch packet, its arguments in the graph's own kernarg pool,
//! `hip_graph_internals.hpp` `GraphKernelArgManager`).
//!
//! Why: on an AQL queue every XCC's command processor runs each PM4 indirect buffer, so a PM4
//! DISPATCH_DIRECT in one would be dispatched once per XCC (KFD's AQL MQDs share a grid out by
//! `COMPUTE_TG_CHUNK_SIZE`, `kfd_mqd_manager_v9.c` `init_mqd_v9_4_3`), while a kernel
//! dispatch packet's grid is shared out once across the XCCs.
//!
//! Recording ([`super::GraphBuilder::encode_aql`]) keeps everything else of the PM4 encoding: the
//! waits, signals, memory barriers and internal signals of the compute queue stay PM4, cut
//! into the bodies between dispatches, each run through an `AMD_AQL_FORMAT_PM4_IB` packet as
//! a single AQL launch's prologue is (ROCR `AqlQueue::ExecutePM4`); copies stay on the SDMA
//! queue. The dispatch packets (kernel descriptor, segment sizes, the kernarg address in the
//! graph's kernargs region, the launch's grid and work-group sizes) follow the PM4 list in
//! one host image ([`AqlLayout::image`]), the patch table's [`TARGET_PM4`]: a dims variable
//! patches the packets' work-group and grid fields there
//! ([`hcq_core::patch::PatchTable::bind_packet_dims`]), and a replay copies the image's
//! packets and bodies into the ring.
//!
//! Every dispatch packet carries the barrier bit and system-scope acquire and release fences,
//! ROCm's header for a kernel in an in-order stream (CLR `rocvirtual.cpp`
//! `dispatchPacketHeader_ = kernelDispatchHBits | barrierHBits | systemScopeHBits` with
//! `AMD_OPT_FLUSH=0`): the barrier bit makes it start only after every earlier packet
//! completed (HSA System Architecture 1.2 §2.8-2.9: without it a dispatch may overlap the one
//! before, whose writes it may read), the acquire fence invalidates the caches it reads
//! through, the release fence writes its results back before the next packet (an SDMA copy or
//! the host) reads them. The PM4 bodies' packets get the same header.

use hcq_core::addr::GpuVa;
use hcq_core::aql::{self, Header, PACKET_DWORDS};
use hcq_core::cmd::PatchTarget;
use hcq_core::codeobj::LDS_GRANULE_BYTES;
use hcq_core::hsa::{DispatchPacket, PgmRsrc2};
use hcq_core::patch::{DimLimits, Dims, VarId};
use hcq_core::pm4::Program;

use super::{DimsArg, GraphError, GraphTable, TARGET_PM4, invalid};
pub use crate::device::KernelObject;

/// One step of an AQL graph's compute part, in ring order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AqlItem {
    /// The PM4 dwords `from..to` of the image (a body between dispatches), run through an
    /// `AMD_AQL_FORMAT_PM4_IB` packet.
    Pm4 {
        /// First dword.
        from: u32,
        /// One past the last dword.
        to: u32,
    },
    /// The kernel dispatch packet at dword `at` of the image (16 dwords, header included).
    Dispatch {
        /// First dword.
        at: u32,
    },
}

/// A graph encoded for an AQL queue: its compute part as PM4 bodies and dispatch packets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AqlLayout {
    /// The compute part in ring order.
    pub items: Vec<AqlItem>,
    /// The PM4 list's dwords, then each dispatch packet (16 dwords): the patch table's
    /// [`TARGET_PM4`] (a replay patches it in place, in host memory, and copies from it).
    pub image: Vec<u32>,
    /// Dwords of the image that are the PM4 list (the packets follow).
    pub pm4_dwords: u32,
}

impl AqlLayout {
    /// The dispatch packets' first dwords set from their (patched) sizes: the header as
    /// recorded, `setup` the dimensions (the highest axis whose grid or work-group size is
    /// above 1, as a single launch counts them: OpenCL's `get_work_dim` reads it).
    pub fn set_dimensions(&mut self) {
        for it in &self.items {
            if let AqlItem::Dispatch { at } = *it {
                // CAST: u32 -> usize widens.
                let at = at as usize;
                if let Some(w) = self.image.get_mut(at..at + PACKET_DWORDS) {
                    let dims = packet_dims(w);
                    w[0] = (w[0] & 0xffff) | u32::from(dims) << 16;
                }
            }
        }
    }
}

/// Dimensions of a dispatch packet's words `w`: the highest axis whose grid or work-group
/// size is above 1.
fn packet_dims(w: &[u32]) -> u16 {
    let wg = |k: usize| match k {
        0 => w[1] & 0xffff,
        1 => w[1] >> 16,
        _ => w[2] & 0xffff,
    };
    let above = |k: usize| w[3 + k] > 1 || wg(k) > 1;
    if above(2) {
        3
    } else if above(1) {
        2
    } else {
        1
    }
}

/// The header of a graph's dispatch packets (see the module's documentation).
fn dispatch_header() -> Header {
    if seeded!(AqlGraphDispatchWithoutBarrier) {
        return Header {
            ty: aql::TYPE_KERNEL_DISPATCH,
            barrier: false,
            acquire: aql::FenceScope::None,
            release: aql::FenceScope::None,
        };
    }
    Header::ordered(aql::TYPE_KERNEL_DISPATCH)
}

/// What [`super::GraphBuilder::encode_aql`] collects while it encodes.
pub(super) struct AqlRec<'k> {
    kernel: &'k dyn Fn(GpuVa) -> Option<KernelObject>,
    items: Vec<AqlItem>,
    packets: Vec<[u32; PACKET_DWORDS]>,
    /// Where the PM4 body being recorded starts.
    from: usize,
    /// Dims variables to bind to a packet once the image is laid out: (variable, packet
    /// index, the kernel's limits).
    binds: Vec<(VarId, usize, DimLimits)>,
}

fn dword(i: usize) -> Result<u32, GraphError> {
    u32::try_from(i).map_err(|_| invalid(format!("AQL graph image dword {i} beyond 32 bits")))
}

impl<'k> AqlRec<'k> {
    pub(super) fn new(kernel: &'k dyn Fn(GpuVa) -> Option<KernelObject>) -> Self {
        Self {
            kernel,
            items: Vec::new(),
            packets: Vec::new(),
            from: 0,
            binds: Vec::new(),
        }
    }

    /// Ends the PM4 body recorded so far (the PM4 list is `pm4_len` dwords now).
    fn cut(&mut self, pm4_len: usize) -> Result<(), GraphError> {
        if pm4_len > self.from {
            self.items.push(AqlItem::Pm4 {
                from: dword(self.from)?,
                to: dword(pm4_len)?,
            });
        }
        self.from = pm4_len;
        Ok(())
    }

    /// Records launch `index` of `prog` with dims `d` (`dims` as recorded) and its arguments
    /// at `kernargs`, after the PM4 list's first `pm4_len` dwords.
    #[expect(clippy::too_many_arguments, reason = "the launch's parts")]
    pub(super) fn launch(
        &mut self,
        pm4_len: usize,
        index: usize,
        prog: &Program,
        limits: &DimLimits,
        dims: &DimsArg,
        d: &Dims,
        kernargs: GpuVa,
    ) -> Result<(), GraphError> {
        let k = (self.kernel)(prog.prog_addr).ok_or_else(|| {
            invalid(format!(
                "operation {index} (launch of the kernel at {}): no kernel loaded on this device \
                 has its entry there; a graph on an AQL queue dispatches a kernel through its \
                 kernel descriptor, which hcq knows for the kernels `Program::load` loaded on \
                 the recording device",
                prog.prog_addr
            ))
        })?;
        self.cut(pm4_len)?;
        // RSRC2.LDS_SIZE covers the launch's static and dynamic LDS (`pm4_program_with_lds`):
        // the packet asks for as much (the CP sizes the allocation from group_segment_size).
        let granules = PgmRsrc2(prog.rsrc2).get(PgmRsrc2::GRANULATED_LDS_SIZE);
        let lds = granules.saturating_mul(LDS_GRANULE_BYTES);
        let group = if lds > k.group_segment_size.next_multiple_of(LDS_GRANULE_BYTES) {
            lds
        } else {
            k.group_segment_size
        };
        let local16 = |i: usize| {
            u16::try_from(d.local[i]).map_err(|_| {
                invalid(format!(
                    "operation {index}: local[{i}] = {} does not fit a dispatch packet's 16-bit \
                     work-group size",
                    d.local[i]
                ))
            })
        };
        let grid = |i: usize| {
            d.global[i].checked_mul(d.local[i]).ok_or_else(|| {
                invalid(format!(
                    "operation {index}: grid[{i}] = {} x {} work-items does not fit 32 bits",
                    d.global[i], d.local[i]
                ))
            })
        };
        let pkt = DispatchPacket {
            workgroup_size_x: local16(0)?,
            workgroup_size_y: local16(1)?,
            workgroup_size_z: local16(2)?,
            grid_size_x: grid(0)?,
            grid_size_y: grid(1)?,
            grid_size_z: grid(2)?,
            private_segment_size: k.private_segment_size,
            group_segment_size: group,
            kernel_object: k.kernel_object,
            kernarg_address: kernargs.get(),
            ..DispatchPacket::default()
        };
        let mut words = aql::kernel_dispatch(dispatch_header(), 1, &pkt)
            .map_err(|e| invalid(format!("operation {index}: dispatch packet: {e}")))?;
        words[0] = (words[0] & 0xffff) | u32::from(packet_dims(&words)) << 16;
        let i = self.packets.len();
        self.packets.push(words);
        // The packet's dword in the image is known once the PM4 list is complete.
        self.items.push(AqlItem::Dispatch { at: dword(i)? });
        if let DimsArg::Var(var) = dims {
            self.binds.push((*var, i, *limits));
        }
        Ok(())
    }

    /// Lays the image out (the PM4 list `pm4`, then the packets) and binds the dims
    /// variables to their packets in `table`.
    pub(super) fn finish(
        mut self,
        pm4: &[u32],
        table: &mut GraphTable,
    ) -> Result<AqlLayout, GraphError> {
        self.cut(pm4.len())?;
        let base = pm4.len();
        let mut image = Vec::with_capacity(base + self.packets.len() * PACKET_DWORDS);
        image.extend_from_slice(pm4);
        for p in &self.packets {
            image.extend_from_slice(p);
        }
        let at = |i: usize| dword(base + i * PACKET_DWORDS);
        for it in &mut self.items {
            if let AqlItem::Dispatch { at: a } = it {
                // CAST: u32 -> usize widens.
                *a = at(*a as usize)?;
            }
        }
        for (var, i, limits) in self.binds {
            table.bind_packet_dims(var, TARGET_PM4, at(i)?, limits)?;
        }
        Ok(AqlLayout {
            items: self.items,
            image,
            pm4_dwords: dword(base)?,
        })
    }
}

/// A patch target of a replay: the AQL image in host memory or a bound list in GPU memory.
pub(super) enum Target<'a> {
    /// Host memory (the AQL image).
    Host(&'a mut [u32]),
    /// GPU memory through its CPU mapping.
    Gpu(&'a [core::sync::atomic::AtomicU32]),
}

impl PatchTarget for Target<'_> {
    fn dword_len(&self) -> usize {
        match self {
            Target::Host(m) => m.len(),
            Target::Gpu(m) => m.len(),
        }
    }

    fn load(&self, i: usize) -> Option<u32> {
        match self {
            Target::Host(m) => m.load(i),
            Target::Gpu(m) => m.load(i),
        }
    }

    fn store(&mut self, i: usize, v: u32) -> Option<()> {
        match self {
            Target::Host(m) => m.store(i, v),
            Target::Gpu(m) => m.store(i, v),
        }
    }

    fn store_all(&mut self, at: usize, vals: &[u32]) -> Option<()> {
        match self {
            Target::Host(m) => m.store_all(at, vals),
            Target::Gpu(m) => m.store_all(at, vals),
        }
    }
}
