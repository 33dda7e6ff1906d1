// expect-error: relaxvm_program_failed_to_build
// expect-error: ir: function .main., binding 1 \(lv\): symbolic variable .k. in the annotation of .lv. is used before it is defined
// An IR program whose kernel output uses a symbolic variable no parameter or match_cast defines:
// ir::build_static stops the compiler with the checker's message.
#include <relaxvm/lower.hpp>
namespace ir = relaxvm::ir;
static constexpr auto prog = ir::build_static([](ir::module_builder& m) {
  const ir::sym n = m.sym("n"), k = m.sym("k");
  auto f = m.function("main", {{"x", ir::tensor_info({n, 4}, relaxvm::dtype::float32())}});
  f.ret(f.call_dps("ops.relu_out", {f.param(0)}, ir::tensor_info({n, k}, relaxvm::dtype::float32())));
});
int main() { return static_cast<int>(prog.sizes.funcs); }
