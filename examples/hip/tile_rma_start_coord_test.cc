/*
 * tile_rma_start_coord_test (after upstream's example of that name): a tile that does not
 * start at the origin. Both PEs hold the same kind of matrix, ROWS x 2*COLS floats, and the
 * tile is its right half: start_coord (0, COLS), boundary (ROWS, 2*COLS). The coordinates
 * apply to both tensors, so the sender's right half must land in the receiver's right half
 * and the left half must stay as it was.
 *
 *  - put: each PE writes the right half of its source matrix into its right neighbour's
 *    destination matrix (rocshmem_ctx_tile_put from one thread, with a work-group context);
 *  - get: each PE reads its right neighbour's right half into its own destination matrix
 *    (rocshmem_ctx_tile_get);
 * then the same with the work-group forms (rocshmem_ctx_tile_put_wg / _get_wg), for a few
 * matrix sizes. The data is fresh random numbers every round (example::Seeds); the receiving
 * PE checks every element, the left half against its own fill.
 *
 *   AMD:    hipcc -fgpu-rdc --offload-arch=<arch> -c tile_rma_start_coord_test.cc -I<prefix>/include
 *           hipcc -fgpu-rdc --hip-link --offload-arch=<arch> tile_rma_start_coord_test.o <prefix>/lib/librocshmem.a
 *   host platform: c++ -std=c++17 -I<prefix>/include tile_rma_start_coord_test.cc -L<prefix>/lib -lrocshmem
 *   run:    rocshmem-run -n 2 ./tile_rma_start_coord_test       (any number of PEs >= 2; or mpirun)
 */
#include "example_util.hpp"

#include <rocshmem/rocshmem.hpp>
#ifdef __HIP_DEVICE_COMPILE__
#include <rocshmem/rocshmem_device.hpp>
#endif

using namespace rocshmem;

// A row-major matrix view as the tile API takes it.
template <typename T>
struct Matrix {
  using element_type = T;
  static constexpr int ndim = 2;
  T *data;
  int rows, cols, row_stride;
  __host__ __device__ T *data_handle() const { return data; }
  __host__ __device__ int stride(int dim) const { return dim == 0 ? row_stride : 1; }
};

struct Coord {
  int row, col;
  __host__ __device__ int get(int dim) const { return dim == 0 ? row : col; }
};

// One tile transfer of the right half: put (to `peer`) or get (from `peer`), by one thread or
// by the whole work-group.
__global__ void right_half(float *dst, float *src, int rows, int cols, int peer, int get, int wg, int *rc) {
  EXAMPLE_SHARED(rocshmem_ctx_t, ctx);
  rocshmem_wg_ctx_create(ROCSHMEM_CTX_WG_PRIVATE, &ctx);
  Matrix<float> d{dst, rows, 2 * cols, 2 * cols}, s{src, rows, 2 * cols, 2 * cols};
  Coord start{0, cols}, boundary{rows, 2 * cols};
  int r = 0;
  if (wg) {
    r = get ? rocshmem_ctx_tile_get_wg(ctx, d, s, start, boundary, peer, 0)
            : rocshmem_ctx_tile_put_wg(ctx, d, s, start, boundary, peer, 0);
  } else if (threadIdx.x == 0) {
    r = get ? rocshmem_ctx_tile_get(ctx, d, s, start, boundary, peer, 0)
            : rocshmem_ctx_tile_put(ctx, d, s, start, boundary, peer, 0);
  }
  if (threadIdx.x == 0) {
    *rc = r;
    rocshmem_ctx_quiet(ctx);
  }
  __syncthreads();
  rocshmem_wg_ctx_destroy(&ctx);
}

// Element i of a matrix filled from `seed`: exact small floats.
static float fill_value(uint64_t seed, size_t i) { return static_cast<float>(example::value(seed, i, 1 << 20)); }

static int run() {
  const int me = rocshmem_my_pe(), npes = rocshmem_n_pes();
  example::Checker check("tile_rma_start_coord_test");
  if (npes < 2) {
    if (me == 0) fprintf(stderr, "tile_rma_start_coord_test: needs 2 or more PEs (got %d)\n", npes);
    return 1;
  }
  const int right = (me + 1) % npes, left = (me + npes - 1) % npes;
  static const int shapes[][2] = {{8, 4}, {1, 1}, {37, 13}, {64, 100}};  // rows, cols of the tile
  const size_t max_elems = 64 * 200;
  float *src = example::sym_alloc<float>(max_elems);
  float *dst = example::sym_alloc<float>(max_elems);
  int *rc = example::sym_alloc<int>(1);
  example::Seeds seeds;
  std::vector<float> host(max_elems);

  int round = 0;
  for (const auto &shape : shapes) {
    const int rows = shape[0], cols = shape[1];
    const size_t n = static_cast<size_t>(rows) * 2 * cols;
    for (int variant = 0; variant < 4; variant++, round++) {
      const int get = variant & 1, wg = (variant >> 1) & 1;
      const char *name = get ? (wg ? "tile_get_wg" : "tile_get") : (wg ? "tile_put_wg" : "tile_put");
      const std::vector<uint64_t> &seed = seeds.next(round);
      // Source: this PE's data everywhere (the left half must not travel); destination: other
      // data of this PE's, which outside the tile must survive.
      for (size_t i = 0; i < n; i++) host[i] = fill_value(seed[me], i);
      CHECK_HIP(hipMemcpy(src, host.data(), n * sizeof(float), hipMemcpyHostToDevice));
      for (size_t i = 0; i < n; i++) host[i] = fill_value(~seed[me], i);
      CHECK_HIP(hipMemcpy(dst, host.data(), n * sizeof(float), hipMemcpyHostToDevice));
      CHECK_HIP(hipDeviceSynchronize());
      rocshmem_barrier_all();

      hipLaunchKernelGGL(right_half, dim3(1), dim3(64), 0, 0, dst, src, rows, cols, right, get, wg, rc);
      CHECK_HIP(hipGetLastError());
      CHECK_HIP(hipDeviceSynchronize());
      rocshmem_barrier_all();  // every put has landed

      int ret = -1;
      CHECK_HIP(hipMemcpy(&ret, rc, sizeof ret, hipMemcpyDeviceToHost));
      check.expect(ret == ROCSHMEM_SUCCESS, name, 0, ret, ROCSHMEM_SUCCESS, seed[me]);
      // put: the left neighbour's right half arrived here; get: the right neighbour's.
      const uint64_t from = get ? seed[right] : seed[left];
      CHECK_HIP(hipMemcpy(host.data(), dst, n * sizeof(float), hipMemcpyDeviceToHost));
      for (int r = 0; r < rows; r++) {
        for (int c = 0; c < 2 * cols; c++) {
          const size_t i = static_cast<size_t>(r) * 2 * cols + c;
          const float want = c < cols ? fill_value(~seed[me], i) : fill_value(from, i);
          check.expect(host[i] == want, c < cols ? "dst left half (untouched)" : name, i,
                       static_cast<long long>(host[i]), static_cast<long long>(want), c < cols ? seed[me] : from);
        }
      }
      rocshmem_barrier_all();  // nobody refills before the neighbours have read
    }
  }
  rocshmem_free(rc);
  rocshmem_free(dst);
  rocshmem_free(src);
  return check.finish();
}

int main() {
  rocshmem_init();
  int rc = run();
  rocshmem_finalize();
  return rc;
}
