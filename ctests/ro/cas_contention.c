/* Compare-and-swap contention under RO: every PE CAS-increments the 64-bit counter of every PE
 * (its own included) until it has won `WINS` times on each, all PEs at once. A CAS on this PE's
 * own word and the peers' CAS on it take different paths in the proxy (docs/ro.md), and they
 * must be atomic with each other: each counter must end at its random start value plus
 * `n_pes x WINS`, and every won CAS must have seen a distinct old value (no two PEs won the
 * same step). A lost update shows as a short count. Measured: Open MPI 4.1.6 lost updates when
 * the own word was a CPU compare-and-swap (src/transport/ro/mpi_layer.rs, cpu_self_cas). */
#include <rocshmem/rocshmem.h>

#include "test_util.h"
#include "host_util.h"

#define WINS 400

int main(void) {
  rocshmem_init();
  int me = rocshmem_my_pe(), n = rocshmem_n_pes();
  uint64_t seed = hu_agree_seed("cas_contention");
  int64_t *counter = (int64_t *)rocshmem_malloc(sizeof(int64_t));
  /* won[p * n + k]: bit set on PE p for the steps it won on PE k's counter (steps < n * WINS). */
  size_t steps = (size_t)n * WINS, words = (steps + 63) / 64;
  uint64_t *won = (uint64_t *)rocshmem_malloc((size_t)n * words * sizeof(uint64_t));
  REQUIRE(counter && won, "rocshmem_malloc");
  uint64_t st = tu_stream(seed, me, 1);
  const int64_t start = (int64_t)(tu_next(&st) >> 2);
  int64_t *starts = (int64_t *)calloc((size_t)n, sizeof(int64_t));
  for (int p = 0; p < n; p++) {
    uint64_t s = tu_stream(seed, p, 1);
    starts[p] = (int64_t)(tu_next(&s) >> 2);
  }
  uint64_t *mine = (uint64_t *)calloc((size_t)n * words, sizeof(uint64_t));
  rocshmem_int64_p(counter, start, me);
  rocshmem_barrier_all();

  /* Round-robin over the targets, so that every PE works on every counter at the same time. */
  int64_t *guess = (int64_t *)calloc((size_t)n, sizeof(int64_t));
  for (int p = 0; p < n; p++) guess[p] = starts[p];
  long tries = 0;
  for (int w = 0; w < WINS; w++) {
    for (int k = 0; k < n; k++) {
      int t = (me + k) % n;
      for (;;) {
        int64_t old = rocshmem_int64_atomic_compare_swap(counter, guess[t], guess[t] + 1, t);
        tries++;
        if (old == guess[t]) {
          size_t step = (size_t)(old - starts[t]);
          CHECK(step < steps, "PE %d: a won CAS on PE %d saw %" PRId64 ", outside [start, start + %zu)", me, t, old,
                steps);
          if (step < steps) mine[(size_t)t * words + step / 64] |= 1ull << (step % 64);
          guess[t] = old + 1;
          break;
        }
        guess[t] = old;
      }
    }
  }
  /* Everyone's winning steps to every PE, then the checks. */
  for (int p = 0; p < n; p++) rocshmem_putmem(won + (size_t)me * words, mine + (size_t)p * words, words * 8, p);
  rocshmem_barrier_all();
  int64_t final = rocshmem_int64_atomic_fetch(counter, me);
  CHECK(final == start + (int64_t)steps, "PE %d: counter ended at start + %" PRId64 ", want start + %zu (lost updates)",
        me, final - start, steps);
  for (size_t s = 0; s < steps; s++) {
    int owners = 0;
    for (int p = 0; p < n; p++) owners += (int)((won[(size_t)p * words + s / 64] >> (s % 64)) & 1);
    if (owners != 1) {
      CHECK(0, "PE %d: step %zu of its counter was won by %d PEs (want exactly 1)", me, s, owners);
      break;
    }
  }
  rocshmem_barrier_all();
  if (me == 0) printf("cas_contention: %d PEs x %d CAS wins on every PE's counter (%ld tries on PE 0)\n", n, WINS, tries);
  rocshmem_free(won);
  rocshmem_free(counter);
  free(starts);
  free(guess);
  free(mine);
  rocshmem_finalize();
  TEST_DONE("cas_contention");
  return tu_failures != 0;
}
