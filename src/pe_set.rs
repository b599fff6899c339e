//! Sets of PEs in arithmetic progression: teams and OpenSHMEM active sets. A leaf module (no
//! imports from the rest of the crate but the error type), so that every layer can name a set.

use crate::error::{Error, Result};

/// A set of PEs in arithmetic progression: a team, or an OpenSHMEM active set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeSet {
    pub start: usize,
    pub stride: usize,
    pub size: usize,
}

impl PeSet {
    pub fn world(n: usize) -> PeSet {
        PeSet { start: 0, stride: 1, size: n }
    }

    /// World PE of member `i`.
    pub fn pe(&self, i: usize) -> usize {
        self.start + i * self.stride
    }

    /// Member index of world PE `pe`, if it is a member.
    pub fn index_of(&self, pe: usize) -> Option<usize> {
        if pe < self.start || self.stride == 0 {
            return (self.size > 0 && pe == self.start).then_some(0);
        }
        let d = pe - self.start;
        (d % self.stride == 0 && d / self.stride < self.size).then(|| d / self.stride)
    }

    /// Member index of world PE `pe`, or the error saying it is not a member.
    pub fn member_index(&self, pe: usize) -> Result<usize> {
        self.index_of(pe).ok_or_else(|| Error::invalid(format!("PE {pe} is not a member of the set {self:?}")))
    }

    /// Builds and checks an active set (`pe_start`, `log_pe_stride`, `pe_size`) against `n_pes`.
    pub fn active_set(start: i32, log_stride: i32, size: i32, n_pes: usize) -> Result<PeSet> {
        if start < 0 || size < 1 || !(0..31).contains(&log_stride) {
            return Err(Error::invalid(format!(
                "active set PE_start={start}, logPE_stride={log_stride}, PE_size={size} is not valid"
            )));
        }
        let set = PeSet { start: start as usize, stride: 1usize << log_stride, size: size as usize };
        if set.pe(set.size - 1) >= n_pes {
            return Err(Error::invalid(format!(
                "active set PE_start={start}, logPE_stride={log_stride}, PE_size={size} reaches PE {} but there are {n_pes} PEs",
                set.pe(set.size - 1)
            )));
        }
        Ok(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pe_sets() {
        let s = PeSet { start: 1, stride: 2, size: 3 };
        assert_eq!((s.pe(0), s.pe(2)), (1, 5));
        assert_eq!(s.index_of(3), Some(1));
        assert_eq!(s.index_of(4), None);
        assert_eq!(s.index_of(7), None);
        assert_eq!(s.index_of(0), None);
        assert!(PeSet::active_set(0, 1, 4, 8).is_ok());
        assert!(PeSet::active_set(0, 1, 5, 8).is_err());
        assert!(PeSet::active_set(-1, 0, 1, 8).is_err());
        assert!(PeSet::active_set(0, 40, 1, 8).is_err());
    }
}
