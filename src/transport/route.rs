//! Which transport carries what: chosen per peer at init ([`Transports`]), handed to the
//! operations as a [`Via`]. A `Via` is itself a [`Transport`] whose methods are one `match`
//! over the transports of this build (static calls, no indirect call on the hot path).

#[cfg(feature = "test-doubles")]
use super::gda::host::Gda;
use super::ipc::Ipc;
#[cfg(feature = "mpi")]
use super::ro::Ro;
use super::{AmoOp, Group, Reduce, ReduceOp, Transport};
use crate::error::Result;
use crate::heap::SymmetricHeap;
use crate::pe_set::PeSet;
use crate::scalar::Scalar;
#[cfg(any(feature = "mpi", feature = "test-doubles"))]
use std::sync::Arc;

/// A transport of this build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Ipc,
    #[cfg(feature = "mpi")]
    Ro,
    #[cfg(feature = "test-doubles")]
    Gda,
}

/// The transport one operation goes through.
#[derive(Clone, Copy)]
pub enum Via<'a> {
    Ipc(&'a Ipc),
    #[cfg(feature = "mpi")]
    Ro(&'a Ro),
    #[cfg(feature = "test-doubles")]
    Gda(&'a Gda),
}

/// Every transport of this PE and the routes between them.
pub struct Transports {
    pub ipc: Ipc,
    #[cfg(feature = "mpi")]
    ro: Option<Arc<Ro>>,
    #[cfg(feature = "test-doubles")]
    gda: Option<Arc<Gda>>,
    /// Per peer: the transport of puts and gets.
    rma: Box<[Kind]>,
    /// The transport of every atomic: with RO, every atomic goes through MPI, mapped peer or
    /// not (MPI atomics are atomic only among themselves).
    amo: Kind,
    /// Some peer is reached through another transport than IPC.
    mixed: bool,
}

impl Transports {
    /// IPC to every PE (`slots` synchronisation slots).
    pub fn ipc(slots: usize, n_pes: usize) -> Transports {
        Transports {
            ipc: Ipc::new(slots, n_pes),
            #[cfg(feature = "mpi")]
            ro: None,
            #[cfg(feature = "test-doubles")]
            gda: None,
            rma: vec![Kind::Ipc; n_pes].into_boxed_slice(),
            amo: Kind::Ipc,
            mixed: false,
        }
    }

    /// Routes the peers this PE does not map, and every atomic, through the RO backend.
    #[cfg(feature = "mpi")]
    pub fn use_ro(&mut self, ro: Arc<Ro>) {
        for (pe, k) in self.rma.iter_mut().enumerate() {
            *k = if ro.is_mapped(pe) { Kind::Ipc } else { Kind::Ro };
        }
        self.amo = Kind::Ro;
        self.mixed = self.rma.iter().any(|k| *k != Kind::Ipc);
        self.ro = Some(ro);
    }

    /// Routes the peers this process does not map (`mapped[pe]` false) through the GDA
    /// transport, and then every atomic too: NIC atomics are atomic only among themselves (as
    /// RO routes every atomic through MPI).
    #[cfg(feature = "test-doubles")]
    pub fn use_gda(&mut self, gda: Arc<Gda>, mapped: &[bool]) {
        for (k, m) in self.rma.iter_mut().zip(mapped) {
            *k = if *m { Kind::Ipc } else { Kind::Gda };
        }
        self.mixed = self.rma.iter().any(|k| *k != Kind::Ipc);
        if self.mixed {
            self.amo = Kind::Gda;
        }
        self.gda = Some(gda);
    }

    /// The GDA transport, when it runs (the device table, shutdown).
    #[cfg(feature = "test-doubles")]
    pub fn gda(&self) -> Option<&Gda> {
        self.gda.as_deref()
    }

    /// The RO backend, when it runs (its set-up and shutdown).
    #[cfg(feature = "mpi")]
    pub fn ro(&self) -> Option<&Ro> {
        self.ro.as_deref()
    }

    #[inline]
    fn via(&self, k: Kind) -> Via<'_> {
        match k {
            Kind::Ipc => Via::Ipc(&self.ipc),
            #[cfg(feature = "mpi")]
            // The kind is Ro only once `use_ro` set it.
            Kind::Ro => self.ro.as_deref().map_or(Via::Ipc(&self.ipc), Via::Ro),
            // The kind is Gda only once `use_gda` set it.
            #[cfg(feature = "test-doubles")]
            Kind::Gda => self.gda.as_deref().map_or(Via::Ipc(&self.ipc), Via::Gda),
        }
    }

    /// The transport of puts and gets to PE `pe` (a valid PE number).
    #[inline]
    pub fn rma(&self, pe: usize) -> Via<'_> {
        self.via(self.rma[pe])
    }

    /// The transport of atomics.
    #[inline]
    pub fn amo(&self) -> Via<'_> {
        self.via(self.amo)
    }

    /// The transport of puts and gets to PE `pe` (a valid PE number), and of atomics to it:
    /// what the device state's route tables say (runtime/device.rs).
    pub fn kinds(&self, pe: usize) -> (Kind, Kind) {
        (self.rma[pe], self.amo)
    }

    /// The transport of barriers and collectives over `set`: IPC when this PE maps every
    /// member, else the transport of the first member it does not.
    #[inline]
    pub fn set(&self, set: PeSet) -> Via<'_> {
        if !self.mixed {
            return Via::Ipc(&self.ipc);
        }
        let k = (0..set.size).map(|i| self.rma[set.pe(i)]).find(|k| *k != Kind::Ipc);
        self.via(k.unwrap_or(Kind::Ipc))
    }

    /// Members of `set` this PE reaches through another transport than IPC.
    pub fn remote_in(&self, set: PeSet) -> usize {
        (0..set.size).filter(|i| self.rma[set.pe(*i)] != Kind::Ipc).count()
    }

    /// Completes this PE's operations on every transport (`quiet`, `fence`).
    pub fn quiet(&self) {
        self.ipc.quiet();
        #[cfg(feature = "mpi")]
        if let Some(ro) = &self.ro {
            ro.quiet();
        }
        #[cfg(feature = "test-doubles")]
        if let Some(g) = &self.gda {
            g.quiet();
        }
    }

    /// Finalize (collective): the transports release what they hold (RO: its proxy drains and
    /// stops, its window and communicators go).
    pub fn shutdown(&self) {
        #[cfg(feature = "mpi")]
        if let Some(ro) = &self.ro {
            ro.shutdown();
        }
        #[cfg(feature = "test-doubles")]
        if let Some(g) = &self.gda {
            g.shutdown();
        }
    }

    /// Barrier over `set` on slot `slot` (this PE must be a member).
    pub fn barrier(&self, heap: &SymmetricHeap, set: PeSet, slot: usize) -> Result<()> {
        set.member_index(heap.my_pe)?;
        self.set(set).barrier(heap, set, slot)
    }

    /// A team was created in `slot` over `set`; returns how many of its members this PE reaches
    /// through another transport than IPC.
    pub fn team_created(&self, slot: usize, set: PeSet) -> Result<usize> {
        self.set(set).team_created(slot, set)?;
        Ok(self.remote_in(set))
    }

    /// The team of `slot`, over `set`, is being destroyed.
    pub fn team_destroyed(&self, slot: usize, set: PeSet) {
        self.set(set).team_destroyed(slot)
    }
}

/// `via!(v, t => expr)`: `expr` with `t` bound to the transport of `v`, one arm per transport.
macro_rules! via {
    ($v:expr, $t:ident => $e:expr) => {
        match $v {
            Via::Ipc($t) => $e,
            #[cfg(feature = "mpi")]
            Via::Ro($t) => $e,
            #[cfg(feature = "test-doubles")]
            Via::Gda($t) => $e,
        }
    };
}

impl Transport for Via<'_> {
    #[inline]
    unsafe fn put(&self, heap: &SymmetricHeap, off: usize, src: *const u8, len: usize, pe: usize) -> Result<()> {
        // SAFETY: the caller's promise, passed on.
        via!(self, t => unsafe { t.put(heap, off, src, len, pe) })
    }

    #[inline]
    unsafe fn get(&self, heap: &SymmetricHeap, dst: *mut u8, off: usize, len: usize, pe: usize) -> Result<()> {
        // SAFETY: the caller's promise, passed on.
        via!(self, t => unsafe { t.get(heap, dst, off, len, pe) })
    }

    #[inline]
    fn p<T: Scalar>(&self, heap: &SymmetricHeap, off: usize, value: T, pe: usize) -> Result<()> {
        via!(self, t => t.p(heap, off, value, pe))
    }

    #[inline]
    fn g<T: Scalar>(&self, heap: &SymmetricHeap, off: usize, pe: usize) -> Result<T> {
        via!(self, t => t.g(heap, off, pe))
    }

    #[inline]
    fn amo(&self, heap: &SymmetricHeap, op: AmoOp, off: usize, width: usize, v: u64, c: u64, pe: usize) -> Result<u64> {
        via!(self, t => t.amo(heap, op, off, width, v, c, pe))
    }

    fn quiet(&self) {
        via!(self, t => t.quiet())
    }

    fn barrier(&self, heap: &SymmetricHeap, set: PeSet, slot: usize) -> Result<()> {
        via!(self, t => t.barrier(heap, set, slot))
    }

    unsafe fn broadcast(
        &self,
        heap: &SymmetricHeap,
        g: &Group,
        dst: *mut u8,
        src: *const u8,
        bytes: usize,
        root: usize,
        to_root: bool,
    ) -> Result<()> {
        // SAFETY: the caller's promise, passed on.
        via!(self, t => unsafe { t.broadcast(heap, g, dst, src, bytes, root, to_root) })
    }

    unsafe fn reduce<T: Scalar, F: Fn(T, T) -> T + Copy>(
        &self,
        heap: &SymmetricHeap,
        g: &Group,
        dst: *mut T,
        src: *const T,
        n: usize,
        op: ReduceOp<'_, F>,
        kind: Reduce,
    ) -> Result<()> {
        // SAFETY: the caller's promise, passed on.
        via!(self, t => unsafe { t.reduce(heap, g, dst, src, n, op, kind) })
    }

    fn allgather_words(&self, heap: &SymmetricHeap, g: &Group, mine: &[u64]) -> Result<Vec<Vec<u64>>> {
        via!(self, t => t.allgather_words(heap, g, mine))
    }

    fn team_created(&self, slot: usize, set: PeSet) -> Result<()> {
        via!(self, t => t.team_created(slot, set))
    }

    fn team_destroyed(&self, slot: usize) {
        via!(self, t => t.team_destroyed(slot))
    }
}
