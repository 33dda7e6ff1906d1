// Compiles the whole library in one translation unit (the freestanding and the separate-compilation
// checks of the single header use it).
#include <relaxvm.hpp>
