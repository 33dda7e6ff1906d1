// SPDX-License-Identifier: Apache-2.0
// The kernels' pool built without exceptions (the noexcept suite): its workers are POSIX threads
// there, since std::thread's constructor would abort when the system refuses a thread.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <relaxvm/kernels/threads.hpp>

namespace k = relaxvm::kernels;

TEST_CASE("the kernels' pool without exceptions: workers made, every part run once, joined when set back to 1") {
  REQUIRE(k::set_kernel_threads(3) == 3);
  CHECK(k::detail::kernel_pool_workers() == 2);
  std::atomic<std::int64_t> sum{0}, count{0};
  auto part = [&](std::int64_t i) {
    sum += i;
    ++count;
  };
  k::detail::run_parts(1000, part);
  CHECK(count.load() == 1000);
  CHECK(sum.load() == 999 * 1000 / 2);
  REQUIRE(k::set_kernel_threads(1) == 1);
  CHECK(k::detail::kernel_pool_workers() == 0);
}
