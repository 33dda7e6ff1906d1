// SPDX-License-Identifier: Apache-2.0
// Programs shaped to stress the loader (issue 14): each shape is a function from an item count to
// a layout whose file grows by the same bytes per item. bench/load.cpp times and measures them
// from 1 KiB to 16 MiB; tests/unit/hostile.cpp checks the memory bound of docs/security.md on each.
#ifndef RELAXVM_BENCH_ADVERSARIAL_HPP
#define RELAXVM_BENCH_ADVERSARIAL_HPP

#include <bit>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <relaxvm.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace adversarial {

// Appends functions, instructions and constants to a layout. exec_builder would look every
// function name up by a linear scan and compare every constant with all earlier ones, which is
// quadratic on programs of this size, and it verifies what it builds (as slow as the load being
// measured); writing the layout directly keeps making a 16 MiB file to a fraction of a second.
// try_load verifies each file, and each is checked to save back to the same bytes.
class program {
 public:
  relaxvm::exec_layout layout;

  std::int64_t packed(std::string_view name) { return add_function(name); }

  // Opens vm function `name`; `params` are its input names (none, or one per input).
  void begin(std::string_view name, std::int64_t num_args, std::int64_t registers,
             std::span<const std::string> params = {}) {
    open_ = add_function(name);
    relaxvm::func_info& f = layout.funcs.back();
    f.kind = relaxvm::func_kind::vm;
    f.num_args = num_args;
    f.register_file_size = registers;
    f.start = f.end = next_instruction();
    f.params_begin = static_cast<std::int64_t>(layout.param_names.size());
    f.params_count = static_cast<std::int64_t>(params.size());
    for (const std::string& p : params) layout.param_names.push_back(layout.add_chars(p));
  }
  void end() { layout.funcs[static_cast<std::size_t>(open_)].end = next_instruction(); }

  // Registers as instruction words: their number (the special ones included), not an argument word.
  void call(std::int64_t func, std::span<const relaxvm::arg> args, std::int64_t dst = relaxvm::void_register) {
    start_instruction();
    push(static_cast<std::int64_t>(relaxvm::opcode::call));
    push(dst);
    push(func);
    push(static_cast<std::int64_t>(args.size()));
    for (const relaxvm::arg& a : args) push(a.data);
  }
  void call(std::int64_t func, std::initializer_list<relaxvm::arg> args, std::int64_t dst = relaxvm::void_register) {
    call(func, std::span<const relaxvm::arg>(args.begin(), args.size()), dst);
  }
  void ret(std::int64_t reg) {
    start_instruction();
    push(static_cast<std::int64_t>(relaxvm::opcode::ret));
    push(reg);
  }

  std::int64_t add_int(std::int64_t v) {
    relaxvm::const_info c{relaxvm::const_kind::int64};
    c.scalar = v;
    return add_constant(c);
  }
  std::int64_t add_float(double v) {
    relaxvm::const_info c{relaxvm::const_kind::float64};
    c.scalar = std::bit_cast<std::int64_t>(v);
    return add_constant(c);
  }
  std::int64_t add_dtype(relaxvm::dtype t) {
    relaxvm::const_info c{relaxvm::const_kind::dtype};
    c.scalar = t.pack();
    return add_constant(c);
  }
  std::int64_t add_bool(bool v) {
    relaxvm::const_info c{relaxvm::const_kind::boolean};
    c.scalar = v ? 1 : 0;
    return add_constant(c);
  }
  std::int64_t add_string(std::string_view s) {
    const relaxvm::str_ref r = layout.add_chars(s);
    relaxvm::const_info c{relaxvm::const_kind::string};
    c.data_offset = r.offset;
    c.data_size = r.size;
    return add_constant(c);
  }
  std::int64_t add_shape(std::span<const std::int64_t> dims) {
    relaxvm::const_info c{relaxvm::const_kind::shape};
    add_dims(c, dims);
    return add_constant(c);
  }
  // A float32 tensor of one element, shape (1,); its data starts on the pool's alignment.
  std::int64_t add_scalar_tensor(float v) {
    relaxvm::const_info c{relaxvm::const_kind::tensor};
    c.scalar = relaxvm::dtype::float32().pack();
    const std::int64_t dims[] = {1};
    add_dims(c, dims);
    while (layout.bytes.size() % relaxvm::tensor_data_alignment != 0) layout.bytes.push_back(0);
    c.data_offset = static_cast<std::int64_t>(layout.bytes.size());
    c.data_size = sizeof v;
    std::uint8_t raw[sizeof v];
    std::memcpy(raw, &v, sizeof v);  // the format's bytes are little-endian, as is every host we run on
    layout.bytes.insert(layout.bytes.end(), raw, raw + sizeof v);
    return add_constant(c);
  }

 private:
  std::int64_t add_function(std::string_view name) {
    relaxvm::func_info f;
    f.name = layout.add_chars(name);
    layout.funcs.push_back(f);
    return static_cast<std::int64_t>(layout.funcs.size()) - 1;
  }
  std::int64_t add_constant(const relaxvm::const_info& c) {
    return layout.add_constant(c);
  }
  void add_dims(relaxvm::const_info& c, std::span<const std::int64_t> dims) {
    c.dims_offset = static_cast<std::int64_t>(layout.i64s.size());
    c.ndim = static_cast<std::int64_t>(dims.size());
    layout.i64s.insert(layout.i64s.end(), dims.begin(), dims.end());
  }
  std::int64_t next_instruction() const { return static_cast<std::int64_t>(layout.instr_offset.size()); }
  void start_instruction() { layout.instr_offset.push_back(static_cast<std::int64_t>(layout.instr_data.size())); }
  void push(std::int64_t w) { layout.instr_data.push_back(w); }

  std::int64_t open_ = -1;
};

// `prefix` and i in 7 digits: every item of a shape then has a name of the same length, so the
// file grows by exactly the same bytes per item.
inline std::string numbered(std::string_view prefix, std::int64_t i, std::size_t width = 7) {
  std::string digits = std::to_string(i);
  std::string s(prefix);
  if (digits.size() < width) s.append(width - digits.size(), '0');
  return s + digits;
}

inline relaxvm::arg reg(std::int64_t r) { return relaxvm::arg::reg(r); }
inline relaxvm::arg constant(std::int64_t i) { return relaxvm::arg::constant(i); }

// The verifier was reported to clear a whole register table per function: a 311 KB file of
// these took 7.2 s to load.
inline relaxvm::exec_layout huge_frames(std::int64_t n) {
  program p;
  const std::int64_t null_value = p.packed("vm.builtin.null_value");
  const std::int64_t last = relaxvm::max_register_file_size - 1;
  for (std::int64_t i = 0; i < n; ++i) {
    p.begin(numbered("f", i), 0, relaxvm::max_register_file_size);
    p.call(null_value, {}, last);
    p.ret(last);
    p.end();
  }
  return std::move(p.layout);
}

inline relaxvm::exec_layout long_function(std::int64_t n) {
  program p;
  const std::int64_t make_tuple = p.packed("vm.builtin.make_tuple");
  p.begin("main", 2, 3);
  for (std::int64_t i = 0; i < n; ++i) p.call(make_tuple, {reg(0), reg(1), reg(0)}, 2);
  p.ret(2);
  p.end();
  return std::move(p.layout);
}

// n constants made by add(p, i), and a main that uses the first (a VM makes every constant a
// value when it is made, used or not).
template <class Add>
inline relaxvm::exec_layout constants(std::int64_t n, Add add) {
  program p;
  const std::int64_t copy = p.packed("vm.builtin.copy");
  std::int64_t first = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t c = add(p, i);
    if (i == 0) first = c;
  }
  p.begin("main", 0, 1);
  p.call(copy, {constant(first)}, 0);
  p.ret(0);
  p.end();
  return std::move(p.layout);
}

// A 16 MB file of small constants was reported to take about 395 MB to load, 502 MB with a VM.
inline relaxvm::exec_layout const_int64(std::int64_t n) {
  return constants(n, [](program& p, std::int64_t i) { return p.add_int(i * 7919 + 1); });
}
inline relaxvm::exec_layout const_float64(std::int64_t n) {
  return constants(n, [](program& p, std::int64_t i) { return p.add_float(static_cast<double>(i) + 0.5); });
}
// A tag and 4 bytes each.
inline relaxvm::exec_layout const_dtype(std::int64_t n) {
  return constants(n, [](program& p, std::int64_t i) {
    return p.add_dtype(relaxvm::dtype{kDLInt, 8, static_cast<std::uint16_t>(i % 60000 + 1)});
  });
}
// The smallest constant the format holds: a tag and one byte.
inline relaxvm::exec_layout const_bool(std::int64_t n) {
  return constants(n, [](program& p, std::int64_t i) { return p.add_bool(i % 2 == 0); });
}
inline relaxvm::exec_layout const_tensor(std::int64_t n) {
  return constants(n, [](program& p, std::int64_t i) { return p.add_scalar_tensor(static_cast<float>(i)); });
}
inline relaxvm::exec_layout const_string(std::int64_t n) {
  return constants(n, [](program& p, std::int64_t i) { return p.add_string(numbered("s", i)); });
}
inline relaxvm::exec_layout const_shape(std::int64_t n) {
  return constants(n, [](program& p, std::int64_t i) {
    const std::int64_t dims[] = {i};
    return p.add_shape(dims);
  });
}

// Making a VM for these fails, naming each missing function and an instruction that calls it;
// that was reported to scan the code once per missing name (3.15 MB: 2.25 s to fail).
inline relaxvm::exec_layout missing_functions(std::int64_t n) {
  program p;
  std::vector<std::int64_t> callees;
  callees.reserve(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) callees.push_back(p.packed(numbered("missing.", i)));
  p.begin("main", 0, 0);
  for (std::int64_t f : callees) p.call(f, {});
  p.ret(relaxvm::void_register);
  p.end();
  return std::move(p.layout);
}

// Each function reads only its first input: names and warnings for the other 63.
inline relaxvm::exec_layout many_params(std::int64_t n) {
  program p;
  std::vector<std::string> params;
  for (int k = 0; k < 64; ++k) params.push_back(numbered("param_", k, 2));
  for (std::int64_t i = 0; i < n; ++i) {
    p.begin(numbered("f", i), 64, 64, params);
    p.ret(0);
    p.end();
  }
  return std::move(p.layout);
}

// Each function reads all its inputs (no warnings): the names alone.
inline relaxvm::exec_layout long_names(std::int64_t n) {
  program p;
  const std::int64_t make_tuple = p.packed("vm.builtin.make_tuple");
  std::vector<std::string> params;
  for (int k = 0; k < 4; ++k) params.push_back(numbered(std::string(126, 'p'), k, 2));
  for (std::int64_t i = 0; i < n; ++i) {
    p.begin(numbered(std::string(505, 'f'), i), 4, 5, params);
    p.call(make_tuple, {reg(0), reg(1), reg(2), reg(3)}, 4);
    p.ret(4);
    p.end();
  }
  return std::move(p.layout);
}

// 24 bytes of file per instruction that can never run, and a warning for each.
inline relaxvm::exec_layout dead_code(std::int64_t n) {
  program p;
  p.begin("main", 0, 0);
  for (std::int64_t i = 0; i <= n; ++i) p.ret(relaxvm::void_register);
  p.end();
  return std::move(p.layout);
}

struct shape {
  const char* name;
  relaxvm::exec_layout (*make)(std::int64_t items);
  bool create_fails;  // the VM must refuse it: the failing create is what is timed
};

// The shapes, in the order they run. Add one here: a function from an item count to a layout
// whose file grows by the same bytes per item.
inline const shape shapes[] = {
    {"huge_frames", huge_frames, false},   {"long_function", long_function, false},
    {"const_int64", const_int64, false},   {"const_float64", const_float64, false},
    {"const_dtype", const_dtype, false},   {"const_bool", const_bool, false},
    {"const_tensor", const_tensor, false},
    {"const_string", const_string, false}, {"const_shape", const_shape, false},
    {"missing_functions", missing_functions, true}, {"many_params", many_params, false},
    {"long_names", long_names, false},     {"dead_code", dead_code, false},
};

}  // namespace adversarial

#endif  // RELAXVM_BENCH_ADVERSARIAL_HPP
