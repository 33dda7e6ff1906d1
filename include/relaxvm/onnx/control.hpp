// SPDX-License-Identifier: Apache-2.0
// The importer's driver over a graph (main's, or an If branch's) and ONNX's If. Each node is folded
// over shapes, folded as a constant, or converted, in a dataflow block; an If ends the block,
// becomes the IR's if_ (each branch's graph imported into its branch, in a scope of its own) and
// a new block starts after it. An If whose condition is known at import imports the taken branch
// in place. Loop and Scan have no converter: the importer lists them as unsupported.
#ifndef RELAXVM_ONNX_CONTROL_HPP
#define RELAXVM_ONNX_CONTROL_HPP

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "convert.hpp"
#include "fold.hpp"
#include "import.hpp"
#include "model.hpp"
#include "tensor.hpp"

namespace relaxvm::RELAXVM_ABI::onnx::detail {

// Defined in load.hpp (it runs the kernels), the one file that includes this one.
inline result<bool> fold_constant(node_ctx& c, converter convert);

/// Whether `n` is ONNX's If (the default domain).
inline bool is_if(const node_info& n) { return (n.domain.empty() || n.domain == "ai.onnx") && n.op_type == "If"; }

/// An If's branch: its attribute `name` holding a graph, or null.
inline const graph_info* branch_of(const node_info& n, std::string_view name) {
  const attribute_info* a = n.attribute(name);
  return a != nullptr && a->type == attribute_type::g && a->g ? a->g.get() : nullptr;
}

/// Every name `g` reads, with the index of the last node reading it (graph outputs read at
/// nodes.size()); a name read inside a node's subgraphs counts as read by that node.
inline void note_reads(const graph_info& g, std::size_t at, std::unordered_map<std::string_view, std::size_t>& last) {
  const auto note = [&](std::string_view name) {
    if (name.empty()) return;
    std::size_t& l = last[name];
    if (l < at) l = at;
  };
  for (const node_info& n : g.nodes) {
    for (std::string_view in : n.inputs) note(in);
    for (const attribute_info& a : n.attributes) {
      if (a.g) note_reads(*a.g, at, last);
      for (const graph_info& sub : a.graphs) note_reads(sub, at, last);
    }
  }
  for (const value_info& o : g.outputs) note(o.name);
}
inline std::unordered_map<std::string_view, std::size_t> last_reads(const graph_info& g) {
  std::unordered_map<std::string_view, std::size_t> last;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const node_info& n = g.nodes[i];
    for (std::string_view in : n.inputs)
      if (!in.empty()) last[in] = i;
    for (const attribute_info& a : n.attributes) {
      if (a.g) note_reads(*a.g, i, last);
      for (const graph_info& sub : a.graphs) note_reads(sub, i, last);
    }
  }
  for (const value_info& o : g.outputs) last[o.name] = g.nodes.size();
  return last;
}

/// Imports graphs into the block being built. One per import; branches nest through it.
class graph_importer {
 public:
  explicit graph_importer(import_state& st) : st_(st) {}

  /// Imports `g` (its initializers, then its nodes) into `b` in dataflow blocks and returns its
  /// outputs, each visible after the block.
  result<std::vector<ir::var>> import_graph(const graph_info& g, ir::block_builder& b) {
    ir::block_builder* outer_fn = st_.fn_;
    std::optional<ir::dataflow_scope>* outer_df = df_;
    std::optional<ir::dataflow_scope> df;
    st_.fn_ = &b;
    df_ = &df;
    df.emplace(&b);
    st_.take_recent();  // a new block: what came before is not in it
    result<std::vector<ir::var>> out = import_body(g);
    df.reset();
    df_ = outer_df;
    st_.fn_ = outer_fn;
    return out;
  }

 private:
  // A graph being imported: the node being imported, and (worked out at its first If, so a
  // graph without one pays nothing) which names it reads last where.
  struct frame {
    const graph_info* g = nullptr;
    std::size_t at = 0;
    bool known = false;
    std::unordered_map<std::string_view, std::size_t> last;
  };

  result<std::vector<ir::var>> import_body(const graph_info& g) {
    RELAXVM_TRY(bind_initializers(g));
    frames_.push_back({&g, 0, false, {}});
    status s = run_nodes(g);
    frames_.pop_back();
    RELAXVM_TRY(s);
    if (g.outputs.empty()) return value_error("onnx: the graph has no outputs");
    std::vector<ir::var> outs;
    for (const value_info& o : g.outputs) {
      entry* e = st_.find(o.name);
      if (e == nullptr) return value_error("onnx: output '", o.name, "' is not computed by any node");
      RELAXVM_TRY_ASSIGN(ir::var v, st_.operand_of(*e));
      (*df_)->output(v);
      outs.push_back(v);
    }
    return outs;
  }

  status bind_initializers(const graph_info& g) {
    if (g.sparse_initializers > 0) return unsupported_error("onnx: sparse initializers are not supported");
    for (const tensor_info& t : g.initializers) {
      entry e;
      e.what = entry::kind::constant;
      e.data = &t;
      RELAXVM_TRY_ASSIGN(e.dt, to_dtype(t.data_type));
      for (std::int64_t d : t.dims) e.dims.push_back(ir::sym(d));
      st_.bind(t.name, std::move(e));
    }
    return {};
  }

  status run_nodes(const graph_info& g) {
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      frames_.back().at = i;
      node_ctx c{st_, g.nodes[i], i};
      if (is_if(g.nodes[i])) {
        RELAXVM_TRY(convert_if(c));
        continue;
      }
      RELAXVM_TRY_ASSIGN(const bool symbolic, fold_symbolic(c));
      if (symbolic) continue;
      const converter convert = find_converter(g.nodes[i].domain, g.nodes[i].op_type);
      if (convert == nullptr)
        return unsupported_error("onnx: ", node_text(g.nodes[i], i).view(),
                                 " is not supported here: relaxvm folds it over shapes and constants, and this one computes tensor data");
      RELAXVM_TRY_ASSIGN(const bool folded, fold_constant(c, convert));
      if (folded) continue;
      RELAXVM_TRY(convert(c));
      if (!st_.module().ok()) return st_.builder_error();
    }
    return {};
  }

  // Whether `name` is read by the node being imported (its branches) or a later one, in this
  // graph or an enclosing one.
  bool read_later(std::string_view name) {
    for (frame& f : frames_) {
      if (!f.known) {
        f.last = last_reads(*f.g);
        f.known = true;
      }
      auto it = f.last.find(name);
      if (it != f.last.end() && it->second >= f.at) return true;
    }
    return false;
  }

  // One branch's result: its value (several outputs: a tuple), and each output's type.
  struct branch_result {
    ir::var v;
    std::vector<relaxvm::dtype> dts;
    std::vector<std::vector<ir::sym>> dims;
  };

  // Imports `g` into the branch `b` in a scope of its own.
  result<branch_result> import_branch(node_ctx& c, std::string_view which, const graph_info& g, ir::block_builder& b) {
    const std::size_t mark = st_.open_scope();
    result<std::vector<ir::var>> outs = import_graph(g, b);
    branch_result r;
    if (outs.ok()) {
      for (const value_info& o : g.outputs) {
        const entry* e = st_.find(o.name);  // there: import_graph found each
        r.dts.push_back(e->dt);
        r.dims.push_back(e->dims);
      }
      r.v = outs->size() == 1 ? (*outs)[0] : b.tuple(std::span<const ir::operand>(std::vector<ir::operand>(outs->begin(), outs->end())));
    }
    st_.close_scope(mark);
    if (!outs.ok()) return in_branch(c, which, outs.error());
    if (!r.v.valid()) return st_.builder_error();
    return r;
  }

  // An error from inside a branch, placed: "onnx: node 3 (If 'f'): then_branch: node 0 (Add): ...".
  static error in_branch(node_ctx& c, std::string_view which, const error& e) {
    std::string_view m = e.message();
    if (m.substr(0, 6) == "onnx: ") m.remove_prefix(6);
    return relaxvm::detail::make_error(e.kind(), "onnx: ", node_text(c.node, c.index).view(), ": ", which, ": ", m);
  }

  status convert_if(node_ctx& c) {
    const graph_info* branches[2] = {branch_of(c.node, "then_branch"), branch_of(c.node, "else_branch")};
    const std::string_view names[2] = {"then_branch", "else_branch"};
    for (int k = 0; k < 2; ++k) {
      if (branches[k] == nullptr) return c.fail("the ", names[k], " attribute (a graph) is missing");
      if (!branches[k]->inputs.empty())
        return c.fail(names[k], " declares ", branches[k]->inputs.size(), " inputs; an If's branches take none");
      if (branches[k]->outputs.size() != c.node.outputs.size())
        return c.fail(names[k], " has ", branches[k]->outputs.size(), " outputs, but the node has ", c.node.outputs.size());
    }
    RELAXVM_TRY_ASSIGN(entry * cond, c.input(0));
    if (cond->dt != relaxvm::dtype::bool_()) return c.fail("the condition is ", cond->dt, "; If takes bool");
    // One element: every known dim 1 (no product, which could overflow); dims known only at run
    // time are matched to 1 there.
    bool known = true;
    for (const ir::sym& d : cond->dims) {
      if (!d.is_const()) known = false;
      else if (d.ref().value != 1) return c.fail("the condition has a dimension of ", d.ref().value, "; If takes one element");
    }
    if (cond->is_constant()) {
      RELAXVM_TRY_ASSIGN(tensor t, cond->value());
      const int k = *static_cast<const std::uint8_t*>(t.raw_data()) != 0 ? 0 : 1;  // a bool is one byte
      return import_taken(c, names, *branches[k], k);
    }

    // The if_ is outside any dataflow block: end this one, making what is read after it visible.
    RELAXVM_TRY_ASSIGN(ir::var cv, st_.operand_of(*cond));
    if (!known) cv = st_.fn().match_cast(cv, tensor_struct(std::vector<ir::sym>(cond->dims.size(), ir::sym(1)), cond->dt));
    (*df_)->output(cv);
    for (std::string_view name : st_.take_recent()) {
      const entry* e = st_.find(name);
      if (e != nullptr && e->v.valid() && (e->what == entry::kind::tensor || e->emitted) && read_later(name)) (*df_)->output(e->v);
    }
    df_->reset();
    ir::block_builder& b = st_.fn();
    std::optional<error> failed;
    branch_result results[2];
    const auto branch = [&](int k) {
      return [&, k](ir::block_builder& inner) -> ir::var {
        if (failed) return {};
        result<branch_result> r = import_branch(c, names[k], *branches[k], inner);
        if (!r.ok()) {
          failed = r.error();
          return {};
        }
        results[k] = std::move(*r);
        return results[k].v;
      };
    };
    const ir::var v = b.if_(cv, branch(0), branch(1));
    if (failed) return *failed;
    if (!v.valid()) return st_.builder_error();
    df_->emplace(&b);
    st_.take_recent();

    // Each output: its dtype and rank agree across the branches; a dim that differs is a fresh
    // symbolic variable matched when the program runs.
    const std::size_t n = c.node.outputs.size();
    for (std::size_t k = 0; k < n; ++k) {
      const branch_result& t = results[0];
      const branch_result& e = results[1];
      if (t.dts[k] != e.dts[k]) return c.fail("output ", k, " is ", t.dts[k], " in then_branch but ", e.dts[k], " in else_branch");
      if (t.dims[k].size() != e.dims[k].size())
        return c.unsupported("output ", k, " has rank ", t.dims[k].size(), " in then_branch but ", e.dims[k].size(),
                             " in else_branch (an output whose rank depends on the condition)");
      entry out;
      out.dt = t.dts[k];
      bool differ = false;
      for (std::size_t d = 0; d < t.dims[k].size(); ++d) {
        if (same_dim(t.dims[k][d], e.dims[k][d])) {
          out.dims.push_back(t.dims[k][d]);
        } else {
          out.dims.push_back(st_.fresh_sym());
          differ = true;
        }
      }
      out.v = n == 1 ? v : b.get_item(v, static_cast<std::int64_t>(k));
      if (differ && out.v.valid()) out.v = b.match_cast(out.v, tensor_struct(out.dims, out.dt));
      if (!out.v.valid()) return st_.builder_error();
      RELAXVM_TRY(c.output(k, std::move(out)));
    }
    return {};
  }

  // An If whose condition is known at import: the taken branch's nodes, here, in a scope of their
  // own; its outputs become the node's.
  status import_taken(node_ctx& c, const std::string_view (&names)[2], const graph_info& g, int k) {
    const std::size_t mark = st_.open_scope();
    status s = bind_initializers(g);
    if (s.ok()) {
      frames_.push_back({&g, 0, false, {}});
      s = run_nodes(g);
      frames_.pop_back();
    }
    std::vector<entry> outs;
    if (s.ok()) {
      // Copies: a constant stays one (later nodes may fold over it), and a variable emitted in
      // the scope was emitted in this block, so it stays visible after the scope.
      for (const value_info& o : g.outputs) {
        entry* e = st_.find(o.name);
        if (e == nullptr) {
          s = value_error("onnx: output '", o.name, "' is not computed by any node");
          break;
        }
        outs.push_back(*e);
      }
    }
    st_.close_scope(mark);
    if (!s.ok()) return in_branch(c, names[k], s.error());
    for (std::size_t i = 0; i < outs.size(); ++i) RELAXVM_TRY(c.output(i, std::move(outs[i])));
    return {};
  }

  import_state& st_;
  std::vector<frame> frames_;
  std::optional<ir::dataflow_scope>* df_ = nullptr;  // the open block's
};

}  // namespace relaxvm::onnx::detail

#endif  // RELAXVM_ONNX_CONTROL_HPP
