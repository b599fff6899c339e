//! Teams: split, translate, query, destroy.

use super::*;
use std::ffi::c_int;

fn set_out(out: *mut rocshmem_team_t, v: rocshmem_team_t) {
    if !out.is_null() {
        // SAFETY: checked non-null; the caller provides a writable handle.
        unsafe { *out = v };
    }
}

fn split(parent: rocshmem_team_t, start: c_int, stride: c_int, size: c_int, null_out: bool) -> Result<rocshmem_team_t> {
    let rt = rt()?;
    let parent = team_of(rt, parent)?;
    Ok(match rt.teams.split_strided(&rt.heap, &rt.net, parent, (start, stride, size), null_out)? {
        Some(t) => rt.teams.handle(t.slot),
        None => std::ptr::null_mut(),
    })
}

/// Creates a team from the parent members `start + k*stride`, `k < size`; collective over the
/// parent. Members get the new handle, other parent PEs ROCSHMEM_TEAM_INVALID. Returns 0 on
/// success (also for an INVALID parent: nothing is created), non-zero (and INVALID) on bad
/// arguments or when ROCSHMEM_MAX_NUM_TEAMS is reached.
///
/// # Safety
/// `new_team` must point to a writable handle; `config` may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmem_team_split_strided(
    parent_team: rocshmem_team_t,
    start: c_int,
    stride: c_int,
    size: c_int,
    config: *const rocshmem_team_config_t,
    config_mask: std::ffi::c_long,
    new_team: *mut rocshmem_team_t,
) -> c_int {
    let _ = (config, config_mask);
    set_out(new_team, std::ptr::null_mut());
    status_call("rocshmem_team_split_strided", || {
        // Before anything else, so that a call before init or after finalize (where the
        // program's ROCSHMEM_TEAM_WORLD reads as INVALID) is refused, not taken as a no-op.
        rt()?;
        if parent_team.is_null() {
            // A PE outside the parent (it holds INVALID) takes part with nothing to do, as in
            // upstream and OpenSHMEM: new_team stays INVALID and the call succeeds.
            return Ok(());
        }
        // Bad arguments (a NULL new_team too) fail on every parent PE, after the exchange.
        set_out(new_team, split(parent_team, start, stride, size, new_team.is_null())?);
        Ok(())
    })
}

/// Splits the parent into a 2-D grid with `xrange` columns: `xteam` is this PE's row (PEs with
/// consecutive numbers), `yteam` its column (stride `xrange`). Collective over the parent.
///
/// # Safety
/// `xteam` and `yteam` must point to writable handles; configs may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rocshmem_team_split_2d(
    parent_team: rocshmem_team_t,
    xrange: c_int,
    xaxis_config: *const rocshmem_team_config_t,
    xaxis_mask: std::ffi::c_long,
    xteam: *mut rocshmem_team_t,
    yaxis_config: *const rocshmem_team_config_t,
    yaxis_mask: std::ffi::c_long,
    yteam: *mut rocshmem_team_t,
) -> c_int {
    let _ = (xaxis_config, xaxis_mask, yaxis_config, yaxis_mask);
    set_out(xteam, std::ptr::null_mut());
    set_out(yteam, std::ptr::null_mut());
    status_call("rocshmem_team_split_2d", || {
        let rt = rt()?;
        let parent = team_of(rt, parent_team)?;
        // Every parent PE must pass the same valid xrange and output handles (all fail
        // together otherwise).
        rt.teams.agree_split_2d(&rt.heap, &rt.net, parent, xrange, xteam.is_null() || yteam.is_null())?;
        let psize = parent.set.size as c_int;
        let xrange = xrange.min(psize);
        let rows = (psize + xrange - 1) / xrange;
        // Every parent PE takes part in every split (each keeps the one it belongs to), also
        // after one of its own splits failed: a split only synchronises its members, so the
        // rows and columns can succeed for some PEs and fail for others; skipping the rest
        // would leave the others waiting. Then the parent agrees on the outcome.
        let (mut x, mut y) = (std::ptr::null_mut(), std::ptr::null_mut());
        let mut failure = None;
        for row in 0..rows {
            match split(parent_team, row * xrange, 1, xrange.min(psize - row * xrange), false) {
                Ok(h) if !h.is_null() => x = h,
                Ok(_) => {}
                Err(e) => failure = failure.or(Some(e)),
            }
        }
        for col in 0..xrange {
            match split(parent_team, col, xrange, (psize - col + xrange - 1) / xrange, false) {
                Ok(h) if !h.is_null() => y = h,
                Ok(_) => {}
                Err(e) => failure = failure.or(Some(e)),
            }
        }
        if !crate::team::all_agree(&rt.heap, &rt.net, parent, failure.is_none())? {
            // Undo the teams made (collective over their members, who all get here), so that
            // every caller gets INVALID for both and no slot leaks.
            for h in [y, x] {
                if !h.is_null() {
                    if let Ok(t) = team_of(rt, h) {
                        let _ = rt.teams.destroy(&rt.heap, &rt.net, t);
                    }
                }
            }
            return Err(failure.unwrap_or_else(|| Error::TeamsExhausted { max: rt.teams.max() }));
        }
        set_out(xteam, x);
        set_out(yteam, y);
        Ok(())
    })
}

/// Destroys a team; collective over its members. INVALID, WORLD and SHARED are ignored.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_team_destroy(team: rocshmem_team_t) {
    void_call("rocshmem_team_destroy", || {
        // Refused before init and after finalize, also for INVALID (see split_strided).
        let rt = rt()?;
        if team.is_null() {
            return Ok(());
        }
        let t = team_of(rt, team)?;
        rt.teams.destroy(&rt.heap, &rt.net, t)
    })
}

/// PE `src_pe` of `src_team` numbered in `dest_team`, or -1 if it is not in both.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_team_translate_pe(
    src_team: rocshmem_team_t,
    src_pe: c_int,
    dest_team: rocshmem_team_t,
) -> c_int {
    value_call("rocshmem_team_translate_pe", -1, || {
        let rt = rt()?;
        if src_team.is_null() || dest_team.is_null() {
            return Ok(-1);
        }
        let (s, d) = (team_of(rt, src_team)?, team_of(rt, dest_team)?);
        Ok(crate::team::translate(&s, src_pe as i64, &d).map_or(-1, |p| p as c_int))
    })
}

/// Number of PEs in `team`, -1 for ROCSHMEM_TEAM_INVALID.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_team_n_pes(team: rocshmem_team_t) -> c_int {
    value_call("rocshmem_team_n_pes", -1, || {
        let rt = rt()?;
        if team.is_null() {
            return Ok(-1);
        }
        Ok(team_of(rt, team)?.set.size as c_int)
    })
}

/// This PE's number in `team`, -1 for ROCSHMEM_TEAM_INVALID.
#[unsafe(no_mangle)]
pub extern "C" fn rocshmem_team_my_pe(team: rocshmem_team_t) -> c_int {
    value_call("rocshmem_team_my_pe", -1, || {
        let rt = rt()?;
        if team.is_null() {
            return Ok(-1);
        }
        Ok(team_of(rt, team)?.my_idx as c_int)
    })
}
