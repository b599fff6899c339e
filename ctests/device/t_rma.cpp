// Device RMA (upstream's primitive_tester, team_ctx tester and shmem_ptr tester):
// put/get/p/g/put_nbi/get_nbi at thread, wave and work-group scope, typed and *mem, with the
// default context, a context from rocshmem_wg_ctx_create and a team context; rocshmem_ptr.
//
// Every unit (a thread, a wave or a work-group, by scope) owns one region per size in the
// source and destination buffers, separated by guard elements that no call may touch. PE i
// sends to (or reads from) the next member of the team; the receiving PE regenerates the
// sender's random source and its own guard bytes and compares everything.
#include "dtest.hpp"

namespace {

enum { OP_PUT, OP_PUT_NBI, OP_GET, OP_GET_NBI, OP_P, OP_G };
enum { SC_THREAD, SC_WAVE, SC_WG };

const char *op_name(int op) {
  static const char *n[] = {"put", "put_nbi", "get", "get_nbi", "p", "g"};
  return n[op];
}
const char *scope_name(int sc) {
  static const char *n[] = {"thread", "wave", "wg"};
  return n[sc];
}
const char *mode_name(int cm) {
  static const char *n[] = {"default (no ctx)", "ROCSHMEM_CTX_DEFAULT", "wg_ctx_create", "wg_team_create_ctx"};
  return n[cm];
}

#define DT_CALL(c, NAME, ...)                  \
  do {                                         \
    if (c) rocshmem_ctx_##NAME(ctx, __VA_ARGS__); \
    else rocshmem_##NAME(__VA_ARGS__);         \
  } while (0)

// One struct per element type: xfer<OP, SCOPE> and p/g, with or without a context.
#define DT_RMA_TYPE(S, TY, NM)                                                                       \
  struct S {                                                                                         \
    using T = TY;                                                                                    \
    static const char *name() { return #NM; }                                                        \
    static constexpr bool has_pg = true;                                                             \
    template <int OP, int SC>                                                                        \
    static DT_DEV void xfer(bool c, rocshmem_ctx_t ctx, T *d, const T *s, size_t n, int pe) {        \
      if constexpr (SC == SC_THREAD) {                                                               \
        if constexpr (OP == OP_PUT) DT_CALL(c, NM##_put, d, s, n, pe);                               \
        else if constexpr (OP == OP_PUT_NBI) DT_CALL(c, NM##_put_nbi, d, s, n, pe);                  \
        else if constexpr (OP == OP_GET) DT_CALL(c, NM##_get, d, s, n, pe);                          \
        else DT_CALL(c, NM##_get_nbi, d, s, n, pe);                                                  \
      } else if constexpr (SC == SC_WAVE) {                                                          \
        if constexpr (OP == OP_PUT) DT_CALL(c, NM##_put_wave, d, s, n, pe);                          \
        else if constexpr (OP == OP_PUT_NBI) DT_CALL(c, NM##_put_nbi_wave, d, s, n, pe);             \
        else if constexpr (OP == OP_GET) DT_CALL(c, NM##_get_wave, d, s, n, pe);                     \
        else DT_CALL(c, NM##_get_nbi_wave, d, s, n, pe);                                             \
      } else {                                                                                       \
        if constexpr (OP == OP_PUT) DT_CALL(c, NM##_put_wg, d, s, n, pe);                            \
        else if constexpr (OP == OP_PUT_NBI) DT_CALL(c, NM##_put_nbi_wg, d, s, n, pe);               \
        else if constexpr (OP == OP_GET) DT_CALL(c, NM##_get_wg, d, s, n, pe);                       \
        else DT_CALL(c, NM##_get_nbi_wg, d, s, n, pe);                                               \
      }                                                                                              \
    }                                                                                                \
    static DT_DEV void p(bool c, rocshmem_ctx_t ctx, T *d, T v, int pe) { DT_CALL(c, NM##_p, d, v, pe); } \
    static DT_DEV T g(bool c, rocshmem_ctx_t ctx, const T *s, int pe) {                              \
      return c ? rocshmem_ctx_##NM##_g(ctx, s, pe) : rocshmem_##NM##_g(s, pe);                       \
    }                                                                                                \
  };

DT_RMA_TYPE(RChar, char, char)
DT_RMA_TYPE(RShort, short, short)
DT_RMA_TYPE(RInt, int, int)
DT_RMA_TYPE(RFloat, float, float)
DT_RMA_TYPE(RDouble, double, double)
DT_RMA_TYPE(RInt64, int64_t, int64)
DT_RMA_TYPE(RUint8, uint8_t, uint8)
DT_RMA_TYPE(RLongLong, long long, longlong)
DT_RMA_TYPE(RHalf, __half, half)
DT_RMA_TYPE(RBf16, __hip_bfloat16, bfloat16)

// putmem / getmem (bytes).
struct RMem {
  using T = unsigned char;
  static const char *name() { return "mem"; }
  static constexpr bool has_pg = false;
  template <int OP, int SC>
  static DT_DEV void xfer(bool c, rocshmem_ctx_t ctx, T *d, const T *s, size_t n, int pe) {
    if constexpr (SC == SC_THREAD) {
      if constexpr (OP == OP_PUT) DT_CALL(c, putmem, d, s, n, pe);
      else if constexpr (OP == OP_PUT_NBI) DT_CALL(c, putmem_nbi, d, s, n, pe);
      else if constexpr (OP == OP_GET) DT_CALL(c, getmem, d, s, n, pe);
      else DT_CALL(c, getmem_nbi, d, s, n, pe);
    } else if constexpr (SC == SC_WAVE) {
      if constexpr (OP == OP_PUT) DT_CALL(c, putmem_wave, d, s, n, pe);
      else if constexpr (OP == OP_PUT_NBI) DT_CALL(c, putmem_nbi_wave, d, s, n, pe);
      else if constexpr (OP == OP_GET) DT_CALL(c, getmem_wave, d, s, n, pe);
      else DT_CALL(c, getmem_nbi_wave, d, s, n, pe);
    } else {
      if constexpr (OP == OP_PUT) DT_CALL(c, putmem_wg, d, s, n, pe);
      else if constexpr (OP == OP_PUT_NBI) DT_CALL(c, putmem_nbi_wg, d, s, n, pe);
      else if constexpr (OP == OP_GET) DT_CALL(c, getmem_wg, d, s, n, pe);
      else DT_CALL(c, getmem_nbi_wg, d, s, n, pe);
    }
  }
};

constexpr int kMaxSizes = 8;
constexpr size_t kGuard = 3;  // elements after each region that must stay untouched

struct Layout {
  int nsizes;
  dt_u64 nelems[kMaxSizes];
  dt_u64 off[kMaxSizes];
  dt_u64 stride;  // elements per unit
};

template <class A, int OP, int SC>
__global__ void k_rma(int cm, rocshmem_team_t team, typename A::T *dest, typename A::T *src, Layout L, int peer,
                      dt_u64 *kerr) {
  DT_SHARED(rocshmem_ctx_t, ctx);
  if (!dt_open_ctx(cm, team, &ctx, kerr)) return;
  const bool c = cm != CM_PLAIN;
  dt_u64 unit;
  if (SC == SC_THREAD) unit = dt_gtid();
  else if (SC == SC_WAVE) unit = dt_u64(dt_bid()) * dt_wpb() + dt_wave();
  else unit = dt_bid();
  for (int k = 0; k < L.nsizes; ++k) {
    const size_t at = size_t(unit * L.stride + L.off[k]), n = size_t(L.nelems[k]);
    if constexpr (OP == OP_P) {
      for (size_t i = 0; i < n; ++i) A::p(c, ctx, dest + at + i, src[at + i], peer);
    } else if constexpr (OP == OP_G) {
      for (size_t i = 0; i < n; ++i) dest[at + i] = A::g(c, ctx, src + at + i, peer);
    } else {
      A::template xfer<OP, SC>(c, ctx, dest + at, src + at, n, peer);
    }
  }
  dt_quiet(cm, ctx);
  dt_close_ctx(cm, &ctx);
}

unsigned units_of(int sc) {
  const unsigned ws = dt::wave_size();
  if (sc == SC_THREAD) return dt::opt.w * dt::opt.z;
  if (sc == SC_WAVE) return dt::opt.w * ((dt::opt.z + ws - 1) / ws);
  return dt::opt.w;
}

template <class A, int OP, int SC>
void run_rma(int cm, const dt::Team &tm) {
  using T = typename A::T;
  // Byte sizes by scope (one thread moves less than a work-group); p/g go element by element.
  size_t cap = SC == SC_THREAD ? 1000 : SC == SC_WAVE ? 8192 : 70000;
  if (OP == OP_P || OP == OP_G) cap = 256;
  Layout L{};
  size_t run = 0;
  // nelems 0 first: a no-op that must not touch the guard
  L.nelems[0] = 0;
  L.off[0] = 0;
  run = kGuard;
  L.nsizes = 1;
  for (size_t b : dt::sizes_upto(cap)) {
    dt_u64 ne = b / sizeof(T) ? b / sizeof(T) : 1;
    if (L.nsizes && L.nelems[L.nsizes - 1] == ne) continue;
    if (L.nsizes == kMaxSizes) break;
    L.nelems[L.nsizes] = ne;
    L.off[L.nsizes] = run;
    run += size_t(ne) + kGuard;
    L.nsizes++;
  }
  L.stride = run;
  const unsigned units = units_of(SC);
  const size_t total = size_t(units) * run;
  T *src = dt::alloc_n<T>(total), *dest = dt::alloc_n<T>(total);
  const uint64_t salt = dt::next_salt();
  dt::dev_fill(src, total * sizeof(T), dt::me, salt);
  dt::dev_fill(dest, total * sizeof(T), dt::me, salt + 1);
  const std::string what = dt::fmt("%s<%s> scope %s, %s, team %s (%u units)", op_name(OP), A::name(), scope_name(SC),
                                   mode_name(cm), tm.name, units);
  dt::barrier();
  const bool putlike = OP == OP_PUT || OP == OP_PUT_NBI || OP == OP_P;
  if (tm.member()) {
    const int peer = (tm.my + 1) % tm.n;  // team-relative when the context is a team's
    const int peer_arg = cm == CM_TEAM ? peer : tm.world[peer];
    dt::launch(k_rma<A, OP, SC>, dt::opt.w, dt::opt.z, cm, tm.h, dest, src, L, peer_arg, dt::kerr);
  }
  dt::barrier();
  dt::check_kernel(what);
  if (tm.member()) {
    const int sender = tm.world[putlike ? (tm.my - 1 + tm.n) % tm.n : (tm.my + 1) % tm.n];
    std::vector<T> got(total), expect(total), sent(total);
    dt::to_host(got.data(), dest, total * sizeof(T));
    dt::fill(expect.data(), total * sizeof(T), dt::me, salt + 1);
    dt::fill(sent.data(), total * sizeof(T), sender, salt);
    for (unsigned u = 0; u < units; ++u)
      for (int k = 0; k < L.nsizes; ++k) {
        const size_t at = size_t(u) * run + size_t(L.off[k]);
        memcpy(&expect[at], &sent[at], size_t(L.nelems[k]) * sizeof(T));
      }
    for (unsigned u = 0; u < units; ++u) {
      for (int k = 0; k < L.nsizes; ++k) {
        const size_t at = size_t(u) * run + size_t(L.off[k]), n = size_t(L.nelems[k]) + kGuard;
        if (!dt::compare(&got[at], &expect[at], n, sizeof(T),
                         dt::fmt("%s: unit %u, %llu elements from PE %d (index >= %llu is the guard)", what.c_str(), u,
                                 L.nelems[k], sender, L.nelems[k])))
          goto done;  // one report per launch
      }
    }
  done:;
  }
  dt::barrier();
  dt::release(dest);
  dt::release(src);
}

template <class A, int SC>
void run_scope(int cm, const dt::Team &tm) {
  run_rma<A, OP_PUT, SC>(cm, tm);
  run_rma<A, OP_PUT_NBI, SC>(cm, tm);
  run_rma<A, OP_GET, SC>(cm, tm);
  run_rma<A, OP_GET_NBI, SC>(cm, tm);
  if constexpr (SC == SC_THREAD && A::has_pg) {
    run_rma<A, OP_P, SC>(cm, tm);
    run_rma<A, OP_G, SC>(cm, tm);
  }
}

template <int SC>
void all_types(int cm, const dt::Team &tm) {
  if (dt::opt.light) {
    run_scope<RChar, SC>(cm, tm);
    run_scope<RInt64, SC>(cm, tm);
    run_scope<RHalf, SC>(cm, tm);
    run_scope<RMem, SC>(cm, tm);
    return;
  }
  run_scope<RChar, SC>(cm, tm);
  run_scope<RShort, SC>(cm, tm);
  run_scope<RInt, SC>(cm, tm);
  run_scope<RFloat, SC>(cm, tm);
  run_scope<RDouble, SC>(cm, tm);
  run_scope<RInt64, SC>(cm, tm);
  run_scope<RUint8, SC>(cm, tm);
  run_scope<RLongLong, SC>(cm, tm);
  run_scope<RHalf, SC>(cm, tm);
  run_scope<RBf16, SC>(cm, tm);
  run_scope<RMem, SC>(cm, tm);
}

template <int SC>
void few_types(int cm, const dt::Team &tm) {
  run_scope<RInt, SC>(cm, tm);
  run_scope<RDouble, SC>(cm, tm);
  run_scope<RHalf, SC>(cm, tm);
  run_scope<RMem, SC>(cm, tm);
}

// A one-member "team" of this PE: transfers to and from itself (default context only).
dt::Team self_team() {
  dt::Team t;
  t.name = "self (this PE to itself)";
  t.h = ROCSHMEM_TEAM_WORLD;
  t.my = 0;
  t.n = 1;
  t.world.push_back(dt::me);
  return t;
}

void t_rma_thread() {
  all_types<SC_THREAD>(CM_PLAIN, dt::world);
  run_scope<RInt, SC_THREAD>(CM_PLAIN, self_team());
}
void t_rma_wave() {
  all_types<SC_WAVE>(CM_PLAIN, dt::world);
  run_scope<RMem, SC_WAVE>(CM_PLAIN, self_team());
}
void t_rma_wg() {
  all_types<SC_WG>(CM_PLAIN, dt::world);
  run_scope<RDouble, SC_WG>(CM_PLAIN, self_team());
}

void t_rma_ctx() {
  for (int cm : {CM_DEFAULT, CM_WG}) {
    few_types<SC_THREAD>(cm, dt::world);
    few_types<SC_WAVE>(cm, dt::world);
    few_types<SC_WG>(cm, dt::world);
  }
}

// The team of the team-context tests: relative numbers differ from world numbers.
const dt::Team &ctx_team() {
  if (dt::npes >= 4) return dt::odds;
  if (dt::npes == 3) return dt::rest;
  return dt::world;
}

// Team and context queries from a kernel, with a team context.
__global__ void k_team_query(rocshmem_team_t team, rocshmem_team_t world, int n, int npes, int *out, dt_u64 *kerr) {
  DT_SHARED(rocshmem_ctx_t, ctx);
  if (!dt_open_ctx(CM_TEAM, team, &ctx, kerr)) return;
  if (dt_tid() == 0) {
    int *o = out + 8 * dt_bid();
    o[0] = rocshmem_ctx_my_pe(ctx);
    o[1] = rocshmem_ctx_n_pes(ctx);
    o[2] = rocshmem_team_my_pe(team);
    o[3] = rocshmem_team_n_pes(team);
    o[4] = rocshmem_my_pe();
    o[5] = rocshmem_n_pes();
    o[6] = rocshmem_ctx_my_pe(ROCSHMEM_CTX_DEFAULT);
    o[7] = rocshmem_ctx_n_pes(ROCSHMEM_CTX_DEFAULT);
    if (dt_bid() == 0) {
      int *t = out + 8 * dt_gdim();
      for (int i = 0; i < n; ++i) t[i] = rocshmem_team_translate_pe(team, i, world);
      for (int j = 0; j < npes; ++j) t[n + j] = rocshmem_team_translate_pe(world, j, team);
    }
  }
  dt_close_ctx(CM_TEAM, &ctx);
}

void team_queries(const dt::Team &tm) {
  const unsigned w = dt::opt.w;
  const size_t words = 8 * w + tm.n + dt::npes;
  int *out = dt::alloc_n<int>(words);
  dt::dev_zero(out, words * sizeof(int));
  dt::barrier();
  if (tm.member()) {
    dt::launch(k_team_query, w, dt::opt.z, tm.h, ROCSHMEM_TEAM_WORLD, tm.n, dt::npes, out, dt::kerr);
    dt::check_kernel(dt::fmt("team queries on team %s", tm.name));
    std::vector<int> o(words);
    dt::to_host(o.data(), out, words * sizeof(int));
    const char *names[8] = {"rocshmem_ctx_my_pe(team ctx)", "rocshmem_ctx_n_pes(team ctx)", "rocshmem_team_my_pe",
                            "rocshmem_team_n_pes", "rocshmem_my_pe", "rocshmem_n_pes",
                            "rocshmem_ctx_my_pe(ROCSHMEM_CTX_DEFAULT)", "rocshmem_ctx_n_pes(ROCSHMEM_CTX_DEFAULT)"};
    const int want[8] = {tm.my, tm.n, tm.my, tm.n, dt::me, dt::npes, dt::me, dt::npes};
    for (unsigned b = 0; b < w; ++b)
      for (int i = 0; i < 8; ++i)
        dt::checkf(o[8 * b + i] == want[i], "team %s, work-group %u: %s: expected %d got %d", tm.name, b, names[i],
                   want[i], o[8 * b + i]);
    const int *t = &o[8 * w];
    for (int i = 0; i < tm.n; ++i)
      dt::checkf(t[i] == tm.world[i], "team %s: rocshmem_team_translate_pe(team, %d, WORLD): expected %d got %d",
                 tm.name, i, tm.world[i], t[i]);
    for (int j = 0; j < dt::npes; ++j) {
      int want_j = -1;
      for (int i = 0; i < tm.n; ++i)
        if (tm.world[i] == j) want_j = i;
      dt::checkf(t[tm.n + j] == want_j, "team %s: rocshmem_team_translate_pe(WORLD, %d, team): expected %d got %d",
                 tm.name, j, want_j, t[tm.n + j]);
    }
  }
  dt::barrier();
  dt::release(out);
}

// ROCSHMEM_TEAM_INVALID from a kernel: no context (upstream returns -1), and the queries
// return -1. out: [0] wg_team_create_ctx, [1] team_my_pe, [2] team_n_pes,
// [3] translate_pe(INVALID, 0, WORLD), [4] translate_pe(WORLD, 0, INVALID).
__global__ void k_team_invalid(rocshmem_team_t invalid, rocshmem_team_t world, int *out) {
  DT_SHARED(rocshmem_ctx_t, ctx);
  int ret = rocshmem_wg_team_create_ctx(invalid, 0, &ctx);
  if (dt_gtid() == 0) {
    out[0] = ret;
    out[1] = rocshmem_team_my_pe(invalid);
    out[2] = rocshmem_team_n_pes(invalid);
    out[3] = rocshmem_team_translate_pe(invalid, 0, world);
    out[4] = rocshmem_team_translate_pe(world, 0, invalid);
  }
  if (ret == 0) rocshmem_wg_ctx_destroy(&ctx);
}

void team_invalid() {
  int *out = dt::alloc_n<int>(8);
  const int init[5] = {-77, -77, -77, -77, -77};
  dt::to_dev(out, init, sizeof init);
  dt::launch(k_team_invalid, 1, dt::opt.z, ROCSHMEM_TEAM_INVALID, ROCSHMEM_TEAM_WORLD, out);
  int o[5];
  dt::to_host(o, out, sizeof o);
  dt::checkf(o[0] != 0, "rocshmem_wg_team_create_ctx(ROCSHMEM_TEAM_INVALID) returned 0, expected non-zero (upstream "
             "returns -1; this library gave a context of the world team)");
  const char *names[] = {"", "rocshmem_team_my_pe(INVALID)", "rocshmem_team_n_pes(INVALID)",
                         "rocshmem_team_translate_pe(INVALID, 0, WORLD)", "rocshmem_team_translate_pe(WORLD, 0, INVALID)"};
  for (int i = 1; i < 5; ++i) dt::checkf(o[i] == -1, "%s from a kernel: expected -1 got %d", names[i], o[i]);
  dt::barrier();
  dt::release(out);
}

void t_rma_team_ctx() {
  const dt::Team &tm = ctx_team();
  team_invalid();
  team_queries(tm);
  if (dt::npes >= 4) team_queries(dt::rest);
  for (int sc = 0; sc < 3; ++sc) {
    if (sc == SC_THREAD) {
      run_scope<RInt, SC_THREAD>(CM_TEAM, tm);
      run_scope<RBf16, SC_THREAD>(CM_TEAM, tm);
      run_scope<RMem, SC_THREAD>(CM_TEAM, tm);
    } else if (sc == SC_WAVE) {
      run_scope<RInt, SC_WAVE>(CM_TEAM, tm);
      run_scope<RMem, SC_WAVE>(CM_TEAM, tm);
    } else {
      run_scope<RInt, SC_WG>(CM_TEAM, tm);
      run_scope<RBf16, SC_WG>(CM_TEAM, tm);
      run_scope<RMem, SC_WG>(CM_TEAM, tm);
    }
  }
}

// ---- rocshmem_ptr ------------------------------------------------------------------------

// Every thread stores, through rocshmem_ptr, one int into each PE's buffer at
// [my_pe][thread]; NULL must come back for PE -1 and PE n, and for exactly the PEs this PE
// does not map (bit pe of `mapped` clear: peers the RO backend reaches through its proxy).
__global__ void k_ptr_store(int *buf, int me, int npes, uint64_t mapped, uint64_t key, dt_u64 *kerr) {
  const unsigned t = dt_gtid(), nt = dt_nthreads();
  for (int pe = 0; pe < npes; ++pe) {
    int *p = static_cast<int *>(rocshmem_ptr(buf, pe));
    const bool want = (mapped >> pe) & 1;
    if ((p != nullptr) != want) {
      dt_kfail(kerr, KC_PTR, (dt_u64)pe, want, p != nullptr);
      continue;
    }
    if (p != nullptr) p[size_t(me) * nt + t] = int(dt_at(key, dt_u64(pe) * nt + t));
  }
  if (t == 0) {
    if (rocshmem_ptr(buf, -1) != nullptr) dt_kfail(kerr, KC_PTR, (dt_u64)(int64_t)-1, 0, 1);
    if (rocshmem_ptr(buf, npes) != nullptr) dt_kfail(kerr, KC_PTR, (dt_u64)npes, 0, 1);
  }
}

// Every thread reads back, through rocshmem_ptr, what the other PEs stored on each PE it maps.
// Mapping is per node, so the PEs that stored there are the ones this PE maps; the others' slots
// stay zero.
__global__ void k_ptr_load(int *buf, int npes, uint64_t mapped, uint64_t seed, uint64_t salt, dt_u64 *kerr) {
  const unsigned t = dt_gtid(), nt = dt_nthreads();
  for (int pe = 0; pe < npes; ++pe) {
    const int *p = static_cast<const int *>(rocshmem_ptr(buf, pe));
    if (p == nullptr) continue;  // reported by k_ptr_store
    for (int src = 0; src < npes; ++src) {
      int want = (mapped >> src) & 1 ? int(dt_at(dt_key(seed, src, salt), dt_u64(pe) * nt + t)) : 0;
      int got = dt_volatile_load(p + size_t(src) * nt + t);
      if (got != want) dt_kfail(kerr, KC_DATA, dt_u64(pe) * 1000000 + dt_u64(src) * nt + t, (dt_u64)want, (dt_u64)got);
    }
  }
}

void t_shmem_ptr() {
  const unsigned nt = dt::opt.w * dt::opt.z;
  const size_t words = size_t(nt) * dt::npes;
  int *buf = dt::alloc_n<int>(words);
  dt::dev_zero(buf, words * sizeof(int));
  const uint64_t salt = dt::next_salt();
  // The PEs this PE maps, as the host API sees them: every PE on the IPC backend; under the
  // RO and GDA backends the PEs of its node (ROCSHMEM_BOOTSTRAP_HOSTID), or itself alone with
  // ROCSHMEM_DISABLE_MIXED_IPC=1. The device must agree.
  uint64_t mapped = 0;
  for (int pe = 0; pe < dt::npes; ++pe)
    if (rocshmem_ptr(buf, pe) != nullptr) mapped |= uint64_t(1) << pe;
  const char *backend = getenv("ROCSHMEM_BACKEND");
  const bool ro = backend != nullptr && (strcmp(backend, "ro") == 0 || strcmp(backend, "gda") == 0);
  dt::checkf(ro || mapped == (dt::npes >= 64 ? ~uint64_t(0) : (uint64_t(1) << dt::npes) - 1),
             "host rocshmem_ptr: every PE is mapped on the IPC backend (mask %#llx)", (unsigned long long)mapped);
  dt::checkf((mapped >> dt::me) & 1, "host rocshmem_ptr: this PE maps itself");
  dt::barrier();
  dt::launch(k_ptr_store, dt::opt.w, dt::opt.z, buf, dt::me, dt::npes, mapped, dt_key(dt::seed, dt::me, salt), dt::kerr);
  dt::check_kernel("stores through rocshmem_ptr");
  dt::barrier();
  std::vector<int> got(words), want(words);
  dt::to_host(got.data(), buf, words * sizeof(int));
  for (int src = 0; src < dt::npes; ++src)
    for (unsigned t = 0; t < nt; ++t)
      want[size_t(src) * nt + t] =
          (mapped >> src) & 1 ? int(dt_at(dt_key(dt::seed, src, salt), dt_u64(dt::me) * nt + t)) : 0;
  dt::compare(got.data(), want.data(), words, sizeof(int), "buffer after stores through rocshmem_ptr (index = src_pe * threads + thread)");
  dt::launch(k_ptr_load, dt::opt.w, dt::opt.z, buf, dt::npes, mapped, dt::seed, salt, dt::kerr);
  dt::check_kernel("loads through rocshmem_ptr (at = pe * 1000000 + src * threads + thread)");
  dt::barrier();
  dt::release(buf);
}

}  // namespace

// ---- the rest of the thread-level API ------------------------------------------------------
// wg_init / wg_init_thread / query_thread / wg_finalize; per-PE fence and pe_quiet around a
// put and a flag; threadfence_system; tile_collective_wait. out (ints): [0] init_thread's
// provided, [1] query_thread's, [2] tile_collective_wait, [3] ctx_tile_collective_wait.
__global__ void k_misc(int *data, int *flag, int *out, int peer, uint64_t kme, uint64_t kprev,
                       rocshmem_team_t world, dt_u64 *kerr) {
  rocshmem_wg_init();
  int provided = -1;
  rocshmem_wg_init_thread(ROCSHMEM_THREAD_MULTIPLE, &provided);
  const unsigned g = dt_gtid();
  if (g == 0) {
    out[0] = provided;
    int q = -1;
    rocshmem_query_thread(&q);
    out[1] = q;
    out[2] = rocshmem_tile_collective_wait(world, 0);
    out[3] = rocshmem_ctx_tile_collective_wait(ROCSHMEM_CTX_DEFAULT, world, 0);
  }
  // per thread: 4 ints to the next PE, fence(peer) or ctx_fence(ctx, peer), then the flag;
  // pe_quiet on the peer at the end.
  int *d = data + size_t(g) * 4;
  for (int k = 0; k < 4; ++k) rocshmem_int_p(d + k, int(dt_at(kme, dt_u64(g) * 4 + k)), peer);
  if (g % 2) rocshmem_fence(peer);
  else rocshmem_ctx_fence(ROCSHMEM_CTX_DEFAULT, peer);
  rocshmem_int_p(flag + g, 1, peer);
  const int pes[1] = {peer};
  if (g % 2) rocshmem_pe_quiet(pes, 1);
  else rocshmem_ctx_pe_quiet(ROCSHMEM_CTX_DEFAULT, pes, 1);
  rocshmem_threadfence_system();
  rocshmem_ctx_threadfence_system(ROCSHMEM_CTX_DEFAULT);
  rocshmem_int_wait_until(flag + g, ROCSHMEM_CMP_EQ, 1);
  for (int k = 0; k < 4; ++k) {
    int want = int(dt_at(kprev, dt_u64(g) * 4 + k)), got = dt_volatile_load(d + k);
    if (got != want) dt_kfail(kerr, KC_DATA, dt_u64(g) * 4 + k, (dt_u64)(int64_t)want, (dt_u64)(int64_t)got);
  }
  rocshmem_wg_finalize();
}

void t_misc() {
  const unsigned nt = dt::opt.w * dt::opt.z;
  int *data = dt::alloc_n<int>(size_t(nt) * 4), *flag = dt::alloc_n<int>(nt), *out = dt::alloc_n<int>(4);
  dt::dev_zero(data, size_t(nt) * 4 * sizeof(int));
  dt::dev_zero(flag, nt * sizeof(int));
  const int fill[4] = {-7, -7, -7, -7};
  dt::to_dev(out, fill, sizeof fill);
  const uint64_t salt = dt::next_salt();
  const int peer = (dt::me + 1) % dt::npes, prev = (dt::me - 1 + dt::npes) % dt::npes;
  dt::barrier();
  dt::launch(k_misc, dt::opt.w, dt::opt.z, data, flag, out, peer, dt_key(dt::seed, dt::me, salt),
             dt_key(dt::seed, prev, salt), ROCSHMEM_TEAM_WORLD, dt::kerr);
  dt::barrier();
  dt::check_kernel("p + rocshmem_fence(pe) / ctx_fence(ctx, pe) + flag, pe_quiet (at = thread * 4 + word)");
  int o[4];
  dt::to_host(o, out, sizeof o);
  dt::checkf(o[0] == ROCSHMEM_THREAD_MULTIPLE, "rocshmem_wg_init_thread: provided %d, expected ROCSHMEM_THREAD_MULTIPLE (%d)",
             o[0], int(ROCSHMEM_THREAD_MULTIPLE));
  dt::checkf(o[1] == ROCSHMEM_THREAD_MULTIPLE, "rocshmem_query_thread (device): %d, expected ROCSHMEM_THREAD_MULTIPLE (%d)",
             o[1], int(ROCSHMEM_THREAD_MULTIPLE));
  dt::checkf(o[2] == 0, "rocshmem_tile_collective_wait(WORLD, 0) returned %d", o[2]);
  dt::checkf(o[3] == 0, "rocshmem_ctx_tile_collective_wait(CTX_DEFAULT, WORLD, 0) returned %d", o[3]);
  dt::barrier();
  dt::release(out);
  dt::release(flag);
  dt::release(data);
}

void dt_register_rma(std::vector<DtTest> &v) {
  v.push_back({"rma-thread", t_rma_thread, true, "put/get/p/g/put_nbi/get_nbi per thread, 10 types + mem"});
  v.push_back({"rma-wave", t_rma_wave, true, "put/get(_nbi)_wave, 10 types + mem"});
  v.push_back({"rma-wg", t_rma_wg, true, "put/get(_nbi)_wg, 10 types + mem"});
  v.push_back({"rma-ctx", t_rma_ctx, false, "RMA with ROCSHMEM_CTX_DEFAULT and wg_ctx_create contexts"});
  v.push_back({"rma-team-ctx", t_rma_team_ctx, true, "team queries and RMA with wg_team_create_ctx on a strided team"});
  v.push_back({"shmem-ptr", t_shmem_ptr, true, "rocshmem_ptr stores and loads; NULL for invalid PEs"});
  v.push_back({"misc", t_misc, true, "wg_init(_thread)/query_thread/wg_finalize, fence(pe), pe_quiet, threadfence_system, tile_collective_wait"});
}
