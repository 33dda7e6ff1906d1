// SPDX-License-Identifier: Apache-2.0
// The definitions of onnx.hpp's functions: the importer's driver (each node folded over shapes,
// folded as a constant, or converted), the unsupported-op listing, and load(). Header-only,
// onnx.hpp includes this file; with RELAXVM_SEPARATE_COMPILATION only the library built from
// src/ does (base/config.hpp), so a user's translation unit does not compile the converters and
// the kernels.
#ifndef RELAXVM_ONNX_LOAD_HPP
#define RELAXVM_ONNX_LOAD_HPP

#include <string>
#include <unordered_map>

#include "../../relaxvm.hpp"
#include "../lower.hpp"
#include "../kernels/register.hpp"
#include "../ops/ops.hpp"
#include "../onnx.hpp"
#include "control.hpp"
#include "convert.hpp"
#include "file.hpp"
#include "fold.hpp"
#include "import.hpp"
#include "model.hpp"
#include "tensor.hpp"

namespace relaxvm::RELAXVM_ABI::onnx {

namespace detail {

// The (domain, op_type, opset) of every node without a converter, with the nodes' names (a node
// in an If's branch named by its path: "node 0 (Loop) in node 2 (If).then_branch"); "" when every
// op is supported.
inline std::string unsupported_ops(const model_info& m) {
  struct missing {
    std::string_view domain, op;
    std::vector<std::string> nodes;
  };
  std::vector<missing> list;
  const auto visit = [&](const auto& self, const graph_info& g, const std::string& where) -> void {
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      const node_info& n = g.nodes[i];
      if (is_if(n)) {
        // Its branches' nodes are imported like the graph's (a missing branch is refused then).
        for (std::string_view b : {std::string_view("then_branch"), std::string_view("else_branch")})
          if (const graph_info* sub = branch_of(n, b))
            self(self, *sub, std::string(" in ") + std::string(node_text(n, i).view()) + "." + std::string(b) + where);
        continue;
      }
      // An op that folds over symbolic values may need no converter; one that does not fold is
      // refused when it is reached.
      if (find_converter(n.domain, n.op_type) != nullptr || may_fold(n.domain, n.op_type)) continue;
      missing* found = nullptr;
      for (missing& x : list)
        if (x.domain == n.domain && x.op == n.op_type) found = &x;
      if (found == nullptr) {
        list.push_back({n.domain, n.op_type, {}});
        found = &list.back();
      }
      found->nodes.push_back(std::string(node_text(n, i).view()) + where);
    }
  };
  visit(visit, m.graph, std::string());
  relaxvm::detail::text t;
  for (const missing& x : list) {
    t << "\n  " << (x.domain.empty() ? std::string_view("ai.onnx") : x.domain) << " " << x.op << " (opset "
      << m.opset(x.domain) << "): " << x.nodes.size() << (x.nodes.size() == 1 ? " node" : " nodes");
    for (std::size_t k = 0; k < x.nodes.size() && k < 5; ++k) t << (k == 0 ? ": " : ", ") << x.nodes[k];
    if (x.nodes.size() > 5) t << ", and " << (x.nodes.size() - 5) << " more";
  }
  return std::string(t.view());
}

/// Runs a node whose inputs are all constants once, now, on the VM with the kernels, and binds
/// its outputs as constants; false (nothing done) when its inputs or outputs are too large to be
/// worth keeping as constants.
inline result<bool> fold_constant(node_ctx& c, converter convert);

}  // namespace detail

RELAXVM_DECL void register_kernels(basic_registry& reg) {
  kernels::register_all(reg);
  ops::register_all(reg);
}

namespace detail {

inline result<bool> fold_constant(node_ctx& c, converter convert) {
  constexpr std::int64_t max_elements = std::int64_t{1} << 20;
  const node_info& n = c.node;
  if (n.inputs.empty()) return false;
  std::vector<tensor> inputs;
  std::int64_t total = 0;
  for (std::string_view name : n.inputs) {
    if (name.empty()) {
      inputs.emplace_back();
      continue;
    }
    entry* e = c.st.find(name);
    if (e == nullptr || !e->is_constant()) return false;
    RELAXVM_TRY_ASSIGN(tensor t, e->value());
    total += t.numel();
    if (total > max_elements) return false;
    inputs.push_back(std::move(t));
  }
  // A one-node program over the inputs as parameters, built by the node's own converter.
  import_state sub(c.st.model(), options{});
  sub.opset_ = c.st.opset();
  sub.runtime_shapes = false;  // a node whose output shape is known only when it runs stays in the program
  std::vector<ir::module_builder::param> params;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < inputs.size(); ++i) names.push_back("in" + std::to_string(i));
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) continue;
    std::vector<ir::sym> dims;
    for (std::int64_t d : inputs[i].shape().dims()) dims.push_back(ir::sym(d));
    params.push_back({names[i], tensor_struct(dims, inputs[i].dtype())});
  }
  {
    ir::function_builder f = sub.module().function("main", std::span<const ir::module_builder::param>(params));
    sub.fn_ = &f;
    std::size_t p = 0;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].defined()) continue;
      entry e;
      e.v = f.param(p++);
      e.dt = inputs[i].dtype();
      for (std::int64_t d : inputs[i].shape().dims()) e.dims.push_back(ir::sym(d));
      sub.bind(n.inputs[i], std::move(e));
    }
    node_ctx sc{sub, n, c.index};
    // A converter that needs its inputs' values at import (Slice's starts, Expand's shape) sees
    // parameters here: it is converted in the program instead, where its inputs are constants.
    if (!convert(sc).ok()) return false;
    std::vector<ir::operand> outs;
    for (std::string_view name : n.outputs) {
      entry* e = name.empty() ? nullptr : sub.find(name);
      if (e == nullptr) return false;
      RELAXVM_TRY_ASSIGN(ir::var v, sub.operand_of(*e));
      outs.push_back(v);
    }
    const ir::var t = f.tuple(std::span<const ir::operand>(outs));
    f.ret(t);
    sub.fn_ = nullptr;
  }
  RELAXVM_TRY_ASSIGN(ir::module m, std::move(sub.module()).try_get());
  RELAXVM_TRY_ASSIGN(executable exe, ir::try_build(std::move(m)));
  // One registry for every fold of every import (made once; only read after).
  static const registry reg = [] {
    registry r;
    register_kernels(r);
    return r;
  }();
  // The inputs are bounded, but an output's size may not be (Expand or ConstantOfShape to a huge
  // constant shape): the fold runs under a memory budget, so a small file cannot make the import
  // allocate without bound.
  vm_options opts;
  opts.max_memory = max_elements * 16 * 8;
  RELAXVM_TRY_ASSIGN(virtual_machine vm, virtual_machine::create(exe, reg, opts));
  std::vector<value> args;
  for (tensor& t : inputs)
    if (t.defined()) args.emplace_back(t);
  result<value> r = vm.try_invoke("main", args);
  if (!r.ok()) return c.fail("folding its constant inputs failed: ", r.error().message());
  const tuple results = r->as<tuple>();
  std::int64_t out_total = 0;
  for (std::int64_t i = 0; i < results.size(); ++i) out_total += results[i].as<tensor>().numel();
  if (out_total > max_elements) return false;
  std::size_t k = 0;
  for (std::string_view name : n.outputs) {
    // A copy: the result's memory belongs to the VM's allocator.
    RELAXVM_TRY_ASSIGN(tensor copy, results[static_cast<std::int64_t>(k++)].as<tensor>().try_copy());
    c.st.bind(name, entry::of(std::move(copy)));
  }
  return true;
}

}  // namespace detail

RELAXVM_DECL result<ir::module> import(const model_info& m, const options& opt) {
  const graph_info& g = m.graph;
  if (const std::string missing = detail::unsupported_ops(m); !missing.empty())
    return unsupported_error("onnx: the model uses operators relaxvm does not support:", missing);

  detail::import_state st(m, opt);
  st.opset_ = m.opset("");
  if (st.opset_ == 0) st.opset_ = 1;  // no opset_import for the default domain: the first

  // The graph's inputs that are not initializers are the function's parameters; their named
  // dims are symbolic variables (one name, one variable), unnamed ones fresh variables.
  std::unordered_map<std::string_view, const tensor_info*> inits;
  for (const tensor_info& t : g.initializers) inits.emplace(t.name, &t);
  ir::module_builder& mb = st.module();
  std::unordered_map<std::string_view, ir::sym> named;
  std::vector<ir::module_builder::param> params;
  std::vector<std::vector<ir::sym>> param_dims;
  std::vector<relaxvm::dtype> param_dtypes;
  std::vector<std::string> fresh_names;
  std::int64_t unnamed = 0;
  for (const value_info& in : g.inputs) {
    if (inits.count(in.name) != 0) continue;  // a default overridable by the caller (IR < 4): a constant
    if (in.type.what != type_info::kind::tensor)
      return unsupported_error("onnx: input '", in.name, "' is not a tensor: sequences, maps and optionals are not supported");
    if (!in.type.has_shape) return unsupported_error("onnx: input '", in.name, "' without a declared rank is not supported");
    RELAXVM_TRY_ASSIGN(relaxvm::dtype dt, to_dtype(in.type.elem_type));
    std::vector<ir::sym> dims;
    for (const dimension& d : in.type.shape) {
      if (d.known()) {
        dims.push_back(ir::sym(d.value));
      } else if (!d.param.empty()) {
        auto it = named.find(d.param);
        if (it == named.end()) it = named.emplace(d.param, mb.sym(d.param)).first;
        dims.push_back(it->second);
      } else {
        relaxvm::detail::text n;
        n << "dim" << unnamed++;
        dims.push_back(mb.sym(n.view()));
      }
    }
    params.push_back({in.name, detail::tensor_struct(dims, dt)});
    param_dims.push_back(std::move(dims));
    param_dtypes.push_back(dt);
  }
  for (const auto& [name, bound] : opt.upper_bounds)
    if (named.find(name) == named.end())
      return value_error("onnx: an upper bound is given for '", name, "', but no input has a dimension of that name");

  {
    ir::function_builder f = mb.function("main", std::span<const ir::module_builder::param>(params));
    st.fn_ = &f;
    for (const auto& [name, bound] : opt.upper_bounds) f.upper_bound(named.find(name)->second, bound);
    std::size_t p = 0;
    for (const value_info& in : g.inputs) {
      if (inits.count(in.name) != 0) continue;
      detail::entry e;
      e.v = f.param(p);
      e.dt = param_dtypes[p];
      e.dims = param_dims[p];
      st.bind(in.name, std::move(e));
      ++p;
    }
    detail::graph_importer gi(st);
    RELAXVM_TRY_ASSIGN(std::vector<ir::var> outs, gi.import_graph(g, f));
    if (outs.size() == 1) {
      f.ret(outs[0]);
    } else {
      const std::vector<ir::operand> fields(outs.begin(), outs.end());
      const ir::var t = f.tuple(std::span<const ir::operand>(fields));
      f.ret(t);
    }
    st.fn_ = nullptr;
  }
  return std::move(mb).try_get();  // the module itself: its constants are not copied
}

RELAXVM_DECL result<ir::module> import(std::span<const std::byte> bytes, const options& opt) {
  RELAXVM_TRY_ASSIGN(model_info m, parse_model(bytes));
  return import(m, opt);
}

RELAXVM_DECL result<executable> load(std::span<const std::byte> bytes, const options& opt) {
  RELAXVM_TRY_ASSIGN(ir::module m, import(bytes, opt));
  return ir::try_build(std::move(m), plan);  // the weights move into the executable's pool
}

RELAXVM_DECL result<executable> load_mapped(const mapped_file& file, const options& opt) {
  options with_release = opt;
  if (with_release.weight_copied == nullptr) {  // a caller's own hook is kept; pages then stay
    with_release.weight_copied = [](std::span<const std::byte> proto, void* f) { static_cast<const mapped_file*>(f)->release(proto); };
    with_release.weight_copied_context = const_cast<mapped_file*>(&file);  // the hook reads it as const
  }
  return load(file.bytes(), with_release);
}

RELAXVM_DECL result<executable> load_file(const std::string& path, const options& opt) {
  RELAXVM_TRY_ASSIGN(mapped_file file, mapped_file::open(path));
  return load_mapped(file, opt);
}

}  // namespace relaxvm::onnx

#endif  // RELAXVM_ONNX_LOAD_HPP
