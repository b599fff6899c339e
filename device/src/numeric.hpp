/**
 * @file numeric.hpp
 * Arithmetic on every element type of the API, the 16-bit floats included.
 *
 * __half and __hip_bfloat16 are handled by their bits (IEEE binary16 and bfloat16), so the
 * same code runs on every platform without the vendors' intrinsics: values are widened to
 * float, combined, and rounded back to nearest-even.
 */
#ifndef ROCSHMEM_DEVICE_NUMERIC_HPP
#define ROCSHMEM_DEVICE_NUMERIC_HPP

#include "common.hpp"

namespace rocshmem {
namespace dev {

ROCSHMEM_DEV_INLINE float bits_to_float(uint32_t u) {
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}

ROCSHMEM_DEV_INLINE uint32_t float_to_bits(float f) {
  uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  return u;
}

ROCSHMEM_DEV_INLINE float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0x1f) return bits_to_float(sign | 0x7f800000u | (man << 13));  // inf / nan
  if (exp == 0) {
    if (man == 0) return bits_to_float(sign);
    float f = float(man) * (1.0f / 16777216.0f);  // subnormal: man * 2^-24
    return sign ? -f : f;
  }
  return bits_to_float(sign | ((exp + 112) << 23) | (man << 13));
}

ROCSHMEM_DEV_INLINE uint16_t float_to_half(float f) {
  uint32_t u = float_to_bits(f);
  uint16_t sign = uint16_t((u >> 16) & 0x8000);
  uint32_t exp = (u >> 23) & 0xff, man = u & 0x7fffff;
  if (exp == 0xff) return uint16_t(sign | 0x7c00 | (man ? 0x200 : 0));
  int e = int(exp) - 112;
  if (e >= 0x1f) return uint16_t(sign | 0x7c00);  // overflow to inf
  if (e <= 0) {
    if (e < -10) return sign;  // underflow to zero
    man |= 0x800000;
    int shift = 14 - e;
    uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) ++h;
    return uint16_t(sign | h);
  }
  uint32_t h = (uint32_t(e) << 10) | (man >> 13), rem = man & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;  // may carry into the exponent: correct
  return uint16_t(sign | h);
}

ROCSHMEM_DEV_INLINE float bf16_to_float(uint16_t b) { return bits_to_float(uint32_t(b) << 16); }

ROCSHMEM_DEV_INLINE uint16_t float_to_bf16(float f) {
  uint32_t u = float_to_bits(f);
  if ((u & 0x7fffffff) > 0x7f800000) return uint16_t((u >> 16) | 0x40);  // quiet nan
  u += 0x7fff + ((u >> 16) & 1);
  return uint16_t(u >> 16);
}

/** How a type is computed with: itself, or float for the 16-bit floats. */
template <class T>
struct Num {
  using calc = T;
  ROCSHMEM_DEV_INLINE static T to(T v) { return v; }
  ROCSHMEM_DEV_INLINE static T from(T v) { return v; }
};

template <>
struct Num<__half> {
  using calc = float;
  ROCSHMEM_DEV_INLINE static float to(__half v) {
    uint16_t b;
    __builtin_memcpy(&b, &v, 2);
    return half_to_float(b);
  }
  ROCSHMEM_DEV_INLINE static __half from(float f) {
    uint16_t b = float_to_half(f);
    __half v;
    __builtin_memcpy(&v, &b, 2);
    return v;
  }
};

template <>
struct Num<__hip_bfloat16> {
  using calc = float;
  ROCSHMEM_DEV_INLINE static float to(__hip_bfloat16 v) {
    uint16_t b;
    __builtin_memcpy(&b, &v, 2);
    return bf16_to_float(b);
  }
  ROCSHMEM_DEV_INLINE static __hip_bfloat16 from(float f) {
    uint16_t b = float_to_bf16(f);
    __hip_bfloat16 v;
    __builtin_memcpy(&v, &b, 2);
    return v;
  }
};

/** Reduction ops, numbered as ROCSHMEM_OP. */
enum class Op { sum = 0, max = 1, min = 2, prod = 3, and_ = 4, or_ = 5, xor_ = 6 };

template <Op OP, class C>
ROCSHMEM_DEV_INLINE C combine(C a, C b) {
  // Integers wrap (through uint64_t: no signed overflow, no promotion surprises).
  if constexpr (OP == Op::sum) {
    if constexpr (std::is_integral<C>::value) return C(uint64_t(a) + uint64_t(b));
    else return C(a + b);
  } else if constexpr (OP == Op::prod) {
    if constexpr (std::is_integral<C>::value) return C(uint64_t(a) * uint64_t(b));
    else return C(a * b);
  }
  else if constexpr (OP == Op::min) return b < a ? b : a;
  else if constexpr (OP == Op::max) return a < b ? b : a;
  else if constexpr (OP == Op::and_) return C(a & b);
  else if constexpr (OP == Op::or_) return C(a | b);
  else return C(a ^ b);
}

/** `a cmp b` for ROCSHMEM_CMP_* (false for an unknown comparison). */
template <class C>
ROCSHMEM_DEV_INLINE bool compare(C a, int cmp, C b) {
  switch (cmp) {
    case ROCSHMEM_CMP_EQ: return a == b;
    case ROCSHMEM_CMP_NE: return a != b;
    case ROCSHMEM_CMP_GT: return a > b;
    case ROCSHMEM_CMP_GE: return a >= b;
    case ROCSHMEM_CMP_LT: return a < b;
    case ROCSHMEM_CMP_LE: return a <= b;
    default: return false;
  }
}

}  // namespace dev
}  // namespace rocshmem

#endif  // ROCSHMEM_DEVICE_NUMERIC_HPP
