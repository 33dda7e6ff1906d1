// SPDX-License-Identifier: Apache-2.0
// Shape arithmetic on the heap: shape_arith (its encoding: builtins/shape_heap.hpp), with its
// prepared and specialized call sites.
#ifndef RELAXVM_BUILTINS_SHAPE_HEAP_ARITH_HPP
#define RELAXVM_BUILTINS_SHAPE_HEAP_ARITH_HPP

#include "../../base/config.hpp"  // RELAXVM_ABI
#include "heap.hpp"

namespace relaxvm::RELAXVM_ABI::builtins {

// ---- arithmetic on the heap ----------------------------------------------------------------

namespace detail {
inline std::string_view op_symbol(arith_op op) {
  switch (op) {
    case arith_op::add: return "+";
    case arith_op::sub: return "-";
    case arith_op::mul: return "*";
    case arith_op::floordiv: return "//";
    case arith_op::floormod: return "%";
    case arith_op::min: return "min";
    case arith_op::max: return "max";
    case arith_op::eq: return "==";
    case arith_op::ne: return "!=";
    case arith_op::lt: return "<";
    case arith_op::le: return "<=";
    case arith_op::gt: return ">";
    case arith_op::ge: return ">=";
    case arith_op::and_: return "and";
    case arith_op::or_: return "or";
  }
  return "?";
}

enum class arith_outcome : std::uint8_t { ok, overflows, divides_by_zero, unknown_op };
/// r = a op b.
RELAXVM_HOT_INLINE arith_outcome apply(arith_op op, std::int64_t a, std::int64_t b, std::int64_t& r) noexcept {
  bool ok = true;
  switch (op) {
    case arith_op::add: ok = relaxvm::detail::checked_add(a, b, r); break;
    case arith_op::sub: ok = relaxvm::detail::checked_sub(a, b, r); break;
    case arith_op::mul: ok = relaxvm::detail::checked_mul(a, b, r); break;
    case arith_op::floordiv:
    case arith_op::floormod: {
      if (b == 0) return arith_outcome::divides_by_zero;
      if (a == std::numeric_limits<std::int64_t>::min() && b == -1) {
        ok = op == arith_op::floormod;  // the quotient overflows; the remainder is 0
        r = 0;
        break;
      }
      std::int64_t q = a / b, m = a % b;
      if (m != 0 && ((m < 0) != (b < 0))) {
        q -= 1;
        m += b;
      }
      r = op == arith_op::floordiv ? q : m;
      break;
    }
    case arith_op::min: r = a < b ? a : b; break;
    case arith_op::max: r = a < b ? b : a; break;
    case arith_op::eq: r = a == b; break;
    case arith_op::ne: r = a != b; break;
    case arith_op::lt: r = a < b; break;
    case arith_op::le: r = a <= b; break;
    case arith_op::gt: r = a > b; break;
    case arith_op::ge: r = a >= b; break;
    case arith_op::and_: r = a != 0 && b != 0; break;
    case arith_op::or_: r = a != 0 || b != 0; break;
    default: return arith_outcome::unknown_op;
  }
  return ok ? arith_outcome::ok : arith_outcome::overflows;
}
}  // namespace detail

namespace detail {
/// One group of shape_arith: heap[w[1]] = A w[0] B, with A from (w[2], w[3]) and B from (w[4], w[5]).
RELAXVM_HOT_INLINE status arith_group(const heap_view& heap, const std::int64_t (&w)[6]) {
  constexpr std::string_view fn = "vm.builtin.shape_arith";
  std::int64_t operand[2];
  // The operands, then the destination: one slot check for the three.
  for (int k = 0; k < 3; ++k) {
    std::int64_t slot = w[1];
    if (k < 2) {
      const std::int64_t code = w[2 + 2 * k], v = w[3 + 2 * k];
      if (code == static_cast<std::int64_t>(make_code::use_imm)) {
        operand[k] = v;
        continue;
      }
      if (code != static_cast<std::int64_t>(make_code::load_shape))
        return value_error(fn, ": Unknown make shape code: ", code);
      slot = v;
    }
    RELAXVM_TRY(check_slot(fn, k < 2 ? "an operand" : "the destination", -1, slot, heap));
    if (k < 2) operand[k] = heap.slots[slot];
  }
  const auto op = static_cast<arith_op>(w[0]);
  const std::int64_t a = operand[0], b = operand[1];
  std::int64_t r = 0;
  switch (apply(op, a, b, r)) {
    case arith_outcome::ok: break;
    case arith_outcome::divides_by_zero:
      return runtime_error(fn, ": heap[", w[1], "] = ", a, " ", op_symbol(op), " 0 divides by zero");
    case arith_outcome::overflows:
      return runtime_error(fn, ": heap[", w[1], "] = ", a, " ", op_symbol(op), " ", b, " overflows int64");
    case arith_outcome::unknown_op:
      return value_error(fn, ": unknown operation ", w[0], "; expected 0 (add) to 14 (or)");
  }
  heap.slots[w[1]] = r;
  return {};
}
}  // namespace detail

inline status shape_arith(std::span<const value> args) {
  constexpr std::string_view fn = "vm.builtin.shape_arith";
  if (args.empty() || (args.size() - 1) % 6 != 0)
    return detail::type_error(fn, ": expects (heap, then groups of op, dst, code_a, a, code_b, b) but got ", args.size(),
                              " arguments");
  RELAXVM_TRY_ASSIGN(detail::heap_view heap, detail::open_heap(fn, args[0], true));
  for (std::size_t g = 1; g < args.size(); g += 6) {
    std::int64_t w[6];
    for (std::size_t k = 0; k < 6; ++k) {
      RELAXVM_TRY_ASSIGN(w[k], detail::int_arg(fn, args, g + k, "an operand"));
    }
    RELAXVM_TRY(detail::arith_group(heap, w));
  }
  return {};
}

// ---- prepared call sites: shape_arith
namespace detail {
inline bool shape_arith_prepared(const closure_object& self, const value* args, std::uint32_t nargs, value& ret,
                                 std::optional<error>& err) {
  heap_view heap;
  if (!try_open_heap(args[0], true, heap)) return invoke_general(self, args, nargs, ret, err);
  // Anything unusual goes to the general function, which repeats the groups done so far with the
  // same results (prepare_shape_arith accepts only groups whose reads a re-run finds unchanged or
  // computes again) and fails where this stopped.
  for (std::uint32_t g = 1; g < nargs; g += 6) {
    const value* w = args + g;
    const std::int64_t dst = w[1].raw_int(), code_a = w[2].raw_int(), a = w[3].raw_int(), code_b = w[4].raw_int(),
                       b = w[5].raw_int();
    std::int64_t r = 0;
    if (!heap.can_read(code_a, a) || !heap.can_read(code_b, b) || !heap.has(dst) ||
        apply(static_cast<arith_op>(w[0].raw_int()), heap.read(code_a, a), heap.read(code_b, b), r) != arith_outcome::ok)
      return invoke_general(self, args, nargs, ret, err);
    heap.slots[dst] = r;
  }
  ret.reset();
  return true;
}
// shape_arith(heap, op, dst, code_a, a, code_b, b, ...): all but the heap fixed and valid, and
// each slot a group reads is written by an earlier group (a re-run computes it again from the same
// inputs) or by no group from this one on (a re-run finds it as it was).
inline packed_invoke prepare_shape_arith(const value* args, std::uint32_t nargs, std::uint64_t fixed) {
  if (nargs < 7 || (nargs - 1) % 6 != 0 || !all_fixed(fixed, nargs, 1)) return nullptr;
  for (std::uint32_t k = 1; k < nargs; ++k)
    if (!int_ok(args[k])) return nullptr;
  for (std::uint32_t g = 1; g < nargs; g += 6) {
    if (args[g].raw_int() < 0 || args[g].raw_int() > static_cast<std::int64_t>(arith_op::or_)) return nullptr;
    for (std::uint32_t k = 0; k < 2; ++k) {
      const std::int64_t code = args[g + 2 + 2 * k].raw_int();
      if (code == static_cast<std::int64_t>(make_code::use_imm)) continue;
      if (code != static_cast<std::int64_t>(make_code::load_shape)) return nullptr;
      const std::int64_t slot = args[g + 3 + 2 * k].raw_int();
      const auto written_in = [&](std::uint32_t from, std::uint32_t to) {
        for (std::uint32_t h = from; h < to; h += 6)
          if (args[h + 1].raw_int() == slot) return true;
        return false;
      };
      if (!written_in(1, g) && written_in(g, nargs)) return nullptr;
    }
  }
  return &shape_arith_prepared;
}

}  // namespace detail

// ---- specialized call sites: shape_arith
namespace detail {
/// shape_arith(heap, op, dst, code_a, a, code_b, b, ...) with every group fixed.
struct shape_arith_site {
  static constexpr object_rule objects = object_rule::none;  // for linked::object_bytes
  struct group {
    std::int64_t w[6];
  };
  template <class C>
  static constexpr bool applies() {
    const std::size_t n = C::num_args;
    return n >= 7 && (n - 1) % 6 == 0 && site_ints<C>(1, n);
  }
  template <class C>
  static constexpr bool reads(std::size_t k) {
    return k == 0;
  }
  template <class C>
  RELAXVM_ALWAYS_INLINE static bool run(const value* args, std::uint32_t, value& ret, std::optional<error>& err) {
    static constexpr auto groups = [] {
      std::array<group, (C::num_args - 1) / 6> g{};
      for (std::size_t i = 0; i < g.size(); ++i)
        for (std::size_t k = 0; k < 6; ++k) g[i].w[k] = C::int_at(1 + 6 * i + k);
      return g;
    }();
    return computed(args, groups.data(), groups.size(), ret, err);
  }
  RELAXVM_NOINLINE static bool computed(const value* args, const group* groups, std::size_t n, value& ret,
                                        std::optional<error>& err) {
    heap_view heap;
    if (RELAXVM_UNLIKELY(!try_open_heap(args[0], true, heap)))
      return argument_error(heap_error("vm.builtin.shape_arith", args[0]), err);
    for (std::size_t i = 0; i < n; ++i) {
      if (status s = arith_group(heap, groups[i].w); RELAXVM_UNLIKELY(!s.ok()))
        return argument_error(std::move(s).error(), err);
    }
    ret.reset();
    return true;
  }
};

}  // namespace detail

}  // namespace relaxvm::builtins

#endif  // RELAXVM_BUILTINS_SHAPE_HEAP_ARITH_HPP
