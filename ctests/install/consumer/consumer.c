/* Built with pkg-config against an installed rocSHMEM. */
#include <rocshmem/rocshmem.h>
#include <stdio.h>

int main(void) {
  rocshmem_init();
  int me = rocshmem_my_pe(), n = rocshmem_n_pes();
  int *x = (int *)rocshmem_malloc(sizeof(int));
  *x = -1;
  rocshmem_barrier_all();
  rocshmem_int_p(x, me, (me + 1) % n);
  rocshmem_barrier_all();
  int ok = *x == (me + n - 1) % n;
  printf("consumer (C, PE %d): %s\n", me, ok ? "ok" : "WRONG");
  rocshmem_free(x);
  rocshmem_finalize();
  return ok ? 0 : 1;
}
