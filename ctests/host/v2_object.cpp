// An object compiled against rocSHMEM 2.x's declarations, linked with this library unchanged.
// This file does not include our headers: it declares, as 2.x's rocshmem_common.hpp and
// rocshmem.hpp did, the context as an unnamed struct (so every function taking one has another
// link name than in 3.x), ROCSHMEM_CTX_DEFAULT and ROCSHMEM_TEAM_WORLD inside namespace
// rocshmem (3.x: extern "C", and rocshmem::host), and the calls a 2.x host program makes.
// 2.x's rocshmem.hpp included <mpi.h> and declared `rocshmem_init(MPI_Comm comm =
// MPI_COMM_WORLD)` (no other rocshmem_init), so its `rocshmem_init()` is a call with Open MPI's
// MPI_COMM_WORLD: under rocshmem-run (no MPI launcher) that must be rocshmem-run's job, not a
// job of one PE per process, and under mpirun the communicator's. The number of PEs is checked
// against the launcher's (ROCSHMEM_RUN_NRANKS, or Open MPI's OMPI_COMM_WORLD_SIZE).
//
// Every PE puts fresh random data to the next PE through ROCSHMEM_CTX_DEFAULT and through a
// context of its own, reads the previous PE's with ctx_getmem and ctx_g, adds to a counter on
// every PE with a ctx atomic, and checks the world team through ROCSHMEM_TEAM_WORLD.
// Before init it asks for its PE number, as 2.x examples do (ROCSHMEM_INIT_ON_DEMAND=1 makes
// that start the library; see ctests/host/before_init.c for the default).
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>  // as 2.x's rocshmem.hpp

namespace rocshmem {
typedef struct {
  void *ctx_opaque;
  void *team_opaque;
} rocshmem_ctx_t;  // 2.x: an unnamed struct
extern rocshmem_ctx_t ROCSHMEM_CTX_DEFAULT;
typedef uint64_t *rocshmem_team_t;
extern rocshmem_team_t ROCSHMEM_TEAM_WORLD;

void rocshmem_init(MPI_Comm comm = MPI_COMM_WORLD);  // 2.x's declaration
void rocshmem_finalize();
int rocshmem_my_pe();
int rocshmem_n_pes();
void *rocshmem_malloc(size_t size);
void rocshmem_free(void *ptr);
void rocshmem_barrier_all();
int rocshmem_team_n_pes(rocshmem_team_t team);
int rocshmem_team_my_pe(rocshmem_team_t team);
int rocshmem_ctx_create(long options, rocshmem_ctx_t *ctx);
void rocshmem_ctx_destroy(rocshmem_ctx_t ctx);
void rocshmem_ctx_quiet(rocshmem_ctx_t ctx);
void rocshmem_ctx_putmem(rocshmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);
void rocshmem_ctx_getmem(rocshmem_ctx_t ctx, void *dest, const void *source, size_t nelems, int pe);
void rocshmem_ctx_long_put(rocshmem_ctx_t ctx, long *dest, const long *source, size_t nelems, int pe);
long rocshmem_ctx_long_g(rocshmem_ctx_t ctx, const long *source, int pe);
long long rocshmem_ctx_longlong_atomic_fetch_add(rocshmem_ctx_t ctx, long long *dest, long long value, int pe);
}  // namespace rocshmem

using namespace rocshmem;

static int failures = 0;
#define CHECK(cond, ...)                                                    \
  do {                                                                      \
    if (!(cond)) {                                                          \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);       \
      fprintf(stderr, __VA_ARGS__);                                         \
      fprintf(stderr, "\n");                                                \
      failures++;                                                           \
    }                                                                       \
  } while (0)

static uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
static long value(uint64_t seed, int pe, size_t i) { return (long)mix(seed ^ mix((uint64_t)pe + 1) ^ (i * 0x9e3779b97f4a7c15ULL)); }

int main() {
  const int early_pe = rocshmem_my_pe();  // before init, as 2.x examples do
  rocshmem_init();
  const int me = rocshmem_my_pe(), n = rocshmem_n_pes();
  const char *launched = getenv("OMPI_COMM_WORLD_SIZE") ? getenv("OMPI_COMM_WORLD_SIZE") : getenv("ROCSHMEM_RUN_NRANKS");
  const int want_n = launched ? atoi(launched) : 1;
  if (n != want_n) {
    fprintf(stderr, "FAIL: PE %d: rocshmem_init() (2.x: rocshmem_init(MPI_COMM_WORLD)) gave %d PE(s), the launcher started %d\n",
            me, n, want_n);
    return 1;
  }
  if (getenv("ROCSHMEM_INIT_ON_DEMAND")) CHECK(early_pe == me, "my_pe before init %d, after %d", early_pe, me);
  CHECK(ROCSHMEM_TEAM_WORLD != nullptr, "rocshmem::ROCSHMEM_TEAM_WORLD is NULL after init");
  CHECK(rocshmem_team_n_pes(ROCSHMEM_TEAM_WORLD) == n && rocshmem_team_my_pe(ROCSHMEM_TEAM_WORLD) == me,
        "world team: %d of %d", rocshmem_team_my_pe(ROCSHMEM_TEAM_WORLD), rocshmem_team_n_pes(ROCSHMEM_TEAM_WORLD));
  CHECK(ROCSHMEM_CTX_DEFAULT.ctx_opaque != nullptr, "rocshmem::ROCSHMEM_CTX_DEFAULT is empty after init");

  // The seed: PE 0's, through the library.
  uint64_t *seedp = (uint64_t *)rocshmem_malloc(sizeof(uint64_t));
  long long *counter = (long long *)rocshmem_malloc(sizeof(long long));
  const size_t N = 1000;
  long *a = (long *)rocshmem_malloc(N * sizeof(long)), *b = (long *)rocshmem_malloc(N * sizeof(long));
  if (!seedp || !counter || !a || !b) {
    fprintf(stderr, "FAIL: rocshmem_malloc\n");
    return 1;
  }
  *counter = 0;
  if (me == 0) {
    uint64_t s = ((uint64_t)time(nullptr) << 20) ^ (uint64_t)getpid();
    for (int p = 0; p < n; p++) rocshmem_ctx_putmem(ROCSHMEM_CTX_DEFAULT, seedp, &s, sizeof s, p);
    printf("v2_object: %d PE(s), seed 0x%" PRIx64 "\n", n, s);
  }
  rocshmem_barrier_all();
  const uint64_t seed = *seedp;

  rocshmem_ctx_t ctx;
  CHECK(rocshmem_ctx_create(0, &ctx) == 0, "rocshmem_ctx_create failed");
  const int to = (me + 1) % n, from = (me + n - 1) % n;
  long *src = (long *)malloc(N * sizeof(long));
  for (size_t i = 0; i < N; i++) src[i] = value(seed, me, i);
  rocshmem_ctx_long_put(ROCSHMEM_CTX_DEFAULT, a, src, N, to);  // the default context, 2.x's name
  for (size_t i = 0; i < N; i++) src[i] = ~value(seed, me, i);
  rocshmem_ctx_putmem(ctx, b, src, N * sizeof(long), to);     // a context of our own
  rocshmem_ctx_quiet(ctx);
  for (int p = 0; p < n; p++) rocshmem_ctx_longlong_atomic_fetch_add(ctx, counter, me + 1, p);
  rocshmem_ctx_quiet(ctx);
  rocshmem_barrier_all();

  for (size_t i = 0; i < N; i++) {
    CHECK(a[i] == value(seed, from, i), "a[%zu] from PE %d", i, from);
    CHECK(b[i] == ~value(seed, from, i), "b[%zu] from PE %d", i, from);
    if (failures > 4) break;
  }
  CHECK(*counter == (long long)n * (n + 1) / 2, "counter %lld, want %lld", *counter, (long long)n * (n + 1) / 2);
  // Reads from the next PE: what it received from this one.
  long got[16];
  rocshmem_ctx_getmem(ctx, got, a, sizeof got, to);
  for (size_t i = 0; i < 16; i++) CHECK(got[i] == value(seed, me, i), "ctx_getmem[%zu] from PE %d", i, to);
  CHECK(rocshmem_ctx_long_g(ctx, &b[N - 1], to) == ~value(seed, me, N - 1), "ctx_long_g from PE %d", to);
  rocshmem_barrier_all();

  rocshmem_ctx_destroy(ctx);
  free(src);
  rocshmem_free(b);
  rocshmem_free(a);
  rocshmem_free(counter);
  rocshmem_free(seedp);
  rocshmem_finalize();
  printf("v2_object: PE %d: %s\n", me, failures ? "FAIL" : "PASS");
  return failures != 0;
}
