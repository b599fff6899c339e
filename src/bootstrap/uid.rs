//! The 128-byte unique id: where the rendezvous listens, and the secret a PE must present.
//!
//! Layout (all integers big-endian): `RSHM` magic, format version, address family (4 or 6),
//! port, 16 address bytes, 16 secret bytes, an 8-byte job tag (names this job's shared-memory
//! segments), zero padding to [`UID_BYTES`].

use crate::error::{Error, Result};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

pub const UID_BYTES: usize = 128;
const MAGIC: &[u8; 4] = b"RSHM";
const FORMAT: u8 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UniqueId {
    pub addr: SocketAddr,
    pub secret: [u8; 16],
    pub job_tag: u64,
}

impl UniqueId {
    /// A fresh id for a rendezvous listening at `addr`, with a random secret and job tag.
    pub fn new(addr: SocketAddr) -> Result<UniqueId> {
        let mut secret = [0u8; 16];
        random_bytes(&mut secret)?;
        let mut tag = [0u8; 8];
        random_bytes(&mut tag)?;
        Ok(UniqueId { addr, secret, job_tag: u64::from_be_bytes(tag) })
    }

    pub fn to_bytes(&self) -> [u8; UID_BYTES] {
        let mut b = [0u8; UID_BYTES];
        b[0..4].copy_from_slice(MAGIC);
        b[4] = FORMAT;
        match self.addr.ip() {
            IpAddr::V4(ip) => {
                b[5] = 4;
                b[8..12].copy_from_slice(&ip.octets());
            }
            IpAddr::V6(ip) => {
                b[5] = 6;
                b[8..24].copy_from_slice(&ip.octets());
            }
        }
        b[6..8].copy_from_slice(&self.addr.port().to_be_bytes());
        b[24..40].copy_from_slice(&self.secret);
        b[40..48].copy_from_slice(&self.job_tag.to_be_bytes());
        b
    }

    pub fn from_bytes(b: &[u8]) -> Result<UniqueId> {
        if b.len() != UID_BYTES || &b[0..4] != MAGIC {
            return Err(Error::Bootstrap(
                "the unique id is not one made by rocshmem_get_uniqueid (bad magic); \
                 pass the bytes from the root PE unchanged"
                    .into(),
            ));
        }
        if b[4] != FORMAT {
            return Err(Error::Bootstrap(format!(
                "the unique id has format {} but this library reads format {FORMAT}; use the same rocSHMEM build on every PE",
                b[4]
            )));
        }
        let port = u16::from_be_bytes([b[6], b[7]]);
        let ip = match b[5] {
            4 => IpAddr::V4(Ipv4Addr::new(b[8], b[9], b[10], b[11])),
            6 => {
                let mut o = [0u8; 16];
                o.copy_from_slice(&b[8..24]);
                IpAddr::V6(Ipv6Addr::from(o))
            }
            f => return Err(Error::Bootstrap(format!("the unique id names address family {f}"))),
        };
        let mut secret = [0u8; 16];
        secret.copy_from_slice(&b[24..40]);
        let mut tag = [0u8; 8];
        tag.copy_from_slice(&b[40..48]);
        Ok(UniqueId { addr: SocketAddr::new(ip, port), secret, job_tag: u64::from_be_bytes(tag) })
    }

    /// Lower-case hex of the 128 bytes (how `rocshmem-run` passes the id to its children).
    pub fn to_hex(&self) -> String {
        self.to_bytes().iter().map(|b| format!("{b:02x}")).collect()
    }

    pub fn from_hex(s: &str) -> Result<UniqueId> {
        let s = s.trim();
        if s.len() != 2 * UID_BYTES || !s.is_ascii() {
            return Err(Error::Bootstrap(format!("a unique id in hex has {} digits, got {}", 2 * UID_BYTES, s.len())));
        }
        let mut b = [0u8; UID_BYTES];
        for (i, chunk) in s.as_bytes().chunks(2).enumerate() {
            let h = std::str::from_utf8(chunk).unwrap_or("zz");
            b[i] =
                u8::from_str_radix(h, 16).map_err(|_| Error::Bootstrap("unique id hex has a non-hex digit".into()))?;
        }
        UniqueId::from_bytes(&b)
    }
}

/// Fills `buf` from the kernel's random source.
pub fn random_bytes(buf: &mut [u8]) -> Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        // SAFETY: the pointer and length describe the unfilled tail of `buf`.
        let n = unsafe { libc::getrandom(buf[filled..].as_mut_ptr().cast(), buf.len() - filled, 0) };
        if n < 0 {
            let err = std::io::Error::last_os_error();
            if err.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(Error::io("getrandom", err));
        }
        filled += n as usize;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_v4_and_v6() {
        for addr in ["127.0.0.1:4567", "[::1]:80", "[fe80::1:2:3:4]:65535"] {
            let id = UniqueId::new(addr.parse().unwrap()).unwrap();
            let back = UniqueId::from_bytes(&id.to_bytes()).unwrap();
            assert_eq!(id, back);
            assert_eq!(UniqueId::from_hex(&id.to_hex()).unwrap(), id);
        }
    }

    #[test]
    fn secrets_differ() {
        let a = UniqueId::new("127.0.0.1:1".parse().unwrap()).unwrap();
        let b = UniqueId::new("127.0.0.1:1".parse().unwrap()).unwrap();
        assert_ne!(a.secret, b.secret);
        assert_ne!(a.job_tag, b.job_tag);
    }

    #[test]
    fn garbage_is_refused_with_a_reason() {
        let e = UniqueId::from_bytes(&[0u8; UID_BYTES]).unwrap_err().to_string();
        assert!(e.contains("bad magic"), "{e}");
        assert!(UniqueId::from_hex("abcd").is_err());
        let mut b = UniqueId::new("127.0.0.1:1".parse().unwrap()).unwrap().to_bytes();
        b[4] = 9;
        assert!(UniqueId::from_bytes(&b).unwrap_err().to_string().contains("format 9"));
    }
}
