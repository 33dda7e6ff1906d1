// SPDX-License-Identifier: Apache-2.0
// A model as a compile-time program: what `relaxvm cpp MODEL.onnx --name NAME` writes (cli/cpp.hpp)
// runs through this. The generated header holds the program (its function "main" takes the
// model's inputs, then its weights), its weights as constexpr arrays, the kernels it calls and the
// memory it needs; static_model<M> checks the caller's buffers against those figures when it
// compiles, views the weights in place (flash, no copy), runs main on a static_vm and copies its
// result into the caller's outputs. No heap (in firmware mode), no exceptions, no RTTI. The inputs'
// views have the dtypes and shapes the model declares: the program is linked with that
// (argument_facts), so its own checks of them cost nothing at run time.
//
// M (the generated header's NAME::model) has:
//   using linked = decltype(link<program, table>());
//   static constexpr std::size_t arena_bytes;          the planner's figure (ir::planned_bytes)
//   static constexpr std::array<model_tensor, N> inputs, weights, outputs;
#ifndef RELAXVM_VM_STATIC_MODEL_HPP
#define RELAXVM_VM_STATIC_MODEL_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>

#include "../base/config.hpp"  // RELAXVM_ABI, RELAXVM_HEAP
#include "../base/diagnostic.hpp"
#include "../runtime/allocator.hpp"
#include "../runtime/object_memory.hpp"
#include "../runtime/tensor.hpp"
#include "../runtime/tuple.hpp"
#include "static_vm.hpp"

namespace relaxvm::RELAXVM_ABI {

/// One tensor of a generated model: its dtype and shape (-1: a dimension the model leaves
/// open), and for a weight its elements (a constexpr array: read in place).
struct model_tensor {
  std::string_view name;
  dtype type;
  std::span<const std::int64_t> dims;
  const void* data = nullptr;
};

namespace detail {
// Whether every dimension of the model's inputs, weights and outputs is fixed (none -1).
template <class M>
constexpr bool model_shapes_fixed() {
  const auto fixed = [](const auto& list) {
    for (const model_tensor& t : list)
      for (std::int64_t d : t.dims)
        if (d < 0) return false;
    return true;
  };
  return fixed(M::inputs) && fixed(M::weights) && fixed(M::outputs);
}
// What static_model::run passes main: views of the model's inputs, of the dtypes and shapes it
// declares (none when a dimension is open: run() is refused then).
template <class M>
constexpr auto model_input_facts() {
  constexpr std::size_t n = M::inputs.size();
  constexpr std::size_t d = [] {
    std::size_t k = 0;
    for (const model_tensor& t : M::inputs) k += t.dims.size();
    return k;
  }();
  argument_facts<n, d> facts;
  facts.function = "main";
  facts.count = model_shapes_fixed<M>() ? n : 0;
  std::size_t k = 0;
  for (std::size_t i = 0; i < n; ++i) {
    facts.types[i] = M::inputs[i].type;
    facts.dims_begin[i] = k;
    for (std::int64_t x : M::inputs[i].dims) facts.dims[k++] = x;
  }
  facts.dims_begin[n] = k;
  return facts;
}
}  // namespace detail

template <class M>
struct static_model {
  /// The program as the header links it, and as run() runs it: linked again with what run()
  /// guarantees of main's inputs (their dtypes and shapes: detail::model_input_facts), so that
  /// the program's own checks of them are settled when it compiles (call_site::known_tensor).
  using linked = typename M::linked;
  static constexpr auto input_facts = detail::model_input_facts<M>();
  using run_linked = linked_program<linked::program, linked::table, linked::options, input_facts>;
  using vm_type = static_vm<run_linked>;
  static_assert(run_linked::objects_known,
                "relaxvm::static_model: the program's object memory is not known at compile time (run_linked::objects_known)");

  /// The VM's frames (static_vm::memory_bytes).
  static constexpr std::size_t frame_bytes = vm_type::memory_bytes;
  /// The tensors' arena: the linker's figure when it knows one, else the planner's.
  static constexpr std::size_t arena_bytes = run_linked::arena_known ? run_linked::arena_bytes : M::arena_bytes;
  /// Firmware mode's object memory: the program's (run_linked::object_bytes) and run()'s own: a view
  /// of each input, weight and output, and the arena allocator.
  static constexpr std::size_t caller_object_bytes = [] {
    std::size_t n = arena_object_bytes;
    for (const model_tensor& t : M::inputs) n += tensor_view_object_bytes(t.dims.size());
    for (const model_tensor& t : M::weights) n += tensor_view_object_bytes(t.dims.size());
    for (const model_tensor& t : M::outputs) n += tensor_view_object_bytes(t.dims.size());
    return n;
  }();
  static constexpr std::size_t object_bytes = run_linked::object_bytes + caller_object_bytes;

  /// Runs the model on `inputs` (data pointers, in the model's order, of the shapes of
  /// M::inputs) and writes its results to `outputs`. Every dimension must be fixed (none -1): it
  /// does not compile otherwise.
#if RELAXVM_HEAP
  template <std::size_t A, std::size_t F>
  static status run(arena_buffer<A>& arena, std::byte (&frames)[F], std::span<const void* const> inputs,
                    std::span<void* const> outputs) {
    check_buffers<A, F, object_bytes>();
    return run_checked(arena.span(), frames, inputs, outputs);
  }
#else
  template <std::size_t A, std::size_t F, std::size_t O>
  static status run(arena_buffer<A>& arena, std::byte (&frames)[F], object_buffer<O>& objects,
                    std::span<const void* const> inputs, std::span<void* const> outputs) {
    check_buffers<A, F, O>();
    set_object_memory(objects.span());
    return run_checked(arena.span(), frames, inputs, outputs);
  }
#endif

 private:
  static constexpr detail::diagnostic too_small(std::string_view what, std::size_t have, std::size_t need,
                                                std::string_view figure) {
    detail::diagnostic d;
    detail::text t = detail::diagnostic_start("buffer_error");
    t << "static_model::run: the " << what << " buffer has " << have << " bytes, but the model needs " << need << " ("
      << figure << ')';
    d.fail(t);
    return d;
  }
  template <std::size_t A, std::size_t F, std::size_t O>
  static constexpr void check_buffers() {
    if constexpr (A < arena_bytes) {
      constexpr detail::diagnostic d = too_small("arena", A, arena_bytes, "arena_bytes");
      constexpr int failed = detail::relaxvm_buffer_too_small(detail::spelled<d>());  // evaluated here: the message shows
      (void)failed;
    }
    if constexpr (F < frame_bytes) {
      constexpr detail::diagnostic d = too_small("frame", F, frame_bytes, "frame_bytes");
      constexpr int failed = detail::relaxvm_buffer_too_small(detail::spelled<d>());  // evaluated here: the message shows
      (void)failed;
    }
    if constexpr (O < object_bytes) {
      constexpr detail::diagnostic d = too_small("object", O, object_bytes, "object_bytes");
      constexpr int failed = detail::relaxvm_buffer_too_small(detail::spelled<d>());  // evaluated here: the message shows
      (void)failed;
    }
  }

  static constexpr std::size_t num_args = M::inputs.size() + M::weights.size();

  static result<tensor> view_of(const model_tensor& t, const void* data) {
    RELAXVM_TRY_ASSIGN(shape s, shape::try_make(t.dims));
    return tensor::try_view(const_cast<void*>(data), s, t.type, device::cpu(), {}, true);
  }

  // The bytes of output k, known when it compiles.
  template <std::size_t K>
  static constexpr std::int64_t output_nbytes = [] {
    std::int64_t n = M::outputs[K].type.bytes();
    for (std::int64_t d : M::outputs[K].dims) n *= d;
    return n;
  }();

  // The result's tensor `r` into output `k` of `nbytes` bytes: the dtype and shape the model
  // declares, compact. Read through the value's object: no reference taken.
  static status copy_out(const value& r, std::size_t k, std::int64_t nbytes, void* out) {
    const model_tensor& spec = M::outputs[k];
    if (r.kind() != value_kind::tensor)
      return detail::type_error("static_model: output '", spec.name, "' is ", r.describe(), ", not a tensor");
    const borrowed<tensor> t(r.raw_object());
    const DLTensor& dl = t.get().dl();
    bool same = dtype(dl.dtype) == spec.type && static_cast<std::size_t>(dl.ndim) == spec.dims.size() && t.get().is_contiguous();
    for (std::size_t i = 0; same && i < spec.dims.size(); ++i) same = dl.shape[i] == spec.dims[i];
    if (!same) return detail::value_error("static_model: output '", spec.name, "' is not of the shape and dtype the model declares");
    const auto* from = static_cast<const std::byte*>(t.get().raw_data());
    auto* to = static_cast<std::byte*>(out);
    for (std::int64_t i = 0; i < nbytes; ++i) to[i] = from[i];
    return {};
  }

  template <std::size_t F>
  static status run_checked(std::span<std::byte> arena, std::byte (&frames)[F], std::span<const void* const> inputs,
                            std::span<void* const> outputs) {
    static_assert(detail::model_shapes_fixed<M>(),
                  "relaxvm::static_model::run: the model leaves a dimension of an input, weight or output open (-1); "
                  "run() takes fixed shapes");
    if (inputs.size() != M::inputs.size() || outputs.size() != M::outputs.size())
      return detail::value_error("static_model: the model takes ", M::inputs.size(), " inputs and gives ", M::outputs.size(),
                                 " outputs, but got ", inputs.size(), " and ", outputs.size());
    const device_allocator devices[] = {{device::cpu(), allocator::arena(arena)}};
    result<vm_type> made = vm_type::create(frames, devices);
    if (!made.ok()) return made.error();
    vm_type& vm = *made;
    value args[num_args > 0 ? num_args : 1];
    for (std::size_t i = 0; i < M::inputs.size(); ++i) {
      RELAXVM_TRY_ASSIGN(args[i], view_of(M::inputs[i], inputs[i]));
    }
    for (std::size_t i = 0; i < M::weights.size(); ++i) {
      RELAXVM_TRY_ASSIGN(args[M::inputs.size() + i], view_of(M::weights[i], M::weights[i].data));
    }
    RELAXVM_TRY_ASSIGN(value r, vm.template invoke_values<"main">(std::span<const value, num_args>(args, num_args)));
    if constexpr (M::outputs.size() == 1) {
      return copy_out(r, 0, output_nbytes<0>, outputs[0]);
    } else {
      if (r.kind() != value_kind::tuple)
        return detail::type_error("static_model: the model's result is ", r.describe(), ", not a tuple");
      const tuple& all = r.as<tuple>();
      if (static_cast<std::size_t>(all.size()) != M::outputs.size())
        return detail::value_error("static_model: the model gave ", all.size(), " outputs, not ", M::outputs.size());
      return [&]<std::size_t... K>(std::index_sequence<K...>) {
        status s;
        ((s.ok() ? (void)(s = copy_out(all[static_cast<std::int64_t>(K)], K, output_nbytes<K>, outputs[K])) : (void)0), ...);
        return s;
      }(std::make_index_sequence<M::outputs.size()>());
    }
  }
};

}  // namespace relaxvm

#endif  // RELAXVM_VM_STATIC_MODEL_HPP
