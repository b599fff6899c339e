/*
 * put_signal: every PE sends a buffer to its right neighbour with rocshmem_putmem_signal (one
 * thread) or rocshmem_putmem_signal_wg (the work-group), setting or adding to a signal word in
 * the same call; the neighbour's kernel waits for the signal with rocshmem_signal_wait_until
 * and only then reads the data. The host checks every element and the signal's final value.
 *
 *   run: rocshmem-run -n 2 ./rocshmem_put_signal_test [elements]    (or mpirun -np 2)
 */
#include "example_util.hpp"

using namespace rocshmem;

// Sends `src` to `peer` with the signal, waits for the left neighbour's signal, then copies
// what arrived in `dst` to `seen` (a local buffer): data read after the wait must be complete.
__global__ void put_signal(int *dst, const int *src, int *seen, size_t nelem, uint64_t *sig, uint64_t value,
                           int sig_op, uint64_t wait_for, int peer, int wg) {
  if (wg) {
    rocshmem_putmem_signal_wg(dst, src, nelem * sizeof(int), sig, value, sig_op, peer);
  } else if (threadIdx.x == 0) {
    rocshmem_putmem_signal(dst, src, nelem * sizeof(int), sig, value, sig_op, peer);
  }
  if (threadIdx.x == 0) rocshmem_signal_wait_until(sig, ROCSHMEM_CMP_EQ, wait_for);
  __syncthreads();
  for (size_t i = threadIdx.x; i < nelem; i += blockDim.x) seen[i] = static_cast<volatile int *>(dst)[i];
}

static int run(int argc, char **argv) {
  const int me = rocshmem_my_pe(), npes = rocshmem_n_pes();
  const int right = (me + 1) % npes, left = (me + npes - 1) % npes;
  const std::vector<size_t> sizes = example::sizes(argc, argv);
  size_t max_elem = 0;
  for (size_t n : sizes) max_elem = n > max_elem ? n : max_elem;

  int *src = example::sym_alloc<int>(max_elem);
  int *dst = example::sym_alloc<int>(max_elem);
  uint64_t *sig = example::sym_alloc<uint64_t>(1);
  int *seen = nullptr;
  CHECK_HIP(hipMalloc(&seen, max_elem * sizeof(int)));
  example::Seeds seeds;
  example::Checker check("put_signal");
  std::vector<int> host(max_elem);

  int round = 0;
  for (size_t nelem : sizes) {
    for (int variant = 0; variant < 4; variant++, round++) {
      const int wg = variant & 1;
      const bool add = variant & 2;
      const std::vector<uint64_t> &seed = seeds.next(round);
      // SET writes the value; ADD adds it to a signal that starts at `base`.
      const uint64_t base = add ? (seed[me] >> 20) : 0;
      const uint64_t value = 1 + (seed[left] & 0xffff);  // what the left neighbour sends here
      const uint64_t sent = 1 + (seed[me] & 0xffff);
      for (size_t i = 0; i < nelem; i++) host[i] = example::value(seed[me], i);
      CHECK_HIP(hipMemcpy(src, host.data(), nelem * sizeof(int), hipMemcpyHostToDevice));
      CHECK_HIP(hipMemset(dst, 0, nelem * sizeof(int)));
      CHECK_HIP(hipMemcpy(sig, &base, sizeof base, hipMemcpyHostToDevice));
      CHECK_HIP(hipDeviceSynchronize());
      rocshmem_barrier_all();  // every PE's signal is reset before anyone sends

      put_signal<<<dim3(1), dim3(wg ? 256 : 64), 0, 0>>>(dst, src, seen, nelem, sig, sent,
                                                          add ? ROCSHMEM_SIGNAL_ADD : ROCSHMEM_SIGNAL_SET,
                                                          base + value, right, wg);
      CHECK_HIP(hipGetLastError());
      CHECK_HIP(hipDeviceSynchronize());

      uint64_t got_sig = 0;
      CHECK_HIP(hipMemcpy(&got_sig, sig, sizeof got_sig, hipMemcpyDeviceToHost));
      check.expect(got_sig == base + value, "signal", 0, static_cast<long long>(got_sig),
                   static_cast<long long>(base + value), seed[left]);
      CHECK_HIP(hipMemcpy(host.data(), seen, nelem * sizeof(int), hipMemcpyDeviceToHost));
      for (size_t i = 0; i < nelem; i++) {
        int want = example::value(seed[left], i);
        check.expect(host[i] == want, wg ? "dst (wg)" : "dst", i, host[i], want, seed[left]);
      }
      rocshmem_barrier_all();
    }
  }

  CHECK_HIP(hipFree(seen));
  rocshmem_free(sig);
  rocshmem_free(dst);
  rocshmem_free(src);
  return check.finish();
}

int main(int argc, char **argv) {
  rocshmem_init();
  int rc = run(argc, argv);
  rocshmem_finalize();
  return rc;
}
