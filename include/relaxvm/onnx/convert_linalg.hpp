// SPDX-License-Identifier: Apache-2.0
// Matrix products: MatMul (NumPy's rules: batch dims broadcast, 1-d operands) and Gemm (transposes,
// alpha, beta, C broadcast to (M, N)); calls of the portable kernels (relaxvm/kernels/linalg.hpp).
#ifndef RELAXVM_ONNX_CONVERT_LINALG_HPP
#define RELAXVM_ONNX_CONVERT_LINALG_HPP

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "convert_base.hpp"

namespace relaxvm::RELAXVM_ABI::onnx::detail {

inline status convert_matmul(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* a, c.input(0));
  RELAXVM_TRY_ASSIGN(entry* b, c.input(1));
  RELAXVM_TRY(require_type(c, *a, 0, kernels::detail::floats | kernels::detail::ints));
  if (a->dt != b->dt) return c.fail("inputs 0 and 1 have different dtypes (", a->dt, " and ", b->dt, ")");
  if (a->dims.empty() || b->dims.empty()) return c.fail("MatMul's inputs must have at least one dimension");
  // NumPy's matmul: a 1-d operand is a row (a) or column (b) vector whose dim is dropped; the
  // batch dims broadcast.
  std::vector<ir::sym> ad = a->dims, bd = b->dims;
  const bool a_vec = ad.size() == 1, b_vec = bd.size() == 1;
  if (a_vec) ad.insert(ad.begin(), ir::sym(1));
  if (b_vec) bd.push_back(ir::sym(1));
  const ir::sym k_a = ad[ad.size() - 1], k_b = bd[bd.size() - 2];
  if (k_a.is_const() && k_b.is_const() && k_a.ref().value != k_b.ref().value)
    return c.fail("the inner dimensions differ (", k_a.ref().value, " and ", k_b.ref().value, ")");
  std::vector<ir::sym> batch_a(ad.begin(), ad.end() - 2), batch_b(bd.begin(), bd.end() - 2);
  RELAXVM_TRY_ASSIGN(std::vector<ir::sym> dims, broadcast(c, batch_a, batch_b));
  if (!a_vec) dims.push_back(ad[ad.size() - 2]);
  if (!b_vec) dims.push_back(bd[bd.size() - 1]);
  RELAXVM_TRY_ASSIGN(ir::var av, c.st.operand_of(*a));
  RELAXVM_TRY_ASSIGN(ir::var bv, c.st.operand_of(*b));
  const ir::operand args[] = {av, bv};
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.MatMul", args, std::move(dims), a->dt));
  return c.output(0, std::move(y));
}

// Gemm: Y = alpha * A' B' + beta * C, C (optional from opset 11) broadcast to (M, N).
inline status convert_gemm(node_ctx& c) {
  RELAXVM_TRY_ASSIGN(entry* a, c.input(0));
  RELAXVM_TRY_ASSIGN(entry* b, c.input(1));
  RELAXVM_TRY(require_type(c, *a, 0, kernels::detail::floats | kernels::detail::ints));
  if (a->dt != b->dt) return c.fail("inputs 0 and 1 have different dtypes (", a->dt, " and ", b->dt, ")");
  if (a->dims.size() != 2 || b->dims.size() != 2) return c.fail("Gemm's A and B must be 2-d");
  const std::int64_t trans_a = c.attr_int("transA", 0), trans_b = c.attr_int("transB", 0);
  const ir::sym m = a->dims[trans_a ? 1 : 0], k = a->dims[trans_a ? 0 : 1];
  const ir::sym kb = b->dims[trans_b ? 1 : 0], n = b->dims[trans_b ? 0 : 1];
  if (k.is_const() && kb.is_const() && k.ref().value != kb.ref().value)
    return c.fail("the inner dimensions differ (", k.ref().value, " and ", kb.ref().value, ")");
  RELAXVM_TRY_ASSIGN(ir::var av, c.st.operand_of(*a));
  RELAXVM_TRY_ASSIGN(ir::var bv, c.st.operand_of(*b));
  std::vector<ir::operand> args{av, bv};
  if (c.has_input(2)) {
    RELAXVM_TRY_ASSIGN(entry* bias, c.input(2));
    if (bias->dt != a->dt) return c.fail("C is ", bias->dt, " but A is ", a->dt);
    if (bias->dims.size() > 2) return c.fail("C must have at most 2 dims");
    RELAXVM_TRY_ASSIGN(std::vector<ir::sym> bc, broadcast(c, bias->dims, {m, n}));
    if (bc.size() != 2 || !same_dim(bc[0], m) || !same_dim(bc[1], n)) return c.fail("C does not broadcast to (M, N)");
    RELAXVM_TRY_ASSIGN(ir::var cv, c.st.operand_of(*bias));
    args.push_back(cv);
  } else {
    args.push_back(absent());
  }
  args.push_back(ir::prim_float(c.attr_float("alpha", 1.0f)));
  args.push_back(ir::prim_float(c.attr_float("beta", 1.0f)));
  args.push_back(ir::prim(trans_a != 0 ? 1 : 0));
  args.push_back(ir::prim(trans_b != 0 ? 1 : 0));
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.Gemm", args, {m, n}, a->dt));
  return c.output(0, std::move(y));
}

// Einsum over one or two operands: the equation's letters become label numbers; an ellipsis
// stands for the leading dims an operand has beyond its letters (the same labels in each
// operand, right-aligned, which must then have equal dims: no broadcasting). Without "->" the
// output is the ellipsis then the letters used once, in alphabetical order.
inline status convert_einsum(node_ctx& c) {
  const attribute_info* eq = c.node.attribute("equation");
  if (eq == nullptr) return c.fail("Einsum needs its equation");
  if (c.inputs() < 1 || c.inputs() > 2) return c.unsupported("Einsum of ", c.inputs(), " operands (one or two have a kernel)");
  std::string text;
  for (char ch : eq->s)
    if (ch != ' ') text += ch;
  const std::size_t arrow = text.find("->");
  const std::string lhs = text.substr(0, arrow);
  std::vector<std::string> terms;
  for (std::size_t from = 0;;) {
    const std::size_t comma = lhs.find(',', from);
    terms.push_back(lhs.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  if (terms.size() != c.inputs()) return c.fail("the equation has ", terms.size(), " operands but the node ", c.inputs());
  std::vector<entry*> ins;
  for (std::size_t i = 0; i < c.inputs(); ++i) {
    RELAXVM_TRY_ASSIGN(entry* e, c.input(i));
    ins.push_back(e);
  }
  RELAXVM_TRY(require_type(c, *ins[0], 0, kernels::detail::floats | kernels::detail::ints));
  if (ins.size() == 2 && ins[1]->dt != ins[0]->dt) return c.fail("inputs 0 and 1 have different dtypes");
  // Labels: the ellipsis dims first (numbered from 0), then letters in order of appearance.
  std::size_t ell = 0;  // dims the ellipsis stands for (the most over the operands)
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const std::size_t dot = terms[i].find("...");
    std::size_t letters = terms[i].size() - (dot == std::string::npos ? 0 : 3);
    if (letters > ins[i]->dims.size() || (dot == std::string::npos && letters != ins[i]->dims.size()))
      return c.fail("operand ", i, " has ", ins[i]->dims.size(), " dims but its term '", terms[i], "' does not match");
    if (dot != std::string::npos) ell = std::max(ell, ins[i]->dims.size() - letters);
  }
  std::vector<char> letters;
  auto label_of = [&](char ch) -> std::int64_t {
    for (std::size_t k = 0; k < letters.size(); ++k)
      if (letters[k] == ch) return static_cast<std::int64_t>(ell + k);
    letters.push_back(ch);
    return static_cast<std::int64_t>(ell + letters.size() - 1);
  };
  std::vector<std::vector<ir::sym>> labs(terms.size());
  std::vector<std::pair<std::int64_t, ir::sym>> dims_of;  // label, dim
  std::vector<int> uses;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const std::string& t = terms[i];
    const std::size_t dot = t.find("...");
    const std::size_t own_ell = dot == std::string::npos ? 0 : ins[i]->dims.size() - (t.size() - 3);
    std::size_t dim = 0;
    for (std::size_t p = 0; p < t.size();) {
      std::vector<std::int64_t> ls;
      if (p == dot) {
        for (std::size_t e = 0; e < own_ell; ++e) ls.push_back(static_cast<std::int64_t>(ell - own_ell + e));
        p += 3;
      } else {
        if (!std::isalpha(static_cast<unsigned char>(t[p]))) return c.fail("the equation has '", t[p], "' in an operand's term");
        ls.push_back(label_of(t[p]));
        ++p;
      }
      for (std::int64_t l : ls) {
        const ir::sym& d = ins[i]->dims[dim++];
        labs[i].push_back(ir::sym(l));
        bool seen = false;
        for (auto& [ol, od] : dims_of)
          if (ol == l) {
            seen = true;
            if (!same_dim(od, d)) {
              if (od.is_const() && d.is_const()) return c.fail("label ", l, " has dims ", od.ref().value, " and ", d.ref().value);
              return c.unsupported("Einsum with dims that must match but are not known equal at import");
            }
          }
        if (!seen) dims_of.emplace_back(l, d);
        if (uses.size() <= static_cast<std::size_t>(l)) uses.resize(static_cast<std::size_t>(l) + 1, 0);
        ++uses[static_cast<std::size_t>(l)];
      }
    }
  }
  if (ell + letters.size() > static_cast<std::size_t>(kernels::max_rank)) return c.unsupported("Einsum with more than ", kernels::max_rank, " labels");
  std::vector<std::int64_t> out_l;
  if (arrow != std::string::npos) {
    const std::string rhs = text.substr(arrow + 2);
    for (std::size_t p = 0; p < rhs.size();) {
      if (rhs.compare(p, 3, "...") == 0) {
        for (std::size_t e = 0; e < ell; ++e) out_l.push_back(static_cast<std::int64_t>(e));
        p += 3;
        continue;
      }
      const auto it = std::find(letters.begin(), letters.end(), rhs[p]);
      if (it == letters.end()) return c.fail("the output's '", rhs[p], "' is in no operand");
      out_l.push_back(static_cast<std::int64_t>(ell) + (it - letters.begin()));
      ++p;
    }
  } else {
    for (std::size_t e = 0; e < ell; ++e) out_l.push_back(static_cast<std::int64_t>(e));
    std::vector<char> once;
    for (std::size_t k = 0; k < letters.size(); ++k)
      if (uses[ell + k] == 1) once.push_back(letters[k]);
    std::sort(once.begin(), once.end());
    for (char ch : once) out_l.push_back(label_of(ch));
  }
  std::vector<ir::sym> out_dims, out_syms;
  for (std::int64_t l : out_l) {
    for (auto& [ol, od] : dims_of)
      if (ol == l) out_dims.push_back(od);
    out_syms.push_back(ir::sym(l));
  }
  std::vector<ir::operand> args;
  for (entry* e : ins) {
    RELAXVM_TRY_ASSIGN(ir::var v, c.st.operand_of(*e));
    args.push_back(v);
  }
  if (ins.size() == 1) args.push_back(absent());
  args.push_back(ir::shape_arg(std::span<const ir::sym>(labs[0])));
  args.push_back(ir::shape_arg(std::span<const ir::sym>(ins.size() == 2 ? labs[1] : std::vector<ir::sym>{})));
  args.push_back(ir::shape_arg(std::span<const ir::sym>(out_syms)));
  RELAXVM_TRY_ASSIGN(entry y, c.st.call("onnx.Einsum", args, std::move(out_dims), ins[0]->dt));
  return c.output(0, std::move(y));
}

inline constexpr op_converter linalg_converters[] = {
    {"MatMul", &convert_matmul}, {"Gemm", &convert_gemm}, {"Einsum", &convert_einsum},
};

}  // namespace relaxvm::onnx::detail

#endif  // RELAXVM_ONNX_CONVERT_LINALG_HPP
