// Every header upstream installs, included by its name as upstream programs include them, and
// what each gives: rocshmem_mpi.hpp's MPI types, comm_options.hpp's option tags (checked at
// compile time), rocshmem_device.hpp with the tile templates, and api_trace.h's dispatch table,
// whose entries are then used to move fresh random data between PEs on the host platform's
// default stream (checked on the receiving PE).
#include <rocshmem/rocshmem.hpp>
#include <rocshmem/rocshmem_device.hpp>
#include <rocshmem/rocshmem_TILE.hpp>
#include <rocshmem/rocshmem_TILE_impl.hpp>
#include <rocshmem/rocshmem_common.hpp>
#include <rocshmem/rocshmem_RMA.hpp>
#include <rocshmem/rocshmem_RMA_X.hpp>
#include <rocshmem/rocshmem_AMO.hpp>
#include <rocshmem/rocshmem_SIG_OP.hpp>
#include <rocshmem/rocshmem_COLL.hpp>
#include <rocshmem/rocshmem_P2P_SYNC.hpp>
#include <rocshmem/rocshmem_config.h>
#include <rocshmem/rocshmem_mpi.hpp>
#include <rocshmem/qp_introspect.hpp>
#include <rocshmem/comm_options.hpp>
#include <rocshmem/api_trace.h>
#include <rocshmem/host_kernel.hpp>

#include <type_traits>
#include <vector>

#include "test_util.h"
#include "host_util.h"

using namespace rocshmem;

// rocshmem_mpi.hpp: Open MPI's handle types (what the MPI overloads link by).
static_assert(std::is_same<MPI_Comm, struct ompi_communicator_t *>::value, "MPI_Comm is Open MPI's");
static_assert(std::is_pointer<MPI_Win>::value && std::is_pointer<MPI_Datatype>::value, "MPI handles");

// comm_options.hpp: defaults, any order, values as tags.
struct Group {
  bool is_pe_group_last;
};
constexpr auto opts = CommOpt{Initiate<false>, Completion<CompletionScope::Last>};
using Opts = std::remove_const_t<decltype(opts)>;
static_assert(!Opts::Initiate && Opts::Concurrent && Opts::FlowControl && !Opts::RelaxedOrdering, "options");
static_assert(Opts::Completion == CompletionScope::Last, "completion");
static_assert(Opts::signal_completion(Group{true}) && !Opts::signal_completion(Group{false}), "signal");
static_assert(CommOpt<>::Initiate && CommOpt<>::Completion == CompletionScope::Every &&
                  CommOpt<>::signal_completion_single(), "defaults");
static_assert(CommOpt<CommOption::relaxed_ordering_tag<true>, CommOption::concurrent_tag<false>>::RelaxedOrdering &&
                  !CommOpt<CommOption::relaxed_ordering_tag<true>, CommOption::concurrent_tag<false>>::Concurrent,
              "order");

int main() {
  rocshmem_init();
  const int me = rocshmem_my_pe(), n = rocshmem_n_pes();
  const uint64_t seed = hu_agree_seed("upstream_headers");

  // api_trace.h: the table and its entries, used on the default stream.
  const rocshmemApiFuncTable *t = RocshmemGetFunctionTable();
  REQUIRE(t != nullptr, "RocshmemGetFunctionTable() is NULL");
  CHECK(t->size == sizeof(rocshmemApiFuncTable), "table size %llu", (unsigned long long)t->size);
  CHECK(t->barrier_all_on_stream_fn && t->quiet_on_stream_fn && t->sync_all_on_stream_fn &&
            t->alltoallmem_on_stream_fn && t->broadcastmem_on_stream_fn && t->getmem_on_stream_fn &&
            t->putmem_on_stream_fn && t->putmem_signal_on_stream_fn && t->signal_wait_until_on_stream_fn,
        "an entry of the table is NULL");
  CHECK(t->putmem_on_stream_fn == &rocshmem::rocshmem_putmem_on_stream &&
            t->broadcastmem_on_stream_fn == &rocshmem::rocshmem_broadcastmem_on_stream,
        "the table does not point to the library's calls");

  const size_t bytes = 10000;
  char *sym = static_cast<char *>(rocshmem_malloc(bytes));
  char *all = static_cast<char *>(rocshmem_malloc(bytes * size_t(n)));
  REQUIRE(sym && all, "rocshmem_malloc");
  std::vector<char> mine(bytes), want(bytes), got(bytes * size_t(n));
  hu_fill(mine.data(), bytes, seed, me, 1);
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  t->putmem_on_stream_fn(sym, mine.data(), bytes, right, nullptr);
  t->quiet_on_stream_fn(nullptr);
  t->barrier_all_on_stream_fn(nullptr);
  REQUIRE(hipStreamSynchronize(nullptr) == hipSuccess, "hipStreamSynchronize");
  hu_fill(want.data(), bytes, seed, left, 1);
  t->getmem_on_stream_fn(got.data(), sym, bytes, me, nullptr);
  REQUIRE(hipStreamSynchronize(nullptr) == hipSuccess, "hipStreamSynchronize");
  CHECK(hu_first_diff(got.data(), want.data(), bytes) < 0, "putmem_on_stream_fn: data from PE %d differs", left);
  // alltoallmem through the table: block j of `all` on PE p is block p of PE j's source.
  std::vector<char> src(bytes * size_t(n));
  for (int j = 0; j < n; j++) hu_fill(&src[size_t(j) * (bytes / size_t(n))], bytes / size_t(n), seed, me, 100 + j);
  char *ssrc = static_cast<char *>(rocshmem_malloc(bytes));
  REQUIRE(ssrc, "rocshmem_malloc");
  memcpy(ssrc, src.data(), bytes);
  t->barrier_all_on_stream_fn(nullptr);
  t->alltoallmem_on_stream_fn(ROCSHMEM_TEAM_WORLD, all, ssrc, bytes / size_t(n), nullptr);
  REQUIRE(hipStreamSynchronize(nullptr) == hipSuccess, "hipStreamSynchronize");
  for (int j = 0; j < n; j++) {
    hu_fill(want.data(), bytes / size_t(n), seed, j, 100 + me);
    CHECK(hu_first_diff(all + size_t(j) * (bytes / size_t(n)), want.data(), bytes / size_t(n)) < 0,
          "alltoallmem_on_stream_fn: block from PE %d differs", j);
  }
  rocshmem_barrier_all();
  rocshmem_free(ssrc);
  rocshmem_free(all);
  rocshmem_free(sym);
  rocshmem_finalize();
  TEST_DONE("upstream_headers");
  return tu_failures != 0;
}
