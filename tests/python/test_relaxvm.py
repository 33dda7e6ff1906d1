# SPDX-License-Identifier: Apache-2.0
"""Tests of the Python module relaxvm (python/relaxvm_py.cpp).

meson test --suite python runs them; by hand:
    PYTHONPATH=build/python python3 tests/python/test_relaxvm.py
The program they load is written at build time by python/make_test_program.cpp (its functions:
main, add_out, scale_py, echo, inspect, constant); RELAXVM_TEST_PROGRAM names the file, or else
it is looked for beside the module.
"""
import contextlib
import gc
import io
import os
import pathlib
import tempfile
import threading
import unittest
import weakref

import numpy as np

import relaxvm

PROGRAM = os.environ.get("RELAXVM_TEST_PROGRAM") or os.path.join(
    os.path.dirname(os.path.abspath(relaxvm.__file__)), "test_program.rvx")

# The README's Python example (its one ```python block), run as it is written there, the path
# aside, by test_readme_example.
README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def readme_example():
    text = README.read_text(encoding="utf-8")
    start = text.index("```python\n") + len("```python\n")
    return text[start:text.index("```\n", start)]


def load():
    return relaxvm.Executable.load(PROGRAM)


def make_vm(scale=lambda x, k: x.numpy() * k):
    """A VM over the test program, with `scale` as py.scale."""
    return relaxvm.VirtualMachine(load(), functions={"py.scale": scale})


def f32(*values):
    return np.array(values, dtype=np.float32)


class ReadmeTest(unittest.TestCase):
    def test_readme_example(self):
        example = readme_example()
        code = example.replace('"build/python/test_program.rvx"', repr(PROGRAM))
        self.assertNotEqual(code, example)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README", "exec"), {})
        self.assertEqual(out.getvalue(), "[0. 3. 6. 9.]\n")


class ExecutableTest(unittest.TestCase):
    def test_load_save_round_trip(self):
        exe = load()
        self.assertEqual(relaxvm.Executable.load(exe.to_bytes()), exe)
        self.assertEqual(relaxvm.Executable.load(bytearray(exe.to_bytes())), exe)
        self.assertEqual(relaxvm.Executable.load(memoryview(exe.to_bytes())), exe)
        self.assertEqual(relaxvm.Executable.load(pathlib.Path(PROGRAM)), exe)
        with open(PROGRAM, "rb") as f:
            self.assertEqual(exe.to_bytes(), f.read())
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "copy.rvx")
            exe.save(path)
            back = relaxvm.Executable.load(path)
            self.assertEqual(back, exe)
            self.assertEqual(back.as_text(), exe.as_text())
            exe.save(pathlib.Path(d) / "again.rvx")
            self.assertEqual(relaxvm.Executable.load(pathlib.Path(d) / "again.rvx"), exe)
        self.assertNotEqual(exe, 42)

    def test_as_text_stats_as_cpp(self):
        exe = load()
        text = exe.as_text()
        self.assertIn("@main:\n  call  ops.add          in: %0, %1       dst: %2\n", text)
        self.assertIn("@py.scale packed_func;", text)
        self.assertIn("Relax VM executable statistics:", exe.stats())
        self.assertIn('"hello"', exe.stats())
        self.assertIn('b.declare_function("main", relaxvm::func_kind::vm);', exe.as_cpp())

    def test_function_names_and_imports(self):
        exe = load()
        self.assertEqual(exe.function_names(), ["main", "add_out", "scale_py", "echo", "inspect", "constant"])
        self.assertEqual(exe.imports(), ["ops.add", "ops.relu", "ops.add_out", "py.scale", "vm.builtin.make_tuple",
                                         "vm.builtin.copy"])
        self.assertIn("'main'", repr(exe))

    def test_load_errors(self):
        data = load().to_bytes()
        with self.assertRaises(relaxvm.ValueError) as cm:
            relaxvm.Executable.load(data[:20])
        self.assertIn("too few for an executable", str(cm.exception))
        self.assertIsInstance(cm.exception, ValueError)
        self.assertIsInstance(cm.exception, relaxvm.Error)
        self.assertIsInstance(cm.exception, RuntimeError)
        with self.assertRaises(relaxvm.ValueError):
            relaxvm.Executable.load(b"not an executable at all, not at all")
        with self.assertRaises(FileNotFoundError):
            relaxvm.Executable.load("/nonexistent/program.rvx")
        with self.assertRaises(TypeError):
            relaxvm.Executable.load(42)


class VirtualMachineTest(unittest.TestCase):
    def test_main_with_numpy_arrays(self):
        vm = make_vm()
        for dtype in (np.float32, np.float64):
            x = np.array([[-2, -1, 0], [1, 2, 3]], dtype=dtype)
            y = np.array([[1, 0.5, -1], [1, -3, 0.25]], dtype=dtype)
            t = vm["main"](x, y)
            self.assertIsInstance(t, relaxvm.Tensor)
            self.assertEqual(t.shape, (2, 3))
            self.assertEqual(t.dtype, np.dtype(dtype).name)
            np.testing.assert_array_equal(t.numpy(), np.maximum(x + y, 0))
            np.testing.assert_array_equal(vm.invoke("main", x, y).numpy(), np.maximum(x + y, 0))
        # A NumPy array's broadcasting, through the kernel.
        np.testing.assert_array_equal(vm["main"](f32(1, 2, 3), np.ones((2, 1), np.float32)).numpy(),
                                      np.maximum(f32(1, 2, 3) + np.ones((2, 1), np.float32), 0))

    def test_functions_and_executable(self):
        exe = load()
        vm = relaxvm.VirtualMachine(exe, functions={"py.scale": abs})
        self.assertEqual(vm.executable, exe)
        f = vm["main"]
        self.assertEqual(f.name, "main")
        self.assertEqual(repr(f), "relaxvm.Function('main')")
        with self.assertRaises(KeyError) as cm:
            vm["nope"]
        self.assertIn("no function 'nope'", str(cm.exception))
        with self.assertRaises(relaxvm.ValueError) as cm:
            vm.invoke("nope")
        self.assertIn("no function 'nope'", str(cm.exception))
        # A packed function of the executable can be called directly too.
        np.testing.assert_array_equal(vm["ops.add"](f32(1, 2), f32(3, 4)).numpy(), f32(4, 6))

    def test_output_array_written_in_place(self):
        vm = make_vm()
        x, y = f32(1, 2, 3, 4), f32(10, 20, 30, 40)
        out = np.zeros(4, dtype=np.float32)
        r = vm["add_out"](x, y, out)
        np.testing.assert_array_equal(out, x + y)  # the kernel wrote into the NumPy array's memory
        self.assertTrue(np.shares_memory(r.numpy(), out))

    def test_values_there_and_back(self):
        vm = make_vm()
        echo = vm["echo"]
        for v in (None, True, False, 3, -2**63, 2**63 - 1, 2.5, "héllo", "", (), (1, (2.5, "x", None), True)):
            back = echo(v)
            self.assertEqual(back, v)
            self.assertIs(type(back), type(v))
        self.assertEqual(echo(relaxvm.Shape((2, 3))), relaxvm.Shape((2, 3)))
        self.assertEqual(echo(relaxvm.Shape()), ())
        self.assertEqual(echo(np.int32(5)), 5)
        self.assertIs(type(echo(np.int64(-7))), int)
        self.assertEqual(echo(np.float32(1.5)), 1.5)
        self.assertIs(echo(np.bool_(True)), True)
        t = relaxvm.Tensor.from_numpy(f32(1, 2))
        self.assertTrue(np.shares_memory(echo(t).numpy(), t.numpy()))
        a = f32(5, 6)
        self.assertTrue(np.shares_memory(echo(a).numpy(), a))  # an argument is not copied
        nested = echo((a, (t,)))
        self.assertTrue(np.shares_memory(nested[0].numpy(), a))

    def test_bad_arguments(self):
        vm = make_vm()
        with self.assertRaises(TypeError) as cm:
            vm["echo"]([1, 2])
        self.assertIn("echo: argument 0: a list is not converted", str(cm.exception))
        with self.assertRaises(TypeError) as cm:
            vm["echo"](object())
        self.assertIn("cannot convert object", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            vm["echo"](2**64)
        self.assertIn("does not fit in int64", str(cm.exception))
        deep = ()
        for _ in range(300):
            deep = (deep,)
        with self.assertRaises(ValueError) as cm:
            vm["echo"](deep)
        self.assertIn("nested deeper than 256", str(cm.exception))
        readonly = f32(1, 2)
        readonly.flags.writeable = False
        with self.assertRaises(BufferError) as cm:
            vm["main"](readonly, readonly)
        self.assertIn("main: argument 0:", str(cm.exception))
        self.assertIn("x.astype(x.dtype.newbyteorder('='))", str(cm.exception))

    def test_shared_tuples_convert_once(self):
        # t = (t, t) 40 times over: 41 tuples, 2^40 paths. Before, both conversions walked every
        # path (issue 33, point 7) and the call never returned.
        vm = make_vm()
        t = (1,)
        for _ in range(40):
            t = (t, t)
        back = vm["echo"](t)
        x = back
        for _ in range(40):
            self.assertIs(x[0], x[1])  # one relaxvm tuple, one Python tuple
            x = x[0]
        self.assertEqual(x, (1,))
        with self.assertRaises(ValueError) as cm:
            vm["echo"]((None,) * (2**24 + 1))
        self.assertIn("echo: argument 0: relaxvm: the value holds more than 16777216 values", str(cm.exception))

    def test_wrong_input_raises_with_the_vms_message(self):
        vm = make_vm()
        x = np.array([1, 2], dtype=np.int32)
        with self.assertRaises(relaxvm.TypeError) as cm:
            vm["main"](x, x)
        self.assertEqual(str(cm.exception), "ops.add: argument 0 has dtype int32; the ops take float32 and float64\n"
                                            "  in function 'main', instruction 0 (call ops.add in: %0, %1 dst: %2)")
        self.assertIsInstance(cm.exception, TypeError)
        with self.assertRaises(relaxvm.Error) as cm:
            vm["main"](f32(1, 2), f32(1, 2, 3))  # shapes that do not broadcast
        self.assertIn("ops.add", str(cm.exception))
        with self.assertRaises(relaxvm.Error) as cm:
            vm["main"](f32(1))  # one argument short
        self.assertIn("main", str(cm.exception))
        # Strided arrays come in as strided tensors, which the kernels refuse.
        strided = np.arange(8, dtype=np.float32)[::2]
        with self.assertRaises(relaxvm.ValueError) as cm:
            vm["main"](strided, strided)
        self.assertIn("strided", str(cm.exception))
        # The VM is fine after errors.
        np.testing.assert_array_equal(vm["main"](f32(1, -5), f32(1, 1)).numpy(), f32(2, 0))

    def test_missing_function_at_creation(self):
        with self.assertRaises(relaxvm.ValueError) as cm:
            relaxvm.VirtualMachine(load())
        self.assertIn("py.scale", str(cm.exception))
        with self.assertRaises(TypeError):
            relaxvm.VirtualMachine(load(), functions=[("py.scale", abs)])
        with self.assertRaises(TypeError):
            relaxvm.VirtualMachine(load(), functions={"py.scale": 42})
        with self.assertRaises(TypeError):
            relaxvm.VirtualMachine(load(), functions={1: abs})
        with self.assertRaises(relaxvm.ValueError) as cm:
            relaxvm.VirtualMachine(load(), functions={"ops.add": abs})
        self.assertIn("already registered", str(cm.exception))

    def test_threads(self):
        # A VM runs without the GIL; Python functions take it back. Each thread has its own VM,
        # and two more threads share one (a lock lets one in at a time).
        errors = []
        shared = make_vm(lambda x, k: x.numpy() * k + 1)

        def work(vm, extra):
            try:
                for i in range(200):
                    x = np.full(8, i, dtype=np.float32)
                    np.testing.assert_array_equal(vm["scale_py"](x).numpy(), 3 * x + extra)
            except Exception as e:  # noqa: BLE001: reported below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(make_vm(), 0)) for _ in range(4)]
        threads += [threading.Thread(target=work, args=(shared, 1)) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])


class PythonFunctionTest(unittest.TestCase):
    def test_called_and_result_used(self):
        seen = []

        def scale(x, k):
            seen.append((type(x), x.shape, x.dtype, k))
            return x.numpy() * k  # a new NumPy array: it becomes a tensor without a copy

        vm = make_vm(scale)
        x = f32(1, 2, 3)
        np.testing.assert_array_equal(vm["scale_py"](x).numpy(), 3 * x)
        self.assertEqual(seen, [(relaxvm.Tensor, (3,), "float32", 2.0)])

    def test_every_kind_of_argument(self):
        got = []
        vm = make_vm(lambda *args: got.append(args) or ("result", args[0] + 1))
        self.assertEqual(vm["inspect"](), ("result", 8))
        (args,) = got
        self.assertEqual(args[:3], (7, 2.5, "hello"))
        self.assertEqual(args[3], relaxvm.Shape((2, 3)))
        self.assertEqual(args[3], (2, 3))
        self.assertIsInstance(args[4], relaxvm.Object)
        self.assertEqual(args[4].kind, "dtype")
        self.assertEqual(repr(args[4]), "relaxvm.Object(float32)")
        self.assertEqual(args[5:], (True, (1, "hello"), None))
        # An Object goes back to a program as it was.
        self.assertEqual(vm["echo"](args[4]), args[4])
        self.assertNotEqual(args[4], "float32")

    def test_exception_becomes_an_error_naming_the_function(self):
        def scale(x, k):
            return 1 / 0

        vm = make_vm(scale)
        with self.assertRaises(relaxvm.Error) as cm:
            vm["scale_py"](f32(1))
        msg = str(cm.exception)
        self.assertTrue(msg.startswith("py.scale: ZeroDivisionError: division by zero\n"), msg)
        self.assertIn("in function 'scale_py', instruction 0", msg)
        self.assertIsInstance(cm.exception.__cause__, ZeroDivisionError)
        # Python's kinds map onto relaxvm's.
        vm = make_vm(lambda x, k: int("x"))
        with self.assertRaises(relaxvm.ValueError) as cm:
            vm["scale_py"](f32(1))
        self.assertIn("py.scale: ValueError: invalid literal", str(cm.exception))
        vm = make_vm(lambda x: x)  # called with two arguments
        with self.assertRaises(relaxvm.TypeError) as cm:
            vm["scale_py"](f32(1))
        self.assertIn("py.scale: TypeError:", str(cm.exception))
        # The VM is fine afterwards, and a later error has no stale cause.
        with self.assertRaises(relaxvm.TypeError) as cm:
            vm["main"](np.array([1], np.int32), np.array([1], np.int32))
        self.assertIsNone(cm.exception.__cause__)

    def test_result_that_cannot_be_taken(self):
        vm = make_vm(lambda x, k: [1, 2])
        with self.assertRaises(relaxvm.TypeError) as cm:
            vm["scale_py"](f32(1))
        self.assertIn("py.scale: the Python function returned a value relaxvm cannot take: a list", str(cm.exception))

    def test_calling_back_into_the_vm(self):
        holder = {}

        def scale(x, k):
            # Re-entrant: the same VM, from inside one of its calls.
            return holder["vm"]["main"](x, x).numpy() * k / 2

        vm = holder["vm"] = make_vm(scale)
        np.testing.assert_array_equal(vm["scale_py"](f32(1, -1)).numpy(), f32(3, -1))

        def failing(x, k):
            return holder["vm"]["main"](np.array([1], np.int32), np.array([1], np.int32))

        vm = holder["vm"] = make_vm(failing)
        with self.assertRaises(relaxvm.TypeError) as cm:
            vm["scale_py"](f32(1))
        msg = str(cm.exception)
        self.assertTrue(msg.startswith("py.scale: ops.add: argument 0 has dtype int32"), msg)
        self.assertIn("in function 'main'", msg)
        self.assertIn("in function 'scale_py'", msg)
        self.assertIsInstance(cm.exception.__cause__, relaxvm.TypeError)
        holder.clear()

    def test_registry(self):
        reg = relaxvm.Registry()
        self.assertIn("ops.add", reg)
        self.assertIn("vm.builtin.make_tuple", reg.names())
        self.assertNotIn("py.scale", reg)

        @reg.register("py.scale")
        def scale(x, k):
            return x.numpy() * k

        self.assertTrue(callable(scale))  # the decorator gives the function back
        self.assertIn("py.scale", reg)
        self.assertIs(reg.register("py.other", print), print)
        self.assertEqual(reg.names(), sorted(reg.names()))
        with self.assertRaises(relaxvm.ValueError) as cm:
            reg.register("py.scale", abs)
        self.assertIn("already registered", str(cm.exception))
        with self.assertRaises(TypeError):
            reg.register("py.another", 42)
        vm = relaxvm.VirtualMachine(load(), registry=reg)
        np.testing.assert_array_equal(vm["scale_py"](f32(2)).numpy(), f32(6))
        # functions= adds to a registry without changing it.
        vm = relaxvm.VirtualMachine(load(), functions={"py.extra": abs}, registry=reg)
        self.assertNotIn("py.extra", reg)


class TensorTest(unittest.TestCase):
    def test_from_numpy_is_zero_copy(self):
        a = np.arange(6, dtype=np.float32).reshape(2, 3)
        t = relaxvm.Tensor.from_numpy(a)
        self.assertEqual((t.shape, t.dtype, t.ndim, t.device, t.read_only), ((2, 3), "float32", 2, "cpu:0", False))
        self.assertEqual(t.__dlpack_device__(), (1, 0))
        a[0, 0] = 42  # write through NumPy, read through relaxvm
        self.assertEqual(t.numpy()[0, 0], 42)
        t.numpy()[1, 2] = -1  # write through relaxvm, read through NumPy
        self.assertEqual(a[1, 2], -1)
        self.assertTrue(np.shares_memory(np.asarray(t), a))
        self.assertIn("tensor([[42, 1, 2], [3, 4, -1]], shape=[2, 3], dtype=float32", repr(t))
        # from_dlpack is the same for NumPy arrays, and gives a relaxvm.Tensor back as it is.
        t2 = relaxvm.Tensor.from_dlpack(a)
        a[0, 1] = 7
        self.assertEqual(t2.numpy()[0, 1], 7)
        self.assertIs(relaxvm.Tensor.from_dlpack(t2), t2)

    def test_np_from_dlpack_is_zero_copy(self):
        vm = make_vm()
        t = vm["main"](f32(1, 2, 3, 4), f32(0, 0, 0, 0))
        view = np.from_dlpack(t)
        self.assertTrue(np.shares_memory(view, t.numpy()))
        # Write through relaxvm (a kernel's output, then numpy()), read through the NumPy view.
        vm["add_out"](f32(10, 20, 30, 40), f32(1, 1, 1, 1), t)
        np.testing.assert_array_equal(view, f32(11, 21, 31, 41))
        t.numpy()[0] = -5
        self.assertEqual(view[0], -5)
        # np.from_dlpack of a relaxvm tensor made from NumPy memory: still the same memory.
        a = f32(1, 2)
        self.assertTrue(np.shares_memory(np.from_dlpack(relaxvm.Tensor.from_numpy(a)), a))

    def test_owner_kept_alive_numpy_to_relaxvm(self):
        a = np.arange(1000, dtype=np.float64)
        alive = weakref.ref(a)
        t = relaxvm.Tensor.from_numpy(a)
        del a
        gc.collect()
        self.assertIsNotNone(alive())  # the tensor keeps the array
        np.testing.assert_array_equal(t.numpy(), np.arange(1000, dtype=np.float64))
        vm = make_vm()
        np.testing.assert_array_equal(vm["main"](t, t).numpy(), 2 * np.arange(1000, dtype=np.float64))
        del t, vm
        gc.collect()
        self.assertIsNone(alive())  # and lets it go with the last view: nothing leaks

    def test_owner_kept_alive_relaxvm_to_numpy(self):
        vm = make_vm()
        t = vm["main"](f32(1, 2, 3), f32(1, 1, 1))
        view = t.numpy()
        dl = np.from_dlpack(t)
        self.assertIs(view.base, t)
        del t
        gc.collect()
        # The VM may reuse what it allocated for its next run, but not memory NumPy still views.
        vm["main"](f32(100, 100, 100), f32(1, 1, 1))
        gc.collect()
        np.testing.assert_array_equal(view, f32(2, 3, 4))
        np.testing.assert_array_equal(dl, f32(2, 3, 4))
        base = weakref.ref(view.base)
        del view
        gc.collect()
        self.assertIsNone(base())
        np.testing.assert_array_equal(dl, f32(2, 3, 4))

    def test_read_only_constant(self):
        vm = make_vm()
        c = vm["constant"]()
        self.assertTrue(c.read_only)
        view = c.numpy()
        self.assertFalse(view.flags.writeable)
        np.testing.assert_array_equal(view, np.array([[1, 2], [3, 4]], np.float32))
        with self.assertRaises(ValueError):
            view[0, 0] = 5
        # DLPack cannot say "read-only": a constant is exported as a copy.
        exported = np.from_dlpack(c)
        np.testing.assert_array_equal(exported, view)
        self.assertFalse(np.shares_memory(exported, view))
        # A kernel cannot write into it either.
        with self.assertRaises(relaxvm.Error) as cm:
            vm["add_out"](f32(1, 1, 1, 1).reshape(2, 2), f32(1, 1, 1, 1).reshape(2, 2), c)
        self.assertIn("read-only", str(cm.exception))
        np.testing.assert_array_equal(vm["constant"]().numpy(), np.array([[1, 2], [3, 4]], np.float32))

    def test_strided_and_bool(self):
        a = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2]
        t = relaxvm.Tensor.from_numpy(a)
        np.testing.assert_array_equal(t.numpy(), a)
        a[2, 1] = 100
        self.assertEqual(t.numpy()[2, 1], 100)
        b = np.array([True, False, True])
        tb = relaxvm.Tensor.from_numpy(b)
        self.assertEqual(tb.dtype, "bool")
        np.testing.assert_array_equal(tb.numpy(), b)
        b[1] = True
        self.assertTrue(tb.numpy()[1])
        self.assertEqual(relaxvm.Tensor.from_numpy(np.zeros((0, 3), np.int64)).numpy().shape, (0, 3))

    def test_array_protocol(self):
        t = relaxvm.Tensor.from_numpy(f32(1.5, 2.5))
        self.assertTrue(np.shares_memory(np.asarray(t), t.numpy()))
        np.testing.assert_array_equal(np.asarray(t, dtype=np.float64), [1.5, 2.5])
        self.assertEqual(np.asarray(t, dtype=np.float64).dtype, np.float64)

    def test_from_dlpack_errors(self):
        with self.assertRaises(TypeError) as cm:
            relaxvm.Tensor.from_dlpack(42)
        self.assertIn("int has no __dlpack__ method", str(cm.exception))
        with self.assertRaises(TypeError):
            relaxvm.Tensor.from_numpy([1, 2])

        class OnGpu:
            def __dlpack_device__(self):
                return (2, 0)

            def __dlpack__(self, stream=None):
                raise AssertionError("not asked for, since the device is wrong")

        with self.assertRaises(BufferError) as cm:
            relaxvm.Tensor.from_dlpack(OnGpu())
        self.assertIn("device type 2 (cuda)", str(cm.exception))

        class BadDevice:
            def __dlpack_device__(self):
                return "cpu"

            def __dlpack__(self, stream=None):
                raise AssertionError("not asked for")

        with self.assertRaises(TypeError) as cm:
            relaxvm.Tensor.from_dlpack(BadDevice())
        self.assertIn("must return (device_type, device_id), not 'cpu'", str(cm.exception))

        class NotACapsule:
            def __dlpack__(self, stream=None):
                return 42

        with self.assertRaises(TypeError) as cm:
            relaxvm.Tensor.from_dlpack(NotACapsule())
        self.assertIn("not a DLPack capsule", str(cm.exception))

        class SameCapsuleTwice:
            def __init__(self):
                self.capsule = f32(1, 2).__dlpack__()

            def __dlpack__(self, stream=None):
                return self.capsule

        twice = SameCapsuleTwice()
        np.testing.assert_array_equal(relaxvm.Tensor.from_dlpack(twice).numpy(), f32(1, 2))
        with self.assertRaises(ValueError) as cm:
            relaxvm.Tensor.from_dlpack(twice)
        self.assertIn("consumed already", str(cm.exception))

        class Raises:
            def __dlpack__(self, stream=None):
                raise RuntimeError("no export today")

        with self.assertRaises(BufferError) as cm:
            relaxvm.Tensor.from_dlpack(Raises())
        self.assertIn("no export today", str(cm.exception))
        self.assertIsInstance(cm.exception.__cause__, RuntimeError)

        readonly = f32(1, 2)
        readonly.flags.writeable = False
        with self.assertRaises(BufferError) as cm:
            relaxvm.Tensor.from_numpy(readonly)
        self.assertIn("writeable", str(cm.exception))
        big_endian = np.arange(3, dtype=">f4")
        with self.assertRaises(BufferError) as cm:
            relaxvm.Tensor.from_numpy(big_endian)
        self.assertIn("native byte order", str(cm.exception))
        fixed = big_endian.astype(big_endian.dtype.newbyteorder("="))
        np.testing.assert_array_equal(relaxvm.Tensor.from_numpy(fixed).numpy(), [0, 1, 2])
        # Negative strides and 0-d arrays come in as they are.
        reversed_ = np.arange(5.0)[::-1]
        self.assertTrue(np.shares_memory(relaxvm.Tensor.from_numpy(reversed_).numpy(), reversed_))
        np.testing.assert_array_equal(relaxvm.Tensor.from_numpy(reversed_).numpy(), [4, 3, 2, 1, 0])
        scalar = relaxvm.Tensor.from_numpy(np.array(3.5, np.float32))
        self.assertEqual((scalar.shape, scalar.numpy()[()]), ((), 3.5))
        with self.assertRaises(BufferError):
            relaxvm.Tensor.from_numpy(f32(1, 2)).__dlpack__(stream=1)
        with self.assertRaises(TypeError):
            relaxvm.Tensor()


class ShapeTest(unittest.TestCase):
    def test_shape(self):
        s = relaxvm.Shape([2, 3, 4])
        self.assertEqual(len(s), 3)
        self.assertEqual((s[0], s[-1]), (2, 4))
        self.assertEqual(list(s), [2, 3, 4])
        self.assertEqual(s, (2, 3, 4))
        self.assertEqual(s, relaxvm.Shape((2, 3, 4)))
        self.assertNotEqual(s, relaxvm.Shape((2, 3)))
        self.assertNotEqual(s, [2, 3, 4])
        self.assertEqual(hash(s), hash((2, 3, 4)))
        self.assertEqual(repr(s), "relaxvm.Shape((2, 3, 4))")
        with self.assertRaises(IndexError):
            s[3]
        with self.assertRaises(TypeError):
            relaxvm.Shape(["a"])



ONNX_FIXTURES = pathlib.Path(os.environ.get("RELAXVM_ONNX_FIXTURES")
                             or pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "onnx")


class OnnxTest(unittest.TestCase):
    def test_load_and_run_against_torch(self):
        # The DS-CNN exported from torch, with torch's own output (tools/export_models.py).
        for src in (ONNX_FIXTURES / "dscnn.onnx", str(ONNX_FIXTURES / "dscnn.onnx"),
                    (ONNX_FIXTURES / "dscnn.onnx").read_bytes()):
            exe = relaxvm.onnx.load(src)
            self.assertIsInstance(exe, relaxvm.Executable)
            self.assertIn("main", exe.function_names())
            x = np.load(ONNX_FIXTURES / "dscnn.input.npy")
            want = np.load(ONNX_FIXTURES / "dscnn.output.npy")
            got = np.from_dlpack(relaxvm.VirtualMachine(exe)["main"](x))
            self.assertEqual(got.shape, want.shape)
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-4 * np.abs(want).max())

    def test_dynamic_batch_with_upper_bound(self):
        exe = relaxvm.onnx.load(ONNX_FIXTURES / "mlp.dynbatch.onnx", upper_bounds={"batch": 8})
        vm = relaxvm.VirtualMachine(exe)
        for stem in ("mlp.dynbatch", "mlp.dynbatch.batch5"):
            x = np.load(ONNX_FIXTURES / (stem + ".input.npy"))
            want = np.load(ONNX_FIXTURES / (stem + ".output.npy"))
            np.testing.assert_allclose(np.from_dlpack(vm["main"](x)), want, rtol=0, atol=1e-4 * np.abs(want).max())
        with self.assertRaises(TypeError):
            relaxvm.onnx.load(ONNX_FIXTURES / "mlp.dynbatch.onnx", upper_bounds={"batch": "eight"})
        with self.assertRaises(TypeError):
            relaxvm.onnx.load(ONNX_FIXTURES / "mlp.dynbatch.onnx", upper_bounds={"batch": True})
        with self.assertRaises(ValueError):
            relaxvm.onnx.load(ONNX_FIXTURES / "mlp.dynbatch.onnx", upper_bounds={"batch": 2 ** 64})

    def test_errors(self):
        with self.assertRaises(TypeError):
            relaxvm.onnx.load(42)
        with self.assertRaises(FileNotFoundError):  # a path is mapped (onnx::load_file): Python's errors first
            relaxvm.onnx.load(ONNX_FIXTURES / "no such model.onnx")
        with self.assertRaises(IsADirectoryError):
            relaxvm.onnx.load(ONNX_FIXTURES)
        with self.assertRaises(relaxvm.ValueError) as cm:
            relaxvm.onnx.load(b"\x08\x07\x12")  # a ModelProto cut inside a field
        self.assertIn("onnx", str(cm.exception))
        # A well-formed model with an operator relaxvm does not implement: NotImplementedError,
        # naming the operator. Hand-written bytes: ModelProto{ir_version 8, opset 13, graph{node
        # {op_type "NoSuchOp"}}}.
        node = b"\x22\x08NoSuchOp"                     # NodeProto.op_type (field 4)
        graph = b"\x0a" + bytes([len(node)]) + node     # GraphProto.node (field 1)
        opset = b"\x10\x0d"                            # OperatorSetIdProto.version 13
        model = b"\x08\x08" + b"\x3a" + bytes([len(graph)]) + graph + b"\x42" + bytes([len(opset)]) + opset
        with self.assertRaises(relaxvm.NotImplementedError) as cm:
            relaxvm.onnx.load(model)
        self.assertIsInstance(cm.exception, NotImplementedError)
        self.assertIn("NoSuchOp", str(cm.exception))


if __name__ == "__main__":
    unittest.main(verbosity=2)
