#include "cpu/dnnl_plain_memory.hpp"

namespace tessera::kernels {

dnnl::memory::desc plain_desc(const dnnl::memory::dims& dims) {
  dnnl::memory::dims strides(dims.size(), 1);
  for (std::size_t axis = dims.size(); axis-- > 1;) strides[axis - 1] = strides[axis] * dims[axis];
  return strided_desc(dims, strides);
}

dnnl::memory::desc strided_desc(const dnnl::memory::dims& dims, const dnnl::memory::dims& strides) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

dnnl::memory wrap(const dnnl::memory::desc& desc, const dnnl::engine& engine, const float* data) {
  return dnnl::memory(desc, engine, const_cast<float*>(data));
}

}  // namespace tessera::kernels
