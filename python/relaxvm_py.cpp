// SPDX-License-Identifier: Apache-2.0
// The Python module `relaxvm` (pybind11): executables, virtual machines, tensors exchanged with
// NumPy without copying (DLPack), and Python functions as packed functions.
//
//   import numpy as np, relaxvm
//   exe = relaxvm.Executable.load("program.rvx")
//   vm = relaxvm.VirtualMachine(exe, functions={"py.scale": lambda x, k: x.numpy() * k})
//   y = vm["scale_py"](np.arange(4, dtype=np.float32))   # a relaxvm.Tensor
//
// Threads and the GIL: a VM runs with the GIL released (one thread at a time per VM; a lock
// makes the others wait), and a Python function takes the GIL back while it runs. Every relaxvm
// object that Python can see is share()d (atomic reference counts), since Python may drop it on
// any thread while a VM uses it. Memory that Python owns (a NumPy array behind a tensor, a Python
// function behind a packed function) is released with the GIL held, on whatever thread drops it.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <relaxvm.hpp>
#include <relaxvm/onnx.hpp>
#include <relaxvm/ops/ops.hpp>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace py = pybind11;
namespace rv = relaxvm;

namespace {

// ---- errors ---------------------------------------------------------------------------------

// The exception classes, made once at import (module globals keep them alive).
PyObject* error_class = nullptr;           // relaxvm.Error(RuntimeError): runtime errors, and the base
PyObject* type_error_class = nullptr;      // relaxvm.TypeError(relaxvm.Error, TypeError)
PyObject* value_error_class = nullptr;     // relaxvm.ValueError(relaxvm.Error, ValueError)
PyObject* internal_error_class = nullptr;  // relaxvm.InternalError(relaxvm.Error)
PyObject* unsupported_class = nullptr;     // relaxvm.NotImplementedError(relaxvm.Error, NotImplementedError)

PyObject* class_of(rv::error_kind k) {
  switch (k) {
    case rv::error_kind::type: return type_error_class;
    case rv::error_kind::value: return value_error_class;
    case rv::error_kind::internal: return internal_error_class;
    case rv::error_kind::unsupported: return unsupported_class;
    case rv::error_kind::runtime: break;
  }
  return error_class;
}

// The exception a Python function raised inside a VM call on this thread, kept (a strong
// reference, touched only with the GIL held) to become the __cause__ of the relaxvm error that
// the call raises.
thread_local PyObject* pending_cause = nullptr;

void clear_pending_cause() { Py_CLEAR(pending_cause); }

/// Raises `e` as the relaxvm exception of its kind, with the VM's message.
[[noreturn]] void raise_error(const rv::error& e) {
  py::object exc = py::reinterpret_borrow<py::object>(class_of(e.kind()))(py::str(std::string(e.message())));
  if (pending_cause != nullptr) {
    PyException_SetCause(exc.ptr(), pending_cause);  // steals the reference
    pending_cause = nullptr;
  }
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
  throw py::error_already_set();
}

template <class T>
T unwrap(rv::result<T> r) {
  if (!r.ok()) raise_error(r.error());
  return std::move(*r);
}
void unwrap(rv::status s) {
  if (!s.ok()) raise_error(s.error());
}

std::string type_name(py::handle h) { return py::str(py::type::handle_of(h).attr("__qualname__")); }

py::module_& numpy() {
  static py::module_* np = new py::module_(py::module_::import("numpy"));  // never freed: lives as long as Python
  return *np;
}

// ---- tensors and DLPack -----------------------------------------------------------------------

constexpr const char* dltensor_name = "dltensor";
constexpr const char* used_dltensor_name = "used_dltensor";

/// A foreign DLPack tensor as relaxvm takes it: the producer's deleter (which may touch Python
/// objects, as NumPy's does) runs with the GIL held, on whichever thread drops the last view.
struct foreign_dlpack {
  DLManagedTensor managed{};  // what relaxvm sees: a copy of the producer's, strides dropped when compact
  DLManagedTensor* inner = nullptr;
  static void deleter(DLManagedTensor* self) {
    auto* w = static_cast<foreign_dlpack*>(self->manager_ctx);
    if (w->inner->deleter != nullptr && Py_IsInitialized()) {  // after Python is gone: leak, do not crash
      PyGILState_STATE s = PyGILState_Ensure();
      w->inner->deleter(w->inner);
      PyGILState_Release(s);
    }
    delete w;
  }
};

bool compact_strides(const DLTensor& dl) {
  if (dl.strides == nullptr) return true;
  if (dl.ndim > 0 && dl.shape == nullptr) return false;  // malformed: relaxvm's check says so
  std::int64_t expected = 1;
  for (int i = dl.ndim - 1; i >= 0; --i) {
    if (dl.shape[i] == 0) return true;  // no elements: any strides describe the same (empty) tensor
    if (dl.shape[i] != 1 && dl.strides[i] != expected) return false;
    expected *= dl.shape[i];
  }
  return true;
}

void dlpack_capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, used_dltensor_name)) return;  // a consumer took it
  PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
  PyErr_Fetch(&type, &value, &tb);
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, dltensor_name));
  if (m == nullptr) PyErr_WriteUnraisable(capsule);
  else if (m->deleter != nullptr) m->deleter(m);
  PyErr_Restore(type, value, tb);
}

/// A "dltensor" capsule holding `m`; if nobody consumes it, its deleter runs when it goes.
py::capsule make_dlpack_capsule(DLManagedTensor* m) {
  PyObject* cap = PyCapsule_New(m, dltensor_name, &dlpack_capsule_destructor);
  if (cap == nullptr) {
    m->deleter(m);
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(cap);
}

void share_shape(const rv::shape& s) {
  if (rv::object* o = s.get()) o->share();  // the empty shape has no object
}

rv::tensor shared(rv::tensor t) {
  t.share();
  return t;
}

/// relaxvm.Tensor.from_dlpack(obj): takes obj.__dlpack__()'s capsule without copying.
rv::tensor tensor_from_dlpack(py::handle obj) {
  if (py::isinstance<rv::tensor>(obj)) return py::cast<rv::tensor>(obj);
  if (!py::hasattr(obj, "__dlpack__"))
    throw py::type_error("relaxvm.Tensor.from_dlpack: " + type_name(obj) +
                         " has no __dlpack__ method; pass a NumPy array or another DLPack producer");
  // Ask for the device first, as the protocol suggests, so that nothing is exported in vain.
  if (py::hasattr(obj, "__dlpack_device__")) {
    py::object dev = obj.attr("__dlpack_device__")();
    int type = 0, id = 0;
    try {
      py::tuple d = py::cast<py::tuple>(dev);
      if (d.size() != 2) throw py::cast_error();
      type = d[0].cast<int>();
      id = d[1].cast<int>();
    } catch (const py::cast_error&) {
      throw py::type_error("relaxvm.Tensor.from_dlpack: " + type_name(obj) +
                           ".__dlpack_device__() must return (device_type, device_id), not " + std::string(py::repr(dev)));
    }
    if (type != kDLCPU) {
      std::string where = std::string(rv::detail::device_type_name(static_cast<DLDeviceType>(type)));
      throw py::buffer_error("relaxvm.Tensor.from_dlpack: the " + type_name(obj) + " is on device type " +
                             std::to_string(type) + (where.empty() ? "" : " (" + where + ")") + ", id " + std::to_string(id) +
                             "; relaxvm runs on the host (cpu) only: copy it to the CPU first");
    }
  }
  // NumPy 1.24 exports no booleans through DLPack: its bytes as uint8, taken back as bool.
  bool as_bool = false;
  py::object source = py::reinterpret_borrow<py::object>(obj);
  if (py::isinstance(obj, numpy().attr("ndarray")) && obj.attr("dtype").attr("kind").cast<std::string>() == "b") {
    source = obj.attr("view")(numpy().attr("uint8"));
    as_bool = true;
  }
  py::object cap;
  try {
    cap = source.attr("__dlpack__")();
  } catch (py::error_already_set& e) {
    const std::string why = py::str(e.value());
    const std::string what = py::str(e.type().attr("__name__"));
    std::string hint;
    if (py::isinstance(obj, numpy().attr("ndarray")))
      hint = "; NumPy exports only writeable, aligned arrays in native byte order, and "
             "x.astype(x.dtype.newbyteorder('=')) is a copy that is all three";
    py::raise_from(e, PyExc_BufferError,
                   ("relaxvm.Tensor.from_dlpack: " + type_name(obj) + ".__dlpack__() failed (" + what + ": " + why + ")" + hint).c_str());
    throw py::error_already_set();
  }
  PyObject* c = cap.ptr();
  if (!PyCapsule_CheckExact(c))
    throw py::type_error("relaxvm.Tensor.from_dlpack: " + type_name(obj) + ".__dlpack__() returned a " + type_name(cap) +
                         ", not a DLPack capsule");
  if (PyCapsule_IsValid(c, used_dltensor_name))
    throw py::value_error("relaxvm.Tensor.from_dlpack: the DLPack capsule was consumed already (a capsule can be taken once)");
  if (!PyCapsule_IsValid(c, dltensor_name)) {
    const char* name = PyCapsule_GetName(c);
    PyErr_Clear();
    throw py::type_error(std::string("relaxvm.Tensor.from_dlpack: the capsule is named '") + (name ? name : "") +
                         "', not 'dltensor'");
  }
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, dltensor_name));
  if (m == nullptr) throw py::error_already_set();
  if (m->dl_tensor.device.device_type != kDLCPU)
    throw py::buffer_error("relaxvm.Tensor.from_dlpack: the tensor is on " +
                           std::string(rv::to_text(rv::device(m->dl_tensor.device)).view()) +
                           "; relaxvm runs on the host (cpu) only: copy it to the CPU first");
  rv::result<rv::tensor> t = [&]() -> rv::result<rv::tensor> {
    if (m->deleter == &rv::detail::dlpack_export::deleter && !as_bool)
      return rv::tensor::try_from_dlpack(m);  // one of ours coming back: the same tensor
    auto* w = new foreign_dlpack;
    w->inner = m;
    w->managed.dl_tensor = m->dl_tensor;
    w->managed.manager_ctx = w;
    w->managed.deleter = &foreign_dlpack::deleter;
    if (as_bool) w->managed.dl_tensor.dtype = rv::dtype::bool_();
    if (compact_strides(m->dl_tensor)) w->managed.dl_tensor.strides = nullptr;
    rv::result<rv::tensor> r = rv::tensor::try_from_dlpack(&w->managed);
    if (!r.ok()) delete w;  // on error relaxvm leaves the tensor to us; the capsule still owns `m`
    return r;
  }();
  if (!t.ok()) raise_error(t.error());
  // The consumer owns the tensor now (the protocol's renaming): the capsule no longer frees it.
  if (PyCapsule_SetName(c, used_dltensor_name) != 0) throw py::error_already_set();
  return shared(std::move(*t));
}

/// The NumPy dtype of a relaxvm dtype, or a TypeError.
py::dtype numpy_dtype(rv::dtype t) {
  const bool scalar = t.lanes == 1;
  const bool ok = scalar && (t.is_bool() || ((t.code == kDLInt || t.code == kDLUInt) && (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64)) ||
                             (t.code == kDLFloat && (t.bits == 16 || t.bits == 32 || t.bits == 64)) ||
                             (t.code == kDLComplex && (t.bits == 64 || t.bits == 128)));
  const std::string name(rv::to_text(t).view());
  if (!ok) throw py::type_error("relaxvm.Tensor.numpy: NumPy has no dtype for " + name);
  return py::dtype::from_args(py::str(name));
}

/// A NumPy array viewing `t`'s memory (no copy); `base` (the Python Tensor) keeps it alive. A
/// read-only tensor (an executable's constant) gives a read-only array.
py::array numpy_view(const rv::tensor& t, py::handle base) {
  if (t.device().device_type != kDLCPU)
    throw py::buffer_error("relaxvm.Tensor.numpy: the tensor is on " + std::string(rv::to_text(t.device()).view()) +
                           ", whose memory the host cannot read");
  py::dtype dt = numpy_dtype(t.dtype());
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  std::vector<py::ssize_t> strides(shape.size());
  const std::int64_t item = t.dtype().bytes();
  if (t.strides().empty()) {
    std::int64_t s = item;
    for (std::size_t i = shape.size(); i-- > 0;) {
      strides[i] = static_cast<py::ssize_t>(s);
      s *= shape[i];
    }
  } else {
    for (std::size_t i = 0; i < shape.size(); ++i) strides[i] = static_cast<py::ssize_t>(t.strides()[i] * item);
  }
  if (t.numel() == 0 || t.raw_data() == nullptr) return py::array(dt, shape, strides);  // nothing to view
  py::array a(dt, shape, strides, t.raw_data(), base);
  if (t.read_only()) a.attr("flags").attr("writeable") = false;
  return a;
}

/// Tensor.__dlpack__(): a capsule viewing the tensor. A read-only tensor (an executable's
/// constant, shared by every VM) is exported as a copy: DLPack 0.6 cannot mark memory read-only.
py::capsule tensor_dlpack(const rv::tensor& t, const py::object& stream) {
  if (!stream.is_none())
    throw py::buffer_error("relaxvm.Tensor.__dlpack__: stream must be None for a host (cpu) tensor");
  rv::tensor out = t.read_only() ? unwrap(t.try_copy()) : t;
  return make_dlpack_capsule(unwrap(out.try_to_dlpack()));
}

// ---- values ---------------------------------------------------------------------------------

/// A relaxvm value Python has no type for (a dtype, a device, a closure, an ADT with a tag, any
/// other object): opaque, printable, and passed back to a VM as it was.
struct opaque_value {
  rv::value v;
};

constexpr int max_nesting = 256;  // tuples nested deeper are an error both ways (no deep C++ recursion)

// One conversion, either way, of a value that may hold one tuple many times (a DAG: t = (t, t)
// 40 times over is 41 tuples and 2^40 paths). A conversion that meets more than memo_after tuples
// starts again with a memo of each tuple converted, and every later use of a tuple gets the same
// converted object: each tuple is converted once, and the same relaxvm tuple gives the same
// Python tuple (and back). Small values, the common case, make no memo. A conversion makes at
// most max_converted values.
struct restart_with_memo {};
template <class Key, class Out>
struct conversion {
  static constexpr std::int64_t memo_after = 64;
  static constexpr std::int64_t max_converted = std::int64_t{1} << 24;
  bool memo_on = false;
  std::unordered_map<Key, Out> memo;
  std::int64_t tuples = 0, values = 0;

  /// Tuple `k`, of `n` fields, converted before, or null; past the limit, the error.
  const Out* find(Key k, std::int64_t n, const char* direction) {
    if (!memo_on && ++tuples > memo_after) throw restart_with_memo{};
    if (memo_on)
      if (const auto it = memo.find(k); it != memo.end()) return &it->second;
    values += n;
    if (values > max_converted)
      throw py::value_error(std::string("relaxvm: the value holds more than ") + std::to_string(max_converted) +
                            " values (tuple fields; a tuple held many times counts once); it is too large to "
                            "convert " + direction);
    return nullptr;
  }
  void remember(Key k, const Out& out) {
    if (memo_on) memo.emplace(k, out);
  }
  /// convert(value, depth, conversion&) without a memo, then, if it gave up, with one.
  template <class In, class Convert>
  static Out run(const In& in, Convert convert) {
    try {
      conversion c;
      return convert(in, 0, c);
    } catch (const restart_with_memo&) {
      conversion c;
      c.memo_on = true;
      return convert(in, 0, c);
    }
  }
};
using to_python_conversion = conversion<const rv::object*, py::object>;
using from_python_conversion = conversion<PyObject*, rv::value>;

py::object to_python(const rv::value& v, int depth, to_python_conversion& c);
py::object to_python(const rv::value& v) {
  return to_python_conversion::run(v, [](const rv::value& x, int depth, to_python_conversion& c) {
    return to_python(x, depth, c);
  });
}

py::object to_python_opaque(const rv::value& v) {
  rv::value owned = v;  // a borrowed register becomes an owning value
  owned.share();
  return py::cast(opaque_value{std::move(owned)});
}

/// A relaxvm value as Python sees it: None, bool, int, float, str, relaxvm.Tensor,
/// relaxvm.Shape, tuple, or relaxvm.Object.
py::object to_python(const rv::value& v, int depth, to_python_conversion& c) {
  switch (v.kind()) {
    case rv::value_kind::null: return py::none();
    case rv::value_kind::int64: return py::int_(v.raw_int());
    case rv::value_kind::float64: return py::float_(v.raw_double());
    case rv::value_kind::boolean: return py::bool_(v.raw_int() != 0);
    case rv::value_kind::string: {
      const auto s = v.as<std::string_view>();
      PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "surrogateescape");
      if (o == nullptr) throw py::error_already_set();
      return py::reinterpret_steal<py::object>(o);
    }
    case rv::value_kind::tensor: return py::cast(shared(v.as<rv::tensor>()));
    case rv::value_kind::shape: {
      rv::shape s = v.as<rv::shape>();
      share_shape(s);
      return py::cast(std::move(s));
    }
    case rv::value_kind::tuple: {
      const rv::tuple t = v.as<rv::tuple>();
      if (t.tag() != 0) return to_python_opaque(v);  // an ADT: its tag would be lost in a Python tuple
      if (depth >= max_nesting)
        throw py::value_error("relaxvm: a tuple nested deeper than " + std::to_string(max_nesting) +
                              " levels cannot become a Python value");
      if (const py::object* done = c.find(v.get_object(), t.size(), "to Python")) return *done;
      py::tuple out(static_cast<std::size_t>(t.size()));
      for (std::int64_t i = 0; i < t.size(); ++i) out[static_cast<std::size_t>(i)] = to_python(t[i], depth + 1, c);
      c.remember(v.get_object(), out);
      return out;
    }
    case rv::value_kind::context:
      throw py::type_error("relaxvm: the VM context (%vm) cannot be passed to Python");
    case rv::value_kind::dtype:
    case rv::value_kind::device:
    case rv::value_kind::closure:
    case rv::value_kind::object: return to_python_opaque(v);
  }
  throw py::type_error("relaxvm: a value of unknown kind");
}

/// A Python value as a relaxvm value: None, bool, int (int64), float, str, relaxvm.Tensor,
/// relaxvm.Shape, relaxvm.Object, a tuple of these, a NumPy array or any DLPack producer (a
/// tensor, without copying), or a NumPy scalar. A list is an error (a tuple or an array?).
rv::value from_python(py::handle h, int depth, from_python_conversion& c) {
  PyObject* o = h.ptr();
  if (o == Py_None) return {};
  if (PyBool_Check(o)) return rv::value(o == Py_True);
  if (PyLong_Check(o)) {
    int overflow = 0;
    const long long x = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow != 0) throw py::value_error("the int " + std::string(py::str(h)) + " does not fit in int64");
    if (x == -1 && PyErr_Occurred()) throw py::error_already_set();
    return rv::value(static_cast<std::int64_t>(x));
  }
  if (PyFloat_Check(o)) return rv::value(PyFloat_AS_DOUBLE(o));
  if (PyUnicode_Check(o)) {
    PyObject* b = PyUnicode_AsEncodedString(o, "utf-8", "surrogateescape");
    if (b == nullptr) throw py::error_already_set();
    py::bytes bytes = py::reinterpret_steal<py::bytes>(b);
    return rv::value(std::string_view(PyBytes_AS_STRING(b), static_cast<std::size_t>(PyBytes_GET_SIZE(b))));
  }
  if (py::isinstance<rv::tensor>(h)) return rv::value(py::cast<rv::tensor>(h));
  if (py::isinstance<rv::shape>(h)) return rv::value(py::cast<rv::shape>(h));
  if (py::isinstance<opaque_value>(h)) return py::cast<const opaque_value&>(h).v;
  if (PyTuple_Check(o)) {
    if (depth >= max_nesting)
      throw py::value_error("a tuple nested deeper than " + std::to_string(max_nesting) + " levels");
    const Py_ssize_t n = PyTuple_GET_SIZE(o);
    if (const rv::value* done = c.find(o, n, "from Python")) return *done;
    std::vector<rv::value> fields;
    fields.reserve(static_cast<std::size_t>(n));
    for (Py_ssize_t i = 0; i < n; ++i) fields.push_back(from_python(PyTuple_GET_ITEM(o, i), depth + 1, c));
    rv::value out(unwrap(rv::tuple::try_make(fields)));
    c.remember(o, out);
    return out;
  }
  if (py::hasattr(h, "__dlpack__")) return rv::value(tensor_from_dlpack(h));
  if (py::isinstance(h, numpy().attr("bool_"))) return rv::value(h.cast<bool>());
  if (PyIndex_Check(o)) {  // NumPy integers
    py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(o));
    if (!i) throw py::error_already_set();
    return from_python(i, depth, c);
  }
  if (py::hasattr(h, "__float__")) {  // NumPy floating point scalars
    PyObject* f = PyNumber_Float(o);
    if (f == nullptr) throw py::error_already_set();
    return from_python(py::reinterpret_steal<py::object>(f), depth, c);
  }
  if (PyList_Check(o))
    throw py::type_error("a list is not converted: pass a tuple, or a NumPy array for a tensor");
  throw py::type_error("cannot convert " + type_name(h) +
                       " to a relaxvm value (None, bool, int, float, str, tuple, NumPy array or DLPack tensor, "
                       "relaxvm.Tensor, relaxvm.Shape, relaxvm.Object)");
}

rv::value from_python(py::handle h) {
  return from_python_conversion::run(h, [](py::handle x, int depth, from_python_conversion& c) {
    return from_python(x, depth, c);
  });
}

/// from_python for an argument: a failure names the function and the argument.
rv::value argument(py::handle h, std::string_view func, std::size_t i) {
  const auto where = [&] { return std::string(func) + ": argument " + std::to_string(i) + ": "; };
  try {
    return from_python(h);
  } catch (const py::type_error& e) {
    throw py::type_error(where() + e.what());
  } catch (const py::value_error& e) {
    throw py::value_error(where() + e.what());
  } catch (const py::buffer_error& e) {
    throw py::buffer_error(where() + e.what());
  } catch (py::error_already_set& e) {
    // A producer's __dlpack__ failing (NumPy's BufferError, chained): say which argument.
    PyObject* t = e.type().ptr();
    if (t != PyExc_BufferError && t != PyExc_TypeError && t != PyExc_ValueError) throw;
    const std::string why = py::str(e.value());
    py::raise_from(e, t, (where() + why).c_str());
    throw py::error_already_set();
  }
}

// ---- Python functions as packed functions -------------------------------------------------

/// A Python callable as a relaxvm raw packed function. Its arguments become Python values, its
/// result a relaxvm value; what it raises becomes a relaxvm error naming the function (kind
/// type for TypeError, value for ValueError, runtime otherwise), and the relaxvm exception that
/// the VM call raises has the Python exception as its __cause__.
struct python_function {
  PyObject* fn = nullptr;  // a strong reference
  std::string name;

  python_function(py::object f, std::string n) : fn(f.release().ptr()), name(std::move(n)) {}
  python_function(python_function&& o) noexcept : fn(std::exchange(o.fn, nullptr)), name(std::move(o.name)) {}
  python_function(const python_function&) = delete;
  python_function& operator=(const python_function&) = delete;
  python_function& operator=(python_function&&) = delete;
  ~python_function() {
    if (fn != nullptr && Py_IsInitialized()) {  // any thread may drop the last VM or registry holding it
      PyGILState_STATE s = PyGILState_Ensure();
      Py_DECREF(fn);
      PyGILState_Release(s);
    }
  }

  rv::result<rv::value> operator()(std::span<const rv::value> args) const {
    py::gil_scoped_acquire gil;
    try {
      py::tuple py_args(args.size());
      for (std::size_t i = 0; i < args.size(); ++i) {
        try {
          py_args[i] = to_python(args[i]);
        } catch (const py::builtin_exception& e) {
          return rv::type_error(std::string_view(name), ": argument ", i, ": ", std::string_view(e.what()));
        }
      }
      py::object r = py::reinterpret_borrow<py::object>(fn)(*py_args);
      try {
        return from_python(r);
      } catch (const py::builtin_exception& e) {
        return rv::type_error(std::string_view(name), ": the Python function returned a value relaxvm cannot take: ",
                              std::string_view(e.what()));
      }
    } catch (py::error_already_set& e) {
      const std::string what = py::str(e.type().attr("__name__"));
      const std::string why = py::str(e.value());
      rv::error_kind kind = rv::error_kind::runtime;
      if (e.matches(PyExc_TypeError)) kind = rv::error_kind::type;
      else if (e.matches(PyExc_ValueError)) kind = rv::error_kind::value;
      Py_XDECREF(pending_cause);
      pending_cause = e.value().inc_ref().ptr();
      if (e.matches(error_class)) return rv::error(kind, name + ": " + why);  // a nested VM call's error, named already
      return rv::error(kind, name + ": " + what + (why.empty() ? "" : ": " + why));
    } catch (const std::exception& e) {
      return rv::runtime_error(std::string_view(name), ": ", std::string_view(e.what()));
    }
  }
};

rv::closure make_python_function(const std::string& name, py::object fn) {
  if (!PyCallable_Check(fn.ptr()))
    throw py::type_error("relaxvm.Registry.register: '" + name + "' must be callable, not " + type_name(fn));
  return rv::make_packed(name, python_function(std::move(fn), name));
}

/// Every vm.builtin.*, the ops/ kernels and the kernels ONNX models call (onnx.<Op>).
rv::registry default_registry() {
  rv::registry reg;
  rv::onnx::register_kernels(reg);  // ops::register_all too
  return reg;
}

// ---- the VM ---------------------------------------------------------------------------------

struct python_vm {
  explicit python_vm(rv::virtual_machine v) : vm(std::move(v)) {}
  rv::virtual_machine vm;
  std::recursive_mutex mu;  // one thread in the VM at a time; a Python function may call back in
};

py::object call(const std::shared_ptr<python_vm>& vm, const rv::vm_function& f, const py::args& args) {
  std::vector<rv::value> values;
  values.reserve(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    values.push_back(argument(args[i], f.name(), i));
    values.back().share();  // this thread drops them after the lock lets another thread in
  }
  clear_pending_cause();
  rv::result<rv::value> r = [&] {
    py::gil_scoped_release nogil;
    std::lock_guard<std::recursive_mutex> lock(vm->mu);
    rv::result<rv::value> out = f.try_call(values);
    if (out.ok()) out->share();  // the VM may keep a reference, used by the next thread it lets in
    return out;
  }();
  if (!r.ok()) raise_error(r.error());
  return to_python(*r);
}

struct python_vm_function {
  std::shared_ptr<python_vm> vm;
  rv::vm_function f;
};

std::shared_ptr<python_vm> make_vm(const rv::executable& exe, const py::object& functions, const rv::registry* base) {
  rv::registry reg = base != nullptr ? *base : default_registry();
  if (!functions.is_none()) {
    if (!PyDict_Check(functions.ptr()))
      throw py::type_error("relaxvm.VirtualMachine: functions must be a dict of name -> callable, not " + type_name(functions));
    for (auto [key, fn] : py::reinterpret_borrow<py::dict>(functions)) {
      if (!PyUnicode_Check(key.ptr()))
        throw py::type_error("relaxvm.VirtualMachine: a name in functions must be a str, not " + type_name(key));
      const std::string name = py::cast<std::string>(key);
      unwrap(reg.try_add(name, make_python_function(name, py::reinterpret_borrow<py::object>(fn))));
    }
  }
  return std::make_shared<python_vm>(unwrap(rv::virtual_machine::create(exe, reg)));
}

// ---- executables ----------------------------------------------------------------------------

py::bytes read_file(const py::object& path) {
  py::object f = py::module_::import("builtins").attr("open")(path, "rb");
  py::object data;
  try {
    data = f.attr("read")();
  } catch (...) {
    f.attr("close")();
    throw;
  }
  f.attr("close")();
  return data;
}

// The bytes of a path (str or os.PathLike) or of bytes, bytearray or memoryview; `who` names the
// caller in the TypeError.
py::bytes bytes_of(const py::object& src, const char* who) {
  if (PyBytes_Check(src.ptr())) return py::reinterpret_borrow<py::bytes>(src);
  if (PyByteArray_Check(src.ptr()) || PyMemoryView_Check(src.ptr())) {
    PyObject* b = PyBytes_FromObject(src.ptr());
    if (b == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::bytes>(b);
  }
  if (PyUnicode_Check(src.ptr()) || py::hasattr(src, "__fspath__")) return read_file(src);
  throw py::type_error(std::string(who) + ": expects a path (str or os.PathLike) or bytes, not " + type_name(src));
}

std::span<const std::byte> span_of(const py::bytes& bytes) {
  char* data = nullptr;
  Py_ssize_t size = 0;
  if (PyBytes_AsStringAndSize(bytes.ptr(), &data, &size) != 0) throw py::error_already_set();
  return {reinterpret_cast<const std::byte*>(data), static_cast<std::size_t>(size)};
}

rv::executable load_executable(const py::object& src) {
  const py::bytes bytes = bytes_of(src, "relaxvm.Executable.load");
  return unwrap(rv::executable::try_load(span_of(bytes)));
}

// relaxvm.onnx.load: an ONNX model imported, lowered and planned (onnx::load).
rv::executable load_onnx(const py::object& src, const py::object& upper_bounds) {
  rv::onnx::options opt;
  if (!upper_bounds.is_none()) {
    if (!PyDict_Check(upper_bounds.ptr()))
      throw py::type_error("relaxvm.onnx.load: upper_bounds must be a dict of str to int, not " + type_name(upper_bounds));
    for (const auto& [k, v] : py::reinterpret_borrow<py::dict>(upper_bounds)) {
      if (!PyUnicode_Check(k.ptr()) || !PyLong_Check(v.ptr()) || PyBool_Check(v.ptr()))
        throw py::type_error("relaxvm.onnx.load: upper_bounds must map str to int, not " + type_name(py::reinterpret_borrow<py::object>(k)) +
                             " to " + type_name(py::reinterpret_borrow<py::object>(v)));
      int overflow = 0;
      const long long bound = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
      if (overflow != 0)
        throw py::value_error("relaxvm.onnx.load: the upper bound of '" + py::cast<std::string>(k) + "' does not fit int64");
      opt.upper_bounds.emplace_back(py::cast<std::string>(k), static_cast<std::int64_t>(bound));
    }
  }
  if ((PyUnicode_Check(src.ptr()) || py::hasattr(src, "__fspath__")) &&
      py::cast<bool>(py::module_::import("os.path").attr("isfile")(src))) {
    // A regular file: mapped (onnx::load_file), each weight's pages given back once it is copied,
    // so the weights are held once while the model loads. Python's open() first, for its own
    // errors (PermissionError); anything else (missing, a directory, a pipe) is read below.
    py::module_::import("builtins").attr("open")(src, "rb").attr("close")();
    const py::bytes encoded = py::module_::import("os").attr("fsencode")(src);  // any bytes the system takes
    return unwrap(rv::onnx::load_file(std::string(encoded), opt));
  }
  const py::bytes bytes = bytes_of(src, "relaxvm.onnx.load");
  return unwrap(rv::onnx::load(span_of(bytes), opt));
}

py::bytes executable_bytes(const rv::executable& exe) {
  const std::vector<std::byte> b = exe.save();
  return py::bytes(reinterpret_cast<const char*>(b.data()), b.size());
}

py::list function_names(const rv::executable& exe, rv::func_kind kind) {
  py::list out;
  const rv::exec_view v = exe.view();
  for (std::size_t i = 0; i < v.funcs.size(); ++i)
    if (v.funcs[i].kind == kind) out.append(py::str(std::string(v.name(i))));
  return out;
}

py::tuple shape_tuple(const rv::shape& s) {
  py::tuple out(static_cast<std::size_t>(s.size()));
  for (std::int64_t i = 0; i < s.size(); ++i) out[static_cast<std::size_t>(i)] = py::int_(s[i]);
  return out;
}

std::string text_of(const rv::value& v) { return rv::to_string(v); }

}  // namespace

PYBIND11_MODULE(relaxvm, m) {
  m.doc() = R"doc(relaxvm: a register-based tensor virtual machine (a C++20 library, in the style of Apache
TVM's Relax VM), from Python.

  import numpy as np, relaxvm
  exe = relaxvm.Executable.load("program.rvx")
  vm = relaxvm.VirtualMachine(exe, functions={"py.scale": lambda x, k: x.numpy() * k})
  y = vm["scale_py"](np.arange(4, dtype=np.float32))   # a relaxvm.Tensor
  np.from_dlpack(y)                                     # a NumPy view of it, no copy

Values cross as: None, bool, int (int64), float, str, tuple, relaxvm.Tensor (NumPy arrays and
other DLPack producers become tensors without a copy), relaxvm.Shape, and relaxvm.Object for the
rest (dtypes, devices, closures). Errors raise relaxvm.Error (a RuntimeError), or its subclasses
relaxvm.TypeError, relaxvm.ValueError and relaxvm.NotImplementedError (also TypeError,
ValueError and NotImplementedError) and relaxvm.InternalError, with the VM's message.

An ONNX model: exe = relaxvm.onnx.load("model.onnx"); relaxvm.VirtualMachine(exe)["main"](x).)doc";

  // Exceptions.
  error_class = PyErr_NewExceptionWithDoc("relaxvm.Error",
                                          "An error from relaxvm (a RuntimeError): its message says what is wrong, where "
                                          "(function, instruction) and what to do.",
                                          PyExc_RuntimeError, nullptr);
  if (error_class == nullptr) throw py::error_already_set();
  const auto make_sub = [&](const char* name, const char* doc, PyObject* builtin) {
    py::tuple bases = builtin ? py::make_tuple(py::handle(error_class), py::handle(builtin)) : py::make_tuple(py::handle(error_class));
    PyObject* c = PyErr_NewExceptionWithDoc(name, doc, bases.ptr(), nullptr);
    if (c == nullptr) throw py::error_already_set();
    return c;
  };
  type_error_class = make_sub("relaxvm.TypeError", "A relaxvm error of kind type: a wrong kind of argument, or a wrong number of them.",
                              PyExc_TypeError);
  value_error_class = make_sub("relaxvm.ValueError",
                               "A relaxvm error of kind value: a bad value (dtype, shape, size), a malformed executable, a "
                               "missing function.",
                               PyExc_ValueError);
  internal_error_class = make_sub("relaxvm.InternalError", "A relaxvm error of kind internal: a bug in relaxvm.", nullptr);
  m.add_object("Error", py::handle(error_class));
  m.add_object("TypeError", py::handle(type_error_class));
  m.add_object("ValueError", py::handle(value_error_class));
  unsupported_class = make_sub("relaxvm.NotImplementedError",
                               "A relaxvm error of kind unsupported: a well-formed input relaxvm does not implement (an ONNX "
                               "operator, attribute or dtype).",
                               PyExc_NotImplementedError);
  m.add_object("InternalError", py::handle(internal_error_class));
  m.add_object("NotImplementedError", py::handle(unsupported_class));

  // Tensor.
  py::class_<rv::tensor>(m, "Tensor", R"doc(An n-dimensional array on the host (relaxvm::tensor, a DLPack tensor).

Exchanged with NumPy without copying, both ways: Tensor.from_numpy(a) / Tensor.from_dlpack(a)
view the array's memory (and keep the array alive); t.numpy() and np.from_dlpack(t) view the
tensor's memory (and keep it alive). Strided arrays come in as strided tensors; the ops/ kernels
take compact ones only and say so (pass np.ascontiguousarray(a)).)doc")
      .def_static(
          "from_dlpack",
          [](py::object obj) -> py::object {
            if (py::isinstance<rv::tensor>(obj)) return obj;
            return py::cast(tensor_from_dlpack(obj));
          },
          py::arg("obj"),
                  R"doc(A tensor viewing obj's memory (no copy) through the DLPack protocol: calls
obj.__dlpack__() and takes the "dltensor" capsule (renaming it "used_dltensor"). obj stays alive
as long as the tensor does. obj must be on the CPU (BufferError otherwise); a NumPy array must be
writeable, aligned and in native byte order (NumPy's rule; BufferError otherwise). A relaxvm.Tensor
is returned as it is.)doc")
      .def_static(
          "from_numpy",
          [](py::object a) {
            if (!py::isinstance(a, numpy().attr("ndarray")))
              throw py::type_error("relaxvm.Tensor.from_numpy: expects a numpy.ndarray, not " + type_name(a));
            return tensor_from_dlpack(a);
          },
          py::arg("array"),
          "A tensor viewing the NumPy array's memory (no copy; the array stays alive as long as the tensor): "
          "Tensor.from_dlpack for NumPy arrays, booleans included.")
      .def_property_readonly("shape", [](const rv::tensor& t) { return shape_tuple(t.shape()); }, "The shape, a tuple of ints.")
      .def_property_readonly("dtype", [](const rv::tensor& t) { return std::string(rv::to_text(t.dtype()).view()); },
                             "The element type as a string: \"float32\", \"int64\", \"bool\", ...")
      .def_property_readonly("ndim", [](const rv::tensor& t) { return t.ndim(); }, "The number of dimensions.")
      .def_property_readonly("device", [](const rv::tensor& t) { return std::string(rv::to_text(t.device()).view()); },
                             "The device as a string: \"cpu:0\".")
      .def_property_readonly("read_only", [](const rv::tensor& t) { return t.read_only(); },
                             "True for an executable's constants: shared by every VM, never written.")
      .def(
          "numpy", [](py::object self) { return numpy_view(py::cast<const rv::tensor&>(self), self); },
          R"doc(A NumPy array viewing this tensor's memory (no copy): writing one writes the other. The array
keeps the tensor alive. For a read-only tensor (an executable's constant) the array is read-only.)doc")
      .def(
          "__array__",
          [](py::object self, py::object dtype, py::object copy) -> py::object {
            py::object a = numpy_view(py::cast<const rv::tensor&>(self), self);
            if (!dtype.is_none()) a = a.attr("astype")(dtype, py::arg("copy") = false);
            if (!copy.is_none() && py::cast<bool>(copy)) a = a.attr("copy")();
            return a;
          },
          py::arg("dtype") = py::none(), py::arg("copy") = py::none(),
          "np.asarray(t): the view numpy() gives (converted to dtype if one is given).")
      .def("__dlpack__", &tensor_dlpack, py::arg("stream") = py::none(),
           R"doc(The DLPack protocol: a "dltensor" capsule viewing this tensor (no copy), which keeps the
tensor alive until the consumer is done. stream must be None (host memory). A read-only tensor
(an executable's constant) is exported as a copy, since DLPack cannot mark memory read-only.)doc")
      .def(
          "__dlpack_device__",
          [](const rv::tensor& t) { return py::make_tuple(static_cast<int>(t.device().device_type), t.device().device_id); },
          "The DLPack protocol: (device_type, device_id); (1, id) is the CPU.")
      .def("__repr__", [](const rv::tensor& t) { return text_of(rv::value(t)); });

  // Shape.
  py::class_<rv::shape>(m, "Shape", R"doc(A shape value of a program (relaxvm::shape): a sequence of ints.

Shape((2, 3)) makes one to pass to a program; it compares equal to the tuple of its dims.)doc")
      .def(py::init([](py::iterable dims) {
             std::vector<std::int64_t> d;
             for (py::handle x : dims) {
               rv::value v = PyIndex_Check(x.ptr()) ? from_python(x) : rv::value();
               if (v.kind() != rv::value_kind::int64)
                 throw py::type_error("relaxvm.Shape: dimensions must be ints, not " + type_name(x));
               d.push_back(v.raw_int());
             }
             rv::shape s = unwrap(rv::shape::try_make(d));
             share_shape(s);
             return s;
           }),
           py::arg("dims") = py::tuple(), "Shape(dims): from an iterable of ints.")
      .def("__len__", [](const rv::shape& s) { return s.size(); })
      .def("__getitem__",
           [](const rv::shape& s, std::int64_t i) {
             const std::int64_t n = s.size();
             if (i < 0) i += n;
             if (i < 0 || i >= n) throw py::index_error("relaxvm.Shape index out of range");
             return s[i];
           })
      .def("__iter__", [](const rv::shape& s) { return py::iter(shape_tuple(s)); })
      .def("__eq__",
           [](const rv::shape& s, py::object o) {
             if (py::isinstance<rv::shape>(o)) return s == py::cast<const rv::shape&>(o);
             if (PyTuple_Check(o.ptr())) return shape_tuple(s).equal(o);
             return false;
           })
      .def("__hash__", [](const rv::shape& s) { return py::hash(shape_tuple(s)); })
      .def("__repr__", [](const rv::shape& s) { return "relaxvm.Shape(" + std::string(py::repr(shape_tuple(s))) + ")"; });

  // Object.
  py::class_<opaque_value>(m, "Object", R"doc(A relaxvm value Python has no type for: a dtype, a device, a closure,
an ADT (a tuple with a tag), or another object. Printable, comparable, and passed back to a
program as it is.)doc")
      .def_property_readonly("kind", [](const opaque_value& o) { return std::string(rv::to_string(o.v.kind())); },
                             "Its kind: \"dtype\", \"device\", \"closure\", \"tuple\" (an ADT) or \"object\".")
      .def("__eq__",
           [](const opaque_value& a, py::object b) {
             return py::isinstance<opaque_value>(b) && a.v == py::cast<const opaque_value&>(b).v;
           })
      .def("__repr__", [](const opaque_value& o) { return "relaxvm.Object(" + text_of(o.v) + ")"; });

  // Executable.
  py::class_<rv::executable>(m, "Executable", R"doc(A verified program (relaxvm::executable), immutable: share one
between VMs and threads.)doc")
      .def_static("load", &load_executable, py::arg("path_or_bytes"),
                  R"doc(Loads an executable from a file (str or os.PathLike) or from bytes (bytes,
bytearray, memoryview) written by save()/to_bytes(). A malformed, truncated or hostile input raises
relaxvm.ValueError naming what is wrong; a file that cannot be read raises OSError.)doc")
      .def(
          "save", [](const rv::executable& exe, py::object path) {
            py::bytes b = executable_bytes(exe);
            py::object f = py::module_::import("builtins").attr("open")(path, "wb");
            try {
              f.attr("write")(b);
            } catch (...) {
              f.attr("close")();
              throw;
            }
            f.attr("close")();
          },
          py::arg("path"), "Writes the executable to a file (the format of docs/format.md); load() reads it back.")
      .def("to_bytes", &executable_bytes, "The executable as bytes (the format of docs/format.md).")
      .def("as_text", &rv::executable::as_text, "The program as text (the Relax VM's layout).")
      .def(
          "stats", [](const rv::executable& exe) { return exe.stats(); },
          "Statistics: the constant pool and the function table.")
      .def("as_cpp", &rv::executable::as_cpp, "C++ code (relaxvm::exec_builder calls) that rebuilds this executable.")
      .def(
          "function_names", [](const rv::executable& exe) { return function_names(exe, rv::func_kind::vm); },
          "The names of the program's functions (bytecode), in the order of the function table.")
      .def(
          "imports", [](const rv::executable& exe) { return function_names(exe, rv::func_kind::packed); },
          "The names of the packed functions the program calls: a VM's registry must have each.")
      .def("__eq__", [](const rv::executable& a, py::object b) {
        return py::isinstance<rv::executable>(b) && a == py::cast<const rv::executable&>(b);
      })
      .def("__repr__", [](const rv::executable& exe) {
        return "relaxvm.Executable(functions=" + std::string(py::repr(function_names(exe, rv::func_kind::vm))) + ")";
      });

  // Registry.
  py::class_<rv::registry>(m, "Registry", R"doc(Names to packed functions, for VirtualMachine: every vm.builtin.* and the
ops.* kernels (add, subtract, multiply, divide, maximum, matmul, dense, relu, gelu, sigmoid,
softmax, sum, mean) and the onnx.* kernels (what relaxvm.onnx.load's programs call) to start
with, and the Python functions you register. A VM resolves every name
when it is made: register first, then make the VM.)doc")
      .def(py::init(&default_registry))
      .def(
          "register",
          [](py::object self, const std::string& name, py::object fn) -> py::object {
            if (fn.is_none()) {  // @reg.register("name"); the decorator keeps the registry alive
              return py::cpp_function([self, name](py::object f) {
                unwrap(py::cast<rv::registry&>(self).try_add(name, make_python_function(name, f)));
                return f;
              });
            }
            unwrap(py::cast<rv::registry&>(self).try_add(name, make_python_function(name, fn)));
            return fn;
          },
          py::arg("name"), py::arg("fn") = py::none(),
          R"doc(Registers the Python callable fn as packed function `name` and returns fn (without fn,
returns a decorator). A program calls it with its arguments as Python values (None, bool, int,
float, str, tuple, relaxvm.Tensor, relaxvm.Shape, relaxvm.Object); its result (any value a VM call
takes, a NumPy array included) goes back to the program. What it raises becomes a relaxvm error
naming `name`, raised from the VM call with the Python exception as __cause__. A name can be
registered once (relaxvm.ValueError otherwise).)doc")
      .def("__contains__", [](const rv::registry& reg, const std::string& name) { return reg.contains(name); })
      .def(
          "names",
          [](const rv::registry& reg) {
            py::list out;
            for (std::string_view n : reg.names()) out.append(py::str(std::string(n)));
            return out;
          },
          "Every registered name, sorted.");

  // VirtualMachine and its functions.
  py::class_<python_vm_function>(m, "Function", "A function of a VirtualMachine (vm[name]): call it with its arguments.")
      .def(
          "__call__", [](const python_vm_function& f, py::args args) { return call(f.vm, f.f, args); },
          "Calls the function; see VirtualMachine.invoke.")
      .def_property_readonly("name", [](const python_vm_function& f) { return std::string(f.f.name()); })
      .def("__repr__", [](const python_vm_function& f) { return "relaxvm.Function('" + std::string(f.f.name()) + "')"; });

  py::class_<python_vm, std::shared_ptr<python_vm>>(m, "VirtualMachine", R"doc(Runs an executable.

VirtualMachine(exe, functions=None, registry=None): resolves every packed function the program
calls in `registry` (default: a new relaxvm.Registry(), every builtin and ops.* kernel) plus
`functions`, a dict of name -> Python callable (see Registry.register). A missing function raises
relaxvm.ValueError naming it and the instruction that needs it.

A call runs with the GIL released; one thread at a time runs a given VM (give each thread its own
VM over the same Executable to run them at once).)doc")
      .def(py::init([](const rv::executable& exe, const py::object& functions, const rv::registry* registry) {
             return make_vm(exe, functions, registry);
           }),
           py::arg("exe"), py::arg("functions") = py::none(), py::arg("registry") = py::none())
      .def(
          "invoke",
          [](const std::shared_ptr<python_vm>& vm, const std::string& name, py::args args) {
            return call(vm, unwrap(vm->vm.try_function(name)), args);
          },
          py::arg("name"),
          R"doc(vm.invoke(name, *args): calls function `name`. Arguments: NumPy arrays (viewed, not copied),
relaxvm.Tensor, int, float, bool, str, None, tuples, relaxvm.Shape, relaxvm.Object. Returns a
relaxvm.Tensor, a Python scalar, str, None, a tuple, relaxvm.Shape or relaxvm.Object. An error
raises relaxvm.Error (relaxvm.TypeError, relaxvm.ValueError) with the VM's message.)doc")
      .def(
          "__getitem__",
          [](const std::shared_ptr<python_vm>& vm, const std::string& name) {
            rv::result<rv::vm_function> f = vm->vm.try_function(name);
            if (!f.ok()) throw py::key_error(std::string(f.error().message()));
            return python_vm_function{vm, std::move(*f)};
          },
          "vm[name]: function `name` (KeyError if the executable has none), to call: vm[\"main\"](x, y).")
      .def_property_readonly(
          "executable", [](const std::shared_ptr<python_vm>& vm) { return vm->vm.exec(); }, "The executable it runs.");

  // relaxvm.onnx: models exported as ONNX (docs/onnx.md).
  py::module_ onnx = m.def_submodule("onnx", "ONNX models: relaxvm.onnx.load(path_or_bytes) gives an Executable.");
  onnx.def("load", &load_onnx, py::arg("path_or_bytes"), py::arg("upper_bounds") = py::none(),
           R"doc(Imports an ONNX model (a .onnx file's path, or its bytes), lowers and plans it into an
Executable whose function "main" takes the graph's inputs (NumPy arrays) and returns its output (a
relaxvm.Tensor) or outputs (a tuple). upper_bounds, a dict of named dimension to int ({"batch": 8}),
bounds the model's symbolic dimensions so its memory is planned. A VirtualMachine made with the
default registry has every kernel the program calls. An operator, attribute or dtype relaxvm does
not implement raises relaxvm.NotImplementedError naming each; a malformed file relaxvm.ValueError.)doc");
}