// expect-error: relaxvm/ops needs a hosted build
// Compiled with -ffreestanding (tests/meson.build): the optional kernels say they need a hosted build.
#include <relaxvm/ops/ops.hpp>
