"""Tests of floatz.cuda (device arrays through the device API). They skip,
saying why, without a GPU; on a GPU machine they check that the device
writes the CPU's bytes, that either side decodes the other's streams, that
lossy bounds hold and that damaged streams are refused."""

import unittest

import numpy as np

import floatz
from tests.test_floatz import LOSSLESS, LOSSY, field, same_bits, worst_error

try:
    import floatz.cuda as fc
except ImportError as e:  # no CUDA runtime to load
    fc = None
    WHY = str(e)
else:
    WHY = "no usable GPU (fz_gpu_count() == 0)"


def setUpModule():
    if fc is None or floatz.gpu_count() == 0:
        raise unittest.SkipTest(WHY)


class DeviceRoundTrip(unittest.TestCase):
    def test_lossless_same_bytes_as_cpu(self):
        for codec in LOSSLESS:
            for dtype in (np.float32, np.float64):
                for shape in [(1,), (4097,), (300001,), (37, 41), (13, 17, 19)]:
                    with self.subTest(codec=codec, dtype=dtype.__name__, shape=shape):
                        a = field(shape, dtype)
                        d = fc.compress(fc.to_device(a), codec)
                        host = d.copy_to_host()
                        self.assertEqual(host.tobytes(), bytes(floatz.compress(a, codec, backend="cpu")))
                        back = fc.decompress(d)
                        self.assertEqual((back.shape, back.dtype), (a.shape, a.dtype))
                        self.assertTrue(same_bits(back.copy_to_host(), a))
                        self.assertTrue(same_bits(floatz.decompress(host, backend="cpu"), a))

    def test_lossy_bound_and_bytes(self):
        for codec, mode, bound in LOSSY:
            for dtype in (np.float32, np.float64):
                with self.subTest(codec=codec, mode=mode, dtype=dtype.__name__):
                    a = field((57, 61, 3), dtype, seed=3, extremes=mode == "abs")
                    d = fc.compress(fc.to_device(a), codec, mode, bound)
                    host = d.copy_to_host()
                    self.assertEqual(host.tobytes(), bytes(floatz.compress(a, codec, mode, bound, backend="cpu")))
                    info = fc.inspect(d)
                    self.assertEqual((info.codec, info.mode, info.shape), (codec, mode, a.shape))
                    dec = fc.decompress(d).copy_to_host()
                    self.assertLessEqual(worst_error(a, dec), info.bound_effective)

    def test_cpu_stream_decodes_on_device(self):
        a = field((100003,), np.float64)
        for codec in LOSSLESS:
            with self.subTest(codec=codec):
                s = np.frombuffer(bytes(floatz.compress(a, codec, backend="cpu")), np.uint8)
                self.assertTrue(same_bits(fc.decompress(fc.to_device(s)).copy_to_host(), a))

    def test_out_buffers(self):
        a = field((5000,), np.float32)
        cap = floatz.compress_bound(a.shape, a.dtype)
        out = fc.DeviceBuffer(cap)
        ret, size = fc.compress(fc.to_device(a), out=out)
        self.assertIs(ret, out)
        stream = out.copy_to_host()[:size]
        self.assertEqual(stream.tobytes(), bytes(floatz.compress(a, backend="cpu")))
        dst = fc.DeviceBuffer(a.nbytes, a.shape, a.dtype)
        self.assertIs(fc.decompress(fc.to_device(stream), out=dst), dst)
        self.assertTrue(same_bits(dst.copy_to_host(), a))
        with self.assertRaises(ValueError):
            fc.decompress(fc.to_device(stream), out=fc.DeviceBuffer(a.nbytes, (2500,), np.float64))
        small = fc.DeviceBuffer(64)
        with self.assertRaises(floatz.FloatzError):
            fc.compress(fc.to_device(a), out=small)


class DeviceRandomAccess(unittest.TestCase):
    def test_ranges_equal_cpu(self):
        for codec in LOSSLESS:
            for dtype in (np.float32, np.float64):
                with self.subTest(codec=codec, dtype=dtype.__name__):
                    a = field((70001,), dtype, seed=9)
                    host = bytes(floatz.compress(a, codec, backend="cpu"))
                    d = fc.to_device(np.frombuffer(host, np.uint8))
                    flat = a.reshape(-1)
                    for first, count in [(0, 0), (0, 1), (4095, 2), (12345, 30000), (0, flat.size), (flat.size - 1, 1)]:
                        got = fc.decompress_range(d, first, count).copy_to_host()
                        self.assertEqual(got.dtype, a.dtype)
                        self.assertTrue(same_bits(got, flat[first : first + count]))
                        self.assertTrue(same_bits(got, floatz.decompress_range(host, first, count)))
                    out = fc.DeviceBuffer(10 * a.itemsize, (10,), a.dtype)
                    self.assertIs(fc.decompress_range(d, 7, 10, out=out), out)
                    self.assertTrue(same_bits(out.copy_to_host(), flat[7:17]))

    def test_refusals(self):
        a = field((20000,), np.float32)
        s = np.frombuffer(bytes(floatz.compress(a)), np.uint8)
        d = fc.to_device(s)
        with self.assertRaises(ValueError):
            fc.decompress_range(d, 19999, 2)
        with self.assertRaises(ValueError):
            fc.decompress_range(d, 0, 4, out=fc.DeviceBuffer(8, (2,), np.float32))
        bad = s.copy()
        bad[len(s) - 5] ^= 0x10  # the last chunk's payload
        with self.assertRaises(floatz.FloatzError):
            fc.decompress_range(fc.to_device(bad), 19990, 10)
        self.assertTrue(same_bits(fc.decompress_range(fc.to_device(bad), 0, 10).copy_to_host(), a[:10]))


class DeviceRefusals(unittest.TestCase):
    def test_damaged_streams(self):
        a = field((20000,), np.float32)
        s = np.frombuffer(bytes(floatz.compress(a)), np.uint8)
        for cut in (0, 10, 127, 128, len(s) // 2, len(s) - 1):
            with self.subTest(truncated=cut), self.assertRaises(floatz.FloatzError):
                fc.decompress(fc.to_device(s[:cut]))
        rng = np.random.default_rng(5)
        for i in rng.choice(len(s), 64, replace=False):
            bad = s.copy()
            bad[i] ^= 0x41
            try:
                dec = fc.decompress(fc.to_device(bad)).copy_to_host()
            except floatz.FloatzError:
                continue
            self.assertTrue(same_bits(dec, a), f"byte {i}: wrong data returned")

    def test_bad_inputs(self):
        with self.assertRaises(TypeError):
            fc.compress(np.zeros(4, np.float32))  # host memory
        with self.assertRaises(TypeError):
            fc.compress(fc.to_device(np.zeros(4, np.int32)))
        with self.assertRaises(floatz.FloatzError):
            fc.compress(fc.to_device(np.zeros(4, np.float32)), "gfc", "abs", 0.1)


class Interop(unittest.TestCase):
    def test_cupy(self):
        try:
            import cupy as cp
        except ImportError:
            self.skipTest("cupy is not installed")
        a = field((64, 64, 64), np.float32)
        x = cp.asarray(a)
        blob = fc.compress(x, mode="abs", bound=1e-3)
        y = cp.asarray(fc.decompress(blob))  # wraps the DeviceBuffer, no copy
        self.assertEqual(y.shape, a.shape)
        self.assertLessEqual(worst_error(a, cp.asnumpy(y)), 1e-3)
        with self.assertRaises(ValueError):
            fc.compress(x[:, ::2])  # not contiguous
        out = cp.empty(a.shape, cp.float32)
        fc.decompress(fc.compress(x), out=out)
        self.assertTrue(same_bits(cp.asnumpy(out), a))

    def test_torch(self):
        try:
            import torch
        except ImportError:
            self.skipTest("torch is not installed")
        if not torch.cuda.is_available():
            self.skipTest("torch sees no GPU")
        a = field((1000, 33), np.float64)
        t = torch.from_numpy(a).cuda()
        s = torch.cuda.current_stream().cuda_stream
        blob = fc.compress(t, "falcon", stream=s)
        self.assertEqual(blob.copy_to_host().tobytes(), bytes(floatz.compress(a, "falcon", backend="cpu")))
        back = torch.empty_like(t)
        fc.decompress(blob, out=back, stream=s)
        self.assertTrue(same_bits(back.cpu().numpy(), a))


if __name__ == "__main__":
    unittest.main()
