// Compiles the whole library in one translation unit (the freestanding checks use it).
#include <relaxvm.hpp>
