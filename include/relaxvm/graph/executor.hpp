// SPDX-License-Identifier: Apache-2.0
// graph::executor: runs a graph_def with the reference's static storage plan. create() does all
// the work: one storage per storage id, sized for its largest entry and placed on that entry's
// device; a tensor view per entry; every operator's argument list (inputs, then outputs) bound
// once. run() is then a loop of direct calls: no allocation, no lookup.
#ifndef RELAXVM_GRAPH_EXECUTOR_HPP
#define RELAXVM_GRAPH_EXECUTOR_HPP

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/error.hpp"
#include "../runtime/adapters.hpp"
#include "../runtime/allocator.hpp"
#include "../vm/semantics.hpp"
#include "../runtime/registry.hpp"
#include "../runtime/tensor.hpp"
#include "format.hpp"
#include "params.hpp"

namespace relaxvm::RELAXVM_ABI::graph {

/// What a graph's attrs.device_index holds. The reference writes a DLDeviceType per entry (1 = CPU)
/// and places the entry on the first device of that type; with several devices of one type (two CPU
/// ids) that cannot tell them apart, so relaxvm also reads it as a position in the device list.
enum class device_index_kind : std::uint8_t {
  device_type,  ///< the reference's meaning: the first device of that type, else the first device
  position,     ///< an index into graph_options::devices
};

struct graph_options {
  /// The devices and the allocators their storage comes from; empty means cpu:0 with the system
  /// heap (the reference's naive allocator). Host (CPU) devices only.
  std::vector<device_allocator> devices;
  device_index_kind device_index = device_index_kind::device_type;
  /// The most memory the graph's storage may take, summed over storage ids (a graph from an
  /// untrusted source cannot ask for more); 0: no limit.
  std::uint64_t max_storage_bytes = 0;
};

/// Per-node times from executor::profile, and the table the reference's debug executor prints.
struct profile_report {
  struct row {
    std::uint32_t node;
    std::string name;
    std::string func_name;
    double mean_us;   ///< per run
    std::string shape;  ///< of the node's first output
  };
  std::vector<row> rows;  ///< operator nodes, sorted by time, longest first
  double total_us = 0;    ///< per run, all nodes
  std::size_t runs = 0;

  /// Node name, op, time per run (us) and share of the total, longest first, then the total.
  std::string table() const {
    relaxvm::detail::text t;
    std::size_t w = 9;
    for (const row& r : rows) w = std::max(w, r.name.size());
    t.append("Node Name").pad_to(w + 2).append("Ops");
    std::size_t ops_w = 3;
    for (const row& r : rows) ops_w = std::max(ops_w, r.func_name.size());
    const std::size_t col = w + 2 + ops_w + 2;
    t.pad_to(col).append("Time(us)").pad_to(col + 12).append("Time(%)").pad_to(col + 21).append("Shape\n");
    auto fixed = [&](double v, int decimals) {
      // v >= 0, printed with `decimals` digits after the point
      double scale = 1;
      for (int i = 0; i < decimals; ++i) scale *= 10;
      const auto whole = static_cast<std::uint64_t>(v * scale + 0.5);
      t << whole / static_cast<std::uint64_t>(scale) << '.';
      std::uint64_t frac = whole % static_cast<std::uint64_t>(scale);
      for (std::uint64_t d = static_cast<std::uint64_t>(scale) / 10; d > 0; d /= 10) {
        t << static_cast<char>('0' + frac / d);
        frac %= d;
      }
    };
    for (const row& r : rows) {
      const std::size_t line = t.size();
      t.append(r.name).pad_to(line + w + 2).append(r.func_name).pad_to(line + col);
      fixed(r.mean_us, 3);
      t.pad_to(line + col + 12);
      fixed(total_us > 0 ? 100.0 * r.mean_us / total_us : 0.0, 2);
      t.pad_to(line + col + 21).append(r.shape).append('\n');
    }
    const std::size_t line = t.size();
    t.append("Total_time").pad_to(line + col);
    fixed(total_us, 3);
    t.append('\n');
    return std::string(t.view());
  }
};

class executor {
 public:
  /// Parses, validates, plans (when the graph has no storage ids) and sets up `json`; functions
  /// come from `reg`.
  static result<executor> create(std::string_view json, const basic_registry& reg, graph_options opts = {}) {
    RELAXVM_TRY_ASSIGN(graph_def g, parse_graph(json));
    return create(std::move(g), reg, std::move(opts));
  }
  static result<executor> create(graph_def g, const basic_registry& reg, graph_options opts = {}) {
    RELAXVM_TRY(validate(g));
    if (g.storage_ids.empty()) plan_storage(g);
    executor e;
    e.g_ = std::move(g);
    if (opts.devices.empty()) opts.devices.push_back({device::cpu(), allocator::naive()});
    for (std::size_t i = 0; i < opts.devices.size(); ++i) {
      if (opts.devices[i].device.device_type != kDLCPU)
        return detail::value_error("graph executor: device ", i, " is ", opts.devices[i].device,
                                   "; relaxvm runs on host (cpu) devices only");
      if (!opts.devices[i].allocator.defined())
        return detail::value_error("graph executor: device ", i, " has no allocator");
    }
    e.opts_ = std::move(opts);
    RELAXVM_TRY(e.setup_storage());
    RELAXVM_TRY(e.setup_ops(reg));
    return e;
  }

  // ---- inputs and outputs ----

  std::size_t get_num_inputs() const noexcept { return g_.arg_nodes.size(); }
  std::size_t get_num_outputs() const noexcept { return g_.heads.size(); }
  /// The position of input `name` in arg_nodes, or -1.
  std::int64_t get_input_index(std::string_view name) const noexcept {
    for (std::size_t i = 0; i < g_.arg_nodes.size(); ++i)
      if (g_.nodes[g_.arg_nodes[i]].name == name) return static_cast<std::int64_t>(i);
    return -1;
  }

  /// Copies `t` into input `i`: the same dtype and byte size (the reference checks only the size).
  status set_input(std::size_t i, const tensor& t) {
    RELAXVM_TRY(check_input(i));
    RELAXVM_TRY(check_copy_into("set_input", i, t));
    const tensor& dst = entries_[input_entry(i)];
    if (t.nbytes() > 0 && t.raw_data() != dst.raw_data())
      std::memmove(dst.raw_data(), t.raw_data(), static_cast<std::size_t>(t.nbytes()));
    return {};
  }
  /// By name; an unknown name is an error (the reference ignores it).
  status set_input(std::string_view name, const tensor& t) {
    RELAXVM_TRY_ASSIGN(std::size_t i, input_by_name("set_input", name));
    return set_input(i, t);
  }

  /// Makes input `i` read `t`'s memory, without a copy: every operator argument that views the
  /// input (or a __nop alias of it) is re-pointed. `t` must match the input exactly (dtype, shape,
  /// device) and be 64-byte aligned; the executor keeps a reference to it.
  status set_input_zero_copy(std::size_t i, const tensor& t) {
    RELAXVM_TRY(check_input(i));
    return repoint("set_input_zero_copy", input_entry(i), t);
  }
  status set_input_zero_copy(std::string_view name, const tensor& t) {
    RELAXVM_TRY_ASSIGN(std::size_t i, input_by_name("set_input_zero_copy", name));
    return set_input_zero_copy(i, t);
  }
  /// Makes output `i` be written into `t` (the same checks as set_input_zero_copy, and `t` must be
  /// writable).
  status set_output_zero_copy(std::size_t i, const tensor& t) {
    if (i >= g_.heads.size())
      return detail::value_error("set_output_zero_copy: output ", i, " does not exist; the graph has ", g_.heads.size(), " outputs");
    if (t.defined() && t.read_only())
      return detail::value_error("set_output_zero_copy: output ", i, ": the tensor is read-only");
    return repoint("set_output_zero_copy", g_.entry_id(g_.heads[i]), t);
  }
  /// By "node_name:index" or by the node name of an output (the first such output).
  status set_output_zero_copy(std::string_view name, const tensor& t) {
    RELAXVM_TRY_ASSIGN(std::size_t i, output_by_name("set_output_zero_copy", name));
    return set_output_zero_copy(i, t);
  }

  /// Output `i`: a view of the executor's memory (or of the tensor given to the zero-copy setter),
  /// overwritten by the next run().
  result<tensor> get_output(std::size_t i) const {
    if (i >= g_.heads.size())
      return detail::value_error("get_output: output ", i, " does not exist; the graph has ", g_.heads.size(), " outputs");
    return entries_[g_.entry_id(g_.heads[i])];
  }
  result<tensor> get_output(std::string_view name) const {
    RELAXVM_TRY_ASSIGN(std::size_t i, output_by_name("get_output", name));
    return get_output(i);
  }
  result<tensor> get_input(std::size_t i) const {
    RELAXVM_TRY(check_input(i));
    return entries_[input_entry(i)];
  }
  result<tensor> get_input(std::string_view name) const {
    RELAXVM_TRY_ASSIGN(std::size_t i, input_by_name("get_input", name));
    return get_input(i);
  }

  /// Copies every tensor of a params file whose name is an input into that input, with set_input's
  /// checks. Returns how many were set; names that are not inputs are skipped, as the reference does.
  result<std::size_t> load_params(std::span<const std::byte> bytes) {
    RELAXVM_TRY_ASSIGN(std::vector<named_tensor> params, graph::load_params(bytes));
    // Check them all before copying any, so a bad file changes nothing.
    for (const named_tensor& p : params) {
      const std::int64_t i = get_input_index(p.name);
      if (i >= 0) RELAXVM_TRY(check_copy_into("load_params", static_cast<std::size_t>(i), p.value));
    }
    std::size_t set = 0;
    for (const named_tensor& p : params) {
      const std::int64_t i = get_input_index(p.name);
      if (i < 0) continue;
      RELAXVM_TRY(set_input(static_cast<std::size_t>(i), p.value));
      ++set;
    }
    return set;
  }

  // ---- running ----

  /// Runs every operator once, in order. An operator's error names its node.
  status run() {
    const value* const args = args_.data();
    for (const op_exec& op : ops_) {
      if (RELAXVM_LIKELY(op.kind == op_kind::kernel)) {
        // The hot path: one indirect call per node. The closure's captured values were joined
        // into its argument list at load, so it is called as it is (its callee).
        const closure_object& fn = *op.callee;
        if (RELAXVM_UNLIKELY(!fn.invoke(fn, args + op.first_arg, op.nargs, ret_, err_))) return kernel_failed(op);
      } else {
        run_builtin(op);
      }
    }
    ret_.reset();  // kernels return nothing; do not keep what one did return
    return {};
  }

  /// Runs the graph `runs` times (at least 1), timing each operator node (the reference's debug
  /// executor); table() prints the result.
  result<profile_report> profile(std::size_t runs = 10) {
    if (runs == 0) return detail::value_error("profile: runs must be at least 1");
    using clock = std::chrono::steady_clock;
    std::vector<double> ns(ops_.size(), 0.0);
    for (std::size_t r = 0; r < runs; ++r) {
      for (std::size_t k = 0; k < ops_.size(); ++k) {
        const op_exec& op = ops_[k];
        const auto t0 = clock::now();
        if (op.kind == op_kind::kernel) {
          if (!op.callee->invoke(*op.callee, args_.data() + op.first_arg, op.nargs, ret_, err_)) return kernel_failed(op);
        } else {
          run_builtin(op);
        }
        ns[k] += std::chrono::duration<double, std::nano>(clock::now() - t0).count();
      }
      ret_.reset();
    }
    profile_report rep;
    rep.runs = runs;
    for (std::size_t k = 0; k < ops_.size(); ++k) {
      const std::uint32_t nid = ops_[k].node;
      const node& nd = g_.nodes[nid];
      relaxvm::detail::text s;
      s << detail::dims_text{g_.shapes[g_.entry_id(nid, 0)].dims()};
      const double us = ns[k] / static_cast<double>(runs) / 1000.0;
      rep.rows.push_back({nid, nd.name, nd.func_name, us, std::string(s.view())});
      rep.total_us += us;
    }
    std::stable_sort(rep.rows.begin(), rep.rows.end(), [](const auto& a, const auto& b) { return a.mean_us > b.mean_us; });
    return rep;
  }

  // ---- what was set up ----

  const graph_def& graph() const noexcept { return g_; }
  /// Bytes of each storage id's memory.
  std::vector<std::size_t> storage_bytes() const {
    std::vector<std::size_t> out;
    for (const auto& s : pool_) out.push_back(s->size);
    return out;
  }

 private:
  enum class op_kind : std::uint8_t { kernel, copy, nop };
  struct op_exec {
    op_kind kind;
    std::uint32_t node;
    std::uint32_t first_arg;
    std::uint32_t nargs;
    closure fn;                               // kernel: as registered (kept alive here)
    const closure_object* callee = nullptr;   // kernel: what runs (fn's callee)
  };

  executor() = default;

 public:
  // Operators hold views of this executor's storage: copies would share them, so it only moves.
  executor(executor&&) noexcept = default;
  executor& operator=(executor&&) noexcept = default;
  executor(const executor&) = delete;
  executor& operator=(const executor&) = delete;

 private:

  std::uint32_t input_entry(std::size_t i) const noexcept { return g_.entry_id(g_.arg_nodes[i], 0); }
  std::string_view input_name(std::size_t i) const noexcept { return g_.nodes[g_.arg_nodes[i]].name; }
  status check_input(std::size_t i) const {
    if (i >= g_.arg_nodes.size())
      return detail::value_error("input ", i, " does not exist; the graph has ", g_.arg_nodes.size(), " inputs");
    return {};
  }
  result<std::size_t> input_by_name(std::string_view who, std::string_view name) const {
    const std::int64_t i = get_input_index(name);
    if (i < 0) return detail::value_error(who, ": the graph has no input named '", name, "'");
    return static_cast<std::size_t>(i);
  }
  result<std::size_t> output_by_name(std::string_view who, std::string_view name) const {
    for (std::size_t i = 0; i < g_.heads.size(); ++i) {
      const std::string& node_name = g_.nodes[g_.heads[i].node].name;
      const std::string indexed = node_name + ":" + std::to_string(g_.heads[i].index);
      if (name == indexed || name == node_name) return i;
    }
    return detail::value_error(who, ": no output is named '", name, "' (outputs are named by their node, or \"node:index\")");
  }
  // What set_input and load_params require of a tensor copied into input i.
  status check_copy_into(std::string_view who, std::size_t i, const tensor& t) const {
    const tensor& dst = entries_[input_entry(i)];
    if (!t.defined()) return detail::value_error(who, ": input ", i, " ('", input_name(i), "'): the tensor is undefined");
    if (!t.is_contiguous()) return detail::value_error(who, ": input ", i, " ('", input_name(i), "'): the tensor is strided");
    if (t.device().device_type != kDLCPU)
      return detail::value_error(who, ": input ", i, " ('", input_name(i), "'): the tensor is on ", t.device(),
                                 "; relaxvm copies from host memory only");
    if (t.dtype() != dst.dtype() || t.nbytes() != dst.nbytes())
      return detail::value_error(who, ": input ", i, " ('", input_name(i), "') is ", detail::dims_text{dst.shape().dims()},
                                 " ", dst.dtype(), ", but the tensor is ", detail::dims_text{t.shape().dims()}, " ", t.dtype());
    if (dst.read_only())
      return detail::value_error(who, ": input ", i, " ('", input_name(i),
                                 "') reads a read-only tensor given to set_input_zero_copy; nothing can be copied into it");
    return {};
  }

  result<std::size_t> device_of(std::size_t eid) const {
    if (g_.device_index.empty()) return std::size_t{0};
    const std::int64_t v = g_.device_index[eid];
    if (opts_.device_index == device_index_kind::position) {
      if (static_cast<std::uint64_t>(v) >= opts_.devices.size())
        return detail::value_error("graph: entry ", eid, " has device_index ", v, ", but the executor has ",
                                   opts_.devices.size(), " devices");
      return static_cast<std::size_t>(v);
    }
    for (std::size_t d = 0; d < opts_.devices.size(); ++d)
      if (opts_.devices[d].device.device_type == v) return d;
    return std::size_t{0};  // the reference's fallback: the first device
  }

  // One storage per id, on its entries' device, as large as its largest entry; a view per entry.
  status setup_storage() {
    const std::size_t entries = g_.num_entries();
    std::vector<std::int64_t> bytes;
    std::vector<std::int64_t> dev_of_sid;
    std::vector<std::uint32_t> first_eid;
    for (std::size_t eid = 0; eid < entries; ++eid) {
      const auto sid = static_cast<std::size_t>(g_.storage_ids[eid]);
      if (sid >= entries)  // ids are dense in practice; a huge one is a corrupt graph, not a reason to allocate
        return detail::value_error("graph: entry ", eid, " has storage_id ", sid, "; ids must be below the entry count (", entries, ")");
      RELAXVM_TRY_ASSIGN(std::size_t dev, device_of(eid));
      if (sid >= bytes.size()) {
        bytes.resize(sid + 1, -1);
        dev_of_sid.resize(sid + 1, -1);
        first_eid.resize(sid + 1, 0);
      }
      if (bytes[sid] < 0) {
        dev_of_sid[sid] = static_cast<std::int64_t>(dev);
        first_eid[sid] = static_cast<std::uint32_t>(eid);
      } else if (dev_of_sid[sid] != static_cast<std::int64_t>(dev) ||
                 (!g_.device_index.empty() && g_.device_index[first_eid[sid]] != g_.device_index[eid])) {
        return detail::value_error("graph: storage ", sid, " is used on device ", opts_.devices[static_cast<std::size_t>(dev_of_sid[sid])].device,
                                   " by entry ", first_eid[sid], " and on ", opts_.devices[dev].device, " by entry ", eid,
                                   "; one storage cannot be on two devices");
      }
      bytes[sid] = std::max(bytes[sid], detail::entry_bytes(g_, eid));
    }
    if (opts_.max_storage_bytes > 0) {
      std::uint64_t total = 0;
      for (std::int64_t b : bytes) {
        const auto add = static_cast<std::uint64_t>(std::max<std::int64_t>(b, 0));
        if (add > opts_.max_storage_bytes - total)
          return detail::value_error("graph: the storage plan needs more than max_storage_bytes (", opts_.max_storage_bytes,
                                     " bytes)");
        total += add;
      }
    }
    for (std::size_t sid = 0; sid < bytes.size(); ++sid) {
      if (bytes[sid] < 0) bytes[sid] = 0;  // an id no entry uses
      const device_allocator& d = opts_.devices[static_cast<std::size_t>(std::max<std::int64_t>(dev_of_sid[sid], 0))];
      result<object_ref<storage_object>> st = make_storage(d.allocator, static_cast<std::size_t>(bytes[sid]), alloc_alignment, d.device);
      if (!st.ok()) {
        const std::uint32_t nid = node_of_entry(first_eid[sid]);
        return detail::value_error("graph: storage ", sid, " (", bytes[sid], " bytes, first used by ", detail::node_text{g_, nid},
                                   ") cannot be allocated on ", d.device, ": ", st.error().message());
      }
      pool_.push_back(std::move(*st));
    }
    entries_.reserve(entries);
    for (std::size_t eid = 0; eid < entries; ++eid) {
      RELAXVM_TRY_ASSIGN(tensor v, view_storage(pool_[static_cast<std::size_t>(g_.storage_ids[eid])], 0, g_.shapes[eid],
                                                g_.dtypes[eid], "graph"));
      entries_.push_back(std::move(v));
    }
    return {};
  }

  std::uint32_t node_of_entry(std::uint32_t eid) const noexcept {
    std::uint32_t nid = 0;
    while (nid + 1 < g_.node_row_ptr.size() && g_.node_row_ptr[nid + 1] <= eid) ++nid;
    return nid;
  }

  // The argument list of every operator node, bound once.
  status setup_ops(const basic_registry& reg) {
    alias_.resize(entries_.size());
    for (std::size_t eid = 0; eid < alias_.size(); ++eid) alias_[eid] = static_cast<std::uint32_t>(eid);
    for (std::uint32_t nid = 0; nid < g_.nodes.size(); ++nid) {
      const node& nd = g_.nodes[nid];
      if (nd.is_input()) continue;
      op_exec op{op_kind::kernel, nid, static_cast<std::uint32_t>(args_.size()), 0, closure(), nullptr};
      if (nd.func_name == "__nop") {
        op.kind = op_kind::nop;
        if (!nd.inputs.empty()) join(g_.entry_id(nd.inputs[0]), g_.entry_id(nid, 0));
      } else if (nd.func_name == "__copy") {
        op.kind = op_kind::copy;
      } else {
        const closure* f = reg.find(nd.func_name);
        if (f == nullptr)
          return detail::value_error("graph: ", detail::node_text{g_, nid}, " calls '", nd.func_name,
                                     "', which is not in the registry");
        if (!f->is_packed())
          return detail::value_error("graph: ", detail::node_text{g_, nid}, " calls '", nd.func_name,
                                     "', a vm function; graph nodes call packed functions");
        op.fn = *f;
        op.callee = &f->get()->callee();
      }
      auto add_arg = [&](std::uint32_t eid) -> status {
        if (!nd.flatten_data || op.kind != op_kind::kernel) {
          args_.push_back(value(entries_[eid]));
          return {};
        }
        // A 1-d view of its own: the entry's tensor keeps its shape (the reference rewrites it).
        const tensor& t = entries_[eid];
        RELAXVM_TRY_ASSIGN(tensor flat, view_storage(pool_[static_cast<std::size_t>(g_.storage_ids[eid])], 0,
                                                     shape{t.numel()}, t.dtype(), "graph"));
        flat_views_.push_back({eid, flat});
        args_.push_back(value(std::move(flat)));
        return {};
      };
      for (const entry_ref& e : nd.inputs) RELAXVM_TRY(add_arg(g_.entry_id(e)));
      for (std::uint32_t k = 0; k < g_.num_node_outputs(nid); ++k) RELAXVM_TRY(add_arg(g_.entry_id(nid, k)));
      // A registered closure's captured values follow, joined here once rather than on each call.
      if (op.kind == op_kind::kernel)
        for (const value& v : op.fn.bound()) args_.push_back(v);
      op.nargs = static_cast<std::uint32_t>(args_.size()) - op.first_arg;
      ops_.push_back(std::move(op));
    }
    return {};
  }

  // __nop aliases: entries that are the same memory (union-find).
  std::uint32_t root(std::uint32_t e) const noexcept {
    while (alias_[e] != e) e = alias_[e];
    return e;
  }
  void join(std::uint32_t a, std::uint32_t b) { alias_[root(b)] = root(a); }

  status repoint(std::string_view who, std::uint32_t eid, const tensor& t) {
    const tensor& cur = entries_[eid];
    const std::uint32_t nid = node_of_entry(eid);
    if (!t.defined()) return detail::value_error(who, ": ", detail::node_text{g_, nid}, ": the tensor is undefined");
    if (!t.is_contiguous()) return detail::value_error(who, ": ", detail::node_text{g_, nid}, ": the tensor is strided");
    if (t.dtype() != cur.dtype() || !(t.shape() == cur.shape()) || t.device() != cur.device())
      return detail::value_error(who, ": ", detail::node_text{g_, nid}, " is ", detail::dims_text{cur.shape().dims()}, " ",
                                 cur.dtype(), " on ", cur.device(), ", but the tensor is ", detail::dims_text{t.shape().dims()},
                                 " ", t.dtype(), " on ", t.device());
    const auto addr = reinterpret_cast<std::uintptr_t>(t.raw_data());
    if (addr % alloc_alignment != 0)
      return detail::value_error(who, ": ", detail::node_text{g_, nid}, ": the tensor's data is at ", addr % alloc_alignment,
                                 " bytes past a ", alloc_alignment, "-byte boundary; it must be aligned");
    const std::uint32_t group = root(eid);
    // Each view keeps `t` alive (as its owner), also in the hands of whoever got it from get_input
    // or get_output, and takes its read-only flag.
    auto point = [&](tensor& v) {
      tensor_object& o = *v.get();
      o.dl.data = t.raw_data();
      o.dl.byte_offset = 0;
      o.owner = object_ref<object>::retain(t.get());
      o.read_only = t.read_only();
    };
    for (std::uint32_t e = 0; e < entries_.size(); ++e)
      if (root(e) == group) point(entries_[e]);
    for (auto& [e, v] : flat_views_)
      if (root(e) == group) point(v);
    return {};
  }

  // __nop (nothing to do: its output is its input's memory) and __copy.
  void run_builtin(const op_exec& op) {
    if (op.kind != op_kind::copy) return;
    const value* args = args_.data() + op.first_arg;
    const tensor& src = args[0].as<tensor>();
    const tensor& dst = args[1].as<tensor>();
    if (src.nbytes() > 0 && src.raw_data() != dst.raw_data())
      std::memmove(dst.raw_data(), src.raw_data(), static_cast<std::size_t>(src.nbytes()));
  }

  RELAXVM_NOINLINE error kernel_failed(const op_exec& op) {
    ret_.reset();  // what an earlier kernel returned goes now, not at the next run
    error e = relaxvm::detail::take_error(err_);
    detail::text where("in graph ");
    where << detail::node_text{g_, op.node};
    e.add_context(where.view());
    return e;
  }

  graph_def g_;
  graph_options opts_;
  std::vector<object_ref<storage_object>> pool_;    // by storage id
  std::vector<tensor> entries_;                     // by entry id: views of the pool
  std::vector<std::pair<std::uint32_t, tensor>> flat_views_;  // (entry, 1-d view) for flatten_data
  std::vector<std::uint32_t> alias_;                // __nop union-find over entries
  std::vector<value> args_;                         // every operator's arguments, in node order
  std::vector<op_exec> ops_;
  value ret_;  // what kernels return (nothing, normally)
  std::optional<error> err_;
};

}  // namespace relaxvm::graph

#endif  // RELAXVM_GRAPH_EXECUTOR_HPP
