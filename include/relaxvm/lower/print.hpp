// SPDX-License-Identifier: Apache-2.0
// to_text(module): the IR in TVMScript's style, one binding per line, before or after any pass:
//
//   @R.function
//   def main(x: R.Tensor((n, 16), dtype="float32")) -> R.Tensor((n, 10), dtype="float32"):
//       R.func_attr({"num_input": 1, "tir_var_upper_bound": {"n": 8}})
//       with R.dataflow():
//           lv: R.Tensor((n, 32), dtype="float32") = R.call_dps_packed("ops.dense_out", (x, ...), ...)
//           R.output(lv)
//       return lv
#ifndef RELAXVM_LOWER_PRINT_HPP
#define RELAXVM_LOWER_PRINT_HPP

#include <string_view>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/text_builder.hpp"
#include "ir.hpp"
#include "struct_info.hpp"

namespace relaxvm::RELAXVM_ABI::ir {

namespace detail {

class printer {
 public:
  constexpr printer(const module& m, relaxvm::detail::text& out) : m_(m), out_(out) {}

  constexpr void print_module() {
    for (std::size_t i = 0; i < m_.funcs.size(); ++i) {
      if (i) out_ << '\n';
      print_function(m_.funcs[i]);
    }
  }

 private:
  constexpr void indent(int depth) {
    for (int i = 0; i < depth; ++i) out_ << "    ";
  }
  constexpr void info(const struct_info& s) { print_info(out_, m_.syms, s); }
  constexpr void sym(sym_ref e) { m_.syms.print(out_, e); }

  constexpr void print_function(const function& f) {
    f_ = &f;
    out_ << "@R.function\ndef " << f.nm.view() << '(';
    for (std::size_t i = 0; i < f.params.size(); ++i) {
      if (i) out_ << ", ";
      out_ << f.var(f.params[i]).nm.view() << ": ";
      info(f.var(f.params[i]).info);
    }
    out_ << ')';
    if (f.has_ret_info) {
      out_ << " -> ";
      info(f.ret_info);
    }
    out_ << ":\n";
    if (f.num_input >= 0 || !f.upper_bounds.empty()) {
      indent(1);
      out_ << "R.func_attr({";
      bool first = true;
      if (f.num_input >= 0) {
        out_ << "\"num_input\": " << f.num_input;
        first = false;
      }
      if (!f.upper_bounds.empty()) {
        out_ << (first ? "" : ", ") << "\"tir_var_upper_bound\": {";
        for (std::size_t i = 0; i < f.upper_bounds.size(); ++i)
          out_ << (i ? ", " : "") << '"' << m_.syms.var_name(f.upper_bounds[i].var) << "\": " << f.upper_bounds[i].bound;
        out_ << '}';
      }
      out_ << "})\n";
    }
    print_seq(f.body, 1, -1);
  }

  // A function body ends in `return`; a branch assigns its result to `target`.
  constexpr void print_seq(const seq& s, int depth, std::int32_t target) {
    for (const block& b : s.blocks) {
      int d = depth;
      if (b.dataflow) {
        indent(depth);
        out_ << "with R.dataflow():\n";
        d = depth + 1;
      }
      for (const binding& x : b.bindings) print_binding(x, d);
      if (b.dataflow) {
        indent(d);
        out_ << "R.output(";
        bool first = true;
        for (const binding& x : b.bindings)
          if (x.var >= 0 && !f_->var(x.var).dataflow) {
            out_ << (first ? "" : ", ") << f_->var(x.var).nm.view();
            first = false;
          }
        out_ << ")\n";
      }
    }
    indent(depth);
    if (target < 0) {
      out_ << "return ";
    } else {
      out_ << f_->var(target).nm.view() << " = ";
    }
    print_leaf(s.result);
    out_ << '\n';
  }

  constexpr void print_binding(const binding& b, int depth) {
    const expr& e = b.value;
    if (e.kind == expr_kind::if_) {
      indent(depth);
      out_ << "if ";
      print_leaf(e.args[0]);
      out_ << ":\n";
      print_seq(e.branches[0], depth + 1, b.var);
      indent(depth);
      out_ << "else:\n";
      print_seq(e.branches[1], depth + 1, b.var);
      return;
    }
    indent(depth);
    const var_info& v = f_->var(b.var);
    if (v.info.is_void() && e.kind != expr_kind::tuple) {
      out_ << "_ = ";
    } else {
      out_ << v.nm.view() << ": ";
      info(v.info);
      out_ << " = ";
    }
    if (b.match_cast) {
      out_ << "R.match_cast(";
      print_leaf(e.args[0]);
      out_ << ", ";
      info(b.cast);
      out_ << ")\n";
      return;
    }
    print_expr(e, v.info);
    out_ << '\n';
  }

  constexpr void args(const expr& e, std::size_t from, bool parens) {
    if (parens) out_ << '(';
    for (std::size_t i = from; i < e.args.size(); ++i) {
      if (i > from) out_ << ", ";
      print_leaf(e.args[i]);
    }
    if (parens) {
      if (e.args.size() == from + 1) out_ << ',';
      out_ << ')';
    }
  }
  constexpr void sinfo_args(const struct_info& s) {
    if (s.is_void()) return;
    out_ << ", sinfo_args=(";
    info(s);
    out_ << ",)";
  }
  constexpr void call(std::string_view op, const expr& e) {
    out_ << op << '(';
    args(e, 0, false);
    out_ << ')';
  }

  constexpr void print_expr(const expr& e, const struct_info& result) {
    switch (e.kind) {
      case expr_kind::leaf: print_leaf(e.args[0]); return;
      case expr_kind::call_dps:
        out_ << "R.call_dps_packed(\"" << e.callee.view() << "\", ";
        args(e, 0, true);
        out_ << ", out_sinfo=";
        info(result);
        out_ << ')';
        return;
      case expr_kind::call_packed:
        out_ << "R.call_packed(\"" << e.callee.view() << '"';
        if (!e.args.empty()) out_ << ", ";
        args(e, 0, false);
        sinfo_args(result);
        out_ << ')';
        return;
      case expr_kind::call_builtin:
        out_ << "R.call_builtin_with_ctx(\"" << e.callee.view() << "\", ";
        args(e, 0, true);
        sinfo_args(result);
        out_ << ')';
        return;
      case expr_kind::call_func: out_ << "cls." << e.callee.view(); args(e, 0, true); return;
      case expr_kind::reshape: call("R.reshape", e); return;
      case expr_kind::shape_of: call("R.shape_of", e); return;
      case expr_kind::tuple: args(e, 0, true); return;
      case expr_kind::get_item:
        print_leaf(e.args[0]);
        out_ << '[' << e.index << ']';
        return;
      case expr_kind::make_closure:
        out_ << "R.make_closure(cls." << e.args[0].text.view() << ", ";
        args(e, 1, true);
        out_ << ')';
        return;
      case expr_kind::invoke_closure:
        out_ << "R.invoke_closure(";
        print_leaf(e.args[0]);
        out_ << ", ";
        args(e, 1, true);
        sinfo_args(result);
        out_ << ')';
        return;
      case expr_kind::builtin_alloc_tensor: call("R.builtin.alloc_tensor", e); return;
      case expr_kind::mem_alloc_storage: call("R.memory.alloc_storage", e); return;
      case expr_kind::mem_alloc_tensor: call("R.memory.alloc_tensor", e); return;
      case expr_kind::mem_kill_storage: call("R.memory.kill_storage", e); return;
      case expr_kind::mem_kill_tensor: call("R.memory.kill_tensor", e); return;
      case expr_kind::vm_alloc_storage: call("R.vm.alloc_storage", e); return;
      case expr_kind::vm_alloc_tensor: call("R.vm.alloc_tensor", e); return;
      case expr_kind::vm_kill_object: call("R.vm.kill_object", e); return;
      case expr_kind::null_value: out_ << "R.null_value()"; return;
      case expr_kind::if_: return;  // print_binding
    }
  }

  constexpr void print_leaf(const leaf& l) {
    switch (l.kind) {
      case leaf_kind::none: out_ << "None"; return;
      case leaf_kind::var: out_ << f_->var(l.index).nm.view(); return;
      case leaf_kind::constant: out_ << "metadata[\"relax.expr.Constant\"][" << l.index << ']'; return;
      case leaf_kind::prim:
        if (l.dt.is_bool()) {
          if (l.value.is_const()) {
            out_ << (l.value.value ? "R.prim_value(True)" : "R.prim_value(False)");
            return;
          }
        }
        if (l.dt.is_float()) {
          // Printed as the reference prints a float PrimValue; at compile time (no to_chars) as its bits.
          out_ << "R.prim_value(T.float64(";
          if (std::is_constant_evaluated()) out_ << "bits:" << l.value.value;
          else relaxvm::detail::append_double(out_, l.float_value());
          out_ << "))";
          return;
        }
        out_ << "R.prim_value(";
        sym(l.value);
        out_ << ')';
        return;
      case leaf_kind::shape:
        out_ << "R.shape([";
        for (std::size_t i = 0; i < l.dims.size(); ++i) {
          if (i) out_ << ", ";
          sym(l.dims[i]);
        }
        out_ << "])";
        return;
      case leaf_kind::string:
        out_ << "R.str(\"";
        for (char c : l.text.view()) {
          if (c == '"' || c == '\\') out_ << '\\';
          out_ << c;
        }
        out_ << "\")";
        return;
      case leaf_kind::dtype:
        out_ << "R.dtype(\"";
        if (!l.dt.is_void()) out_ << l.dt;  // any dtype prints as "", as in the reference
        out_ << "\")";
        return;
      case leaf_kind::func: out_ << "cls." << l.text.view(); return;
    }
  }

  const module& m_;
  relaxvm::detail::text& out_;
  const function* f_ = nullptr;
};

}  // namespace detail

/// Writes `m` in TVMScript's style into `out` (usable in constexpr).
constexpr void print(const module& m, relaxvm::detail::text& out) { detail::printer(m, out).print_module(); }

}  // namespace relaxvm::ir

#endif  // RELAXVM_LOWER_PRINT_HPP
