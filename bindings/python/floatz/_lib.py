"""ctypes declarations of the floatz C API (include/floatz.h).

The structures mirror the header field by field; ctypes applies the same
alignment rules as the C compiler, and `_check_layout` compares what the
library writes through fz_params_init with what these declarations read, so
a header change that is not mirrored here fails loudly at import.
"""

import ctypes
import ctypes.util
import os
import sys

MAX_DIMS = 4

# fz_status codes (include/floatz.h).
OK = 0
ERR_INVALID_ARGUMENT = 1
ERR_UNSUPPORTED = 2
ERR_DST_TOO_SMALL = 3
ERR_NO_CUDA = 200
ERR_NO_GPU = 201

F32, F64 = 1, 2
EXEC_CPU, EXEC_GPU = 0, 1
FLAG_NO_CHECKSUM = 1
DECODE_SKIP_CHECKSUM = 1
HEADER_BYTES = 128  # FZ_HEADER_BYTES: enough for fz_inspect


class Params(ctypes.Structure):
    _fields_ = [
        ("dtype", ctypes.c_int),
        ("ndims", ctypes.c_uint32),
        ("dims", ctypes.c_uint64 * MAX_DIMS),
        ("codec", ctypes.c_int),
        ("mode", ctypes.c_int),
        ("bound", ctypes.c_double),
        ("flags", ctypes.c_uint32),
        ("exec", ctypes.c_int),
        ("threads", ctypes.c_int32),
        ("codec_options", ctypes.c_int32 * 4),
        ("gpu_streams", ctypes.c_uint32),
        ("batch_kib", ctypes.c_uint32),
        ("reserved", ctypes.c_uint32 * 6),
    ]


class DecodeOptions(ctypes.Structure):
    _fields_ = [
        ("flags", ctypes.c_uint32),
        ("exec", ctypes.c_int),
        ("threads", ctypes.c_int32),
        ("gpu_streams", ctypes.c_uint32),
        ("batch_kib", ctypes.c_uint32),
        ("reserved", ctypes.c_uint32 * 3),
    ]


class Info(ctypes.Structure):
    _fields_ = [
        ("params", Params),
        ("bound_effective", ctypes.c_double),
        ("format_version", ctypes.c_uint32),
        ("codec_version", ctypes.c_uint32),
        ("original_bytes", ctypes.c_uint64),
        ("compressed_bytes", ctypes.c_uint64),
        ("chunk_bytes", ctypes.c_uint64),
        ("chunk_count", ctypes.c_uint64),
        ("payload_offset", ctypes.c_uint64),
        ("has_checksums", ctypes.c_int),
    ]


_size_t_p = ctypes.POINTER(ctypes.c_size_t)
_SIGNATURES = {
    "fz_version_string": (ctypes.c_char_p, []),
    "fz_version_number": (ctypes.c_uint, []),
    "fz_status_string": (ctypes.c_char_p, [ctypes.c_int]),
    "fz_params_init": (ctypes.c_int, [ctypes.POINTER(Params), ctypes.c_int, ctypes.c_uint64]),
    "fz_params_set_shape": (
        ctypes.c_int,
        [ctypes.POINTER(Params), ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint64)],
    ),
    "fz_compress_bound": (ctypes.c_int, [ctypes.POINTER(Params), _size_t_p]),
    "fz_compress": (
        ctypes.c_int,
        [
            ctypes.POINTER(Params),
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.c_void_p,
            ctypes.c_size_t,
            _size_t_p,
        ],
    ),
    "fz_decompress": (
        ctypes.c_int,
        [
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.POINTER(DecodeOptions),
            _size_t_p,
        ],
    ),
    "fz_decompress_range": (
        ctypes.c_int,
        [
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.c_uint64,
            ctypes.c_uint64,
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.POINTER(DecodeOptions),
        ],
    ),
    "fz_decompress_range_file": (
        ctypes.c_int,
        [
            ctypes.c_char_p,
            ctypes.c_uint64,
            ctypes.c_uint64,
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.POINTER(DecodeOptions),
        ],
    ),
    "fz_inspect": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(Info)]),
    "fz_codec_name": (ctypes.c_char_p, [ctypes.c_int]),
    "fz_codec_from_name": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]),
    "fz_gpu_count": (ctypes.c_int, []),
    "fz_gpu_supports": (ctypes.c_int, [ctypes.POINTER(Params)]),
    "fz_device_scratch_size": (ctypes.c_int, [ctypes.POINTER(Params), _size_t_p]),
    # device pointers and the stream are plain addresses (c_void_p)
    "fz_device_compress": (
        ctypes.c_int,
        [ctypes.POINTER(Params)] + [ctypes.c_void_p] * 2 + [ctypes.c_size_t]
        + [ctypes.c_void_p, ctypes.c_size_t] + [ctypes.c_void_p] * 3,
    ),
    "fz_device_decompress": (
        ctypes.c_int,
        [ctypes.POINTER(Params), ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t]
        + [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(DecodeOptions)] + [ctypes.c_void_p] * 3,
    ),
    "fz_device_range_scratch_size": (
        ctypes.c_int,
        [ctypes.POINTER(Params), ctypes.c_uint64, ctypes.c_uint64, _size_t_p],
    ),
    "fz_device_decompress_range": (
        ctypes.c_int,
        [ctypes.POINTER(Params), ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint64, ctypes.c_uint64]
        + [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(DecodeOptions)]
        + [ctypes.c_void_p] * 3,
    ),
}


def _candidates():
    """Where libfloatz may be, in the order tried."""
    env = os.environ.get("FLOATZ_LIBRARY")
    if env:
        # An explicit choice: nothing else is tried, so a wrong path is an
        # error rather than a silent fallback to another copy.
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    names = ["libfloatz.dylib"] if sys.platform == "darwin" else ["libfloatz.so"]
    found = [os.path.join(here, n) for n in names]
    system = ctypes.util.find_library("floatz")
    if system:
        found.append(system)
    return found


def _load():
    errors = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            errors.append(f"{path}: {e}")
    raise ImportError(
        "floatz: cannot load the C library libfloatz (set FLOATZ_LIBRARY to "
        "the path of libfloatz.so, or install it where the dynamic loader "
        "finds it). Tried: " + ("; ".join(errors) or "no candidate found")
    )


def _declare(lib):
    for name, (restype, argtypes) in _SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes


def _check_layout(lib):
    """fz_params_init writes dims[0] and the default codec; if these
    declarations disagreed with the header, they would read other bytes."""
    p = Params()
    if lib.fz_params_init(ctypes.byref(p), F64, 123456789) != OK:
        raise ImportError("floatz: fz_params_init failed")
    if (p.dtype, p.ndims, p.dims[0], p.dims[1], p.codec, p.mode, p.bound) != (
        F64, 1, 123456789, 1, 1, 0, 0.0
    ):
        raise ImportError(
            "floatz: the library's fz_params layout does not match the "
            "bindings (library version "
            + lib.fz_version_string().decode()
            + ")"
        )


lib = _load()
_declare(lib)
_check_layout(lib)
