"""floatz: lossless and error-bounded lossy compression of float32/float64
arrays, on the CPU or an NVIDIA GPU, with byte-identical streams.

    import numpy as np, floatz
    a = np.random.default_rng(0).standard_normal((64, 64, 64), dtype=np.float32)
    blob = floatz.compress(a)                                  # lossless
    assert np.array_equal(floatz.decompress(blob), a)
    lossy = floatz.compress(a, mode="abs", bound=1e-3)         # |error| <= 1e-3
    print(floatz.inspect(lossy))

Arrays go to the C library without a copy when they are C-contiguous and in
the machine's byte order; other layouts are copied once first. The stream
records dtype and shape (numpy order), so `decompress` needs nothing else.
The library releases the GIL while it works (ctypes foreign calls), so
several Python threads can compress at once.
"""

import ctypes
import operator
import os
from dataclasses import dataclass

import numpy as np

from . import _lib

__all__ = [
    "FloatzError",
    "StreamInfo",
    "compress",
    "compress_bound",
    "decompress",
    "decompress_range",
    "inspect",
    "gpu_count",
    "codecs",
    "AUTO_BALANCED",
    "AUTO_SMALLEST",
    "__version__",
]

# Goals of codec "auto" (its options[0]; include/floatz.h FZ_AUTO_*).
AUTO_BALANCED = 0  # smallest, but a slower codec must be >= 2% smaller
AUTO_SMALLEST = 1  # smallest

__version__ = _lib.lib.fz_version_string().decode()

_MODES = {"lossless": 0, "abs": 1, "rel": 2}
_MODE_NAMES = {v: k for k, v in _MODES.items()}
_BACKENDS = ("auto", "cpu", "gpu")


class FloatzError(RuntimeError):
    """A floatz call failed; `status` is the C library's fz_status code."""

    def __init__(self, status, what):
        self.status = int(status)
        text = _lib.lib.fz_status_string(self.status).decode()
        super().__init__(f"{what}: {text} (fz_status {self.status})")


def _check(status, what):
    if status != _lib.OK:
        raise FloatzError(status, what)


@dataclass(frozen=True)
class StreamInfo:
    """What a floatz stream says about itself (see `inspect`)."""

    codec: str
    dtype: np.dtype
    shape: tuple
    mode: str
    bound: float  # as requested (REL: the relative factor)
    bound_effective: float  # the absolute bound actually enforced
    original_bytes: int
    compressed_bytes: int
    chunk_bytes: int
    chunk_count: int
    has_checksums: bool
    format_version: int
    codec_version: int
    codec_options: tuple

    @property
    def ratio(self):
        return self.original_bytes / self.compressed_bytes if self.compressed_bytes else 0.0


def codecs():
    """Names of the codecs this library has."""
    names = []
    for cid in range(1, 256):
        name = _lib.lib.fz_codec_name(cid)
        if name:
            names.append(name.decode())
    return names


def gpu_count():
    """Number of usable CUDA devices (0 in a CPU-only build)."""
    return int(_lib.lib.fz_gpu_count())


def _codec_id(codec):
    if "\0" in str(codec):  # c_char_p would pass only the part before the NUL
        raise FloatzError(_lib.ERR_UNSUPPORTED, f"codec {codec!r}")
    out = ctypes.c_int()
    _check(_lib.lib.fz_codec_from_name(str(codec).encode(), ctypes.byref(out)), f"codec {codec!r}")
    return out.value


def _mode_id(mode):
    try:
        return _MODES[str(mode).lower()]
    except KeyError:
        raise ValueError(f"mode must be one of {sorted(_MODES)}, not {mode!r}") from None


def _integer(value, what, lo, hi):
    """value as an int in [lo, hi]: ctypes fields wrap silently
    (threads=2**32 + 1 ran with 1 thread) and int() truncates 1.5."""
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an integer, not {value!r}") from None
    if not lo <= v <= hi:
        raise ValueError(f"{what} must be in [{lo}, {hi}], not {v}")
    return v


_INT32_MAX = 2**31 - 1
_UINT64_MAX = 2**64 - 1


def _threads(threads):
    return _integer(threads, "threads", 0, _INT32_MAX)


def _dtype_id(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind != "f" or dtype.itemsize not in (4, 8):
        raise TypeError(f"floatz compresses float32 and float64 arrays, not {dtype}")
    return _lib.F32 if dtype.itemsize == 4 else _lib.F64


def _exec_for(backend, params):
    if backend not in _BACKENDS:
        raise ValueError(f"backend must be one of {_BACKENDS}, not {backend!r}")
    if backend == "cpu":
        return _lib.EXEC_CPU
    if backend == "gpu":
        return _lib.EXEC_GPU
    usable = gpu_count() > 0 and _lib.lib.fz_gpu_supports(ctypes.byref(params))
    return _lib.EXEC_GPU if usable else _lib.EXEC_CPU


def _params(shape, dtype, codec, mode, bound, checksum, options, threads):
    if len(shape) > _lib.MAX_DIMS:
        raise ValueError(
            f"floatz takes at most {_lib.MAX_DIMS} dimensions, got shape {tuple(shape)}: "
            "reshape (merge the slowest dimensions) first"
        )
    dims = [_integer(d, "a dimension", 0, _UINT64_MAX) for d in reversed(shape)] or [1]  # dims[0] fastest
    p = _lib.Params()
    _check(_lib.lib.fz_params_init(ctypes.byref(p), _dtype_id(dtype), 0), "parameters")
    cdims = (ctypes.c_uint64 * len(dims))(*dims)
    _check(_lib.lib.fz_params_set_shape(ctypes.byref(p), len(dims), cdims), f"shape {tuple(shape)}")
    p.codec = _codec_id(codec)
    p.mode = _mode_id(mode)
    p.bound = float(bound)
    p.flags = 0 if checksum else _lib.FLAG_NO_CHECKSUM
    p.threads = _threads(threads)
    options = tuple(options or ())
    if len(options) > 4:
        raise ValueError("at most 4 codec options")
    for i, v in enumerate(options):
        p.codec_options[i] = _integer(v, "a codec option", -_INT32_MAX - 1, _INT32_MAX)
    return p


def _as_input(data):
    """The array as the library reads it: C-contiguous, native byte order."""
    if isinstance(data, np.ma.MaskedArray):
        # np.asarray would drop the mask and store the values under it
        raise TypeError("floatz does not store masks: compress a.filled(fill) or a.data")
    a = np.asarray(data)
    _dtype_id(a.dtype)
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    return np.ascontiguousarray(a)


def compress_bound(shape, dtype, codec="sleek", mode="lossless", bound=0.0, *, options=()):
    """Largest stream `compress` can write for such an array: size `out`
    buffers with it."""
    if not np.iterable(shape):
        shape = (shape,)  # as numpy takes it: np.empty(10)
    p = _params(tuple(shape), dtype, codec, mode, bound, True, options, 0)
    n = ctypes.c_size_t()
    _check(_lib.lib.fz_compress_bound(ctypes.byref(p), ctypes.byref(n)), "compress_bound")
    return n.value


def compress(
    data,
    codec="sleek",
    mode="lossless",
    bound=0.0,
    *,
    backend="auto",
    threads=0,
    checksum=True,
    options=(),
    out=None,
):
    """Compress a float32/float64 array (1 to 4 dimensions).

    codec: "sleek" (lossless, abs, rel), "gfc" and "falcon" (lossless),
        "lorenzo" (abs, rel); `codecs()` lists them. "auto" tries those
        that suit the mode on a sample of the data and keeps the smallest
        (options: (AUTO_BALANCED,) the default, or (AUTO_SMALLEST,));
        `inspect` then names the codec chosen.
    mode: "lossless", "abs" (|decoded - original| <= bound) or "rel"
        (<= bound * (max - min) of the finite values).
    backend: "cpu" (OpenMP), "gpu" (the host pipeline through a GPU), or
        "auto" (the GPU when there is one that takes the request).
    threads: CPU threads, 0 = all cores.
    checksum: store a checksum of every chunk's data (verified on decode).
    options: the codec options of include/floatz.h, in order (gfc:
        dimensionality, values per chunk; falcon: values per chunk;
        lorenzo: radius, zero runs).
    out: a writable buffer to compress into (at least `compress_bound`
        bytes is always enough); the result is then a memoryview of it.

    Returns a bytearray with the stream (or a memoryview of `out`).
    Raises TypeError for other dtypes and masked arrays, ValueError for bad
    arguments (an `out` overlapping `data` included) and FloatzError when
    the library refuses or fails.
    """
    a = _as_input(data)
    p = _params(a.shape, a.dtype, codec, mode, bound, checksum, options, threads)
    p.exec = _exec_for(backend, p)
    cap = ctypes.c_size_t()
    _check(_lib.lib.fz_compress_bound(ctypes.byref(p), ctypes.byref(cap)), "compress")
    if out is None:
        dst = bytearray(cap.value)  # never empty: the header at least
        view = np.frombuffer(dst, dtype=np.uint8)
    else:
        view = _writable_bytes(out)
        if np.may_share_memory(a, view):  # both contiguous: an exact test
            raise ValueError("out overlaps the array to compress")
    size = ctypes.c_size_t()
    status = _lib.lib.fz_compress(
        ctypes.byref(p),
        a.ctypes.data,
        a.nbytes,
        view.ctypes.data,
        view.nbytes,
        ctypes.byref(size),
    )
    _check(status, "compress")
    if out is not None:
        return memoryview(view)[: size.value]  # view: out's bytes
    del view  # release the export before resizing the bytearray
    del dst[size.value :]
    return dst


def _memory(buf, what, writable):
    """buf's memory as a flat uint8 array, without a copy: a C-contiguous
    numpy array or bytes-like object of any item type but Python objects
    (their bytes are pointers: as a stream they are junk, and a stream
    written over them corrupts the interpreter)."""
    if isinstance(buf, np.ndarray):  # also dtypes memoryview cannot export
        if buf.dtype.hasobject:
            raise TypeError(f"{what} must not be an array of Python objects")
        if not buf.flags.c_contiguous:
            raise ValueError(f"{what} must be C-contiguous")
        if writable and not buf.flags.writeable:
            raise ValueError(f"{what} must be writable")
        return buf.reshape(-1).view(np.uint8)
    try:
        mv = memoryview(buf)
    except TypeError:
        raise TypeError(f"{what} must be a bytes-like object, not {type(buf).__name__}") from None
    if "O" in mv.format:
        raise TypeError(f"{what} must not hold Python objects")
    if not mv.c_contiguous:
        raise ValueError(f"{what} must be C-contiguous")
    if writable and mv.readonly:
        raise ValueError(f"{what} must be writable")
    return np.frombuffer(mv, dtype=np.uint8)


def _writable_bytes(buf):
    return _memory(buf, "out", True)


def _readable_bytes(buf):
    return _memory(buf, "the stream", False)


def _inspect_raw(src):
    info = _lib.Info()
    _check(_lib.lib.fz_inspect(src.ctypes.data, src.nbytes, ctypes.byref(info)), "inspect")
    return info


def _numpy_shape(params):
    dims = [int(params.dims[i]) for i in range(params.ndims)]
    return tuple(reversed(dims))


def inspect(stream):
    """Read a stream's header (no decoding): a StreamInfo."""
    src = _readable_bytes(stream)
    info = _inspect_raw(src)
    p = info.params
    return StreamInfo(
        codec=_lib.lib.fz_codec_name(p.codec).decode(),
        dtype=np.dtype(np.float32 if p.dtype == _lib.F32 else np.float64),
        shape=_numpy_shape(p),
        mode=_MODE_NAMES[p.mode],
        bound=p.bound,
        bound_effective=info.bound_effective,
        original_bytes=info.original_bytes,
        compressed_bytes=info.compressed_bytes,
        chunk_bytes=info.chunk_bytes,
        chunk_count=info.chunk_count,
        has_checksums=bool(info.has_checksums),
        format_version=info.format_version,
        codec_version=info.codec_version,
        codec_options=tuple(p.codec_options),
    )


def _dtype_of(info):
    return np.dtype(np.float32 if info.params.dtype == _lib.F32 else np.float64)


def _output_for(info, out):
    dtype = _dtype_of(info)
    shape = _numpy_shape(info.params)
    if out is None:
        return np.empty(shape, dtype=dtype)
    if not isinstance(out, np.ndarray):
        raise TypeError("out must be a numpy array")
    if out.dtype != dtype or out.size != info.original_bytes // dtype.itemsize:
        raise ValueError(
            f"out is {out.dtype} x {out.size}; the stream holds {dtype} of shape {shape}"
        )
    if not (out.flags.c_contiguous and out.flags.writeable):
        raise ValueError("out must be C-contiguous and writable")
    return out


def decompress(stream, out=None, *, backend="auto", threads=0, verify=True):
    """Decode a stream into a new array of the stream's dtype and shape, or
    into `out` (a C-contiguous numpy array of that dtype and size).

    verify: check every chunk's data checksum (when the stream has them).
    Bytes after the stream's end (`inspect(stream).compressed_bytes`) are
    ignored. Raises ValueError for an `out` overlapping the stream,
    FloatzError for a damaged or foreign stream (nothing is returned then;
    `out` may have been partly written).
    """
    src = _readable_bytes(stream)
    info = _inspect_raw(src)
    dst = _output_for(info, out)
    if np.may_share_memory(src, dst):  # the decoder would overwrite its input
        raise ValueError("out overlaps the stream")
    opts = _lib.DecodeOptions()
    opts.flags = 0 if verify else _lib.DECODE_SKIP_CHECKSUM
    opts.exec = _exec_for(backend, info.params)
    opts.threads = _threads(threads)
    size = ctypes.c_size_t()
    status = _lib.lib.fz_decompress(
        src.ctypes.data,
        src.nbytes,
        dst.ctypes.data,
        dst.nbytes,
        ctypes.byref(opts),
        ctypes.byref(size),
    )
    _check(status, "decompress")
    return dst


def decompress_range(stream, first, count, *, threads=0, verify=True):
    """Decode values [first, first + count) of a stream, in storage order
    (the flat C order of the array `decompress` returns), into a new 1-D
    array of the stream's dtype. Only the chunks holding them are decoded
    and verified, on the CPU: random access at the cost of a few chunks.

    stream: a bytes-like object, or a path (str or os.PathLike) to a file
    holding one stream, of which only the header, the chunk table and the
    chunks holding the range are read.

    Raises ValueError for a range past the end, FloatzError for a damaged
    or foreign stream, OSError for a file that cannot be read.
    """
    path = None
    if isinstance(stream, (str, os.PathLike)):
        path = os.fsencode(stream)
        with open(stream, "rb") as f:
            head = np.frombuffer(f.read(_lib.HEADER_BYTES), dtype=np.uint8)
        info = _inspect_raw(head)
    else:
        src = _readable_bytes(stream)
        info = _inspect_raw(src)
    dtype = _dtype_of(info)
    total = info.original_bytes // dtype.itemsize
    first, count = operator.index(first), operator.index(count)  # no silent 1.5 -> 1
    if first < 0 or count < 0 or first > total or count > total - first:
        raise ValueError(f"range {first}:{count} is outside the stream's {total} values")
    dst = np.empty(count, dtype=dtype)
    opts = _lib.DecodeOptions()
    opts.flags = 0 if verify else _lib.DECODE_SKIP_CHECKSUM
    opts.exec = _lib.EXEC_CPU
    opts.threads = _threads(threads)
    if path is not None:
        status = _lib.lib.fz_decompress_range_file(
            path, first, count, dst.ctypes.data, dst.nbytes, ctypes.byref(opts)
        )
    else:
        status = _lib.lib.fz_decompress_range(
            src.ctypes.data, src.nbytes, first, count, dst.ctypes.data, dst.nbytes, ctypes.byref(opts)
        )
    _check(status, "decompress_range")
    return dst
