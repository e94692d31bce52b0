"""floatz as a numcodecs codec, the compressor of zarr format 2 arrays
(zarr-python 2, or zarr-python 3 with zarr_format=2). Zarr format 3 arrays
cannot use it: zarr-python wraps only its own list of numcodecs codecs.

    import zarr, floatz.numcodecs
    z = zarr.array(data, chunks=(64, 64, 64),
                   compressor=floatz.numcodecs.Floatz(mode="abs", bound=1e-3))

Importing this module registers the codec id "floatz" with numcodecs (the
package also declares it as a `numcodecs.codecs` entry point), so stored
arrays reopen from their JSON config. Each chunk becomes one floatz stream,
which records its dtype and shape: decode needs no config beyond the id.
Note that mode "rel" is relative to each chunk's own value range; use "abs"
for one bound over the whole array.

As numcodecs' buffer codecs do, this one keeps a chunk's values in memory
order, because zarr reads a decoded chunk back with reshape(-1, order="A") and
then the array's order. So an F-ordered chunk is stored as its transpose
(decode returns that transpose, C-ordered), and chunks must be in the
machine's byte order (a stream stores values, not their byte order: zarr
would view decoded little-endian bytes as the array's big-endian dtype).
"""

import numpy as np
from numcodecs.abc import Codec
from numcodecs.compat import ensure_contiguous_ndarray, ndarray_copy
from numcodecs.registry import register_codec

import floatz


class Floatz(Codec):
    """floatz compression of float32/float64 chunks.

    Parameters are those of `floatz.compress`; `backend` is not stored in
    the config's meaning (a stream decodes on any backend), it only picks
    where this process does the work.
    """

    codec_id = "floatz"

    def __init__(
        self, codec="sleek", mode="lossless", bound=0.0, options=(), checksum=True, backend="auto"
    ):
        self.codec = str(codec)
        self.mode = str(mode).lower()
        self.bound = float(bound)
        self.options = [int(v) for v in options]
        self.checksum = bool(checksum)
        self.backend = str(backend)
        # Refuse a bad configuration now rather than at the first write.
        if self.backend not in floatz._BACKENDS:
            raise ValueError(f"backend must be one of {floatz._BACKENDS}, not {backend!r}")
        floatz.compress_bound(
            (1,), np.float64, self.codec, self.mode, self.bound, options=self.options
        )

    def encode(self, buf):
        a = np.asanyarray(buf)
        if a.dtype.kind != "f":
            # numcodecs hands over raw bytes in some paths: these must
            # already be floats, which only the caller knows.
            raise TypeError(f"floatz encodes float32/float64 arrays, not {a.dtype}")
        if not a.dtype.isnative:
            # decode returns native values, which zarr would reinterpret
            # as this dtype's bytes: refuse rather than store garbage
            raise TypeError(
                f"floatz encodes chunks in the machine's byte order, not {a.dtype.str}: "
                f"store the array as {a.dtype.newbyteorder('=').str}"
            )
        if a.ndim > 1 and a.flags.f_contiguous and not a.flags.c_contiguous:
            # Memory order (see the module's doc): zarr v2 hands F-ordered
            # chunks of order="F" arrays, whose transpose is C-ordered.
            a = a.T
        if a.ndim > 4:  # floatz takes 4; zarr restores the chunk's shape
            a = a.reshape((-1,) + a.shape[-3:])
        return floatz.compress(
            a,
            self.codec,
            self.mode,
            self.bound,
            backend=self.backend,
            checksum=self.checksum,
            options=self.options,
        )

    def decode(self, buf, out=None):
        stream = ensure_contiguous_ndarray(buf).view(np.uint8)
        dec = floatz.decompress(stream, backend=self.backend)
        if out is None:
            return dec
        return ndarray_copy(dec, out)


register_codec(Floatz)
