/* Chunk offsets for decoding: an exclusive scan (CUB) of the compressed
 * sizes in the stream's chunk table, so every decode block knows where its
 * chunk and the next one start without waiting on any other block. Reads
 * are bounded by the stream size; the table is validated by the decoder. */
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "fz_gpu.cuh"

namespace {

/* Size of chunk c from the table; 0 past the table or the stream. */
struct TableSize {
    const uint8_t *src;
    uint64_t src_size;
    uint64_t chunk_count;
    __device__ unsigned long long operator()(unsigned long long c) const {
        if (c >= chunk_count || src_size < FZ_HDR_BYTES)
            return 0;
        const uint64_t entry = fz_table_entry_bytes(src[FZ_OFF_FLAGS]);
        const uint64_t pos = FZ_HDR_BYTES + c * entry;
        return pos + 4 <= src_size ? fz_load32(src + pos) : 0;
    }
};

typedef thrust::transform_iterator<
    TableSize, thrust::counting_iterator<unsigned long long>>
    SizeIterator;

} // namespace

size_t fz_gpu_offsets_temp_bytes(uint64_t chunk_count) {
    size_t temp = 0;
    SizeIterator in(thrust::counting_iterator<unsigned long long>(0),
                    TableSize{nullptr, 0, 0});
    cub::DeviceScan::ExclusiveSum(nullptr, temp, in,
                                  (unsigned long long *)nullptr,
                                  (int64_t)chunk_count + 1);
    return temp;
}

cudaError_t fz_gpu_chunk_offsets(const fz_gpu_args *a, void *temp,
                                 size_t temp_bytes, cudaStream_t stream) {
    SizeIterator in(thrust::counting_iterator<unsigned long long>(0),
                    TableSize{a->src, a->src_size, a->expect.chunk_count});
    return cub::DeviceScan::ExclusiveSum(temp, temp_bytes, in, a->offsets,
                                         (int64_t)a->expect.chunk_count + 1,
                                         stream);
}
