/* Helpers shared by the C and C++ tests: checks that name the PE and line, a reproducible
 * random source agreed on by all PEs, and 16-bit float conversions. Header-only. */
#ifndef ROCSHMEM_TEST_UTIL_H
#define ROCSHMEM_TEST_UTIL_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Each test includes either <rocshmem/rocshmem.h> (C) or <rocshmem/rocshmem.hpp> (C++) first. */
#ifdef __cplusplus
#define TU_MY_PE() rocshmem::rocshmem_my_pe()
#else
#define TU_MY_PE() rocshmem_my_pe()
#endif

static int tu_failures __attribute__((unused)) = 0;
/* This PE's number, read once (after rocshmem_finalize my_pe is no longer available). */
static int tu_pe __attribute__((unused)) = -1;
static inline int tu_me(void) {
  if (tu_pe < 0) tu_pe = TU_MY_PE();
  return tu_pe;
}

/* Records a failure (the test goes on, to report everything) with PE, file and line. */
#define CHECK(cond, ...)                                                          \
  do {                                                                            \
    if (!(cond)) {                                                                \
      fprintf(stderr, "FAIL PE %d %s:%d: %s: ", tu_me(), __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                               \
      fprintf(stderr, "\n");                                                      \
      tu_failures++;                                                              \
    }                                                                             \
  } while (0)

/* Stops at once (for failures that make the rest meaningless). */
#define REQUIRE(cond, ...)                \
  do {                                    \
    if (!(cond)) {                        \
      CHECK(cond, __VA_ARGS__);           \
      exit(1);                            \
    }                                     \
  } while (0)

/* splitmix64: small, fast, and the same sequence everywhere for the same seed. */
static inline uint64_t tu_next(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* A stream for (seed, pe, salt): lets any PE recompute what another PE generated. */
static inline uint64_t tu_stream(uint64_t seed, int pe, uint64_t salt) {
  uint64_t s = seed ^ (0x632be59bd9b4e019ULL * (uint64_t)(pe + 1)) ^ (salt * 0x85ebca6b0ULL);
  tu_next(&s);
  return s;
}

/* The run's seed: ROCSHMEM_TEST_SEED if set, else time and pid. Callers agree on PE 0's value
 * (see tu_agree_seed in each test) and print it, so a failure can be replayed. */
static inline uint64_t tu_local_seed(void) {
  const char *s = getenv("ROCSHMEM_TEST_SEED");
  if (s && *s) return strtoull(s, NULL, 0);
  return ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid();
}

/* IEEE binary16 and bfloat16 <-> float, round to nearest even (as the library does). */
static inline float tu_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {
      int e = 113;
      while (!(man & 0x400)) { man <<= 1; e--; }
      bits = sign | ((uint32_t)e << 23) | ((man & 0x3ff) << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static inline uint16_t tu_float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
  int exp = (int)((x >> 23) & 0xff);
  uint32_t man = x & 0x7fffff;
  if (exp == 0xff) return (uint16_t)(sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0));
  int e = exp - 127 + 15;
  if (e >= 0x1f) return (uint16_t)(sign | 0x7c00);
  if (e <= 0) {
    if (e < -10) return sign;
    uint32_t m = man | 0x800000, shift = (uint32_t)(14 - e), hb = m >> shift, rem = m & ((1u << shift) - 1),
             halfway = 1u << (shift - 1);
    return (uint16_t)(sign | (hb + (rem > halfway || (rem == halfway && (hb & 1)))));
  }
  uint32_t hb = ((uint32_t)e << 10) | (man >> 13), rem = man & 0x1fff;
  return (uint16_t)(sign | (hb + (rem > 0x1000 || (rem == 0x1000 && (hb & 1)))));
}

static inline float tu_bf16_to_float(uint16_t b) {
  uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static inline uint16_t tu_float_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if (f != f) return (uint16_t)((x >> 16) | 0x40);
  return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

/* Ends a test: a summary line, and the exit status ctest sees. */
#define TEST_DONE(name)                                                               \
  do {                                                                                \
    if (tu_failures) fprintf(stderr, "PE %d: %s: %d check(s) failed\n", tu_pe, name, tu_failures); \
  } while (0)

#endif
