//! Generated entry points of the typed families (see codegen/table.rs). Do not edit the
//! files of this folder; `cargo xtask gen` rewrites them from the table (rustfmt leaves them alone).

#[rustfmt::skip]
pub mod amo;
#[rustfmt::skip]
pub mod coll;
#[rustfmt::skip]
pub mod consts;
#[rustfmt::skip]
pub mod p2p_sync;
#[rustfmt::skip]
pub mod rma;
