//! Generated tests: per-type cases for every typed family, expanded from the same table as
//! the API, plus an ABI test that references every C and C++ entry point with its exact
//! signature. `check_covered` makes generation fail if a typed name is not exercised.

use super::emit::{self, C_BANNER};
use super::table::*;
use std::fmt::Write as _;

/// The C type of the plain C header (cbindgen's names for the 16-bit floats).
pub fn c_type(t: &Ty) -> String {
    match t.class {
        Class::F16 => format!("rocshmem_{}_t", t.name),
        _ => t.cxx.to_string(),
    }
}

pub(crate) fn fill(tpl: &str, t: &Ty) -> String {
    tpl.replace("{n}", t.name).replace("{T}", &c_type(t)).replace("{BITS}", &(t.size * 8).to_string())
}

/// `typed_types.h`: per-type value helpers used by every generated test.
pub fn types_header() -> String {
    let mut s = String::from(C_BANNER);
    s.push_str(
        "/* Per-type helpers of the generated tests: random values, exact small values, bitwise\n\
         * equality, printing, and the reduction ops computed the way the library computes them\n\
         * (in member order; 16-bit floats through float, rounded to nearest even). */\n\
         #ifndef ROCSHMEM_TYPED_TYPES_H\n#define ROCSHMEM_TYPED_TYPES_H\n\n#include \"test_util.h\"\n\n",
    );
    for t in TYPES {
        let tpl = match t.class {
            Class::Int => INT_HELPERS,
            Class::Float => FLOAT_HELPERS,
            Class::F16 => F16_HELPERS,
        };
        s.push_str(&fill(tpl, t));
        if t.class == Class::F16 {
            let conv = if t.name == "half" {
                ("tu_half_to_float", "tu_float_to_half")
            } else {
                ("tu_bf16_to_float", "tu_float_to_bf16")
            };
            s = s.replace("{TOF}", conv.0).replace("{FROMF}", conv.1);
        }
    }
    s.push_str("\n#endif\n");
    s
}

const INT_HELPERS: &str = r#"
/* {n}: {T} */
typedef {T} tt_{n};
static inline tt_{n} gen_{n}(uint64_t *s) { return (tt_{n})tu_next(s); }
static inline tt_{n} small_{n}(long v) { return (tt_{n})v; }
static inline tt_{n} red_{n}(uint64_t *s, int prod) { (void)prod; return (tt_{n})tu_next(s); }
static inline int same_{n}(tt_{n} a, tt_{n} b) { return a == b; }
static inline double show_{n}(tt_{n} a) { return (double)a; }
static inline tt_{n} sum_{n}(tt_{n} a, tt_{n} b) { return (tt_{n})((uint64_t)a + (uint64_t)b); }
static inline tt_{n} prod_{n}(tt_{n} a, tt_{n} b) { return (tt_{n})((uint64_t)a * (uint64_t)b); }
static inline tt_{n} min_{n}(tt_{n} a, tt_{n} b) { return b < a ? b : a; }
static inline tt_{n} max_{n}(tt_{n} a, tt_{n} b) { return b > a ? b : a; }
static inline tt_{n} and_{n}(tt_{n} a, tt_{n} b) { return (tt_{n})(a & b); }
static inline tt_{n} or_{n}(tt_{n} a, tt_{n} b) { return (tt_{n})(a | b); }
static inline tt_{n} xor_{n}(tt_{n} a, tt_{n} b) { return (tt_{n})(a ^ b); }
"#;

const FLOAT_HELPERS: &str = r#"
/* {n}: {T} */
typedef {T} tt_{n};
static inline tt_{n} gen_{n}(uint64_t *s) { return (tt_{n})((double)(int64_t)(tu_next(s) >> 11) / 1024.0); }
static inline tt_{n} small_{n}(long v) { return (tt_{n})v; }
/* Small integers keep sums and products exact in any order; products use 1..3. */
static inline tt_{n} red_{n}(uint64_t *s, int prod) {
  return prod ? (tt_{n})(1 + (long)(tu_next(s) % 3)) : (tt_{n})((long)(tu_next(s) % 33) - 16);
}
static inline int same_{n}(tt_{n} a, tt_{n} b) { return memcmp(&a, &b, sizeof a) == 0; }
static inline double show_{n}(tt_{n} a) { return (double)a; }
static inline tt_{n} sum_{n}(tt_{n} a, tt_{n} b) { return a + b; }
static inline tt_{n} prod_{n}(tt_{n} a, tt_{n} b) { return a * b; }
static inline tt_{n} min_{n}(tt_{n} a, tt_{n} b) { return b < a ? b : a; }
static inline tt_{n} max_{n}(tt_{n} a, tt_{n} b) { return b > a ? b : a; }
"#;

const F16_HELPERS: &str = r#"
/* {n}: {T} (16 bits, arithmetic through float) */
typedef {T} tt_{n};
static inline float f_{n}(tt_{n} a) { return {TOF}(a.bits); }
static inline tt_{n} of_{n}(float f) { tt_{n} r; r.bits = {FROMF}(f); return r; }
static inline tt_{n} gen_{n}(uint64_t *s) { tt_{n} r; r.bits = (uint16_t)tu_next(s); return r; }
static inline tt_{n} small_{n}(long v) { return of_{n}((float)v); }
static inline tt_{n} red_{n}(uint64_t *s, int prod) {
  return of_{n}(prod ? (float)(1 + (long)(tu_next(s) % 3)) : (float)((long)(tu_next(s) % 33) - 16));
}
static inline int same_{n}(tt_{n} a, tt_{n} b) { return a.bits == b.bits; }
static inline double show_{n}(tt_{n} a) { return (double)f_{n}(a); }
static inline tt_{n} sum_{n}(tt_{n} a, tt_{n} b) { return of_{n}(f_{n}(a) + f_{n}(b)); }
static inline tt_{n} prod_{n}(tt_{n} a, tt_{n} b) { return of_{n}(f_{n}(a) * f_{n}(b)); }
static inline tt_{n} min_{n}(tt_{n} a, tt_{n} b) { return f_{n}(b) < f_{n}(a) ? b : a; }
static inline tt_{n} max_{n}(tt_{n} a, tt_{n} b) { return f_{n}(b) > f_{n}(a) ? b : a; }
"#;

const PROLOGUE: &str = r#"#include <rocshmem/rocshmem.h>

#include "typed_types.h"

static uint64_t seed;
static int me, npes, left, right;

/* PE 0's seed, agreed by every PE. */
static void agree_seed(const char *name) {
  uint64_t *s = (uint64_t *)rocshmem_malloc(sizeof(uint64_t));
  REQUIRE(s != NULL, "malloc");
  if (me == 0) *s = tu_local_seed();
  rocshmem_barrier_all();
  seed = rocshmem_uint64_g(s, 0);
  rocshmem_barrier_all();
  rocshmem_free(s);
  if (me == 0) printf("%s: %d PEs, seed %" PRIu64 " (replay with ROCSHMEM_TEST_SEED)\n", name, npes, seed);
}
"#;

pub(crate) fn program(name: &str, body: &str, calls: &[String]) -> String {
    let mut s = String::from(C_BANNER);
    let _ = writeln!(
        s,
        "/* {name}: every typed name of the family, for every type of its set, checked on the receiving PE. */"
    );
    s.push_str(PROLOGUE);
    s.push_str(body);
    let _ =
        writeln!(s, "\nint main(void) {{\n  rocshmem_init();\n  me = rocshmem_my_pe();\n  npes = rocshmem_n_pes();");
    let _ = writeln!(s, "  right = (me + 1) % npes;\n  left = (me + npes - 1) % npes;\n  agree_seed(\"{name}\");");
    for c in calls {
        let _ = writeln!(s, "  {c}();");
    }
    let _ = writeln!(s, "  rocshmem_finalize();\n  TEST_DONE(\"{name}\");\n  return tu_failures != 0;\n}}");
    s
}

const RMA: &str = r#"
static void rma_{n}(void) {
  enum { MAXN = 1500 };
  tt_{n} *src = (tt_{n} *)rocshmem_malloc(MAXN * sizeof(tt_{n}));
  tt_{n} *dst = (tt_{n} *)rocshmem_malloc(MAXN * sizeof(tt_{n}));
  tt_{n} *loc = (tt_{n} *)malloc(MAXN * sizeof(tt_{n}));
  REQUIRE(src && dst && loc, "{n}: allocation");
  rocshmem_ctx_t ctx;
  REQUIRE(rocshmem_ctx_create(0, &ctx) == 0, "{n}: ctx_create");
  static const size_t sizes[] = {1, 7, MAXN};
  for (int si = 0; si < 3; si++) {
    size_t n = sizes[si];
    for (int form = 0; form < 8; form++) {
      uint64_t salt = 0x100000u + (uint64_t)si * 16 + (uint64_t)form, s = tu_stream(seed, me, salt);
      for (size_t i = 0; i < n; i++) src[i] = gen_{n}(&s);
      memset(dst, 0, n * sizeof(tt_{n}));
      memset(loc, 0, n * sizeof(tt_{n}));
      rocshmem_barrier_all();
      switch (form) {
        case 0: rocshmem_{n}_put(dst, src, n, right); break;
        case 1: rocshmem_ctx_{n}_put(ctx, dst, src, n, right); break;
        case 2: rocshmem_{n}_put_nbi(dst, src, n, right); rocshmem_quiet(); break;
        case 3: rocshmem_ctx_{n}_put_nbi(ctx, dst, src, n, right); rocshmem_ctx_quiet(ctx); break;
        case 4: rocshmem_{n}_get(loc, src, n, left); break;
        case 5: rocshmem_ctx_{n}_get(ctx, loc, src, n, left); break;
        case 6: rocshmem_{n}_get_nbi(loc, src, n, left); rocshmem_quiet(); break;
        default: rocshmem_ctx_{n}_get_nbi(ctx, loc, src, n, left); rocshmem_ctx_quiet(ctx); break;
      }
      rocshmem_barrier_all();
      const tt_{n} *got = form < 4 ? dst : loc;
      uint64_t t = tu_stream(seed, left, salt);
      for (size_t i = 0; i < n; i++) {
        tt_{n} want = gen_{n}(&t);
        if (!same_{n}(got[i], want)) {
          CHECK(0, "{n} form %d nelems %zu: element %zu is %g, PE %d sent %g", form, n, i, show_{n}(got[i]), left, show_{n}(want));
          break;
        }
      }
    }
  }
  /* p and g, with and without a context */
  uint64_t s = tu_stream(seed, me, 0x200000u);
  tt_{n} v0 = gen_{n}(&s), v1 = gen_{n}(&s);
  src[0] = v0;
  src[1] = v1;
  memset(dst, 0, 2 * sizeof(tt_{n}));
  rocshmem_barrier_all();
  rocshmem_{n}_p(&dst[0], v0, right);
  rocshmem_ctx_{n}_p(ctx, &dst[1], v1, right);
  tt_{n} g0 = rocshmem_{n}_g(&src[0], left), g1 = rocshmem_ctx_{n}_g(ctx, &src[1], left);
  rocshmem_barrier_all();
  uint64_t t = tu_stream(seed, left, 0x200000u);
  tt_{n} w0 = gen_{n}(&t), w1 = gen_{n}(&t);
  CHECK(same_{n}(dst[0], w0) && same_{n}(dst[1], w1), "{n}: p delivered %g/%g, want %g/%g", show_{n}(dst[0]), show_{n}(dst[1]), show_{n}(w0), show_{n}(w1));
  CHECK(same_{n}(g0, w0) && same_{n}(g1, w1), "{n}: g read %g/%g, want %g/%g", show_{n}(g0), show_{n}(g1), show_{n}(w0), show_{n}(w1));
  rocshmem_barrier_all();
  rocshmem_ctx_destroy(ctx);
  rocshmem_free(src);
  rocshmem_free(dst);
  free(loc);
}
"#;

/// fetch / set / swap (AMO14).
const AMO_EXT: &str = r#"
static void amo_ext_{n}(void) {
  tt_{n} *x = (tt_{n} *)rocshmem_malloc(4 * sizeof(tt_{n}));
  rocshmem_ctx_t ctx;
  REQUIRE(x && rocshmem_ctx_create(0, &ctx) == 0, "{n}: setup");
  x[0] = small_{n}(0); x[1] = small_{n}(0);
  x[2] = small_{n}(1000 + me); x[3] = small_{n}(2000 + me);
  rocshmem_barrier_all();
  rocshmem_{n}_atomic_set(&x[0], small_{n}(3 * me + 1), right);
  rocshmem_ctx_{n}_atomic_set(ctx, &x[1], small_{n}(3 * me + 2), right);
  tt_{n} o0 = rocshmem_{n}_atomic_swap(&x[2], small_{n}(me), right);
  tt_{n} o1 = rocshmem_ctx_{n}_atomic_swap(ctx, &x[3], small_{n}(me + 1), right);
  CHECK(same_{n}(o0, small_{n}(1000 + right)) && same_{n}(o1, small_{n}(2000 + right)), "{n}: swap returned %g/%g", show_{n}(o0), show_{n}(o1));
  rocshmem_barrier_all();
  CHECK(same_{n}(x[0], small_{n}(3 * left + 1)) && same_{n}(x[1], small_{n}(3 * left + 2)), "{n}: set stored %g/%g", show_{n}(x[0]), show_{n}(x[1]));
  CHECK(same_{n}(x[2], small_{n}(left)) && same_{n}(x[3], small_{n}(left + 1)), "{n}: swap stored %g/%g", show_{n}(x[2]), show_{n}(x[3]));
  int ll = (left + npes - 1) % npes;
  tt_{n} f0 = rocshmem_{n}_atomic_fetch(&x[0], left), f1 = rocshmem_ctx_{n}_atomic_fetch(ctx, &x[1], left);
  CHECK(same_{n}(f0, small_{n}(3 * ll + 1)) && same_{n}(f1, small_{n}(3 * ll + 2)), "{n}: fetch read %g/%g", show_{n}(f0), show_{n}(f1));
  rocshmem_barrier_all();
  rocshmem_ctx_destroy(ctx);
  rocshmem_free(x);
}
"#;

/// compare_swap, inc, add and their fetching forms (AMO12), all PEs hitting every PE.
const AMO_STD: &str = r#"
static void amo_std_{n}(void) {
  tt_{n} *x = (tt_{n} *)rocshmem_malloc(3 * sizeof(tt_{n}));
  int *winners = (int *)rocshmem_malloc(2 * sizeof(int));
  rocshmem_ctx_t ctx;
  REQUIRE(x && winners && rocshmem_ctx_create(0, &ctx) == 0, "{n}: setup");
  x[0] = small_{n}(0); x[1] = small_{n}(77); x[2] = small_{n}(77);
  winners[0] = winners[1] = 0;
  rocshmem_barrier_all();
  long per_pe = 0;
  for (int k = 0; k < npes; k++) {
    int p = (me + k) % npes;
    tt_{n} o[4];
    rocshmem_{n}_atomic_add(&x[0], small_{n}(me + 1), p);
    rocshmem_ctx_{n}_atomic_add(ctx, &x[0], small_{n}(me + 1), p);
    o[0] = rocshmem_{n}_atomic_fetch_add(&x[0], small_{n}(me + 1), p);
    o[1] = rocshmem_ctx_{n}_atomic_fetch_add(ctx, &x[0], small_{n}(me + 1), p);
    rocshmem_{n}_atomic_inc(&x[0], p);
    rocshmem_ctx_{n}_atomic_inc(ctx, &x[0], p);
    o[2] = rocshmem_{n}_atomic_fetch_inc(&x[0], p);
    o[3] = rocshmem_ctx_{n}_atomic_fetch_inc(ctx, &x[0], p);
    for (int i = 0; i < 4; i++) CHECK(o[i] >= small_{n}(0), "{n}: fetched %g", show_{n}(o[i]));
    per_pe += 4 * (me + 1) + 4;
  }
  (void)per_pe;
  /* One winner per word: every PE tries to swap 77 for its own number on PE 0. */
  tt_{n} c0 = rocshmem_{n}_atomic_compare_swap(&x[1], small_{n}(77), small_{n}(100 + me), 0);
  tt_{n} c1 = rocshmem_ctx_{n}_atomic_compare_swap(ctx, &x[2], small_{n}(77), small_{n}(200 + me), 0);
  if (same_{n}(c0, small_{n}(77))) rocshmem_int_atomic_add(&winners[0], 1, 0);
  if (same_{n}(c1, small_{n}(77))) rocshmem_int_atomic_add(&winners[1], 1, 0);
  rocshmem_barrier_all();
  long want = 4L * npes * (npes + 1) / 2 + 4L * npes;
  CHECK(same_{n}(x[0], small_{n}(want)), "{n}: counter %g, want %ld", show_{n}(x[0]), want);
  if (me == 0) {
    CHECK(winners[0] == 1 && winners[1] == 1, "{n}: compare_swap winners %d/%d", winners[0], winners[1]);
    CHECK(x[1] >= small_{n}(100) && x[1] < small_{n}(100 + npes), "{n}: compare_swap left %g", show_{n}(x[1]));
    CHECK(x[2] >= small_{n}(200) && x[2] < small_{n}(200 + npes), "{n}: ctx compare_swap left %g", show_{n}(x[2]));
  }
  rocshmem_barrier_all();
  rocshmem_ctx_destroy(ctx);
  rocshmem_free(winners);
  rocshmem_free(x);
}
"#;

/// and / or / xor and their fetching forms (AMO7).
const AMO_BIT: &str = r#"
static void amo_bit_{n}(void) {
  tt_{n} *x = (tt_{n} *)rocshmem_malloc(12 * sizeof(tt_{n}));
  rocshmem_ctx_t ctx;
  REQUIRE(x && rocshmem_ctx_create(0, &ctx) == 0, "{n}: setup");
  tt_{n} mine = (tt_{n})((tt_{n})1 << (me % 31)), all = 0;
  for (int p = 0; p < npes; p++) all |= (tt_{n})((tt_{n})1 << (p % 31));
  for (int i = 0; i < 12; i++) x[i] = (i >= 4 && i < 8) ? (tt_{n})~(tt_{n})0 : (tt_{n})0;
  rocshmem_barrier_all();
  for (int k = 0; k < npes; k++) {
    int p = (me + k) % npes;
    tt_{n} o[6];
    rocshmem_{n}_atomic_or(&x[0], mine, p);
    rocshmem_ctx_{n}_atomic_or(ctx, &x[1], mine, p);
    o[0] = rocshmem_{n}_atomic_fetch_or(&x[2], mine, p);
    o[1] = rocshmem_ctx_{n}_atomic_fetch_or(ctx, &x[3], mine, p);
    rocshmem_{n}_atomic_and(&x[4], (tt_{n})~mine, p);
    rocshmem_ctx_{n}_atomic_and(ctx, &x[5], (tt_{n})~mine, p);
    o[2] = rocshmem_{n}_atomic_fetch_and(&x[6], (tt_{n})~mine, p);
    o[3] = rocshmem_ctx_{n}_atomic_fetch_and(ctx, &x[7], (tt_{n})~mine, p);
    rocshmem_{n}_atomic_xor(&x[8], mine, p);
    rocshmem_ctx_{n}_atomic_xor(ctx, &x[9], mine, p);
    o[4] = rocshmem_{n}_atomic_fetch_xor(&x[10], mine, p);
    o[5] = rocshmem_ctx_{n}_atomic_fetch_xor(ctx, &x[11], mine, p);
    /* Our own bit is untouched by the others until we set it. */
    CHECK(!(o[0] & mine) && !(o[1] & mine) && (o[2] & mine) && (o[3] & mine) && !(o[4] & mine) && !(o[5] & mine),
          "{n}: fetched values show our bit early");
  }
  rocshmem_barrier_all();
  for (int i = 0; i < 12; i++) {
    tt_{n} want = (i >= 4 && i < 8) ? (tt_{n})~all : all;
    CHECK(x[i] == want, "{n}: word %d is %#llx, want %#llx", i, (unsigned long long)x[i], (unsigned long long)want);
  }
  rocshmem_barrier_all();
  rocshmem_ctx_destroy(ctx);
  rocshmem_free(x);
}
"#;

const P2P: &str = r#"
static void p2p_{n}(void) {
  tt_{n} *iv = (tt_{n} *)rocshmem_malloc(8 * sizeof(tt_{n}));
  REQUIRE(iv != NULL, "{n}: malloc");
  /* wait_until and test for each comparison: the left PE makes our variable satisfy it. */
  /* init: fails the comparison with 10; sat: the value the left PE puts, which passes it;
   * miss: a value the comparison with sat fails for (so test() must say 0). */
  static const long init[6] = {0, 10, 10, 9, 10, 11}, sat[6] = {10, 11, 11, 10, 9, 10}, miss[6] = {11, 11, 11, 11, 9, 9};
  for (int cmp = 0; cmp < 6; cmp++) {
    iv[0] = small_{n}(init[cmp]);
    CHECK(rocshmem_{n}_test(&iv[0], cmp, small_{n}(10)) == 0, "{n}: test cmp %d true before the put", cmp);
    rocshmem_barrier_all();
    rocshmem_{n}_p(&iv[0], small_{n}(sat[cmp]), right);
    rocshmem_{n}_wait_until(&iv[0], cmp, small_{n}(10));
    CHECK(same_{n}(iv[0], small_{n}(sat[cmp])), "{n}: woke with %g (cmp %d)", show_{n}(iv[0]), cmp);
    CHECK(rocshmem_{n}_test(&iv[0], cmp, small_{n}(10)) == 1, "{n}: test cmp %d false after", cmp);
    CHECK(rocshmem_{n}_test(&iv[0], cmp, small_{n}(miss[cmp])) == 0, "{n}: test cmp %d true against %ld", cmp, miss[cmp]);
    rocshmem_barrier_all();
  }
  /* The set forms on 4 variables, element 2 excluded by the status array. */
  int status[4] = {0, 0, 1, 0};
  size_t idx[4];
  tt_{n} five[4], vals[4];
  for (int i = 0; i < 4; i++) { five[i] = small_{n}(5); vals[i] = small_{n}(5 + i); }
  for (int form = 0; form < 6; form++) {
    for (int i = 0; i < 4; i++) iv[i] = small_{n}(0);
    rocshmem_barrier_all();
    switch (form) {
      case 0: /* all: set 0, 1, 3 */
        rocshmem_{n}_put(&iv[0], five, 2, right);
        rocshmem_{n}_p(&iv[3], small_{n}(5), right);
        rocshmem_{n}_wait_until_all(iv, 4, status, ROCSHMEM_CMP_EQ, small_{n}(5));
        CHECK(same_{n}(iv[0], five[0]) && same_{n}(iv[1], five[1]) && same_{n}(iv[3], five[3]), "{n}: wait_until_all woke early");
        break;
      case 1: /* all_vector: element i becomes 5+i */
        rocshmem_{n}_put(iv, vals, 4, right);
        rocshmem_{n}_wait_until_all_vector(iv, 4, NULL, ROCSHMEM_CMP_EQ, vals);
        for (int i = 0; i < 4; i++) CHECK(same_{n}(iv[i], vals[i]), "{n}: all_vector element %d", i);
        break;
      case 2: { /* any: only element 3 */
        rocshmem_{n}_p(&iv[3], small_{n}(5), right);
        size_t k = rocshmem_{n}_wait_until_any(iv, 4, status, ROCSHMEM_CMP_EQ, small_{n}(5));
        CHECK(k == 3, "{n}: wait_until_any returned %zu", k);
        break;
      }
      case 3: { /* any_vector: element 1 becomes 6 */
        rocshmem_{n}_p(&iv[1], small_{n}(6), right);
        size_t k = rocshmem_{n}_wait_until_any_vector(iv, 4, status, ROCSHMEM_CMP_EQ, vals);
        CHECK(k == 1, "{n}: wait_until_any_vector returned %zu", k);
        break;
      }
      case 4: { /* some: elements 1 and 3 */
        rocshmem_{n}_p(&iv[1], small_{n}(5), right);
        rocshmem_{n}_p(&iv[3], small_{n}(5), right);
        size_t c = rocshmem_{n}_wait_until_some(iv, 4, idx, status, ROCSHMEM_CMP_EQ, small_{n}(5));
        CHECK(c >= 1 && c <= 2, "{n}: wait_until_some returned %zu", c);
        for (size_t i = 0; i < c && i < 4; i++) CHECK(idx[i] == 1 || idx[i] == 3, "{n}: some index %zu", idx[i]);
        break;
      }
      default: { /* some_vector: element 0 becomes 5 */
        rocshmem_{n}_p(&iv[0], small_{n}(5), right);
        size_t c = rocshmem_{n}_wait_until_some_vector(iv, 4, idx, status, ROCSHMEM_CMP_EQ, vals);
        CHECK(c == 1 && idx[0] == 0, "{n}: wait_until_some_vector returned %zu", c);
        break;
      }
    }
    rocshmem_barrier_all();
  }
  rocshmem_free(iv);
}
"#;

pub(crate) const COLL_HEAD: &str = r#"
/* A team to run collectives on: world, or the even PEs. */
typedef struct {
  rocshmem_team_t team;
  int start, stride, size, idx;
} team_view;

static int team_views(team_view *v) {
  int k = 0;
  v[k].team = ROCSHMEM_TEAM_WORLD;
  v[k].start = 0; v[k].stride = 1; v[k].size = npes; v[k].idx = me;
  k++;
  if (npes >= 3) {
    rocshmem_team_t evens = ROCSHMEM_TEAM_INVALID;
    REQUIRE(rocshmem_team_split_strided(ROCSHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, NULL, 0, &evens) == 0, "split");
    if (me % 2 == 0) {
      v[k].team = evens;
      v[k].start = 0; v[k].stride = 2; v[k].size = (npes + 1) / 2; v[k].idx = me / 2;
      k++;
    }
  }
  return k;
}

static void destroy_views(team_view *v, int k) {
  for (int i = 1; i < k; i++) rocshmem_team_destroy(v[i].team);
}
"#;

const COLL_BCAST: &str = r#"
static void bcast_{n}(void) {
  enum { MAXN = 5000 };
  tt_{n} *src = (tt_{n} *)rocshmem_malloc(MAXN * sizeof(tt_{n}));
  tt_{n} *dst = (tt_{n} *)rocshmem_malloc(MAXN * sizeof(tt_{n}));
  long *psync = (long *)rocshmem_malloc(ROCSHMEM_BCAST_SYNC_SIZE * sizeof(long));
  REQUIRE(src && dst && psync, "{n}: malloc");
  for (int i = 0; i < ROCSHMEM_BCAST_SYNC_SIZE; i++) psync[i] = ROCSHMEM_SYNC_VALUE;
  team_view v[2];
  int nv = team_views(v);
  static const int sizes[] = {1, 100, MAXN};
  for (int t = 0; t < nv; t++) {
    for (int si = 0; si < 3; si++) {
      int n = sizes[si];
      uint64_t salt = 0x300000u + (uint64_t)t * 16 + (uint64_t)si, r = tu_stream(seed, 0, salt);
      int root = (int)(tu_next(&r) % (uint64_t)v[t].size);
      uint64_t s = tu_stream(seed, me, salt);
      for (int i = 0; i < n; i++) { src[i] = gen_{n}(&s); dst[i] = small_{n}(0); }
      rocshmem_ctx_{n}_broadcast(ROCSHMEM_CTX_DEFAULT, v[t].team, dst, src, n, root);
      uint64_t w = tu_stream(seed, v[t].start + root * v[t].stride, salt);
      for (int i = 0; i < n; i++) {
        tt_{n} want = gen_{n}(&w);
        if (!same_{n}(dst[i], want)) { CHECK(0, "{n} team %d nelems %d root %d: element %d", t, n, root, i); break; }
      }
    }
  }
  /* Active sets: all PEs, and every other PE starting at 1. The root's dest is untouched. */
  for (int a = 0; a < 2; a++) {
    int start = a ? 1 : 0, logs = a ? 1 : 0, size = a ? npes / 2 : npes;
    if (size < 1) continue;
    int member = me >= start && (me - start) % (1 << logs) == 0 && (me - start) >> logs < size;
    for (int si = 0; si < 3; si++) {
      int n = sizes[si];
      uint64_t salt = 0x310000u + (uint64_t)a * 16 + (uint64_t)si, r = tu_stream(seed, 0, salt);
      int root = (int)(tu_next(&r) % (uint64_t)size);
      uint64_t s = tu_stream(seed, me, salt);
      for (int i = 0; i < n; i++) { src[i] = gen_{n}(&s); dst[i] = small_{n}(42); }
      rocshmem_barrier_all();
      if (member) rocshmem_ctx_{n}_broadcast_active_set(ROCSHMEM_CTX_DEFAULT, dst, src, n, root, start, logs, size, psync);
      rocshmem_barrier_all();
      if (!member) continue;
      int root_pe = start + (root << logs);
      uint64_t w = tu_stream(seed, root_pe, salt);
      for (int i = 0; i < n; i++) {
        tt_{n} want = me == root_pe ? small_{n}(42) : gen_{n}(&w);
        if (!same_{n}(dst[i], want)) { CHECK(0, "{n} active set %d nelems %d root %d: element %d", a, n, root, i); break; }
      }
    }
  }
  for (int i = 0; i < ROCSHMEM_BCAST_SYNC_SIZE; i++) CHECK(psync[i] == ROCSHMEM_SYNC_VALUE, "{n}: pSync[%d] changed", i);
  destroy_views(v, nv);
  rocshmem_barrier_all();
  rocshmem_free(psync);
  rocshmem_free(dst);
  rocshmem_free(src);
}
"#;

/// One reduction op of one type: reduce (out of place and in place) and reduce_scatter, on
/// every team view, at several sizes.
const COLL_RED: &str = r#"
static void red_{n}_{op}(void) {
  enum { MAXN = 6000, RSN = 300 };
  tt_{n} *src = (tt_{n} *)rocshmem_malloc(MAXN * sizeof(tt_{n}));
  tt_{n} *dst = (tt_{n} *)rocshmem_malloc(MAXN * sizeof(tt_{n}));
  tt_{n} *want = (tt_{n} *)malloc(MAXN * sizeof(tt_{n}));
  REQUIRE(src && dst && want, "{n}: malloc");
  team_view v[2];
  int nv = team_views(v);
  static const int sizes[] = {1, 63, MAXN};
  for (int t = 0; t < nv; t++) {
    for (int si = 0; si < 4; si++) {
      int in_place = si == 3, n = in_place ? 257 : sizes[si];
      uint64_t salt = 0x400000u + (uint64_t)OP_ID * 256 + (uint64_t)t * 16 + (uint64_t)si;
      for (int m = 0; m < v[t].size; m++) {
        uint64_t s = tu_stream(seed, v[t].start + m * v[t].stride, salt);
        for (int i = 0; i < n; i++) {
          tt_{n} x = red_{n}(&s, IS_PROD);
          want[i] = m == 0 ? x : {op}_{n}(want[i], x);
        }
      }
      uint64_t s = tu_stream(seed, me, salt);
      for (int i = 0; i < n; i++) { src[i] = red_{n}(&s, IS_PROD); dst[i] = small_{n}(0); }
      tt_{n} *out = in_place ? src : dst;
      int rc = rocshmem_ctx_{n}_{op}_reduce(ROCSHMEM_CTX_DEFAULT, v[t].team, out, src, n);
      CHECK(rc == 0, "{n} {op}_reduce returned %d", rc);
      for (int i = 0; i < n; i++) {
        if (!same_{n}(out[i], want[i])) {
          CHECK(0, "{n} {op}_reduce team %d nreduce %d%s: element %d is %g, want %g", t, n, in_place ? " in place" : "", i, show_{n}(out[i]), show_{n}(want[i]));
          break;
        }
      }
    }
    /* reduce_scatter: member k gets block k of the reduction of everyone's n * size elements */
    int n = RSN / v[t].size > 0 ? RSN / v[t].size : 1;
    uint64_t salt = 0x500000u + (uint64_t)OP_ID * 256 + (uint64_t)t;
    for (int m = 0; m < v[t].size; m++) {
      uint64_t s = tu_stream(seed, v[t].start + m * v[t].stride, salt);
      for (int i = 0; i < n * v[t].size; i++) {
        tt_{n} x = red_{n}(&s, IS_PROD);
        if (i / n == v[t].idx) want[i % n] = m == 0 ? x : {op}_{n}(want[i % n], x);
      }
    }
    uint64_t s = tu_stream(seed, me, salt);
    for (int i = 0; i < n * v[t].size; i++) src[i] = red_{n}(&s, IS_PROD);
    int rc = rocshmem_ctx_{n}_{op}_reduce_scatter(ROCSHMEM_CTX_DEFAULT, v[t].team, dst, src, n);
    CHECK(rc == 0, "{n} {op}_reduce_scatter returned %d", rc);
    for (int i = 0; i < n; i++) {
      if (!same_{n}(dst[i], want[i])) { CHECK(0, "{n} {op}_reduce_scatter team %d: element %d", t, i); break; }
    }
  }
  destroy_views(v, nv);
  rocshmem_barrier_all();
  free(want);
  rocshmem_free(dst);
  rocshmem_free(src);
}
"#;

/// Legacy active-set `*_to_all`, on all PEs and on every other PE.
const COLL_TO_ALL: &str = r#"
static void to_all_{n}_{op}(void) {
  enum { N = 700 };
  tt_{n} *src = (tt_{n} *)rocshmem_malloc(N * sizeof(tt_{n}));
  tt_{n} *dst = (tt_{n} *)rocshmem_malloc(N * sizeof(tt_{n}));
  tt_{n} *wrk = (tt_{n} *)rocshmem_malloc(ROCSHMEM_REDUCE_MIN_WRKDATA_SIZE * sizeof(tt_{n}));
  long *psync = (long *)rocshmem_malloc(ROCSHMEM_REDUCE_SYNC_SIZE * sizeof(long));
  tt_{n} *want = (tt_{n} *)malloc(N * sizeof(tt_{n}));
  REQUIRE(src && dst && wrk && psync && want, "{n}: malloc");
  for (int i = 0; i < ROCSHMEM_REDUCE_SYNC_SIZE; i++) psync[i] = ROCSHMEM_SYNC_VALUE;
  for (int a = 0; a < 2; a++) {
    int start = a ? 1 : 0, logs = a ? 1 : 0, size = a ? npes / 2 : npes;
    if (size < 1) continue;
    int member = me >= start && (me - start) % (1 << logs) == 0 && (me - start) >> logs < size;
    uint64_t salt = 0x600000u + (uint64_t)OP_ID * 16 + (uint64_t)a;
    for (int m = 0; m < size; m++) {
      uint64_t s = tu_stream(seed, start + (m << logs), salt);
      for (int i = 0; i < N; i++) {
        tt_{n} x = red_{n}(&s, IS_PROD);
        want[i] = m == 0 ? x : {op}_{n}(want[i], x);
      }
    }
    uint64_t s = tu_stream(seed, me, salt);
    for (int i = 0; i < N; i++) src[i] = red_{n}(&s, IS_PROD);
    rocshmem_barrier_all();
    if (member) rocshmem_ctx_{n}_{op}_to_all(ROCSHMEM_CTX_DEFAULT, dst, src, N, start, logs, size, wrk, psync);
    rocshmem_barrier_all();
    if (!member) continue;
    for (int i = 0; i < N; i++) {
      if (!same_{n}(dst[i], want[i])) { CHECK(0, "{n} {op}_to_all set %d: element %d", a, i); break; }
    }
    if (a == 0) {
      /* rocSHMEM 2.x team form: the same reduction over ROCSHMEM_TEAM_WORLD. */
      for (int i = 0; i < N; i++) dst[i] = small_{n}(0);
      int rc = rocshmem_ctx_{n}_{op}_to_all_team(ROCSHMEM_CTX_DEFAULT, ROCSHMEM_TEAM_WORLD, dst, src, N);
      CHECK(rc == 0, "{n} {op}_to_all_team returned %d", rc);
      for (int i = 0; i < N; i++) {
        if (!same_{n}(dst[i], want[i])) { CHECK(0, "{n} {op}_to_all_team: element %d", i); break; }
      }
    }
  }
  free(want);
  rocshmem_free(psync);
  rocshmem_free(wrk);
  rocshmem_free(dst);
  rocshmem_free(src);
}
"#;

pub(crate) fn red_fn(tpl: &str, t: &Ty, op: &str, op_id: usize) -> String {
    fill(tpl, t)
        .replace("{op}", op)
        .replace("OP_ID", &op_id.to_string())
        .replace("IS_PROD", if op == "prod" { "1" } else { "0" })
}

/// The generated test programs: (file name, text).
pub fn programs() -> Vec<(&'static str, String)> {
    let in_set = |set: &[&str], t: &Ty| set.contains(&t.name);
    let mut rma = String::new();
    let mut rma_calls = Vec::new();
    for t in TYPES.iter().filter(|t| in_set(T25, t)) {
        rma.push_str(&fill(RMA, t));
        rma_calls.push(format!("rma_{}", t.name));
    }
    let mut amo = String::new();
    let mut amo_calls = Vec::new();
    for t in TYPES {
        for (set, tpl, name) in [(AMO14, AMO_EXT, "amo_ext"), (AMO12, AMO_STD, "amo_std"), (AMO7, AMO_BIT, "amo_bit")] {
            if in_set(set, t) {
                amo.push_str(&fill(tpl, t));
                amo_calls.push(format!("{name}_{}", t.name));
            }
        }
    }
    let mut p2p = String::new();
    let mut p2p_calls = Vec::new();
    for t in TYPES.iter().filter(|t| in_set(T25, t)) {
        p2p.push_str(&fill(P2P, t));
        p2p_calls.push(format!("p2p_{}", t.name));
    }
    let mut coll = String::from(COLL_HEAD);
    let mut coll_calls = Vec::new();
    for t in TYPES.iter().filter(|t| in_set(T25, t)) {
        coll.push_str(&fill(COLL_BCAST, t));
        coll_calls.push(format!("bcast_{}", t.name));
        let ops = if in_set(COLL_INT, t) { INT_OPS } else { FLOAT_OPS };
        for (i, (op, _)) in ops.iter().enumerate() {
            coll.push_str(&red_fn(COLL_RED, t, op, i));
            coll_calls.push(format!("red_{}_{op}", t.name));
        }
    }
    for (types, ops) in [(TO_ALL_INT, INT_OPS), (TO_ALL_FLOAT, FLOAT_OPS)] {
        for n in types {
            for (i, (op, _)) in ops.iter().enumerate() {
                coll.push_str(&red_fn(COLL_TO_ALL, ty(n), op, i));
                coll_calls.push(format!("to_all_{n}_{op}"));
            }
        }
    }
    vec![
        ("typed_rma.c", program("typed_rma", &rma, &rma_calls)),
        ("typed_amo.c", program("typed_amo", &amo, &amo_calls)),
        ("typed_p2p.c", program("typed_p2p", &p2p, &p2p_calls)),
        ("typed_coll.c", program("typed_coll", &coll, &coll_calls)),
    ]
}

/// Fails generation if a typed entry point is not called by the generated tests.
pub fn check_covered(programs: &[(&'static str, String)]) {
    let all: String = programs.iter().map(|(_, s)| s.as_str()).collect();
    let missing: Vec<String> =
        emit::entries().iter().map(|e| e.c_name()).filter(|n| !all.contains(&format!("{n}("))).collect();
    assert!(missing.is_empty(), "typed names not exercised by the generated tests: {missing:?}");
}

/// `abi_link.cpp`: takes the address of every C++ entry point with its exact signature (a
/// missing or mismatched shim definition fails to compile or link), and checks layouts.
pub fn abi_cpp() -> String {
    let mut s = String::from(C_BANNER);
    s.push_str("/* Every host C++ name of the table, with its exact signature, must exist in librocshmem. */\n");
    s.push_str("#include <rocshmem/rocshmem.hpp>\n#include <rocshmem/qp_introspect.hpp>\n#include <cstdio>\n\nusing namespace rocshmem;\n\n");
    s.push_str("static int count = 0;\nstatic void use(const void *p) { if (p) count++; }\n\n");
    s.push_str("#pragma GCC diagnostic ignored \"-Wdeprecated-declarations\"\n");
    s.push_str("int main() {\n");
    for c in CORE {
        let sig = emit::parse_sig(c.decl);
        let types: Vec<String> =
            sig.params.iter().zip(&sig.arg_names).map(|(p, n)| p[..p.len() - n.len()].trim().to_string()).collect();
        let _ = writeln!(s, "  use((const void *)static_cast<{} (*)({})>(&{}));", sig.ret, types.join(", "), sig.name);
    }
    for e in emit::entries() {
        let t = e.ty;
        let types: Vec<String> = e
            .params()
            .iter()
            .map(|p| {
                let d = emit::p_cxx(p, t);
                let name_len = d.rsplit([' ', '*']).next().unwrap().len();
                d[..d.len() - name_len].trim().to_string()
            })
            .collect();
        let _ = writeln!(
            s,
            "  use((const void *)static_cast<{} (*)({})>(&{}));",
            emit::ret_cxx(e.fam.ret, t),
            types.join(", "),
            e.cxx_name()
        );
    }
    let n = CORE.len() + emit::entries().len();
    let _ = writeln!(
        s,
        "  static_assert(sizeof(rocshmem_ctx_t) == 16 && sizeof(rocshmem_team_t) == 8, \"handles\");\n  \
         static_assert(sizeof(rocshmem_uniqueid_t) == 128 && sizeof(rocshmem_init_attr_t) == 144, \"init types\");\n  \
         static_assert(offsetof(rocshmem_init_attr_t, mpi_comm) == 136, \"mpi_comm offset\");\n  \
         static_assert(sizeof(QpInfo) == 96 && sizeof(__half) == 2 && sizeof(__hip_bfloat16) == 2, \"other types\");\n  \
         printf(\"abi_link: %d C++ entry points present (expected {n})\\n\", count);\n  return count == {n} ? 0 : 1;\n}}"
    );
    s
}

/// `abi_link.c`: every C entry point of the table called through its declared type.
pub fn abi_c() -> String {
    let mut s = String::from(C_BANNER);
    s.push_str("/* Every host C name of the table must be declared in rocshmem.h and exported. */\n");
    s.push_str("#include <rocshmem/rocshmem.h>\n#include <stdio.h>\n\n");
    s.push_str("static const void *const names[] = {\n");
    let mut n = 0;
    for c in CORE.iter().filter(|c| c.shim) {
        let _ = writeln!(s, "  (const void *)&{},", emit::parse_sig(c.decl).name);
        n += 1;
    }
    for e in emit::entries() {
        let _ = writeln!(s, "  (const void *)&{},", e.c_name());
        n += 1;
    }
    let _ = writeln!(
        s,
        "}};\n\nint main(void) {{\n  int count = 0;\n  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) count += names[i] != NULL;\n  \
         _Static_assert(sizeof(rocshmem_ctx_t) == 16 && sizeof(rocshmem_init_attr_t) == 144, \"layouts\");\n  \
         _Static_assert(sizeof(rocshmem_half_t) == 2 && sizeof(rocshmem_bfloat16_t) == 2, \"16-bit floats\");\n  \
         printf(\"abi_link: %d C entry points present (expected {n})\\n\", count);\n  return count == {n} ? 0 : 1;\n}}"
    );
    s
}
