//! Messages between a PE and the rendezvous hub: `[u32 length][u8 kind][payload]`, integers
//! big-endian. Everything the bootstrap says goes through [`Msg::encode`] / [`Msg::decode`].

use crate::error::{Error, Result};
use crate::watchdog::Ask;
use std::io::{Read, Write};

pub const PROTOCOL: u16 = 3;
const HELLO_MAGIC: u32 = 0x5253_484d; // "RSHM"
/// Frames larger than this are refused (a peer speaking another protocol, not a real message).
const MAX_FRAME: usize = 1 << 30;
/// The largest first frame the hub reads from a connection that has not authenticated yet: a
/// Hello (kind, magic, protocol, rank, nranks, secret, info length) with up to
/// [`MAX_HELLO_INFO`] bytes of PE info. Nothing larger is allocated before the secret is checked.
pub const MAX_HELLO: usize = 1 + 4 + 2 + 4 + 4 + 16 + 4 + MAX_HELLO_INFO;
/// Bytes of PE info a Hello may carry (pid and host id: `ROCSHMEM_BOOTSTRAP_HOSTID` is limited
/// to fit).
pub const MAX_HELLO_INFO: usize = 1028;

#[derive(Debug, Clone, PartialEq)]
pub enum Msg {
    /// PE → hub: join the job.
    Hello { protocol: u16, rank: u32, nranks: u32, secret: [u8; 16], info: Vec<u8> },
    /// hub → PE: everyone joined; `infos[r]` is what rank `r` sent in its hello.
    Welcome { infos: Vec<Vec<u8>> },
    /// hub → PE: the join was refused (wrong secret, duplicate rank, ...).
    Refuse { reason: String },
    /// PE → hub: contribute to all-gather number `seq`.
    Gather { seq: u64, data: Vec<u8> },
    /// hub → PE: result of all-gather `seq`, one entry per rank.
    Gathered { seq: u64, parts: Vec<Vec<u8>> },
    /// PE → hub: `rocshmem_global_exit(status)`.
    Exit { status: i32 },
    /// hub → PE: the job is over; exit with `status`. `pe` is the PE that caused it (-1: none).
    Abort { status: i32, pe: i32, reason: String },
    /// PE → hub: this PE is in `rocshmem_finalize`.
    Finalize,
    /// hub → PE: every PE is in `rocshmem_finalize`; disconnecting now is not a failure.
    Bye,
    /// PE → hub: this PE's init failed for `reason`; end the job, telling every PE why.
    Failed { reason: String },
    /// PE → hub: where this PE waits (`report`) and for how long its longest wait has lasted:
    /// the answer to a `Query`, or unasked to ask for a report round (`watchdog::Ask`).
    Status { ask: Ask, waited_ms: u64, report: String },
    /// hub → PE: a PE is stuck; say what you wait in (answered by the watcher thread).
    Query,
    /// hub → PE: the report this PE asked for (`Ask::Report`): where every PE waits.
    Report { text: String },
}

struct Enc(Vec<u8>);
impl Enc {
    fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    fn u16(&mut self, v: u16) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn i32(&mut self, v: i32) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn bytes(&mut self, v: &[u8]) -> &mut Self {
        self.u32(v.len() as u32);
        self.0.extend_from_slice(v);
        self
    }
    fn list(&mut self, v: &[Vec<u8>]) -> &mut Self {
        self.u32(v.len() as u32);
        for p in v {
            self.bytes(p);
        }
        self
    }
}

struct Dec<'a>(&'a [u8]);
impl<'a> Dec<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.0.len() < n {
            return Err(Error::Bootstrap("truncated bootstrap message (peer speaks another protocol?)".into()));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_be_bytes(self.take(2)?.try_into().unwrap()))
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_be_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn i32(&mut self) -> Result<i32> {
        Ok(i32::from_be_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_be_bytes(self.take(8)?.try_into().unwrap()))
    }
    fn bytes(&mut self) -> Result<Vec<u8>> {
        let n = self.u32()? as usize;
        Ok(self.take(n)?.to_vec())
    }
    fn string(&mut self) -> Result<String> {
        Ok(String::from_utf8_lossy(&self.bytes()?).into_owned())
    }
    fn list(&mut self) -> Result<Vec<Vec<u8>>> {
        let n = self.u32()? as usize;
        if n > self.0.len() {
            return Err(Error::Bootstrap("bootstrap list longer than its message".into()));
        }
        (0..n).map(|_| self.bytes()).collect()
    }
}

impl Msg {
    fn kind(&self) -> u8 {
        match self {
            Msg::Hello { .. } => 1,
            Msg::Welcome { .. } => 2,
            Msg::Refuse { .. } => 3,
            Msg::Gather { .. } => 4,
            Msg::Gathered { .. } => 5,
            Msg::Exit { .. } => 6,
            Msg::Abort { .. } => 7,
            Msg::Finalize => 8,
            Msg::Bye => 9,
            Msg::Failed { .. } => 10,
            Msg::Status { .. } => 11,
            Msg::Query => 12,
            Msg::Report { .. } => 13,
        }
    }

    /// The whole frame, length prefix included.
    pub fn encode(&self) -> Vec<u8> {
        let mut e = Enc(vec![0, 0, 0, 0]);
        e.u8(self.kind());
        match self {
            Msg::Hello { protocol, rank, nranks, secret, info } => {
                e.u32(HELLO_MAGIC).u16(*protocol).u32(*rank).u32(*nranks);
                e.0.extend_from_slice(secret);
                e.bytes(info);
            }
            Msg::Welcome { infos } => {
                e.list(infos);
            }
            Msg::Refuse { reason } => {
                e.bytes(reason.as_bytes());
            }
            Msg::Gather { seq, data } => {
                e.u64(*seq).bytes(data);
            }
            Msg::Gathered { seq, parts } => {
                e.u64(*seq).list(parts);
            }
            Msg::Exit { status } => {
                e.i32(*status);
            }
            Msg::Abort { status, pe, reason } => {
                e.i32(*status).i32(*pe).bytes(reason.as_bytes());
            }
            Msg::Failed { reason } => {
                e.bytes(reason.as_bytes());
            }
            Msg::Status { ask, waited_ms, report } => {
                e.u8(*ask as u8).u64(*waited_ms).bytes(report.as_bytes());
            }
            Msg::Report { text } => {
                e.bytes(text.as_bytes());
            }
            Msg::Finalize | Msg::Bye | Msg::Query => {}
        }
        let len = (e.0.len() - 4) as u32;
        e.0[0..4].copy_from_slice(&len.to_be_bytes());
        e.0
    }

    /// Decodes one frame body (kind byte and payload, without the length prefix).
    pub fn decode(body: &[u8]) -> Result<Msg> {
        let mut d = Dec(body);
        let msg = match d.u8()? {
            1 => {
                if d.u32()? != HELLO_MAGIC {
                    return Err(Error::Bootstrap("a connection that is not a rocSHMEM PE (bad hello)".into()));
                }
                let protocol = d.u16()?;
                let rank = d.u32()?;
                let nranks = d.u32()?;
                let mut secret = [0u8; 16];
                secret.copy_from_slice(d.take(16)?);
                Msg::Hello { protocol, rank, nranks, secret, info: d.bytes()? }
            }
            2 => Msg::Welcome { infos: d.list()? },
            3 => Msg::Refuse { reason: d.string()? },
            4 => Msg::Gather { seq: d.u64()?, data: d.bytes()? },
            5 => Msg::Gathered { seq: d.u64()?, parts: d.list()? },
            6 => Msg::Exit { status: d.i32()? },
            7 => Msg::Abort { status: d.i32()?, pe: d.i32()?, reason: d.string()? },
            8 => Msg::Finalize,
            9 => Msg::Bye,
            10 => Msg::Failed { reason: d.string()? },
            11 => {
                let ask = d.u8()?;
                let ask = Ask::from_u8(ask).ok_or_else(|| Error::Bootstrap(format!("unknown status kind {ask}")))?;
                Msg::Status { ask, waited_ms: d.u64()?, report: d.string()? }
            }
            12 => Msg::Query,
            13 => Msg::Report { text: d.string()? },
            k => return Err(Error::Bootstrap(format!("unknown bootstrap message kind {k}"))),
        };
        if !d.0.is_empty() {
            return Err(Error::Bootstrap("bootstrap message has trailing bytes".into()));
        }
        Ok(msg)
    }

    pub fn write_to(&self, w: &mut impl Write) -> std::io::Result<()> {
        w.write_all(&self.encode())?;
        w.flush()
    }

    /// Reads one frame. `Ok(None)` is a clean end of stream before a frame started.
    pub fn read_from(r: &mut impl Read) -> Result<Option<Msg>> {
        Msg::read_capped(r, MAX_FRAME)
    }

    /// Reads one frame of at most `max` bytes (after the length prefix): a longer one is refused
    /// before anything is allocated for it.
    pub fn read_capped(r: &mut impl Read, max: usize) -> Result<Option<Msg>> {
        let mut len = [0u8; 4];
        match read_exact_or_eof(r, &mut len) {
            Ok(false) => return Ok(None),
            Ok(true) => {}
            Err(e) => return Err(Error::io("bootstrap read", e)),
        }
        let len = u32::from_be_bytes(len) as usize;
        if len == 0 || len > max {
            return Err(Error::Bootstrap(format!("bootstrap frame of {len} bytes refused (at most {max} here)")));
        }
        let mut body = vec![0u8; len];
        r.read_exact(&mut body).map_err(|e| Error::io("bootstrap read", e))?;
        Msg::decode(&body).map(Some)
    }
}

/// A stream read with one deadline for the whole frame (a peer sending a byte now and then
/// cannot keep a read going past it): each read waits at most until `deadline`.
pub struct Deadline<'a> {
    pub stream: &'a std::net::TcpStream,
    pub deadline: std::time::Instant,
}

impl Read for Deadline<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        self.stream.set_read_timeout(Some(left))?;
        (&mut &*self.stream).read(buf)
    }
}

fn read_exact_or_eof(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<bool> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<Msg> {
        vec![
            Msg::Hello { protocol: PROTOCOL, rank: 3, nranks: 8, secret: [7; 16], info: b"host\0pid".to_vec() },
            Msg::Welcome { infos: vec![vec![], b"a".to_vec(), vec![0; 300]] },
            Msg::Refuse { reason: "wrong secret".into() },
            Msg::Gather { seq: u64::MAX, data: vec![1, 2, 3] },
            Msg::Gathered { seq: 5, parts: vec![vec![9], vec![]] },
            Msg::Exit { status: -3 },
            Msg::Abort { status: 137, pe: 2, reason: "PE 2 died".into() },
            Msg::Finalize,
            Msg::Bye,
            Msg::Failed { reason: "ROCSHMEM_HEAP_SIZE='1' is out of range".into() },
            Msg::Status { ask: Ask::Stop, waited_ms: 3000, report: "rocshmem_barrier_all for 3.0 s".into() },
            Msg::Status { ask: Ask::Answer, waited_ms: 0, report: "is not waiting".into() },
            Msg::Query,
            Msg::Report { text: "PE 0 waits in rocshmem_barrier_all for 60.0 s".into() },
        ]
    }

    #[test]
    fn every_message_round_trips_through_a_stream() {
        let mut stream = Vec::new();
        for m in all() {
            m.write_to(&mut stream).unwrap();
        }
        let mut r = &stream[..];
        for m in all() {
            assert_eq!(Msg::read_from(&mut r).unwrap(), Some(m));
        }
        assert_eq!(Msg::read_from(&mut r).unwrap(), None, "clean EOF");
    }

    #[test]
    fn capped_reads_refuse_long_frames_before_allocating() {
        // 5 bytes announcing a 1 GiB Hello: refused from the header alone.
        let mut r = &[0x40u8, 0, 0, 0, 1][..];
        let e = Msg::read_capped(&mut r, MAX_HELLO).unwrap_err().to_string();
        assert!(e.contains("1073741824 bytes refused"), "{e}");
        let hello =
            Msg::Hello { protocol: PROTOCOL, rank: 0, nranks: 1, secret: [1; 16], info: vec![b'h'; MAX_HELLO_INFO] };
        let frame = hello.encode();
        assert_eq!(frame.len(), 4 + MAX_HELLO, "the largest Hello fits the cap exactly");
        assert_eq!(Msg::read_capped(&mut &frame[..], MAX_HELLO).unwrap(), Some(hello));
    }

    #[test]
    fn truncated_and_foreign_frames_are_errors() {
        let frame = Msg::Gather { seq: 1, data: vec![1; 10] }.encode();
        let mut r = &frame[..frame.len() - 1];
        assert!(Msg::read_from(&mut r).is_err());
        assert!(Msg::decode(&[42]).is_err());
        let mut http = &b"GET / HTTP/1.1\r\n\r\n"[..];
        assert!(Msg::read_from(&mut http).is_err(), "a foreign protocol is refused");
        let mut body = Msg::Bye.encode()[4..].to_vec();
        body.push(0);
        assert!(Msg::decode(&body).is_err(), "trailing bytes");
    }
}
