/**
 * @file wait.hpp
 * wait_until and test over every element type, on this PE's symmetric variables.
 *
 * Waiting polls (with the platform's back-off, so that CPU "GPU threads" on the host platform
 * leave the cores to the PEs they wait for) and ends with an acquire, so that data written
 * before the awaited store is visible after the wait.
 */
#ifndef ROCSHMEM_DEVICE_WAIT_HPP
#define ROCSHMEM_DEVICE_WAIT_HPP

#include "common.hpp"
#include "numeric.hpp"

namespace rocshmem {
namespace dev {

/**
 * 4- and 8-byte variables are read with the platform's acquire poll load, so a satisfied wait
 * needs no fence after it (on NVLink a system-scope fence costs about a microsecond); 2-byte
 * ones are read volatile, and their wait ends with a fence.
 */
template <class T>
constexpr bool kAcquireLoad = sizeof(T) == 4 || sizeof(T) == 8;

/** A fresh read of a variable other PEs write (an acquire where kAcquireLoad<T>). */
template <class T>
ROCSHMEM_DEV_INLINE T fresh_load(const T *p) {
  if constexpr (kAcquireLoad<T>) {
    using W = typename std::conditional<sizeof(T) == 4, uint32_t, uint64_t>::type;
    W w = platform::poll_load(reinterpret_cast<const W *>(p));
    T v;
    __builtin_memcpy(&v, &w, sizeof(T));
    return v;
  } else {
    return volatile_load(p);
  }
}

template <class T>
ROCSHMEM_DEV_INLINE bool satisfied(const T *ivar, int cmp, T val) {
  return compare(Num<T>::to(fresh_load(ivar)), cmp, Num<T>::to(val));
}

ROCSHMEM_DEV_INLINE bool included(const int *status, size_t i) { return status == nullptr || status[i] == 0; }

/** Polls `ready()` (reads of T variables) until true; the wait is then an acquire. */
template <class T, class F>
ROCSHMEM_DEV_INLINE void poll(F ready) {
  for (uint32_t round = 0; !ready(); ++round) platform::backoff(round);
  if constexpr (!kAcquireLoad<T>) platform::fence_system();
}

template <class T>
ROCSHMEM_DEV_INLINE void wait_until(T *ivars, int cmp, T val) {
  poll<T>([&] { return satisfied(ivars, cmp, val); });
}

template <class T>
ROCSHMEM_DEV_INLINE int test(T *ivars, int cmp, T val) {
  if (!satisfied(ivars, cmp, val)) return 0;
  if constexpr (!kAcquireLoad<T>) platform::fence_system();
  return 1;
}

/** `vals` is either one value for all (vector = false) or one per element. */
template <class T, bool VECTOR>
ROCSHMEM_DEV_INLINE T against(const T *vals, size_t i) {
  return VECTOR ? vals[i] : vals[0];
}

template <class T, bool VECTOR>
ROCSHMEM_DEV_INLINE void wait_all(T *ivars, size_t n, const int *status, int cmp, const T *vals) {
  for (size_t i = 0; i < n; ++i) {
    if (included(status, i)) poll<T>([&] { return satisfied(ivars + i, cmp, against<T, VECTOR>(vals, i)); });
  }
}

/** Index of an element that satisfies the comparison; SIZE_MAX if none is included. */
template <class T, bool VECTOR>
ROCSHMEM_DEV_INLINE size_t wait_any(T *ivars, size_t n, const int *status, int cmp, const T *vals) {
  bool any = false;
  for (size_t i = 0; i < n; ++i) any = any || included(status, i);
  if (!any) return SIZE_MAX;
  size_t found = SIZE_MAX;
  poll<T>([&] {
    for (size_t i = 0; i < n; ++i) {
      if (included(status, i) && satisfied(ivars + i, cmp, against<T, VECTOR>(vals, i))) {
        found = i;
        return true;
      }
    }
    return false;
  });
  return found;
}

/** Waits for at least one; stores the indices of all that satisfy; returns how many. */
template <class T, bool VECTOR>
ROCSHMEM_DEV_INLINE size_t wait_some(T *ivars, size_t n, size_t *indices, const int *status, int cmp, const T *vals) {
  bool any = false;
  for (size_t i = 0; i < n; ++i) any = any || included(status, i);
  if (!any) return 0;
  size_t count = 0;
  poll<T>([&] {
    count = 0;
    for (size_t i = 0; i < n; ++i) {
      if (included(status, i) && satisfied(ivars + i, cmp, against<T, VECTOR>(vals, i))) indices[count++] = i;
    }
    return count > 0;
  });
  return count;
}

}  // namespace dev
}  // namespace rocshmem

#endif  // ROCSHMEM_DEVICE_WAIT_HPP
