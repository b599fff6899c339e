//! Teams: the table of team slots, creation by split, translation, destruction.
//!
//! Slot 0 is ROCSHMEM_TEAM_WORLD, slot 1 ROCSHMEM_TEAM_SHARED; the rest are handed out by
//! splits. A new team's slot is agreed on by all PEs of the parent (AND of their free-slot
//! masks), so every member uses the same slot, and with it the same synchronisation counters.

use crate::device_abi::{ROCSHMEM_TEAM_MAGIC, rocshmem_team_device};
use crate::error::{Error, Result};
use crate::gpu::mirror::{Mirror, entry_bytes};
use crate::heap::SymmetricHeap;
use crate::pe_set::PeSet;
use crate::transport::route::Transports;
use crate::transport::{Group, Transport};
use std::cell::UnsafeCell;
use std::sync::Mutex;

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

/// Entries of the table over all generations (bounds its size: 512 KiB at most).
const TABLE_ENTRIES: usize = 16384;

/// Generations per slot for a table of `max` slots: from 256 (the default 40 slots) down to 4
/// (4096 slots).
fn generations(max: usize) -> usize {
    (TABLE_ENTRIES / max.max(1)).clamp(1, 256)
}

/// A live team and the generation of its slot (which entry its handle points at).
#[derive(Debug, Clone, Copy)]
struct Live {
    team: Team,
    generation: usize,
}

/// The team table. A handle is the address of its team's `rocshmem_team_device` entry, and
/// each slot has several entries, one per generation: a team created in a slot takes the next
/// generation's entry, and destroying it zeroes that entry. So a handle kept after its team was
/// destroyed never points at a later team of the same slot (until the slot has been reused
/// [`generations`] times): the host API refuses it, and device code sees a dead entry
/// (`magic` 0).
pub struct TeamTable {
    /// The entries device code reads, `generation * max + slot` (the host copy; on a GPU
    /// platform `mirror` holds the device copy and team handles point there). Written only
    /// under `live`'s lock.
    entries: Box<[UnsafeCell<rocshmem_team_device>]>,
    mirror: Mirror,
    /// Address of entry 0 as users and device code see it (handles are `handle_base + index *
    /// 32`; generation 0 of every slot comes first, so WORLD's handle is the table's address).
    handle_base: usize,
    /// Slots (team slots, which index the synchronisation areas).
    slots: usize,
    /// Per slot: its team, and how many teams were created there (the next one takes
    /// generation `created % generations`).
    live: Mutex<Vec<(Option<Live>, usize)>>,
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
        let n = Self::entries_for(max_teams);
        let entries: Box<[UnsafeCell<rocshmem_team_device>]> =
            (0..n).map(|_| UnsafeCell::new(rocshmem_team_device::default())).collect();
        let handle_base = mirror.base(entries.as_ptr().cast());
        let t = TeamTable {
            entries,
            mirror,
            handle_base,
            slots: max_teams,
            live: Mutex::new(vec![(None, 0); max_teams]),
            active_set_slot: max_teams,
        };
        // Every entry, so that the device copy starts as the host one (free entries zero).
        // SAFETY: the table is not shared yet.
        t.mirror.push(0, unsafe { entry_bytes(&t.entries, 0..n) })?;
        t.install(world)?;
        t.install(shared)?;
        Ok(t)
    }

    /// Entries of a table of `max_teams` slots (all generations).
    fn entries_for(max_teams: usize) -> usize {
        max_teams * generations(max_teams)
    }

    /// Bytes of the table device code reads, for `max_teams` slots (the size of its mirror).
    pub fn bytes(max_teams: usize) -> usize {
        Self::entries_for(max_teams) * ENTRY
    }

    /// Pushes entry `index` to the device copy (called under `live`'s lock).
    fn push(&self, index: usize) -> Result<()> {
        // SAFETY: entries are written only under that lock.
        self.mirror.push(index * ENTRY, unsafe { entry_bytes(&self.entries, index..index + 1) })
    }

    pub fn max(&self) -> usize {
        self.slots
    }

    fn install(&self, team: Team) -> Result<()> {
        let mut live = self.live.lock().unwrap();
        let generation = live[team.slot].1 % generations(self.slots);
        let index = generation * self.slots + team.slot;
        // SAFETY: we hold the lock and the slot is free.
        unsafe {
            *self.entries[index].get() = rocshmem_team_device {
                magic: ROCSHMEM_TEAM_MAGIC,
                slot: team.slot as i32,
                my_pe: team.my_idx as i32,
                n_pes: team.set.size as i32,
                start: team.set.start as i32,
                stride: team.set.stride as i32,
                remote_members: 0,
                reserved: 0,
            };
        }
        self.push(index)?;
        live[team.slot] = (Some(Live { team, generation }), live[team.slot].1 + 1);
        Ok(())
    }

    /// Index in `entries` of the live team in `slot` (None: the slot is free).
    fn index(&self, slot: usize) -> Option<usize> {
        self.live.lock().unwrap()[slot].0.map(|l| l.generation * self.slots + slot)
    }

    /// The handle users see for the team in `slot` (an address in the table device code reads).
    /// Sets `remote_members` (members this PE reaches through another transport than IPC) of
    /// the team in `slot`.
    pub fn set_remote_members(&self, slot: usize, remote: usize) -> Result<()> {
        let live = self.live.lock().unwrap();
        let Some(l) = live[slot].0 else {
            return Err(Error::BadHandle("team"));
        };
        let index = l.generation * self.slots + slot;
        // SAFETY: entries are written under the `live` lock.
        unsafe { (*self.entries[index].get()).remote_members = remote as i32 };
        self.push(index)
    }

    /// The handle of the live team in `slot` (NULL, ROCSHMEM_TEAM_INVALID, if the slot is free).
    pub fn handle(&self, slot: usize) -> *mut u64 {
        self.index(slot).map_or(std::ptr::null_mut(), |i| (self.handle_base + i * ENTRY) as *mut u64)
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
        let index = (a - base) / ENTRY;
        let (slot, generation) = (index % self.slots, index / self.slots);
        match self.live.lock().unwrap()[slot] {
            (Some(l), _) if l.generation == generation => Ok(l.team),
            // A generation this slot has had: its team was destroyed.
            (_, created) if created > generation => Err(Error::invalid(format!(
                "team handle {handle:p} is of a team that was destroyed (rocshmem_team_destroy); a handle must not \
                 be used after its team is destroyed"
            ))),
            _ => Err(Error::BadHandle("team")),
        }
    }

    fn free_mask(&self, words: usize) -> Vec<u64> {
        let live = self.live.lock().unwrap();
        let mut m = vec![0u64; words];
        for (slot, (t, _)) in live.iter().enumerate() {
            if t.is_none() {
                m[slot / 64] |= 1 << (slot % 64);
            }
        }
        m
    }

    /// Collective over `parent`: creates the team of parent members `start + k*stride`,
    /// `k < size`. Returns the new team for members and None for the other parent PEs.
    /// `null_out`: this PE's caller has nowhere to put the handle (an error on every PE).
    ///
    /// Every parent PE first publishes its arguments (with its free-slot mask): if one PE's
    /// arguments are not valid, or differ from another's, every parent PE fails with the same
    /// error naming that PE (none waits for a PE that gave up). Then only the members agree on
    /// a slot (AND of their masks), so disjoint teams split from one parent (split_2d rows,
    /// columns) can share a slot number.
    pub fn split_strided(
        &self,
        heap: &SymmetricHeap,
        net: &Transports,
        parent: Team,
        (start, stride, size): (i32, i32, i32),
        null_out: bool,
    ) -> Result<Option<Team>> {
        let args = SplitArgs::Strided { start, stride, size };
        let words = self.mask_words();
        let mut mine = self.free_mask(words);
        mine.extend_from_slice(&Published { args, null_out }.encode());
        let rows = allgather_words(heap, net, parent, &mine)?;
        agree_args(heap.my_pe, parent, &rows, words, args)?;
        let (start, stride, size) = (start as usize, stride as usize, size as usize);
        let set = PeSet { start: parent.set.pe(start), stride: parent.set.stride * stride, size };
        let Some(my_idx) = set.index_of(heap.my_pe) else {
            return Ok(None);
        };
        let mut agreed = rows[start][..words].to_vec();
        for k in 1..size {
            for (w, v) in agreed.iter_mut().enumerate() {
                *v &= rows[start + k * stride][w];
            }
        }
        let Some(slot) = (0..self.max()).find(|s| agreed[s / 64] & (1 << (s % 64)) != 0) else {
            return Err(Error::TeamsExhausted { max: self.max() });
        };
        let team = Team { set, slot, my_idx };
        self.install(team)?;
        let remote = net.team_created(slot, set)?;
        if remote > 0 {
            self.set_remote_members(slot, remote)?;
        }
        Ok(Some(team))
    }

    /// Words of a free-slot mask.
    fn mask_words(&self) -> usize {
        self.slots.div_ceil(64)
    }

    /// Collective over `parent`, before `rocshmem_team_split_2d` splits it: every parent PE
    /// must pass the same valid `xrange` (each PE's is checked by all, as for a split).
    pub fn agree_split_2d(
        &self,
        heap: &SymmetricHeap,
        net: &Transports,
        parent: Team,
        xrange: i32,
        null_out: bool,
    ) -> Result<()> {
        let args = SplitArgs::TwoD { xrange };
        let rows = allgather_words(heap, net, parent, &Published { args, null_out }.encode())?;
        agree_args(heap.my_pe, parent, &rows, 0, args)
    }

    /// Collective over the team: synchronise, then free its slot. WORLD and SHARED are kept.
    pub fn destroy(&self, heap: &SymmetricHeap, net: &Transports, team: Team) -> Result<()> {
        if team.slot == WORLD_SLOT || team.slot == SHARED_SLOT {
            return Ok(());
        }
        net.barrier(heap, team.set, team.slot)?;
        net.team_destroyed(team.slot, team.set);
        // Device collectives count per slot; a later team on this slot starts from zero. Every
        // flag store into our slot was awaited by the last device collective, so none is late.
        heap.clear_device_slot(team.slot)?;
        self.release(team.slot)
    }

    /// Frees `slot`: its entry goes dead (zeroed), and the next team there takes the next
    /// generation's entry.
    fn release(&self, slot: usize) -> Result<()> {
        let mut live = self.live.lock().unwrap();
        let Some(l) = live[slot].0.take() else {
            return Err(Error::BadHandle("team"));
        };
        let index = l.generation * self.slots + slot;
        // SAFETY: under the lock; the handle is dead from now on.
        unsafe { *self.entries[index].get() = rocshmem_team_device::default() };
        self.push(index)
    }
}

/// Collective over `team`: true on every member if `ok` is true on every member.
pub fn all_agree(heap: &SymmetricHeap, net: &Transports, team: Team, ok: bool) -> Result<bool> {
    Ok(allgather_words(heap, net, team, &[ok as u64])?.iter().all(|w| w[0] == 1))
}

/// Exchange words per synchronisation slot for `max_teams` team slots: a free-slot mask, then
/// the arguments of a split ([`SplitArgs`]).
pub fn exchange_words(max_teams: usize) -> usize {
    max_teams.div_ceil(64) + SPLIT_ARG_WORDS
}

const SPLIT_ARG_WORDS: usize = 2;

/// Collective over `team`: every member's `mine` (at most [`exchange_words`] words), in
/// member order, through the transport of the team (IPC: the exchange words of the team's slot).
fn allgather_words(heap: &SymmetricHeap, net: &Transports, team: Team, mine: &[u64]) -> Result<Vec<Vec<u64>>> {
    let g = Group { set: team.set, slot: team.slot, my_idx: team.my_idx, team: std::ptr::null_mut() };
    net.set(team.set).allgather_words(heap, &g, mine)
}

/// The arguments of a split, as every parent PE publishes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SplitArgs {
    Strided { start: i32, stride: i32, size: i32 },
    TwoD { xrange: i32 },
}

/// A split's arguments on one PE, and whether its output handle pointer(s) are NULL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Published {
    args: SplitArgs,
    null_out: bool,
}

impl Published {
    /// Word 0: kind (bits 32..40), NULL output (bit 40), start or xrange; word 1: stride, size.
    fn encode(self) -> [u64; SPLIT_ARG_WORDS] {
        let null = (self.null_out as u64) << 40;
        match self.args {
            SplitArgs::Strided { start, stride, size } => {
                [null | 1 << 32 | start as u32 as u64, (stride as u32 as u64) << 32 | size as u32 as u64]
            }
            SplitArgs::TwoD { xrange } => [null | 2 << 32 | xrange as u32 as u64, 0],
        }
    }

    fn decode(w: &[u64]) -> Option<Published> {
        let lo = |v: u64| v as u32 as i32;
        let args = match (w[0] >> 32) & 0xff {
            1 => SplitArgs::Strided { start: lo(w[0]), stride: lo(w[1] >> 32), size: lo(w[1]) },
            2 => SplitArgs::TwoD { xrange: lo(w[0]) },
            _ => return None,
        };
        Some(Published { args, null_out: w[0] >> 40 & 1 == 1 })
    }

    /// Why these arguments cannot split a parent of `psize` PEs, if they cannot.
    fn problem(self, psize: usize) -> Option<String> {
        if self.null_out {
            return Some(match self.args {
                SplitArgs::Strided { .. } => "new_team is NULL".into(),
                SplitArgs::TwoD { .. } => "xteam or yteam is NULL".into(),
            });
        }
        self.args.problem(psize)
    }
}

impl SplitArgs {
    fn describe(self) -> String {
        match self {
            SplitArgs::Strided { start, stride, size } => format!("start={start}, stride={stride}, size={size}"),
            SplitArgs::TwoD { xrange } => format!("xrange={xrange}"),
        }
    }

    /// Why these arguments cannot split a parent of `psize` PEs, if they cannot.
    fn problem(self, psize: usize) -> Option<String> {
        let psize = psize as i64;
        match self {
            SplitArgs::Strided { start, stride, size } => {
                let (start, stride, size) = (start as i64, stride as i64, size as i64);
                if start < 0 || size < 1 || stride < 1 {
                    Some("start must be >= 0, stride >= 1 and size >= 1".into())
                } else if start + (size - 1) * stride >= psize {
                    Some(format!(
                        "the last member, {}, is outside the parent team of {psize} PEs",
                        start + (size - 1) * stride
                    ))
                } else {
                    None
                }
            }
            SplitArgs::TwoD { xrange } if xrange < 1 => Some("xrange must be positive".into()),
            SplitArgs::TwoD { .. } => None,
        }
    }
}

/// Checks every parent PE's published split arguments (`rows[i][at..]`, member order) against
/// this PE's: every PE reaches the same verdict from the same rows, and the error names the PE
/// (world number and parent index) whose arguments are wrong.
fn agree_args(me: usize, parent: Team, rows: &[Vec<u64>], at: usize, mine: SplitArgs) -> Result<()> {
    let args: Vec<Option<Published>> = rows.iter().map(|r| Published::decode(&r[at..at + SPLIT_ARG_WORDS])).collect();
    let who = |i: usize| {
        let pe = parent.set.pe(i);
        let this = if pe == me { "this PE, " } else { "" };
        format!("PE {pe} ({this}parent team PE {i})")
    };
    let what = match mine {
        SplitArgs::Strided { .. } => "rocshmem_team_split_strided",
        SplitArgs::TwoD { .. } => "rocshmem_team_split_2d",
    };
    for (i, a) in args.iter().enumerate() {
        let Some(a) = a else {
            return Err(Error::Mismatch(format!(
                "{} is not in {what} but in another collective call on the parent team; every PE of the parent \
                 must call {what} together",
                who(i)
            )));
        };
        if let Some(why) = a.problem(parent.set.size) {
            return Err(Error::invalid(format!(
                "{} passed {}: {why} (parent team of {} PEs); no team was created",
                who(i),
                a.args.describe(),
                parent.set.size
            )));
        }
    }
    // All valid: name the first PE that differs from what most passed.
    let args: Vec<SplitArgs> = args.into_iter().flatten().map(|a| a.args).collect();
    let count = |a: &SplitArgs| args.iter().filter(|b| *b == a).count();
    // (max_by_key keeps the last of equals: reversed, the first PE's wins a tie)
    let common = *args.iter().rev().max_by_key(|a| count(a)).expect("a parent has members");
    if let Some(i) = args.iter().position(|a| *a != common) {
        let j = args.iter().position(|a| *a == common).unwrap_or(0);
        return Err(Error::Mismatch(format!(
            "{} passed {} but {} passed {}; every PE of the parent team must pass the same arguments; no team was \
             created",
            who(i),
            args[i].describe(),
            who(j),
            common.describe()
        )));
    }
    Ok(())
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
        let t = teams(Mirror::new(&crate::gpu::fake::gpu(), TeamTable::bytes(8)).unwrap());
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

    #[test]
    fn a_destroyed_teams_handle_never_aliases_the_next_team_of_its_slot() {
        let t = teams(Mirror::new(&crate::gpu::fake::gpu(), TeamTable::bytes(8)).unwrap());
        let evens = Team { set: PeSet { start: 0, stride: 2, size: 2 }, slot: 2, my_idx: 0 };
        let pair = Team { set: PeSet { start: 0, stride: 1, size: 2 }, slot: 2, my_idx: 0 };
        t.install(evens).unwrap();
        let old = t.handle(2);
        assert_eq!(t.get(old).unwrap(), evens);
        t.release(2).unwrap();
        assert!(t.handle(2).is_null(), "a free slot has no handle");
        let e = t.get(old).unwrap_err().to_string();
        assert!(e.contains("destroyed"), "{e}");
        t.install(pair).unwrap();
        let new = t.handle(2);
        assert_ne!(new, old, "the next team of the slot has a handle of its own");
        assert_eq!(t.get(new).unwrap(), pair);
        assert!(t.get(old).unwrap_err().to_string().contains("destroyed"));
        // Device code reading the old handle sees a dead entry.
        // SAFETY: the fake device copy is process memory.
        let dev = unsafe { &*(old as *const rocshmem_team_device) };
        assert_eq!(dev.magic, 0);
        // A generation the slot never had is not a destroyed team, just not a handle.
        let never = (new as usize + 8 * ENTRY) as *const u64;
        assert_eq!(t.get(never).unwrap_err(), Error::BadHandle("team"));
        // WORLD and SHARED keep generation 0: WORLD's handle is the table's address.
        assert_eq!(t.handle(WORLD_SLOT) as usize, t.entries_ptr() as usize);
        // Generations wrap only after every one of the slot's entries was used.
        let gens = generations(8);
        for _ in 0..gens - 1 {
            t.release(2).unwrap();
            t.install(pair).unwrap();
            assert_ne!(t.handle(2), new);
        }
        t.release(2).unwrap();
        t.install(pair).unwrap();
        assert_eq!(t.handle(2), new, "after {gens} teams the slot's entries are reused");
    }
}
