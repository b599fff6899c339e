/* Stream-ordered host operations (`*_on_stream`), timed with cudaEvents around many operations
 * enqueued back to back on one stream (so the host's enqueue cost counts, as it does for an
 * application that issues them), per operation; the median over timed repetitions.
 *
 *   putmem_on_stream          PE 0 -> PE 1: 8 B (N puts, each to the next of 64 slots) and
 *                             64 MiB (GB/s); PE 1 checks its slots or buffer
 *   barrier_all_on_stream     both PEs; time per barrier on PE 0
 *   float_sum_reduce_on_stream  both PEs, 8 B and 1 MiB (world team, default context)
 *   *_graph                   the same 8 B put and barrier captured once into a CUDA graph
 *                             (N operations per graph) and replayed: per operation
 * Checks, once per configuration, before timing (the graph rows check a replay of the captured
 * graph itself): the put slots or buffer on PE 1 hold PE 0's fresh random data; the barrier
 * check runs rounds of "set a word, putmem_on_stream it into the peer's slot i % 2, barrier,
 * compare the own slot with the peer's value" (a barrier that does not complete the puts, or
 * that lets a PE through early, fails it); the reduce's dest equals the exact sum (as in
 * bench_coll.cu) with the 256 bytes after it untouched.
 */
#include "bench_gpu.cuh"

#include <functional>

using namespace bg;

#if SH_HAVE_ON_STREAM

static const size_t kSlots = 64;  // the 8 B put rows write slot i % 64 of a 512-byte area

static __global__ void k_set_word(int *p, int v) { *p = v; }
static __global__ void k_expect_word(const int *p, int want, long round, unsigned long long *scratch) {
  int got = *(volatile const int *)p;
  if (got != want) bg_kfail(scratch, (unsigned long long)round, (unsigned)got, (unsigned)want);
}

/** Enqueues `n` operations (rounds base .. base + n - 1) on st; `check`: the checking variant. */
typedef std::function<void(long base, long n, bool check)> Enqueue;

struct Graph {
  cudaGraph_t g = nullptr;
  cudaGraphExec_t x = nullptr;
  ~Graph() {
    if (x) cudaGraphExecDestroy(x);
    if (g) cudaGraphDestroy(g);
  }
};

/** Captures enq(base, n, check) from st into gr (ThreadLocal: other threads of the libraries may
 * keep using CUDA meanwhile). */
static void capture(Graph &gr, const Enqueue &enq, long base, long n, bool check) {
  CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  enq(base, n, check);
  CK(cudaStreamEndCapture(st, &gr.g));
  CK(cudaGraphInstantiateWithFlags(&gr.x, gr.g, 0));
}

/**
 * One row. `active`: whether this PE enqueues (both PEs for collectives). `prepare` sets up
 * fresh data for the check (every PE), `verify` checks it and prints the V line (the checking
 * PE; returns nothing). Per-op time in µs, or GB/s when bytes_per_op > 0 (PE 0).
 */
static void row(const char *op, size_t size, bool active, bool graph, long n, const Enqueue &enq,
                const std::function<void()> &prepare, const std::function<void()> &verify, size_t bytes_per_op) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  // The check.
  prepare();
  sync_barrier();
  const long check_n = n < 64 ? n : 64;
  if (active) {
    if (graph) {
      Graph g;
      capture(g, enq, 0, check_n, true);
      CK(cudaGraphLaunch(g.x, st));
      CK(cudaStreamSynchronize(st));
    } else {
      enq(0, check_n, true);
    }
  }
  sync_barrier();
  verify();
  sync_barrier();
  // Warm-up, then the timed repetitions.
  const int timed = (int)iters(7, 3);
  Graph g;
  if (graph && active) capture(g, enq, 0, n, false);
  std::vector<double> per_op;
  for (int t = 0; t <= timed; ++t) {
    sync_barrier();
    if (active) {
      CK(cudaEventRecord(e0, st));
      if (graph) CK(cudaGraphLaunch(g.x, st));
      else enq(0, n, false);
      CK(cudaEventRecord(e1, st));
      CK(cudaEventSynchronize(e1));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      if (t > 0) per_op.push_back((double)ms * 1e-3 / (double)n);
    }
  }
  sync_barrier();
  if (me == 0) {
    const double s = median(per_op);
    if (bytes_per_op) result(op, size, "GB/s", (double)bytes_per_op / s / 1e9);
    else result(op, size, "us", s * 1e6);
  }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
}

/* ---- putmem_on_stream ------------------------------------------------------------------- */

static void put_rows(char *a, char *b, void *small, size_t max_bytes, bool graph) {
  // 8 B: src = PE 0's slots in small[1024..1536), dst = PE 1's slots in small[2048..2560).
  char *src8 = static_cast<char *>(small) + 1024, *dst8 = static_cast<char *>(small) + 2048;
  const char *op8 = graph ? "putmem_on_stream_graph" : "putmem_on_stream";
  const uint64_t seed8 = seed_of(op8, 8);
  Enqueue enq8 = [&](long base, long n, bool) {
    for (long i = base; i < base + n; ++i) {
      const size_t slot = (size_t)i % kSlots;
      sh_putmem_on_stream(dst8 + 8 * slot, src8 + 8 * slot, 8, peer, st);
    }
  };
  auto prep8 = [&] {
    if (me == 0) fill(reinterpret_cast<uint32_t *>(src8), kSlots * 2, seed8);
    if (me == 1) CK(cudaMemsetAsync(dst8, 0, kSlots * 8 + 64, st));
  };
  auto verify8 = [&] {
    if (me != 1) return;
    std::string detail;
    unsigned long long bad = check(reinterpret_cast<const uint32_t *>(dst8), kSlots * 2, 16, seed8, &detail);
    verdict(op8, 8, bad == 0, detail.c_str());
  };
  row(op8, 8, me == 0, graph, iters(2048, 256) / 64 * 64, enq8, prep8, verify8, 0);
  if (graph) return;

  // 64 MiB: PE 0's a -> PE 1's b.
  const size_t big = 64u << 20;
  if (big > max_bytes) return;
  const uint64_t seedb = seed_of("putmem_on_stream", big);
  Enqueue enqb = [&](long, long n, bool) {
    for (long i = 0; i < n; ++i) sh_putmem_on_stream(b, a, big, peer, st);
  };
  auto prepb = [&] {
    if (me == 0) fill(reinterpret_cast<uint32_t *>(a), big / 4, seedb);
    if (me == 1) CK(cudaMemsetAsync(b, 0, big + 256, st));
  };
  auto verifyb = [&] {
    if (me != 1) return;
    std::string detail;
    unsigned long long bad = check(reinterpret_cast<const uint32_t *>(b), big / 4, 64, seedb, &detail);
    verdict("putmem_on_stream", big, bad == 0, detail.c_str());
  };
  row("putmem_on_stream", big, me == 0, false, iters(20, 5), enqb, prepb, verifyb, big);
}

/* ---- barrier_all_on_stream -------------------------------------------------------------- */

static void barrier_row(void *small, bool graph) {
  // small[0..8): the two slots the peer writes; small[64..64 + 8 * 64): this PE's source words.
  int *slots = static_cast<int *>(small);
  int *srcw = reinterpret_cast<int *>(static_cast<char *>(small) + 64);
  const char *op = graph ? "barrier_all_on_stream_graph" : "barrier_all_on_stream";
  const uint64_t seed = seed_of(op, 0);
  Enqueue enq = [&](long base, long n, bool check) {
    for (long i = base; i < base + n; ++i) {
      if (check) {
        int *w = srcw + (i % 64);
        launch(false, k_set_word, 1, 1, w, (int)bg_val(seed + (uint64_t)me, (uint64_t)i));
        sh_putmem_on_stream(slots + (i & 1), w, sizeof(int), peer, st);
      }
      sh_barrier_all_on_stream(st);
      if (check)
        launch(false, k_expect_word, 1, 1, (const int *)(slots + (i & 1)), (int)bg_val(seed + (uint64_t)peer, (uint64_t)i),
               i, d_scratch);
    }
  };
  auto prep = [&] {
    CK(cudaMemsetAsync(small, 0, 64 + 8 * 64, st));
    reset_scratch();
  };
  auto verify = [&] {
    unsigned long long s[8];
    read_scratch(s);
    char detail[160] = "";
    if (s[0])
      snprintf(detail, sizeof detail, "PE_%d:%llu_bad_rounds,first_%llu:got_0x%llx,want_0x%llx", me, s[0], s[1], s[2],
               s[3]);
    verdict(op, 0, s[0] == 0, detail);
  };
  row(op, 0, true, graph, iters(1000, 100), enq, prep, verify, 0);
}

/* ---- float_sum_reduce_on_stream --------------------------------------------------------- */

static void reduce_rows(char *a, char *b, size_t max_bytes) {
  static const size_t kSizes[] = {8, 1u << 20};
  for (size_t size : kSizes) {
    if (size > max_bytes) continue;
    const char *op = "float_sum_reduce_on_stream";
    const uint64_t seed = seed_of(op, size);
    Enqueue enq = [&](long, long n, bool) {
      for (long i = 0; i < n; ++i) {
        int rc = sh_float_sum_reduce_on_stream(reinterpret_cast<float *>(b), reinterpret_cast<const float *>(a), size / 4, st);
        if (rc != 0) {
          fprintf(stderr, "bench (%s) PE %d: float_sum_reduce_on_stream returned %d\n", SH_LIB, me, rc);
          exit(3);
        }
      }
    };
    auto prep = [&] { coll_prepare(COLL_REDUCE, b, a, size, seed); };
    auto verify = [&] { coll_verify(COLL_REDUCE, op, b, size, seed); };
    row(op, size, true, false, size <= 4096 ? iters(1000, 100) : iters(200, 20), enq, prep, verify, 0);
  }
}

/**
 * putmem_on_stream_first_call: the first *_on_stream call of the process, 8 B from PE 0 to PE 1,
 * enqueued and waited for (ms): what a program pays while the library's stream kernels are still
 * being loaded (ours: a module of the library, JIT-compiled from PTX unless the library carries
 * SASS for this GPU). A `-b stream` launch makes it right after init and the allocations.
 * Checked: PE 1's word holds PE 0's random value.
 */
static void first_call_row(void *small) {
  const char *op = "putmem_on_stream_first_call";
  uint32_t *src = reinterpret_cast<uint32_t *>(static_cast<char *>(small) + 3072);
  uint32_t *dst = reinterpret_cast<uint32_t *>(static_cast<char *>(small) + 3584);
  const uint64_t seed = seed_of(op, 8);
  if (me == 0) fill(src, 2, seed);
  if (me == 1) CK(cudaMemsetAsync(dst, 0, 8, st));
  CK(cudaStreamSynchronize(st));
  sync_barrier();
  if (me == 0) {
    const double t0 = now_s();
    sh_putmem_on_stream(dst, src, 8, peer, st);
    CK(cudaStreamSynchronize(st));
    result(op, 8, "ms", (now_s() - t0) * 1e3);
  }
  sync_barrier();
  if (me == 1) {
    std::string detail;
    verdict(op, 8, check(dst, 2, 0, seed, &detail) == 0, detail.c_str());
  }
  sync_barrier();
}

void bench_on_stream(char *a, char *b, void *small, size_t max_bytes) {
  first_call_row(small);
  put_rows(a, b, small, max_bytes, false);
  barrier_row(small, false);
  reduce_rows(a, b, max_bytes);
  // Graph rows last: a library whose operations cannot be captured stops here, after the rest.
  put_rows(a, b, small, max_bytes, true);
  barrier_row(small, true);
}

#else

void bench_on_stream(char *, char *, void *, size_t) {
  fprintf(stderr,
          "bench (%s) PE %d: -b stream: this build has no *_on_stream operations (include/rocshmem does not "
          "declare rocshmem_putmem_on_stream; scripts/bench-nvidia.sh defines BENCH_ROC_ON_STREAM when it does)\n",
          SH_LIB, me);
  exit(4);
}

#endif
