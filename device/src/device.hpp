/**
 * @file device.hpp
 * The whole device library, for the generated entry points (device/gen/) to instantiate.
 */
#ifndef ROCSHMEM_DEVICE_ALL_HPP
#define ROCSHMEM_DEVICE_ALL_HPP

#include "rocshmem/rocshmem.hpp"

#include "common.hpp"
#include "amo.hpp"
#include "coll.hpp"
#include "core.hpp"
#include "rma.hpp"
#include "signal.hpp"
#include "sync.hpp"
#include "tile.hpp"
#include "wait.hpp"

#endif  // ROCSHMEM_DEVICE_ALL_HPP
