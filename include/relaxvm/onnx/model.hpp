// SPDX-License-Identifier: Apache-2.0
// An ONNX model as it is in its file: ModelProto, GraphProto, NodeProto, AttributeProto,
// TensorProto and ValueInfoProto (onnx.proto, ONNX 1.12 / IR version 8) read into plain structs
// whose strings and tensor data are views of the input bytes (nothing is copied; keep the bytes
// alive while the model is used). Every field's wire type is checked before it is read, every
// length and count is bounded by the bytes left, and a malformed file gives an error naming the
// message, the field and the byte offset. Fields relaxvm does not use are skipped.
#ifndef RELAXVM_ONNX_MODEL_HPP
#define RELAXVM_ONNX_MODEL_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/error.hpp"
#include "wire.hpp"

namespace relaxvm::RELAXVM_ABI::onnx {

/// TensorProto.DataType.
enum class data_type : std::int32_t {
  undefined = 0, float32 = 1, uint8 = 2, int8 = 3, uint16 = 4, int16 = 5, int32 = 6, int64 = 7, string = 8,
  boolean = 9, float16 = 10, float64 = 11, uint32 = 12, uint64 = 13, complex64 = 14, complex128 = 15, bfloat16 = 16,
};

/// ONNX's name of a data type ("FLOAT", "INT64", ...), or "" for a number it does not define.
constexpr std::string_view data_type_name(std::int32_t t) {
  constexpr std::string_view names[] = {"UNDEFINED", "FLOAT",  "UINT8",  "INT8",   "UINT16",    "INT16",
                                        "INT32",     "INT64",  "STRING", "BOOL",   "FLOAT16",   "DOUBLE",
                                        "UINT32",    "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16"};
  return t >= 0 && t < 17 ? names[t] : std::string_view();
}

/// A dimension of a declared shape: a number, a name (dim_param: one name, one symbolic
/// variable), or neither (unknown).
struct dimension {
  std::int64_t value = -1;  // >= 0 when known
  std::string_view param;   // non-empty when named
  bool known() const { return value >= 0; }
};

/// A TypeProto, as far as relaxvm uses it: tensors with their element type and shape; other
/// kinds (sequence, map, optional, sparse tensor, opaque) are named so that errors can say so.
struct type_info {
  enum class kind : std::uint8_t { none, tensor, sequence, map, optional, sparse_tensor, opaque };
  kind what = kind::none;
  std::int32_t elem_type = 0;  // data_type of a tensor
  bool has_shape = false;      // false: the rank is unknown too
  std::vector<dimension> shape;
};

/// A ValueInfoProto: a graph's input, output or annotated intermediate.
struct value_info {
  std::string_view name;
  type_info type;
  std::size_t offset = 0;
};

/// A TensorProto. The data stays in the file: `raw_data`, or one of the typed repeated fields
/// (read again from `message` when the tensor is made: `typed_field` says which, `typed_count`
/// how many elements it holds), or external (`external_data`'s location/offset/length).
struct tensor_info {
  std::string_view name;
  std::vector<std::int64_t> dims;
  std::int32_t data_type = 0;
  bool has_raw_data = false;
  std::span<const std::byte> raw_data;
  std::size_t raw_data_offset = 0;
  std::uint32_t typed_field = 0;  // 4 float_data, 5 int32_data, 6 string_data, 7 int64_data, 10 double_data, 11 uint64_data
  std::int64_t typed_count = 0;
  bool external = false;  // data_location == EXTERNAL
  std::vector<std::pair<std::string_view, std::string_view>> external_data;
  bool has_segment = false;
  std::span<const std::byte> message;  // the whole TensorProto
  std::size_t offset = 0;              // of the message in the input
};

struct graph_info;

/// AttributeProto.AttributeType.
enum class attribute_type : std::int32_t {
  undefined = 0, f = 1, i = 2, s = 3, t = 4, g = 5, floats = 6, ints = 7, strings = 8, tensors = 9, graphs = 10,
  sparse_tensor = 11, sparse_tensors = 12, type_proto = 13, type_protos = 14,
};

/// An AttributeProto. `type` says which value is set (files written before IR version 4 may
/// leave it 0: then it is inferred from the one value field present).
struct attribute_info {
  std::string_view name;
  attribute_type type = attribute_type::undefined;
  std::string_view ref_attr_name;  // in a function body: the caller's attribute it stands for
  float f = 0;
  std::int64_t i = 0;
  std::string_view s;
  std::unique_ptr<tensor_info> t;
  std::unique_ptr<graph_info> g;
  std::vector<float> floats;
  std::vector<std::int64_t> ints;
  std::vector<std::string_view> strings;
  std::vector<tensor_info> tensors;
  std::vector<graph_info> graphs;
  std::size_t offset = 0;
};

/// A NodeProto. An empty input name is an omitted optional input.
struct node_info {
  std::vector<std::string_view> inputs, outputs;
  std::string_view name, op_type, domain;
  std::vector<attribute_info> attributes;
  std::size_t offset = 0;

  const attribute_info* attribute(std::string_view n) const {
    for (const attribute_info& a : attributes)
      if (a.name == n) return &a;
    return nullptr;
  }
};

/// A GraphProto.
struct graph_info {
  std::string_view name;
  std::vector<node_info> nodes;
  std::vector<tensor_info> initializers;
  std::vector<value_info> inputs, outputs, value_infos;
  std::int64_t sparse_initializers = 0;  // counted, not read: the importer refuses them
  std::size_t offset = 0;
};

/// An OperatorSetIdProto: which version of a domain's operators the model means ("" and
/// "ai.onnx" are the default domain).
struct opset_id {
  std::string_view domain;
  std::int64_t version = 0;
};

/// A ModelProto.
struct model_info {
  std::int64_t ir_version = 0;
  std::vector<opset_id> opset_import;
  std::string_view producer_name, producer_version, domain, doc_string;
  std::int64_t model_version = 0;
  bool has_graph = false;
  graph_info graph;
  std::int64_t functions = 0;  // model-local functions (FunctionProto), counted
  std::int64_t training_infos = 0;

  /// The opset version the model imports for a domain ("" and "ai.onnx" are one), or 0.
  std::int64_t opset(std::string_view d) const {
    const auto same = [](std::string_view a, std::string_view b) {
      const auto norm = [](std::string_view x) { return x == "ai.onnx" ? std::string_view() : x; };
      return norm(a) == norm(b);
    };
    for (const opset_id& o : opset_import)
      if (same(o.domain, d)) return o.version;
    return 0;
  }
};

namespace detail {

/// Nested graphs (If, Loop and Scan bodies) and types (a sequence of sequences) beyond this many
/// levels are refused: the reader recurses, and hostile files must not exhaust the stack.
inline constexpr int max_nesting = 64;

// The messages' readers. Each reads one message's fields; a failure records what and where in
// `p` and returns false, and the caller returns false too, so the first error reaches parse().
struct parser {
  explicit parser(std::span<const std::byte> bytes) : all(bytes) {}
  std::span<const std::byte> all;
  int depth = 0;
  // Set by the first failure.
  bool failed = false;
  std::string_view message_name, field_name, problem;
  std::size_t at = 0;

  bool fail(std::string_view msg, std::string_view fld, std::string_view what, std::size_t offset) {
    if (!failed) {
      failed = true;
      message_name = msg;
      field_name = fld;
      problem = what;
      at = offset;
    }
    return false;
  }
  bool wire_failed(std::string_view msg, const wire_reader& r) {
    return fail(msg, "", r.failure().what, r.failure().offset);
  }
  // A field of the wrong wire type: ONNX's writers never do this, so it is a malformed file.
  bool expect(std::string_view msg, std::string_view fld, const field& f, wire w) {
    if (f.type == w) return true;
    return fail(msg, fld, w == wire::len ? "has a numeric wire type where a length-delimited value belongs"
                                         : "has the wrong wire type for its declared type", f.offset);
  }
  bool nested(std::string_view msg, std::string_view fld, const field& f) {
    if (depth < max_nesting) return true;
    return fail(msg, fld, "nests graphs or types more than 64 levels deep", f.offset);
  }

  bool read_dimension(const field& outer, dimension& d) {
    wire_reader r = wire_reader::of(all, outer);
    field f;
    while (r.next(f)) {
      if (f.number == 1) {
        if (!expect("TensorShapeProto.Dimension", "dim_value", f, wire::varint)) return false;
        if (f.as_int64() < 0) return fail("TensorShapeProto.Dimension", "dim_value", "is negative", f.offset);
        d.value = f.as_int64();
        d.param = {};
      } else if (f.number == 2) {
        if (!expect("TensorShapeProto.Dimension", "dim_param", f, wire::len)) return false;
        d.param = f.text();
        d.value = -1;
      }
    }
    return !r.failed() || wire_failed("TensorShapeProto.Dimension", r);
  }

  bool read_shape(const field& outer, std::vector<dimension>& shape) {
    wire_reader r = wire_reader::of(all, outer);
    field f;
    while (r.next(f)) {
      if (f.number != 1) continue;
      if (!expect("TensorShapeProto", "dim", f, wire::len)) return false;
      shape.emplace_back();
      if (!read_dimension(f, shape.back())) return false;
    }
    return !r.failed() || wire_failed("TensorShapeProto", r);
  }

  // TypeProto.Tensor and TypeProto.SparseTensor share their fields.
  bool read_tensor_type(const field& outer, type_info& t) {
    wire_reader r = wire_reader::of(all, outer);
    field f;
    while (r.next(f)) {
      if (f.number == 1) {
        if (!expect("TypeProto.Tensor", "elem_type", f, wire::varint)) return false;
        t.elem_type = f.as_int32();
      } else if (f.number == 2) {
        if (!expect("TypeProto.Tensor", "shape", f, wire::len)) return false;
        t.has_shape = true;
        t.shape.clear();
        if (!read_shape(f, t.shape)) return false;
      }
    }
    return !r.failed() || wire_failed("TypeProto.Tensor", r);
  }

  bool read_type(const field& outer, type_info& t) {
    wire_reader r = wire_reader::of(all, outer);
    field f;
    while (r.next(f)) {
      switch (f.number) {
        case 1:
        case 8:
          if (!expect("TypeProto", f.number == 1 ? "tensor_type" : "sparse_tensor_type", f, wire::len)) return false;
          t.what = f.number == 1 ? type_info::kind::tensor : type_info::kind::sparse_tensor;
          if (!read_tensor_type(f, t)) return false;
          break;
        case 4: t.what = type_info::kind::sequence; break;
        case 5: t.what = type_info::kind::map; break;
        case 7: t.what = type_info::kind::opaque; break;
        case 9: t.what = type_info::kind::optional; break;
        default: break;
      }
    }
    return !r.failed() || wire_failed("TypeProto", r);
  }

  bool read_value_info(const field& outer, value_info& v) {
    v.offset = outer.offset;
    wire_reader r = wire_reader::of(all, outer);
    field f;
    while (r.next(f)) {
      if (f.number == 1) {
        if (!expect("ValueInfoProto", "name", f, wire::len)) return false;
        v.name = f.text();
      } else if (f.number == 2) {
        if (!expect("ValueInfoProto", "type", f, wire::len)) return false;
        v.type = type_info{};
        if (!read_type(f, v.type)) return false;
      }
    }
    return !r.failed() || wire_failed("ValueInfoProto", r);
  }

  // The unit of a typed data field: 0 for varints, 4 or 8 for fixed-width, -1 for bytes.
  static int typed_unit(std::uint32_t number) {
    switch (number) {
      case 4: return 4;    // float_data
      case 10: return 8;   // double_data
      case 6: return -1;   // string_data
      default: return 0;   // int32_data, int64_data, uint64_data
    }
  }
  static std::string_view typed_name(std::uint32_t number) {
    switch (number) {
      case 4: return "float_data";
      case 5: return "int32_data";
      case 6: return "string_data";
      case 7: return "int64_data";
      case 10: return "double_data";
      default: return "uint64_data";
    }
  }

  bool read_tensor(const field& outer, tensor_info& t) {
    t.message = outer.bytes;
    t.offset = outer.bytes_offset;
    wire_reader r = wire_reader::of(all, outer);
    field f;
    while (r.next(f)) {
      switch (f.number) {
        case 1:
          if (!for_each_element(f, 0, [&](std::uint64_t v) { t.dims.push_back(static_cast<std::int64_t>(v)); }))
            return fail("TensorProto", "dims", "is not a list of varints", f.offset);
          break;
        case 2:
          if (!expect("TensorProto", "data_type", f, wire::varint)) return false;
          t.data_type = f.as_int32();
          break;
        case 3: t.has_segment = true; break;
        case 8:
          if (!expect("TensorProto", "name", f, wire::len)) return false;
          t.name = f.text();
          break;
        case 9:
          if (!expect("TensorProto", "raw_data", f, wire::len)) return false;
          t.has_raw_data = true;
          t.raw_data = f.bytes;
          t.raw_data_offset = f.bytes_offset;
          break;
        case 4: case 5: case 6: case 7: case 10: case 11: {
          if (t.typed_field != 0 && t.typed_field != f.number)
            return fail("TensorProto", typed_name(f.number), "is set together with another typed data field", f.offset);
          t.typed_field = f.number;
          const int unit = typed_unit(f.number);
          if (unit < 0) {
            if (!expect("TensorProto", "string_data", f, wire::len)) return false;
            ++t.typed_count;
            break;
          }
          const std::int64_t n = count_elements(f, unit);
          if (n < 0) return fail("TensorProto", typed_name(f.number), "does not hold whole elements of its type", f.offset);
          t.typed_count += n;
          break;
        }
        case 13: {
          if (!expect("TensorProto", "external_data", f, wire::len)) return false;
          wire_reader e = wire_reader::of(all, f);
          field kv;
          std::pair<std::string_view, std::string_view> entry;
          while (e.next(kv)) {
            if (kv.number != 1 && kv.number != 2) continue;
            if (!expect("StringStringEntryProto", kv.number == 1 ? "key" : "value", kv, wire::len)) return false;
            (kv.number == 1 ? entry.first : entry.second) = kv.text();
          }
          if (e.failed()) return wire_failed("StringStringEntryProto", e);
          t.external_data.push_back(entry);
          break;
        }
        case 14:
          if (!expect("TensorProto", "data_location", f, wire::varint)) return false;
          t.external = f.bits == 1;
          break;
        default: break;
      }
    }
    return !r.failed() || wire_failed("TensorProto", r);
  }

  bool read_attribute(const field& outer, attribute_info& a) {
    a.offset = outer.offset;
    wire_reader r = wire_reader::of(all, outer);
    field f;
    constexpr std::string_view m = "AttributeProto";
    while (r.next(f)) {
      switch (f.number) {
        case 1:
          if (!expect(m, "name", f, wire::len)) return false;
          a.name = f.text();
          break;
        case 20:
          if (!expect(m, "type", f, wire::varint)) return false;
          a.type = static_cast<attribute_type>(f.as_int32());
          break;
        case 21:
          if (!expect(m, "ref_attr_name", f, wire::len)) return false;
          a.ref_attr_name = f.text();
          break;
        case 2:
          if (!expect(m, "f", f, wire::fixed32)) return false;
          a.f = f.as_float();
          break;
        case 3:
          if (!expect(m, "i", f, wire::varint)) return false;
          a.i = f.as_int64();
          break;
        case 4:
          if (!expect(m, "s", f, wire::len)) return false;
          a.s = f.text();
          break;
        case 5:
          if (!expect(m, "t", f, wire::len)) return false;
          a.t = std::make_unique<tensor_info>();
          if (!read_tensor(f, *a.t)) return false;
          break;
        case 6: {
          if (!expect(m, "g", f, wire::len) || !nested(m, "g", f)) return false;
          a.g = std::make_unique<graph_info>();
          ++depth;
          const bool ok = read_graph(f, *a.g);
          --depth;
          if (!ok) return false;
          break;
        }
        case 7:
          if (!for_each_element(f, 4, [&](std::uint64_t v) { a.floats.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(v))); }))
            return fail(m, "floats", "is not a list of 32-bit floats", f.offset);
          break;
        case 8:
          if (!for_each_element(f, 0, [&](std::uint64_t v) { a.ints.push_back(static_cast<std::int64_t>(v)); }))
            return fail(m, "ints", "is not a list of varints", f.offset);
          break;
        case 9:
          if (!expect(m, "strings", f, wire::len)) return false;
          a.strings.push_back(f.text());
          break;
        case 10:
          if (!expect(m, "tensors", f, wire::len)) return false;
          a.tensors.emplace_back();
          if (!read_tensor(f, a.tensors.back())) return false;
          break;
        case 11: {
          if (!expect(m, "graphs", f, wire::len) || !nested(m, "graphs", f)) return false;
          a.graphs.emplace_back();
          ++depth;
          const bool ok = read_graph(f, a.graphs.back());
          --depth;
          if (!ok) return false;
          break;
        }
        default: break;
      }
    }
    if (r.failed()) return wire_failed(m, r);
    if (a.type == attribute_type::undefined) {  // IR < 4: the one value present says the type
      if (a.t) a.type = attribute_type::t;
      else if (a.g) a.type = attribute_type::g;
      else if (!a.floats.empty()) a.type = attribute_type::floats;
      else if (!a.ints.empty()) a.type = attribute_type::ints;
      else if (!a.strings.empty()) a.type = attribute_type::strings;
      else if (!a.tensors.empty()) a.type = attribute_type::tensors;
      else if (!a.graphs.empty()) a.type = attribute_type::graphs;
      else if (!a.s.empty()) a.type = attribute_type::s;
    }
    return true;
  }

  bool read_node(const field& outer, node_info& n) {
    n.offset = outer.offset;
    wire_reader r = wire_reader::of(all, outer);
    field f;
    constexpr std::string_view m = "NodeProto";
    while (r.next(f)) {
      switch (f.number) {
        case 1:
        case 2:
          if (!expect(m, f.number == 1 ? "input" : "output", f, wire::len)) return false;
          (f.number == 1 ? n.inputs : n.outputs).push_back(f.text());
          break;
        case 3:
          if (!expect(m, "name", f, wire::len)) return false;
          n.name = f.text();
          break;
        case 4:
          if (!expect(m, "op_type", f, wire::len)) return false;
          n.op_type = f.text();
          break;
        case 7:
          if (!expect(m, "domain", f, wire::len)) return false;
          n.domain = f.text();
          break;
        case 5:
          if (!expect(m, "attribute", f, wire::len)) return false;
          n.attributes.emplace_back();
          if (!read_attribute(f, n.attributes.back())) return false;
          break;
        default: break;
      }
    }
    return !r.failed() || wire_failed(m, r);
  }

  bool read_graph(const field& outer, graph_info& g) {
    g.offset = outer.offset;
    wire_reader r = wire_reader::of(all, outer);
    field f;
    constexpr std::string_view m = "GraphProto";
    while (r.next(f)) {
      switch (f.number) {
        case 1:
          if (!expect(m, "node", f, wire::len)) return false;
          g.nodes.emplace_back();
          if (!read_node(f, g.nodes.back())) return false;
          break;
        case 2:
          if (!expect(m, "name", f, wire::len)) return false;
          g.name = f.text();
          break;
        case 5:
          if (!expect(m, "initializer", f, wire::len)) return false;
          g.initializers.emplace_back();
          if (!read_tensor(f, g.initializers.back())) return false;
          break;
        case 15: ++g.sparse_initializers; break;
        case 11:
        case 12:
        case 13: {
          const std::string_view name = f.number == 11 ? "input" : f.number == 12 ? "output" : "value_info";
          if (!expect(m, name, f, wire::len)) return false;
          std::vector<value_info>& list = f.number == 11 ? g.inputs : f.number == 12 ? g.outputs : g.value_infos;
          list.emplace_back();
          if (!read_value_info(f, list.back())) return false;
          break;
        }
        default: break;
      }
    }
    return !r.failed() || wire_failed(m, r);
  }

  bool read_model(model_info& model) {
    wire_reader r(all);
    field f;
    constexpr std::string_view m = "ModelProto";
    while (r.next(f)) {
      switch (f.number) {
        case 1:
          if (!expect(m, "ir_version", f, wire::varint)) return false;
          model.ir_version = f.as_int64();
          break;
        case 2: case 3: case 4: case 6: {
          const std::string_view name = f.number == 2 ? "producer_name" : f.number == 3 ? "producer_version" : f.number == 4 ? "domain" : "doc_string";
          if (!expect(m, name, f, wire::len)) return false;
          (f.number == 2 ? model.producer_name : f.number == 3 ? model.producer_version : f.number == 4 ? model.domain : model.doc_string) = f.text();
          break;
        }
        case 5:
          if (!expect(m, "model_version", f, wire::varint)) return false;
          model.model_version = f.as_int64();
          break;
        case 7:
          if (!expect(m, "graph", f, wire::len)) return false;
          if (model.has_graph) return fail(m, "graph", "appears twice", f.offset);
          model.has_graph = true;
          if (!read_graph(f, model.graph)) return false;
          break;
        case 8: {
          if (!expect(m, "opset_import", f, wire::len)) return false;
          opset_id o;
          wire_reader e = wire_reader::of(all, f);
          field k;
          while (e.next(k)) {
            if (k.number == 1) {
              if (!expect("OperatorSetIdProto", "domain", k, wire::len)) return false;
              o.domain = k.text();
            } else if (k.number == 2) {
              if (!expect("OperatorSetIdProto", "version", k, wire::varint)) return false;
              o.version = k.as_int64();
            }
          }
          if (e.failed()) return wire_failed("OperatorSetIdProto", e);
          model.opset_import.push_back(o);
          break;
        }
        case 20: ++model.training_infos; break;
        case 25: ++model.functions; break;
        default: break;
      }
    }
    return !r.failed() || wire_failed(m, r);
  }

  error to_error(std::string_view what) const {
    relaxvm::detail::text t;
    t << "onnx: " << what << " is malformed: " << message_name;
    if (!field_name.empty()) t << "." << field_name;
    t << " at byte " << at << ": " << problem;
    return error(error_kind::value, t.view());
  }
};

}  // namespace detail

/// Reads a ModelProto (an .onnx file) into views of `bytes`: keep them alive while the result is
/// used. Errors name the message, the field and the byte offset of what is malformed.
inline result<model_info> parse_model(std::span<const std::byte> bytes) {
  detail::parser p(bytes);
  model_info m;
  if (!p.read_model(m)) return p.to_error("the model");
  if (!m.has_graph) return value_error("onnx: the model has no graph (ModelProto.graph, field 7, is missing)");
  return m;
}

/// Reads one TensorProto (a .pb file of ONNX's test data) into views of `bytes`.
inline result<tensor_info> parse_tensor(std::span<const std::byte> bytes) {
  detail::parser p(bytes);
  tensor_info t;
  detail::field whole;
  whole.type = detail::wire::len;
  whole.bytes = bytes;
  if (!p.read_tensor(whole, t)) return p.to_error("the tensor");
  return t;
}

}  // namespace relaxvm::onnx

#endif  // RELAXVM_ONNX_MODEL_HPP
