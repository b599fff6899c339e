//! Backends beyond IPC: the RO backend (reverse offload through a host proxy over MPI), and the
//! GDA backend's pieces (not routed into the operations yet; docs/gda.md).

pub mod gda;

#[cfg(feature = "mpi")]
pub mod mpi;
#[cfg(feature = "mpi")]
pub mod ro;
