//! Host communication contexts: the default context plus a pool of
//! `ROCSHMEM_MAX_NUM_HOST_CONTEXTS` for `rocshmem_ctx_create`.
//!
//! A context names the team its PE numbers refer to. On the host platform every operation
//! completes in order, so contexts carry no separate queues; `quiet` on any context
//! completes this PE's operations.

use crate::device_abi::{ROCSHMEM_CTX_MAGIC, rocshmem_ctx_device, rocshmem_device_state, rocshmem_team_device};
use crate::error::{Error, Result};
use crate::gpu::mirror::{Mirror, entry_bytes};
use std::cell::UnsafeCell;
use std::sync::Mutex;

/// Bytes of one context entry.
const ENTRY: usize = std::mem::size_of::<rocshmem_ctx_device>();

pub struct CtxTable {
    /// The entries device code reads (the host copy; on a GPU platform `mirror` holds the
    /// device copy, and `ctx_opaque` handles point there).
    entries: Box<[UnsafeCell<rocshmem_ctx_device>]>,
    mirror: Mirror,
    /// Address of entry 0 as users and device code see it.
    handle_base: usize,
    /// Host-created contexts in use (index 0 is the default); the device pool is not tracked here.
    used: Mutex<Vec<bool>>,
    host_contexts: usize,
    state: Mutex<usize>,
}

// SAFETY: entries are written only under `used`'s lock, before/after their handle is live.
unsafe impl Sync for CtxTable {}
unsafe impl Send for CtxTable {}

/// A live context as the core sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ctx {
    pub index: usize,
    pub team: *mut u64,
}

impl CtxTable {
    /// Index 0 is the default context (on `world`); `host_contexts` more can be created by the
    /// host, and the `device_contexts` after them form the pool of `rocshmem_wg_ctx_create`
    /// (claimed and released by device code itself; see `device/src/ctx.hpp`).
    ///
    /// `mirror` is where device code reads the table ([`Mirror::none`]: this table itself).
    /// Nothing is pushed to it before [`CtxTable::set_state`].
    pub fn new(
        host_contexts: usize,
        device_contexts: usize,
        world: *mut rocshmem_team_device,
        mirror: Mirror,
    ) -> CtxTable {
        let total = 1 + host_contexts + device_contexts;
        let entries: Box<[UnsafeCell<rocshmem_ctx_device>]> =
            (0..total).map(|_| UnsafeCell::new(rocshmem_ctx_device::default())).collect();
        let handle_base = mirror.base(entries.as_ptr().cast());
        let t = CtxTable {
            entries,
            mirror,
            handle_base,
            used: Mutex::new(vec![false; host_contexts + 1]),
            host_contexts,
            state: Mutex::new(0),
        };
        t.fill(0, 0, world);
        t.used.lock().unwrap()[0] = true;
        for i in 1 + host_contexts..total {
            // SAFETY: not yet published.
            unsafe { (*t.entries[i].get()).index = i as i32 };
        }
        t
    }

    /// The device pool: (first index, count).
    pub fn device_pool(&self) -> (usize, usize) {
        (1 + self.host_contexts, self.entries.len() - 1 - self.host_contexts)
    }

    /// Points every entry at the device state (its address as device code sees it) and pushes
    /// the whole table, device pool included, to the device copy. Once, at init, before any
    /// handle is used: later pushes touch only host-created entries, never the pool device
    /// code claims.
    pub fn set_state(&self, state: *mut rocshmem_device_state) -> Result<()> {
        for e in self.entries.iter() {
            // SAFETY: at init, before any context is handed out.
            unsafe { (*e.get()).state = state };
        }
        *self.state.lock().unwrap() = state as usize;
        // SAFETY: at init: nobody else touches the table yet.
        self.mirror.push(0, unsafe { entry_bytes(&self.entries, 0..self.entries.len()) })
    }

    /// Pushes host-created entry `index` to the device copy.
    fn push(&self, index: usize) -> Result<()> {
        debug_assert!(index <= self.host_contexts, "device-pool entries belong to device code");
        // SAFETY: host entries are written only under `used`'s lock, which the callers hold.
        self.mirror.push(index * ENTRY, unsafe { entry_bytes(&self.entries, index..index + 1) })
    }

    fn fill(&self, index: usize, options: i64, team: *mut rocshmem_team_device) {
        let state = *self.state.lock().unwrap() as *mut rocshmem_device_state;
        // SAFETY: called with the entry not yet published (or under the lock).
        unsafe {
            *self.entries[index].get() =
                rocshmem_ctx_device { magic: ROCSHMEM_CTX_MAGIC, index: index as i32, options, team, state };
        }
    }

    /// The `ctx_opaque` of entry `index` (an address in the table device code reads).
    pub fn opaque(&self, index: usize) -> *mut std::ffi::c_void {
        (self.handle_base + index * ENTRY) as *mut std::ffi::c_void
    }

    /// The table as device code sees it (`rocshmem_device_state::ctxs`).
    pub fn entries_ptr(&self) -> *mut rocshmem_ctx_device {
        self.handle_base as *mut rocshmem_ctx_device
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn create(&self, options: i64, team: *mut rocshmem_team_device) -> Result<Ctx> {
        let mut used = self.used.lock().unwrap();
        let index = (1..used.len()).find(|i| !used[*i]).ok_or(Error::ContextsExhausted { max: used.len() - 1 })?;
        self.fill(index, options, team);
        self.push(index)?;
        used[index] = true;
        Ok(Ctx { index, team: team.cast() })
    }

    /// The context behind `opaque`; NULL means the default context (what a host-side copy of
    /// the device global ROCSHMEM_CTX_DEFAULT holds in upstream programs).
    pub fn get(&self, opaque: *const std::ffi::c_void) -> Result<Ctx> {
        if opaque.is_null() {
            // SAFETY: entry 0 is always live.
            return Ok(Ctx { index: 0, team: unsafe { (*self.entries[0].get()).team.cast() } });
        }
        let base = self.handle_base;
        let sz = ENTRY;
        let a = opaque as usize;
        if a < base || (a - base) % sz != 0 || (a - base) / sz >= self.entries.len() {
            return Err(Error::BadHandle("context"));
        }
        let index = (a - base) / sz;
        let used = self.used.lock().unwrap();
        // Device-pool contexts (past `used`) belong to the work-group that created them.
        if !used.get(index).copied().unwrap_or(false) {
            return Err(Error::BadHandle("context"));
        }
        // SAFETY: live entry, read under the lock.
        Ok(Ctx { index, team: unsafe { (*self.entries[index].get()).team.cast() } })
    }

    pub fn destroy(&self, ctx: Ctx) -> Result<()> {
        if ctx.index == 0 {
            return Err(Error::invalid("the default context cannot be destroyed"));
        }
        let mut used = self.used.lock().unwrap();
        used[ctx.index] = false;
        let state = *self.state.lock().unwrap() as *mut rocshmem_device_state;
        // SAFETY: under the lock; the handle is dead from now on.
        unsafe {
            *self.entries[ctx.index].get() =
                rocshmem_ctx_device { index: ctx.index as i32, state, ..rocshmem_ctx_device::default() }
        };
        self.push(ctx.index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_in_the_device_copy_and_the_pool_left_to_device_code() {
        let gpu = crate::gpu::fake::gpu();
        let world = 0x1000 as *mut rocshmem_team_device;
        let t = CtxTable::new(2, 3, world, Mirror::new(&gpu, 6 * ENTRY).unwrap());
        let state = 0x2000 as *mut rocshmem_device_state;
        t.set_state(state).unwrap();
        let base = t.entries_ptr() as usize;
        assert_ne!(base, t.entries.as_ptr() as usize, "handles are device addresses");
        assert_eq!(t.opaque(0) as usize, base);
        assert_eq!(t.get(t.opaque(0)).unwrap().index, 0);
        assert!(t.get(t.entries.as_ptr().cast()).is_err());
        // SAFETY: the fake device copy is process memory of 6 entries.
        let dev = |i: usize| unsafe { *((base + i * ENTRY) as *const rocshmem_ctx_device) };
        assert_eq!((dev(0).magic, dev(0).team, dev(0).state), (ROCSHMEM_CTX_MAGIC, world, state));
        assert_eq!((dev(4).index, dev(4).state, dev(4).magic), (4, state, 0), "pool entries pushed at init");
        // Device code claims pool entry 4: host pushes must not undo that.
        // SAFETY: as above.
        unsafe { (*((base + 4 * ENTRY) as *mut rocshmem_ctx_device)).magic = ROCSHMEM_CTX_MAGIC };
        let c = t.create(7, world).unwrap();
        assert_eq!(c.index, 1);
        assert_eq!((dev(1).magic, dev(1).options), (ROCSHMEM_CTX_MAGIC, 7));
        assert_eq!(t.get(t.opaque(1)).unwrap(), c);
        assert!(t.get(t.opaque(4)).is_err(), "pool contexts are not host handles");
        t.destroy(c).unwrap();
        assert_eq!((dev(1).magic, dev(1).state), (0, state));
        assert!(t.get(t.opaque(1)).is_err());
        assert_eq!(dev(4).magic, ROCSHMEM_CTX_MAGIC, "the pool entry device code claimed is untouched");
    }
}
