// Point-to-point synchronisation from kernels (upstream's ping_pong, signaling_operations,
// fence_ordering, barrier_all / sync_all and wait testers) and the context pool:
//  - ping-pong: PE 0 and 1 alternate rounds of p + fence + flag (int_p, signal_set, atomic_inc),
//    the receiver waits and checks the round's values in the kernel;
//  - signal: putmem_signal and typed put_signal in the six forms with SET and ADD; the receiver
//    waits with signal_wait_until and snapshots the data at once; signal_fetch at each scope;
//    signal_add / signal_set;
//  - fence: rounds of large and small puts, fence, flag; the receiver checks each round's data
//    as soon as it sees the flag;
//  - barrier: every barrier and sync at each scope, on the world and on a strided team: each
//    round every PE increments a counter on every other member, syncs, and checks the count;
//  - wait: wait_until (+ every comparison), _all/_any/_some and their _vector forms with status
//    masks, and _test, for 8 types;
//  - ctx-pool: ROCSHMEM_MAX_NUM_CONTEXTS contexts can be created, one more fails, and destroying
//    gives them back.
#include "dtest.hpp"

#include <algorithm>

namespace {

// ---- ping-pong --------------------------------------------------------------------------
constexpr int kPPWords = 8;

__global__ void k_pingpong(int *data, int *iflag, uint64_t *sflag, int *cflag, int me, int rounds, uint64_t seed,
                           uint64_t salt, dt_u64 *kerr) {
  if (dt_gtid() != 0) return;
  const int peer = 1 - me;
  const uint64_t kme = dt_key(seed, me, salt), kpeer = dt_key(seed, peer, salt);
  int ccount = 0;  // atomic_inc flags received so far
  for (int i = 1; i <= rounds; ++i) {
    const int sender = (i % 2 == 1) ? 0 : 1;
    const int how = (i / 2) % 3;  // both directions use each flag kind
    if (sender == me) {
      for (int k = 0; k < kPPWords; ++k) rocshmem_int_p(data + k, int(dt_at(kme, dt_u64(i) * kPPWords + k)), peer);
      rocshmem_fence();
      if (how == 0) rocshmem_int_p(iflag, i, peer);
      else if (how == 1) rocshmem_signal_set(sflag, uint64_t(i), peer);
      else rocshmem_int_atomic_inc(cflag, peer);
    } else {
      if (how == 0) rocshmem_int_wait_until(iflag, ROCSHMEM_CMP_GE, i);
      else if (how == 1) rocshmem_signal_wait_until(sflag, ROCSHMEM_CMP_GE, uint64_t(i));
      else rocshmem_int_wait_until(cflag, ROCSHMEM_CMP_EQ, ++ccount);
      for (int k = 0; k < kPPWords; ++k) {
        int want = int(dt_at(kpeer, dt_u64(i) * kPPWords + k)), got = dt_volatile_load(data + k);
        if (got != want) dt_kfail(kerr, KC_DATA, dt_u64(i) * 100 + k, (dt_u64)(int64_t)want, (dt_u64)(int64_t)got);
      }
    }
  }
  rocshmem_quiet();
}

void t_ping_pong() {
  if (dt::npes < 2) return;
  int *data = dt::alloc_n<int>(kPPWords);
  int *iflag = dt::alloc_n<int>(1);
  uint64_t *sflag = dt::alloc_n<uint64_t>(1);
  int *cflag = dt::alloc_n<int>(1);
  dt::dev_zero(data, kPPWords * sizeof(int));
  dt::dev_zero(iflag, sizeof(int));
  dt::dev_zero(sflag, sizeof(uint64_t));
  dt::dev_zero(cflag, sizeof(int));
  const uint64_t salt = dt::next_salt();
  const int rounds = 120;
  dt::barrier();
  if (dt::me < 2)
    dt::launch(k_pingpong, dt::opt.w, dt::opt.z, data, iflag, sflag, cflag, dt::me, rounds, dt::seed, salt, dt::kerr);
  dt::barrier();
  dt::check_kernel("ping-pong between PE 0 and PE 1 (at = round * 100 + word)");
  dt::release(cflag);
  dt::release(sflag);
  dt::release(iflag);
  dt::release(data);
}

// ---- put with signal --------------------------------------------------------------------
enum { SC_THREAD, SC_WAVE, SC_WG };

#define DT_CALL(c, NAME, ...)                     \
  do {                                            \
    if (c) rocshmem_ctx_##NAME(ctx, __VA_ARGS__); \
    else rocshmem_##NAME(__VA_ARGS__);            \
  } while (0)

#define DT_SIG_FORMS(PFX)                                                                             \
  template <int SC, bool NBI>                                                                         \
  static DT_DEV void ps(bool c, rocshmem_ctx_t ctx, T *d, const T *s, size_t n, uint64_t *sig, uint64_t sv, int op, \
                        int pe) {                                                                     \
    if constexpr (SC == SC_THREAD && !NBI) DT_CALL(c, PFX, d, s, n, sig, sv, op, pe);                 \
    else if constexpr (SC == SC_THREAD) DT_CALL(c, PFX##_nbi, d, s, n, sig, sv, op, pe);              \
    else if constexpr (SC == SC_WAVE && !NBI) DT_CALL(c, PFX##_wave, d, s, n, sig, sv, op, pe);       \
    else if constexpr (SC == SC_WAVE) DT_CALL(c, PFX##_nbi_wave, d, s, n, sig, sv, op, pe);           \
    else if constexpr (!NBI) DT_CALL(c, PFX##_wg, d, s, n, sig, sv, op, pe);                          \
    else DT_CALL(c, PFX##_nbi_wg, d, s, n, sig, sv, op, pe);                                          \
  }

struct SigMem {
  using T = unsigned char;
  static const char *name() { return "putmem_signal"; }
  DT_SIG_FORMS(putmem_signal)
};
struct SigInt {
  using T = int;
  static const char *name() { return "int_put_signal"; }
  DT_SIG_FORMS(int_put_signal)
};
struct SigDouble {
  using T = double;
  static const char *name() { return "double_put_signal"; }
  DT_SIG_FORMS(double_put_signal)
};
struct SigUint64 {
  using T = uint64_t;
  static const char *name() { return "uint64_put_signal"; }
  DT_SIG_FORMS(uint64_put_signal)
};

constexpr int kMaxSizes = 8;
constexpr size_t kGuard = 2;

struct SigLayout {
  int nsizes;
  dt_u64 nelems[kMaxSizes];
  dt_u64 off[kMaxSizes];
  dt_u64 stride;  // elements per unit
  dt_u64 units;
};

DT_HD inline uint64_t sig_value(uint64_t salt, int k, dt_u64 unit) { return (dt_mix(salt + dt_u64(k) * 131 + unit) | 1) & 0xffffffffffffULL; }

// sig: per size k, `units` SET words then one ADD word. fres: per size and global thread, the
// signal_fetch value after the wait.
template <class A, int SC, bool NBI>
__global__ void k_signal(int cm, rocshmem_team_t team, int sig_op, typename A::T *dest, const typename A::T *src, typename A::T *snap,
                         uint64_t *sig, uint64_t *fres, SigLayout L, int peer, uint64_t salt, dt_u64 *kerr) {
  DT_SHARED(rocshmem_ctx_t, ctx);
  if (!dt_open_ctx(cm, team, &ctx, kerr)) return;
  const bool c = cm != CM_PLAIN;
  dt_u64 unit;
  unsigned rank, size;
  if (SC == SC_THREAD) unit = dt_gtid(), rank = 0, size = 1;
  else if (SC == SC_WAVE) unit = dt_u64(dt_bid()) * dt_wpb() + dt_wave(), rank = dt_lane(), size = dt_wave_lanes();
  else unit = dt_bid(), rank = dt_tid(), size = dt_bdim();
  const dt_u64 words = L.units + 1;
  for (int k = 0; k < L.nsizes; ++k) {
    const size_t at = size_t(unit * L.stride + L.off[k]);
    uint64_t *s = sig_op == ROCSHMEM_SIGNAL_SET ? sig + k * words + unit : sig + k * words + L.units;
    const uint64_t sv = sig_op == ROCSHMEM_SIGNAL_SET ? sig_value(salt, k, unit) : unit + 1;
    A::template ps<SC, NBI>(c, ctx, dest + at, src + at, size_t(L.nelems[k]), s, sv, sig_op, peer);
  }
  if (NBI) dt_quiet(cm, ctx);
  const dt_u64 total = L.units * (L.units + 1) / 2;
  for (int k = 0; k < L.nsizes; ++k) {
    const size_t at = size_t(unit * L.stride + L.off[k]);
    uint64_t *s = sig_op == ROCSHMEM_SIGNAL_SET ? sig + k * words + unit : sig + k * words + L.units;
    const uint64_t want = sig_op == ROCSHMEM_SIGNAL_SET ? sig_value(salt, k, unit) : total;
    uint64_t got = rocshmem_signal_wait_until(s, ROCSHMEM_CMP_EQ, want);
    if (got != want) dt_kfail(kerr, KC_SIGNAL, unit, want, got);
    // The data the signal announced, read at once.
    for (size_t i = rank; i < size_t(L.nelems[k]); i += size) snap[at + i] = dest[at + i];
    uint64_t f;
    if (SC == SC_THREAD) f = rocshmem_signal_fetch(s);
    else if (SC == SC_WAVE) f = rocshmem_signal_fetch_wave(s);
    else f = rocshmem_signal_fetch_wg(s);
    fres[size_t(k) * dt_nthreads() + dt_gtid()] = f;
  }
  dt_close_ctx(cm, &ctx);
}

unsigned units_of(int sc) {
  const unsigned ws = dt::wave_size();
  if (sc == SC_THREAD) return dt::opt.w * dt::opt.z;
  if (sc == SC_WAVE) return dt::opt.w * ((dt::opt.z + ws - 1) / ws);
  return dt::opt.w;
}

template <class A, int SC, bool NBI>
void run_signal(int cm, int sig_op, const dt::Team &tm = dt::world) {
  using T = typename A::T;
  const size_t cap = SC == SC_THREAD ? 1000 : SC == SC_WAVE ? 8192 : 65536;
  SigLayout L{};
  // nelems 0 first: the signal must still arrive
  L.nelems[0] = 0;
  L.off[0] = 0;
  size_t run = kGuard;
  L.nsizes = 1;
  for (size_t b : dt::sizes_upto(cap)) {
    dt_u64 ne = b / sizeof(T) ? b / sizeof(T) : 1;
    if ((L.nsizes && L.nelems[L.nsizes - 1] == ne) || L.nsizes == kMaxSizes) continue;
    L.nelems[L.nsizes] = ne;
    L.off[L.nsizes] = run;
    run += size_t(ne) + kGuard;
    L.nsizes++;
  }
  L.stride = run;
  L.units = units_of(SC);
  const unsigned nt = dt::opt.w * dt::opt.z;
  const size_t total = size_t(L.units) * run, nsig = size_t(L.nsizes) * (L.units + 1), nf = size_t(L.nsizes) * nt;
  T *src = dt::alloc_n<T>(total), *dest = dt::alloc_n<T>(total), *snap = dt::alloc_n<T>(total);
  uint64_t *sig = dt::alloc_n<uint64_t>(nsig), *fres = dt::alloc_n<uint64_t>(nf);
  const uint64_t salt = dt::next_salt();
  dt::dev_fill(src, total * sizeof(T), dt::me, salt);
  dt::dev_fill(dest, total * sizeof(T), dt::me, salt + 1);
  dt::dev_zero(snap, total * sizeof(T));
  dt::dev_zero(sig, nsig * sizeof(uint64_t));
  dt::dev_zero(fres, nf * sizeof(uint64_t));
  const char *sc_name[] = {"", "_wave", "_wg"};
  const std::string what = dt::fmt("%s%s%s, %s, %s", A::name(), NBI ? "_nbi" : "", sc_name[SC],
                                   sig_op == ROCSHMEM_SIGNAL_SET ? "ROCSHMEM_SIGNAL_SET" : "ROCSHMEM_SIGNAL_ADD",
                                   cm == CM_PLAIN ? "default context" : cm == CM_WG ? "wg_ctx_create context" : "team context")
                         + dt::fmt(", team %s", tm.name);
  dt::barrier();
  const int peer = (tm.my + 1) % (tm.n ? tm.n : 1), sender = tm.member() ? tm.world[(tm.my - 1 + tm.n) % tm.n] : -1;
  if (tm.member())
    dt::launch(k_signal<A, SC, NBI>, dt::opt.w, dt::opt.z, cm, tm.h, sig_op, dest, src, snap, sig, fres, L,
               cm == CM_TEAM ? peer : tm.world[peer], salt, dt::kerr);
  dt::barrier();
  dt::check_kernel(what);
  bool ok = tm.member();
  std::vector<T> got(total), gsnap(total), expect(total), sent(total);
  dt::to_host(got.data(), dest, total * sizeof(T));
  dt::to_host(gsnap.data(), snap, total * sizeof(T));
  dt::fill(expect.data(), total * sizeof(T), dt::me, salt + 1);
  if (ok) dt::fill(sent.data(), total * sizeof(T), sender, salt);
  for (dt_u64 u = 0; u < L.units && ok; ++u)
    for (int k = 0; k < L.nsizes && ok; ++k) {
      const size_t at = size_t(u * run + L.off[k]), n = size_t(L.nelems[k]);
      memcpy(&expect[at], &sent[at], n * sizeof(T));
      ok = dt::compare(&gsnap[at], &sent[at], n, sizeof(T),
                       dt::fmt("%s: data read right after the signal: unit %llu, %zu elements from PE %d", what.c_str(), u,
                               n, sender)) &&
           dt::compare(&got[at], &expect[at], n + kGuard, sizeof(T),
                       dt::fmt("%s: destination: unit %llu, %zu elements from PE %d (index >= %zu is the guard)",
                               what.c_str(), u, n, sender, n));
    }
  std::vector<uint64_t> f(nf);
  dt::to_host(f.data(), fres, nf * sizeof(uint64_t));
  const unsigned ws = dt::wave_size();
  for (int k = 0; k < L.nsizes && ok; ++k)
    for (unsigned t = 0; t < nt; ++t) {
      const dt_u64 unit = SC == SC_THREAD ? t : SC == SC_WAVE ? dt_u64(t / dt::opt.z) * ((dt::opt.z + ws - 1) / ws) + (t % dt::opt.z) / ws : t / dt::opt.z;
      const uint64_t want = sig_op == ROCSHMEM_SIGNAL_SET ? sig_value(salt, k, unit) : L.units * (L.units + 1) / 2;
      const uint64_t g = f[size_t(k) * nt + t];
      if (!dt::checkf(g == want, "%s: rocshmem_signal_fetch%s: thread %u, size #%d: expected %llu got %llu",
                      what.c_str(), sc_name[SC], t, k, (dt_u64)want, (dt_u64)g)) {
        ok = false;
        break;
      }
    }
  dt::barrier();
  dt::release(fres);
  dt::release(sig);
  dt::release(snap);
  dt::release(dest);
  dt::release(src);
}

template <class A>
void signal_forms(int cm, bool both_ops, const dt::Team &tm = dt::world) {
  for (int op : {ROCSHMEM_SIGNAL_SET, ROCSHMEM_SIGNAL_ADD}) {
    run_signal<A, SC_THREAD, false>(cm, op, tm);
    run_signal<A, SC_THREAD, true>(cm, op, tm);
    run_signal<A, SC_WAVE, false>(cm, op, tm);
    run_signal<A, SC_WAVE, true>(cm, op, tm);
    run_signal<A, SC_WG, false>(cm, op, tm);
    run_signal<A, SC_WG, true>(cm, op, tm);
    if (!both_ops) break;
  }
}

// signal_add / signal_set (thread scope): every thread adds (thread + 1) to one word of the
// next PE and sets its own word there; the receiver waits for the sum and for its words.
__global__ void k_sigops(int cm, uint64_t *cnt, uint64_t *slot, uint64_t *fres, int peer, uint64_t salt, uint64_t psalt,
                         dt_u64 *kerr) {
  DT_SHARED(rocshmem_ctx_t, ctx);
  if (!dt_open_ctx(cm, nullptr, &ctx, kerr)) return;
  const unsigned g = dt_gtid(), nt = dt_nthreads();
  const uint64_t mine = dt_mix(salt + g) | 1, theirs = dt_mix(psalt + g) | 1;
  if (cm == CM_PLAIN) {
    rocshmem_signal_add(cnt, g + 1, peer);
    rocshmem_signal_set(slot + g, mine, peer);
  } else {
    rocshmem_ctx_signal_add(ctx, cnt, g + 1, peer);
    rocshmem_ctx_signal_set(ctx, slot + g, mine, peer);
  }
  const uint64_t total = uint64_t(nt) * (nt + 1) / 2;
  uint64_t got = rocshmem_signal_wait_until(cnt, ROCSHMEM_CMP_GE, total);
  if (got != total) dt_kfail(kerr, KC_SIGNAL, 1000000, total, got);
  got = rocshmem_signal_wait_until(slot + g, ROCSHMEM_CMP_NE, 0);
  if (got != theirs) dt_kfail(kerr, KC_SIGNAL, g, theirs, got);
  fres[g] = rocshmem_signal_fetch(slot + g);
  fres[nt + g] = rocshmem_signal_fetch(cnt);
  dt_close_ctx(cm, &ctx);
}

void run_sigops(int cm) {
  const unsigned nt = dt::opt.w * dt::opt.z;
  uint64_t *cnt = dt::alloc_n<uint64_t>(1), *slot = dt::alloc_n<uint64_t>(nt), *fres = dt::alloc_n<uint64_t>(2 * nt);
  dt::dev_zero(cnt, sizeof(uint64_t));
  dt::dev_zero(slot, nt * sizeof(uint64_t));
  dt::dev_zero(fres, 2 * nt * sizeof(uint64_t));
  const uint64_t base = dt::next_salt();
  const int peer = (dt::me + 1) % dt::npes, sender = (dt::me - 1 + dt::npes) % dt::npes;
  const std::string what = dt::fmt("signal_add/signal_set, %s", cm == CM_PLAIN ? "default context" : "wg_ctx_create context");
  dt::barrier();
  dt::launch(k_sigops, dt::opt.w, dt::opt.z, cm, cnt, slot, fres, peer, base + uint64_t(dt::me) * 977,
             base + uint64_t(sender) * 977, dt::kerr);
  dt::barrier();
  dt::check_kernel(what + " (at = thread, 1000000 = the sum)");
  std::vector<uint64_t> f(2 * nt), want(2 * nt);
  dt::to_host(f.data(), fres, 2 * nt * sizeof(uint64_t));
  for (unsigned g = 0; g < nt; ++g) {
    want[g] = dt_mix(base + uint64_t(sender) * 977 + g) | 1;
    want[nt + g] = uint64_t(nt) * (nt + 1) / 2;
  }
  dt::compare(f.data(), want.data(), 2 * nt, sizeof(uint64_t),
              what + ": rocshmem_signal_fetch of the set words (index < threads) and of the sum");
  dt::barrier();
  dt::release(fres);
  dt::release(slot);
  dt::release(cnt);
}

void t_signal() {
  signal_forms<SigMem>(CM_PLAIN, true);
  signal_forms<SigInt>(CM_PLAIN, true);
  signal_forms<SigDouble>(CM_PLAIN, false);
  signal_forms<SigUint64>(CM_WG, true);
  signal_forms<SigMem>(CM_TEAM, false, dt::npes >= 4 ? dt::odds : dt::rest);
  run_sigops(CM_PLAIN);
  run_sigops(CM_WG);
}

// ---- fence ordering ---------------------------------------------------------------------
constexpr int kFenceRounds = 8;
constexpr int kFenceThreadWords = 6;

DT_HD inline size_t fence_bytes(int r, size_t big) { return r % 2 == 0 ? big : 8; }

// Work-group form: round r of work-group b writes region (b, r) of the next PE with
// putmem_wg, then thread 0 fences and raises flag b to r + 1. The receiver work-group b
// waits for its flag >= r + 1 and checks region (b, r) in the kernel. Thread form: every
// thread puts kFenceThreadWords ints, fences, and raises its own flag.
__global__ void k_fence(int cm, unsigned char *dest, const unsigned char *src, int *wflag, int *tdest, int *tflag,
                        size_t big, int peer, int me, int prev, uint64_t seed, uint64_t salt, dt_u64 *kerr) {
  DT_SHARED(rocshmem_ctx_t, ctx);
  if (!dt_open_ctx(cm, nullptr, &ctx, kerr)) return;
  const unsigned b = dt_bid(), t = dt_tid(), g = dt_gtid();
  const size_t per_wg = (kFenceRounds / 2) * (big + 8);
  const uint64_t kprev = dt_key(seed, prev, salt), kprev_t = dt_key(seed, prev, salt + 1), kme_t = dt_key(seed, me, salt + 1);
  size_t off = size_t(b) * per_wg;
  for (int r = 0; r < kFenceRounds; ++r) {
    const size_t n = fence_bytes(r, big);
    // work-group form
    if (cm == CM_PLAIN) rocshmem_putmem_wg(dest + off, src + off, n, peer);
    else rocshmem_ctx_putmem_wg(ctx, dest + off, src + off, n, peer);
    if (t == 0) {
      dt_fence(cm, ctx);
      if (cm == CM_PLAIN) rocshmem_int_p(wflag + b, r + 1, peer);
      else rocshmem_ctx_int_p(ctx, wflag + b, r + 1, peer);
    }
    // thread form
    int vals[kFenceThreadWords];
    for (int k = 0; k < kFenceThreadWords; ++k) vals[k] = int(dt_at(kme_t, (dt_u64(g) * kFenceRounds + r) * kFenceThreadWords + k));
    int *td = tdest + (size_t(g) * kFenceRounds + r) * kFenceThreadWords;
    if (cm == CM_PLAIN) {
      // vals is private memory: p element by element
      for (int k = 0; k < kFenceThreadWords; ++k) rocshmem_int_p(td + k, vals[k], peer);
      rocshmem_fence();
      rocshmem_int_p(tflag + g, r + 1, peer);
    } else {
      for (int k = 0; k < kFenceThreadWords; ++k) rocshmem_ctx_int_p(ctx, td + k, vals[k], peer);
      rocshmem_ctx_fence(ctx);
      rocshmem_ctx_int_p(ctx, tflag + g, r + 1, peer);
    }
    // receive round r from the previous PE
    if (t == 0) rocshmem_int_wait_until(wflag + b, ROCSHMEM_CMP_GE, r + 1);
    __syncthreads();
    for (size_t w = t; w < n / 8; w += dt_bdim()) {
      const size_t word = (off / 8) + w;
      const uint64_t got = dt_volatile_load(reinterpret_cast<const uint64_t *>(dest + word * 8));
      if (got != dt_at(kprev, word)) dt_kfail(kerr, KC_DATA, dt_u64(r) * 1000000000ULL + word * 8, dt_at(kprev, word), got);
    }
    rocshmem_int_wait_until(tflag + g, ROCSHMEM_CMP_GE, r + 1);
    for (int k = 0; k < kFenceThreadWords; ++k) {
      const dt_u64 idx = (dt_u64(g) * kFenceRounds + r) * kFenceThreadWords + k;
      int want = int(dt_at(kprev_t, idx)), got = dt_volatile_load(tdest + idx);
      if (got != want) dt_kfail(kerr, KC_DATA, 2000000000000ULL + idx, (dt_u64)(int64_t)want, (dt_u64)(int64_t)got);
    }
    off += n;
    __syncthreads();
  }
  dt_quiet(cm, ctx);
  dt_close_ctx(cm, &ctx);
}

void run_fence(int cm) {
  const size_t big = std::max<size_t>(8, std::min<size_t>(dt::opt.max_bytes, 65536) / 8 * 8);
  const unsigned nt = dt::opt.w * dt::opt.z;
  const size_t per_wg = (kFenceRounds / 2) * (big + 8), bytes = per_wg * dt::opt.w;
  const size_t twords = size_t(nt) * kFenceRounds * kFenceThreadWords;
  unsigned char *src = dt::alloc_n<unsigned char>(bytes), *dest = dt::alloc_n<unsigned char>(bytes);
  int *wflag = dt::alloc_n<int>(dt::opt.w), *tdest = dt::alloc_n<int>(twords), *tflag = dt::alloc_n<int>(nt);
  const uint64_t salt = dt::next_salt();
  dt::dev_fill(src, bytes, dt::me, salt);
  dt::dev_zero(dest, bytes);
  dt::dev_zero(wflag, dt::opt.w * sizeof(int));
  dt::dev_zero(tdest, twords * sizeof(int));
  dt::dev_zero(tflag, nt * sizeof(int));
  const int peer = (dt::me + 1) % dt::npes, prev = (dt::me - 1 + dt::npes) % dt::npes;
  dt::barrier();
  dt::launch(k_fence, dt::opt.w, dt::opt.z, cm, dest, src, wflag, tdest, tflag, big, peer, dt::me, prev, dt::seed, salt,
             dt::kerr);
  dt::barrier();
  dt::check_kernel(dt::fmt("fence ordering, %s (at = round * 1e9 + byte for putmem_wg; 2e12 + index for the per-thread p's)",
                           cm == CM_PLAIN ? "rocshmem_fence" : "rocshmem_ctx_fence with a wg_ctx_create context"));
  dt::barrier();
  dt::release(tflag);
  dt::release(tdest);
  dt::release(wflag);
  dt::release(dest);
  dt::release(src);
}

void t_fence() {
  run_fence(CM_PLAIN);
  run_fence(CM_WG);
}

// ---- barriers and syncs -------------------------------------------------------------------
enum BarFn {
  // world only
  F_BARRIER_ALL,   // rocshmem_barrier_all{,_wave,_wg}
  F_BARRIER,       // rocshmem_barrier{,_wave,_wg}
  F_SYNC_ALL,      // rocshmem_sync_all{,_wave,_wg}
  F_WG_BARRIER_ALL_OLD,      // rocshmem_wg_barrier_all (2.x name; wg)
  F_CTX_WG_BARRIER_ALL_OLD,  // rocshmem_ctx_wg_barrier_all(ctx) (wg)
  F_WG_SYNC_ALL_OLD,         // rocshmem_wg_sync_all (wg)
  F_CTX_WG_SYNC_ALL_OLD,     // rocshmem_ctx_wg_sync_all(ctx) (wg)
  // any team
  F_CTX_BARRIER,   // rocshmem_ctx_barrier{,_wave,_wg}(ctx, team)
  F_CTX_SYNC,      // rocshmem_ctx_sync{,_wave,_wg}(ctx, team)
  F_WG_TEAM_SYNC_OLD,       // rocshmem_wg_team_sync(team) (wg)
  F_CTX_WG_TEAM_SYNC_OLD,   // rocshmem_ctx_wg_team_sync(ctx, team) (wg)
  F_COUNT
};

const char *bar_name(int fn, int sc) {
  static const char *base[] = {"rocshmem_barrier_all", "rocshmem_barrier", "rocshmem_sync_all",
                               "rocshmem_wg_barrier_all", "rocshmem_ctx_wg_barrier_all", "rocshmem_wg_sync_all",
                               "rocshmem_ctx_wg_sync_all", "rocshmem_ctx_barrier", "rocshmem_ctx_sync",
                               "rocshmem_wg_team_sync", "rocshmem_ctx_wg_team_sync"};
  static std::string s;
  const char *sfx[] = {"", "_wave", "_wg"};
  s = std::string(base[fn]) + (fn >= F_WG_BARRIER_ALL_OLD && fn <= F_CTX_WG_SYNC_ALL_OLD ? "" : fn >= F_WG_TEAM_SYNC_OLD ? "" : sfx[sc]);
  return s.c_str();
}

bool is_sync(int fn) {
  return fn == F_SYNC_ALL || fn == F_WG_SYNC_ALL_OLD || fn == F_CTX_WG_SYNC_ALL_OLD || fn == F_CTX_SYNC ||
         fn == F_WG_TEAM_SYNC_OLD || fn == F_CTX_WG_TEAM_SYNC_OLD;
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
template <int SC>
DT_DEV void call_barrier(int fn, rocshmem_ctx_t ctx, rocshmem_team_t team) {
  if constexpr (SC == SC_THREAD) {
    switch (fn) {
      case F_BARRIER_ALL: rocshmem_barrier_all(); break;
      case F_BARRIER: rocshmem_barrier(); break;  // device: no arguments (the host one takes a team)
      case F_SYNC_ALL: rocshmem_sync_all(); break;
      case F_CTX_BARRIER: rocshmem_ctx_barrier(ctx, team); break;
      case F_CTX_SYNC: rocshmem_ctx_sync(ctx, team); break;
      default: break;
    }
  } else if constexpr (SC == SC_WAVE) {
    switch (fn) {
      case F_BARRIER_ALL: rocshmem_barrier_all_wave(); break;
      case F_BARRIER: rocshmem_barrier_wave(); break;
      case F_SYNC_ALL: rocshmem_sync_all_wave(); break;
      case F_CTX_BARRIER: rocshmem_ctx_barrier_wave(ctx, team); break;
      case F_CTX_SYNC: rocshmem_ctx_sync_wave(ctx, team); break;
      default: break;
    }
  } else {
    switch (fn) {
      case F_BARRIER_ALL: rocshmem_barrier_all_wg(); break;
      case F_BARRIER: rocshmem_barrier_wg(); break;
      case F_SYNC_ALL: rocshmem_sync_all_wg(); break;
      case F_WG_BARRIER_ALL_OLD: rocshmem_wg_barrier_all(); break;
      case F_CTX_WG_BARRIER_ALL_OLD: rocshmem_ctx_wg_barrier_all(ctx); break;
      case F_WG_SYNC_ALL_OLD: rocshmem_wg_sync_all(); break;
      case F_CTX_WG_SYNC_ALL_OLD: rocshmem_ctx_wg_sync_all(ctx); break;
      case F_CTX_BARRIER: rocshmem_ctx_barrier_wg(ctx, team); break;
      case F_CTX_SYNC: rocshmem_ctx_sync_wg(ctx, team); break;
      case F_WG_TEAM_SYNC_OLD: rocshmem_wg_team_sync(team); break;
      case F_CTX_WG_TEAM_SYNC_OLD: rocshmem_ctx_wg_team_sync(ctx, team); break;
      default: break;
    }
  }
}
#pragma GCC diagnostic pop

// Block 0 only; the actors (thread 0, wave 0 or the whole work-group) split the increments.
template <int SC>
__global__ void k_barrier(int fn, int cm, rocshmem_team_t team, int tn, int tmy, const int *members, uint64_t *ctr,
                          int rounds, int is_sync_fn, dt_u64 *kerr) {
  if (dt_bid() != 0) return;
  DT_SHARED(rocshmem_ctx_t, ctx);
  if (!dt_open_ctx(cm, nullptr, &ctx, kerr)) return;
  bool actor;
  unsigned rank, size;
  if (SC == SC_THREAD) actor = dt_tid() == 0, rank = 0, size = 1;
  else if (SC == SC_WAVE) actor = dt_wave() == 0, rank = dt_lane(), size = dt_wave_lanes();
  else actor = true, rank = dt_tid(), size = dt_bdim();
  if (actor) {
    for (int r = 0; r < rounds; ++r) {
      for (int i = int(rank); i < tn; i += int(size))
        if (i != tmy) rocshmem_uint64_atomic_inc(ctr + r, members[i]);
      if (is_sync_fn) rocshmem_quiet();  // sync orders nothing: complete the increments first
      call_barrier<SC>(fn, ctx, team);
      if (rank == 0) {
        uint64_t got = dt_volatile_load(ctr + r);
        if (got != uint64_t(tn - 1)) dt_kfail(kerr, KC_COUNT, unsigned(r), unsigned(tn - 1), got);
      }
    }
  }
  dt_close_ctx(cm, &ctx);
}

template <int SC>
void run_barrier(int fn, int cm, const dt::Team &tm) {
  const int rounds = 6;
  uint64_t *ctr = dt::alloc_n<uint64_t>(rounds);
  int *members = dt::alloc_n<int>(size_t(tm.n) + 1);
  dt::dev_zero(ctr, rounds * sizeof(uint64_t));
  if (tm.n) dt::to_dev(members, tm.world.data(), tm.n * sizeof(int));
  const std::string what = dt::fmt("%s, team %s, %s", bar_name(fn, SC), tm.name,
                                   cm == CM_PLAIN ? "ROCSHMEM_CTX_DEFAULT" : "wg_ctx_create context");
  dt::barrier();
  if (tm.member())
    dt::launch(k_barrier<SC>, dt::opt.w, dt::opt.z, fn, cm, tm.h, tm.n, tm.my, members, ctr, rounds, int(is_sync(fn)),
               dt::kerr);
  dt::barrier();
  dt::check_kernel(what + " (increments from the other members, at = round)");
  dt::barrier();
  dt::release(members);
  dt::release(ctr);
}

const dt::Team &strided_team() { return dt::npes >= 4 ? dt::evens : dt::rest; }

template <int SC>
void barrier_scope() {
  run_barrier<SC>(F_BARRIER_ALL, CM_PLAIN, dt::world);
  run_barrier<SC>(F_BARRIER, CM_PLAIN, dt::world);
  run_barrier<SC>(F_SYNC_ALL, CM_PLAIN, dt::world);
  run_barrier<SC>(F_CTX_BARRIER, CM_PLAIN, dt::world);
  run_barrier<SC>(F_CTX_SYNC, CM_PLAIN, dt::world);
  run_barrier<SC>(F_CTX_BARRIER, CM_WG, strided_team());
  run_barrier<SC>(F_CTX_SYNC, CM_PLAIN, strided_team());
  if (SC == SC_WG) {
    run_barrier<SC>(F_WG_BARRIER_ALL_OLD, CM_PLAIN, dt::world);
    run_barrier<SC>(F_CTX_WG_BARRIER_ALL_OLD, CM_WG, dt::world);
    run_barrier<SC>(F_WG_SYNC_ALL_OLD, CM_PLAIN, dt::world);
    run_barrier<SC>(F_CTX_WG_SYNC_ALL_OLD, CM_PLAIN, dt::world);
    run_barrier<SC>(F_WG_TEAM_SYNC_OLD, CM_PLAIN, strided_team());
    run_barrier<SC>(F_CTX_WG_TEAM_SYNC_OLD, CM_WG, dt::world);
  }
}

void t_barrier() {
  barrier_scope<SC_THREAD>();
  barrier_scope<SC_WAVE>();
  barrier_scope<SC_WG>();
}

// ---- wait_until family ----------------------------------------------------------------------
constexpr int kWN = 8;        // elements per phase
constexpr int kWPhases = 9;   // see k_wait
constexpr int kWActors = 16;  // threads of block 0 that take part

#define DT_WAIT_TYPE(S, TY, NM)                                                                                  \
  struct S {                                                                                                     \
    using T = TY;                                                                                                \
    static const char *name() { return #NM; }                                                                   \
    static DT_DEV void p(T *d, T v, int pe) { rocshmem_##NM##_p(d, v, pe); }                                     \
    static DT_DEV void wait_until(T *iv, int cmp, T v) { rocshmem_##NM##_wait_until(iv, cmp, v); }               \
    static DT_DEV void all(T *iv, size_t n, const int *st, int cmp, T v) { rocshmem_##NM##_wait_until_all(iv, n, st, cmp, v); } \
    static DT_DEV size_t any(T *iv, size_t n, const int *st, int cmp, T v) { return rocshmem_##NM##_wait_until_any(iv, n, st, cmp, v); } \
    static DT_DEV size_t some(T *iv, size_t n, size_t *idx, const int *st, int cmp, T v) {                      \
      return rocshmem_##NM##_wait_until_some(iv, n, idx, st, cmp, v);                                            \
    }                                                                                                            \
    static DT_DEV void all_v(T *iv, size_t n, const int *st, int cmp, T *v) { rocshmem_##NM##_wait_until_all_vector(iv, n, st, cmp, v); } \
    static DT_DEV size_t any_v(T *iv, size_t n, const int *st, int cmp, T *v) {                                  \
      return rocshmem_##NM##_wait_until_any_vector(iv, n, st, cmp, v);                                           \
    }                                                                                                            \
    static DT_DEV size_t some_v(T *iv, size_t n, size_t *idx, const int *st, int cmp, T *v) {                   \
      return rocshmem_##NM##_wait_until_some_vector(iv, n, idx, st, cmp, v);                                     \
    }                                                                                                            \
    static DT_DEV int test(T *iv, int cmp, T v) { return rocshmem_##NM##_test(iv, cmp, v); }                     \
  };

DT_WAIT_TYPE(WInt, int, int)
DT_WAIT_TYPE(WShort, short, short)
DT_WAIT_TYPE(WLongLong, long long, longlong)
DT_WAIT_TYPE(WUint64, uint64_t, uint64)
DT_WAIT_TYPE(WFloat, float, float)
DT_WAIT_TYPE(WDouble, double, double)
DT_WAIT_TYPE(WHalf, __half, half)

// Tables made by the host (the same on every PE), per phase and element:
//  val: the value sent; alt: a different value (for elements that must not match);
//  lo < val < hi (for the comparisons). Zero is the initial value of every ivar.
//  status: the phase's mask (1 = excluded); pick: the element the _any phases send;
//  subset: 1 for the elements the _some phases send.
template <class T>
struct WaitTables {
  T val[kWPhases * kWN], alt[kWPhases * kWN], lo[kWPhases * kWN], hi[kWPhases * kWN], zero;
  int status[kWPhases * kWN];
  int pick[kWPhases];
  int subset[kWPhases * kWN];
  int excluded[kWN];  // all ones
};

// Phases: 0 wait_until (+ every comparison), 1 _all, 2 _any, 3 _some, 4 _all_vector,
// 5 _any_vector, 6 _some_vector, 7 test, 8 _all with status NULL (every element). Every actor
// sends phase ph to the next PE, then waits for the previous PE's phase ph. Before that:
// with every element excluded (or none given) _any returns SIZE_MAX, _some 0, _all returns.

template <class A>
__global__ void k_wait(typename A::T *ivars, size_t *indices, const WaitTables<typename A::T> *tb, int peer,
                       dt_u64 *kerr) {
  using T = typename A::T;
  if (dt_bid() != 0 || dt_tid() >= kWActors) return;
  const unsigned a = dt_tid();
  T *mine = ivars + size_t(a) * kWPhases * kWN;
  size_t *idx = indices + size_t(a) * kWN;
  // 1. test before anything arrives: phase 7's element 1 is never sent.
  if (A::test(mine + 7 * kWN + 1, ROCSHMEM_CMP_NE, tb->zero) != 0) dt_kfail(kerr, KC_TEST, 71, 0, 1);
  if (A::test(mine + 7 * kWN + 1, ROCSHMEM_CMP_EQ, tb->zero) != 1) dt_kfail(kerr, KC_TEST, 72, 1, 0);
  // 2. nothing to wait for: every element excluded, or no elements (phase 7's ivars are 0, so
  //    EQ 0 would be satisfied by any element that were wrongly included).
  {
    T *iv = mine + 7 * kWN;
    size_t k = A::any(iv, kWN, tb->excluded, ROCSHMEM_CMP_EQ, tb->zero);
    if (k != ~size_t(0)) dt_kfail(kerr, KC_ANY_INDEX, 900, ~dt_u64(0), (dt_u64)k);
    k = A::any(iv, 0, nullptr, ROCSHMEM_CMP_EQ, tb->zero);
    if (k != ~size_t(0)) dt_kfail(kerr, KC_ANY_INDEX, 901, ~dt_u64(0), (dt_u64)k);
    k = A::some(iv, kWN, idx, tb->excluded, ROCSHMEM_CMP_EQ, tb->zero);
    if (k != 0) dt_kfail(kerr, KC_SOME, 902, 0, (dt_u64)k);
    k = A::some(iv, 0, idx, nullptr, ROCSHMEM_CMP_EQ, tb->zero);
    if (k != 0) dt_kfail(kerr, KC_SOME, 903, 0, (dt_u64)k);
    A::all(iv, kWN, tb->excluded, ROCSHMEM_CMP_NE, tb->zero);  // must not wait
    A::all(iv, 0, nullptr, ROCSHMEM_CMP_NE, tb->zero);
  }
  for (int ph = 0; ph < kWPhases; ++ph) {
    T *ov = mine + ph * kWN;  // the same offset on the next PE
    const T *val = tb->val + ph * kWN, *alt = tb->alt + ph * kWN;
    const int *st = tb->status + ph * kWN, *sub = tb->subset + ph * kWN;
    // ---- send
    switch (ph) {
      case 0:
      case 7: A::p(ov, val[0], peer); break;
      case 8:
        for (int i = 0; i < kWN; ++i) A::p(ov + i, val[i], peer);
        break;
      case 1:
      case 4:
        for (int i = kWN - 1; i >= 0; --i)
          if (!st[i]) A::p(ov + i, val[i], peer);
        break;
      case 2:
      case 5:
        for (int i = 0; i < kWN; ++i) {
          if (st[i]) A::p(ov + i, val[i], peer);                              // excluded: match, must be ignored
          else if (ph == 5 && i != tb->pick[ph]) A::p(ov + i, alt[i], peer);  // != vals[i]: no match
        }
        rocshmem_fence();
        A::p(ov + tb->pick[ph], val[tb->pick[ph]], peer);
        break;
      case 3:
      case 6:
        for (int i = 0; i < kWN; ++i) {
          if (st[i]) A::p(ov + i, val[i], peer);
          else if (sub[i]) A::p(ov + i, val[i], peer);
          else if (ph == 6) A::p(ov + i, alt[i], peer);
        }
        break;
    }
    rocshmem_quiet();
    // ---- receive
    T *iv = mine + ph * kWN;
    const int base = ph * 100;
    switch (ph) {
      case 0: {
        A::wait_until(iv, ROCSHMEM_CMP_NE, tb->zero);
        if (!dt_same(dt_volatile_load(iv), val[0])) dt_kfail(kerr, KC_WAIT_VALUE, base, 0, 1);
        A::wait_until(iv, ROCSHMEM_CMP_EQ, val[0]);  // each of these is already true
        A::wait_until(iv, ROCSHMEM_CMP_GE, val[0]);
        A::wait_until(iv, ROCSHMEM_CMP_LE, val[0]);
        A::wait_until(iv, ROCSHMEM_CMP_GT, tb->lo[ph * kWN]);
        A::wait_until(iv, ROCSHMEM_CMP_LT, tb->hi[ph * kWN]);
        break;
      }
      case 1:
      case 4:
      case 8: {
        if (ph == 8) A::all(iv, kWN, nullptr, ROCSHMEM_CMP_NE, tb->zero);  // st is all zero here
        else if (ph == 1) A::all(iv, kWN, st, ROCSHMEM_CMP_NE, tb->zero);
        else A::all_v(iv, kWN, st, ROCSHMEM_CMP_EQ, const_cast<T *>(val));
        for (int i = 0; i < kWN; ++i) {
          if (st[i]) continue;
          if (!dt_same(dt_volatile_load(iv + i), val[i])) dt_kfail(kerr, KC_WAIT_VALUE, base + i, 1, 0);
        }
        break;
      }
      case 2:
      case 5: {
        size_t k = ph == 2 ? A::any(iv, kWN, st, ROCSHMEM_CMP_NE, tb->zero)
                           : A::any_v(iv, kWN, st, ROCSHMEM_CMP_EQ, const_cast<T *>(val));
        if (k != size_t(tb->pick[ph])) dt_kfail(kerr, KC_ANY_INDEX, base, (dt_u64)tb->pick[ph], (dt_u64)k);
        break;
      }
      case 3:
      case 6: {
        for (int i = 0; i < kWN; ++i) idx[i] = 999;
        size_t k = ph == 3 ? A::some(iv, kWN, idx, st, ROCSHMEM_CMP_NE, tb->zero)
                           : A::some_v(iv, kWN, idx, st, ROCSHMEM_CMP_EQ, const_cast<T *>(val));
        int nsub = 0;
        for (int i = 0; i < kWN; ++i) nsub += sub[i] && !st[i];
        if (k < 1 || k > size_t(nsub)) dt_kfail(kerr, KC_SOME, base, (dt_u64)nsub, (dt_u64)k);
        for (size_t j = 0; j < k && j < size_t(kWN); ++j) {
          size_t i = idx[j];
          bool ok = i < size_t(kWN) && sub[i] && !st[i];
          for (size_t j2 = 0; j2 < j; ++j2) ok = ok && idx[j2] != i;
          if (!ok) dt_kfail(kerr, KC_SOME, base + 10 + j, 1, (dt_u64)i);
        }
        break;
      }
      case 7: {
        // poll with test until it holds; then every comparison of test on the value
        // (a bounded spin, then a wait: a spinning CPU "GPU thread" would starve the sender)
        for (int spin = 0; spin < 64 && !A::test(iv, ROCSHMEM_CMP_EQ, val[0]); ++spin) {
        }
        A::wait_until(iv, ROCSHMEM_CMP_EQ, val[0]);
        const struct {
          int cmp;
          const T *v;
          int want;
        } cases[] = {{ROCSHMEM_CMP_EQ, &val[0], 1}, {ROCSHMEM_CMP_NE, &val[0], 0}, {ROCSHMEM_CMP_GT, &val[0], 0},
                     {ROCSHMEM_CMP_GE, &val[0], 1}, {ROCSHMEM_CMP_LT, &val[0], 0}, {ROCSHMEM_CMP_LE, &val[0], 1},
                     {ROCSHMEM_CMP_GT, &tb->lo[ph * kWN], 1}, {ROCSHMEM_CMP_LT, &tb->hi[ph * kWN], 1},
                     {ROCSHMEM_CMP_LT, &tb->lo[ph * kWN], 0}, {ROCSHMEM_CMP_GT, &tb->hi[ph * kWN], 0}};
        for (int j = 0; j < int(sizeof cases / sizeof cases[0]); ++j) {
          int r = A::test(iv, cases[j].cmp, *cases[j].v);
          if (r != cases[j].want) dt_kfail(kerr, KC_TEST, base + j, (dt_u64)cases[j].want, (dt_u64)r);
        }
        break;
      }
    }
  }
}

template <class T>
T wait_make(double v);
template <>
int wait_make<int>(double v) { return int(v); }
template <>
short wait_make<short>(double v) { return short(v); }
template <>
long long wait_make<long long>(double v) { return (long long)v; }
template <>
uint64_t wait_make<uint64_t>(double v) { return uint64_t(v); }
template <>
float wait_make<float>(double v) { return float(v); }
template <>
double wait_make<double>(double v) { return v; }
template <>
__half wait_make<__half>(double v) {
  __half h;
  uint16_t b = dt::float_to_half(float(v));
  memcpy(static_cast<void *>(&h), &b, 2);
  return h;
}

template <class A>
void run_wait() {
  using T = typename A::T;
  WaitTables<T> h;
  memset(&h, 0, sizeof h);
  const uint64_t salt = dt::next_salt();
  const uint64_t key = dt_key(dt::seed, -1, salt);  // the same tables on every PE
  for (int ph = 0; ph < kWPhases; ++ph) {
    int unmasked = 0;
    for (int i = 0; i < kWN; ++i) {
      const int j = ph * kWN + i;
      const int v = 2 + int(dt_at(key, j) % 90);  // exact in every type, > 1
      h.val[j] = wait_make<T>(v);
      h.alt[j] = wait_make<T>(v + 3);
      h.lo[j] = wait_make<T>(v - 1);
      h.hi[j] = wait_make<T>(v + 1);
      h.status[j] = (ph >= 1 && ph <= 6) ? int(dt_at(key, 1000 + j) % 3 == 0) : 0;
      h.subset[j] = int(dt_at(key, 2000 + j) % 2);
      unmasked += !h.status[j];
    }
    if (unmasked == 0) h.status[ph * kWN + int(dt_at(key, 3000 + ph) % kWN)] = 0;
    std::vector<int> um;
    for (int i = 0; i < kWN; ++i)
      if (!h.status[ph * kWN + i]) um.push_back(i);
    h.pick[ph] = um[size_t(dt_at(key, 4000 + ph) % um.size())];
    bool any = false;
    for (int i : um) any = any || h.subset[ph * kWN + i];
    if (!any) h.subset[ph * kWN + h.pick[ph]] = 1;
  }
  h.zero = wait_make<T>(0);
  for (int i = 0; i < kWN; ++i) h.excluded[i] = 1;
  const size_t nv = size_t(kWActors) * kWPhases * kWN;
  T *iv = dt::alloc_n<T>(nv);
  size_t *idx = dt::alloc_n<size_t>(size_t(kWActors) * kWN);
  WaitTables<T> *tb = static_cast<WaitTables<T> *>(dt::alloc(sizeof(WaitTables<T>)));
  dt::dev_zero(iv, nv * sizeof(T));
  dt::to_dev(tb, &h, sizeof h);
  const std::string what = dt::fmt("wait family <%s> (at = phase * 100 + element/case)", A::name());
  dt::barrier();
  dt::launch(k_wait<A>, dt::opt.w, dt::opt.z, iv, idx, tb, (dt::me + 1) % dt::npes, dt::kerr);
  dt::barrier();
  dt::check_kernel(what);
  dt::barrier();
  dt::release(tb);
  dt::release(idx);
  dt::release(iv);
}

void t_wait() {
  run_wait<WInt>();
  run_wait<WShort>();
  run_wait<WLongLong>();
  run_wait<WUint64>();
  run_wait<WFloat>();
  run_wait<WDouble>();
  run_wait<WHalf>();
}

// ---- context pool --------------------------------------------------------------------------
constexpr int kMaxPool = 64;

struct CtxArray {
  rocshmem_ctx_t c[kMaxPool + 1];
};

// One work-group: creates k contexts, checks that one more fails, uses each (p + quiet),
// destroys them, and does it all again. res: [0..k] first pass, [k+1..2k+1] second pass.
__global__ void k_pool_one(int k, int *buf, int *res, int peer, int me) {
  DT_SHARED(CtxArray, a);
  for (int pass = 0; pass < 2; ++pass) {
    int *r = res + pass * (k + 1);
    for (int i = 0; i <= k; ++i) {
      int ret = rocshmem_wg_ctx_create(0, &a.c[i]);
      if (dt_tid() == 0) r[i] = ret;
    }
    if (dt_tid() == 0)
      for (int i = 0; i < k; ++i) {
        rocshmem_ctx_int_p(a.c[i], buf + pass * kMaxPool + i, me * 1000 + pass * 100 + i, peer);
        rocshmem_ctx_quiet(a.c[i]);
      }
    __syncthreads();
    for (int i = 0; i <= k; ++i)
      if (r[i] == 0) rocshmem_wg_ctx_destroy(&a.c[i]);
  }
}

// k + 1 work-groups each create one context at the same time; all hold theirs until every
// work-group has tried (a counter on this PE), then destroy it.
__global__ void k_pool_many(int *res, uint64_t *arrived, int me) {
  DT_SHARED(rocshmem_ctx_t, ctx);
  int ret = rocshmem_wg_ctx_create(0, &ctx);
  if (dt_tid() == 0) {
    res[dt_bid()] = ret;
    rocshmem_uint64_atomic_inc(arrived, me);
    rocshmem_uint64_wait_until(arrived, ROCSHMEM_CMP_GE, dt_gdim());
  }
  __syncthreads();
  if (ret == 0) rocshmem_wg_ctx_destroy(&ctx);
}

void t_ctx_pool() {
  const char *env = getenv("ROCSHMEM_MAX_NUM_CONTEXTS");
  const int k = env && *env ? atoi(env) : 32;
  if (!dt::checkf(k >= 0 && k <= kMaxPool, "ctx-pool: ROCSHMEM_MAX_NUM_CONTEXTS=%d: the test handles 0..%d", k, kMaxPool)) return;
  int *buf = dt::alloc_n<int>(2 * kMaxPool), *res = dt::alloc_n<int>(2 * (kMaxPool + 1));
  uint64_t *arrived = dt::alloc_n<uint64_t>(1);
  dt::dev_zero(buf, 2 * kMaxPool * sizeof(int));
  dt::dev_zero(res, 2 * (kMaxPool + 1) * sizeof(int));
  dt::dev_zero(arrived, sizeof(uint64_t));
  const int peer = (dt::me + 1) % dt::npes, prev = (dt::me - 1 + dt::npes) % dt::npes;
  dt::barrier();
  dt::launch(k_pool_one, 1, dt::opt.z, k, buf, res, peer, dt::me);
  dt::barrier();
  std::vector<int> r(2 * (k + 1)), b(2 * kMaxPool);
  dt::to_host(r.data(), res, r.size() * sizeof(int));
  dt::to_host(b.data(), buf, b.size() * sizeof(int));
  for (int pass = 0; pass < 2; ++pass) {
    for (int i = 0; i < k; ++i) {
      dt::checkf(r[pass * (k + 1) + i] == 0, "ctx-pool: pass %d: rocshmem_wg_ctx_create #%d of %d returned %d", pass,
                 i + 1, k, r[pass * (k + 1) + i]);
      const int want = prev * 1000 + pass * 100 + i;
      dt::checkf(b[pass * kMaxPool + i] == want, "ctx-pool: pass %d: p through context #%d: PE %d expected %d got %d",
                 pass, i + 1, dt::me, want, b[pass * kMaxPool + i]);
    }
    dt::checkf(r[pass * (k + 1) + k] != 0,
               "ctx-pool: pass %d: rocshmem_wg_ctx_create #%d with ROCSHMEM_MAX_NUM_CONTEXTS=%d returned 0 (expected "
               "non-zero)",
               pass, k + 1, k);
  }
  // k + 1 work-groups at once
  const int nwg = k + 1;
  dt::dev_zero(res, 2 * (kMaxPool + 1) * sizeof(int));
  dt::barrier();
  dt::launch(k_pool_many, unsigned(nwg), std::min(dt::opt.z, 64u), res, arrived, dt::me);
  dt::barrier();
  std::vector<int> m(nwg);
  dt::to_host(m.data(), res, nwg * sizeof(int));
  int ok = 0;
  for (int x : m) ok += x == 0;
  dt::checkf(ok == k, "ctx-pool: %d work-groups creating a context at once with ROCSHMEM_MAX_NUM_CONTEXTS=%d: expected %d "
             "successes got %d", nwg, k, k, ok);
  dt::barrier();
  dt::release(arrived);
  dt::release(res);
  dt::release(buf);
}

}  // namespace

void dt_register_sync(std::vector<DtTest> &v) {
  v.push_back({"ping-pong", t_ping_pong, true, "PE 0 <-> PE 1: p + fence + int_p / signal_set / atomic_inc, wait_until"});
  v.push_back({"signal", t_signal, true, "put(mem)_signal in 6 forms x SET/ADD, signal_fetch, signal_add/set"});
  v.push_back({"fence", t_fence, true, "putmem_wg and p rounds, fence, flag; checked in the kernel on arrival"});
  v.push_back({"barrier", t_barrier, true, "barrier_all/barrier/sync_all/ctx_barrier/ctx_sync per scope, world and a team"});
  v.push_back({"wait", t_wait, true, "wait_until(+all/any/some, _vector), test, status masks, 7 types"});
  v.push_back({"ctx-pool", t_ctx_pool, false, "ROCSHMEM_MAX_NUM_CONTEXTS contexts, one more fails, destroy returns them"});
}
