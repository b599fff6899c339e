//! The container of the NVIDIA stream kernels embedded in librocshmem: written by build.rs at
//! build time, read by the CUDA layer (src/gpu/cuda.rs) when it loads a module. One container
//! per module holds the module's PTX and, when ptxas was found at build time, its SASS for
//! some GPU architectures (cubins), each a zstd frame. The 163 reduction kernels are nearly
//! the same text, so a compressor with a long window takes their 19 MB of PTX to well under
//! 1 MB (DEFLATE's 32 KB window: 3.1 MB).
//!
//! Layout (little endian): `MAGIC`, then per image: kind (u32: [`KIND_PTX`] or
//! [`KIND_CUBIN`]), SM (u32: 90 for sm_90; the PTX's target for PTX), length (u64), zstd frame
//! length (u64), the zstd frame.
//!
//! Shared with the build script (`#[path]`): the writer takes the compressor as an argument
//! (the build script's is the zstd library; the library itself only decodes, with ruzstd,
//! which is Rust and adds no link-time dependency).

/// "rocSHMEM stream kernels", version 1.
pub const MAGIC: &[u8; 8] = b"RSSK\x00\x00\x00\x01";
/// PTX text (without a trailing NUL), JIT-compiled by the driver for any newer GPU.
pub const KIND_PTX: u32 = 0;
/// A cubin (SASS) for exactly one architecture.
pub const KIND_CUBIN: u32 = 1;

/// One image of a container, still compressed.
#[derive(Clone, Copy, Debug)]
pub struct Image<'a> {
    pub kind: u32,
    pub sm: u32,
    pub len: usize,
    pub frame: &'a [u8],
}

impl Image<'_> {
    /// The image's bytes.
    #[allow(dead_code)] // the library's half
    pub fn unpack(&self) -> Result<Vec<u8>, String> {
        use std::io::Read;
        let mut v = Vec::with_capacity(self.len);
        let mut src = self.frame;
        ruzstd::StreamingDecoder::new(&mut src)
            .map_err(|e| format!("an embedded image: {e}"))?
            .take(self.len as u64 + 1)
            .read_to_end(&mut v)
            .map_err(|e| format!("an embedded image: {e}"))?;
        if v.len() != self.len {
            return Err(format!("an embedded image unpacked to {} bytes, not {}", v.len(), self.len));
        }
        Ok(v)
    }
}

/// A container of `images` (kind, SM, bytes), each compressed by `compress` into a zstd frame.
#[allow(dead_code)] // the build script's half
pub fn write(images: &[(u32, u32, &[u8])], compress: impl Fn(&[u8]) -> Vec<u8>) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    for (kind, sm, bytes) in images {
        let frame = compress(bytes);
        out.extend_from_slice(&kind.to_le_bytes());
        out.extend_from_slice(&sm.to_le_bytes());
        out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        out.extend_from_slice(&(frame.len() as u64).to_le_bytes());
        out.extend_from_slice(&frame);
    }
    out
}

/// The images of a container.
#[allow(dead_code)] // the library's half
pub fn read(pack: &[u8]) -> Result<Vec<Image<'_>>, String> {
    let bad = || "an embedded stream-kernel container is malformed (the library is damaged)".to_string();
    let mut rest = pack.strip_prefix(&MAGIC[..]).ok_or_else(bad)?;
    let mut images = Vec::new();
    while !rest.is_empty() {
        if rest.len() < 24 {
            return Err(bad());
        }
        let u32_at = |o: usize| u32::from_le_bytes(rest[o..o + 4].try_into().unwrap());
        let u64_at = |o: usize| u64::from_le_bytes(rest[o..o + 8].try_into().unwrap());
        let (kind, sm, len, n) = (u32_at(0), u32_at(4), u64_at(8) as usize, u64_at(16) as usize);
        if rest.len() - 24 < n {
            return Err(bad());
        }
        images.push(Image { kind, sm, len, frame: &rest[24..24 + n] });
        rest = &rest[24 + n..];
    }
    Ok(images)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_damage() {
        // Text that repeats at a long distance, as the reduction kernels do.
        let block: Vec<u8> =
            (0..300_000u32).map(|i| b"ld.global.v4.u32 {%r1, %r2};\n"[(i % 29) as usize] ^ (i / 7919) as u8).collect();
        let ptx = [block.clone(), block].concat();
        let cubin: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 251) as u8).collect();
        let pack = write(&[(KIND_PTX, 70, &ptx), (KIND_CUBIN, 90, &cubin)], |b| zstd::bulk::compress(b, 3).unwrap());
        assert!(pack.len() < ptx.len() / 4, "compressed: {} bytes", pack.len());
        let images = read(&pack).unwrap();
        assert_eq!(images.len(), 2);
        assert_eq!((images[0].kind, images[0].sm), (KIND_PTX, 70));
        assert_eq!(images[0].unpack().unwrap(), ptx);
        assert_eq!((images[1].kind, images[1].sm), (KIND_CUBIN, 90));
        assert_eq!(images[1].unpack().unwrap(), cubin);
        assert!(read(&pack[..pack.len() - 1]).is_err());
        assert!(read(b"not a container").is_err());
        let mut wrong_len = pack.clone();
        wrong_len[MAGIC.len() + 8] ^= 1; // the PTX's length
        assert!(read(&wrong_len).unwrap()[0].unpack().is_err());
        let mut damaged = pack.clone();
        damaged[MAGIC.len() + 24 + 2] ^= 0xff; // inside the first frame's header
        assert!(read(&damaged).unwrap()[0].unpack().is_err());
    }
}
