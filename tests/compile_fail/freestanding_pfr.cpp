// expect-error: relaxvm/ext/pfr.hpp needs a hosted build
// Compiled with -ffreestanding (tests/meson.build).
#include <relaxvm/ext/pfr.hpp>
