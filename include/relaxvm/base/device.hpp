// SPDX-License-Identifier: Apache-2.0
// device: where a tensor lives (DLPack's DLDevice: device_type, device_id).
#ifndef RELAXVM_BASE_DEVICE_HPP
#define RELAXVM_BASE_DEVICE_HPP

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string_view>

#include "config.hpp"  // RELAXVM_ABI
#include "text_builder.hpp"

namespace relaxvm::RELAXVM_ABI {

/// True for the device types DLPack defines. Check a raw number with this before turning it into a
/// DLDeviceType: that enum has no fixed underlying type, so other values are undefined behaviour.
constexpr bool is_known_device_type(std::int64_t t) {
  switch (t) {
    case kDLCPU: case kDLCUDA: case kDLCUDAHost: case kDLOpenCL: case kDLVulkan: case kDLMetal:
    case kDLVPI: case kDLROCM: case kDLROCMHost: case kDLExtDev: case kDLCUDAManaged:
      return true;
    default:
      return false;
  }
}

struct device {
  DLDeviceType device_type = kDLCPU;
  int device_id = 0;

  constexpr device() = default;
  constexpr device(DLDeviceType type, int id) : device_type(type), device_id(id) {}
  constexpr device(DLDevice d) : device_type(d.device_type), device_id(d.device_id) {}  // NOLINT: DLPack interop
  constexpr operator DLDevice() const { return DLDevice{device_type, device_id}; }

  static constexpr device cpu(int id = 0) { return {kDLCPU, id}; }

  friend constexpr bool operator==(const device&, const device&) = default;

  constexpr std::int64_t pack() const {
    return (static_cast<std::int64_t>(device_type) << 32) | static_cast<std::uint32_t>(device_id);
  }
  /// pack() of a device with a known type and a non-negative id.
  static constexpr bool valid_packed(std::int64_t v) {
    return is_known_device_type(v >> 32) && static_cast<std::int32_t>(v & 0xFFFFFFFF) >= 0;
  }
  /// The device pack() made; `v` must be valid_packed().
  static constexpr device unpack(std::int64_t v) {
    return {static_cast<DLDeviceType>(v >> 32), static_cast<int>(static_cast<std::int32_t>(v & 0xFFFFFFFF))};
  }
};

namespace detail {
constexpr std::string_view device_type_name(DLDeviceType t) {
  switch (t) {
    case kDLCPU: return "cpu";
    case kDLCUDA: return "cuda";
    case kDLCUDAHost: return "cuda_host";
    case kDLOpenCL: return "opencl";
    case kDLVulkan: return "vulkan";
    case kDLMetal: return "metal";
    case kDLVPI: return "vpi";
    case kDLROCM: return "rocm";
    case kDLROCMHost: return "rocm_host";
    case kDLExtDev: return "ext_dev";
    case kDLCUDAManaged: return "cuda_managed";
  }
  return "";
}
constexpr void append_device(text& out, device d) {
  out << device_type_name(d.device_type) << ':' << d.device_id;
}
}  // namespace detail

/// Writes to_text(d) into a text (for messages: formatted only when the text is).
constexpr detail::text& operator<<(detail::text& out, device d) {
  detail::append_device(out, d);
  return out;
}

/// "cpu:0", "cuda:1".
inline detail::text to_text(device d) {
  detail::text out;
  detail::append_device(out, d);
  return out;
}

}  // namespace relaxvm

#endif  // RELAXVM_BASE_DEVICE_HPP
