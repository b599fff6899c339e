//! rdma-core, loaded at run time: `libibverbs.so.1` (devices, protection domain, memory
//! registration, port and GID queries) and `libmlx5.so.1` (direct verbs: DEVX objects, UARs,
//! umem). Nothing links against them, so the library loads and runs where they are absent, as
//! with CUDA, HIP and MPI.
//!
//! Why not the `ibverbs` crate: its build script (ibverbs-sys) compiles a vendored copy of
//! rdma-core with cmake and links it statically, which would make librocshmem carry its own
//! libibverbs (a second copy beside the system's, with its own provider plugins and ABI
//! version), need cmake and libnl headers at build time, and still not expose the mlx5 direct
//! verbs (DEVX) GDA needs. The few structures used are declared here; ctests/gda/layout_test
//! checks every field offset below against the installed `<infiniband/verbs.h>` and
//! `<infiniband/mlx5dv.h>` ([`LAYOUT`]).

use crate::dl::{fn_table, symbol};
use libloading::Library;
use std::ffi::{c_char, c_int, c_uint, c_void};
use std::mem::offset_of;

pub const IBVERBS: &str = "libibverbs.so.1";
pub const MLX5: &str = "libmlx5.so.1";

pub const IBV_ACCESS_LOCAL_WRITE: c_int = 1;
pub const IBV_ACCESS_REMOTE_WRITE: c_int = 1 << 1;
pub const IBV_ACCESS_REMOTE_READ: c_int = 1 << 2;
pub const IBV_ACCESS_REMOTE_ATOMIC: c_int = 1 << 3;
pub const IBV_ACCESS_RELAXED_ORDERING: c_int = 1 << 20;
pub const IBV_PORT_ACTIVE: u32 = 4;
pub const IBV_LINK_LAYER_INFINIBAND: u8 = 1;
pub const IBV_LINK_LAYER_ETHERNET: u8 = 2;
pub const MLX5DV_CONTEXT_FLAGS_DEVX: u32 = 1;
pub const MLX5DV_OBJ_PD: u64 = 1 << 6;
pub const MLX5DV_UMEM_MASK_DMABUF: u64 = 1;
/// UAR allocation types: non-cached (1) and, from rdma-core 45, a dedicated non-cached page (2),
/// which upstream prefers so that queue pairs do not share a doorbell page.
pub const MLX5DV_UAR_ALLOC_TYPE_NC: u32 = 1;
pub const MLX5DV_UAR_ALLOC_TYPE_NC_DEDICATED: u32 = 2;

/// Opaque rdma-core objects.
pub type IbvDevice = c_void;
pub type IbvContext = c_void;
pub type IbvPd = c_void;
pub type DevxObj = c_void;

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct IbvMr {
    pub context: *mut IbvContext,
    pub pd: *mut IbvPd,
    pub addr: *mut c_void,
    pub length: usize,
    pub handle: u32,
    pub lkey: u32,
    pub rkey: u32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct IbvPortAttr {
    pub state: u32,
    pub max_mtu: u32,
    pub active_mtu: u32,
    pub gid_tbl_len: c_int,
    pub port_cap_flags: u32,
    pub max_msg_sz: u32,
    pub bad_pkey_cntr: u32,
    pub qkey_viol_cntr: u32,
    pub pkey_tbl_len: u16,
    pub lid: u16,
    pub sm_lid: u16,
    pub lmc: u8,
    pub max_vl_num: u8,
    pub sm_sl: u8,
    pub subnet_timeout: u8,
    pub init_type_reply: u8,
    pub active_width: u8,
    pub active_speed: u8,
    pub phys_state: u8,
    pub link_layer: u8,
    pub flags: u8,
    pub port_cap_flags2: u16,
    /// Room for fields later rdma-core releases append (the call is given this size).
    pub reserved: [u8; 16],
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Mlx5dvContextAttr {
    pub flags: u32,
    pub comp_mask: u64,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Mlx5dvPd {
    pub pdn: u32,
    pub comp_mask: u64,
}

/// `struct mlx5dv_obj`: seven (in, out) pointer pairs; only `pd` is used.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Mlx5dvObj {
    pub others: [[*mut c_void; 2]; 6],
    pub pd_in: *mut IbvPd,
    pub pd_out: *mut Mlx5dvPd,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Mlx5dvDevxUar {
    pub reg_addr: *mut c_void,
    pub base_addr: *mut c_void,
    pub page_id: u32,
    pub mmap_off: i64,
    pub comp_mask: u64,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Mlx5dvDevxUmem {
    pub umem_id: u32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Mlx5dvDevxUmemIn {
    pub addr: *mut c_void,
    pub size: usize,
    pub access: u32,
    pub pgsz_bitmap: u64,
    pub comp_mask: u64,
    pub dmabuf_fd: c_int,
}

macro_rules! row {
    ($t:ty, $c:literal, $f:ident) => {
        (concat!($c, ".", stringify!($f)), offset_of!($t, $f), std::mem::size_of::<$t>())
    };
}

/// (C "struct.field", offset here, size of the structure here), for the layout test.
pub static LAYOUT: &[(&str, usize, usize)] = &[
    row!(IbvMr, "ibv_mr", context),
    row!(IbvMr, "ibv_mr", addr),
    row!(IbvMr, "ibv_mr", length),
    row!(IbvMr, "ibv_mr", lkey),
    row!(IbvMr, "ibv_mr", rkey),
    row!(IbvPortAttr, "ibv_port_attr", state),
    row!(IbvPortAttr, "ibv_port_attr", active_mtu),
    row!(IbvPortAttr, "ibv_port_attr", gid_tbl_len),
    row!(IbvPortAttr, "ibv_port_attr", max_msg_sz),
    row!(IbvPortAttr, "ibv_port_attr", lid),
    row!(IbvPortAttr, "ibv_port_attr", sm_sl),
    row!(IbvPortAttr, "ibv_port_attr", link_layer),
    row!(IbvPortAttr, "ibv_port_attr", port_cap_flags2),
    row!(Mlx5dvContextAttr, "mlx5dv_context_attr", flags),
    row!(Mlx5dvContextAttr, "mlx5dv_context_attr", comp_mask),
    row!(Mlx5dvPd, "mlx5dv_pd", pdn),
    row!(Mlx5dvPd, "mlx5dv_pd", comp_mask),
    ("mlx5dv_obj.pd.in", offset_of!(Mlx5dvObj, pd_in), std::mem::size_of::<Mlx5dvObj>()),
    ("mlx5dv_obj.pd.out", offset_of!(Mlx5dvObj, pd_out), std::mem::size_of::<Mlx5dvObj>()),
    row!(Mlx5dvDevxUar, "mlx5dv_devx_uar", reg_addr),
    row!(Mlx5dvDevxUar, "mlx5dv_devx_uar", base_addr),
    row!(Mlx5dvDevxUar, "mlx5dv_devx_uar", page_id),
    row!(Mlx5dvDevxUar, "mlx5dv_devx_uar", mmap_off),
    row!(Mlx5dvDevxUar, "mlx5dv_devx_uar", comp_mask),
    row!(Mlx5dvDevxUmem, "mlx5dv_devx_umem", umem_id),
    row!(Mlx5dvDevxUmemIn, "mlx5dv_devx_umem_in", addr),
    row!(Mlx5dvDevxUmemIn, "mlx5dv_devx_umem_in", size),
    row!(Mlx5dvDevxUmemIn, "mlx5dv_devx_umem_in", access),
    row!(Mlx5dvDevxUmemIn, "mlx5dv_devx_umem_in", pgsz_bitmap),
    row!(Mlx5dvDevxUmemIn, "mlx5dv_devx_umem_in", comp_mask),
    row!(Mlx5dvDevxUmemIn, "mlx5dv_devx_umem_in", dmabuf_fd),
];

fn_table!(
    /// The functions of libibverbs (`ibv_*`) and libmlx5 (`mlx5dv_*`) the GDA setup calls.
    pub struct VerbsFns {
        pub get_device_list = "ibv_get_device_list": fn(*mut c_int) -> *mut *mut IbvDevice;
        pub free_device_list = "ibv_free_device_list": fn(*mut *mut IbvDevice);
        pub get_device_name = "ibv_get_device_name": fn(*mut IbvDevice) -> *const c_char;
        pub close_device = "ibv_close_device": fn(*mut IbvContext) -> c_int;
        pub alloc_pd = "ibv_alloc_pd": fn(*mut IbvContext) -> *mut IbvPd;
        pub dealloc_pd = "ibv_dealloc_pd": fn(*mut IbvPd) -> c_int;
        pub reg_mr = "ibv_reg_mr": fn(*mut IbvPd, *mut c_void, usize, c_int) -> *mut IbvMr;
        pub reg_dmabuf_mr = "ibv_reg_dmabuf_mr": fn(*mut IbvPd, u64, usize, u64, c_int, c_int) -> *mut IbvMr;
        pub dereg_mr = "ibv_dereg_mr": fn(*mut IbvMr) -> c_int;
        pub query_port = "ibv_query_port": fn(*mut IbvContext, u8, *mut IbvPortAttr) -> c_int;
        pub query_gid = "ibv_query_gid": fn(*mut IbvContext, u8, c_int, *mut [u8; 16]) -> c_int;
        pub dv_open_device = "mlx5dv_open_device": fn(*mut IbvDevice, *mut Mlx5dvContextAttr) -> *mut IbvContext;
        pub dv_init_obj = "mlx5dv_init_obj": fn(*mut Mlx5dvObj, u64) -> c_int;
        pub devx_obj_create = "mlx5dv_devx_obj_create":
            fn(*mut IbvContext, *const c_void, usize, *mut c_void, usize) -> *mut DevxObj;
        pub devx_obj_modify = "mlx5dv_devx_obj_modify":
            fn(*mut DevxObj, *const c_void, usize, *mut c_void, usize) -> c_int;
        pub devx_obj_destroy = "mlx5dv_devx_obj_destroy": fn(*mut DevxObj) -> c_int;
        pub devx_alloc_uar = "mlx5dv_devx_alloc_uar": fn(*mut IbvContext, u32) -> *mut Mlx5dvDevxUar;
        pub devx_free_uar = "mlx5dv_devx_free_uar": fn(*mut Mlx5dvDevxUar);
        pub devx_umem_reg_ex = "mlx5dv_devx_umem_reg_ex":
            fn(*mut IbvContext, *mut Mlx5dvDevxUmemIn) -> *mut Mlx5dvDevxUmem;
        pub devx_umem_dereg = "mlx5dv_devx_umem_dereg": fn(*mut Mlx5dvDevxUmem) -> c_int;
        pub devx_query_eqn = "mlx5dv_devx_query_eqn": fn(*mut IbvContext, c_uint, *mut u32) -> c_int;
    }
);

/// rdma-core loaded: its functions ([`VerbsFns`], through `Deref`) and the libraries they live in.
pub struct Verbs {
    fns: VerbsFns,
    _ibverbs: Library,
    _mlx5: Library,
}

impl std::ops::Deref for Verbs {
    type Target = VerbsFns;
    fn deref(&self) -> &VerbsFns {
        &self.fns
    }
}

impl Verbs {
    /// Loads both libraries; the error is one sentence saying what is missing.
    pub fn load() -> Result<Verbs, String> {
        // SAFETY: loading rdma-core runs its constructors, which only register providers.
        let ib = unsafe { Library::new(IBVERBS) }.map_err(|_| {
            format!(
                "{IBVERBS} is not installed (rdma-core; Debian/Ubuntu: apt-get install libibverbs1 ibverbs-providers)"
            )
        })?;
        // SAFETY: as above.
        let m = unsafe { Library::new(MLX5) }
            .map_err(|_| format!("{MLX5} is not installed (the mlx5 provider of rdma-core; Debian/Ubuntu: apt-get install ibverbs-providers)"))?;
        let find = |name: &str| {
            let (lib, lib_name) = if name.starts_with("mlx5dv_") { (&m, MLX5) } else { (&ib, IBVERBS) };
            symbol(lib, name).map_err(|e| format!("{lib_name} has no {name} ({e}); rdma-core 34 or newer is needed"))
        };
        // SAFETY: each type above is the symbol's C signature in rdma-core's headers.
        let fns = unsafe { VerbsFns::load_with(find) }?;
        Ok(Verbs { fns, _ibverbs: ib, _mlx5: m })
    }

    /// The names of the RDMA devices libibverbs sees.
    pub fn device_names(&self) -> Vec<String> {
        let mut n: c_int = 0;
        // SAFETY: rdma-core's device list API: the list is freed below, names copied first.
        unsafe {
            let list = (self.get_device_list)(&mut n);
            if list.is_null() {
                return Vec::new();
            }
            let names = (0..n.max(0) as usize)
                .map(|i| {
                    let p = (self.get_device_name)(*list.add(i));
                    if p.is_null() { String::new() } else { std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned() }
                })
                .collect();
            (self.free_device_list)(list);
            names
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where rdma-core is installed (CI installs libibverbs-dev), every symbol resolves and the
    /// device list can be read (empty without an RDMA NIC); elsewhere the error names the library.
    #[test]
    fn loads_or_says_what_is_missing() {
        match Verbs::load() {
            Ok(v) => {
                let names = v.device_names();
                assert!(names.iter().all(|n| !n.is_empty()));
            }
            Err(e) => assert!(e.contains(IBVERBS) || e.contains(MLX5), "{e}"),
        }
    }
}
