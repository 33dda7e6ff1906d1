// SPDX-License-Identifier: Apache-2.0
// Struct info: what the IR knows about a value (the reference's StructInfo). A value type with
// vectors, so it works inside constant evaluation:
//   object                       anything
//   prim(dtype, value?)          an int64 / bool / float; value: its symbolic value
//   shape(ndim | -1, values?)    a shape
//   tensor(dtype | void, ndim | -1, shape?)
//   tuple(fields...)             the empty tuple is "void" (a call without a result)
//   func                         a closure or function
#ifndef RELAXVM_LOWER_STRUCT_INFO_HPP
#define RELAXVM_LOWER_STRUCT_INFO_HPP

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/dtype.hpp"
#include "../base/text_builder.hpp"
#include "sym.hpp"

namespace relaxvm::RELAXVM_ABI::ir {

enum class info_kind : std::uint8_t { object, prim, shape, tensor, tuple, func };

struct struct_info {
  info_kind kind = info_kind::object;
  relaxvm::dtype dt = relaxvm::dtype::void_();  ///< prim and tensor (void: any dtype)
  std::int32_t ndim = -1;                       ///< shape and tensor (-1: unknown)
  bool known = false;         ///< shape: values known; tensor: shape known; prim: value known
  std::vector<sym_ref> dims;  ///< the values / the shape / the prim value (one element)
  std::vector<struct_info> fields;  ///< tuple
  bool invalid = false;  ///< built from an invalid expression (sym::is_invalid), or from two arenas
  const sym_arena* arena = nullptr;  ///< the arena its expressions come from (null: constants only)

  constexpr bool is_void() const { return kind == info_kind::tuple && fields.empty(); }
  constexpr bool is_tensor() const { return kind == info_kind::tensor; }
};

namespace detail {
// Records where `e`'s nodes live; expressions of two module builders make `s` invalid.
constexpr void note_arena(struct_info& s, const sym_arena* a) {
  if (!a) return;
  if (s.arena && s.arena != a) s.invalid = true;
  s.arena = a;
}
constexpr void take_dims(struct_info& s, std::initializer_list<sym> dims) {
  for (const sym& d : dims) {
    if (d.is_invalid()) s.invalid = true;
    note_arena(s, d.arena());
    s.dims.push_back(d.ref());
  }
  s.ndim = static_cast<std::int32_t>(dims.size());
  s.known = true;
}
}  // namespace detail

constexpr struct_info object_info() { return {}; }
constexpr struct_info func_info() {
  struct_info s;
  s.kind = info_kind::func;
  return s;
}
/// A tensor of known shape.
constexpr struct_info tensor_info(std::initializer_list<sym> shape, relaxvm::dtype t) {
  struct_info s;
  s.kind = info_kind::tensor;
  s.dt = t;
  detail::take_dims(s, shape);
  return s;
}
/// A tensor of known shape (from references; the lowering passes use this form).
constexpr struct_info tensor_info(std::vector<sym_ref> shape, relaxvm::dtype t) {
  struct_info s;
  s.kind = info_kind::tensor;
  s.dt = t;
  s.ndim = static_cast<std::int32_t>(shape.size());
  s.known = true;
  s.dims = static_cast<std::vector<sym_ref>&&>(shape);
  return s;
}
/// A tensor whose dtype (void: any) and number of dimensions (-1: any) are known, not its shape.
constexpr struct_info tensor_info(relaxvm::dtype t = relaxvm::dtype::void_(), std::int32_t ndim = -1) {
  struct_info s;
  s.kind = info_kind::tensor;
  s.dt = t;
  s.ndim = ndim < -1 ? -1 : ndim;
  return s;
}
constexpr struct_info shape_info(std::initializer_list<sym> values) {
  struct_info s;
  s.kind = info_kind::shape;
  detail::take_dims(s, values);
  return s;
}
constexpr struct_info shape_info(std::int32_t ndim = -1) {
  struct_info s;
  s.kind = info_kind::shape;
  s.ndim = ndim < -1 ? -1 : ndim;
  return s;
}
constexpr struct_info prim_info(relaxvm::dtype t, const sym& value) {
  struct_info s;
  s.kind = info_kind::prim;
  s.dt = t;
  s.known = true;
  s.invalid = value.is_invalid();
  detail::note_arena(s, value.arena());
  s.dims.push_back(value.ref());
  return s;
}
constexpr struct_info prim_info(relaxvm::dtype t = relaxvm::dtype::int64()) {
  struct_info s;
  s.kind = info_kind::prim;
  s.dt = t;
  return s;
}
constexpr struct_info tuple_info(std::initializer_list<struct_info> fields) {
  struct_info s;
  s.kind = info_kind::tuple;
  s.ndim = static_cast<std::int32_t>(fields.size());
  for (const struct_info& f : fields) {
    s.invalid = s.invalid || f.invalid;
    detail::note_arena(s, f.arena);
    s.fields.push_back(f);
  }
  return s;
}
constexpr struct_info tuple_info(std::vector<struct_info> fields) {
  struct_info s;
  s.kind = info_kind::tuple;
  s.ndim = static_cast<std::int32_t>(fields.size());
  s.fields = static_cast<std::vector<struct_info>&&>(fields);
  return s;
}
/// What a call without a result gives: the empty tuple.
constexpr struct_info void_info() { return tuple_info(std::vector<struct_info>{}); }

/// Structural equality (dimensions compared as expression trees).
constexpr bool same_info(const sym_arena& ar, const struct_info& a, const struct_info& b) {
  if (a.kind != b.kind || a.dt != b.dt || a.ndim != b.ndim || a.known != b.known) return false;
  if (a.dims.size() != b.dims.size() || a.fields.size() != b.fields.size()) return false;
  for (std::size_t i = 0; i < a.dims.size(); ++i)
    if (!ar.equal(a.dims[i], b.dims[i])) return false;
  for (std::size_t i = 0; i < a.fields.size(); ++i)
    if (!same_info(ar, a.fields[i], b.fields[i])) return false;
  return true;
}

/// What two branches of an if have in common (the reference's StructInfoLCA, simplified): the
/// same info, or the same kind with what agrees, or object.
constexpr struct_info common_info(const sym_arena& ar, const struct_info& a, const struct_info& b) {
  if (same_info(ar, a, b)) return a;
  if (a.kind != b.kind) return object_info();
  struct_info s;
  s.kind = a.kind;
  switch (a.kind) {
    case info_kind::tensor:
    case info_kind::shape:
    case info_kind::prim:
      s.dt = a.dt == b.dt ? a.dt : relaxvm::dtype::void_();
      if (a.kind == info_kind::prim && s.dt.is_void()) return object_info();
      s.ndim = a.ndim == b.ndim ? a.ndim : -1;
      return s;
    case info_kind::tuple:
      if (a.fields.size() != b.fields.size()) return object_info();
      s.ndim = a.ndim;
      for (std::size_t i = 0; i < a.fields.size(); ++i) s.fields.push_back(common_info(ar, a.fields[i], b.fields[i]));
      return s;
    default: return s;
  }
}

/// Writes `s` as TVMScript does: R.Tensor((n, 16), dtype="float32"), R.Tensor(dtype="float32",
/// ndim=2), R.Shape([n, 2]), R.Shape(ndim=2), R.Prim("int64"), R.Prim(value=n), R.Tuple(...),
/// R.Object, R.Callable.
constexpr void print_info(relaxvm::detail::text& out, const sym_arena& ar, const struct_info& s) {
  const auto dims = [&](char open, char close) {
    out << open;
    for (std::size_t i = 0; i < s.dims.size(); ++i) {
      if (i) out << ", ";
      ar.print(out, s.dims[i]);
    }
    if (open == '(' && s.dims.size() == 1) out << ',';
    out << close;
  };
  switch (s.kind) {
    case info_kind::object: out << "R.Object"; return;
    case info_kind::func: out << "R.Callable"; return;
    case info_kind::prim:
      if (s.known) {
        out << "R.Prim(value=";
        ar.print(out, s.dims[0]);
        out << ')';
      } else {
        out << "R.Prim(\"" << s.dt << "\")";
      }
      return;
    case info_kind::shape:
      if (s.known) {
        out << "R.Shape(";
        dims('[', ']');
        out << ')';
      } else {
        out << "R.Shape(ndim=" << s.ndim << ')';  // -1 too, as the reference prints it
      }
      return;
    case info_kind::tensor: {
      if (!s.known && s.dt.is_void() && s.ndim < 0) {
        out << "R.Tensor";
        return;
      }
      out << "R.Tensor(";
      bool first = true;
      if (s.known) {
        dims('(', ')');
        first = false;
      }
      if (!s.dt.is_void()) {
        out << (first ? "" : ", ") << "dtype=\"" << s.dt << '"';
        first = false;
      }
      if (!s.known && s.ndim >= 0) out << (first ? "" : ", ") << "ndim=" << s.ndim;
      out << ')';
      return;
    }
    case info_kind::tuple:
      out << "R.Tuple";
      if (s.fields.empty()) return;
      out << '(';
      for (std::size_t i = 0; i < s.fields.size(); ++i) {
        if (i) out << ", ";
        print_info(out, ar, s.fields[i]);
      }
      out << ')';
      return;
  }
}

}  // namespace relaxvm::ir

#endif  // RELAXVM_LOWER_STRUCT_INFO_HPP
