//! Backends beyond IPC: the RO backend (reverse offload through a host proxy over MPI).

#[cfg(feature = "mpi")]
pub mod mpi;
#[cfg(feature = "mpi")]
pub mod ro;
