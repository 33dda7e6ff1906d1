// expect-error: relaxvm_no_such_kernel
// expect-error: NoSuchOp
// A firmware program's table names its kernels (kernels/table.hpp): a name no portable kernel
// has does not compile.
#include <relaxvm/kernels/table.hpp>
namespace rv = relaxvm;
constexpr auto table = rv::make_table(rv::kernels::entry<"onnx.Conv">(), rv::kernels::entry<"onnx.NoSuchOp">());
