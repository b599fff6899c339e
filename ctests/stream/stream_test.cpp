// The stream-ordered host API (rocshmem_*_on_stream) on the host platform, where a stream is
// one of the library's ordered host queues (<rocshmem/host_kernel.hpp>: hipStreamCreate & co.).
// Every call at several sizes on fresh random data, checked on the receiving PE; ordering
// within a stream and across two streams; bad input gets one error line and nothing runs.
#include <rocshmem/rocshmem.hpp>
#include <rocshmem/host_kernel.hpp>

#include <unistd.h>

#include <vector>

#include "test_util.h"
#include "host_util.h"

using namespace rocshmem;

static uint64_t seed;
static int me, npes, right_pe, left_pe;
static hipStream_t s1, s2;

static void sync_stream(hipStream_t s, const char *what) {
  REQUIRE(hipStreamSynchronize(s) == hipSuccess, "%s: hipStreamSynchronize", what);
}

static const size_t kSizes[] = {1, 7, 1000, 40000, 1 << 20};
static const size_t kMax = 1 << 20;

// putmem/getmem/quiet: data checked on the receiver after a barrier on the same stream.
static void test_rma(char *sym_a, char *sym_b, std::vector<char> &local, std::vector<char> &want) {
  for (size_t si = 0; si < sizeof kSizes / sizeof kSizes[0]; si++) {
    size_t n = kSizes[si];
    hipStream_t s = (si % 2) ? s1 : nullptr;  // created and default streams
    uint64_t salt = 0x1000 + si;
    hu_fill(local.data(), n, seed, me, salt);
    memset(sym_a, 0, n);
    rocshmem_barrier_all();
    rocshmem_putmem_on_stream(sym_a, local.data(), n, right_pe, s);
    if (si == 2) rocshmem_quiet_on_stream(s);
    rocshmem_barrier_all_on_stream(s);
    sync_stream(s, "putmem");
    hu_fill(want.data(), n, seed, left_pe, salt);
    long d = hu_first_diff(sym_a, want.data(), n);
    CHECK(d < 0, "putmem_on_stream %zu B from PE %d: first difference at byte %ld", n, left_pe, d);

    // getmem: every PE fills its own symmetric buffer, then reads the right neighbour's.
    hu_fill(sym_b, n, seed, me, salt + 0x100);
    memset(local.data(), 0, n);
    rocshmem_barrier_all();
    rocshmem_getmem_on_stream(local.data(), sym_b, n, right_pe, s);
    sync_stream(s, "getmem");
    hu_fill(want.data(), n, seed, right_pe, salt + 0x100);
    d = hu_first_diff(local.data(), want.data(), n);
    CHECK(d < 0, "getmem_on_stream %zu B from PE %d: first difference at byte %ld", n, right_pe, d);
    rocshmem_barrier_all();
  }
}

// putmem_signal (SET and ADD) and signal_wait_until: the receiver's stream waits for the
// signal, then the data must be there.
static void test_signal(char *sym, uint64_t *sig, std::vector<char> &local, std::vector<char> &want) {
  for (int round = 0; round < 6; round++) {
    size_t n = kSizes[round % 5];
    int op = round % 2 ? ROCSHMEM_SIGNAL_ADD : ROCSHMEM_SIGNAL_SET;
    uint64_t salt = 0x2000 + round;
    hu_fill(local.data(), n, seed, me, salt);
    *sig = 5;
    memset(sym, 0, n);
    rocshmem_barrier_all();
    uint64_t value = 100 + round;
    rocshmem_putmem_signal_on_stream(sym, local.data(), n, sig, value, op, right_pe, s1);
    uint64_t expect = op == ROCSHMEM_SIGNAL_ADD ? 5 + value : value;
    rocshmem_signal_wait_until_on_stream(sig, ROCSHMEM_CMP_EQ, expect, s2);
    sync_stream(s2, "signal_wait_until");
    hu_fill(want.data(), n, seed, left_pe, salt);
    long d = hu_first_diff(sym, want.data(), n);
    CHECK(d < 0, "putmem_signal_on_stream %zu B op %d: first difference at byte %ld", n, op, d);
    CHECK(*sig == expect, "signal is %llu, want %llu", (unsigned long long)*sig, (unsigned long long)expect);
    sync_stream(s1, "putmem_signal");
    rocshmem_barrier_all();
  }
  // signal_add from every PE to every PE, then signal_set on the right neighbour.
  *sig = 0;
  rocshmem_barrier_all();
  for (int p = 0; p < npes; p++) rocshmem_signal_add_on_stream(sig, uint64_t(me + 1), p, s1);
  rocshmem_barrier_all_on_stream(s1);
  sync_stream(s1, "signal_add");
  uint64_t total = uint64_t(npes) * uint64_t(npes + 1) / 2;
  CHECK(*sig == total, "after signal_add from every PE: %llu, want %llu", (unsigned long long)*sig,
        (unsigned long long)total);
  rocshmem_barrier_all();
  rocshmem_signal_set_on_stream(sig, 7000 + uint64_t(me), right_pe, nullptr);
  rocshmem_signal_wait_until_on_stream(sig, ROCSHMEM_CMP_GE, 7000, nullptr);
  sync_stream(nullptr, "signal_set");
  CHECK(*sig == 7000 + uint64_t(left_pe), "signal_set from PE %d: %llu", left_pe, (unsigned long long)*sig);
  rocshmem_barrier_all();
}

// barrier/sync forms: a put before the barrier on the same stream is visible after it (barrier,
// barrier_all); sync_all/team_sync rendezvous (every PE's host-side store made before its
// enqueue is seen once the sync has passed).
static void test_sync(char *sym, std::vector<char> &local) {
  rocshmem_team_t evens = ROCSHMEM_TEAM_INVALID;
  if (npes >= 2) {
    REQUIRE(rocshmem_team_split_strided(ROCSHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, nullptr, 0, &evens) == 0, "split");
  }
  for (int round = 0; round < 4; round++) {
    size_t n = 4096;
    uint64_t salt = 0x3000 + round;
    hu_fill(local.data(), n, seed, me, salt);
    memset(sym, 0, n);
    rocshmem_barrier_all();
    bool even = me % 2 == 0;
    if (round == 0) {
      rocshmem_putmem_on_stream(sym, local.data(), n, right_pe, s1);
      rocshmem_barrier_on_stream(ROCSHMEM_TEAM_WORLD, s1);
    } else if (round == 1 && even) {
      int tn = rocshmem_team_n_pes(evens), ti = rocshmem_team_my_pe(evens);
      int to = 2 * ((ti + 1) % tn);
      rocshmem_putmem_on_stream(sym, local.data(), n, to, s1);
      rocshmem_barrier_on_stream(evens, s1);
    } else if (round == 2) {
      memcpy(sym, local.data(), n);  // a host store, then the rendezvous
      rocshmem_sync_all_on_stream(s1);
    } else if (round == 3 && even) {
      memcpy(sym, local.data(), n);
      rocshmem_team_sync_on_stream(evens, s1);
    }
    sync_stream(s1, "sync forms");
    std::vector<char> want(n);
    long d = -1;
    if (round == 0) {
      hu_fill(want.data(), n, seed, left_pe, salt);
      d = hu_first_diff(sym, want.data(), n);
    } else if (round == 1 && even) {
      int tn = rocshmem_team_n_pes(evens), ti = rocshmem_team_my_pe(evens);
      hu_fill(want.data(), n, seed, 2 * ((ti + tn - 1) % tn), salt);
      d = hu_first_diff(sym, want.data(), n);
    } else if (round == 2 || (round == 3 && even)) {
      // After the rendezvous every member's buffer holds its own bytes: read the right one's.
      int peer = round == 2 ? right_pe : 2 * ((rocshmem_team_my_pe(evens) + 1) % rocshmem_team_n_pes(evens));
      std::vector<char> got(n);
      rocshmem_getmem(got.data(), sym, n, peer);
      hu_fill(want.data(), n, seed, peer, salt);
      d = hu_first_diff(got.data(), want.data(), n);
    }
    CHECK(d < 0, "sync round %d: first difference at byte %ld", round, d);
    rocshmem_barrier_all();
  }
  if (evens != ROCSHMEM_TEAM_INVALID) rocshmem_team_destroy(evens);
}

// alltoallmem and broadcastmem on the world and on the even PEs. The larger sizes run on
// several work-groups (device/stream/grid.hpp; 100000 also splits blocks at unaligned offsets).
static void test_coll(char *src, char *dst) {
  rocshmem_team_t evens = ROCSHMEM_TEAM_INVALID;
  REQUIRE(rocshmem_team_split_strided(ROCSHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, nullptr, 0, &evens) == 0, "split");
  static const size_t sizes[] = {1, 100, 8192, 100000};
  for (int t = 0; t < 2; t++) {
    rocshmem_team_t team = t ? evens : ROCSHMEM_TEAM_WORLD;
    bool member = t == 0 || me % 2 == 0;
    int tn = member ? rocshmem_team_n_pes(team) : 0, stride = t ? 2 : 1;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
      size_t n = sizes[si];
      uint64_t salt = 0x4000 + t * 16 + si;
      if (member) {
        for (int j = 0; j < tn; j++) hu_fill(src + j * n, n, seed, me, salt + uint64_t(j) * 0x10000);
        memset(dst, 0, n * tn);
        rocshmem_alltoallmem_on_stream(team, dst, src, n, s2);
        sync_stream(s2, "alltoallmem");
        int my_idx = rocshmem_team_my_pe(team);
        std::vector<char> want(n);
        for (int j = 0; j < tn; j++) {
          hu_fill(want.data(), n, seed, j * stride, salt + uint64_t(my_idx) * 0x10000);
          long d = hu_first_diff(dst + j * n, want.data(), n);
          CHECK(d < 0, "alltoallmem team %d %zu B: block from member %d differs at byte %ld", t, n, j, d);
        }
        // broadcast from a random root (the same on every member)
        uint64_t r = tu_stream(seed, -1, salt);
        int root = int(tu_next(&r) % uint64_t(tn));
        hu_fill(src, n, seed, me, salt + 1);
        memset(dst, 0, n);
        rocshmem_broadcastmem_on_stream(team, dst, src, n, root, nullptr);
        sync_stream(nullptr, "broadcastmem");
        hu_fill(want.data(), n, seed, root * stride, salt + 1);
        long d = hu_first_diff(dst, want.data(), n);
        CHECK(d < 0, "broadcastmem team %d %zu B root %d: first difference at byte %ld", t, n, root, d);
      }
      rocshmem_barrier_all();
    }
  }
  rocshmem_team_destroy(evens);
}

// Typed reductions on the world and on the even PEs, at sizes that run on one and on several
// work-groups, back to back on one team, then in place (one work-group); checked on every member.
static void test_reduce(char *a, char *b) {
  rocshmem_team_t evens = ROCSHMEM_TEAM_INVALID;
  REQUIRE(rocshmem_team_split_strided(ROCSHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, nullptr, 0, &evens) == 0, "split");
  static const int sizes[] = {1, 3000, 60000};
  auto value = [](int pe, uint64_t salt, int i) {
    return int64_t((tu_stream(seed, pe, salt) + uint64_t(i) * 7919) % 2001) - 1000;
  };
  for (int t = 0; t < 2; t++) {
    rocshmem_team_t team = t ? evens : ROCSHMEM_TEAM_WORLD;
    bool member = t == 0 || me % 2 == 0;
    int tn = member ? rocshmem_team_n_pes(team) : 0, stride = t ? 2 : 1;
    for (int si = 0; si < 3 && member; si++) {
      int n = sizes[si];
      uint64_t salt = 0x6000 + t * 16 + si;
      float *fs = reinterpret_cast<float *>(a), *fd = reinterpret_cast<float *>(b);
      long *ls = reinterpret_cast<long *>(a + (kMax / 2)), *ld = reinterpret_cast<long *>(b + (kMax / 2));
      for (int i = 0; i < n; i++) {
        fs[i] = float(value(me, salt, i));
        ls[i] = long(value(me, salt + 1, i));
        fd[i] = -1.0f;
        ld[i] = -1;
      }
      hipStream_t s = si % 2 ? s1 : nullptr;
      CHECK(rocshmem_ctx_float_sum_reduce_on_stream(ROCSHMEM_CTX_DEFAULT, team, fd, fs, n, s) == 0, "float sum");
      CHECK(rocshmem_ctx_long_max_reduce_on_stream(ROCSHMEM_CTX_DEFAULT, team, ld, ls, n, s) == 0, "long max");
      sync_stream(s, "reduce");
      for (int i = 0; i < n; i++) {
        float fw = 0;
        long lw = -100000;
        for (int m = 0; m < tn; m++) {
          fw += float(value(m * stride, salt, i));
          long v = long(value(m * stride, salt + 1, i));
          lw = v > lw ? v : lw;
        }
        if (fd[i] != fw || ld[i] != lw) {
          CHECK(0, "reduce team %d n %d element %d: float sum %g (want %g), long max %ld (want %ld)", t, n, i,
                double(fd[i]), double(fw), ld[i], lw);
          break;
        }
      }
      // In place: one work-group, through the team's scratch.
      for (int i = 0; i < n; i++) ls[i] = long(value(me, salt + 2, i));
      CHECK(rocshmem_ctx_long_sum_reduce_on_stream(ROCSHMEM_CTX_DEFAULT, team, ls, ls, n, s) == 0, "long sum in place");
      sync_stream(s, "reduce in place");
      for (int i = 0; i < n; i++) {
        long w = 0;
        for (int m = 0; m < tn; m++) w += long(value(m * stride, salt + 2, i));
        if (ls[i] != w) {
          CHECK(0, "in-place long sum team %d n %d element %d: %ld, want %ld", t, n, i, ls[i], w);
          break;
        }
      }
      rocshmem_team_sync(team);
    }
    rocshmem_barrier_all();
  }
  rocshmem_team_destroy(evens);
}

// Two streams: s2 waits for a signal that only s1 sets; nothing on s2 may run before it.
static void test_two_streams(uint64_t *sig, char *sym, std::vector<char> &local) {
  size_t n = 65536;
  hu_fill(sym, n, seed, me, 0x5000);
  *sig = 0;
  memset(local.data(), 0, n);
  rocshmem_barrier_all();
  rocshmem_signal_wait_until_on_stream(sig, ROCSHMEM_CMP_EQ, 1, s2);
  rocshmem_getmem_on_stream(local.data(), sym, n, right_pe, s2);
  usleep(50 * 1000);
  std::vector<char> zero(n, 0);
  CHECK(hu_first_diff(local.data(), zero.data(), n) < 0, "s2 ran its getmem before the signal it waits for");
  rocshmem_signal_set_on_stream(sig, 1, me, s1);
  sync_stream(s2, "second stream");
  std::vector<char> want(n);
  hu_fill(want.data(), n, seed, right_pe, 0x5000);
  long d = hu_first_diff(local.data(), want.data(), n);
  CHECK(d < 0, "getmem after the cross-stream signal: first difference at byte %ld", d);
  sync_stream(s1, "first stream");
  rocshmem_barrier_all();
}

// Bad input: one error line naming the call, nothing enqueued, the failure value where there is one.
static void expect_error(const char *what, const char *needle, void (*call)(void *), void *arg) {
  hu_capture c = hu_capture_begin();
  call(arg);
  sync_stream(nullptr, what);
  char out[2048];
  hu_capture_end(c, out, sizeof out);
  CHECK(hu_count_lines(out) == 1 && strstr(out, needle) != nullptr, "%s: expected one line with '%s', got: %s", what,
        needle, out);
}

struct Bad {
  char *sym;
  uint64_t *sig;
  hipStream_t dead;
};

static void test_bad_input(char *sym, uint64_t *sig) {
  hipStream_t dead = nullptr;
  REQUIRE(hipStreamCreate(&dead) == hipSuccess, "create");
  REQUIRE(hipStreamDestroy(dead) == hipSuccess, "destroy");
  Bad b{sym, sig, dead};
  expect_error("non-symmetric dest", "rocshmem_putmem_on_stream", [](void *p) {
    char stack[16] = {0};
    rocshmem_putmem_on_stream(stack, static_cast<Bad *>(p)->sym, 16, 0, nullptr);
  }, &b);
  expect_error("bad pe", "invalid PE", [](void *p) {
    rocshmem_putmem_on_stream(static_cast<Bad *>(p)->sym, static_cast<Bad *>(p)->sym, 8, npes, nullptr);
  }, &b);
  expect_error("bad get source", "not inside the symmetric heap", [](void *p) {
    char stack[16] = {0};
    rocshmem_getmem_on_stream(static_cast<Bad *>(p)->sym, stack, 16, 0, nullptr);
  }, &b);
  expect_error("destroyed stream", "not a stream of this process", [](void *p) {
    rocshmem_quiet_on_stream(static_cast<Bad *>(p)->dead);
  }, &b);
  expect_error("bad cmp", "cmp=9", [](void *p) {
    rocshmem_signal_wait_until_on_stream(static_cast<Bad *>(p)->sig, 9, 0, nullptr);
  }, &b);
  expect_error("bad sig_op", "sig_op=3", [](void *p) {
    Bad *x = static_cast<Bad *>(p);
    rocshmem_putmem_signal_on_stream(x->sym, x->sym, 8, x->sig, 1, 3, 0, nullptr);
  }, &b);
  expect_error("non-symmetric signal", "rocshmem_signal_add_on_stream", [](void *) {
    uint64_t local = 0;
    rocshmem_signal_add_on_stream(&local, 1, 0, nullptr);
  }, &b);
  expect_error("invalid team", "rocshmem_barrier_on_stream", [](void *) {
    rocshmem_barrier_on_stream(ROCSHMEM_TEAM_INVALID, nullptr);
  }, &b);
  expect_error("bad root", "pe_root=", [](void *p) {
    Bad *x = static_cast<Bad *>(p);
    rocshmem_broadcastmem_on_stream(ROCSHMEM_TEAM_WORLD, x->sym, x->sym, 8, npes, nullptr);
  }, &b);
  hu_capture c = hu_capture_begin();
  int rc = rocshmem_ctx_int_sum_reduce_on_stream(ROCSHMEM_CTX_DEFAULT, ROCSHMEM_TEAM_WORLD, (int *)sym,
                                                 (const int *)sym, -1, nullptr);
  char out[1024];
  hu_capture_end(c, out, sizeof out);
  CHECK(rc == ROCSHMEM_ERROR && strstr(out, "nreduce=-1"), "reduce_on_stream nreduce -1: rc %d, %s", rc, out);
  c = hu_capture_begin();
  rc = rocshmem_host_stream_synchronize(reinterpret_cast<void *>(uintptr_t(0x1234)));
  hu_capture_end(c, out, sizeof out);
  CHECK(rc != 0 && strstr(out, "rocshmem_host_stream_synchronize"), "synchronize of a bad handle: %d %s", rc, out);
  rocshmem_barrier_all();
}

int main() {
  rocshmem_init();
  me = rocshmem_my_pe();
  npes = rocshmem_n_pes();
  right_pe = (me + 1) % npes;
  left_pe = (me + npes - 1) % npes;
  seed = hu_agree_seed("stream_test");
  REQUIRE(hipStreamCreate(&s1) == hipSuccess && hipStreamCreate(&s2) == hipSuccess, "hipStreamCreate");
  char *a = static_cast<char *>(rocshmem_malloc(kMax));
  char *b = static_cast<char *>(rocshmem_malloc(kMax));
  uint64_t *sig = static_cast<uint64_t *>(rocshmem_malloc(sizeof(uint64_t)));
  REQUIRE(a && b && sig, "rocshmem_malloc");
  std::vector<char> local(kMax), want(kMax);
  test_rma(a, b, local, want);
  test_signal(a, sig, local, want);
  test_sync(a, local);
  test_coll(a, b);
  test_reduce(a, b);
  test_two_streams(sig, a, local);
  test_bad_input(a, sig);
  // Work still queued at finalize runs first: the last barrier is only enqueued.
  rocshmem_barrier_all_on_stream(s1);
  REQUIRE(hipStreamDestroy(s2) == hipSuccess, "hipStreamDestroy");
  rocshmem_free(sig);
  rocshmem_free(b);
  rocshmem_free(a);
  rocshmem_finalize();
  TEST_DONE("stream_test");
  return tu_failures != 0;
}
