/*
 * module: a kernel in a separately built code object (rocshmem_module_kernel.cc) is loaded at
 * run time; rocshmem_hipmodule_init(module, stream) gives it the library's device globals;
 * then it runs a ring put at several sizes and each PE checks what its left neighbour sent.
 * This program links nothing of the device library itself.
 *
 *   run: rocshmem-run -n 2 ./rocshmem_module_test [code object] [elements]    (or mpirun -np 2)
 * The code object defaults to rocshmem_module_kernel_<arch>.co next to this program, <arch>
 * being the GPU's (gcnArchName without features: gfx90a, ...; sm_90 on NVIDIA).
 */
#include "example_util.hpp"

#include <string>

using namespace rocshmem;

static int run(int argc, char **argv) {
  const int me = rocshmem_my_pe(), npes = rocshmem_n_pes();
  const int left = (me + npes - 1) % npes;
  std::string path;
  if (argc > 1) {
    path = argv[1];
  } else {
    int dev = 0;
    hipDeviceProp_t prop;
    CHECK_HIP(hipGetDevice(&dev));
    CHECK_HIP(hipGetDeviceProperties(&prop, dev));
    std::string arch = prop.gcnArchName;
    arch = arch.substr(0, arch.find(':'));
    path = argv[0];
    size_t slash = path.rfind('/');
    path = (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) + "rocshmem_module_kernel_" + arch +
           ".co";
  }
  const std::vector<size_t> sizes = example::sizes(argc - 1, argv + 1);
  size_t max_elem = 0;
  for (size_t n : sizes) max_elem = n > max_elem ? n : max_elem;

  hipModule_t module = nullptr;
  hipFunction_t kernel = nullptr;
  if (hipModuleLoad(&module, path.c_str()) != hipSuccess) {
    fprintf(stderr, "module: PE %d: cannot load the code object %s\n", me, path.c_str());
    return 2;
  }
  CHECK_HIP(hipModuleGetFunction(&kernel, module, "module_ring_put"));
  hipStream_t stream = nullptr;
  CHECK_HIP(hipStreamCreate(&stream));
  example::Checker check("module");
  int rc = rocshmem_hipmodule_init(module, stream);
  check.expect(rc == ROCSHMEM_SUCCESS, "rocshmem_hipmodule_init", 0, rc, ROCSHMEM_SUCCESS, 0);
  CHECK_HIP(hipStreamSynchronize(stream));

  int *src = example::sym_alloc<int>(max_elem);
  int *dst = example::sym_alloc<int>(max_elem);
  int *info = nullptr;
  CHECK_HIP(hipMalloc(&info, 4 * sizeof(int)));
  example::Seeds seeds;
  std::vector<int> host(max_elem);

  int round = 0;
  for (size_t nelem : sizes) {
    const std::vector<uint64_t> &seed = seeds.next(round++);
    for (size_t i = 0; i < nelem; i++) host[i] = example::value(seed[me], i);
    CHECK_HIP(hipMemcpy(src, host.data(), nelem * sizeof(int), hipMemcpyHostToDevice));
    CHECK_HIP(hipMemset(dst, 0, nelem * sizeof(int)));
    CHECK_HIP(hipMemset(info, 0xff, 4 * sizeof(int)));
    CHECK_HIP(hipDeviceSynchronize());
    rocshmem_barrier_all();

    void *args[] = {&dst, &src, &nelem, &info};
    CHECK_HIP(hipModuleLaunchKernel(kernel, 1, 1, 1, 256, 1, 1, 0, stream, args, nullptr));
    CHECK_HIP(hipStreamSynchronize(stream));

    int got[4];
    CHECK_HIP(hipMemcpy(got, info, sizeof got, hipMemcpyDeviceToHost));
    const int want[4] = {me, npes, npes, 1};
    for (int k = 0; k < 4; k++) check.expect(got[k] == want[k], "info", k, got[k], want[k], seed[me]);
    CHECK_HIP(hipMemcpy(host.data(), dst, nelem * sizeof(int), hipMemcpyDeviceToHost));
    for (size_t i = 0; i < nelem; i++) {
      int w = example::value(seed[left], i);
      check.expect(host[i] == w, "dst", i, host[i], w, seed[left]);
    }
    rocshmem_barrier_all();
  }

  CHECK_HIP(hipFree(info));
  rocshmem_free(dst);
  rocshmem_free(src);
  CHECK_HIP(hipStreamDestroy(stream));
  CHECK_HIP(hipModuleUnload(module));
  return check.finish();
}

int main(int argc, char **argv) {
  rocshmem_init();
  int rc = run(argc, argv);
  rocshmem_finalize();
  return rc;
}
