//! Which RDMA NIC a PE uses: the devices under `/sys/class/infiniband`, their ports, link layers
//! and GIDs (all from sysfs, readable without opening a device), filtered by
//! `ROCSHMEM_GDA_PROVIDER`, `ROCSHMEM_HCA_LIST` and `ROCSHMEM_USE_IB_HCA` as upstream, and the
//! one closest to the PE's GPU on the PCIe tree. With no usable NIC, [`choose`] says why in one
//! line. Tested on fake sysfs trees (tests below); never run against a real NIC here.

use std::path::{Path, PathBuf};

/// NIC families (the provider upstream calls them by).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Provider {
    Mlx5,
    Bnxt,
    Ionic,
    Other(String),
}

impl Provider {
    fn from_driver(driver: &str, name: &str) -> Provider {
        match driver {
            "mlx5_core" => Provider::Mlx5,
            "bnxt_en" => Provider::Bnxt,
            "ionic" => Provider::Ionic,
            _ if name.starts_with("mlx5_") => Provider::Mlx5,
            _ if name.starts_with("bnxt_re") => Provider::Bnxt,
            _ if name.starts_with("ionic") => Provider::Ionic,
            _ => Provider::Other(driver.to_string()),
        }
    }

    /// The `ROCSHMEM_GDA_PROVIDER` spelling(s) of this family.
    pub fn matches(&self, want: &str) -> bool {
        matches!(
            (self, want.trim().to_ascii_lowercase().as_str()),
            (_, "") | (Provider::Mlx5, "mlx5") | (Provider::Bnxt, "bnxt") | (Provider::Ionic, "ionic" | "pensando")
        )
    }

    pub fn name(&self) -> &str {
        match self {
            Provider::Mlx5 => "mlx5",
            Provider::Bnxt => "bnxt",
            Provider::Ionic => "ionic",
            Provider::Other(d) => d,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Gid {
    pub index: u16,
    pub gid: [u8; 16],
    /// "RoCE v2", "IB/RoCE v1", or empty when sysfs does not say.
    pub kind: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Port {
    pub num: u8,
    pub active: bool,
    /// The state text, e.g. "4: ACTIVE".
    pub state: String,
    /// "InfiniBand" or "Ethernet".
    pub link_layer: String,
    pub gids: Vec<Gid>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Nic {
    pub name: String,
    pub provider: Provider,
    /// The PCI function's directory, with symlinks resolved (its path is its place in the tree).
    pub pci: Option<PathBuf>,
    pub ports: Vec<Port>,
}

fn read(p: &Path) -> Option<String> {
    std::fs::read_to_string(p).ok().map(|s| s.trim().to_string())
}

fn parse_gid(text: &str) -> Option<[u8; 16]> {
    let groups: Vec<&str> = text.split(':').collect();
    if groups.len() != 8 {
        return None;
    }
    let mut g = [0u8; 16];
    for (i, part) in groups.iter().enumerate() {
        let v = u16::from_str_radix(part, 16).ok()?;
        g[2 * i..2 * i + 2].copy_from_slice(&v.to_be_bytes());
    }
    Some(g)
}

/// Every RDMA device under `<sysfs>/class/infiniband`; Err with the reason when there is none.
pub fn scan(sysfs: &Path) -> Result<Vec<Nic>, String> {
    let class = sysfs.join("class/infiniband");
    let entries = std::fs::read_dir(&class).map_err(|_| {
        format!("no RDMA device: {} does not exist (no RDMA NIC, or its kernel driver is not loaded)", class.display())
    })?;
    let mut nics = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let dir = class.join(&name);
        let pci = std::fs::canonicalize(dir.join("device")).ok();
        let driver = std::fs::read_link(dir.join("device/driver"))
            .ok()
            .and_then(|p| p.file_name().map(|f| f.to_string_lossy().into_owned()))
            .unwrap_or_default();
        let mut ports = Vec::new();
        if let Ok(ps) = std::fs::read_dir(dir.join("ports")) {
            for p in ps.flatten() {
                let Ok(num) = p.file_name().to_string_lossy().parse::<u8>() else { continue };
                let pd = p.path();
                let state = read(&pd.join("state")).unwrap_or_default();
                let mut gids = Vec::new();
                if let Ok(gs) = std::fs::read_dir(pd.join("gids")) {
                    for g in gs.flatten() {
                        let Ok(index) = g.file_name().to_string_lossy().parse::<u16>() else { continue };
                        let Some(gid) = read(&g.path()).and_then(|t| parse_gid(&t)) else { continue };
                        if gid == [0; 16] {
                            continue;
                        }
                        let kind = read(&pd.join(format!("gid_attrs/types/{index}"))).unwrap_or_default();
                        gids.push(Gid { index, gid, kind });
                    }
                }
                gids.sort_by_key(|g| g.index);
                ports.push(Port {
                    num,
                    active: state.ends_with("ACTIVE") && state.starts_with('4'),
                    state,
                    link_layer: read(&pd.join("link_layer")).unwrap_or_default(),
                    gids,
                });
            }
        }
        ports.sort_by_key(|p| p.num);
        nics.push(Nic { provider: Provider::from_driver(&driver, &name), name, pci, ports });
    }
    nics.sort_by(|a, b| a.name.cmp(&b.name));
    if nics.is_empty() {
        return Err(format!("no RDMA device: {} is empty", class.display()));
    }
    Ok(nics)
}

/// Hops between two PCI functions on the PCIe tree: up from one to the deepest common bridge,
/// then down to the other. Functions under different host bridges (another root complex,
/// usually another socket) are as far apart as the two paths are long, plus 8.
pub fn pci_distance(a: &Path, b: &Path) -> usize {
    let pa: Vec<_> = a.components().collect();
    let pb: Vec<_> = b.components().collect();
    let common = pa.iter().zip(&pb).take_while(|(x, y)| x == y).count();
    let root = pa.iter().position(|c| c.as_os_str().to_string_lossy().starts_with("pci")).unwrap_or(pa.len());
    let cross = if common <= root { 8 } else { 0 };
    (pa.len() - common) + (pb.len() - common) + cross
}

/// The environment's choices (`ROCSHMEM_GDA_PROVIDER`, `ROCSHMEM_HCA_LIST`,
/// `ROCSHMEM_USE_IB_HCA`, `ROCSHMEM_GDA_GID_INDEX`).
#[derive(Debug, Clone, Default)]
pub struct Filters {
    pub provider: String,
    pub hca_list: String,
    pub use_hca: String,
    pub gid_index: i64,
}

/// A NIC, port and GID for one PE.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    pub nic: String,
    pub provider: Provider,
    pub port: u8,
    pub link_layer: String,
    /// The GID to use (RoCE: a RoCE v2 one when there is one; InfiniBand: none needed).
    pub gid: Option<Gid>,
    pub distance: usize,
}

/// "name" or "name:port" entries of a list variable.
fn entries(list: &str) -> Vec<(String, Option<u8>)> {
    list.split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(|e| match e.split_once(':') {
            Some((n, p)) => (n.to_string(), p.parse().ok()),
            None => (e.to_string(), None),
        })
        .collect()
}

fn pick_gid(port: &Port, want: i64) -> Result<Option<Gid>, String> {
    if want >= 0 {
        return port
            .gids
            .iter()
            .find(|g| g.index as i64 == want)
            .cloned()
            .map(Some)
            .ok_or_else(|| format!("ROCSHMEM_GDA_GID_INDEX={want}: port {} has no such GID", port.num));
    }
    if port.link_layer != "Ethernet" {
        return Ok(None);
    }
    let v2 = |g: &&Gid| g.kind.eq_ignore_ascii_case("RoCE v2");
    let ipv4 = |g: &&Gid| g.gid[..10] == [0; 10] && g.gid[10..12] == [0xff, 0xff];
    Ok(port.gids.iter().filter(v2).find(ipv4).or_else(|| port.gids.iter().find(v2)).or(port.gids.first()).cloned())
}

/// Chooses a NIC and port for the GPU at `gpu_pci` (None: no GPU, the first suitable NIC),
/// the `ordinal`-th GPU of the node spreading over NICs at the same distance. Err: one line.
pub fn choose(nics: &[Nic], gpu_pci: Option<&Path>, f: &Filters, ordinal: usize) -> Result<Choice, String> {
    let found = || nics.iter().map(|n| n.name.as_str()).collect::<Vec<_>>().join(", ");
    let list = f.hca_list.trim();
    let (exclude, names) = match list.strip_prefix('^') {
        Some(rest) => (true, entries(rest)),
        None => (false, entries(list)),
    };
    let forced = entries(&f.use_hca);
    let mut candidates: Vec<(usize, &Nic, &Port)> = Vec::new();
    let mut why_not = Vec::new();
    for nic in nics {
        if !forced.is_empty() && !forced.iter().any(|(n, _)| *n == nic.name) {
            continue;
        }
        if !names.is_empty() && names.iter().any(|(n, _)| *n == nic.name) == exclude {
            continue;
        }
        if !nic.provider.matches(&f.provider) {
            why_not.push(format!("{} is {}", nic.name, nic.provider.name()));
            continue;
        }
        let port_ok = |p: &Port| {
            let sel = forced.iter().chain(names.iter().filter(|_| !exclude)).find(|(n, _)| *n == nic.name);
            sel.is_none_or(|(_, want)| want.is_none_or(|w| w == p.num))
        };
        for port in nic.ports.iter().filter(|p| port_ok(p)) {
            if !port.active {
                why_not.push(format!("{} port {} is {}", nic.name, port.num, port.state));
                continue;
            }
            let d = match (gpu_pci, &nic.pci) {
                (Some(g), Some(n)) => pci_distance(g, n),
                _ => 0,
            };
            candidates.push((d, nic, port));
            break;
        }
    }
    let settings = [
        ("ROCSHMEM_USE_IB_HCA", &f.use_hca),
        ("ROCSHMEM_HCA_LIST", &f.hca_list),
        ("ROCSHMEM_GDA_PROVIDER", &f.provider),
    ]
    .iter()
    .filter(|(_, v)| !v.trim().is_empty())
    .map(|(k, v)| format!("{k}={v}"))
    .collect::<Vec<_>>();
    if candidates.is_empty() {
        let set = if settings.is_empty() { String::new() } else { format!(" with {}", settings.join(" ")) };
        let detail = if why_not.is_empty() { String::new() } else { format!(": {}", why_not.join("; ")) };
        return Err(format!("no usable RDMA NIC{set} (found: {}){detail}", found()));
    }
    let best = candidates.iter().map(|c| c.0).min().unwrap_or(0);
    let nearest: Vec<_> = candidates.iter().filter(|c| c.0 == best).collect();
    let (d, nic, port) = nearest[ordinal % nearest.len()];
    Ok(Choice {
        nic: nic.name.clone(),
        provider: nic.provider.clone(),
        port: port.num,
        link_layer: port.link_layer.clone(),
        gid: pick_gid(port, f.gid_index)?,
        distance: *d,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A port of a fake NIC: state, link layer, and (GID, GID type) entries.
    pub(crate) type PortSpec<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)]);

    /// A fake sysfs: PCI functions under two root complexes, NICs in class/infiniband.
    pub(crate) struct FakeSys {
        pub root: PathBuf,
    }

    impl FakeSys {
        pub(crate) fn new(tag: &str) -> FakeSys {
            // Tests run in parallel: every tree gets its own folder.
            static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
            let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let root = std::env::temp_dir().join(format!("rocshmem-gda-sysfs-{tag}-{}-{n}", std::process::id()));
            let _ = std::fs::remove_dir_all(&root);
            std::fs::create_dir_all(root.join("class/infiniband")).unwrap();
            std::fs::create_dir_all(root.join("bus/pci/drivers/mlx5_core")).unwrap();
            std::fs::create_dir_all(root.join("bus/pci/drivers/bnxt_en")).unwrap();
            FakeSys { root }
        }

        pub(crate) fn pci(&self, path: &str) -> PathBuf {
            let p = self.root.join("devices").join(path);
            std::fs::create_dir_all(&p).unwrap();
            std::fs::canonicalize(p).unwrap()
        }

        /// A NIC at PCI `path` with one port per entry of `ports` (state, link layer, gids).
        pub(crate) fn nic(&self, name: &str, driver: &str, path: &str, ports: &[PortSpec]) {
            let dev = self.pci(path);
            let ib = dev.join("infiniband").join(name);
            std::fs::create_dir_all(&ib).unwrap();
            symlink(&dev, ib.join("device")).unwrap();
            symlink(self.root.join("bus/pci/drivers").join(driver), dev.join("driver")).unwrap();
            for (i, (state, ll, gids)) in ports.iter().enumerate() {
                let pd = ib.join(format!("ports/{}", i + 1));
                std::fs::create_dir_all(pd.join("gids")).unwrap();
                std::fs::create_dir_all(pd.join("gid_attrs/types")).unwrap();
                std::fs::write(pd.join("state"), format!("{state}\n")).unwrap();
                std::fs::write(pd.join("link_layer"), format!("{ll}\n")).unwrap();
                for (j, (gid, kind)) in gids.iter().enumerate() {
                    std::fs::write(pd.join(format!("gids/{j}")), format!("{gid}\n")).unwrap();
                    std::fs::write(pd.join(format!("gid_attrs/types/{j}")), format!("{kind}\n")).unwrap();
                }
            }
            symlink(&ib, self.root.join("class/infiniband").join(name)).unwrap();
        }
    }

    impl Drop for FakeSys {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.root);
        }
    }

    const ACTIVE: &str = "4: ACTIVE";
    const DOWN: &str = "1: DOWN";
    const LL: &str = "fe80:0000:0000:0000:0202:c9ff:fe00:0001";
    const V4: &str = "0000:0000:0000:0000:0000:ffff:0a00:0001";

    fn tree() -> FakeSys {
        let s = FakeSys::new("tree");
        let eth =
            [(ACTIVE, "Ethernet", &[(LL, "IB/RoCE v1"), (LL, "RoCE v2"), (V4, "IB/RoCE v1"), (V4, "RoCE v2")][..])];
        s.nic("mlx5_0", "mlx5_core", "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0", &eth);
        s.nic("mlx5_1", "mlx5_core", "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0", &eth);
        s.nic("mlx5_2", "mlx5_core", "pci0000:80/0000:80:01.0/0000:81:00.0", &eth);
        s.nic("mlx5_3", "mlx5_core", "pci0000:80/0000:80:02.0/0000:82:00.0", &[(DOWN, "InfiniBand", &[][..])]);
        s.nic(
            "bnxt_re0",
            "bnxt_en",
            "pci0000:80/0000:80:03.0/0000:83:00.0",
            &[(ACTIVE, "Ethernet", &[(V4, "RoCE v2")][..])],
        );
        s
    }

    fn f() -> Filters {
        Filters { gid_index: -1, ..Default::default() }
    }

    #[test]
    fn nearest_nic_to_each_gpu_and_spreading() {
        let s = tree();
        let nics = scan(&s.root).unwrap();
        assert_eq!(nics.len(), 5);
        assert_eq!(nics[0].provider, Provider::Bnxt);
        // A GPU behind the same switch as mlx5_0 and mlx5_1: both 2 hops away; GPUs alternate.
        let gpu0 = s.pci("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:02.0");
        let c0 = choose(&nics, Some(&gpu0), &f(), 0).unwrap();
        let c1 = choose(&nics, Some(&gpu0), &f(), 1).unwrap();
        assert_eq!((c0.nic.as_str(), c1.nic.as_str(), c0.distance), ("mlx5_0", "mlx5_1", 2));
        // A GPU on the other socket gets mlx5_2 (bnxt_re0 is as near but mlx5 is asked for).
        let gpu1 = s.pci("pci0000:80/0000:80:01.0/0000:81:00.1");
        let mut ff = f();
        ff.provider = "mlx5".into();
        assert_eq!(choose(&nics, Some(&gpu1), &ff, 0).unwrap().nic, "mlx5_2");
        // RoCE: the IPv4-mapped RoCE v2 GID.
        assert_eq!(c0.gid.unwrap().index, 3);
        assert_eq!(c0.link_layer, "Ethernet");
        assert!(pci_distance(&gpu0, nics[3].pci.as_ref().unwrap()) > 8);
    }

    #[test]
    fn filters_and_reasons() {
        let s = tree();
        let nics = scan(&s.root).unwrap();
        let with = |hca: &str, use_hca: &str, provider: &str| {
            let ff =
                Filters { hca_list: hca.into(), use_hca: use_hca.into(), provider: provider.into(), gid_index: -1 };
            choose(&nics, None, &ff, 0)
        };
        assert_eq!(with("^mlx5_0,mlx5_1", "", "mlx5").unwrap().nic, "mlx5_2");
        assert_eq!(with("mlx5_1", "", "").unwrap().nic, "mlx5_1");
        assert_eq!(with("", "bnxt_re0", "").unwrap().provider, Provider::Bnxt);
        let e = with("", "mlx5_3", "").unwrap_err();
        assert!(e.contains("ROCSHMEM_USE_IB_HCA=mlx5_3") && e.contains("mlx5_3 port 1 is 1: DOWN"), "{e}");
        let e = with("", "", "ionic").unwrap_err();
        assert!(
            e.starts_with("no usable RDMA NIC with ROCSHMEM_GDA_PROVIDER=ionic") && e.contains("mlx5_0 is mlx5"),
            "{e}"
        );
        let ff = Filters { gid_index: 9, ..f() };
        assert!(choose(&nics, None, &ff, 0).unwrap_err().contains("ROCSHMEM_GDA_GID_INDEX=9"));
    }

    #[test]
    fn no_rdma_device_says_so() {
        let s = FakeSys::new("empty");
        assert!(scan(&s.root).unwrap_err().contains("is empty"));
        let e = scan(&s.root.join("nowhere")).unwrap_err();
        assert!(e.starts_with("no RDMA device: ") && e.contains("does not exist"), "{e}");
        assert!(!e.contains('\n'));
    }
}
