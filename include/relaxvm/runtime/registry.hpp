// SPDX-License-Identifier: Apache-2.0
// basic_registry: names to packed functions. A VM looks every name up once, when it is made;
// after that a call is an index into a table. relaxvm::registry (builtins/all.hpp) is a
// basic_registry that starts with every vm.builtin.*.
#ifndef RELAXVM_RUNTIME_REGISTRY_HPP
#define RELAXVM_RUNTIME_REGISTRY_HPP

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../base/config.hpp"  // RELAXVM_ABI
#include "../base/error.hpp"
#include "../base/flat_map.hpp"
#include "adapters.hpp"
#include "table.hpp"

namespace relaxvm::RELAXVM_ABI {

class basic_registry {
 public:
  /// Registers a typed C++ callable (see make_typed): arguments are checked and converted.
  template <class F>
  basic_registry& def(std::string_view name, F&& f) {
    try_add(name, make_typed(name, std::forward<F>(f))).value();
    return *this;
  }
  /// Registers a raw packed function: f(std::span<const value>) -> value (or result<value>).
  template <class F>
  basic_registry& def_packed(std::string_view name, F&& f) {
    try_add(name, make_packed(name, std::forward<F>(f))).value();
    return *this;
  }
  /// Registers an existing closure under `name`. A name can be registered once; remove() it first
  /// to replace it.
  status try_add(std::string_view name, closure c);
  basic_registry& add(std::string_view name, closure c) {
    try_add(name, std::move(c)).value();
    return *this;
  }

  /// Registers every function of a constexpr table (runtime/table.hpp).
  template <class... E>
  basic_registry& add_table(const fn_table<E...>& t) {
    t.for_each([this](const auto& e) { this->add_entry(e); });
    return *this;
  }

  /// The function registered as `name`, or nullptr.
  const closure* find(std::string_view name) const {
    return funcs_.find(name);
  }
  result<closure> try_get(std::string_view name) const;
  closure get(std::string_view name) const { return try_get(name).value(); }
  bool contains(std::string_view name) const { return find(name) != nullptr; }
  /// Removes `name`; returns whether it was there. VMs already made keep what they resolved.
  bool remove(std::string_view name) {
    return funcs_.erase(name);
  }
  std::size_t size() const { return funcs_.size(); }
  std::vector<std::string_view> names() const;

 private:
  template <class Entry>
  void add_entry(const Entry& e) {
    closure c;
    if constexpr (Entry::raw) c = make_packed(Entry::name, e.f);
    else c = make_typed(Entry::name, e.f);
    c.get()->prepare = e.prepare;
    try_add(Entry::name, std::move(c)).value();
  }

  detail::flat_map<std::string, closure> funcs_;  // by name
};

// Out of the class: in separate compilation (base/config.hpp) the compiled library holds them.
#if RELAXVM_DEFINES_CORE
RELAXVM_DECL status basic_registry::try_add(std::string_view name, closure c) {
  if (name.empty()) return detail::value_error("registry: a function needs a non-empty name");
  if (!c.defined()) return detail::value_error("registry: '", name, "' is an undefined closure");
  if (!c.is_packed())
    return detail::value_error("registry: '", name, "' is a vm function; only packed functions can be registered");
  // Every VM made from this registry copies the closure, possibly on another thread.
  c.share();
  if (!funcs_.try_emplace(name, std::move(c)).second)
    return detail::value_error("registry: '", name, "' is already registered; remove() it first to replace it");
  return {};
}
RELAXVM_DECL result<closure> basic_registry::try_get(std::string_view name) const {
  if (const closure* c = find(name)) return *c;
  return detail::value_error("registry: no function is registered as '", name, "'");
}
RELAXVM_DECL std::vector<std::string_view> basic_registry::names() const {
  std::vector<std::string_view> out;
  out.reserve(funcs_.size());
  for (const auto& [name, fn] : funcs_) out.push_back(name);
  return out;
}
#endif

}  // namespace relaxvm

#endif  // RELAXVM_RUNTIME_REGISTRY_HPP
