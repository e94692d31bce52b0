/* Host stand-in for cuda_runtime.h: a lock-step warp emulator. Lanes are
 * coroutines on one OS thread; a collective posts the lane's
 * value in a slot of the current round and switches back to the scheduler,
 * which resumes every lane of the warp in turn once all 32 have posted.
 * Slots are double-buffered by round parity. Warps are interleaved at
 * collectives, so spin-waits (look-back) make progress. */
#pragma once
#include <cstdint>
#include <cstring>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __shared__
typedef int cudaError_t;
typedef void *cudaStream_t;
enum { cudaSuccess = 0 };

struct EmuLane {
    void *sp; /* saved stack pointer while suspended */
    char *stack;
    bool done;
};
struct EmuWarp {
    EmuLane lane[32];
    uint64_t slot[2][32];
    unsigned round; /* collective rounds completed by the warp */
    unsigned lane_round[32];
};
struct alignas(16) uint4 {
    unsigned x, y, z, w;
};
struct EmuIdx {
    unsigned x, y, z;
};
extern EmuWarp *emu_warp;
extern unsigned emu_lane;
extern EmuIdx threadIdx;
/* Suspend the current lane and return to the scheduler (emu.cpp). */
void emu_yield();

/* Post v for the current round, wait for the round to complete, and
 * return the round's slots. */
inline uint64_t *emu_post(uint64_t v) {
    EmuWarp *w = emu_warp;
    const unsigned me = emu_lane, r = w->lane_round[me]++;
    w->slot[r & 1][me] = v;
    emu_yield();
    return w->slot[r & 1];
}
template <typename T> inline uint64_t emu_to(T v) {
    uint64_t u = 0;
    memcpy(&u, &v, sizeof v);
    return u;
}
template <typename T> inline T emu_from(uint64_t u) {
    T v;
    memcpy(&v, &u, sizeof v);
    return v;
}
template <typename T> inline T emu_read(T v, unsigned src) {
    return emu_from<T>(emu_post(emu_to(v))[src & 31]);
}
template <typename T> inline T __shfl_sync(unsigned, T v, int src) {
    return emu_read(v, (unsigned)src);
}
template <typename T> inline T __shfl_up_sync(unsigned, T v, unsigned d) {
    const unsigned l = emu_lane;
    return emu_read(v, l >= d ? l - d : l);
}
template <typename T> inline T __shfl_down_sync(unsigned, T v, unsigned d) {
    const unsigned l = emu_lane;
    return emu_read(v, l + d < 32 ? l + d : l);
}
inline unsigned __ballot_sync(unsigned, int pred) {
    const uint64_t *s = emu_post(pred != 0);
    unsigned b = 0;
    for (int i = 0; i < 32; i++)
        b |= (unsigned)s[i] << i;
    return b;
}
inline int __any_sync(unsigned m, int p) {
    return __ballot_sync(m, p) != 0;
}
inline int __all_sync(unsigned m, int p) {
    return __ballot_sync(m, p) == 0xFFFFFFFFu;
}
inline unsigned __reduce_add_sync(unsigned, unsigned v) {
    const uint64_t *s = emu_post(v);
    unsigned r = 0;
    for (int i = 0; i < 32; i++)
        r += (unsigned)s[i];
    return r;
}
inline int __reduce_add_sync(unsigned m, int v) {
    return (int)__reduce_add_sync(m, (unsigned)v);
}
inline unsigned __reduce_max_sync(unsigned, unsigned v) {
    const uint64_t *s = emu_post(v);
    unsigned r = 0;
    for (int i = 0; i < 32; i++)
        r = (unsigned)s[i] > r ? (unsigned)s[i] : r;
    return r;
}
inline unsigned __reduce_or_sync(unsigned, unsigned v) {
    const uint64_t *s = emu_post(v);
    unsigned r = 0;
    for (int i = 0; i < 32; i++)
        r |= (unsigned)s[i];
    return r;
}
inline void __syncwarp(unsigned = 0xFFFFFFFFu) {
    emu_post(0);
}
inline int __popc(unsigned x) {
    return __builtin_popcount(x);
}
inline int __ffs(int x) {
    return __builtin_ffs(x);
}
inline void __nanosleep(unsigned) {}
inline float __fdiv_rn(float a, float b) { /* IEEE division, as on a GPU */
    return a / b;
}
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift) {
    const unsigned long long both = (unsigned long long)hi << 32 | lo;
    return (unsigned)(both >> (shift & 31u));
}
inline unsigned atomicAdd(unsigned *p, unsigned v) {
    const unsigned o = *p;
    *p = o + v;
    return o;
}
inline unsigned long long atomicAdd(unsigned long long *p,
                                    unsigned long long v) {
    const unsigned long long o = *p;
    *p = o + v;
    return o;
}
inline int atomicCAS(int *p, int cmp, int val) {
    const int o = *p;
    if (o == cmp)
        *p = val;
    return o;
}
