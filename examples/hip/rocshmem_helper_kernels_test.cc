/*
 * helper_kernels: launches upstream's helper kernels of the *_on_stream calls itself, as programs
 * may (rocshmem_HOST.hpp declares them), all on one stream: each PE puts random ints into the
 * next PE (rocshmem_putmem_kernel), gets the next PE's (getmem), puts them with a signal that the
 * next PE waits for (putmem_signal, signal_wait_until), then a broadcast from a rotating root,
 * an alltoall, and two reductions through the template rocshmem_reduce_on_stream_kernel (float
 * sum, long max); the barriers and syncs between them are the helper kernels too. Every PE
 * checks what it received.
 *
 *   run: rocshmem-run -n 2 ./rocshmem_helper_kernels_test [elements]    (or mpirun -np 2)
 */
#include "example_util.hpp"

using namespace rocshmem;

static int run(int argc, char **argv) {
  const int me = rocshmem_my_pe(), npes = rocshmem_n_pes();
  const int next = (me + 1) % npes, prev = (me + npes - 1) % npes;
  const std::vector<size_t> sizes = example::sizes(argc, argv, 1 << 16);
  size_t max_elem = 0;
  for (size_t n : sizes) max_elem = n > max_elem ? n : max_elem;

  int *src = example::sym_alloc<int>(max_elem * npes);
  int *put = example::sym_alloc<int>(max_elem), *got = example::sym_alloc<int>(max_elem);
  int *sig_dst = example::sym_alloc<int>(max_elem), *bcast = example::sym_alloc<int>(max_elem);
  int *a2a = example::sym_alloc<int>(max_elem * npes);
  float *fsrc = example::sym_alloc<float>(max_elem), *fsum = example::sym_alloc<float>(max_elem);
  long *lsrc = example::sym_alloc<long>(max_elem), *lmax = example::sym_alloc<long>(max_elem);
  uint64_t *sig = example::sym_alloc<uint64_t>(1);
  hipStream_t s;
  CHECK_HIP(hipStreamCreate(&s));
  example::Seeds seeds;
  example::Checker check("helper_kernels");
  std::vector<int> host(max_elem * npes);
  std::vector<float> fhost(max_elem);
  std::vector<long> lhost(max_elem);

  int round = 0;
  for (size_t n : sizes) {
    const std::vector<uint64_t> &seed = seeds.next(round);
    const int root = round % npes;
    // src holds npes blocks of n: block j goes to PE j in the alltoall; block 0 is also what
    // the puts, the get and the broadcast send.
    for (size_t i = 0; i < n * npes; i++) host[i] = example::value(seed[me], i);
    for (size_t i = 0; i < n; i++) {
      fhost[i] = static_cast<float>(example::value(seed[me], i, 1000));
      lhost[i] = static_cast<long>(example::mix(seed[me], i) >> 1);
    }
    CHECK_HIP(hipMemcpy(src, host.data(), n * npes * sizeof(int), hipMemcpyHostToDevice));
    CHECK_HIP(hipMemcpy(fsrc, fhost.data(), n * sizeof(float), hipMemcpyHostToDevice));
    CHECK_HIP(hipMemcpy(lsrc, lhost.data(), n * sizeof(long), hipMemcpyHostToDevice));
    CHECK_HIP(hipMemset(sig, 0, sizeof(uint64_t)));
    CHECK_HIP(hipDeviceSynchronize());

    const size_t bytes = n * sizeof(int);
    rocshmem_barrier_all_kernel<<<1, 32, 0, s>>>();
    rocshmem_putmem_kernel<<<1, 256, 0, s>>>(put, src, bytes, next);
    rocshmem_getmem_kernel<<<1, 256, 0, s>>>(got, src, bytes, next);
    rocshmem_quiet_kernel<<<1, 1, 0, s>>>();
    rocshmem_putmem_signal_kernel<<<1, 256, 0, s>>>(sig_dst, src, bytes, sig, 1, ROCSHMEM_SIGNAL_SET, next);
    rocshmem_signal_wait_until_kernel<<<1, 1, 0, s>>>(sig, ROCSHMEM_CMP_EQ, 1);
    rocshmem_sync_all_kernel<<<1, 32, 0, s>>>();
    rocshmem_broadcastmem_kernel<<<1, 256, 0, s>>>(ROCSHMEM_TEAM_WORLD, bcast, src, bytes, root);
    rocshmem_team_sync_kernel<<<1, 32, 0, s>>>(ROCSHMEM_TEAM_WORLD);
    rocshmem_alltoallmem_kernel<<<1, 256, 0, s>>>(ROCSHMEM_TEAM_WORLD, a2a, src, bytes);
    rocshmem_barrier_kernel<<<1, 32, 0, s>>>(ROCSHMEM_TEAM_WORLD);
    rocshmem_reduce_on_stream_kernel<float, ROCSHMEM_SUM>
        <<<1, 256, 0, s>>>(ROCSHMEM_TEAM_WORLD, fsum, fsrc, static_cast<int>(n));
    hipLaunchKernelGGL((rocshmem_reduce_on_stream_kernel<long, ROCSHMEM_MAX>), dim3(1), dim3(256), 0, s,
                       ROCSHMEM_TEAM_WORLD, lmax, lsrc, static_cast<int>(n));
    CHECK_HIP(hipGetLastError());
    CHECK_HIP(hipStreamSynchronize(s));

    struct Want {
      const char *what;
      const int *buf;
      int from;
    } const blocks[] = {{"put", put, prev}, {"get", got, next}, {"put_signal", sig_dst, prev}, {"broadcast", bcast, root}};
    for (const Want &w : blocks) {
      CHECK_HIP(hipMemcpy(host.data(), w.buf, bytes, hipMemcpyDeviceToHost));
      for (size_t i = 0; i < n; i++) {
        int want = example::value(seed[w.from], i);
        check.expect(host[i] == want, w.what, i, host[i], want, seed[w.from]);
      }
    }
    CHECK_HIP(hipMemcpy(host.data(), a2a, bytes * npes, hipMemcpyDeviceToHost));
    for (int p = 0; p < npes; p++)
      for (size_t i = 0; i < n; i++) {
        int want = example::value(seed[p], me * n + i);
        check.expect(host[p * n + i] == want, "alltoall", p * n + i, host[p * n + i], want, seed[p]);
      }
    CHECK_HIP(hipMemcpy(fhost.data(), fsum, n * sizeof(float), hipMemcpyDeviceToHost));
    CHECK_HIP(hipMemcpy(lhost.data(), lmax, n * sizeof(long), hipMemcpyDeviceToHost));
    for (size_t i = 0; i < n; i++) {
      float sum = 0;  // integers of at most 1000 * npes: exact in float in any order
      long max = static_cast<long>(example::mix(seed[0], i) >> 1);
      for (int p = 0; p < npes; p++) {
        sum += static_cast<float>(example::value(seed[p], i, 1000));
        long v = static_cast<long>(example::mix(seed[p], i) >> 1);
        max = v > max ? v : max;
      }
      check.expect(fhost[i] == sum, "float sum", i, static_cast<long long>(fhost[i]), static_cast<long long>(sum),
                   seed[me]);
      check.expect(lhost[i] == max, "long max", i, lhost[i], max, seed[me]);
    }
    rocshmem_barrier_all();
    round++;
  }

  CHECK_HIP(hipStreamDestroy(s));
  for (void *p : {static_cast<void *>(sig), static_cast<void *>(lmax), static_cast<void *>(lsrc),
                  static_cast<void *>(fsum), static_cast<void *>(fsrc), static_cast<void *>(a2a),
                  static_cast<void *>(bcast), static_cast<void *>(sig_dst), static_cast<void *>(got),
                  static_cast<void *>(put), static_cast<void *>(src)})
    rocshmem_free(p);
  return check.finish();
}

int main(int argc, char **argv) {
  rocshmem_init();
  int rc = run(argc, argv);
  rocshmem_finalize();
  return rc;
}
