// SPDX-License-Identifier: Apache-2.0
// runtime/tensor.hpp: creation, element access, DLPack exchange and its ownership rules.
#include <doctest/doctest.h>

#include <cstdint>
#include <relaxvm.hpp>
#include <string>

namespace rv = relaxvm;

TEST_CASE("from and empty") {
  rv::tensor t = rv::tensor::from<float>({1, 2, 3, 4}, {2, 2});
  CHECK(t.defined());
  CHECK(t.ndim() == 2);
  CHECK(t.shape() == rv::shape{2, 2});
  CHECK(t.dtype() == rv::dtype::float32());
  CHECK(t.device() == rv::device::cpu());
  CHECK(t.device().device_type == kDLCPU);
  CHECK(t.numel() == 4);
  CHECK(t.nbytes() == 16);
  CHECK(t.data<float>()[3] == 4.0f);
  CHECK(reinterpret_cast<std::uintptr_t>(t.raw_data()) % rv::tensor_alignment == 0);
  CHECK(t.is_contiguous());
  CHECK_FALSE(t.read_only());
  rv::tensor e = rv::tensor::empty({32, 16}, rv::dtype::int64());
  CHECK(e.numel() == 512);
  CHECK(e.data<std::int64_t>() != nullptr);
  rv::tensor z = rv::tensor::empty({0, 5}, rv::dtype::float32());
  CHECK(z.numel() == 0);
  rv::tensor s = rv::tensor::scalar<double>(2.5);
  CHECK(s.ndim() == 0);
  CHECK(s.data<double>()[0] == 2.5);
  CHECK_FALSE(rv::tensor().defined());
}

TEST_CASE("bad tensors are errors that say why") {
  auto msg = [](const auto& r) { return std::string(r.error().message()); };
  CHECK(msg(rv::tensor::try_empty({2, -1}, rv::dtype::float32())) ==
        "tensor::empty: dimension 1 is -1; dimensions must be 0 or more");
  CHECK(msg(rv::tensor::try_empty({std::int64_t{1} << 62, 4}, rv::dtype::float32())) ==
        "tensor::empty: the element count of shape [4611686018427387904, 4] overflows int64");
  CHECK(msg(rv::tensor::try_empty({std::int64_t{1} << 61}, rv::dtype::float64())) ==
        "tensor::empty: 2305843009213693952 elements of float64 overflow int64 bytes");
  CHECK(msg(rv::tensor::try_empty({2}, rv::dtype(kDLInt, 7))) == "tensor::empty: int7 is not a valid tensor element type");
  CHECK(msg(rv::tensor::try_empty({2}, rv::dtype::float32(), rv::device(kDLCUDA, 0))) ==
        "tensor::empty: cannot allocate on cuda:0; relaxvm allocates host (cpu) memory only");
  std::vector<float> three{1, 2, 3};
  CHECK(msg(rv::tensor::try_from<float>(three, {2, 2})) == "tensor::from: 3 values do not fill shape [2, 2]");
  rv::tensor t = rv::tensor::from<float>({1, 2}, {2});
  rv::result<std::int32_t*> wrong = t.try_data<std::int32_t>();
  CHECK(wrong.error().kind() == rv::error_kind::type);
  CHECK(msg(wrong) == "tensor::data<int32>: the tensor holds float32");
  CHECK(msg(rv::tensor().try_data<float>()) == "tensor::data: the tensor is undefined");
}

TEST_CASE("to_dlpack is zero-copy and keeps the tensor alive until the deleter runs") {
  DLManagedTensor* m = nullptr;
  void* data = nullptr;
  {
    rv::tensor t = rv::tensor::from<std::int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
    data = t.raw_data();
    m = t.to_dlpack();
    CHECK(t.get()->use_count() == 2);
  }
  // The tensor is gone from C++; the DLPack consumer still owns it.
  CHECK(m->dl_tensor.data == data);
  CHECK(m->dl_tensor.ndim == 2);
  CHECK(m->dl_tensor.shape[1] == 3);
  CHECK(m->dl_tensor.dtype.bits == 32);
  CHECK(static_cast<std::int32_t*>(m->dl_tensor.data)[5] == 6);
  m->deleter(m);
}

TEST_CASE("from_dlpack(to_dlpack(t)) gives back the same tensor") {
  rv::tensor t = rv::tensor::from<float>({1, 2}, {2});
  rv::tensor u = rv::tensor::from_dlpack(t.to_dlpack());
  CHECK(u.get() == t.get());
  CHECK(t.get()->use_count() == 2);
}

namespace {
// A foreign producer: counts deleter calls.
struct foreign {
  std::int64_t shape[2] = {2, 2};
  std::int64_t strides[2] = {1, 2};  // column-major
  double data[4] = {1, 2, 3, 4};
  DLManagedTensor m{};
  int deleted = 0;
  foreign() {
    m.dl_tensor.data = data;
    m.dl_tensor.device = {kDLCPU, 0};
    m.dl_tensor.ndim = 2;
    m.dl_tensor.dtype = {kDLFloat, 64, 1};
    m.dl_tensor.shape = shape;
    m.dl_tensor.strides = nullptr;
    m.dl_tensor.byte_offset = 0;
    m.manager_ctx = this;
    m.deleter = [](DLManagedTensor* self) { ++static_cast<foreign*>(self->manager_ctx)->deleted; };
  }
};
}  // namespace

TEST_CASE("from_dlpack takes ownership and calls the deleter exactly once") {
  foreign f;
  {
    rv::tensor t = rv::tensor::from_dlpack(&f.m);
    CHECK(t.raw_data() == f.data);  // zero-copy
    CHECK(t.data<double>()[2] == 3.0);
    rv::tensor copy = t;
    rv::value v = copy;
    CHECK(f.deleted == 0);
  }
  CHECK(f.deleted == 1);
}

TEST_CASE("from_dlpack keeps strides and byte offsets") {
  foreign f;
  f.m.dl_tensor.strides = f.strides;
  f.m.dl_tensor.byte_offset = 8;
  f.shape[0] = 1;
  {
    rv::tensor t = rv::tensor::from_dlpack(&f.m);
    CHECK(t.byte_offset() == 8);
    CHECK(t.data<double>()[0] == 2.0);
    CHECK(t.strides() == rv::shape{1, 2});
    CHECK_FALSE(t.is_contiguous());
    CHECK(t.dl().strides[1] == 2);
  }
  CHECK(f.deleted == 1);
}

TEST_CASE("a rejected DLPack tensor stays with the caller") {
  auto msg = [](DLManagedTensor* m) { return std::string(rv::tensor::try_from_dlpack(m).error().message()); };
  CHECK(msg(nullptr) == "from_dlpack: the DLManagedTensor pointer is null");
  foreign f;
  f.m.dl_tensor.ndim = -1;
  CHECK(msg(&f.m) == "from_dlpack: ndim is -1");
  f.m.dl_tensor.ndim = 2;
  f.m.dl_tensor.shape = nullptr;
  CHECK(msg(&f.m) == "from_dlpack: ndim is 2 but shape is null");
  f.m.dl_tensor.shape = f.shape;
  f.shape[0] = -3;
  CHECK(msg(&f.m) == "from_dlpack: dimension 0 is -3; dimensions must be 0 or more");
  f.shape[0] = 2;
  f.m.dl_tensor.dtype = {kDLFloat, 7, 1};
  CHECK(msg(&f.m) == "from_dlpack: float7 is not a valid tensor element type");
  f.m.dl_tensor.dtype = {kDLFloat, 64, 1};
  f.m.dl_tensor.data = nullptr;
  CHECK(msg(&f.m) == "from_dlpack: data is null for 32 bytes");
  CHECK(f.deleted == 0);
}

TEST_CASE("copy and text") {
  rv::tensor t = rv::tensor::from<std::int64_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  rv::tensor c = t.copy();
  CHECK(c.get() != t.get());
  CHECK(c == t);  // equal contents
  CHECK(c.raw_data() != t.raw_data());
  CHECK(c.data<std::int64_t>()[5] == 6);
  CHECK(rv::to_string(rv::value(t)) == "tensor([[1, 2, 3], [4, 5, 6]], shape=[2, 3], dtype=int64, device=cpu:0)");
  CHECK(rv::to_string(rv::value(rv::tensor::scalar<float>(1.5f))) == "tensor(1.5, shape=[], dtype=float32, device=cpu:0)");
  CHECK(rv::to_string(rv::value(rv::tensor::empty({0, 2}, rv::dtype::int8()))) ==
        "tensor([[]], shape=[0, 2], dtype=int8, device=cpu:0)");
  CHECK(rv::to_string(rv::value(rv::tensor::from<bool>({true, false}, {2}))) ==
        "tensor([true, false], shape=[2], dtype=bool, device=cpu:0)");
}
