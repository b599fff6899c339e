//! Teams: the table of team slots, creation by split, translation, destruction.
//!
//! Slot 0 is ROCSHMEM_TEAM_WORLD, slot 1 ROCSHMEM_TEAM_SHARED; the rest are handed out by
//! splits. A new team's slot is agreed on by all PEs of the parent (AND of their free-slot
//! masks), so every member uses the same slot, and with it the same synchronisation counters.

use crate::device_abi::{ROCSHMEM_TEAM_MAGIC, rocshmem_team_device};
use crate::error::{Error, Result};
use crate::gpu::{Mirror, entry_bytes};
use crate::heap::SymmetricHeap;
use crate::sync::{PeSet, SyncState};
use std::cell::UnsafeCell;
use std::sync::Mutex;
use std::sync::atomic::Ordering;

pub const WORLD_SLOT: usize = 0;
pub const SHARED_SLOT: usize = 1;

/// Bytes of one team entry.
const ENTRY: usize = std::mem::size_of::<rocshmem_team_device>();

/// A team as the core sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Team {
    pub set: PeSet,
    pub slot: usize,
    /// This PE's index in the team.
    pub my_idx: usize,
}

impl Team {
    /// World PE of team member `idx`, checked.
    pub fn world_pe(&self, idx: i64) -> Result<usize> {
        if idx < 0 || idx as usize >= self.set.size {
            return Err(Error::InvalidPe { pe: idx, n_pes: self.set.size });
        }
        Ok(self.set.pe(idx as usize))
    }
}

pub struct TeamTable {
    /// The entries device code reads (the host copy; on a GPU platform `mirror` holds the
    /// device copy and team handles point there). Written only under `live`'s lock.
    entries: Box<[UnsafeCell<rocshmem_team_device>]>,
    mirror: Mirror,
    /// Address of entry 0 as users and device code see it (handles are `handle_base + slot *
    /// 32`).
    handle_base: usize,
    live: Mutex<Vec<Option<Team>>>,
    /// Slot index used by active-set collectives (one past the team slots).
    pub active_set_slot: usize,
}

// SAFETY: entries are written only while holding `live`, before their handle is published, and
// cleared on destroy; readers go through `live`.
unsafe impl Sync for TeamTable {}
unsafe impl Send for TeamTable {}

impl TeamTable {
    /// The table with WORLD and SHARED installed; `mirror` is where device code reads it
    /// ([`Mirror::none`]: this table itself).
    pub fn new(max_teams: usize, world: Team, shared: Team, mirror: Mirror) -> Result<TeamTable> {
        let entries: Box<[UnsafeCell<rocshmem_team_device>]> =
            (0..max_teams).map(|_| UnsafeCell::new(rocshmem_team_device::default())).collect();
        let handle_base = mirror.base(entries.as_ptr().cast());
        let t = TeamTable {
            entries,
            mirror,
            handle_base,
            live: Mutex::new(vec![None; max_teams]),
            active_set_slot: max_teams,
        };
        // Every entry, so that the device copy starts as the host one (free entries zero).
        // SAFETY: the table is not shared yet.
        t.mirror.push(0, unsafe { entry_bytes(&t.entries, 0..max_teams) })?;
        t.install(world)?;
        t.install(shared)?;
        Ok(t)
    }

    /// Pushes entry `slot` to the device copy (called under `live`'s lock).
    fn push(&self, slot: usize) -> Result<()> {
        // SAFETY: entries are written only under that lock.
        self.mirror.push(slot * ENTRY, unsafe { entry_bytes(&self.entries, slot..slot + 1) })
    }

    pub fn max(&self) -> usize {
        self.entries.len()
    }

    fn install(&self, team: Team) -> Result<()> {
        let mut live = self.live.lock().unwrap();
        // SAFETY: we hold the lock and the slot is free.
        unsafe {
            *self.entries[team.slot].get() = rocshmem_team_device {
                magic: ROCSHMEM_TEAM_MAGIC,
                slot: team.slot as i32,
                my_pe: team.my_idx as i32,
                n_pes: team.set.size as i32,
                start: team.set.start as i32,
                stride: team.set.stride as i32,
                ro_remote: 0,
                reserved: 0,
            };
        }
        self.push(team.slot)?;
        live[team.slot] = Some(team);
        Ok(())
    }

    /// The handle users see for the team in `slot` (an address in the table device code reads).
    /// RO backend: sets `ro_remote` (members this PE reaches only through the proxy) of the
    /// team in `slot`.
    pub fn set_ro_remote(&self, slot: usize, remote: usize) -> Result<()> {
        let _live = self.live.lock().unwrap();
        // SAFETY: entries are written under the `live` lock.
        unsafe { (*self.entries[slot].get()).ro_remote = remote as i32 };
        self.push(slot)
    }

    pub fn handle(&self, slot: usize) -> *mut u64 {
        (self.handle_base + slot * ENTRY) as *mut u64
    }

    /// The table as device code sees it (`rocshmem_device_state::teams`).
    pub fn entries_ptr(&self) -> *mut rocshmem_team_device {
        self.handle_base as *mut rocshmem_team_device
    }

    /// The team behind a handle, or an error if the handle is not a live team of ours.
    pub fn get(&self, handle: *const u64) -> Result<Team> {
        let base = self.handle_base;
        let a = handle as usize;
        if handle.is_null() {
            return Err(Error::BadHandle("team (ROCSHMEM_TEAM_INVALID)"));
        }
        if a < base || (a - base) % ENTRY != 0 || (a - base) / ENTRY >= self.entries.len() {
            return Err(Error::BadHandle("team"));
        }
        self.live.lock().unwrap()[(a - base) / ENTRY].ok_or(Error::BadHandle("team"))
    }

    fn free_mask(&self, words: usize) -> Vec<u64> {
        let live = self.live.lock().unwrap();
        let mut m = vec![0u64; words];
        for (slot, t) in live.iter().enumerate() {
            if t.is_none() {
                m[slot / 64] |= 1 << (slot % 64);
            }
        }
        m
    }

    /// Collective over `parent`: creates the team of parent members `start + k*stride`,
    /// `k < size`. Returns the new team for members and None for the other parent PEs.
    pub fn split_strided(
        &self,
        heap: &SymmetricHeap,
        sync: &SyncState,
        parent: Team,
        start: i32,
        stride: i32,
        size: i32,
    ) -> Result<Option<Team>> {
        let psize = parent.set.size as i64;
        let (start, stride, size) = (start as i64, stride as i64, size as i64);
        if start < 0 || size < 1 || stride < 1 || start + (size - 1) * stride >= psize {
            return Err(Error::invalid(format!(
                "split start={start}, stride={stride}, size={size} does not fit a parent team of {psize} PEs"
            )));
        }
        let set = PeSet {
            start: parent.set.pe(start as usize),
            stride: parent.set.stride * stride as usize,
            size: size as usize,
        };
        // Only the members need to agree on a slot: they publish their free masks, then read
        // each other's, synchronising among themselves on the parent's slot. Every parent PE
        // makes the same calls in the same order, so each pair of members meets in the same
        // barriers; PEs outside the new team have nothing to do. Disjoint teams split from one
        // parent (split_2d rows, columns) can thus share a slot number.
        let Some(my_idx) = set.index_of(heap.my_pe) else {
            return Ok(None);
        };
        let words = heap.control.exchange_words;
        let mine = self.free_mask(words);
        #[cfg(feature = "mpi")]
        if let Some(ro) = sync.ro_for(set) {
            // Members this PE does not map: agree on the free slots with MPI.
            let mut agreed = mine;
            ro.allreduce_and(set, &mut agreed)?;
            let Some(slot) = (0..self.max()).find(|s| agreed[s / 64] & (1 << (s % 64)) != 0) else {
                return Err(Error::TeamsExhausted { max: self.max() });
            };
            let team = Team { set, slot, my_idx };
            self.install(team)?;
            ro.team_created(slot, set)?;
            return self.set_ro_remote(slot, ro.remote_in(set)).map(|()| Some(team));
        }
        let me = heap.control(heap.my_pe);
        for (w, v) in mine.iter().enumerate() {
            me.exchange(parent.slot, w).store(*v, Ordering::Relaxed);
        }
        sync.barrier(heap, set, parent.slot)?;
        let mut agreed = mine;
        for i in 0..set.size {
            let peer = heap.control(set.pe(i));
            for (w, v) in agreed.iter_mut().enumerate() {
                *v &= peer.exchange(parent.slot, w).load(Ordering::Relaxed);
            }
        }
        // Nobody overwrites an exchange word before every member has read it.
        sync.barrier(heap, set, parent.slot)?;
        let Some(slot) = (0..self.max()).find(|s| agreed[s / 64] & (1 << (s % 64)) != 0) else {
            return Err(Error::TeamsExhausted { max: self.max() });
        };
        let team = Team { set, slot, my_idx };
        self.install(team)?;
        Ok(Some(team))
    }

    /// Collective over the team: synchronise, then free its slot. WORLD and SHARED are kept.
    pub fn destroy(&self, heap: &SymmetricHeap, sync: &SyncState, team: Team) -> Result<()> {
        if team.slot == WORLD_SLOT || team.slot == SHARED_SLOT {
            return Ok(());
        }
        sync.barrier(heap, team.set, team.slot)?;
        #[cfg(feature = "mpi")]
        if let Some(ro) = sync.ro_for(team.set) {
            ro.team_destroyed(team.slot);
        }
        // Device collectives count per slot; a later team on this slot starts from zero. Every
        // flag store into our slot was awaited by the last device collective, so none is late.
        heap.clear_device_slot(team.slot)?;
        let mut live = self.live.lock().unwrap();
        live[team.slot] = None;
        // SAFETY: under the lock; the handle is dead from now on.
        unsafe { *self.entries[team.slot].get() = rocshmem_team_device::default() };
        self.push(team.slot)
    }
}

/// Collective over `team`: true on every member if `ok` is true on every member.
pub fn all_agree(heap: &SymmetricHeap, sync: &SyncState, team: Team, ok: bool) -> Result<bool> {
    #[cfg(feature = "mpi")]
    if let Some(ro) = sync.ro_for(team.set) {
        let mut w = [ok as u64];
        ro.allreduce_and(team.set, &mut w)?;
        return Ok(w[0] == 1);
    }
    heap.control(heap.my_pe).exchange(team.slot, 0).store(ok as u64, Ordering::Relaxed);
    sync.barrier(heap, team.set, team.slot)?;
    let all =
        (0..team.set.size).all(|i| heap.control(team.set.pe(i)).exchange(team.slot, 0).load(Ordering::Relaxed) == 1);
    // Nobody overwrites the word before every member has read it.
    sync.barrier(heap, team.set, team.slot)?;
    Ok(all)
}

/// PE `src_pe` of `src` as a PE of `dst`, or None if it is not a member of both.
pub fn translate(src: &Team, src_pe: i64, dst: &Team) -> Option<usize> {
    if src_pe < 0 || src_pe as usize >= src.set.size {
        return None;
    }
    dst.set.index_of(src.set.pe(src_pe as usize))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn translation_between_strided_teams() {
        let world = Team { set: PeSet::world(8), slot: 0, my_idx: 0 };
        let evens = Team { set: PeSet { start: 0, stride: 2, size: 4 }, slot: 2, my_idx: 0 };
        let odds = Team { set: PeSet { start: 1, stride: 2, size: 4 }, slot: 3, my_idx: 0 };
        assert_eq!(translate(&evens, 3, &world), Some(6));
        assert_eq!(translate(&world, 6, &evens), Some(3));
        assert_eq!(translate(&world, 5, &evens), None);
        assert_eq!(translate(&evens, 1, &odds), None);
        assert_eq!(translate(&evens, 4, &world), None);
        assert_eq!(translate(&evens, -1, &world), None);
        assert!(evens.world_pe(4).is_err());
    }

    fn teams(mirror: Mirror) -> TeamTable {
        let world = Team { set: PeSet::world(4), slot: WORLD_SLOT, my_idx: 1 };
        let shared = Team { set: PeSet::world(4), slot: SHARED_SLOT, my_idx: 1 };
        TeamTable::new(8, world, shared, mirror).unwrap()
    }

    #[test]
    fn handles_follow_the_table_device_code_reads() {
        // Host platform: handles are the host entries.
        let t = teams(Mirror::none());
        assert_eq!(t.handle(0) as usize, t.entries.as_ptr() as usize);
        // GPU platform: handles are addresses in the device copy, mapped back by offset.
        let t = teams(Mirror::new(&crate::gpu::fake::gpu(), 8 * ENTRY).unwrap());
        let base = t.entries_ptr() as usize;
        assert_ne!(base, t.entries.as_ptr() as usize);
        assert_eq!(t.handle(SHARED_SLOT) as usize, base + ENTRY);
        assert_eq!(t.get(t.handle(WORLD_SLOT)).unwrap().slot, WORLD_SLOT);
        assert_eq!(t.get(t.handle(SHARED_SLOT)).unwrap().my_idx, 1);
        assert!(t.get(t.entries.as_ptr().cast()).is_err(), "the host copy's address is not a handle");
        assert!(t.get((base + 4) as *const u64).is_err());
        assert!(t.get(t.handle(2)).is_err(), "a free slot");
        // The device copy holds what was installed.
        // SAFETY: the fake device copy is process memory.
        let dev = unsafe { &*(t.handle(SHARED_SLOT) as *const rocshmem_team_device) };
        assert_eq!((dev.magic, dev.slot, dev.my_pe, dev.n_pes), (ROCSHMEM_TEAM_MAGIC, 1, 1, 4));
    }
}
