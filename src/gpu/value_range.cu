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

/* The reduction writes its Range into the scratch head (range_lo, _hi). */
template <typename F>
cudaError_t reduce(const fz_gpu_args *a, void *temp, size_t *temp_bytes,
                   cudaStream_t stream) {
    const uint64_t n = a->expect.original_bytes / sizeof(F);
    thrust::transform_iterator<ValueRange<F>,
                               thrust::counting_iterator<unsigned long long>>
        in(thrust::counting_iterator<unsigned long long>(0),
           ValueRange<F>{reinterpret_cast<const F *>(a->src)});
    Range *out =
        a->scratch ? reinterpret_cast<Range *>(&a->scratch->range_lo) : nullptr;
    return cub::DeviceReduce::Reduce(temp, *temp_bytes, in, out, (int64_t)n,
                                     MinMax(), Range{DBL_MAX, -DBL_MAX},
                                     stream);
}

} // namespace

size_t fz_gpu_range_temp_bytes(const fz_header *h) {
    fz_gpu_args a;
    memset(&a, 0, sizeof a);
    a.expect = *h;
    size_t bytes = 0;
    if (h->dtype == 1)
        reduce<float>(&a, nullptr, &bytes, nullptr);
    else
        reduce<double>(&a, nullptr, &bytes, nullptr);
    return bytes;
}

cudaError_t fz_gpu_value_range(const fz_gpu_args *a, cudaStream_t stream) {
    size_t bytes = a->temp_bytes;
    return a->expect.dtype == 1 ? reduce<float>(a, a->temp, &bytes, stream)
                                : reduce<double>(a, a->temp, &bytes, stream);
}
