/* The demo: every PE passes a block of data around the ring of PEs, each hop with a put into
 * the next PE's symmetric buffer, checks what arrives, then all PEs agree on a checksum with
 * a sum reduction and PE 0 prints a summary.
 *
 *   rocshmem-run -n 4 ./ring_exchange [bytes]
 */
#include <rocshmem/rocshmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 0) : (1u << 20);
  rocshmem_init();
  int me = rocshmem_my_pe(), npes = rocshmem_n_pes();
  int next = (me + 1) % npes;

  uint8_t *inbox = (uint8_t *)rocshmem_malloc(bytes);
  long *flag = (long *)rocshmem_calloc(1, sizeof(long));
  long *sum_in = (long *)rocshmem_malloc(sizeof(long));
  long *sum_out = (long *)rocshmem_malloc(sizeof(long));
  uint8_t *block = (uint8_t *)malloc(bytes);
  if (!inbox || !flag || !sum_in || !sum_out || !block) {
    fprintf(stderr, "PE %d: allocation failed\n", me);
    rocshmem_global_exit(1);
  }

  /* PE 0 starts a block with a recognisable pattern; every hop adds 1 to every byte. */
  if (me == 0)
    for (size_t i = 0; i < bytes; i++) block[i] = (uint8_t)(i * 7);
  rocshmem_barrier_all();

  long errors = 0;
  for (int hop = 0; hop < npes; hop++) {
    int sender = hop % npes;
    if (me == sender) {
      rocshmem_putmem(inbox, block, bytes, next);
      rocshmem_fence(); /* the data before the flag */
      rocshmem_long_p(flag, hop + 1, next);
    }
    if (me == (sender + 1) % npes) {
      rocshmem_long_wait_until(flag, ROCSHMEM_CMP_GE, hop + 1);
      for (size_t i = 0; i < bytes; i++) {
        uint8_t want = (uint8_t)(i * 7 + hop);
        if (inbox[i] != want) errors++;
        block[i] = (uint8_t)(inbox[i] + 1);
      }
    }
  }

  *sum_in = errors;
  rocshmem_ctx_long_sum_reduce(ROCSHMEM_CTX_DEFAULT, ROCSHMEM_TEAM_WORLD, sum_out, sum_in, 1);
  if (me == 0)
    printf("ring_exchange: %d PEs passed %zu bytes around the ring: %s\n", npes, bytes,
           *sum_out == 0 ? "every hop verified" : "ERRORS");
  long total = *sum_out;

  free(block);
  rocshmem_free(sum_out);
  rocshmem_free(sum_in);
  rocshmem_free(flag);
  rocshmem_free(inbox);
  rocshmem_finalize();
  return total == 0 ? 0 : 1;
}
