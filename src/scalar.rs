//! Element types of the typed families, and what the core does with them: single-copy loads
//! and stores, comparisons (wait/test), and reduction arithmetic.
//!
//! `Half` and `BFloat16` are the upstream 16-bit float layouts (`__half`, `__hip_bfloat16`:
//! one `unsigned short`); their arithmetic goes through `f32`, rounded to nearest-even.

use std::cmp::Ordering;
use std::sync::atomic::{AtomicU8, AtomicU16, AtomicU32, AtomicU64, Ordering as Mo};

/// IEEE binary16, as `__half` stores it. (C name: `rocshmem_half_t`.)
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Half {
    pub bits: u16,
}

/// bfloat16, as `__hip_bfloat16` stores it. (C name: `rocshmem_bfloat16_t`.)
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BFloat16 {
    pub bits: u16,
}

impl Half {
    pub fn to_f32(self) -> f32 {
        let h = self.bits as u32;
        let sign = (h & 0x8000) << 16;
        let exp = (h >> 10) & 0x1f;
        let man = h & 0x3ff;
        let bits = if exp == 0 {
            if man == 0 {
                sign
            } else {
                // Subnormal: normalise.
                let mut e = 127 - 15 + 1;
                let mut m = man;
                while m & 0x400 == 0 {
                    m <<= 1;
                    e -= 1;
                }
                sign | ((e as u32) << 23) | ((m & 0x3ff) << 13)
            }
        } else if exp == 0x1f {
            sign | 0x7f80_0000 | (man << 13)
        } else {
            sign | ((exp + 127 - 15) << 23) | (man << 13)
        };
        f32::from_bits(bits)
    }

    pub fn from_f32(f: f32) -> Half {
        let x = f.to_bits();
        let sign = ((x >> 16) & 0x8000) as u16;
        let exp = ((x >> 23) & 0xff) as i32;
        let man = x & 0x7f_ffff;
        if exp == 0xff {
            let nan = if man != 0 { 0x200 | (man >> 13) as u16 } else { 0 };
            return Half { bits: sign | 0x7c00 | nan };
        }
        let e = exp - 127 + 15;
        if e >= 0x1f {
            return Half { bits: sign | 0x7c00 };
        }
        if e <= 0 {
            if e < -10 {
                return Half { bits: sign };
            }
            let m = man | 0x80_0000;
            let shift = (14 - e) as u32;
            let half_bits = m >> shift;
            let rem = m & ((1 << shift) - 1);
            let halfway = 1 << (shift - 1);
            let round = rem > halfway || (rem == halfway && half_bits & 1 == 1);
            return Half { bits: sign | (half_bits + round as u32) as u16 };
        }
        let half_bits = ((e as u32) << 10) | (man >> 13);
        let rem = man & 0x1fff;
        let round = rem > 0x1000 || (rem == 0x1000 && half_bits & 1 == 1);
        Half { bits: sign | (half_bits + round as u32) as u16 }
    }
}

impl BFloat16 {
    pub fn to_f32(self) -> f32 {
        f32::from_bits((self.bits as u32) << 16)
    }

    pub fn from_f32(f: f32) -> BFloat16 {
        let x = f.to_bits();
        if f.is_nan() {
            return BFloat16 { bits: ((x >> 16) as u16) | 0x40 };
        }
        let lsb = (x >> 16) & 1;
        BFloat16 { bits: ((x + 0x7fff + lsb) >> 16) as u16 }
    }
}

/// What every element type supports.
pub trait Scalar: Copy + Send + Sync + 'static {
    /// A load that is single-copy atomic when `p` is naturally aligned.
    fn load(p: *const Self) -> Self;
    /// A store that is single-copy atomic when `p` is naturally aligned.
    fn store(p: *mut Self, v: Self);
    /// Order used by wait/test comparisons (None: unordered, e.g. NaN).
    fn compare(a: Self, b: Self) -> Option<Ordering>;
}

/// Reductions available to every type: sum, product, min, max.
pub trait Arith: Scalar {
    fn sum(a: Self, b: Self) -> Self;
    fn prod(a: Self, b: Self) -> Self;
    fn min(a: Self, b: Self) -> Self;
    fn max(a: Self, b: Self) -> Self;
}

/// Bitwise reductions (integer types).
pub trait Bits: Scalar {
    fn and(a: Self, b: Self) -> Self;
    fn or(a: Self, b: Self) -> Self;
    fn xor(a: Self, b: Self) -> Self;
}

/// Loads/stores `size_of::<T>()` bytes through the atomic of that width when aligned.
#[inline]
fn atomic_load<T: Copy>(p: *const T) -> T {
    let a = p as usize;
    // SAFETY: the caller guarantees `p` points to a readable T; the atomic path is used only
    // when the address is aligned for the atomic's width.
    unsafe {
        match std::mem::size_of::<T>() {
            1 => std::mem::transmute_copy(&(*(p as *const AtomicU8)).load(Mo::Relaxed)),
            2 if a % 2 == 0 => std::mem::transmute_copy(&(*(p as *const AtomicU16)).load(Mo::Relaxed)),
            4 if a % 4 == 0 => std::mem::transmute_copy(&(*(p as *const AtomicU32)).load(Mo::Relaxed)),
            8 if a % 8 == 0 => std::mem::transmute_copy(&(*(p as *const AtomicU64)).load(Mo::Relaxed)),
            _ => std::ptr::read_volatile(p),
        }
    }
}

#[inline]
fn atomic_store<T: Copy>(p: *mut T, v: T) {
    let a = p as usize;
    // SAFETY: as in atomic_load, for a writable T.
    unsafe {
        match std::mem::size_of::<T>() {
            1 => (*(p as *const AtomicU8)).store(std::mem::transmute_copy(&v), Mo::Relaxed),
            2 if a % 2 == 0 => (*(p as *const AtomicU16)).store(std::mem::transmute_copy(&v), Mo::Relaxed),
            4 if a % 4 == 0 => (*(p as *const AtomicU32)).store(std::mem::transmute_copy(&v), Mo::Relaxed),
            8 if a % 8 == 0 => (*(p as *const AtomicU64)).store(std::mem::transmute_copy(&v), Mo::Relaxed),
            _ => std::ptr::write_volatile(p, v),
        }
    }
}

macro_rules! int_scalar {
    ($($t:ty)*) => {$(
        impl Scalar for $t {
            fn load(p: *const Self) -> Self { atomic_load(p) }
            fn store(p: *mut Self, v: Self) { atomic_store(p, v) }
            fn compare(a: Self, b: Self) -> Option<Ordering> { Some(a.cmp(&b)) }
        }
        impl Arith for $t {
            fn sum(a: Self, b: Self) -> Self { a.wrapping_add(b) }
            fn prod(a: Self, b: Self) -> Self { a.wrapping_mul(b) }
            fn min(a: Self, b: Self) -> Self { Ord::min(a, b) }
            fn max(a: Self, b: Self) -> Self { Ord::max(a, b) }
        }
        impl Bits for $t {
            fn and(a: Self, b: Self) -> Self { a & b }
            fn or(a: Self, b: Self) -> Self { a | b }
            fn xor(a: Self, b: Self) -> Self { a ^ b }
        }
    )*};
}
int_scalar!(i8 i16 i32 i64 u8 u16 u32 u64 isize usize);

macro_rules! float_scalar {
    ($($t:ty)*) => {$(
        impl Scalar for $t {
            fn load(p: *const Self) -> Self { atomic_load(p) }
            fn store(p: *mut Self, v: Self) { atomic_store(p, v) }
            fn compare(a: Self, b: Self) -> Option<Ordering> { a.partial_cmp(&b) }
        }
        impl Arith for $t {
            fn sum(a: Self, b: Self) -> Self { a + b }
            fn prod(a: Self, b: Self) -> Self { a * b }
            fn min(a: Self, b: Self) -> Self { if b < a { b } else { a } }
            fn max(a: Self, b: Self) -> Self { if b > a { b } else { a } }
        }
    )*};
}
float_scalar!(f32 f64);

macro_rules! f16_scalar {
    ($($t:ty)*) => {$(
        impl Scalar for $t {
            fn load(p: *const Self) -> Self { atomic_load(p) }
            fn store(p: *mut Self, v: Self) { atomic_store(p, v) }
            fn compare(a: Self, b: Self) -> Option<Ordering> { a.to_f32().partial_cmp(&b.to_f32()) }
        }
        impl Arith for $t {
            fn sum(a: Self, b: Self) -> Self { <$t>::from_f32(a.to_f32() + b.to_f32()) }
            fn prod(a: Self, b: Self) -> Self { <$t>::from_f32(a.to_f32() * b.to_f32()) }
            fn min(a: Self, b: Self) -> Self { if b.to_f32() < a.to_f32() { b } else { a } }
            fn max(a: Self, b: Self) -> Self { if b.to_f32() > a.to_f32() { b } else { a } }
        }
    )*};
}
f16_scalar!(Half BFloat16);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_round_trips_every_finite_value() {
        for bits in 0..=u16::MAX {
            let h = Half { bits };
            let f = h.to_f32();
            if f.is_nan() {
                assert!(Half::from_f32(f).to_f32().is_nan());
            } else {
                assert_eq!(Half::from_f32(f).bits, bits, "bits {bits:#x} -> {f}");
            }
        }
    }

    #[test]
    fn half_rounding_and_ranges() {
        assert_eq!(Half::from_f32(1.0).bits, 0x3c00);
        assert_eq!(Half::from_f32(65504.0).bits, 0x7bff);
        assert_eq!(Half::from_f32(1e6).bits, 0x7c00, "overflow to infinity");
        assert_eq!(Half::from_f32(1.0 + 1.0 / 2048.0).bits, 0x3c00, "ties to even");
        assert_eq!(Half::from_f32(1.0 + 3.0 / 2048.0).bits, 0x3c02);
        assert_eq!(Half::from_f32(5.96e-8).bits, 0x0001, "smallest subnormal");
        assert_eq!(Half::sum(Half::from_f32(1.5), Half::from_f32(2.25)).to_f32(), 3.75);
    }

    #[test]
    fn bfloat16_conversions() {
        assert_eq!(BFloat16::from_f32(1.0).bits, 0x3f80);
        assert_eq!(BFloat16::from_f32(-2.0).to_f32(), -2.0);
        assert_eq!(BFloat16::from_f32(1.0 + 1.0 / 256.0).bits, 0x3f80, "ties to even");
        assert!(BFloat16::from_f32(f32::NAN).to_f32().is_nan());
        assert_eq!(BFloat16::max(BFloat16::from_f32(3.0), BFloat16::from_f32(-7.0)).to_f32(), 3.0);
    }

    #[test]
    fn integer_ops_wrap() {
        assert_eq!(i8::sum(127, 1), -128);
        assert_eq!(u16::prod(300, 300), 300u16.wrapping_mul(300));
        assert_eq!(<u32 as Bits>::xor(0b1100, 0b1010), 0b0110);
    }
}
