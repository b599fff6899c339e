/**
 * @file rocshmem_device.hpp
 * What device code includes, after <rocshmem/rocshmem.hpp>, to use the tile templates
 * (upstream's header of the same name and use):
 *
 *   #include <rocshmem/rocshmem.hpp>
 *   #ifdef __HIP_DEVICE_COMPILE__
 *   #include <rocshmem/rocshmem_device.hpp>
 *   #endif
 *
 * It brings the definitions of the templates (rocshmem_TILE_impl.hpp). On the host platform
 * rocshmem.hpp has them already, and including this header as well does no harm.
 */
#ifndef ROCSHMEM_DEVICE_HEADER_HPP
#define ROCSHMEM_DEVICE_HEADER_HPP

#include "rocshmem.hpp"
#include "rocshmem_TILE_impl.hpp"

#endif  // ROCSHMEM_DEVICE_HEADER_HPP
