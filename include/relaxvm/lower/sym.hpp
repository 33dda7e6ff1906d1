// SPDX-License-Identifier: Apache-2.0
// Symbolic int64 expressions over named variables (the reference's TIR PrimExprs, reduced to what
// shapes and conditions need). Nodes live in an arena owned by the module, and an expression is an
// index into it, or an inline constant: everything works inside constant evaluation.
//
// Arithmetic: + - * floordiv floormod min max. Conditions (values 0 or 1): eq ne < <= > >= and or not.
// Building an expression folds constants and drops neutral operands (x + 0, x * 1, x * 0 -> 0,
// floordiv(x, 1), floormod(x, 1) -> 0, min/max of one expression). Folding never overflows: when a
// constant result does not fit in int64 the expression stays a node, and computing it at run time
// is an error there.
#ifndef RELAXVM_LOWER_SYM_HPP
#define RELAXVM_LOWER_SYM_HPP

#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/checked_math.hpp"
#include "../base/text_builder.hpp"

namespace relaxvm::RELAXVM_ABI::ir {

/// A name in the IR (a function, a variable, a kernel): characters in a vector, so it is usable
/// during constant evaluation (std::string is not, on clang with libstdc++).
class name {
 public:
  constexpr name() = default;
  constexpr name(std::string_view s) : chars_(s.begin(), s.end()) {}  // NOLINT: names are strings
  constexpr name(const char* s) : name(std::string_view(s)) {}         // NOLINT
  constexpr std::string_view view() const { return std::string_view(chars_.data(), chars_.size()); }
  constexpr bool empty() const { return chars_.empty(); }
  friend constexpr bool operator==(const name& a, const name& b) { return a.view() == b.view(); }
  friend constexpr bool operator==(const name& a, std::string_view b) { return a.view() == b; }
  friend constexpr bool operator==(const name& a, const char* b) { return a.view() == std::string_view(b); }

 private:
  std::vector<char> chars_;
};

enum class sym_op : std::uint8_t {
  var,  // value = the variable's index in the arena
  add, sub, mul, floordiv, floormod, min, max,
  eq, ne, lt, le, gt, ge, and_, or_, not_,  // not_ has one operand
};

constexpr bool is_condition(sym_op op) { return op >= sym_op::eq; }

/// The largest expression a user may build: evaluation, printing, comparison and shape lowering
/// walk it as a tree (shared subexpressions counted each time), so its depth and its size in tree
/// nodes are bounded; a larger one is invalid, and the builder reports it.
inline constexpr std::int32_t max_sym_depth = 256;
inline constexpr std::int32_t max_sym_nodes = 4096;
/// The most work one sym_arena::can_prove_equal does, in steps (a node expanded, a term made or
/// compared, an atom compared): expanding a product of sums can double the terms per factor, so
/// past this the answer is "not proved" (lowering then keeps a copy or a storage of its own), and
/// a proof's time does not depend on the expression's shape or on the rest of the module.
inline constexpr std::int64_t max_proof_steps = std::int64_t{1} << 16;

struct sym_node {
  sym_op op = sym_op::var;
  std::int32_t depth = 1;
  std::int32_t size = 1;  ///< nodes of the tree, saturating at max_sym_nodes + 1
  std::int32_t a = -1, b = -1;  // operand nodes (-1: the inline constant ca / cb)
  std::int64_t ca = 0, cb = 0;  // constant operands; for var: ca is the variable's index
};

/// An expression: an inline constant (node < 0), or a node of the module's arena.
struct sym_ref {
  std::int32_t node = -1;
  std::int64_t value = 0;  // the constant when node < 0
  constexpr bool is_const() const { return node < 0; }
  static constexpr sym_ref constant(std::int64_t v) { return {-1, v}; }
};

namespace detail {
constexpr bool fold(sym_op op, std::int64_t a, std::int64_t b, std::int64_t& r) {
  switch (op) {
    case sym_op::add: return relaxvm::detail::checked_add(a, b, r);
    case sym_op::sub: return relaxvm::detail::checked_sub(a, b, r);
    case sym_op::mul: return relaxvm::detail::checked_mul(a, b, r);
    case sym_op::floordiv:
    case sym_op::floormod: {
      if (b == 0) return false;
      if (a == std::numeric_limits<std::int64_t>::min() && b == -1) {
        r = 0;
        return op == sym_op::floormod;
      }
      std::int64_t q = a / b, m = a % b;
      if (m != 0 && ((m < 0) != (b < 0))) {
        q -= 1;
        m += b;
      }
      r = op == sym_op::floordiv ? q : m;
      return true;
    }
    case sym_op::min: r = a < b ? a : b; return true;
    case sym_op::max: r = a < b ? b : a; return true;
    case sym_op::eq: r = a == b; return true;
    case sym_op::ne: r = a != b; return true;
    case sym_op::lt: r = a < b; return true;
    case sym_op::le: r = a <= b; return true;
    case sym_op::gt: r = a > b; return true;
    case sym_op::ge: r = a >= b; return true;
    case sym_op::and_: r = a != 0 && b != 0; return true;
    case sym_op::or_: r = a != 0 || b != 0; return true;
    case sym_op::not_: r = a == 0; return true;
    case sym_op::var: return false;
  }
  return false;
}

// Printing precedence, as in Python (TVMScript): larger binds tighter.
constexpr int precedence(sym_op op) {
  switch (op) {
    case sym_op::or_: return 1;
    case sym_op::and_: return 2;
    case sym_op::not_: return 3;
    case sym_op::eq: case sym_op::ne: case sym_op::lt: case sym_op::le: case sym_op::gt: case sym_op::ge: return 4;
    case sym_op::add: case sym_op::sub: return 5;
    case sym_op::mul: case sym_op::floordiv: case sym_op::floormod: return 6;
    default: return 9;  // variables, calls (min, max)
  }
}
constexpr std::string_view symbol(sym_op op) {
  switch (op) {
    case sym_op::add: return " + ";
    case sym_op::sub: return " - ";
    case sym_op::mul: return " * ";
    case sym_op::floordiv: return " // ";
    case sym_op::floormod: return " % ";
    case sym_op::eq: return " == ";
    case sym_op::ne: return " != ";
    case sym_op::lt: return " < ";
    case sym_op::le: return " <= ";
    case sym_op::gt: return " > ";
    case sym_op::ge: return " >= ";
    case sym_op::and_: return " and ";
    case sym_op::or_: return " or ";
    default: return "";
  }
}
}  // namespace detail

/// The values an expression can take: [lo, hi], where a missing end is unbounded.
struct sym_range {
  bool has_lo = false, has_hi = false;
  std::int64_t lo = 0, hi = 0;
  static constexpr sym_range exactly(std::int64_t v) { return {true, true, v, v}; }
  static constexpr sym_range between(std::int64_t l, std::int64_t h) { return {true, true, l, h}; }
  constexpr bool is_exactly(std::int64_t v) const { return has_lo && has_hi && lo == v && hi == v; }
};

namespace detail {
// Interval arithmetic for sym_arena::range: an end that overflows int64 becomes unbounded.
constexpr sym_range range_of(sym_op op, const sym_range& a, const sym_range& b) {
  using relaxvm::detail::checked_add;
  using relaxvm::detail::checked_mul;
  using relaxvm::detail::checked_sub;
  sym_range r;
  switch (op) {
    case sym_op::add:
      r.has_lo = a.has_lo && b.has_lo && checked_add(a.lo, b.lo, r.lo);
      r.has_hi = a.has_hi && b.has_hi && checked_add(a.hi, b.hi, r.hi);
      return r;
    case sym_op::sub:
      r.has_lo = a.has_lo && b.has_hi && checked_sub(a.lo, b.hi, r.lo);
      r.has_hi = a.has_hi && b.has_lo && checked_sub(a.hi, b.lo, r.hi);
      return r;
    case sym_op::mul: {
      if (a.is_exactly(0) || b.is_exactly(0)) return sym_range::exactly(0);
      if (a.has_lo && a.has_hi && b.has_lo && b.has_hi) {
        const std::int64_t xs[2] = {a.lo, a.hi}, ys[2] = {b.lo, b.hi};
        for (std::int64_t x : xs)
          for (std::int64_t y : ys) {
            std::int64_t p = 0;
            if (!checked_mul(x, y, p)) return sym_range{};
            if (!r.has_lo || p < r.lo) r.lo = p;
            if (!r.has_hi || p > r.hi) r.hi = p;
            r.has_lo = r.has_hi = true;
          }
        return r;
      }
      // One end unbounded: only the lower end of a product of non-negative ranges is known.
      if (a.has_lo && b.has_lo && a.lo >= 0 && b.lo >= 0) r.has_lo = checked_mul(a.lo, b.lo, r.lo);
      return r;
    }
    case sym_op::floordiv: {
      if (!(b.is_exactly(b.lo) && b.has_lo && b.lo > 0)) return r;
      std::int64_t q = 0;
      if (a.has_lo && fold(op, a.lo, b.lo, q)) r = sym_range{true, false, q, 0};
      if (a.has_hi && fold(op, a.hi, b.lo, q)) {
        r.has_hi = true;
        r.hi = q;
      }
      return r;
    }
    case sym_op::floormod: {
      if (!(b.is_exactly(b.lo) && b.has_lo && b.lo > 0)) return r;
      r = sym_range::between(0, b.lo - 1);
      if (a.has_lo && a.lo >= 0 && a.has_hi && a.hi < r.hi) r.hi = a.hi;
      return r;
    }
    case sym_op::min:
      r.has_lo = a.has_lo && b.has_lo;
      r.lo = a.lo < b.lo ? a.lo : b.lo;
      r.has_hi = a.has_hi || b.has_hi;
      r.hi = !a.has_hi ? b.hi : !b.has_hi ? a.hi : (a.hi < b.hi ? a.hi : b.hi);
      return r;
    case sym_op::max:
      r.has_lo = a.has_lo || b.has_lo;
      r.lo = !a.has_lo ? b.lo : !b.has_lo ? a.lo : (a.lo < b.lo ? b.lo : a.lo);
      r.has_hi = a.has_hi && b.has_hi;
      r.hi = a.hi < b.hi ? b.hi : a.hi;
      return r;
    case sym_op::var: return r;
    default: return sym_range::between(0, 1);  // conditions
  }
}
}  // namespace detail

/// The nodes and variable names of a module's symbolic expressions.
class sym_arena {
 public:
  /// A new variable; names may repeat (the checker rejects that within a module).
  constexpr sym_ref make_var(std::string_view n) {
    vars_.push_back(name(n));
    sym_node v;
    v.op = sym_op::var;
    v.ca = static_cast<std::int64_t>(vars_.size()) - 1;
    return push(v);
  }

  /// a op b, folded and simplified where that is exact.
  constexpr sym_ref make(sym_op op, sym_ref a, sym_ref b) {
    if (op == sym_op::not_) return make_not(a);
    std::int64_t r = 0;
    if (a.is_const() && b.is_const() && detail::fold(op, a.value, b.value, r)) return sym_ref::constant(r);
    const auto is = [](sym_ref x, std::int64_t v) { return x.is_const() && x.value == v; };
    switch (op) {
      case sym_op::add:
        if (is(b, 0)) return a;
        if (is(a, 0)) return b;
        break;
      case sym_op::sub:
        if (is(b, 0)) return a;
        break;
      case sym_op::mul:
        if (is(b, 1)) return a;
        if (is(a, 1)) return b;
        if (is(a, 0) || is(b, 0)) return sym_ref::constant(0);
        break;
      case sym_op::floordiv:
        if (is(b, 1)) return a;
        break;
      case sym_op::floormod:
        if (is(b, 1)) return sym_ref::constant(0);
        break;
      case sym_op::min:
      case sym_op::max:
        if (equal(a, b)) return a;
        break;
      default: break;
    }
    sym_node n;
    n.op = op;
    n.a = a.node;
    n.ca = a.value;
    n.b = b.node;
    n.cb = b.value;
    n.depth = 1 + (depth(a) > depth(b) ? depth(a) : depth(b));
    n.size = saturate(1 + size(a) + size(b));
    return push(n);
  }
  constexpr std::int32_t depth(sym_ref r) const { return r.is_const() ? 0 : node(r).depth; }
  constexpr std::int32_t size(sym_ref r) const { return r.is_const() ? 0 : node(r).size; }
  /// Whether a user may build `r` (max_sym_depth, max_sym_nodes).
  constexpr bool within_limits(sym_ref r) const { return depth(r) <= max_sym_depth && size(r) <= max_sym_nodes; }
  constexpr sym_ref make_not(sym_ref a) {
    if (a.is_const()) return sym_ref::constant(a.value == 0);
    sym_node n;
    n.op = sym_op::not_;
    n.a = a.node;
    n.depth = 1 + depth(a);
    n.size = saturate(1 + size(a));
    return push(n);
  }

  constexpr const sym_node& node(sym_ref r) const { return nodes_[static_cast<std::size_t>(r.node)]; }
  constexpr sym_ref lhs(sym_ref r) const { return operand(node(r).a, node(r).ca); }
  constexpr sym_ref rhs(sym_ref r) const { return operand(node(r).b, node(r).cb); }
  constexpr bool is_var(sym_ref r) const { return !r.is_const() && node(r).op == sym_op::var; }
  /// The variable's index (is_var(r) must hold).
  constexpr std::int64_t var_index(sym_ref r) const { return node(r).ca; }
  constexpr std::string_view var_name(std::int64_t index) const { return vars_[static_cast<std::size_t>(index)].view(); }
  constexpr std::size_t num_vars() const { return vars_.size(); }
  constexpr std::size_t num_nodes() const { return nodes_.size(); }

  /// Structural equality: the same tree (so n * m and m * n differ, as in the reference's slots).
  constexpr bool equal(sym_ref a, sym_ref b) const {
    if (a.is_const() || b.is_const()) return a.is_const() && b.is_const() && a.value == b.value;
    if (a.node == b.node) return true;
    const sym_node &x = node(a), &y = node(b);
    if (x.op != y.op) return false;
    if (x.op == sym_op::var) return x.ca == y.ca;
    if (!equal(lhs(a), lhs(b))) return false;
    return x.op == sym_op::not_ || equal(rhs(a), rhs(b));
  }

  /// Appends the variables of `e` (indices, each once, in order of first appearance).
  constexpr void free_vars(sym_ref e, std::vector<std::int64_t>& out) const {
    if (e.is_const()) return;
    const sym_node& n = node(e);
    if (n.op == sym_op::var) {
      for (std::int64_t v : out)
        if (v == n.ca) return;
      out.push_back(n.ca);
      return;
    }
    free_vars(lhs(e), out);
    if (n.op != sym_op::not_) free_vars(rhs(e), out);
  }

  /// The value of `e` with variable i set to values[i]; false when a variable has no value
  /// (known[i] false), or on overflow or division by zero.
  constexpr bool eval(sym_ref e, std::span<const std::int64_t> values, std::span<const bool> known,
                      std::int64_t& out) const {
    if (e.is_const()) {
      out = e.value;
      return true;
    }
    const sym_node& n = node(e);
    if (n.op == sym_op::var) {
      const auto i = static_cast<std::size_t>(n.ca);
      if (i >= values.size() || i >= known.size() || !known[i]) return false;
      out = values[i];
      return true;
    }
    std::int64_t a = 0, b = 0;
    if (!eval(lhs(e), values, known, a)) return false;
    if (n.op != sym_op::not_ && !eval(rhs(e), values, known, b)) return false;
    return detail::fold(n.op, a, b, out);
  }

  /// Whether a == b for every value of the variables, decided conservatively: they are the same
  /// tree, or products of the same factors (compared structurally) in any order and grouping, or
  /// both sides expand into the same sum of products of atoms (variables, and subexpressions that
  /// are not + - *, compared structurally) with integer coefficients. False means "not proved",
  /// not "different":
  /// also when the proof would take more than max_proof_steps, or more than `budget` (a caller's
  /// allowance for many proofs, which this one's steps are taken from).
  constexpr bool can_prove_equal(sym_ref a, sym_ref b, std::int64_t& budget) const {
    prover p{*this, budget < max_proof_steps ? budget : max_proof_steps, {}};
    const std::int64_t allowed = p.steps;
    poly pa, pb;
    const bool proved = p.same_tree(a, b) || p.same_factors(a, b) ||
                        (p.expand(a, pa) && p.expand(b, pb) && p.scale_add(pa, pb, -1) && pa.empty());
    budget -= allowed - (p.steps > 0 ? p.steps : 0);
    return proved;
  }
  constexpr bool can_prove_equal(sym_ref a, sym_ref b) const {
    std::int64_t budget = max_proof_steps;
    return can_prove_equal(a, b, budget);
  }

  /// The values `e` can take when variable i lies in vars[i] (variables past the end: any value).
  /// Interval arithmetic, so conservative: every value of `e` lies in the result.
  constexpr sym_range range(sym_ref e, std::span<const sym_range> vars) const {
    if (e.is_const()) return sym_range::exactly(e.value);
    const sym_node& n = node(e);
    if (n.op == sym_op::var) {
      const auto i = static_cast<std::size_t>(n.ca);
      return i < vars.size() ? vars[i] : sym_range{};
    }
    const sym_range a = range(lhs(e), vars);
    if (n.op == sym_op::not_) return sym_range::between(0, 1);
    return detail::range_of(n.op, a, range(rhs(e), vars));
  }

  /// Writes `e` in TVMScript's spelling: n * 2 + 1, n // 2, T.min(n, k), n > 4 and m < 2.
  constexpr void print(relaxvm::detail::text& out, sym_ref e) const { print(out, e, 0); }

 private:
  static constexpr std::int32_t saturate(std::int32_t s) { return s > max_sym_nodes ? max_sym_nodes + 1 : s; }
  constexpr sym_ref push(const sym_node& n) {
    nodes_.push_back(n);
    return {static_cast<std::int32_t>(nodes_.size()) - 1, 0};
  }
  static constexpr sym_ref operand(std::int32_t node, std::int64_t c) { return node < 0 ? sym_ref::constant(c) : sym_ref{node, 0}; }

  constexpr void print(relaxvm::detail::text& out, sym_ref e, int outer) const {
    if (e.is_const()) {
      if (e.value < 0 && outer > 0) out << '(' << e.value << ')';
      else out << e.value;
      return;
    }
    const sym_node& n = node(e);
    switch (n.op) {
      case sym_op::var: out << var_name(n.ca); return;
      case sym_op::min:
      case sym_op::max:
        out << (n.op == sym_op::min ? "T.min(" : "T.max(");
        print(out, lhs(e), 0);
        out << ", ";
        print(out, rhs(e), 0);
        out << ')';
        return;
      case sym_op::not_:
        if (outer > detail::precedence(n.op)) out << '(';
        out << "not ";
        print(out, lhs(e), detail::precedence(n.op));
        if (outer > detail::precedence(n.op)) out << ')';
        return;
      default: break;
    }
    const int p = detail::precedence(n.op);
    const bool paren = outer > p;
    if (paren) out << '(';
    print(out, lhs(e), p);
    out << detail::symbol(n.op);
    // Left-associative: the right operand of - // % (and of + *, to keep the tree) needs
    // parentheses at equal precedence.
    print(out, rhs(e), p + 1);
    if (paren) out << ')';
  }

  // ---- can_prove_equal: sums of products ----------------------------------------------------
  struct term {
    std::int64_t coef = 0;
    std::vector<std::int32_t> atoms;  // sorted indices into prover::atoms
  };
  using poly = std::vector<term>;

  // One proof: its atoms (subexpressions that are not + - *, one entry per structurally distinct
  // one, so a term's atoms compare as integers) and the steps it has left. Every loop charges
  // its steps before it runs, so the whole proof does at most max_proof_steps of work.
  struct prover {
    const sym_arena& ar;
    std::int64_t steps = 0;
    std::vector<sym_ref> atoms;

    constexpr bool charge(std::int64_t n) {
      steps -= n;
      return steps >= 0;
    }
    // Structural equality, charged: comparing two trees costs up to their size, and trees of
    // another operation, depth or size are never equal.
    constexpr bool same_tree(sym_ref a, sym_ref b) {
      if (a.is_const() || b.is_const()) return a.is_const() && b.is_const() && a.value == b.value;
      if (a.node == b.node) return true;
      const sym_node &x = ar.node(a), &y = ar.node(b);
      if (!charge(1) || x.op != y.op || x.depth != y.depth || x.size != y.size) return false;
      return charge(x.size) && ar.equal(a, b);
    }
    // The factors of a product (operands of nested *, constants multiplied into `coef`).
    constexpr bool factors_of(sym_ref e, std::int64_t& coef, std::vector<sym_ref>& out) {
      if (!charge(1)) return false;
      if (e.is_const()) return relaxvm::detail::checked_mul(coef, e.value, coef);
      if (ar.node(e).op != sym_op::mul) {
        out.push_back(e);
        return true;
      }
      return factors_of(ar.lhs(e), coef, out) && factors_of(ar.rhs(e), coef, out);
    }
    // Whether a and b are products of the same factors in another order or grouping (an element
    // count before and after a reshape): proved without expanding the factors' sums.
    constexpr bool same_factors(sym_ref a, sym_ref b) {
      std::int64_t ca = 1, cb = 1;
      std::vector<sym_ref> fa, fb;
      if (!factors_of(a, ca, fa) || !factors_of(b, cb, fb) || ca != cb || fa.size() != fb.size()) return false;
      for (const sym_ref& x : fa) {
        std::size_t i = 0;
        while (i < fb.size() && !same_tree(fb[i], x)) {
          if (steps < 0) return false;
          ++i;
        }
        if (i == fb.size()) return false;
        fb.erase(fb.begin() + static_cast<std::ptrdiff_t>(i));
      }
      return true;
    }
    // The atom of `r`: the first one structurally equal to it, else a new one.
    constexpr bool atom_of(sym_ref r, std::int32_t& out) {
      for (std::size_t i = 0; i < atoms.size(); ++i) {
        if (same_tree(atoms[i], r)) {
          out = static_cast<std::int32_t>(i);
          return true;
        }
        if (steps < 0) return false;
      }
      if (!charge(1)) return false;
      atoms.push_back(r);
      out = static_cast<std::int32_t>(atoms.size()) - 1;
      return true;
    }
    // p += k * q, merging equal products and dropping zero terms.
    constexpr bool scale_add(poly& p, const poly& q, std::int64_t k) {
      for (const term& t : q) {
        std::int64_t c = 0;
        if (!relaxvm::detail::checked_mul(t.coef, k, c)) return false;
        bool merged = false;
        for (std::size_t i = 0; i < p.size() && !merged; ++i) {
          if (!charge(1 + static_cast<std::int64_t>(t.atoms.size()))) return false;
          if (p[i].atoms != t.atoms) continue;
          if (!relaxvm::detail::checked_add(p[i].coef, c, p[i].coef)) return false;
          if (p[i].coef == 0) p.erase(p.begin() + static_cast<std::ptrdiff_t>(i));
          merged = true;
        }
        if (merged || c == 0) continue;
        if (!charge(1 + static_cast<std::int64_t>(t.atoms.size()))) return false;
        p.push_back(term{c, t.atoms});
      }
      return true;
    }
    constexpr bool expand(sym_ref e, poly& out) {
      out.clear();
      if (!charge(1)) return false;
      if (e.is_const()) {
        if (e.value != 0) out.push_back(term{e.value, {}});
        return true;
      }
      const sym_node& n = ar.node(e);
      if (n.op == sym_op::add || n.op == sym_op::sub) {
        poly b;
        if (!expand(ar.lhs(e), out) || !expand(ar.rhs(e), b)) return false;
        return scale_add(out, b, n.op == sym_op::add ? 1 : -1);
      }
      if (n.op == sym_op::mul) {
        poly a, b;
        if (!expand(ar.lhs(e), a) || !expand(ar.rhs(e), b)) return false;
        for (const term& x : a)
          for (const term& y : b) {
            if (!charge(1 + static_cast<std::int64_t>(x.atoms.size() + y.atoms.size()))) return false;
            term t;
            if (!relaxvm::detail::checked_mul(x.coef, y.coef, t.coef)) return false;
            // Merge the two sorted lists of atoms.
            std::size_t i = 0, j = 0;
            while (i < x.atoms.size() || j < y.atoms.size())
              t.atoms.push_back(j == y.atoms.size() || (i < x.atoms.size() && x.atoms[i] <= y.atoms[j]) ? x.atoms[i++]
                                                                                                          : y.atoms[j++]);
            if (!scale_add(out, poly{t}, 1)) return false;
          }
        return true;
      }
      std::int32_t at = 0;
      if (!atom_of(e, at)) return false;
      out.push_back(term{1, {at}});
      return true;
    }
  };

  std::vector<sym_node> nodes_;
  std::vector<name> vars_;
};

/// A symbolic expression as the user writes it: a constant, or a node of a module builder's arena.
/// Expressions of two module builders must not be mixed.
class sym {
 public:
  constexpr sym(std::int64_t v) : ref_(sym_ref::constant(v)) {}  // NOLINT: 16 is a dimension
  constexpr sym(int v) : ref_(sym_ref::constant(v)) {}           // NOLINT
  constexpr sym(sym_arena* arena, sym_ref r) : arena_(arena), ref_(r) {}

  constexpr sym_ref ref() const { return ref_; }
  constexpr sym_arena* arena() const { return arena_; }
  constexpr bool is_const() const { return ref_.is_const(); }

  friend constexpr sym apply(sym_op op, const sym& a, const sym& b) {
    if (a.is_invalid() || b.is_invalid()) return invalid();
    if (a.arena_ && b.arena_ && a.arena_ != b.arena_) return invalid();  // two module builders
    sym_arena* ar = a.arena_ ? a.arena_ : b.arena_;
    std::int64_t r = 0;
    if (!ar) {
      // Two constants: fold. A result that does not fit has nowhere to live; it becomes a
      // constant the checker rejects (see invalid()).
      if (detail::fold(op, a.ref_.value, b.ref_.value, r)) return sym(r);
      return invalid();
    }
    const sym_ref e = ar->make(op, a.ref_, b.ref_);
    if (!ar->within_limits(e)) return invalid();
    return sym(ar, e);
  }
  /// The marker of an expression that cannot be used: a fold of two constants outside any module
  /// that overflows or divides by zero, one larger than max_sym_depth / max_sym_nodes, or one
  /// combining expressions of two module builders. Its node is -2.
  static constexpr sym invalid() { return sym(nullptr, sym_ref{-2, 0}); }
  constexpr bool is_invalid() const { return ref_.node == -2; }

  friend constexpr sym operator+(const sym& a, const sym& b) { return apply(sym_op::add, a, b); }
  friend constexpr sym operator-(const sym& a, const sym& b) { return apply(sym_op::sub, a, b); }
  friend constexpr sym operator*(const sym& a, const sym& b) { return apply(sym_op::mul, a, b); }
  friend constexpr sym operator<(const sym& a, const sym& b) { return apply(sym_op::lt, a, b); }
  friend constexpr sym operator<=(const sym& a, const sym& b) { return apply(sym_op::le, a, b); }
  friend constexpr sym operator>(const sym& a, const sym& b) { return apply(sym_op::gt, a, b); }
  friend constexpr sym operator>=(const sym& a, const sym& b) { return apply(sym_op::ge, a, b); }
  friend constexpr sym operator&&(const sym& a, const sym& b) { return apply(sym_op::and_, a, b); }
  friend constexpr sym operator||(const sym& a, const sym& b) { return apply(sym_op::or_, a, b); }
  friend constexpr sym operator!(const sym& a) {
    if (a.is_invalid()) return invalid();
    if (!a.arena_) return sym(a.ref_.value == 0 ? 1 : 0);
    const sym_ref e = a.arena_->make_not(a.ref_);
    if (!a.arena_->within_limits(e)) return invalid();
    return sym(a.arena_, e);
  }

 private:
  sym_arena* arena_ = nullptr;
  sym_ref ref_;
};

constexpr sym floordiv(const sym& a, const sym& b) { return apply(sym_op::floordiv, a, b); }
constexpr sym floormod(const sym& a, const sym& b) { return apply(sym_op::floormod, a, b); }
constexpr sym min(const sym& a, const sym& b) { return apply(sym_op::min, a, b); }
constexpr sym max(const sym& a, const sym& b) { return apply(sym_op::max, a, b); }
/// a == b and a != b as expressions (operator== is not overloaded: it would not mean equality).
constexpr sym eq(const sym& a, const sym& b) { return apply(sym_op::eq, a, b); }
constexpr sym ne(const sym& a, const sym& b) { return apply(sym_op::ne, a, b); }

}  // namespace relaxvm::ir

#endif  // RELAXVM_LOWER_SYM_HPP
