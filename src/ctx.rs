//! Host communication contexts: the default context plus a pool of
//! `ROCSHMEM_MAX_NUM_HOST_CONTEXTS` for `rocshmem_ctx_create`.
//!
//! A context names the team its PE numbers refer to. On the host platform every operation
//! completes in order, so contexts carry no separate queues; `quiet` on any context
//! completes this PE's operations.

use crate::device_abi::{ROCSHMEM_CTX_MAGIC, rocshmem_ctx_device, rocshmem_team_device};
use crate::error::{Error, Result};
use std::cell::UnsafeCell;
use std::sync::Mutex;

pub struct CtxTable {
    entries: Box<[UnsafeCell<rocshmem_ctx_device>]>,
    used: Mutex<Vec<bool>>,
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
    /// Index 0 is the default context (on `world`); `host_contexts` more can be created.
    pub fn new(host_contexts: usize, world: *mut rocshmem_team_device) -> CtxTable {
        let entries: Box<[UnsafeCell<rocshmem_ctx_device>]> =
            (0..=host_contexts).map(|_| UnsafeCell::new(rocshmem_ctx_device::default())).collect();
        let t = CtxTable { entries, used: Mutex::new(vec![false; host_contexts + 1]) };
        t.fill(0, 0, world);
        t.used.lock().unwrap()[0] = true;
        t
    }

    fn fill(&self, index: usize, options: i64, team: *mut rocshmem_team_device) {
        // SAFETY: called with the entry not yet published (or under the lock).
        unsafe {
            *self.entries[index].get() =
                rocshmem_ctx_device { magic: ROCSHMEM_CTX_MAGIC, index: index as i32, options, team };
        }
    }

    pub fn opaque(&self, index: usize) -> *mut std::ffi::c_void {
        self.entries[index].get().cast()
    }

    pub fn entries_ptr(&self) -> *mut rocshmem_ctx_device {
        self.entries.as_ptr() as *mut rocshmem_ctx_device
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
        used[index] = true;
        self.fill(index, options, team);
        Ok(Ctx { index, team: team.cast() })
    }

    /// The context behind `opaque`; NULL means the default context (what a host-side copy of
    /// the device global ROCSHMEM_CTX_DEFAULT holds in upstream programs).
    pub fn get(&self, opaque: *const std::ffi::c_void) -> Result<Ctx> {
        if opaque.is_null() {
            // SAFETY: entry 0 is always live.
            return Ok(Ctx { index: 0, team: unsafe { (*self.entries[0].get()).team.cast() } });
        }
        let base = self.entries.as_ptr() as usize;
        let sz = std::mem::size_of::<rocshmem_ctx_device>();
        let a = opaque as usize;
        if a < base || (a - base) % sz != 0 || (a - base) / sz >= self.entries.len() {
            return Err(Error::BadHandle("context"));
        }
        let index = (a - base) / sz;
        let used = self.used.lock().unwrap();
        if !used[index] {
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
        // SAFETY: under the lock; the handle is dead from now on.
        unsafe { *self.entries[ctx.index].get() = rocshmem_ctx_device::default() };
        Ok(())
    }
}
