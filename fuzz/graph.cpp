// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the graph executor's loaders. Byte 0 even: the rest is a graph JSON, loaded with
// the kernels of relaxvm/ops under a storage cap and, when it loads, run once. Odd: the rest is a
// params file.
#include <cstddef>
#include <cstdint>
#include <relaxvm/graph.hpp>
#include <relaxvm/ops/ops.hpp>
#include <string_view>

namespace rv = relaxvm;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  if (data[0] % 2 == 1) {
    const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data + 1), size - 1);
    (void)rv::graph::load_params(bytes);
    return 0;
  }
  static const rv::registry reg = [] {
    rv::registry r;
    rv::ops::register_all(r);
    r.add("tvmgen_default_fused_add", *r.find("ops.add_out"));
    return r;
  }();
  rv::graph::graph_options opts;
  opts.max_storage_bytes = 1 << 20;
  rv::result<rv::graph::executor> g =
      rv::graph::executor::create(std::string_view(reinterpret_cast<const char*>(data + 1), size - 1), reg, opts);
  if (!g.ok()) return 0;
  (void)g->run();
  (void)g->run();
  return 0;
}
