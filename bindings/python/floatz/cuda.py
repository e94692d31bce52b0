"""GPU-resident arrays: compress and decompress device memory through the
library's device API, with no trip through host memory and no copy.

    import cupy as cp, floatz.cuda
    x = cp.random.standard_normal((512, 512, 512), dtype=cp.float32)
    blob = floatz.cuda.compress(x, mode="abs", bound=1e-3)   # a DeviceBuffer
    y = cp.asarray(floatz.cuda.decompress(blob))              # no copy either

Inputs are any object with `__cuda_array_interface__` (CuPy, PyTorch,
Numba, JAX via DLPack->CuPy, or a DeviceBuffer), C-contiguous, float32 or
float64 for compression and uint8 (a stream) for decompression. Results are
DeviceBuffers: device memory owned by floatz, freed when the object is
collected, themselves exposing `__cuda_array_interface__`. Pass `out=` to
write into your own allocation instead.

The work is enqueued on `stream` (a `cudaStream_t` as an int, e.g.
`cp.cuda.get_current_stream().ptr` or `torch.cuda.current_stream().cuda_stream`;
0 = the legacy default stream): the caller makes sure the input is ready on
it. Each call then waits for that stream, because it reads the device's
result status (a corrupt stream is reported there) before returning.
"""

import ctypes
import ctypes.util
import operator
import os

import numpy as np

import floatz
from floatz import FloatzError, _lib

_HEADER_BYTES = 128  # FZ_HEADER_BYTES
_D2H, _H2D = 2, 1  # cudaMemcpyKind


class _DeviceResult(ctypes.Structure):  # fz_device_result
    _fields_ = [("size", ctypes.c_uint64), ("status", ctypes.c_int32), ("reserved", ctypes.c_uint32)]


def _load_cudart():
    env = os.environ.get("FLOATZ_CUDART")
    names = [env] if env else []
    names += ["libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"]
    found = ctypes.util.find_library("cudart")
    if found:
        names.append(found)
    for name in names:
        try:
            rt = ctypes.CDLL(name)
        except OSError:
            continue
        rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
        rt.cudaFree.argtypes = [ctypes.c_void_p]
        rt.cudaMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        rt.cudaStreamSynchronize.argtypes = [ctypes.c_void_p]
        rt.cudaGetErrorString.restype = ctypes.c_char_p
        return rt
    return None


_rt = None


def _cudart():
    global _rt
    if _rt is None:
        if floatz.gpu_count() == 0:
            raise FloatzError(_lib.ERR_NO_GPU if _has_cuda_backend() else _lib.ERR_NO_CUDA, "floatz.cuda")
        _rt = _load_cudart()
        if _rt is None:
            raise ImportError("floatz.cuda: cannot load the CUDA runtime (set FLOATZ_CUDART to libcudart.so)")
    return _rt


def _has_cuda_backend():
    size = ctypes.c_size_t()
    p = _lib.Params()
    _lib.lib.fz_params_init(ctypes.byref(p), _lib.F32, 1)
    return _lib.lib.fz_device_scratch_size(ctypes.byref(p), ctypes.byref(size)) != _lib.ERR_NO_CUDA


def _cuda_check(err, what):
    if err != 0:
        msg = _cudart().cudaGetErrorString(err).decode()
        raise FloatzError(202, f"{what}: {msg}")  # FZ_ERR_CUDA


class DeviceBuffer:
    """Device memory allocated by floatz, shown as a C-contiguous array of
    `shape` and `dtype` (its allocation may be larger: a stream is written
    into a buffer of `compress_bound` bytes)."""

    def __init__(self, nbytes, shape=None, dtype=np.uint8):
        self.ptr = 0
        self.dtype = np.dtype(dtype)
        self.shape = tuple(shape) if shape is not None else (nbytes // self.dtype.itemsize,)
        self.capacity = max(int(nbytes), 1)
        p = ctypes.c_void_p()
        _cuda_check(_cudart().cudaMalloc(ctypes.byref(p), self.capacity), "cudaMalloc")
        self.ptr = p.value

    @property
    def nbytes(self):
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    @property
    def __cuda_array_interface__(self):
        return {
            "shape": self.shape,
            "typestr": self.dtype.str,
            "data": (self.ptr, False),
            "strides": None,
            "version": 3,
        }

    def copy_to_host(self):
        """The contents as a numpy array (a device-to-host copy)."""
        host = np.empty(self.shape, self.dtype)
        if host.nbytes:
            _cuda_check(_cudart().cudaMemcpy(host.ctypes.data, self.ptr, host.nbytes, _D2H), "cudaMemcpy")
        return host

    def free(self):
        if self.ptr:
            _cudart().cudaFree(self.ptr)
            self.ptr = 0

    def __del__(self):
        try:
            self.free()
        except Exception:  # interpreter shutdown: the process frees it anyway
            pass

    def __repr__(self):
        return f"DeviceBuffer(shape={self.shape}, dtype={self.dtype}, ptr={self.ptr:#x})"


def _interface(obj, what):
    try:
        cai = obj.__cuda_array_interface__
    except AttributeError:
        raise TypeError(f"{what} must be a device array (__cuda_array_interface__)") from None
    shape = tuple(cai["shape"])
    dtype = np.dtype(cai["typestr"])
    strides = cai.get("strides")
    if strides is not None and tuple(strides) != _c_strides(shape, dtype.itemsize):
        raise ValueError(f"{what} must be C-contiguous (copy it first, e.g. cupy.ascontiguousarray)")
    if cai.get("mask") is not None:
        raise ValueError(f"{what}: masked arrays are not supported")
    return cai["data"][0], shape, dtype, bool(cai["data"][1])


def _nbytes(shape, dtype):
    return int(np.prod(shape, dtype=np.int64)) * dtype.itemsize


def _refuse_overlap(a, a_bytes, b, b_bytes, what):
    """The device API reads one buffer while writing the other (no check
    of its own): overlapping ones would corrupt the result."""
    if a_bytes and b_bytes and a < b + b_bytes and b < a + a_bytes:
        raise ValueError(what)


def _c_strides(shape, itemsize):
    strides, step = [], itemsize
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return tuple(reversed(strides))


class _Work:
    """Scratch and the device result for one call, freed at its end."""

    def __init__(self, params, span=None):
        size = ctypes.c_size_t()
        if span is None:
            status = _lib.lib.fz_device_scratch_size(ctypes.byref(params), ctypes.byref(size))
        else:  # random access: scratch for values [first, first + count)
            status = _lib.lib.fz_device_range_scratch_size(ctypes.byref(params), span[0], span[1], ctypes.byref(size))
        floatz._check(status, "scratch size")
        self.scratch_bytes = size.value
        self.mem = DeviceBuffer(((size.value + 255) // 256) * 256 + 256)
        self.result_ptr = self.mem.ptr + self.mem.capacity - 256
        self.host_result = _DeviceResult()

    def finish(self, status, stream, what):
        """After the call that queued the work: its own status (nothing
        queued when it failed), then the device's."""
        if status != _lib.OK:
            self.mem.free()
            floatz._check(status, what)
        _cuda_check(_cudart().cudaStreamSynchronize(stream), what)
        self.mem.free()
        floatz._check(self.host_result.status, what)
        return self.host_result.size


def compress(data, codec="sleek", mode="lossless", bound=0.0, *, checksum=True, options=(), stream=0, out=None):
    """Compress a device array (float32/float64, 1-4 dimensions) on the
    GPU. Returns a DeviceBuffer of the stream's bytes (uint8), or, with
    `out` (a device buffer of at least `floatz.compress_bound` bytes), a
    tuple (out, size). Same bytes as `floatz.compress` on the CPU."""
    src, shape, dtype, _ = _interface(data, "data")
    floatz._dtype_id(dtype)
    if not dtype.isnative:
        raise TypeError("device arrays must be in the machine's byte order")
    p = floatz._params(shape, dtype, codec, mode, bound, checksum, options, 0)
    cap = ctypes.c_size_t()
    floatz._check(_lib.lib.fz_compress_bound(ctypes.byref(p), ctypes.byref(cap)), "compress_bound")
    if out is None:
        out_buf = DeviceBuffer(cap.value)
        dst_ptr, dst_cap = out_buf.ptr, cap.value
    else:
        dst_ptr, dshape, ddtype, readonly = _interface(out, "out")
        dst_cap = _nbytes(dshape, ddtype)
        if readonly:
            raise ValueError("out is read-only")
        _refuse_overlap(src, _nbytes(shape, dtype), dst_ptr, dst_cap, "out overlaps the array to compress")
    work = _Work(p)
    status = _lib.lib.fz_device_compress(
        ctypes.byref(p), src, dst_ptr, dst_cap, work.mem.ptr, work.scratch_bytes,
        work.result_ptr, ctypes.byref(work.host_result), stream,
    )
    size = work.finish(status, stream, "device compress")
    if out is not None:
        return out, size
    out_buf.shape = (size,)
    return out_buf


def _header(src_ptr, nbytes):
    """The first bytes of a device-resident stream, on the host."""
    header = np.empty(min(_HEADER_BYTES, nbytes), np.uint8)
    if header.nbytes:
        _cuda_check(_cudart().cudaMemcpy(header.ctypes.data, src_ptr, header.nbytes, _D2H), "cudaMemcpy")
    return header


def _values_dtype(info):
    return np.dtype(np.float32 if info.params.dtype == _lib.F32 else np.float64)


def _decode_target(out, dtype, values, shape, holds):
    """Where a decode of `values` values writes: a new DeviceBuffer of
    `shape`, or `out`, a writable C-contiguous device array of `dtype` and
    as many values. Returns (device pointer, the object to return)."""
    if out is None:
        buf = DeviceBuffer(values * dtype.itemsize, shape, dtype)
        return buf.ptr, buf
    ptr, oshape, odtype, readonly = _interface(out, "out")
    if odtype != dtype or int(np.prod(oshape, dtype=np.int64)) != values:
        raise ValueError(f"out is {odtype} x {oshape}; {holds}")
    if readonly:
        raise ValueError("out is read-only")
    return ptr, out


def _stream_bytes(stream_buf):
    src, shape, dtype, _ = _interface(stream_buf, "stream")
    return src, _nbytes(shape, dtype)


def inspect(stream_buf):
    """The header of a device-resident stream (its first 128 bytes are
    copied to the host)."""
    return floatz.inspect(_header(*_stream_bytes(stream_buf)))


def decompress(stream_buf, out=None, *, verify=True, stream=0):
    """Decode a device-resident stream on the GPU into a new DeviceBuffer
    of the stream's dtype and shape, or into `out` (a C-contiguous device
    array of that dtype and size). Raises FloatzError for a damaged stream
    (the device's checks, checksums included unless verify=False)."""
    src, nbytes = _stream_bytes(stream_buf)
    info = floatz._inspect_raw(_header(src, nbytes))
    vdtype = _values_dtype(info)
    vshape = floatz._numpy_shape(info.params)
    dst_ptr, result = _decode_target(
        out, vdtype, info.original_bytes // vdtype.itemsize, vshape, f"the stream holds {vdtype} of shape {vshape}")
    _refuse_overlap(src, nbytes, dst_ptr, info.original_bytes, "out overlaps the stream")
    opts = _lib.DecodeOptions()
    opts.flags = 0 if verify else _lib.DECODE_SKIP_CHECKSUM
    work = _Work(info.params)
    status = _lib.lib.fz_device_decompress(
        ctypes.byref(info.params), src, nbytes, dst_ptr, info.original_bytes, work.mem.ptr,
        work.scratch_bytes, ctypes.byref(opts), work.result_ptr, ctypes.byref(work.host_result), stream,
    )
    work.finish(status, stream, "device decompress")
    return result


def decompress_range(stream_buf, first, count, out=None, *, verify=True, stream=0):
    """Decode values [first, first + count) of a device-resident stream, in
    storage order (the flat C order of the array `decompress` gives), on
    the GPU into a new 1-D DeviceBuffer of the stream's dtype, or into `out`
    (a C-contiguous device array of that dtype and `count` values). Only the
    chunks holding them are decoded and verified; the header and the chunk
    table are checked whole. Raises ValueError for a range past the end,
    FloatzError for a damaged stream."""
    src, nbytes = _stream_bytes(stream_buf)
    info = floatz._inspect_raw(_header(src, nbytes))
    vdtype = _values_dtype(info)
    total = info.original_bytes // vdtype.itemsize
    first, count = operator.index(first), operator.index(count)  # as floatz.decompress_range
    if first < 0 or count < 0 or first > total or count > total - first:
        raise ValueError(f"range {first}:{count} is outside the stream's {total} values")
    dst_ptr, result = _decode_target(out, vdtype, count, (count,), f"the range is {count} values of {vdtype}")
    _refuse_overlap(src, nbytes, dst_ptr, count * vdtype.itemsize, "out overlaps the stream")
    opts = _lib.DecodeOptions()
    opts.flags = 0 if verify else _lib.DECODE_SKIP_CHECKSUM
    work = _Work(info.params, (first, count))
    status = _lib.lib.fz_device_decompress_range(
        ctypes.byref(info.params), src, nbytes, first, count, dst_ptr, count * vdtype.itemsize,
        work.mem.ptr, work.scratch_bytes, ctypes.byref(opts), work.result_ptr,
        ctypes.byref(work.host_result), stream,
    )
    work.finish(status, stream, "device decompress_range")
    return result


def to_device(array):
    """A host array copied into a new DeviceBuffer (for tests and small
    jobs; CuPy or PyTorch do this better)."""
    a = np.ascontiguousarray(array)
    buf = DeviceBuffer(a.nbytes, a.shape, a.dtype)
    if a.nbytes:
        _cuda_check(_cudart().cudaMemcpy(buf.ptr, a.ctypes.data, a.nbytes, _H2D), "cudaMemcpy")
    return buf
