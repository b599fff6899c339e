/*
 * tile_halo_exchange (after upstream's example of that name): the halo exchange of a 2-D
 * stencil code with the tile API. The PEs form a G x G grid (the number of PEs must be a
 * square: 1, 4, 9, ...); each holds an N x N block of a larger matrix inside an (N+2) x (N+2)
 * array whose outer ring is the halo. Four work-groups each send one edge of the block to the
 * neighbour on that side, with rocshmem_ctx_tile_put_wg:
 *   north edge (row 1)   -> the north neighbour's south halo (row N+1),
 *   south edge (row N)   -> the south neighbour's north halo (row 0),
 *   west edge (column 1) -> the west neighbour's east halo (column N+1),
 *   east edge (column N) -> the east neighbour's west halo (column 0).
 * A row is a 1 x N tile, a column an N x 1 tile of a tensor whose row stride is N+2: each
 * tensor starts at the edge it describes and the tile at (0, 0).
 * Every PE then checks its whole array: each halo segment holds the neighbour's edge, halo
 * cells without a neighbour (the grid's border) and the four corners are untouched, and the
 * block itself is unchanged. Fresh random data every round, for a few block sizes.
 *
 *   run: rocshmem-run -n 4 ./tile_halo_exchange     (or mpirun -np 4; 9, 16, ... PEs also work)
 */
#include "example_util.hpp"

#include <rocshmem/rocshmem.hpp>
#ifdef __HIP_DEVICE_COMPILE__
#include <rocshmem/rocshmem_device.hpp>
#endif

#include <cmath>

using namespace rocshmem;

struct Coord2D {
  int row, col;
  __host__ __device__ int get(int dim) const { return dim == 0 ? row : col; }
};

template <typename T>
struct Tensor2D {
  using element_type = T;
  static constexpr int ndim = 2;
  T *data;
  int rows, cols, row_stride;
  __host__ __device__ T *data_handle() const { return data; }
  __host__ __device__ int stride(int dim) const { return dim == 0 ? row_stride : 1; }
};

// Work-group w sends edge w (0 north, 1 south, 2 west, 3 east) of the block in `domain`
// ((n+2) x (n+2), row-major) to neighbour pe[w], if there is one (-1: none).
__global__ void halo_exchange(float *domain, int n, int north, int south, int west, int east, int *rc) {
  EXAMPLE_SHARED(rocshmem_ctx_t, ctx);
  rocshmem_wg_ctx_create(ROCSHMEM_CTX_WG_PRIVATE, &ctx);
  const int w = n + 2, edge = blockIdx.x;
  const int peer = edge == 0 ? north : edge == 1 ? south : edge == 2 ? west : east;
  int r = 0;
  if (peer >= 0) {
    // Where the edge is here, and where it goes on the neighbour (the opposite halo).
    int src_at, dst_at, rows, cols;
    if (edge == 0) {
      src_at = 1 * w + 1, dst_at = (n + 1) * w + 1, rows = 1, cols = n;
    } else if (edge == 1) {
      src_at = n * w + 1, dst_at = 0 * w + 1, rows = 1, cols = n;
    } else if (edge == 2) {
      src_at = 1 * w + 1, dst_at = 1 * w + (n + 1), rows = n, cols = 1;
    } else {
      src_at = 1 * w + n, dst_at = 1 * w + 0, rows = n, cols = 1;
    }
    Tensor2D<float> src{domain + src_at, rows, cols, w}, dst{domain + dst_at, rows, cols, w};
    r = rocshmem_ctx_tile_put_wg(ctx, dst, src, Coord2D{0, 0}, Coord2D{rows, cols}, peer, 0);
  }
  if (threadIdx.x == 0) {
    rc[edge] = r;
    rocshmem_ctx_quiet(ctx);
  }
  __syncthreads();
  rocshmem_wg_ctx_destroy(&ctx);
}

static float cell(uint64_t seed, int i) { return static_cast<float>(example::value(seed, static_cast<uint64_t>(i), 1 << 20)); }

static int run() {
  const int me = rocshmem_my_pe(), npes = rocshmem_n_pes();
  example::Checker check("tile_halo_exchange");
  const int g = static_cast<int>(std::lround(std::sqrt(static_cast<double>(npes))));
  if (g * g != npes) {
    if (me == 0) fprintf(stderr, "tile_halo_exchange: the number of PEs (%d) must be a square (1, 4, 9, ...)\n", npes);
    return 1;
  }
  const int row = me / g, col = me % g;
  const int north = row > 0 ? me - g : -1, south = row < g - 1 ? me + g : -1;
  const int west = col > 0 ? me - 1 : -1, east = col < g - 1 ? me + 1 : -1;

  static const int blocks[] = {8, 1, 30};
  const int max_w = 32;
  float *domain = example::sym_alloc<float>(static_cast<size_t>(max_w) * max_w);
  int *rc = example::sym_alloc<int>(4);
  example::Seeds seeds;
  std::vector<float> host(static_cast<size_t>(max_w) * max_w);

  int round = 0;
  for (int n : blocks) {
    const int w = n + 2;
    const std::vector<uint64_t> &seed = seeds.next(round++);
    // Every cell from this PE's seed: the block is the data, the ring shows what was not written.
    for (int i = 0; i < w * w; i++) host[i] = cell(seed[me], i);
    CHECK_HIP(hipMemcpy(domain, host.data(), w * w * sizeof(float), hipMemcpyHostToDevice));
    CHECK_HIP(hipDeviceSynchronize());
    rocshmem_barrier_all();

    hipLaunchKernelGGL(halo_exchange, dim3(4), dim3(256), 0, 0, domain, n, north, south, west, east, rc);
    CHECK_HIP(hipGetLastError());
    CHECK_HIP(hipDeviceSynchronize());
    rocshmem_barrier_all();  // every neighbour's puts have landed

    int ret[4];
    CHECK_HIP(hipMemcpy(ret, rc, sizeof ret, hipMemcpyDeviceToHost));
    for (int e = 0; e < 4; e++) check.expect(ret[e] == ROCSHMEM_SUCCESS, "rocshmem_ctx_tile_put_wg", e, ret[e], 0, seed[me]);
    CHECK_HIP(hipMemcpy(host.data(), domain, w * w * sizeof(float), hipMemcpyDeviceToHost));
    for (int r = 0; r < w; r++) {
      for (int c = 0; c < w; c++) {
        // Which PE's data this cell must hold, and at which index of that PE's array.
        int from = me, at = r * w + c;
        const bool inner_r = r >= 1 && r <= n, inner_c = c >= 1 && c <= n;
        if (r == 0 && inner_c && north >= 0) from = north, at = n * w + c;           // its south edge
        if (r == n + 1 && inner_c && south >= 0) from = south, at = 1 * w + c;       // its north edge
        if (c == 0 && inner_r && west >= 0) from = west, at = r * w + n;             // its east edge
        if (c == n + 1 && inner_r && east >= 0) from = east, at = r * w + 1;         // its west edge
        const float want = cell(seed[from], at);
        const float got = host[static_cast<size_t>(r) * w + c];
        check.expect(got == want, from == me ? "domain (not a received halo)" : "halo", static_cast<size_t>(r) * w + c,
                     static_cast<long long>(got), static_cast<long long>(want), seed[from]);
      }
    }
    rocshmem_barrier_all();  // nobody refills before every neighbour has checked
  }
  rocshmem_free(rc);
  rocshmem_free(domain);
  return check.finish();
}

int main() {
  rocshmem_init();
  int rc = run();
  rocshmem_finalize();
  return rc;
}
