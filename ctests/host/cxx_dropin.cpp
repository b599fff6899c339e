// A C++ program written the upstream way, built with g++ against <rocshmem/rocshmem.hpp>:
// `using namespace rocshmem`, ROCSHMEM_TEAM_WORLD and ROCSHMEM_CTX_DEFAULT in host calls,
// typed ctx_ RMA, the team and the active-set (OpenSHMEM 1.4) overloads of
// rocshmem_ctx_int_broadcast, a team reduction, contexts with their == / != operators, a
// split team, std::array unique ids, VERSION, get_backend_type, and the hipmodule_init
// declaration with its default stream argument. Data is random and checked on the receiving PE.
#include <rocshmem/rocshmem.hpp>
#include <rocshmem/qp_introspect.hpp>

#include <array>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "test_util.h"
#include "host_util.h"

using namespace rocshmem;

static_assert(std::is_same<rocshmem_uniqueid_t, std::array<uint8_t, 128>>::value, "uniqueid is std::array");
static_assert(std::is_same<rocshmem_team_t, uint64_t *>::value, "team handle is uint64_t *");

// What host code of a GPU program reads (the unmangled host shadows of the device globals): a
// program that does not link the device library gets librocshmem's copies, filled at init.
extern "C" rocshmem_team_t gpu_view_team_world __asm__("ROCSHMEM_TEAM_WORLD");
extern "C" rocshmem_team_t gpu_view_team_shared __asm__("ROCSHMEM_TEAM_SHARED");
extern "C" rocshmem_ctx_t gpu_view_ctx_default __asm__("ROCSHMEM_CTX_DEFAULT");

int main() {
  rocshmem_init();
  int me = rocshmem_my_pe(), n = rocshmem_n_pes();
  uint64_t seed = hu_agree_seed("cxx_dropin");

  CHECK(ROCSHMEM_TEAM_WORLD != ROCSHMEM_TEAM_INVALID, "ROCSHMEM_TEAM_WORLD is INVALID after init");
  CHECK(rocshmem_team_n_pes(ROCSHMEM_TEAM_WORLD) == n && rocshmem_team_my_pe(ROCSHMEM_TEAM_WORLD) == me, "world team");
  CHECK(rocshmem_team_n_pes(ROCSHMEM_TEAM_SHARED) == hu_node_size(me, n), "shared team");
  CHECK(gpu_view_team_world == ROCSHMEM_TEAM_WORLD && gpu_view_team_shared == ROCSHMEM_TEAM_SHARED,
        "the unmangled ROCSHMEM_TEAM_WORLD/_SHARED host copies differ from the C++ handles");
  CHECK(gpu_view_ctx_default == ROCSHMEM_CTX_DEFAULT, "the unmangled ROCSHMEM_CTX_DEFAULT differs");
  CHECK(std::string(VERSION) == ROCSHMEM_VERSION, "VERSION %s", VERSION);
  CHECK(get_backend_type() == BackendType::IPC_BACKEND, "backend type");
  int provided = -1;
  rocshmem_query_thread(&provided);
  CHECK(provided == ROCSHMEM_THREAD_MULTIPLE, "query_thread %d", provided);

  const int count = 4096;
  int *dst = static_cast<int *>(rocshmem_malloc(count * sizeof(int)));
  int *src = static_cast<int *>(rocshmem_malloc(count * sizeof(int)));
  REQUIRE(dst && src, "rocshmem_malloc");
  std::vector<int> want(count);
  int next = (me + 1) % n, prev = (me + n - 1) % n;

  // Typed RMA on the default context, by name.
  hu_fill(src, count * sizeof(int), seed, me, 1);
  rocshmem_ctx_int_put(ROCSHMEM_CTX_DEFAULT, dst, src, count, next);
  rocshmem_ctx_quiet(ROCSHMEM_CTX_DEFAULT);
  rocshmem_barrier_all();
  hu_fill(want.data(), count * sizeof(int), seed, prev, 1);
  CHECK(std::memcmp(dst, want.data(), count * sizeof(int)) == 0, "ctx_int_put from PE %d", prev);
  int g = rocshmem_ctx_int_g(ROCSHMEM_CTX_DEFAULT, &dst[count - 1], next);
  hu_fill(want.data(), count * sizeof(int), seed, me, 1);
  CHECK(g == want[count - 1], "ctx_int_g from PE %d: %d, want %d", next, g, want[count - 1]);
  rocshmem_barrier_all();

  // Broadcast, team overload (1.5: the root's dest is written too).
  int root = (int)(seed % (uint64_t)n);
  hu_fill(src, count * sizeof(int), seed, me, 2);
  std::memset(dst, 0, count * sizeof(int));
  rocshmem_barrier_all();
  rocshmem_ctx_int_broadcast(ROCSHMEM_CTX_DEFAULT, ROCSHMEM_TEAM_WORLD, dst, src, count, root);
  hu_fill(want.data(), count * sizeof(int), seed, root, 2);
  CHECK(std::memcmp(dst, want.data(), count * sizeof(int)) == 0, "team broadcast from root %d", root);

  // Broadcast, active-set overload (1.4: the root's dest is left alone), over all PEs.
  long psync[ROCSHMEM_BCAST_SYNC_SIZE];
  for (size_t i = 0; i < ROCSHMEM_BCAST_SYNC_SIZE; i++) psync[i] = ROCSHMEM_SYNC_VALUE;
  hu_fill(src, count * sizeof(int), seed, me, 3);
  for (int i = 0; i < count; i++) dst[i] = -7;
  rocshmem_barrier_all();
  rocshmem_ctx_int_broadcast(ROCSHMEM_CTX_DEFAULT, dst, src, count, root, 0, 0, n, psync);
  if (me == root) {
    bool untouched = true;
    for (int i = 0; i < count; i++) untouched = untouched && dst[i] == -7;
    CHECK(untouched, "the active-set broadcast wrote the root's dest");
  } else {
    hu_fill(want.data(), count * sizeof(int), seed, root, 3);
    CHECK(std::memcmp(dst, want.data(), count * sizeof(int)) == 0, "active-set broadcast from root %d", root);
  }
  for (size_t i = 0; i < ROCSHMEM_BCAST_SYNC_SIZE; i++) CHECK(psync[i] == ROCSHMEM_SYNC_VALUE, "pSync[%zu] changed", i);

  // Team reduction: sum of each PE's small values, computed here from the same seed.
  for (int i = 0; i < count; i++) src[i] = (int)(tu_stream(seed, me, 100 + (uint64_t)i) % 1000);
  rocshmem_barrier_all();
  CHECK(rocshmem_ctx_int_sum_reduce(ROCSHMEM_CTX_DEFAULT, ROCSHMEM_TEAM_WORLD, dst, src, count) == 0, "sum_reduce");
  for (int i = 0; i < count; i++) {
    int s = 0;
    for (int p = 0; p < n; p++) s += (int)(tu_stream(seed, p, 100 + (uint64_t)i) % 1000);
    if (dst[i] != s) {
      CHECK(dst[i] == s, "sum_reduce element %d = %d, want %d", i, dst[i], s);
      break;
    }
  }

  // Contexts and their operators; a context on the world team speaks world PE numbers.
  rocshmem_ctx_t ctx;
  CHECK(rocshmem_ctx_create(ROCSHMEM_CTX_SERIALIZED, &ctx) == 0, "ctx_create");
  CHECK(ctx == ctx && ctx != ROCSHMEM_CTX_DEFAULT && !(ctx == ROCSHMEM_CTX_INVALID), "ctx operators");
  hu_fill(src, 64, seed, me, 4);
  rocshmem_barrier_all();
  rocshmem_ctx_putmem(ctx, dst, src, 64, prev);
  rocshmem_ctx_quiet(ctx);
  rocshmem_barrier_all();
  hu_fill(want.data(), 64, seed, next, 4);
  CHECK(std::memcmp(dst, want.data(), 64) == 0, "ctx_putmem from PE %d", next);
  rocshmem_ctx_destroy(ctx);

  // A split team, used by a barrier and a reduction over it.
  rocshmem_team_t evens = ROCSHMEM_TEAM_INVALID;
  rocshmem_team_config_t cfg{};
  CHECK(rocshmem_team_split_strided(ROCSHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, &cfg, 0, &evens) == 0, "split");
  if (me % 2 == 0) {
    src[0] = me;
    rocshmem_barrier(evens);
    CHECK(rocshmem_ctx_int_max_reduce(ROCSHMEM_CTX_DEFAULT, evens, dst, src, 1) == 0, "max_reduce on evens");
    CHECK(dst[0] == ((n - 1) / 2) * 2, "max over the evens = %d", dst[0]);
    rocshmem_team_destroy(evens);
  } else {
    CHECK(evens == ROCSHMEM_TEAM_INVALID, "odd PE got the evens' handle");
  }

  // Upstream's declarations that need a GPU: they compile (default arguments), and on the host
  // platform they report an error instead of crashing.
  hu_capture c = hu_capture_begin();
  int rc = rocshmem_hipmodule_init(nullptr); // stream defaults to nullptr
  char err[2048];
  hu_capture_end(c, err, sizeof err);
  CHECK(rc != 0 && std::strstr(err, "rocshmem_hipmodule_init"), "hipmodule_init = %d:\n%s", rc, err);
  QpInfo qi{};
  CHECK(rocshmem_qp_introspect_provider() == QpInfoVendor::UNKNOWN && !rocshmem_qp_introspect_available() &&
            !rocshmem_query_qp_info(next, 1, &qi),
        "QP introspection without a GDA backend");

  rocshmem_uniqueid_t uid{};
  CHECK(uid.size() == ROCSHMEM_UNIQUE_ID_BYTES, "uid size");
  rocshmem_free(src);
  rocshmem_free(dst);
  rocshmem_finalize();
  CHECK(ROCSHMEM_TEAM_WORLD == ROCSHMEM_TEAM_INVALID, "ROCSHMEM_TEAM_WORLD after finalize");
  if (tu_failures) fprintf(stderr, "PE %d: cxx_dropin: %d check(s) failed\n", me, tu_failures);
  else if (me == 0) printf("cxx_dropin: passed on %d PE(s)\n", n);
  return tu_failures != 0;
}
