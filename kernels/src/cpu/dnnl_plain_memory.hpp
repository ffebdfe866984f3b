#pragma once
// Host float pointers seen by oneDNN: dense row-major (plain) f32 descriptors of any rank and
// memory objects that wrap caller-owned buffers without copying.
#include <cstdint>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

namespace tessera::kernels {

// Dense row-major f32 layout of `dims` (the last dimension contiguous).
dnnl::memory::desc plain_desc(const dnnl::memory::dims& dims);
// Same extents with explicit strides (e.g. a transposed matrix view).
dnnl::memory::desc strided_desc(const dnnl::memory::dims& dims, const dnnl::memory::dims& strides);
// oneDNN memory over a caller-owned buffer; oneDNN takes a non-const handle even for inputs it
// only reads, hence the const_cast.
dnnl::memory wrap(const dnnl::memory::desc& desc, const dnnl::engine& engine, const float* data);

}  // namespace tessera::kernels
