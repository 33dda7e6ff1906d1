// SPDX-License-Identifier: Apache-2.0
// An ONNX graph imported into relaxvm's IR: one function "main" whose parameters are the graph's
// inputs that are not initializers, its named dimensions (dim_param) symbolic variables (one name,
// one variable), each node a destination-passing call of a kernel with its output's shape worked
// out here (the importer's own symbolic shape inference), views for the ops that only reshape, and
// initializers as constants. Ops that are not supported are all listed at once, with their nodes.
// The converters live in onnx/convert.hpp; this file holds what they share.
#ifndef RELAXVM_ONNX_IMPORT_HPP
#define RELAXVM_ONNX_IMPORT_HPP

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/error.hpp"
#include "../lower/builder.hpp"
#include "../runtime/tensor.hpp"
#include "model.hpp"
#include "options.hpp"
#include "tensor.hpp"

namespace relaxvm::RELAXVM_ABI::onnx {

namespace detail {

/// What the importer knows of an ONNX value: a tensor variable of the function (with its dtype
/// and symbolic shape); a constant (an initializer or a Constant node's tensor, kept in the file
/// until a kernel needs it as an IR constant or a converter reads its values); or symbolic
/// values: a 0-d or 1-d integer tensor whose elements are symbolic expressions (what Shape, and
/// Gather, Concat, Unsqueeze, Slice and arithmetic over it, compute), which the planner sees as
/// shapes instead of data.
struct entry {
  enum class kind : std::uint8_t { tensor, constant, symbolic };
  kind what = kind::tensor;
  ir::var v;                    // the tensor variable (a constant's once it is emitted)
  relaxvm::dtype dt;            // element type
  std::vector<ir::sym> dims;    // shape
  const tensor_info* data = nullptr;  // a constant's data, in the file
  tensor host;                  // or made by the importer (folded, or from an attribute)
  bool emitted = false;         // a constant made into an IR constant
  std::vector<ir::sym> values;  // symbolic: the elements (dims is {n}, or {} for one scalar)
  std::string_view name;        // what it is bound to (set by bind)

  /// A constant made by the importer.
  static entry of(tensor t) {
    entry e;
    e.what = kind::constant;
    e.dt = t.dtype();
    for (std::int64_t d : t.shape().dims()) e.dims.push_back(ir::sym(d));
    e.host = std::move(t);
    return e;
  }
  /// Symbolic values of `dt` (int64 or int32); a scalar when `scalar`.
  static entry of_values(std::vector<ir::sym> v, relaxvm::dtype dt = relaxvm::dtype::int64(), bool scalar = false) {
    entry e;
    e.what = kind::symbolic;
    e.dt = dt;
    if (!scalar) e.dims.push_back(ir::sym(static_cast<std::int64_t>(v.size())));
    e.values = std::move(v);
    return e;
  }
  /// The constant's data as a host tensor (symbolic values: when every one is a constant).
  result<tensor> value() const {
    if (host.defined()) return host;
    if (what == kind::symbolic) {
      std::vector<std::int64_t> dims;
      if (!this->dims.empty()) dims.push_back(static_cast<std::int64_t>(values.size()));
      RELAXVM_TRY_ASSIGN(relaxvm::shape s, relaxvm::shape::try_make(dims));
      RELAXVM_TRY_ASSIGN(tensor t, tensor::try_empty(s, dt));
      for (std::size_t i = 0; i < values.size(); ++i) {
        if (!values[i].is_const()) return value_error("onnx: a value computed from symbolic dimensions is not a constant");
        if (dt == relaxvm::dtype::int32()) t.data<std::int32_t>()[i] = static_cast<std::int32_t>(values[i].ref().value);
        else t.data<std::int64_t>()[i] = values[i].ref().value;
      }
      return t;
    }
    return make_tensor(*data);
  }
  /// Whether the value is known at import: a constant, or symbolic values that are all constants.
  bool is_constant() const {
    if (what == kind::constant) return true;
    if (what != kind::symbolic) return false;
    for (const ir::sym& v : values)
      if (!v.is_const()) return false;
    return true;
  }
};

inline ir::struct_info tensor_struct(const std::vector<ir::sym>& dims, relaxvm::dtype dt) {
  ir::struct_info s = ir::tensor_info(dt, static_cast<std::int32_t>(dims.size()));
  s.known = true;
  for (const ir::sym& d : dims) {
    if (d.is_invalid()) s.invalid = true;
    ir::detail::note_arena(s, d.arena());
    s.dims.push_back(d.ref());
  }
  return s;
}

/// Shared state of one import: the model, the builder, and the values by name.
class import_state {
 public:
  import_state(const model_info& m, const options& opt) : model_(m), opt_(opt) {}

  const model_info& model() const { return model_; }
  const options& opts() const { return opt_; }
  std::int64_t opset() const { return opset_; }
  ir::module_builder& module() { return mb_; }
  /// The block being built: main's body, or an If branch's.
  ir::block_builder& fn() { return *fn_; }

  /// The value named `name`, or null (an omitted optional input is "").
  entry* find(std::string_view name) {
    if (name.empty()) return nullptr;
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }
  void bind(std::string_view name, entry e) {
    e.name = name;
    recent_.push_back(name);
    if (scopes_ > 0) {
      auto it = values_.find(name);
      undo u;
      u.name = name;
      u.existed = it != values_.end();
      if (u.existed) u.old = std::move(it->second);
      undo_.push_back(std::move(u));
    }
    values_.insert_or_assign(name, std::move(e));
  }

  /// A scope of names (an If branch's graph): what is bound in it, and every constant first
  /// emitted in it, is forgotten when it closes, so a branch's names stay local to it and a value
  /// emitted in a branch is emitted again where it is used after the If (the branch's variable
  /// is not visible there).
  std::size_t open_scope() {
    ++scopes_;
    return undo_.size();
  }
  void close_scope(std::size_t mark) {
    while (undo_.size() > mark) {
      undo& u = undo_.back();
      if (u.emitted != nullptr) {
        u.emitted->emitted = false;
        u.emitted->v = ir::var();
      } else if (u.existed) {
        values_.insert_or_assign(u.name, std::move(u.old));
      } else {
        values_.erase(u.name);
      }
      undo_.pop_back();
    }
    --scopes_;
  }
  /// The names bound or emitted since the last call (an If ends the dataflow block they were
  /// made in: what is read after it must be made visible).
  std::vector<std::string_view> take_recent() { return std::exchange(recent_, {}); }

  /// The operand a kernel takes for `e`: its variable (a constant becomes an IR constant the
  /// first time a kernel takes it).
  result<ir::var> operand_of(entry& e) {
    if (e.what == entry::kind::tensor || e.emitted) return e.v;
    // Only the map's own entries are remembered: a converter's local copy of an entry (a Slice's
    // starts read at run time, ConstantOfShape's shape) dies with its call, and undoing it when
    // the branch closes would write through a dangling pointer.
    const auto it = e.name.empty() ? values_.end() : values_.find(e.name);
    if (it != values_.end() && &it->second == &e) {
      recent_.push_back(e.name);
      if (scopes_ > 0) {
        undo u;
        u.emitted = &e;  // the map's nodes do not move, and are undone in reverse order
        undo_.push_back(std::move(u));
      }
    }
    if (e.is_constant() && e.data != nullptr && !e.host.defined()) {
      // A weight goes from the file straight into the IR constant's bytes (no tensor between),
      // which the executable's pool then takes over: held once beside the file, not three times.
      RELAXVM_TRY_ASSIGN(const std::int64_t nbytes, data_nbytes(*e.data));
      std::vector<std::uint8_t> bytes(static_cast<std::size_t>(nbytes));
      RELAXVM_TRY(copy_data(*e.data, std::as_writable_bytes(std::span<std::uint8_t>(bytes))));
      e.v = fn().constant(e.dt, e.data->dims, std::move(bytes));
      if (opt_.weight_copied != nullptr) opt_.weight_copied(e.data->message, opt_.weight_copied_context);
    } else if (e.is_constant()) {
      RELAXVM_TRY_ASSIGN(tensor t, e.value());
      e.v = fn().constant(t);
    } else {
      // Symbolic values a kernel takes as data: the shape they are, made into a tensor at run time.
      if (e.dt != relaxvm::dtype::int64()) return unsupported_error("onnx: symbolic ", e.dt, " values used as data are not supported yet");
      const std::vector<ir::sym> n{ir::sym(static_cast<std::int64_t>(e.values.size()))};
      e.v = fn().call_packed("vm.builtin.shape_to_tensor", {ir::shape_arg(std::span<const ir::sym>(e.values))},
                             tensor_struct(n, relaxvm::dtype::int64()));
      if (e.v.valid() && e.dims.empty()) e.v = fn().reshape(e.v, std::span<const ir::sym>());  // a scalar: 0-d
    }
    if (!e.v.valid()) return builder_error();
    e.emitted = true;
    return e.v;
  }

  /// The elements of a 0-d or 1-d integer value known at import as symbolic expressions: symbolic
  /// values, or an integer constant (a Reshape's shape, computed from Shape or given).
  result<std::vector<ir::sym>> sym_values(const entry& e, std::string_view op, std::string_view what) {
    if (e.what == entry::kind::symbolic) return e.values;
    RELAXVM_TRY_ASSIGN(std::vector<std::int64_t> ints, int_values(e, op, what));
    std::vector<ir::sym> out;
    for (std::int64_t v : ints) out.push_back(ir::sym(v));
    return out;
  }

  /// The integer values of a constant 1-D (or scalar) tensor: a Reshape's shape, Unsqueeze's
  /// axes, Slice's starts. An error when the value is computed at run time.
  result<std::vector<std::int64_t>> int_values(const entry& e, std::string_view op, std::string_view what) {
    if (!e.is_constant())
      return unsupported_error("onnx: ", op, ": ", what, " computed at run time is not supported yet (it must be an initializer or a Constant)");
    RELAXVM_TRY_ASSIGN(tensor t, e.value());
    std::vector<std::int64_t> out(static_cast<std::size_t>(t.numel()));
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (t.dtype() == relaxvm::dtype::int64()) out[i] = t.data<std::int64_t>()[i];
      else if (t.dtype() == relaxvm::dtype::int32()) out[i] = t.data<std::int32_t>()[i];
      else return type_error("onnx: ", op, ": ", what, " must be int64 or int32, but is ", t.dtype());
    }
    return out;
  }

  /// A new tensor value made by a destination-passing kernel.
  result<entry> call(std::string_view kernel, std::span<const ir::operand> args, std::vector<ir::sym> dims, relaxvm::dtype dt) {
    entry out;
    out.dt = dt;
    out.dims = std::move(dims);
    out.v = fn().call_dps(kernel, args, tensor_struct(out.dims, dt));
    if (!out.v.valid()) return builder_error();
    return out;
  }
  /// Dims known only when the program runs (onnx/runtime_shape.hpp, a Resize's sizes given as
  /// data, NonZero's count): `shape` is a shape value of `rank` dims computed then; a match_cast
  /// binds each dim to a fresh symbolic variable, which later shapes use like any other (what
  /// depends on them is allocated when it runs). The one place such dims are made.
  result<std::vector<ir::sym>> run_time_dims(ir::var shape, std::size_t rank) {
    if (!shape.valid()) return builder_error();
    ir::struct_info info = ir::shape_info(static_cast<std::int32_t>(rank));
    info.known = true;
    std::vector<ir::sym> dims;
    for (std::size_t k = 0; k < rank; ++k) {
      dims.push_back(fresh_sym());
      ir::detail::note_arena(info, dims.back().arena());
      info.dims.push_back(dims.back().ref());
    }
    if (!fn().match_cast(shape, info).valid()) return builder_error();
    return dims;
  }

  /// A view of `x` with other dims (no copy).
  result<entry> view(entry& x, std::vector<ir::sym> dims) {
    RELAXVM_TRY_ASSIGN(ir::var xv, operand_of(x));
    entry out;
    out.dt = x.dt;
    out.dims = std::move(dims);
    out.v = fn().reshape(xv, std::span<const ir::sym>(out.dims));
    if (!out.v.valid()) return builder_error();
    return out;
  }

  error builder_error() {
    ir::module_output o = mb_.finish();
    return value_error("onnx: building the program failed: ", o.message.view());
  }

  /// A new symbolic variable for a dim known only at run time (onnx/runtime_shape.hpp).
  ir::sym fresh_sym() {
    relaxvm::detail::text n;
    n << "rt" << fresh_++;
    return mb_.sym(n.view());
  }

  // Set by import(): the graph's opset for the default domain, and the function under construction.
  std::int64_t opset_ = 0;
  ir::block_builder* fn_ = nullptr;
  // Whether shapes may be computed at run time (not in a constant fold, which must know them).
  bool runtime_shapes = true;

 private:
  const model_info& model_;
  const options& opt_;
  ir::module_builder mb_;
  std::unordered_map<std::string_view, entry> values_;
  std::int64_t fresh_ = 0;
  // What open_scope/close_scope undo: a binding (the entry it replaced, if any) or an emission.
  struct undo {
    std::string_view name;
    bool existed = false;
    entry old;
    entry* emitted = nullptr;
  };
  std::vector<undo> undo_;
  std::size_t scopes_ = 0;
  std::vector<std::string_view> recent_;
};

}  // namespace detail
}  // namespace relaxvm::onnx

#endif  // RELAXVM_ONNX_IMPORT_HPP
