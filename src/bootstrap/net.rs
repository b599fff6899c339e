//! Which address the rendezvous listens on: loopback unless `ROCSHMEM_BOOTSTRAP_SOCKET_IFNAME`
//! names an interface, in the family `ROCSHMEM_BOOTSTRAP_SOCKET_FAMILY` asks for.

use crate::error::{Error, Result};
use std::ffi::CStr;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Unspec,
    V4,
    V6,
}

pub fn parse_family(text: &str) -> Result<Family> {
    match text.trim().to_ascii_uppercase().as_str() {
        "" | "AF_UNSPEC" | "UNSPEC" => Ok(Family::Unspec),
        "AF_INET" | "INET" | "IPV4" => Ok(Family::V4),
        "AF_INET6" | "INET6" | "IPV6" => Ok(Family::V6),
        other => Err(Error::invalid(format!(
            "ROCSHMEM_BOOTSTRAP_SOCKET_FAMILY='{other}' is not AF_INET, AF_INET6 or AF_UNSPEC"
        ))),
    }
}

/// The address to listen on (port chosen by the kernel).
pub fn listen_ip(ifname: &str, family: Family) -> Result<IpAddr> {
    if ifname.trim().is_empty() {
        return Ok(match family {
            Family::V6 => IpAddr::V6(Ipv6Addr::LOCALHOST),
            _ => IpAddr::V4(Ipv4Addr::LOCALHOST),
        });
    }
    let addrs = interface_addrs()?;
    let want = ifname.trim();
    // Exact name first, then a prefix ("eth" matches "eth0"), as NCCL-style selectors do.
    let pick = |exact: bool| {
        addrs.iter().find(|(name, ip)| {
            let name_ok = if exact { name == want } else { name.starts_with(want) };
            let fam_ok = match family {
                Family::Unspec => true,
                Family::V4 => ip.is_ipv4(),
                Family::V6 => ip.is_ipv6(),
            };
            name_ok && fam_ok
        })
    };
    match pick(true).or_else(|| pick(false)) {
        Some((_, ip)) => Ok(*ip),
        None => {
            let names: Vec<_> = addrs.iter().map(|(n, ip)| format!("{n}={ip}")).collect();
            Err(Error::Bootstrap(format!(
                "ROCSHMEM_BOOTSTRAP_SOCKET_IFNAME='{want}' matches no interface with a {} address (have: {})",
                match family {
                    Family::V4 => "IPv4",
                    Family::V6 => "IPv6",
                    Family::Unspec => "usable",
                },
                names.join(", ")
            )))
        }
    }
}

/// Every (interface name, address) pair of the machine.
fn interface_addrs() -> Result<Vec<(String, IpAddr)>> {
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list we free below.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return Err(Error::last_os("getifaddrs"));
    }
    let mut out = Vec::new();
    let mut cur = head;
    while !cur.is_null() {
        // SAFETY: `cur` is a node of the list getifaddrs returned.
        let ifa = unsafe { &*cur };
        if !ifa.ifa_addr.is_null() {
            // SAFETY: ifa_name is a NUL-terminated string; ifa_addr points to a sockaddr of the
            // family it declares.
            let name = unsafe { CStr::from_ptr(ifa.ifa_name) }.to_string_lossy().into_owned();
            let fam = unsafe { (*ifa.ifa_addr).sa_family } as i32;
            if fam == libc::AF_INET {
                let sa = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in) };
                out.push((name, IpAddr::V4(Ipv4Addr::from(u32::from_be(sa.sin_addr.s_addr)))));
            } else if fam == libc::AF_INET6 {
                let sa = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in6) };
                out.push((name, IpAddr::V6(Ipv6Addr::from(sa.sin6_addr.s6_addr))));
            }
        }
        cur = ifa.ifa_next;
    }
    // SAFETY: `head` came from getifaddrs.
    unsafe { libc::freeifaddrs(head) };
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_by_default_and_families_parse() {
        assert_eq!(listen_ip("", Family::Unspec).unwrap(), IpAddr::V4(Ipv4Addr::LOCALHOST));
        assert_eq!(listen_ip("", Family::V6).unwrap(), IpAddr::V6(Ipv6Addr::LOCALHOST));
        assert_eq!(parse_family("AF_INET").unwrap(), Family::V4);
        assert!(parse_family("AF_UNIX").is_err());
    }

    #[test]
    fn interface_by_name() {
        let lo = listen_ip("lo", Family::V4).unwrap();
        assert!(lo.is_loopback());
        let e = listen_ip("no-such-if0", Family::Unspec).unwrap_err().to_string();
        assert!(e.contains("no-such-if0"), "{e}");
    }
}
