#!/usr/bin/env python3
"""SZ3 (through PyPI's pysz) on the benchmark datasets, rows in bench_cpu's
CSV format. An optional CPU peer: says "SZ3 absent" and exits 0 when pysz
(or numpy) is not installed.

    python3 bench/peer_sz3.py [--reps N] [--budget-s S] [--memcpy-csv CSV]
                              [--csv OUT] --data NAME:TYPE:SHAPE:PATH ...

Datasets as for bench_cpu (text files parsed with the C library's strtof /
strtod, so f32 values are exact, not rounded twice). SZ3's absolute-error
mode at REL bound x (max - min) of the finite values, REL 1e-2, 1e-3, 1e-4
(SZ3 is lossy only), its OpenMP mode on all cores (OMP_NUM_THREADS).
Timed: one compress (decompress) call on numpy arrays, warm-up, median of N;
throughput = original bytes / time. The memcpy limit is read from
bench_cpu's CSV of the same run (--memcpy-csv). Every decompression is
checked: |d - o| <= bound for finite values, bit-exact NaN/inf.
"""
import argparse
import csv
import ctypes
import math
import os
import statistics
import sys
import time

REL = (1e-2, 1e-3, 1e-4)
FIELDS = ["side", "dataset", "dtype", "MiB", "codec", "mode", "rel_bound",
          "abs_bound", "CR", "comp_GBps", "decomp_GBps", "memcpy_GBps",
          "comp_vs_memcpy", "decomp_vs_memcpy", "max_err",
          "max_err_over_bound", "psnr_dB", "violations", "measured", "note"]


def parse_text(path, f32, np):
    libc = ctypes.CDLL(None)
    conv = libc.strtof if f32 else libc.strtod
    conv.restype = ctypes.c_float if f32 else ctypes.c_double
    conv.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    with open(path, "rb") as f:
        vals = [conv(line.strip(), None) for line in f if line.strip()]
    return np.array(vals, dtype=np.float32 if f32 else np.float64)


def load(spec, np):
    name, typ, shape, path = spec.split(":", 3)
    f32 = typ == "f32"
    if path.endswith(".csv") or path.endswith(".txt"):
        a = parse_text(path, f32, np)
    else:
        a = np.fromfile(path, dtype="<f4" if f32 else "<f8")
    if shape != "-":
        dims = [int(x) for x in shape.split("x")]
        a = a.reshape(dims[::-1])  # C order: slowest first
    return name, typ, a


def timed(fn, reps):
    fn()
    t = []
    for _ in range(reps):
        a = time.perf_counter()
        out = fn()
        t.append(time.perf_counter() - a)
    return statistics.median(t), out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--budget-s", type=float, default=0)
    ap.add_argument("--memcpy-csv")
    ap.add_argument("--csv")
    ap.add_argument("--data", action="append", default=[])
    a = ap.parse_args()
    try:
        import numpy as np
        from pysz import sz, szConfig, szErrorBoundMode
        import pysz
    except ImportError as e:
        sys.stderr.write("SZ3 absent (pysz not installed: %s)\n" % e)
        return 0
    try:
        from importlib.metadata import version as pkg_version
        version = pkg_version("pysz")
    except Exception:  # metadata missing: still usable
        version = getattr(pysz, "__version__", "?")
    np.seterr(all="ignore")
    memcpy = {}
    if a.memcpy_csv and os.path.exists(a.memcpy_csv):
        with open(a.memcpy_csv, newline="") as f:
            for r in csv.DictReader(f):
                memcpy[(r["dataset"], r["dtype"])] = float(r["memcpy_GBps"])
    out = open(a.csv, "w", newline="") if a.csv else sys.stdout
    w = csv.writer(out)
    w.writerow(FIELDS)
    threads = os.environ.get("OMP_NUM_THREADS", str(os.cpu_count()))
    sys.stderr.write("SZ3 through pysz %s, OpenMP mode, %s threads\n" %
                     (version, threads))
    t0 = time.time()
    for spec in a.data:
        try:
            name, typ, x = load(spec, np)
        except (OSError, ValueError) as e:
            sys.stderr.write("peer_sz3: %s: %s (skipped)\n" % (spec, e))
            continue
        fin = x[np.isfinite(x)]
        rng = float(fin.max()) - float(fin.min()) if fin.size else 0.0
        nbytes = x.nbytes
        for rel in REL:
            row = dict.fromkeys(FIELDS, "0")
            row.update(side="cpu", dataset=name, dtype=typ,
                       MiB="%.3f" % (nbytes / 1048576.0), codec="sz3",
                       mode="REL", rel_bound="%g" % rel, measured="0",
                       memcpy_GBps="%.6g" % memcpy.get((name, typ), 0.0))
            ab = rel * rng
            row["abs_bound"] = "%.9g" % ab
            if not (ab > 0 and math.isfinite(ab)):
                row["note"] = "n/a: absolute bound %g" % ab
            elif a.budget_s and time.time() - t0 > a.budget_s:
                row["note"] = "skipped: time budget"
            else:
                cfg = szConfig()
                cfg.errorBoundMode = szErrorBoundMode.ABS
                cfg.absErrorBound = ab
                cfg.openmp = True
                try:
                    tc, (comp, _) = timed(lambda: sz.compress(x, cfg), a.reps)
                    td, (dec, _) = timed(
                        lambda: sz.decompress(comp, x.dtype.type, x.shape),
                        a.reps)
                except Exception as e:  # pysz raises RuntimeError & co.
                    row["note"] = "error: %s" % str(e)[:80]
                    w.writerow([row[k] for k in FIELDS])
                    continue
                o = x.astype(np.float64).ravel()
                d = dec.astype(np.float64).ravel()
                finite = np.isfinite(o)
                err = np.abs(d - o)
                bits = x.view(np.uint32 if typ == "f32" else np.uint64).ravel()
                dbits = dec.view(bits.dtype).ravel()
                viol = int(np.count_nonzero(finite & ~(err <= ab)) +
                           np.count_nonzero(~finite & (bits != dbits)))
                e_fin = err[finite & np.isfinite(err)]
                mx = float(e_fin.max()) if e_fin.size else 0.0
                mse = float(np.mean(e_fin ** 2)) if e_fin.size else 0.0
                psnr = (20 * math.log10(rng) - 10 * math.log10(mse)
                        if mse > 0 and rng > 0 and math.isfinite(rng)
                        else float("inf"))
                cg, dg = nbytes / tc / 1e9, nbytes / td / 1e9
                mc = memcpy.get((name, typ), 0.0)
                row.update(
                    CR="%.6g" % (nbytes / comp.nbytes), comp_GBps="%.6g" % cg,
                    decomp_GBps="%.6g" % dg,
                    comp_vs_memcpy="%.4f" % (cg / mc if mc else 0),
                    decomp_vs_memcpy="%.4f" % (dg / mc if mc else 0),
                    max_err="%.9g" % mx,
                    max_err_over_bound="%.6g" % (mx / ab),
                    psnr_dB="%.4g" % psnr, violations=str(viol),
                    measured="1", note="OpenMP, %s threads" % threads)
                sys.stderr.write("  %-26s sz3 REL %-7g CR %8.3f comp %6.2f "
                                 "decomp %6.2f GB/s viol %d\n" %
                                 (name, rel, nbytes / comp.nbytes, cg, dg,
                                  viol))
            w.writerow([row[k] for k in FIELDS])
            out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
