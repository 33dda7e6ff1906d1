// Only exec_builder may wrap what finish() made: an executable cannot be made from an unverified
// build_output.
// expect-error: (private|inaccessible)
// expect-error: build_output
#include <relaxvm.hpp>
int main() {
  relaxvm::build_output out;
  relaxvm::executable exe(out);
  (void)exe;
}
