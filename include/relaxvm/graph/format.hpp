// SPDX-License-Identifier: Apache-2.0
// The graph executor's JSON format (TVM's graph_executor: nodes, arg_nodes, heads, node_row_ptr and
// the dltype, shape and storage_id attributes; examples/seed_graphs.hpp has two): parse_graph reads it exactly as the reference
// writes it, validate checks every index, size and order before anything is allocated, and
// plan_storage assigns storage ids by liveness when a graph has none.
//
// Needs nlohmann/json (Debian: nlohmann-json3-dev), and is included only through relaxvm/graph.hpp.
#ifndef RELAXVM_GRAPH_FORMAT_HPP
#define RELAXVM_GRAPH_FORMAT_HPP

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/dtype.hpp"
#include "../base/error.hpp"
#include "../base/text_builder.hpp"
#include "../runtime/shape.hpp"
#include "../runtime/tensor.hpp"

namespace relaxvm::RELAXVM_ABI::graph {

/// Output `index` of node `node` (the JSON's [node, index, version]; version is ignored).
struct entry_ref {
  std::uint32_t node = 0;
  std::uint32_t index = 0;
  friend bool operator==(const entry_ref&, const entry_ref&) = default;
};

struct node {
  std::string op;         ///< "null" (an input or a parameter) or "tvm_op"
  std::string name;
  std::string func_name;  ///< tvm_op: a registry name, "__nop" or "__copy"
  std::uint32_t num_inputs = 0;
  std::uint32_t num_outputs = 1;
  bool flatten_data = false;  ///< pass every argument as a 1-d view
  std::vector<entry_ref> inputs;
  std::vector<std::pair<std::string, std::string>> attrs;  ///< the other attrs ("hash", layouts)

  bool is_input() const noexcept { return op == "null"; }
};

/// A graph: nodes in execution order and one record per node output (an entry).
struct graph_def {
  std::vector<node> nodes;
  std::vector<std::uint32_t> arg_nodes;  ///< the inputs, parameters included, in input-index order
  std::vector<entry_ref> heads;          ///< the outputs, in output-index order
  std::vector<std::uint32_t> node_row_ptr;
  std::vector<dtype> dtypes;             ///< per entry
  std::vector<shape> shapes;             ///< per entry
  std::vector<std::int64_t> storage_ids;   ///< per entry; empty until plan_storage when the JSON has none
  std::vector<std::int64_t> device_index;  ///< per entry; empty when the JSON has none (all on the first device)

  std::size_t num_entries() const noexcept { return node_row_ptr.empty() ? 0 : node_row_ptr.back(); }
  std::uint32_t entry_id(std::uint32_t nid, std::uint32_t index) const noexcept { return node_row_ptr[nid] + index; }
  std::uint32_t entry_id(entry_ref e) const noexcept { return entry_id(e.node, e.index); }
  std::uint32_t num_node_outputs(std::uint32_t nid) const noexcept { return node_row_ptr[nid + 1] - node_row_ptr[nid]; }
};

namespace detail {
using relaxvm::detail::dims_text;
using relaxvm::detail::text;
using relaxvm::detail::value_error;
using json = nlohmann::ordered_json;  // keys in document order, as the reference reads them

/// "node 3 ('add')" for messages.
struct node_text {
  const graph_def& g;
  std::size_t nid;
  friend text& operator<<(text& t, const node_text& n) {
    t << "node " << n.nid;
    if (n.nid < n.g.nodes.size()) t << " ('" << n.g.nodes[n.nid].name << "')";
    return t;
  }
};

/// A JSON value for a message: a scalar's text (cut after 60 characters), or what a container is.
/// (dump() recurses, and a hostile graph may nest a hundred thousand levels deep.)
inline std::string brief(const json& j) {
  if (j.is_array()) return "an array of " + std::to_string(j.size()) + " elements";
  if (j.is_object()) return "an object with " + std::to_string(j.size()) + " keys";
  std::string s = j.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

/// Reads the JSON without ever throwing (the library may be built without exceptions): every
/// accessor checks the type first, and a wrong one is an error naming where it was.
class reader {
 public:
  static result<std::uint32_t> index(const json& j, const text& where) {
    if (!j.is_number_unsigned() || j.get<std::uint64_t>() > UINT32_MAX)
      return value_error("graph: ", where, " must be an unsigned integer below 2^32, but is ", brief(j));
    return static_cast<std::uint32_t>(j.get<std::uint64_t>());
  }
  static result<std::int64_t> integer(const json& j, const text& where) {
    if (!j.is_number_integer()) return value_error("graph: ", where, " must be an integer, but is ", brief(j));
    if (j.is_number_unsigned() && j.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
      return value_error("graph: ", where, " is too large: ", brief(j));
    return j.get<std::int64_t>();
  }
  static result<std::string> string(const json& j, const text& where) {
    if (!j.is_string()) return value_error("graph: ", where, " must be a string, but is ", brief(j));
    return j.get_ref<const std::string&>();
  }
  static status array(const json& j, const text& where) {
    if (!j.is_array()) return value_error("graph: ", where, " must be an array, but is ", brief(j));
    return {};
  }
  /// [node, index] or [node, index, version]
  static result<entry_ref> entry(const json& j, const text& where) {
    if (!j.is_array() || j.size() < 2 || j.size() > 3)
      return value_error("graph: ", where, " must be [node, index] or [node, index, version], but is ", brief(j));
    entry_ref e;
    RELAXVM_TRY_ASSIGN(e.node, index(j[0], text(where) << "'s node"));
    RELAXVM_TRY_ASSIGN(e.index, index(j[1], text(where) << "'s index"));
    if (j.size() == 3) RELAXVM_TRY(index(j[2], text(where) << "'s version"));
    return e;
  }
  /// A decimal string attribute ("2"), as the reference's node attrs are.
  static result<std::uint32_t> decimal(const std::string& s, const text& where) {
    std::uint64_t v = 0;
    if (s.empty() || s.size() > 10) return value_error("graph: ", where, " must be a decimal number, but is \"", s, "\"");
    for (char c : s) {
      if (c < '0' || c > '9') return value_error("graph: ", where, " must be a decimal number, but is \"", s, "\"");
      v = v * 10 + static_cast<std::uint64_t>(c - '0');
    }
    if (v > UINT32_MAX) return value_error("graph: ", where, " is too large: \"", s, "\"");
    return static_cast<std::uint32_t>(v);
  }
};

// The sax handler that finds where a JSON text stops being JSON, for the parse error's message.
struct json_error_finder : nlohmann::json_sax<json> {
  std::size_t position = 0;
  std::string token;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t pos, const std::string& last, const nlohmann::detail::exception&) override {
    position = pos;
    token = last;
    return false;
  }
};

inline result<node> parse_node(const json& j, std::size_t nid) {
  const text where = text("node ") << nid;
  if (!j.is_object()) return value_error("graph: ", where, " must be an object, but is ", brief(j));
  node n;
  bool has_op = false, has_name = false, has_inputs = false;
  const json* attrs = nullptr;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    if (k == "op") {
      RELAXVM_TRY_ASSIGN(n.op, reader::string(*it, text(where) << ".op"));
      has_op = true;
    } else if (k == "name") {
      RELAXVM_TRY_ASSIGN(n.name, reader::string(*it, text(where) << ".name"));
      has_name = true;
    } else if (k == "inputs") {
      RELAXVM_TRY(reader::array(*it, text(where) << ".inputs"));
      for (std::size_t i = 0; i < it->size(); ++i) {
        RELAXVM_TRY_ASSIGN(entry_ref e, reader::entry((*it)[i], text(where) << ".inputs[" << i << "]"));
        n.inputs.push_back(e);
      }
      has_inputs = true;
    } else if (k == "attrs" || k == "attr") {
      if (!it->is_object()) return value_error("graph: ", where, ".", k, " must be an object, but is ", brief(*it));
      attrs = &*it;
    } else if (k == "control_deps") {
      RELAXVM_TRY(reader::array(*it, text(where) << ".control_deps"));  // parsed and ignored, as the reference does
    } else {
      return value_error("graph: ", where, ": key '", k, "' is not supported");
    }
  }
  if (!has_op) return value_error("graph: ", where, " has no 'op'");
  if (!has_name) return value_error("graph: ", where, " has no 'name'");
  if (!has_inputs) return value_error("graph: ", where, " ('", n.name, "') has no 'inputs'");
  const text at = text(where) << " ('" << n.name << "')";
  if (n.op != "null" && n.op != "tvm_op")
    return value_error("graph: ", at, ": op is '", n.op, "'; only 'null' and 'tvm_op' are supported");
  if (attrs) {
    bool seen[4] = {};
    for (auto it = attrs->begin(); it != attrs->end(); ++it) {
      RELAXVM_TRY_ASSIGN(std::string v, reader::string(*it, text(at) << ".attrs." << it.key()));
      const std::string& k = it.key();
      const text key = text(at) << ".attrs." << k;
      if (k == "func_name") {
        n.func_name = v;
        seen[0] = true;
      } else if (k == "num_inputs") {
        RELAXVM_TRY_ASSIGN(n.num_inputs, reader::decimal(v, key));
        seen[1] = true;
      } else if (k == "num_outputs") {
        RELAXVM_TRY_ASSIGN(n.num_outputs, reader::decimal(v, key));
        seen[2] = true;
      } else if (k == "flatten_data") {
        RELAXVM_TRY_ASSIGN(std::uint32_t f, reader::decimal(v, key));
        if (f > 1) return value_error("graph: ", key, " must be \"0\" or \"1\", but is \"", v, "\"");
        n.flatten_data = f == 1;
        seen[3] = true;
      } else {
        n.attrs.emplace_back(k, v);
      }
    }
    if (n.op == "tvm_op") {
      constexpr std::string_view names[] = {"func_name", "num_inputs", "num_outputs", "flatten_data"};
      for (std::size_t i = 0; i < 4; ++i)
        if (!seen[i]) return value_error("graph: ", at, " has no attrs.", names[i], " (a tvm_op needs all four)");
    }
  } else if (n.op == "tvm_op") {
    return value_error("graph: ", at, " is a tvm_op without attrs (func_name, num_inputs, num_outputs, flatten_data)");
  }
  if (n.op == "null") n.num_inputs = 0;
  return n;
}

/// attrs.<name>: ["<tag>", [...]] with the tag the reference writes.
inline result<const json*> tagged_list(const json& attrs, std::string_view name, std::string_view tag) {
  auto it = attrs.find(std::string(name));
  if (it == attrs.end()) return static_cast<const json*>(nullptr);
  if (!it->is_array() || it->size() != 2 || !(*it)[0].is_string() || (*it)[0].get_ref<const std::string&>() != tag ||
      !(*it)[1].is_array())
    return value_error("graph: attrs.", name, " must be [\"", tag, "\", [...]], but is ", brief(*it));
  return &(*it)[1];
}

inline status parse_attrs(const json& attrs, graph_def& g) {
  if (!attrs.is_object()) return value_error("graph: attrs must be an object, but is ", brief(attrs));
  for (auto it = attrs.begin(); it != attrs.end(); ++it) {
    const std::string& k = it.key();
    if (k == "dltype" || k == "shape" || k == "storage_id" || k == "device_index" || k == "storage_scope") continue;
    // Other attributes are skipped when their type tag is one the reference skips.
    if (!it->is_array() || it->empty() || !(*it)[0].is_string() ||
        ((*it)[0] != "list_int" && (*it)[0] != "size_t" && (*it)[0] != "list_str"))
      return value_error("graph: attrs.", k, " has a type tag the reference does not know: ", brief(*it));
  }
  RELAXVM_TRY_ASSIGN(const json* dl, tagged_list(attrs, "dltype", "list_str"));
  RELAXVM_TRY_ASSIGN(const json* sh, tagged_list(attrs, "shape", "list_shape"));
  RELAXVM_TRY_ASSIGN(const json* sid, tagged_list(attrs, "storage_id", "list_int"));
  RELAXVM_TRY_ASSIGN(const json* dev, tagged_list(attrs, "device_index", "list_int"));
  RELAXVM_TRY_ASSIGN(const json* scope, tagged_list(attrs, "storage_scope", "list_str"));
  if (!dl) return value_error("graph: attrs has no dltype");
  if (!sh) return value_error("graph: attrs has no shape");
  for (std::size_t i = 0; i < dl->size(); ++i) {
    RELAXVM_TRY_ASSIGN(std::string s, reader::string((*dl)[i], text("attrs.dltype[") << i << "]"));
    dtype t;
    if (!parse_dtype(s, t)) return value_error("graph: attrs.dltype[", i, "] is \"", s, "\", not a dtype");
    g.dtypes.push_back(t);
  }
  for (std::size_t i = 0; i < sh->size(); ++i) {
    const text where = text("attrs.shape[") << i << "]";
    RELAXVM_TRY(reader::array((*sh)[i], where));
    std::vector<std::int64_t> dims;
    for (std::size_t k = 0; k < (*sh)[i].size(); ++k) {
      RELAXVM_TRY_ASSIGN(std::int64_t d, reader::integer((*sh)[i][k], text(where) << "[" << k << "]"));
      dims.push_back(d);
    }
    g.shapes.push_back(shape(dims));
  }
  for (auto [list, out, what] : {std::tuple{sid, &g.storage_ids, "storage_id"}, std::tuple{dev, &g.device_index, "device_index"}}) {
    if (!list) continue;
    for (std::size_t i = 0; i < list->size(); ++i) {
      RELAXVM_TRY_ASSIGN(std::int64_t v, reader::integer((*list)[i], text("attrs.") << what << "[" << i << "]"));
      out->push_back(v);
    }
  }
  if (scope) {
    for (std::size_t i = 0; i < scope->size(); ++i) {
      RELAXVM_TRY_ASSIGN(std::string s, reader::string((*scope)[i], text("attrs.storage_scope[") << i << "]"));
      if (!s.empty() && s != "global")
        return value_error("graph: attrs.storage_scope[", i, "] is \"", s, "\"; only global (flat) memory is supported");
    }
  }
  return {};
}

/// The bytes entry `eid` needs: its element count times its dtype's bytes (already validated).
inline std::int64_t entry_bytes(const graph_def& g, std::size_t eid) {
  std::int64_t numel = 0, nbytes = 0;
  (void)relaxvm::detail::check_tensor_layout(g.shapes[eid].dims(), g.dtypes[eid], numel, nbytes, "graph");
  return nbytes;
}

}  // namespace detail

/// Checks everything the executor relies on, naming the node at fault: the row pointers, every
/// input and head index, topological order (so no cycles), arg_nodes, the per-entry attributes'
/// lengths, dtypes and shapes, the operator arities, and __copy's shapes.
inline status validate(const graph_def& g) {
  using detail::node_text;
  using detail::value_error;
  const std::size_t n = g.nodes.size();
  if (g.node_row_ptr.size() != n + 1)
    return value_error("graph: node_row_ptr has ", g.node_row_ptr.size(), " elements; ", n, " nodes need ", n + 1);
  if (g.node_row_ptr[0] != 0) return value_error("graph: node_row_ptr must start at 0, but starts at ", g.node_row_ptr[0]);
  for (std::size_t i = 0; i < n; ++i) {
    if (g.node_row_ptr[i + 1] < g.node_row_ptr[i])
      return value_error("graph: node_row_ptr decreases at ", node_text{g, i}, " (", g.node_row_ptr[i], " then ",
                         g.node_row_ptr[i + 1], ")");
  }
  const std::size_t entries = g.num_entries();
  for (auto [size, what] : {std::pair{g.dtypes.size(), "dltype"}, std::pair{g.shapes.size(), "shape"}}) {
    if (size != entries) return value_error("graph: attrs.", what, " has ", size, " elements, but the graph has ", entries, " entries");
  }
  for (auto [v, what] : {std::pair{&g.storage_ids, "storage_id"}, std::pair{&g.device_index, "device_index"}}) {
    if (!v->empty() && v->size() != entries)
      return value_error("graph: attrs.", what, " has ", v->size(), " elements, but the graph has ", entries, " entries");
  }
  for (std::uint32_t nid = 0; nid < n; ++nid) {
    const node& nd = g.nodes[nid];
    const std::uint32_t outputs = g.num_node_outputs(nid);
    if (nd.is_input()) {
      if (!nd.inputs.empty()) return value_error("graph: ", node_text{g, nid}, " is a null (input) node with inputs");
      if (outputs != 1) return value_error("graph: ", node_text{g, nid}, " is an input with ", outputs, " outputs; it must have 1");
    } else {
      if (nd.num_outputs != outputs)
        return value_error("graph: ", node_text{g, nid}, " says num_outputs = ", nd.num_outputs, " but node_row_ptr gives it ", outputs);
      if (nd.num_inputs != nd.inputs.size())
        return value_error("graph: ", node_text{g, nid}, " says num_inputs = ", nd.num_inputs, " but lists ", nd.inputs.size());
    }
    for (std::size_t i = 0; i < nd.inputs.size(); ++i) {
      const entry_ref e = nd.inputs[i];
      if (e.node >= nid)
        return value_error("graph: ", node_text{g, nid}, " reads ", e.node < n ? "" : "missing ", node_text{g, e.node},
                           ", which does not come before it: nodes must be in topological order (is there a cycle?)");
      if (e.index >= g.num_node_outputs(e.node))
        return value_error("graph: ", node_text{g, nid}, " input ", i, " is output ", e.index, " of ", node_text{g, e.node},
                           ", which has ", g.num_node_outputs(e.node), " outputs");
    }
    if (!nd.is_input() && outputs == 0) return value_error("graph: ", node_text{g, nid}, " has no outputs");
    if (nd.func_name == "__copy" || nd.func_name == "__nop") {
      if (nd.inputs.size() != 1 || outputs != 1)
        return value_error("graph: ", node_text{g, nid}, " is a ", nd.func_name, " with ", nd.inputs.size(), " inputs and ",
                           outputs, " outputs; it must have 1 and 1");
    }
  }
  for (std::size_t eid = 0; eid < entries; ++eid) {
    std::int64_t numel = 0, nbytes = 0;
    detail::text what("graph: entry ");
    what << eid;
    RELAXVM_TRY(relaxvm::detail::check_tensor_layout(g.shapes[eid].dims(), g.dtypes[eid], numel, nbytes, what.view()));
    if (!g.storage_ids.empty() && g.storage_ids[eid] < 0)
      return value_error("graph: entry ", eid, " has storage_id ", g.storage_ids[eid], "; it must be 0 or more");
    if (!g.device_index.empty() && g.device_index[eid] < 0)
      return value_error("graph: entry ", eid, " has device_index ", g.device_index[eid], "; it must be 0 or more");
  }
  for (std::uint32_t nid = 0; nid < n; ++nid) {
    const node& nd = g.nodes[nid];
    const bool copy = nd.func_name == "__copy";
    if (!copy && nd.func_name != "__nop") continue;
    const std::uint32_t in = g.entry_id(nd.inputs[0]), out = g.entry_id(nid, 0);
    if (detail::entry_bytes(g, in) != detail::entry_bytes(g, out) || g.dtypes[in] != g.dtypes[out])
      return value_error("graph: ", node_text{g, nid}, (copy ? " copies " : " reshapes "), detail::dims_text{g.shapes[in].dims()},
                         " ", g.dtypes[in], " to ", detail::dims_text{g.shapes[out].dims()}, " ", g.dtypes[out], "; a ",
                         nd.func_name, " keeps the bytes and the dtype");
    if (copy) continue;
    // A __nop's output is its input's memory: the same storage and device.
    if (!g.storage_ids.empty() && g.storage_ids[in] != g.storage_ids[out])
      return value_error("graph: ", node_text{g, nid}, " is a __nop whose output has storage_id ", g.storage_ids[out],
                         " but its input ", g.storage_ids[in], "; they must be the same");
    if (!g.device_index.empty() && g.device_index[in] != g.device_index[out])
      return value_error("graph: ", node_text{g, nid}, " is a __nop from device_index ", g.device_index[in], " to ",
                         g.device_index[out], "; use a __copy to move data");
  }
  std::vector<bool> is_arg(n, false);
  for (std::size_t i = 0; i < g.arg_nodes.size(); ++i) {
    const std::uint32_t nid = g.arg_nodes[i];
    if (nid >= n) return value_error("graph: arg_nodes[", i, "] is node ", nid, ", but the graph has ", n, " nodes");
    if (!g.nodes[nid].is_input()) return value_error("graph: arg_nodes[", i, "] is ", node_text{g, nid}, ", which is not a null (input) node");
    if (is_arg[nid]) return value_error("graph: arg_nodes lists ", node_text{g, nid}, " twice");
    is_arg[nid] = true;
    for (std::size_t k = 0; k < i; ++k)
      if (g.nodes[g.arg_nodes[k]].name == g.nodes[nid].name)
        return value_error("graph: ", node_text{g, g.arg_nodes[k]}, " and ", node_text{g, nid}, " are inputs with the same name");
  }
  for (std::uint32_t nid = 0; nid < n; ++nid)
    if (g.nodes[nid].is_input() && !is_arg[nid])
      return value_error("graph: ", node_text{g, nid}, " is a null (input) node missing from arg_nodes");
  for (std::size_t i = 0; i < g.heads.size(); ++i) {
    const entry_ref e = g.heads[i];
    if (e.node >= n || e.index >= g.num_node_outputs(e.node))
      return value_error("graph: heads[", i, "] is [", e.node, ", ", e.index, "], which is not an output of the graph's ", n, " nodes");
  }
  return {};
}

/// Reads a graph JSON as the reference's GraphExecutor::Load does (unknown keys are errors; keys
/// are read in document order and reading stops at "metadata"), then validates it.
inline result<graph_def> parse_graph(std::string_view text) {
  using detail::json;
  using detail::value_error;
  const json j = json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded()) {
    detail::json_error_finder finder;
    (void)json::sax_parse(text.begin(), text.end(), &finder, json::input_format_t::json, true);
    return value_error("graph: the JSON does not parse: at byte ", finder.position, " (near '", finder.token, "')");
  }
  if (!j.is_object()) return value_error("graph: the JSON must be an object, but is ", detail::brief(j));
  graph_def g;
  bool has[5] = {};
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    if (k == "nodes") {
      RELAXVM_TRY(detail::reader::array(*it, detail::text("nodes")));
      for (std::size_t i = 0; i < it->size(); ++i) {
        RELAXVM_TRY_ASSIGN(node nd, detail::parse_node((*it)[i], i));
        g.nodes.push_back(std::move(nd));
      }
      has[0] = true;
    } else if (k == "arg_nodes" || k == "node_row_ptr") {
      RELAXVM_TRY(detail::reader::array(*it, detail::text(k)));
      auto& out = k == "arg_nodes" ? g.arg_nodes : g.node_row_ptr;
      for (std::size_t i = 0; i < it->size(); ++i) {
        RELAXVM_TRY_ASSIGN(std::uint32_t v, detail::reader::index((*it)[i], detail::text(k) << "[" << i << "]"));
        out.push_back(v);
      }
      has[k == "arg_nodes" ? 1 : 2] = true;
    } else if (k == "heads") {
      RELAXVM_TRY(detail::reader::array(*it, detail::text("heads")));
      for (std::size_t i = 0; i < it->size(); ++i) {
        RELAXVM_TRY_ASSIGN(entry_ref e, detail::reader::entry((*it)[i], detail::text("heads[") << i << "]"));
        g.heads.push_back(e);
      }
      has[3] = true;
    } else if (k == "attrs") {
      RELAXVM_TRY(detail::parse_attrs(*it, g));
      has[4] = true;
    } else if (k == "metadata") {
      break;  // the reference stops reading here
    } else {
      return value_error("graph: key '", k, "' is not supported");
    }
  }
  constexpr std::string_view required[] = {"nodes", "arg_nodes", "node_row_ptr", "heads", "attrs"};
  for (std::size_t i = 0; i < 5; ++i)
    if (!has[i]) return value_error("graph: the JSON has no '", required[i], "'");
  RELAXVM_TRY(validate(g));
  return g;
}

/// Assigns storage ids by liveness, as the reference's planner (graph_plan_memory.cc) does for the
/// program the graph was made from: inputs and parameters get their own storage and keep it;
/// each operator's outputs are requested before its inputs are released (so an output never
/// shares its own inputs' storage), a __nop output shares its input's, an unused output is free at
/// once, and a request takes the smallest free storage of at least its size on the same device
/// (the earliest freed among equals), else the largest smaller one, within a factor of 16, else
/// new storage. The graph must be valid.
inline void plan_storage(graph_def& g) {
  struct token {
    std::int64_t sid;
    std::int64_t bytes;
    std::int64_t device;
    std::int64_t refs = 0;
    bool pinned = false;  // inputs and parameters: never freed
  };
  const std::size_t entries = g.num_entries();
  std::vector<std::int64_t> uses(entries, 0);
  for (const node& nd : g.nodes)
    for (const entry_ref& e : nd.inputs) ++uses[g.entry_id(e)];
  for (const entry_ref& e : g.heads) ++uses[g.entry_id(e)];  // outputs are never freed
  std::vector<token> tokens;
  tokens.reserve(entries);
  std::vector<std::size_t> token_of(entries);
  std::multimap<std::int64_t, std::size_t> free_list;  // bytes -> token; equal sizes in the order freed
  std::int64_t next_sid = 0;
  constexpr std::int64_t match_range = 16;
  auto device_of = [&](std::size_t eid) { return g.device_index.empty() ? 0 : g.device_index[eid]; };
  auto request = [&](std::size_t eid) {
    const std::int64_t size = detail::entry_bytes(g, eid);
    const std::int64_t dev = device_of(eid);
    auto take = [&](std::multimap<std::int64_t, std::size_t>::iterator it) {
      const std::size_t t = it->second;
      free_list.erase(it);
      tokens[t].bytes = std::max(tokens[t].bytes, size);
      tokens[t].refs = uses[eid];
      return t;
    };
    const auto mid = free_list.lower_bound(size);
    const auto end = free_list.upper_bound(size > INT64_MAX / match_range ? INT64_MAX : size * match_range);
    for (auto it = mid; it != end; ++it)
      if (tokens[it->second].device == dev) return take(it);
    const auto begin = free_list.lower_bound(size / match_range);
    for (auto it = mid; it != begin;) {
      --it;
      if (tokens[it->second].device == dev) return take(it);
    }
    tokens.push_back(token{next_sid++, size, dev, uses[eid]});
    return tokens.size() - 1;
  };
  auto release_if_dead = [&](std::size_t t) {
    if (tokens[t].refs == 0 && !tokens[t].pinned) free_list.emplace(tokens[t].bytes, t);
  };
  for (std::uint32_t nid = 0; nid < g.nodes.size(); ++nid) {
    const node& nd = g.nodes[nid];
    const std::uint32_t first = g.entry_id(nid, 0);
    if (nd.is_input()) {  // fresh storage, kept for good
      tokens.push_back(token{next_sid++, detail::entry_bytes(g, first), device_of(first), uses[first], true});
      token_of[first] = tokens.size() - 1;
      continue;
    }
    if (nd.func_name == "__nop" && !nd.inputs.empty()) {  // reshape-only: the output is the input
      const std::size_t t = token_of[g.entry_id(nd.inputs[0])];
      for (std::uint32_t k = 0; k < g.num_node_outputs(nid); ++k) token_of[first + k] = t;
      tokens[t].refs += uses[first];
    } else {
      for (std::uint32_t k = 0; k < g.num_node_outputs(nid); ++k) token_of[first + k] = request(first + k);
      for (std::uint32_t k = 0; k < g.num_node_outputs(nid); ++k) release_if_dead(token_of[first + k]);
    }
    for (const entry_ref& e : nd.inputs) {
      const std::size_t t = token_of[g.entry_id(e)];
      --tokens[t].refs;
      release_if_dead(t);
    }
  }
  g.storage_ids.resize(entries);
  for (std::size_t eid = 0; eid < entries; ++eid) g.storage_ids[eid] = tokens[token_of[eid]].sid;
}

}  // namespace relaxvm::graph

#endif  // RELAXVM_GRAPH_FORMAT_HPP
