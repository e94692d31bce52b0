/* Range of the finite input values (lossy REL mode): one CUB reduction of
 * (min, max) pairs; non-finite values map to the neutral pair. min and max
 * are exact, so the result equals the CPU's whatever the reduction order. */
#include <cfloat>
#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "fz_gpu.cuh"

namespace {

struct Range {
    double lo, hi;
};

struct MinMax {
    __device__ Range operator()(const Range &a, const Range &b) const {
        return Range{a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi};
    }
};

template <typename F> struct ValueRange {
    const F *v;
    __device__ Range operator()(unsigned long long i) const {
        const double x = (double)v[i];
        return isfinite(x) ? Range{x, x} : Range{DBL_MAX, -DBL_MAX};
    }
};

/* Range of the n values at src into *out (device), using temp. */
template <typename F>
cudaError_t reduce(const void *src, uint64_t n, Range *out, void *temp,
                   size_t *temp_bytes, cudaStream_t stream) {
    thrust::transform_iterator<ValueRange<F>,
                               thrust::counting_iterator<unsigned long long>>
        in(thrust::counting_iterator<unsigned long long>(0),
           ValueRange<F>{reinterpret_cast<const F *>(src)});
    return cub::DeviceReduce::Reduce(temp, *temp_bytes, in, out, (int64_t)n,
                                     MinMax(), Range{DBL_MAX, -DBL_MAX},
                                     stream);
}

cudaError_t reduce_of(uint32_t dtype, const void *src, uint64_t n, Range *out,
                      void *temp, size_t *temp_bytes, cudaStream_t stream) {
    return dtype == 1 ? reduce<float>(src, n, out, temp, temp_bytes, stream)
                      : reduce<double>(src, n, out, temp, temp_bytes, stream);
}

} // namespace

size_t fz_gpu_range_temp_bytes(const fz_header *h) {
    return fz_gpu_values_range_temp_bytes(
        h->dtype, h->original_bytes / (h->dtype == 1 ? 4 : 8));
}

cudaError_t fz_gpu_value_range(const fz_gpu_args *a, cudaStream_t stream) {
    size_t bytes = a->temp_bytes;
    Range *out =
        a->scratch ? reinterpret_cast<Range *>(&a->scratch->range_lo) : nullptr;
    return reduce_of(a->expect.dtype, a->src,
                     a->expect.original_bytes / (a->expect.dtype == 1 ? 4 : 8),
                     out, a->temp, &bytes, stream);
}

size_t fz_gpu_values_range_temp_bytes(uint32_t dtype, uint64_t n) {
    size_t bytes = 0;
    reduce_of(dtype, nullptr, n, nullptr, nullptr, &bytes, nullptr);
    return bytes;
}

cudaError_t fz_gpu_values_range(uint32_t dtype, const void *src, uint64_t n,
                                double *lo_hi, void *temp, size_t temp_bytes,
                                cudaStream_t stream) {
    return reduce_of(dtype, src, n, reinterpret_cast<Range *>(lo_hi), temp,
                     &temp_bytes, stream);
}
