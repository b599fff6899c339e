// The GDA posting code (device/src/gda/) driven from many "GPU threads" of the host launcher
// against the NIC model (src/transport/gda/model.rs), at 2-4 PEs under rocshmem-run. Every PE
// posts to a queue pair per peer (itself included); data is fresh random bytes from PE 0's
// seed, checked on the PE that receives it. Phases (each with a fresh model):
//   rma     put (inline, pointer, split above max_msg), blocking and not, and get
//   amo     every atomic form, 4 and 8 bytes, under contention from every thread of every PE
//   signal  put-with-signal (add and set), waited for by a thread on the receiving PE
//   wave    one reservation, WQEs written by every lane of a wave, one doorbell
//   full    the model holds each queue until it is full: posting threads wait for room
//   wrap    > 65536 WQEBBs on one queue pair (the 16-bit counters and the 128-block ring wrap)
//   errors  an injected error CQE, a remote access error, a local protection error: the
//           statuses, which data landed, no thread left waiting; then a reset
//   routed-errors  (run alone, under ROCSHMEM_BACKEND=gda ROCSHMEM_GDA_PROVIDER=model
//           ROCSHMEM_DISABLE_MIXED_IPC=1: ctests/gda/routed_errors.sh) a device rocshmem_putmem
//           of 64 bytes from a thread's stack (not registered) to the next PE: nothing lands
//           (neither it nor the put after it), and the host's rocshmem_quiet reports it
// usage: rocshmem-run -n N gda_model_test [-z threads per work-group (2 work-groups)] [-t phase,...]
#include <rocshmem/rocshmem.hpp>
#include <rocshmem/host_kernel.hpp>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <string>
#include <vector>

#include "../../device/src/gda/qp.hpp"
#include "test_util.h"

using namespace rocshmem;
namespace g = rocshmem::dev::gda;
namespace pf = rocshmem::platform;
using W = g::mlx5::Writer;

extern "C" {
int rocshmemi_gda_model_start(const rocshmem_gda_model_config *cfg, rocshmem_gda_qp **qps);
int rocshmemi_gda_model_stop(void);
int rocshmemi_gda_model_inject(int peer, uint64_t n, uint8_t syndrome);
int rocshmemi_gda_model_reset(void);
int rocshmemi_gda_model_stats(rocshmem_gda_model_stats *out);
}

// ---- shared state (one process per PE; kernels read it) --------------------------------

static int me, npes, T;  // T: threads per launch
static uint64_t seed;
static rocshmem_gda_qp *qps;
static const char *phase = "";
static int kfails = 0;

constexpr size_t SLOT = 4096;  // bytes per (sender, thread, k) region
constexpr int R = 5;           // puts per thread and peer-round
constexpr int K = 3;           // atomics of each kind per thread and peer

/** A failure from a kernel thread (thread-safe; the first few are printed). */
static void kfail(const char *fmt, ...) {
  if (__atomic_fetch_add(&kfails, 1, __ATOMIC_RELAXED) >= 8) return;
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  fprintf(stderr, "FAIL PE %d %s: %s (seed %#" PRIx64 ")\n", me, phase, buf, seed);
}

static unsigned gtid() { return pf::block_id() * pf::block_size() + pf::thread_id(); }

/** Byte i of the data (pe, tid, salt) any PE can regenerate. */
static uint8_t gen(int pe, unsigned tid, uint64_t salt, size_t i) {
  uint64_t s = tu_stream(seed, pe, salt * 0x10001 + tid * 0x9e37 + i / 8);
  return uint8_t(tu_next(&s) >> (8 * (i % 8)));
}

static void fill(uint8_t *p, size_t n, int pe, unsigned tid, uint64_t salt) {
  for (size_t i = 0; i < n; ++i) p[i] = gen(pe, tid, salt, i);
}

/** The first mismatch of n bytes at p against (pe, tid, salt), or -1. */
static long mismatch(const uint8_t *p, size_t n, int pe, unsigned tid, uint64_t salt) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != gen(pe, tid, salt, i)) return long(i);
  return -1;
}

static size_t size_for(unsigned tid, int k) {
  static const size_t sizes[] = {1, 3, 8, 12, 13, 28, 29, 64, 1000, 1024, 1025, 2500, SLOT};
  return sizes[(tid * 7 + k * 3 + uint64_t(seed % 13)) % (sizeof sizes / sizeof sizes[0])];
}

static rocshmem_gda_model_config cfg_of(uint32_t sq, uint32_t max_msg, uint32_t no_inline, uint32_t hold) {
  rocshmem_gda_model_config c;
  memset(&c, 0, sizeof c);
  c.sq_depth = sq;
  c.cq_depth = sq ? 2 * sq : 0;
  c.max_msg = max_msg;
  c.no_inline = no_inline;
  c.hold_until_full = hold;
  return c;
}

static void start(rocshmem_gda_model_config cfg) {
  REQUIRE(rocshmemi_gda_model_start(&cfg, &qps) == 0, "model start");
}
static void stop() {
  if (me == 0) {
    rocshmem_gda_model_stats s;
    if (rocshmemi_gda_model_stats(&s) == 0)
      printf("  %-13s PE 0 model: %" PRIu64 " WQEs, %" PRIu64 " doorbells, %" PRIu64 " CQEs (%" PRIu64 " error, %" PRIu64
             " flush), highest WQE index %" PRIu64 ", full %" PRIu64 "x\n",
             phase, s.wqes, s.doorbells, s.cqes, s.error_cqes, s.flush_cqes, s.max_wqe_index, s.full_events);
    fflush(stdout);
  }
  REQUIRE(rocshmemi_gda_model_stop() == 0, "model stop");
}
static rocshmem_gda_model_stats stats() {
  rocshmem_gda_model_stats s;
  REQUIRE(rocshmemi_gda_model_stats(&s) == 0, "model stats");
  return s;
}

template <class... A>
static void launch(void (*k)(A...), int wgs, int threads, A... args) {
  rocshmem_host_launch(k, dim3(wgs), dim3(threads), args...);
}

/** Starts a model, clears `len` bytes of this PE's `clear`, runs `k` on every PE (2 work-groups
 * of T/2 threads); returns the PE whose data arrives here (the previous one). */
static int run(void (*k)(), rocshmem_gda_model_config cfg, void *clear, size_t len) {
  start(cfg);
  memset(clear, 0, len);
  rocshmem_barrier_all();
  launch(k, 2, T / 2);
  rocshmem_barrier_all();
  return (me + npes - 1) % npes;
}

// ---- rma --------------------------------------------------------------------------------

static uint8_t *src, *dst, *pub, *getbuf;

static void k_rma(int blocking) {
  const unsigned t = gtid();
  for (int round = 0; round < npes; ++round) {
    const int peer = (me + 1 + round + int(t)) % npes;
    for (int k = 0; k < R; ++k) {
      const size_t n = size_for(t, k + round);
      uint8_t *s = src + ((size_t(t) * npes + round) * R + k) * SLOT;
      fill(s, n, me, t, uint64_t(round * R + k));
      uint8_t *d = dst + ((size_t(me) * T + t) * R * npes + round * R + k) * SLOT;
      uint64_t end = 0;
      uint32_t st = g::put_nbi(&qps[peer], d, s, n, &end);
      if (st == 0 && blocking) st = g::wait_done(&qps[peer], end);
      if (st != 0) kfail("put of %zu bytes to PE %d: status %#x", n, peer, st);
    }
    // Gets: from the peer's public area, at offsets and sizes of their own.
    const size_t n = size_for(t + 5, round);
    const size_t off = (t * 977 + round * 131) % (4 * SLOT);
    uint8_t *into = getbuf + (size_t(t) * npes + round) * SLOT;
    uint64_t end = 0;
    uint32_t st = g::get_nbi(&qps[peer], into, pub + off, n, &end);
    if (st == 0) st = g::wait_done(&qps[peer], end);
    if (st != 0) {
      kfail("get of %zu bytes from PE %d: status %#x", n, peer, st);
      continue;
    }
    for (size_t i = 0; i < n; ++i) {
      if (into[i] != gen(peer, 0, 999, off + i)) {
        kfail("get from PE %d (thread %u, %zu bytes at %zu): byte %zu differs", peer, t, n, off, i);
        break;
      }
    }
  }
  for (int p = 0; p < npes; ++p) {
    const uint32_t st = g::quiet(&qps[p]);
    if (st != 0) kfail("quiet on PE %d: status %#x", p, st);
  }
}

static void phase_rma(const char *name, rocshmem_gda_model_config cfg, int blocking) {
  phase = name;
  start(cfg);
  memset(dst, 0xee, size_t(npes) * T * R * npes * SLOT);
  fill(pub, 5 * SLOT, me, 0, 999);
  rocshmem_barrier_all();
  launch(k_rma, 2, T / 2, blocking);
  rocshmem_barrier_all();
  // Check on the receiving PE: sender s's thread t wrote round r's region here when
  // (s + 1 + r + t) % n == me.
  for (int s = 0; s < npes; ++s) {
    for (int t = 0; t < T; ++t) {
      for (int r = 0; r < npes; ++r) {
        if ((s + 1 + r + t) % npes != me) continue;
        for (int k = 0; k < R; ++k) {
          const size_t n = size_for(unsigned(t), k + r);
          const uint8_t *d = dst + ((size_t(s) * T + t) * R * npes + r * R + k) * SLOT;
          const long bad = mismatch(d, n, s, unsigned(t), uint64_t(r * R + k));
          CHECK(bad < 0, "%s: put of %zu bytes from PE %d thread %d: byte %ld differs", name, n, s, t, bad);
          if (n < SLOT) CHECK(d[n] == 0xee, "%s: a put of %zu bytes from PE %d wrote past its end", name, n, s);
        }
      }
    }
  }
  const rocshmem_gda_model_stats st = stats();
  CHECK(st.protocol_errors == 0 && st.error_cqes == 0, "%s: %" PRIu64 " protocol errors, %" PRIu64 " error CQEs", name,
        st.protocol_errors, st.error_cqes);
  CHECK(st.wqes >= uint64_t(T) * npes * (R + 1), "%s: the model executed %" PRIu64 " WQEs", name, st.wqes);
  stop();
}

// ---- amo --------------------------------------------------------------------------------

static uint64_t *words;    // per PE: the targets below
static uint64_t *results;  // per thread: fetch results (registered heap)
enum { W_FADD64, W_FADD32, W_XOR64, W_XOR32, W_OR64, W_AND64, W_CAS64, W_CAS32, W_SWAP64, W_FETCH64, W_OR32, NWORDS };

static uint64_t mask_of(int pe, unsigned t, int k, int target) {
  uint64_t s = tu_stream(seed, pe, 0x5eed + t * 131 + uint64_t(k) * 7 + uint64_t(target) * 100003);
  return tu_next(&s);
}

static void k_amo() {
  const unsigned t = gtid();
  uint64_t *res = results + t;
  const uint64_t total = uint64_t(npes) * T * K;
  for (int round = 0; round < npes; ++round) {
    const int p = (me + round) % npes;
    rocshmem_gda_qp *qp = &qps[p];
    uint64_t prev64 = 0, prev32 = 0, old = 0;
    for (int k = 0; k < K; ++k) {
      uint32_t s;
      // fetch-add, 8 bytes (IB atomic) and 4 bytes (masked): the old values only grow.
      s = g::amo_fetch(qp, g::AmoOp::fetch_add, &words[W_FADD64], 8, 1, 0, res, &old);
      if (s != 0 || old >= total || (k > 0 && old <= prev64)) kfail("fetch_add64 at PE %d: status %#x old %" PRIu64, p, s, old);
      prev64 = old;
      s = g::amo_fetch(qp, g::AmoOp::fetch_add, &words[W_FADD32], 4, 1, 0, res, &old);
      if (s != 0 || old >= total || (k > 0 && old <= prev32)) kfail("fetch_add32 at PE %d: status %#x old %" PRIu64, p, s, old);
      prev32 = old;
      // xor (masked fetch-add with all carries stopped), and, or.
      uint64_t end;
      s = g::amo_nbi(qp, g::AmoOp::xor_, &words[W_XOR64], 8, mask_of(me, t, k, 0), 0, nullptr, &end);
      s |= g::amo_nbi(qp, g::AmoOp::xor_, &words[W_XOR32], 4, mask_of(me, t, k, 1), 0, nullptr, &end);
      s |= g::amo_nbi(qp, g::AmoOp::or_, &words[W_OR64], 8, uint64_t(1) << (t % 64), 0, nullptr, &end);
      s |= g::amo_nbi(qp, g::AmoOp::and_, &words[W_AND64], 8, ~(uint64_t(1) << ((t + 7) % 64)), 0, nullptr, &end);
      s |= g::amo_nbi(qp, g::AmoOp::or_, &words[W_OR32], 4, uint64_t(1) << (t % 32), 0, nullptr, &end);
      if (s != 0) kfail("non-fetching atomics at PE %d: status %#x", p, s);
      // compare-swap increments (retry until ours wins), 8 and 4 bytes.
      for (int sz = 8; sz >= 4; sz -= 4) {
        uint64_t *w = &words[sz == 8 ? W_CAS64 : W_CAS32];
        uint64_t cur = 0;
        for (int tries = 0;; ++tries) {
          s = g::amo_fetch(qp, g::AmoOp::cswap, w, uint32_t(sz), cur + 1, cur, res, &old);
          if (s != 0 || old >= total || tries > 100000) {
            kfail("cswap%d at PE %d: status %#x old %" PRIu64, sz * 8, p, s, old);
            break;
          }
          if (old == cur) break;
          cur = old;
        }
      }
      // swap: the old value is 0 or some thread's id; fetch: the owner's constant.
      const uint64_t id = (uint64_t(me) << 32) | (t + 1);
      s = g::amo_fetch(qp, g::AmoOp::swap, &words[W_SWAP64], 8, id, 0, res, &old);
      if (s != 0 || (old != 0 && (old >> 32 >= uint64_t(npes) || (old & 0xffffffff) == 0 || (old & 0xffffffff) > uint64_t(T))))
        kfail("swap at PE %d: status %#x old %#" PRIx64, p, s, old);
      s = g::amo_fetch(qp, g::AmoOp::fetch, &words[W_FETCH64], 8, 0, 0, res, &old);
      if (s != 0 || old != mask_of(p, 0, 0, 99)) kfail("fetch at PE %d: status %#x value %#" PRIx64, p, s, old);
    }
  }
  for (int p = 0; p < npes; ++p)
    if (g::quiet(&qps[p]) != 0) kfail("quiet on PE %d", p);
}

static void phase_amo() {
  phase = "amo";
  start(cfg_of(0, 0, 0, 0));
  memset(words, 0, NWORDS * 8);
  words[W_AND64] = ~uint64_t(0);
  words[W_FETCH64] = mask_of(me, 0, 0, 99);
  rocshmem_barrier_all();
  launch(k_amo, 2, T / 2);
  rocshmem_barrier_all();
  const uint64_t total = uint64_t(npes) * T * K;
  uint64_t x64 = 0, x32 = 0, or64 = 0, and64 = ~uint64_t(0), or32 = 0;
  for (int s = 0; s < npes; ++s)
    for (int t = 0; t < T; ++t)
      for (int k = 0; k < K; ++k) {
        x64 ^= mask_of(s, unsigned(t), k, 0);
        x32 ^= mask_of(s, unsigned(t), k, 1) & 0xffffffff;
        or64 |= uint64_t(1) << (t % 64);
        and64 &= ~(uint64_t(1) << ((t + 7) % 64));
        or32 |= uint64_t(1) << (t % 32);
      }
  CHECK(words[W_FADD64] == total, "fetch_add64 total %" PRIu64 ", expected %" PRIu64, words[W_FADD64], total);
  CHECK(words[W_FADD32] == total, "fetch_add32 word %#" PRIx64 ", expected %" PRIu64, words[W_FADD32], total);
  CHECK(words[W_XOR64] == x64 && words[W_XOR32] == x32, "xor: %#" PRIx64 " %#" PRIx64, words[W_XOR64], words[W_XOR32]);
  CHECK(words[W_OR64] == or64 && words[W_AND64] == and64 && words[W_OR32] == or32, "or/and: %#" PRIx64 " %#" PRIx64,
        words[W_OR64], words[W_AND64]);
  CHECK(words[W_CAS64] == total && words[W_CAS32] == total, "cswap counters %" PRIu64 " %" PRIu64, words[W_CAS64],
        words[W_CAS32]);
  const uint64_t sw = words[W_SWAP64];
  CHECK(sw >> 32 < uint64_t(npes) && (sw & 0xffffffff) >= 1 && (sw & 0xffffffff) <= uint64_t(T), "swap left %#" PRIx64, sw);
  const rocshmem_gda_model_stats st = stats();
  CHECK(st.error_cqes == 0 && st.protocol_errors == 0, "amo: error CQEs or protocol errors");
  stop();
}

// ---- signal -----------------------------------------------------------------------------

static uint64_t *signals;  // per (sender, thread)
constexpr int J = 4;

static void k_signal() {
  const unsigned t = gtid();
  const int to = (me + 1) % npes, from = (me + npes - 1) % npes;
  for (int j = 0; j < J; ++j) {
    const size_t n = size_for(t, j) % 512 + (j == 0 ? 0 : 1);  // j == 0 may be a bare signal
    uint8_t *s = src + (size_t(t) * J + j) * SLOT;
    fill(s, n, me, t, uint64_t(100 + j));
    uint8_t *d = dst + ((size_t(me) * T + t) * J + j) * SLOT;
    const g::SigOp op = (j % 2) ? g::SigOp::set : g::SigOp::add;
    uint64_t end = 0;
    const uint32_t st = g::put_signal_nbi(&qps[to], d, s, n, &signals[size_t(me) * T + t], op == g::SigOp::set ? uint64_t(j + 1) : 1, op, &end);
    if (st != 0) kfail("put_signal to PE %d: status %#x", to, st);
    // The matching thread of the previous PE sends to us: wait for its j-th signal, then its data.
    const uint64_t *sig = &signals[size_t(from) * T + t];
    for (uint32_t round = 0; pf::poll_load(sig) < uint64_t(j + 1); ++round) pf::backoff(round);
    const size_t m = size_for(t, j) % 512 + (j == 0 ? 0 : 1);
    const long bad = mismatch(dst + ((size_t(from) * T + t) * J + j) * SLOT, m, from, t, uint64_t(100 + j));
    if (bad >= 0) kfail("data of put_signal %d from PE %d thread %u: byte %ld differs after the signal", j, from, t, bad);
  }
  if (g::quiet(&qps[to]) != 0) kfail("quiet");
}

static void phase_signal() {
  phase = "signal";
  const int from = run(k_signal, cfg_of(0, 0, 0, 0), signals, size_t(npes) * T * 8);
  for (int t = 0; t < T; ++t)
    CHECK(signals[size_t(from) * T + t] == uint64_t(J), "signal from PE %d thread %d is %" PRIu64, from, t,
          signals[size_t(from) * T + t]);
  stop();
}

// ---- wave: one reservation and one doorbell for a wave's WQEs ---------------------------

static uint64_t wave_posts = 0;

static void k_wave() {
  const unsigned t = gtid(), lane = pf::lane_id(), lanes = pf::wave_lanes();
  rocshmem_gda_qp *qp = &qps[(me + 1) % npes];
  uint32_t st = 0;
  for (int j = 0; j < 3; ++j) {
    uint64_t first = 0;
    if (lane == 0) st = g::reserve(qp, lanes, &first);
    first = pf::wave_broadcast(first, 0);
    st = uint32_t(pf::wave_broadcast(st, 0));
    if (st != 0) break;
    uint64_t v = (uint64_t(me) << 48) | (uint64_t(t) << 16) | uint64_t(j + 1);
    g::Wqe w;
    uint64_t *d = reinterpret_cast<uint64_t *>(dst) + size_t(me) * T + t;
    W::rdma_inline(w, uint16_t(first + lane), qp->qpn, lane + 1 == lanes, g::wire_remote(qp, d), qp->rkey, &v, 8);
    g::write_wqe(qp, first + lane, w);
    g::wqe_fence(qp);
    pf::wave_sync();
    if (lane == 0) {
      st = g::publish(qp, first, lanes);
      __atomic_fetch_add(&wave_posts, 1, __ATOMIC_RELAXED);
    }
    if (lane == 0 && st == 0) st = g::quiet(qp);
    st = uint32_t(pf::wave_broadcast(st, 0));
  }
  if (st != 0) kfail("wave posting: status %#x", st);
}

static void phase_wave() {
  phase = "wave";
  const int from = run(k_wave, cfg_of(0, 0, 0, 0), dst, size_t(npes) * T * 8);
  for (int t = 0; t < T; ++t) {
    const uint64_t v = reinterpret_cast<uint64_t *>(dst)[size_t(from) * T + t];
    CHECK(v == ((uint64_t(from) << 48) | (uint64_t(t) << 16) | 3), "wave put from PE %d thread %d: %#" PRIx64, from, t, v);
  }
  const rocshmem_gda_model_stats st = stats();
  // A fresh model: one doorbell per wave's post at most, for a WQE per lane.
  CHECK(st.doorbells <= wave_posts && st.wqes == uint64_t(3 * T), "wave: %" PRIu64 " doorbells for %" PRIu64
        " posts of %" PRIu64 " WQEs", st.doorbells, wave_posts, st.wqes);
  stop();
}

// ---- full: queues held until full --------------------------------------------------------

static void k_full() {
  const unsigned t = gtid();
  rocshmem_gda_qp *qp = &qps[(me + 1) % npes];
  for (int k = 0; k < 8; ++k) {
    uint64_t v = (uint64_t(t) << 8) | uint64_t(k + 1), end = 0;
    uint64_t *d = reinterpret_cast<uint64_t *>(dst) + (size_t(me) * T + t) * 8 + k;
    const uint32_t st = g::put_nbi(qp, d, &v, 8, &end);
    if (st != 0) kfail("put into a full queue: status %#x", st);
  }
  if (g::quiet(qp) != 0) kfail("quiet");
}

static void phase_full() {
  phase = "full";
  const int from = run(k_full, cfg_of(128, 0, 0, 1), dst, size_t(npes) * T * 64);
  for (int t = 0; t < T; ++t)
    for (int k = 0; k < 8; ++k) {
      const uint64_t v = reinterpret_cast<uint64_t *>(dst)[(size_t(from) * T + t) * 8 + k];
      CHECK(v == ((uint64_t(t) << 8) | uint64_t(k + 1)), "full: put %d of PE %d thread %d: %#" PRIx64, k, from, t, v);
    }
  const rocshmem_gda_model_stats st = stats();
  const uint64_t waits = qps[(me + 1) % npes].full_waits;
  CHECK(st.full_events >= 1 && waits >= 1, "full: the queue was full %" PRIu64 " times, posting threads waited %" PRIu64 " times",
        st.full_events, waits);
  stop();
}

// ---- wrap: more than 65536 WQEBBs on one queue pair ------------------------------------

static int wrap_m;

static void k_wrap() {
  const unsigned t = gtid();
  rocshmem_gda_qp *qp = &qps[(me + 1) % npes];
  uint64_t *d = reinterpret_cast<uint64_t *>(dst) + size_t(me) * T + t;
  for (int k = 1; k <= wrap_m; ++k) {
    uint64_t v = (uint64_t(t) << 32) | uint64_t(k), end = 0;
    const uint32_t st = g::put_nbi(qp, d, &v, 8, &end);
    if (st != 0) {
      kfail("wrap: put %d: status %#x", k, st);
      return;
    }
  }
  if (g::quiet(qp) != 0) kfail("quiet");
}

static void phase_wrap() {
  phase = "wrap";
  wrap_m = (70000 + T - 1) / T;
  const int from = run(k_wrap, cfg_of(128, 0, 0, 0), dst, size_t(npes) * T * 8);
  for (int t = 0; t < T; ++t) {
    // The queue pair executes in order: each thread's last value is what stays.
    const uint64_t v = reinterpret_cast<uint64_t *>(dst)[size_t(from) * T + t];
    CHECK(v == ((uint64_t(t) << 32) | uint64_t(wrap_m)), "wrap: PE %d thread %d left %#" PRIx64, from, t, v);
  }
  const rocshmem_gda_model_stats st = stats();
  CHECK(st.max_wqe_index >= 65536 && qps[(me + 1) % npes].done >= 65536, "wrap: highest WQE index %" PRIu64, st.max_wqe_index);
  stop();
}

// ---- errors -----------------------------------------------------------------------------

static uint32_t *status_of;  // per thread (host memory)
static int err_case;

static void k_errors() {
  const unsigned t = gtid();
  rocshmem_gda_qp *bad = &qps[(me + 1) % npes];
  uint8_t *s = src + size_t(t) * 128;
  fill(s, 128, me, t, 777);
  uint64_t end = 0;
  uint32_t st = 0;
  if (err_case == 0) {
    // Every thread posts two puts (2T = the queue's depth: the held queue fills, then runs);
    // the model fails WQE T.
    for (int j = 0; j < 2 && st == 0; ++j) st = g::put_nbi(bad, dst + ((size_t(me) * T + t) * 2 + j) * 64, s + 64 * j, 64, &end);
    if (st == 0) st = g::wait_done(bad, end);
  } else if (err_case == 1 && t == 0) {
    // A put past the end of the peer's registered heap: remote access error.
    uint8_t *beyond = reinterpret_cast<uint8_t *>(bad->local_base + bad->heap_len);
    st = g::put_nbi(bad, beyond, s, 64, &end);
    if (st == 0) st = g::wait_done(bad, end);
  } else if (err_case == 2 && t == 0) {
    // A source outside every registration (this thread's stack), not inline: local protection.
    uint8_t stack[64];
    memset(stack, 1, sizeof stack);
    st = g::put_nbi(bad, dst + size_t(me) * T * 128, stack, sizeof stack, &end);
    if (st == 0) st = g::wait_done(bad, end);
  }
  status_of[t] = st;
  // Other queue pairs are not affected.
  results[t] = t + 1;  // registered: this phase posts no inline data
  uint64_t *ok = reinterpret_cast<uint64_t *>(src) + 64 * T + t;
  uint32_t s2 = g::put_nbi(&qps[me], ok, &results[t], 8, &end);
  if (s2 == 0) s2 = g::quiet(&qps[me]);
  if (s2 != 0 || *ok != t + 1) kfail("a queue pair without errors failed: status %#x", s2);
}

static void phase_errors() {
  phase = "errors";
  // Held queues: case 0's 2T WQEs are all in the send queue before the model runs any.
  uint32_t depth = 128;
  while (depth < uint32_t(2 * T)) depth *= 2;
  start(cfg_of(depth, 0, 1, 1));
  std::vector<uint32_t> statuses(T);
  status_of = statuses.data();
  for (err_case = 0; err_case < 3; ++err_case) {
    memset(dst, 0xee, size_t(npes) * T * 128);
    if (err_case == 0) REQUIRE(rocshmemi_gda_model_inject((me + 1) % npes, uint64_t(T), 0x13) == 0, "inject");
    const rocshmem_gda_model_stats before = stats();
    rocshmem_barrier_all();
    launch(k_errors, 2, T / 2);
    rocshmem_barrier_all();
    rocshmem_gda_qp *bad = &qps[(me + 1) % npes];
    const uint32_t want[] = {ROCSHMEM_GDA_ERR_CQE | 0x13, ROCSHMEM_GDA_ERR_CQE | 0x13, ROCSHMEM_GDA_ERR_CQE | 0x04};
    CHECK(bad->error == want[err_case], "error case %d: the queue pair's error is %#x, expected %#x", err_case, bad->error,
          want[err_case]);
    const rocshmem_gda_model_stats st = stats();
    CHECK(st.error_cqes - before.error_cqes == 1, "error case %d: %" PRIu64 " error CQEs", err_case,
          st.error_cqes - before.error_cqes);
    if (err_case == 0) {
      int ok = 0;
      for (int t = 0; t < T; ++t) {
        CHECK(statuses[t] == 0 || statuses[t] == want[0], "thread %d got %#x", t, statuses[t]);
        ok += statuses[t] == 0;
      }
      CHECK(ok <= T / 2 && ok < T, "injected error: %d threads saw both puts complete", ok);
      CHECK((bad->err_info & 0xffff) == uint32_t(T), "the error CQE names WQE %u, expected %d", bad->err_info & 0xffff, T);
      CHECK(st.flush_cqes - before.flush_cqes == uint64_t(T - 1), "%" PRIu64 " WQEs flushed, expected %d",
            st.flush_cqes - before.flush_cqes, T - 1);
      // On the receiving PE: exactly T of the sender's puts landed, whole; the others not at all.
      const int from = (me + npes - 1) % npes;
      int landed = 0;
      for (int t = 0; t < T; ++t)
        for (int j = 0; j < 2; ++j) {
          const uint8_t *d = dst + ((size_t(from) * T + t) * 2 + j) * 64;
          bool whole = true;
          for (int i = 0; i < 64; ++i) whole &= d[i] == gen(from, unsigned(t), 777, size_t(64 * j + i));
          if (whole) ++landed;
          else CHECK(d[0] == 0xee && d[63] == 0xee, "a failed or flushed put of PE %d thread %d wrote data", from, t);
        }
      CHECK(landed == T, "injected error: %d puts landed here, expected %d", landed, T);
    } else {
      CHECK(statuses[0] == want[err_case], "error case %d: thread 0 got %#x", err_case, statuses[0]);
    }
    rocshmem_barrier_all();
    REQUIRE(rocshmemi_gda_model_reset() == 0, "reset");
    CHECK(bad->error == 0 && bad->resv_head == 0, "reset left state behind");
    rocshmem_barrier_all();
  }
  stop();
}

// ---- routed-errors (the backend routed by init) -----------------------------------------

static void k_routed_errors() {
  if (pf::block_id() != 0 || pf::thread_id() != 0) return;
  uint8_t stack[64];
  fill(stack, sizeof stack, me, 0, 77);
  const int next = (me + 1) % npes;
  rocshmem_putmem(dst, stack, sizeof stack, next);     // unregistered source: local protection error
  rocshmem_putmem(dst + 64, src, 64, next);            // after it on the failed queue pair: flushed
}

static void phase_routed_errors() {
  phase = "routed-errors";
  memset(dst, 0, 128);
  fill(src, 64, me, 0, 78);
  rocshmem_barrier_all();
  launch(k_routed_errors, 1, 1);
  rocshmem_quiet();  // reports the device queue pair's error (one line on stderr)
  rocshmem_barrier_all();
  size_t landed = 0;
  for (size_t i = 0; i < 128; ++i) landed += dst[i] != 0;
  CHECK(landed == 0, "routed-errors: %zu byte(s) of the failed puts landed", landed);
}

// ---- main -------------------------------------------------------------------------------

int main(int argc, char **argv) {
  int threads = 32;  // per work-group; kernels run 2 work-groups
  std::string phases = "rma,rma-noinline,amo,signal,wave,full,errors";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-z")) threads = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "-t")) phases = argv[i + 1];
  }
  rocshmem_init();
  me = rocshmem_my_pe();
  npes = rocshmem_n_pes();
  T = 2 * threads;
  uint64_t *slot = static_cast<uint64_t *>(rocshmem_malloc(8));
  if (me == 0) {
    const uint64_t s = tu_local_seed();
    for (int p = 0; p < npes; ++p) rocshmem_putmem(slot, &s, 8, p);
    printf("gda_model: %d PE(s), %d threads, seed %#" PRIx64 " (replay: ROCSHMEM_TEST_SEED=%#" PRIx64 ")\n", npes, T, s, s);
    fflush(stdout);
  }
  rocshmem_barrier_all();
  seed = *slot;
  const size_t region = size_t(npes) * T * R * npes * SLOT;
  src = static_cast<uint8_t *>(rocshmem_malloc(size_t(T) * (R + 1) * npes * SLOT));
  dst = static_cast<uint8_t *>(rocshmem_malloc(region));
  pub = static_cast<uint8_t *>(rocshmem_malloc(5 * SLOT));
  getbuf = static_cast<uint8_t *>(rocshmem_malloc(size_t(T) * npes * SLOT));
  words = static_cast<uint64_t *>(rocshmem_malloc(NWORDS * 8));
  results = static_cast<uint64_t *>(rocshmem_malloc(size_t(T) * 8));
  signals = static_cast<uint64_t *>(rocshmem_malloc(size_t(npes) * T * 8));
  REQUIRE(src && dst && pub && getbuf && words && results && signals, "rocshmem_malloc");
  const time_t t0 = time(nullptr);
  auto has = [&](const char *p) { return (',' + phases + ',').find(std::string(",") + p + ",") != std::string::npos; };
  if (has("rma")) phase_rma("rma", cfg_of(0, 1024, 0, 0), 0);
  if (has("rma-noinline")) phase_rma("rma-noinline", cfg_of(256, 0, 1, 0), 1);
  if (has("amo")) phase_amo();
  if (has("signal")) phase_signal();
  if (has("wave")) phase_wave();
  if (has("full")) phase_full();
  if (has("wrap")) phase_wrap();
  if (has("errors")) phase_errors();
  if (has("routed-errors")) phase_routed_errors();
  rocshmem_barrier_all();
  tu_failures += __atomic_load_n(&kfails, __ATOMIC_RELAXED);
  rocshmem_finalize();
  if (me == 0 || tu_failures)
    printf("%s gda_model PE %d (%s; %ld s)\n", tu_failures ? "FAIL" : "PASS", me, phases.c_str(), long(time(nullptr) - t0));
  return tu_failures != 0;
}
