/* Init / finalize time. One init per process, so scripts/bench.sh launches this program
 * several times per PE count and takes the median of the per-run maxima over PEs.
 *
 * Every PE prints, after finalize:
 *     I <n_pes> <pe> <init_us> <finalize_us>
 * init_us is the time spent inside init (it includes waiting for the PEs that start later:
 * init is a rendezvous); finalize_us the time inside finalize, called right after init. */
#include "bench_common.h"

int main(void) {
  double t0 = b_now();
  B_init();
  double t1 = b_now();
  int me = B_my_pe(), n = B_n_pes();
  B_finalize();
  double t2 = b_now();
  printf("I %d %d %.1f %.1f\n", n, me, (t1 - t0) * 1e6, (t2 - t1) * 1e6);
  fflush(stdout);
  return 0;
}
