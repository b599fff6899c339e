// The shape of upstream's rocshmem4py extension: flat functions over the C++ API, pointers and
// team handles as Python ints (team 0 = ROCSHMEM_TEAM_WORLD, -1 = ROCSHMEM_TEAM_INVALID), the
// unique id as bytes. Built against an installed rocSHMEM, linking its static archive.
#include <pybind11/pybind11.h>
#include <rocshmem/rocshmem.hpp>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace py = pybind11;
using namespace rocshmem;

namespace {
rocshmem_team_t team_of(intptr_t team) {
  if (team == 0) return ROCSHMEM_TEAM_WORLD;
  if (team == -1) return ROCSHMEM_TEAM_INVALID;
  return reinterpret_cast<rocshmem_team_t>(team);
}
void check(int status, const char *what) {
  if (status != ROCSHMEM_SUCCESS) throw std::runtime_error(std::string(what) + " failed");
}
}  // namespace

PYBIND11_MODULE(_rocshmem4py_ext, m) {
  m.def("rocshmem_init", []() { rocshmem_init(); });
  m.def("rocshmem_finalize", []() { rocshmem_finalize(); });
  m.def("rocshmem_my_pe", []() { return rocshmem_my_pe(); });
  m.def("rocshmem_n_pes", []() { return rocshmem_n_pes(); });
  m.def("rocshmem_team_n_pes", [](intptr_t team) { return rocshmem_team_n_pes(team_of(team)); });
  m.def("rocshmem_malloc", [](size_t size) {
    void *p = rocshmem_malloc(size);
    if (p == nullptr) throw std::runtime_error("rocshmem_malloc failed");
    return reinterpret_cast<intptr_t>(p);
  });
  m.def("rocshmem_free", [](intptr_t p) { rocshmem_free(reinterpret_cast<void *>(p)); });
  m.def("rocshmem_putmem", [](intptr_t d, intptr_t s, size_t n, int pe) {
    rocshmem_putmem(reinterpret_cast<void *>(d), reinterpret_cast<const void *>(s), n, pe);
  });
  m.def("rocshmem_getmem", [](intptr_t d, intptr_t s, size_t n, int pe) {
    rocshmem_getmem(reinterpret_cast<void *>(d), reinterpret_cast<const void *>(s), n, pe);
  });
  m.def("rocshmem_barrier_all", []() { rocshmem_barrier_all(); });
  m.def("rocshmem_long_atomic_fetch_add", [](intptr_t d, long v, int pe) {
    return rocshmem_long_atomic_fetch_add(reinterpret_cast<long *>(d), v, pe);
  });
  m.def("rocshmem_get_uniqueid", []() {
    rocshmem_uniqueid_t uid;
    check(rocshmem_get_uniqueid(&uid), "rocshmem_get_uniqueid");
    return py::bytes(reinterpret_cast<const char *>(&uid), sizeof(uid));
  });
  m.def("rocshmem_init_attr", [](int rank, int nranks, py::bytes b) {
    std::string s = b;
    rocshmem_uniqueid_t uid;
    if (s.size() != sizeof(uid)) throw std::runtime_error("rocshmem_init_attr: invalid unique ID size");
    std::memcpy(&uid, s.data(), s.size());
    rocshmem_init_attr_t attr{};
    check(rocshmem_set_attr_uniqueid_args(rank, nranks, &uid, &attr), "rocshmem_set_attr_uniqueid_args");
    check(rocshmem_init_attr(ROCSHMEM_INIT_WITH_UNIQUEID, &attr), "rocshmem_init_attr");
  });
  m.attr("ROCSHMEM_SUCCESS") = py::int_(0);
}
