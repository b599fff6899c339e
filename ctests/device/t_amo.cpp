// Device atomics (upstream's amo_standard / amo_extended / amo_bitwise testers) and the flood
// tester: every thread of every work-group of every PE hammers words on all PEs; the target
// PE gathers what every thread fetched (host getmem from each PE) and checks the final values
// and that the fetched values form a serialisation of the operations:
//  - fetch_add: sorted, the fetched values are a chain init, +v1, +v2 ... ending at the final;
//  - fetch_inc and compare_swap (a CAS-loop increment): exactly init .. init+count-1;
//  - swap: {fetched} + {final} == {init} + {values swapped in} (as multisets);
//  - set/fetch: the final and every fetched value is the init or a value some thread set;
//  - and/or: every fetched value lies between init and the final bitwise; xor: as for swap,
//    {fetched} + {final} == {init} + {fetched ^ mask}.
#include "dtest.hpp"

#include <algorithm>
#include <map>
#include <type_traits>

namespace {

constexpr int kRounds = 4;

#define DT_ACALL(c, NAME, ...) ((c) ? rocshmem_ctx_##NAME(ctx, __VA_ARGS__) : rocshmem_##NAME(__VA_ARGS__))
#define DT_AVOID(c, NAME, ...)                     \
  do {                                             \
    if (c) rocshmem_ctx_##NAME(ctx, __VA_ARGS__);  \
    else rocshmem_##NAME(__VA_ARGS__);             \
  } while (0)

#define DT_AMO_STD(S, TY, NM)                                                                                 \
  struct S {                                                                                                  \
    using T = TY;                                                                                             \
    static const char *name() { return #NM; }                                                                \
    static DT_DEV T fetch_add(bool c, rocshmem_ctx_t ctx, T *d, T v, int pe) { return DT_ACALL(c, NM##_atomic_fetch_add, d, v, pe); } \
    static DT_DEV void add(bool c, rocshmem_ctx_t ctx, T *d, T v, int pe) { DT_AVOID(c, NM##_atomic_add, d, v, pe); } \
    static DT_DEV T fetch_inc(bool c, rocshmem_ctx_t ctx, T *d, int pe) { return DT_ACALL(c, NM##_atomic_fetch_inc, d, pe); } \
    static DT_DEV void inc(bool c, rocshmem_ctx_t ctx, T *d, int pe) { DT_AVOID(c, NM##_atomic_inc, d, pe); } \
    static DT_DEV T cswap(bool c, rocshmem_ctx_t ctx, T *d, T cond, T v, int pe) {                             \
      return DT_ACALL(c, NM##_atomic_compare_swap, d, cond, v, pe);                                           \
    }                                                                                                         \
    static DT_DEV T fetch(bool c, rocshmem_ctx_t ctx, T *d, int pe) { return DT_ACALL(c, NM##_atomic_fetch, d, pe); } \
  };

#define DT_AMO_EXT(S, TY, NM)                                                                                 \
  struct S {                                                                                                  \
    using T = TY;                                                                                             \
    static const char *name() { return #NM; }                                                                \
    static DT_DEV T fetch(bool c, rocshmem_ctx_t ctx, T *d, int pe) { return DT_ACALL(c, NM##_atomic_fetch, d, pe); } \
    static DT_DEV void set(bool c, rocshmem_ctx_t ctx, T *d, T v, int pe) { DT_AVOID(c, NM##_atomic_set, d, v, pe); } \
    static DT_DEV T swap(bool c, rocshmem_ctx_t ctx, T *d, T v, int pe) { return DT_ACALL(c, NM##_atomic_swap, d, v, pe); } \
  };

#define DT_AMO_BIT(S, TY, NM)                                                                                 \
  struct S {                                                                                                  \
    using T = TY;                                                                                             \
    static const char *name() { return #NM; }                                                                \
    static DT_DEV T fetch_and(bool c, rocshmem_ctx_t ctx, T *d, T v, int pe) { return DT_ACALL(c, NM##_atomic_fetch_and, d, v, pe); } \
    static DT_DEV void and_(bool c, rocshmem_ctx_t ctx, T *d, T v, int pe) { DT_AVOID(c, NM##_atomic_and, d, v, pe); } \
    static DT_DEV T fetch_or(bool c, rocshmem_ctx_t ctx, T *d, T v, int pe) { return DT_ACALL(c, NM##_atomic_fetch_or, d, v, pe); } \
    static DT_DEV void or_(bool c, rocshmem_ctx_t ctx, T *d, T v, int pe) { DT_AVOID(c, NM##_atomic_or, d, v, pe); } \
    static DT_DEV T fetch_xor(bool c, rocshmem_ctx_t ctx, T *d, T v, int pe) { return DT_ACALL(c, NM##_atomic_fetch_xor, d, v, pe); } \
    static DT_DEV void xor_(bool c, rocshmem_ctx_t ctx, T *d, T v, int pe) { DT_AVOID(c, NM##_atomic_xor, d, v, pe); } \
  };

DT_AMO_STD(SInt, int, int)
DT_AMO_STD(SLong, long, long)
DT_AMO_STD(SLongLong, long long, longlong)
DT_AMO_STD(SUint32, uint32_t, uint32)
DT_AMO_STD(SUint64, uint64_t, uint64)
DT_AMO_STD(SSize, size_t, size)
DT_AMO_STD(SPtrdiff, ptrdiff_t, ptrdiff)
DT_AMO_STD(SInt32, int32_t, int32)

DT_AMO_EXT(EInt, int, int)
DT_AMO_EXT(EUlong, unsigned long, ulong)
DT_AMO_EXT(EInt64, int64_t, int64)
DT_AMO_EXT(EFloat, float, float)
DT_AMO_EXT(EDouble, double, double)

DT_AMO_BIT(BUint32, uint32_t, uint32)
DT_AMO_BIT(BUint64, uint64_t, uint64)
DT_AMO_BIT(BInt64, int64_t, int64)
DT_AMO_BIT(BUint, unsigned int, uint)
DT_AMO_BIT(BUlonglong, unsigned long long, ulonglong)

// The PE a thread's round r targets, and the thread's id across all PEs.
DT_HD inline int amo_target(int pe, unsigned gtid, int r, int npes) { return int((unsigned(pe) + gtid + unsigned(r)) % unsigned(npes)); }
DT_HD inline dt_u64 amo_id(int pe, unsigned gtid, unsigned nt, int r) { return (dt_u64(pe) * nt + gtid) * kRounds + unsigned(r) + 1; }
DT_HD inline dt_u64 add_value(dt_u64 id) { return 1 + id % 7; }

// ---- standard: fetch_add, add, fetch_inc, inc, compare_swap ------------------------------
// words: [0] fetch_add, [1] add, [2] fetch_inc, [3] inc, [4] CAS-loop counter.
// res per thread and round: [0] fetch_add's value, [1] fetch_inc's, [2] the CAS winner's.
// me / npes: this PE's number and the PE count in the context's team (the world, unless cm
// is CM_TEAM: then targets are team-relative).
template <class A>
__global__ void k_amo_std(int cm, rocshmem_team_t team, typename A::T *w, typename A::T *res, int me, int npes,
                          dt_u64 *kerr) {
  using T = typename A::T;
  DT_SHARED(rocshmem_ctx_t, ctx);
  if (!dt_open_ctx(cm, team, &ctx, kerr)) return;
  const bool c = cm != CM_PLAIN;
  const unsigned g = dt_gtid(), nt = dt_nthreads();
  for (int r = 0; r < kRounds; ++r) {
    const int pe = amo_target(me, g, r, npes);
    const T v = T(add_value(amo_id(me, g, nt, r)));
    T *o = res + (size_t(g) * kRounds + r) * 3;
    o[0] = A::fetch_add(c, ctx, w + 0, v, pe);
    A::add(c, ctx, w + 1, v, pe);
    o[1] = A::fetch_inc(c, ctx, w + 2, pe);
    A::inc(c, ctx, w + 3, pe);
    T cur = A::fetch(c, ctx, w + 4, pe);
    for (;;) {
      T old = A::cswap(c, ctx, w + 4, cur, T(cur + 1), pe);
      if (old == cur) break;
      cur = old;
    }
    o[2] = cur;
  }
  dt_quiet(cm, ctx);
  dt_close_ctx(cm, &ctx);
}

// Everything each PE's kernel recorded, fetched by the host from every PE.
// Everything each member's kernel recorded (indexed by team member), read with host getmem.
template <class T>
std::vector<std::vector<T>> gather(const T *res, size_t count, const dt::Team &tm = dt::world) {
  std::vector<std::vector<T>> all(tm.n, std::vector<T>(count));
  for (int p = 0; p < tm.n; ++p) rocshmem_getmem(all[p].data(), res, count * sizeof(T), tm.world[p]);
  return all;
}

template <class T>
long long as_ll(T v) {
  return (long long)v;
}

const char *cm_label(int cm) {
  return cm == CM_PLAIN ? "default context" : cm == CM_WG ? "wg_ctx_create context" : "team context";
}

template <class A>
void run_std(int cm, const dt::Team &tm = dt::world) {
  using T = typename A::T;
  const unsigned nt = dt::opt.w * dt::opt.z;
  const size_t nres = size_t(nt) * kRounds * 3;
  T *w = dt::alloc_n<T>(8);
  T *res = dt::alloc_n<T>(nres);
  const uint64_t salt = dt::next_salt();
  T init[5];
  for (int i = 0; i < 5; ++i) init[i] = T(dt_at(dt_key(dt::seed, dt::me, salt), i) % 1000);
  dt::to_dev(w, init, sizeof init);
  dt::dev_zero(res, nres * sizeof(T));
  const std::string what = dt::fmt("standard AMOs <%s>, %s, team %s", A::name(), cm_label(cm), tm.name);
  dt::barrier();
  if (tm.member()) dt::launch(k_amo_std<A>, dt::opt.w, dt::opt.z, cm, tm.h, w, res, tm.my, tm.n, dt::kerr);
  dt::barrier();
  dt::check_kernel(what);
  if (!tm.member()) {
    dt::barrier();
    dt::release(res);
    dt::release(w);
    return;
  }
  T fin[5];
  dt::to_host(fin, w, sizeof fin);
  auto all = gather(res, nres, tm);
  std::vector<std::pair<long long, long long>> fa;  // (fetched, added)
  std::vector<long long> fi, cas;
  long long sum = 0;
  for (int p = 0; p < tm.n; ++p)
    for (unsigned g = 0; g < nt; ++g)
      for (int r = 0; r < kRounds; ++r) {
        if (amo_target(p, g, r, tm.n) != tm.my) continue;
        const long long v = (long long)add_value(amo_id(p, g, nt, r));
        const T *o = &all[p][(size_t(g) * kRounds + r) * 3];
        fa.push_back({as_ll(o[0]), v});
        fi.push_back(as_ll(o[1]));
        cas.push_back(as_ll(o[2]));
        sum += v;
      }
  const long long count = (long long)fi.size();
  const char *wn[5] = {"fetch_add", "add", "fetch_inc", "inc", "compare_swap loop"};
  const long long want[5] = {as_ll(init[0]) + sum, as_ll(init[1]) + sum, as_ll(init[2]) + count, as_ll(init[3]) + count,
                             as_ll(init[4]) + count};
  for (int i = 0; i < 5; ++i)
    dt::checkf(as_ll(fin[i]) == want[i], "%s: final value of the %s word: PE %d expected %lld got %lld (%lld ops)",
               what.c_str(), wn[i], dt::me, want[i], as_ll(fin[i]), count);
  std::sort(fa.begin(), fa.end());
  long long expect = as_ll(init[0]);
  for (size_t k = 0; k < fa.size(); ++k) {
    if (!dt::checkf(fa[k].first == expect, "%s: fetch_add values are not a chain: PE %d expected %lld got %lld at %zu",
                    what.c_str(), dt::me, expect, fa[k].first, k))
      break;
    expect += fa[k].second;
  }
  std::sort(fi.begin(), fi.end());
  std::sort(cas.begin(), cas.end());
  for (long long k = 0; k < count; ++k) {
    if (!dt::checkf(fi[k] == as_ll(init[2]) + k, "%s: fetch_inc values (sorted): PE %d expected %lld got %lld at %lld",
                    what.c_str(), dt::me, as_ll(init[2]) + k, fi[k], k))
      break;
  }
  for (long long k = 0; k < count; ++k) {
    if (!dt::checkf(cas[k] == as_ll(init[4]) + k,
                    "%s: compare_swap winners (sorted): PE %d expected %lld got %lld at %lld", what.c_str(), dt::me,
                    as_ll(init[4]) + k, cas[k], k))
      break;
  }
  dt::barrier();
  dt::release(res);
  dt::release(w);
}

// ---- extended: swap, set, fetch -----------------------------------------------------------
// words: [0] swap chain, [1] set. res per thread and round: [0] swap's old, [1] a fetch of [1].
template <class A>
__global__ void k_amo_ext(int cm, typename A::T *w, typename A::T *res, int me, int npes, dt_u64 *kerr) {
  using T = typename A::T;
  DT_SHARED(rocshmem_ctx_t, ctx);
  if (!dt_open_ctx(cm, nullptr, &ctx, kerr)) return;
  const bool c = cm != CM_PLAIN;
  const unsigned g = dt_gtid(), nt = dt_nthreads();
  for (int r = 0; r < kRounds; ++r) {
    const int pe = amo_target(me, g, r, npes);
    const T v = T(amo_id(me, g, nt, r));
    T *o = res + (size_t(g) * kRounds + r) * 2;
    o[0] = A::swap(c, ctx, w + 0, v, pe);
    A::set(c, ctx, w + 1, v, pe);
    o[1] = A::fetch(c, ctx, w + 1, pe);
  }
  dt_quiet(cm, ctx);
  dt_close_ctx(cm, &ctx);
}

// After the storm: thread 0 fetches both words of every PE.
template <class A>
__global__ void k_amo_fetch_all(int cm, typename A::T *w, typename A::T *out, int npes, dt_u64 *kerr) {
  DT_SHARED(rocshmem_ctx_t, ctx);
  if (!dt_open_ctx(cm, nullptr, &ctx, kerr)) return;
  if (dt_gtid() == 0)
    for (int pe = 0; pe < npes; ++pe)
      for (int k = 0; k < 2; ++k) out[pe * 2 + k] = A::fetch(cm != CM_PLAIN, ctx, w + k, pe);
  dt_close_ctx(cm, &ctx);
}

template <class A>
void run_ext(int cm) {
  using T = typename A::T;
  const unsigned nt = dt::opt.w * dt::opt.z;
  const size_t nres = size_t(nt) * kRounds * 2;
  T *w = dt::alloc_n<T>(4);
  T *res = dt::alloc_n<T>(nres);
  T *out = dt::alloc_n<T>(2 * size_t(dt::npes));
  T init[2] = {T(0), T(0)};  // ids start at 1
  dt::to_dev(w, init, sizeof init);
  dt::dev_zero(res, nres * sizeof(T));
  const std::string what = dt::fmt("extended AMOs <%s>, %s", A::name(), cm == CM_PLAIN ? "default context" : "wg_ctx_create context");
  dt::barrier();
  dt::launch(k_amo_ext<A>, dt::opt.w, dt::opt.z, cm, w, res, dt::me, dt::npes, dt::kerr);
  dt::barrier();
  dt::check_kernel(what);
  T fin[2];
  dt::to_host(fin, w, sizeof fin);
  auto all = gather(res, nres);
  std::vector<long long> olds, ins, fetched;
  std::vector<char> is_set_value;  // indexed by id
  dt_u64 maxid = amo_id(dt::npes - 1, nt - 1, nt, kRounds - 1);
  is_set_value.assign(size_t(maxid) + 1, 0);
  is_set_value[0] = 1;  // the initial value
  for (int p = 0; p < dt::npes; ++p)
    for (unsigned g = 0; g < nt; ++g)
      for (int r = 0; r < kRounds; ++r) {
        if (amo_target(p, g, r, dt::npes) != dt::me) continue;
        const dt_u64 id = amo_id(p, g, nt, r);
        const T *o = &all[p][(size_t(g) * kRounds + r) * 2];
        olds.push_back((long long)o[0]);
        ins.push_back((long long)id);
        fetched.push_back((long long)o[1]);
        is_set_value[id] = 1;
      }
  // swap: {olds} + {final} == {init} + {ins}
  olds.push_back((long long)fin[0]);
  ins.push_back(0);
  std::sort(olds.begin(), olds.end());
  std::sort(ins.begin(), ins.end());
  for (size_t k = 0; k < olds.size(); ++k)
    if (!dt::checkf(olds[k] == ins[k],
                    "%s: swap: returned values + final != initial + swapped-in values: PE %d expected %lld got %lld at "
                    "%zu (sorted)",
                    what.c_str(), dt::me, ins[k], olds[k], k))
      break;
  auto valid = [&](long long v) { return v >= 0 && v <= (long long)maxid && is_set_value[size_t(v)]; };
  dt::checkf(valid((long long)fin[1]), "%s: set: final value %lld on PE %d is not a value set on it", what.c_str(),
             (long long)fin[1], dt::me);
  for (size_t k = 0; k < fetched.size(); ++k)
    if (!dt::checkf(valid(fetched[k]), "%s: fetch during set: value %lld from PE %d was never set there (at %zu)",
                    what.c_str(), fetched[k], dt::me, k))
      break;
  // fetch afterwards, from a kernel: every PE's final words.
  dt::launch(k_amo_fetch_all<A>, 1, dt::opt.z, cm, w, out, dt::npes, dt::kerr);
  dt::check_kernel(what + " (fetch of the final words)");
  std::vector<T> got(2 * size_t(dt::npes));
  dt::to_host(got.data(), out, got.size() * sizeof(T));
  for (int pe = 0; pe < dt::npes; ++pe) {
    T theirs[2];
    rocshmem_getmem(theirs, w, sizeof theirs, pe);
    for (int k = 0; k < 2; ++k)
      dt::checkf(memcmp(&got[pe * 2 + k], &theirs[k], sizeof(T)) == 0,
                 "%s: rocshmem_%s_atomic_fetch of word %d on PE %d: expected %s got %s", what.c_str(), A::name(), k, pe,
                 dt::hex(&theirs[k], sizeof(T)).c_str(), dt::hex(&got[pe * 2 + k], sizeof(T)).c_str());
  }
  dt::barrier();
  dt::release(out);
  dt::release(res);
  dt::release(w);
}

// ---- bitwise: fetch_and/and, fetch_or/or, fetch_xor/xor ----------------------------------
DT_HD inline dt_u64 and_mask(dt_u64 id, unsigned bits) { return ~(dt_u64(1) << (dt_mix(id) % bits)); }
DT_HD inline dt_u64 or_mask(dt_u64 id, unsigned bits) {
  return (dt_u64(1) << (dt_mix(id * 3) % bits)) | (dt_u64(1) << (dt_mix(id * 5) % bits));
}
DT_HD inline dt_u64 xor_mask(dt_u64 id) { return dt_mix(id * 7 + 1); }

// words: [0] fetch_and, [1] and, [2] fetch_or, [3] or, [4] fetch_xor, [5] xor.
// res per thread and round: fetch_and's, fetch_or's, fetch_xor's values.
template <class A>
__global__ void k_amo_bit(int cm, typename A::T *w, typename A::T *res, int me, int npes, dt_u64 *kerr) {
  using T = typename A::T;
  DT_SHARED(rocshmem_ctx_t, ctx);
  if (!dt_open_ctx(cm, nullptr, &ctx, kerr)) return;
  const bool c = cm != CM_PLAIN;
  const unsigned g = dt_gtid(), nt = dt_nthreads(), bits = 8 * sizeof(T);
  for (int r = 0; r < kRounds; ++r) {
    const int pe = amo_target(me, g, r, npes);
    const dt_u64 id = amo_id(me, g, nt, r);
    T *o = res + (size_t(g) * kRounds + r) * 3;
    o[0] = A::fetch_and(c, ctx, w + 0, T(and_mask(id, bits)), pe);
    A::and_(c, ctx, w + 1, T(and_mask(id, bits)), pe);
    o[1] = A::fetch_or(c, ctx, w + 2, T(or_mask(id, bits)), pe);
    A::or_(c, ctx, w + 3, T(or_mask(id, bits)), pe);
    o[2] = A::fetch_xor(c, ctx, w + 4, T(xor_mask(id)), pe);
    A::xor_(c, ctx, w + 5, T(xor_mask(id)), pe);
  }
  dt_quiet(cm, ctx);
  dt_close_ctx(cm, &ctx);
}

template <class A>
void run_bit(int cm) {
  using T = typename A::T;
  using U = typename std::make_unsigned<T>::type;
  const unsigned nt = dt::opt.w * dt::opt.z, bits = 8 * sizeof(T);
  const size_t nres = size_t(nt) * kRounds * 3;
  T *w = dt::alloc_n<T>(8);
  T *res = dt::alloc_n<T>(nres);
  const uint64_t salt = dt::next_salt();
  const uint64_t key = dt_key(dt::seed, dt::me, salt);
  U init[6];
  init[0] = init[1] = U(~U(0) ^ (U(dt_at(key, 0)) & U(dt_at(key, 1))));  // mostly ones: and has bits to clear
  init[2] = init[3] = U(dt_at(key, 2) & dt_at(key, 3) & dt_at(key, 4));   // mostly zeros: or has bits to set
  init[4] = init[5] = U(dt_at(key, 5));
  dt::to_dev(w, init, sizeof init);
  dt::dev_zero(res, nres * sizeof(T));
  const std::string what = dt::fmt("bitwise AMOs <%s>, %s", A::name(), cm == CM_PLAIN ? "default context" : "wg_ctx_create context");
  dt::barrier();
  dt::launch(k_amo_bit<A>, dt::opt.w, dt::opt.z, cm, w, res, dt::me, dt::npes, dt::kerr);
  dt::barrier();
  dt::check_kernel(what);
  U fin[6];
  dt::to_host(fin, w, sizeof fin);
  auto all = gather(res, nres);
  U want_and = init[0], want_or = init[2], want_xor = init[4];
  std::vector<U> fand, forr, fx_olds, fx_after;
  for (int p = 0; p < dt::npes; ++p)
    for (unsigned g = 0; g < nt; ++g)
      for (int r = 0; r < kRounds; ++r) {
        if (amo_target(p, g, r, dt::npes) != dt::me) continue;
        const dt_u64 id = amo_id(p, g, nt, r);
        const T *o = &all[p][(size_t(g) * kRounds + r) * 3];
        want_and = U(want_and & U(and_mask(id, bits)));
        want_or = U(want_or | U(or_mask(id, bits)));
        want_xor = U(want_xor ^ U(xor_mask(id)));
        fand.push_back(U(o[0]));
        forr.push_back(U(o[1]));
        fx_olds.push_back(U(o[2]));
        fx_after.push_back(U(U(o[2]) ^ U(xor_mask(id))));
      }
  const U want[6] = {want_and, want_and, want_or, want_or, want_xor, want_xor};
  const char *wn[6] = {"fetch_and", "and", "fetch_or", "or", "fetch_xor", "xor"};
  for (int i = 0; i < 6; ++i)
    dt::checkf(fin[i] == want[i], "%s: final value of the %s word: PE %d expected 0x%llx got 0x%llx", what.c_str(), wn[i],
               dt::me, (dt_u64)want[i], (dt_u64)fin[i]);
  for (size_t k = 0; k < fand.size(); ++k) {
    if (!dt::checkf((fand[k] & want_and) == want_and && (fand[k] & U(~init[0])) == 0,
                    "%s: fetch_and returned 0x%llx on PE %d: not between initial 0x%llx and final 0x%llx (at %zu)",
                    what.c_str(), (dt_u64)fand[k], dt::me, (dt_u64)init[0], (dt_u64)want_and, k))
      break;
  }
  for (size_t k = 0; k < forr.size(); ++k) {
    if (!dt::checkf((forr[k] & init[2]) == init[2] && (forr[k] & U(~want_or)) == 0,
                    "%s: fetch_or returned 0x%llx on PE %d: not between initial 0x%llx and final 0x%llx (at %zu)",
                    what.c_str(), (dt_u64)forr[k], dt::me, (dt_u64)init[2], (dt_u64)want_or, k))
      break;
  }
  fx_olds.push_back(fin[4]);
  fx_after.push_back(init[4]);
  std::sort(fx_olds.begin(), fx_olds.end());
  std::sort(fx_after.begin(), fx_after.end());
  for (size_t k = 0; k < fx_olds.size(); ++k)
    if (!dt::checkf(fx_olds[k] == fx_after[k],
                    "%s: fetch_xor values are no serialisation: PE %d expected 0x%llx got 0x%llx at %zu (sorted)",
                    what.c_str(), dt::me, (dt_u64)fx_after[k], (dt_u64)fx_olds[k], k))
      break;
  dt::barrier();
  dt::release(res);
  dt::release(w);
}

void t_amo_standard() {
  run_std<SInt>(CM_PLAIN);
  run_std<SLong>(CM_PLAIN);
  run_std<SLongLong>(CM_PLAIN);
  run_std<SUint32>(CM_PLAIN);
  run_std<SUint64>(CM_PLAIN);
  run_std<SSize>(CM_PLAIN);
  run_std<SPtrdiff>(CM_PLAIN);
  run_std<SInt32>(CM_PLAIN);
  run_std<SInt>(CM_WG);
  run_std<SUint64>(CM_WG);
  // a team context: PE numbers relative to the team
  run_std<SLongLong>(CM_TEAM, dt::npes >= 4 ? dt::odds : dt::rest);
  run_std<SUint32>(CM_TEAM, dt::rest);
}

void t_amo_extended() {
  run_ext<EInt>(CM_PLAIN);
  run_ext<EUlong>(CM_PLAIN);
  run_ext<EInt64>(CM_PLAIN);
  run_ext<EFloat>(CM_PLAIN);
  run_ext<EDouble>(CM_PLAIN);
  run_ext<EFloat>(CM_WG);
  run_ext<EInt64>(CM_WG);
}

void t_amo_bitwise() {
  run_bit<BUint32>(CM_PLAIN);
  run_bit<BUint64>(CM_PLAIN);
  run_bit<BInt64>(CM_PLAIN);
  run_bit<BUint>(CM_PLAIN);
  run_bit<BUlonglong>(CM_PLAIN);
  run_bit<BUint64>(CM_WG);
}

// ---- flood: every thread of every PE hammers PE 0 -------------------------------------------
constexpr int kFloodSlots = 64;     // counters on PE 0
constexpr int kFloodRounds = 4;
constexpr int kFloodWords = 4;      // uint64 per thread put per round
constexpr size_t kFloodWgBytes = 1024;

// ctr: kFloodSlots counters; data: per (pe, thread, round) kFloodWords words; wgdata: per
// (pe, block, round) kFloodWgBytes bytes; src: this PE's outgoing words; got: what each
// thread read back from PE 0's src with get.
__global__ void k_flood(uint64_t *ctr, uint64_t *data, unsigned char *wgdata, uint64_t *src, unsigned char *wgsrc,
                        uint64_t *pe0src, int me, uint64_t seed, uint64_t salt, dt_u64 *kerr) {
  const unsigned g = dt_gtid(), nt = dt_nthreads();
  const uint64_t key0 = dt_key(seed, 0, salt + 7);
  for (int r = 0; r < kFloodRounds; ++r) {
    const dt_u64 id = (dt_u64(me) * nt + g) * kFloodRounds + unsigned(r);
    rocshmem_uint64_atomic_add(ctr + id % kFloodSlots, 1 + id % 3, 0);
    rocshmem_uint64_put(data + id * kFloodWords, src + (size_t(g) * kFloodRounds + r) * kFloodWords, kFloodWords, 0);
    const dt_u64 wid = (dt_u64(me) * dt_gdim() + dt_bid()) * kFloodRounds + unsigned(r);
    rocshmem_putmem_nbi_wg(wgdata + wid * kFloodWgBytes, wgsrc + (size_t(dt_bid()) * kFloodRounds + r) * kFloodWgBytes,
                           kFloodWgBytes, 0);
    // and reads: one word of PE 0's source per round
    const dt_u64 at = dt_mix(id) % (dt_u64(nt) * kFloodRounds * kFloodWords);
    uint64_t v = rocshmem_uint64_g(pe0src + at, 0);
    if (v != dt_at(key0, at)) dt_kfail(kerr, KC_DATA, at, dt_at(key0, at), v);
  }
  rocshmem_quiet();
}

void t_flood() {
  const unsigned nt = dt::opt.w * dt::opt.z, wg = dt::opt.w;
  const size_t nwords = size_t(dt::npes) * nt * kFloodRounds * kFloodWords;
  const size_t nwg = size_t(dt::npes) * wg * kFloodRounds * kFloodWgBytes;
  const size_t my_words = size_t(nt) * kFloodRounds * kFloodWords, my_wg = size_t(wg) * kFloodRounds * kFloodWgBytes;
  uint64_t *ctr = dt::alloc_n<uint64_t>(kFloodSlots);
  uint64_t *data = dt::alloc_n<uint64_t>(nwords);
  unsigned char *wgdata = dt::alloc_n<unsigned char>(nwg);
  uint64_t *src = dt::alloc_n<uint64_t>(my_words);
  unsigned char *wgsrc = dt::alloc_n<unsigned char>(my_wg);
  uint64_t *pe0src = dt::alloc_n<uint64_t>(my_words);
  const uint64_t salt = dt::next_salt();
  dt::dev_zero(ctr, kFloodSlots * sizeof(uint64_t));
  dt::dev_zero(data, nwords * sizeof(uint64_t));
  dt::dev_zero(wgdata, nwg);
  dt::dev_fill(src, my_words * sizeof(uint64_t), dt::me, salt);
  dt::dev_fill(wgsrc, my_wg, dt::me, salt + 1);
  {
    std::vector<uint64_t> h(my_words);
    const uint64_t key0 = dt_key(dt::seed, 0, salt + 7);
    for (size_t i = 0; i < my_words; ++i) h[i] = dt_at(key0, i);
    dt::to_dev(pe0src, h.data(), my_words * sizeof(uint64_t));
  }
  dt::barrier();
  dt::launch(k_flood, wg, dt::opt.z, ctr, data, wgdata, src, wgsrc, pe0src, dt::me, dt::seed, salt, dt::kerr);
  dt::barrier();
  dt::check_kernel("flood: get from PE 0 (at = word)");
  if (dt::me == 0) {
    std::vector<uint64_t> c(kFloodSlots), want(kFloodSlots, 0);
    dt::to_host(c.data(), ctr, kFloodSlots * sizeof(uint64_t));
    for (int p = 0; p < dt::npes; ++p)
      for (unsigned g = 0; g < nt; ++g)
        for (int r = 0; r < kFloodRounds; ++r) {
          dt_u64 id = (dt_u64(p) * nt + g) * kFloodRounds + unsigned(r);
          want[id % kFloodSlots] += 1 + id % 3;
        }
    dt::compare(c.data(), want.data(), kFloodSlots, sizeof(uint64_t), "flood: atomic_add counters on PE 0");
    std::vector<uint64_t> d(nwords), dw(nwords);
    dt::to_host(d.data(), data, nwords * sizeof(uint64_t));
    for (int p = 0; p < dt::npes; ++p) dt::fill(&dw[size_t(p) * my_words], my_words * sizeof(uint64_t), p, salt);
    // data[id * W + k] = src_p[(g * R + r) * W + k] with id = (p * nt + g) * R + r: the same order.
    dt::compare(d.data(), dw.data(), nwords, sizeof(uint64_t), "flood: uint64_put slots on PE 0 (index = (pe*threads+thread)*rounds*4 + round*4 + k)");
    std::vector<unsigned char> b(nwg), bw(nwg);
    dt::to_host(b.data(), wgdata, nwg);
    for (int p = 0; p < dt::npes; ++p) dt::fill(&bw[size_t(p) * my_wg], my_wg, p, salt + 1);
    dt::compare(b.data(), bw.data(), nwg, 1, "flood: putmem_nbi_wg slots on PE 0 (byte index)");
  }
  dt::barrier();
  dt::release(pe0src);
  dt::release(wgsrc);
  dt::release(src);
  dt::release(wgdata);
  dt::release(data);
  dt::release(ctr);
}

}  // namespace

void dt_register_amo(std::vector<DtTest> &v) {
  v.push_back({"amo-standard", t_amo_standard, true, "fetch_add/add/fetch_inc/inc/compare_swap, 8 types, storms on all PEs"});
  v.push_back({"amo-extended", t_amo_extended, true, "fetch/set/swap incl. float and double"});
  v.push_back({"amo-bitwise", t_amo_bitwise, true, "fetch_and/or/xor and and/or/xor"});
  v.push_back({"flood", t_flood, true, "every thread of every PE: atomic adds, puts, put_wg and g on PE 0"});
}
