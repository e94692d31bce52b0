#!/usr/bin/env python3
"""Summary tables (markdown, on stdout) and CR-vs-throughput plots (PNG)
from the CSV files of bench_cpu / bench_gpu_peers.

    python3 bench/plot.py --prefix bench/results/STEM CPU.csv [GPU.csv]

Rows are grouped by side (cpu/gpu), suite (the part of the dataset name
before '/'), dtype, codec and bound. Per group: geometric-mean CR over the
datasets, aggregate throughput (total original bytes / total time, i.e.
the time-weighted mean), the same for the memcpy limit, the largest
max-error/bound and the sum of violations. Plots: one PNG per side and
direction (PREFIX-cpu-comp.png, ...), one log-log panel per suite and
dtype, one marker per codec (colour) and bound (shape), the memcpy limit as
a dashed line. Needs matplotlib for the plots only (tables without it).
"""
import argparse
import csv
import math
import os
import sys
from collections import OrderedDict, defaultdict

BOUND_MARKERS = OrderedDict(
    [("lossless", "o"), ("REL 0.01", "^"), ("REL 0.001", "s"),
     ("REL 0.0001", "D")])
SUITE_ORDER = ["scientific", "field", "particles", "adversarial",
               "timeseries"]


def bound_label(row):
    if row["mode"] == "lossless":
        return "lossless"
    return "%s %g" % (row["mode"], float(row["rel_bound"]))


def load(paths):
    rows = []
    for p in paths:
        with open(p, newline="") as f:
            for r in csv.DictReader(f):
                rows.append(r)
    return rows


def suite_of(name):
    return name.split("/", 1)[0] if "/" in name else name


def suite_key(s):
    return (SUITE_ORDER.index(s) if s in SUITE_ORDER else len(SUITE_ORDER), s)


def aggregate(rows):
    """(side, suite, dtype) -> OrderedDict((codec, bound) -> stats)."""
    groups = defaultdict(OrderedDict)
    for r in rows:
        if r["measured"] != "1":
            continue
        key = (r["side"], suite_of(r["dataset"]), r["dtype"])
        cb = (r["codec"], bound_label(r))
        g = groups[key].setdefault(cb, {
            "n": 0, "logcr": 0.0, "bytes": 0.0, "tc": 0.0, "td": 0.0,
            "tm": 0.0, "err": 0.0, "viol": 0, "datasets": []})
        b = float(r["MiB"]) * 1048576.0
        g["n"] += 1
        g["logcr"] += math.log(float(r["CR"]))
        g["bytes"] += b
        g["tc"] += b / (float(r["comp_GBps"]) * 1e9)
        g["td"] += b / (float(r["decomp_GBps"]) * 1e9)
        g["tm"] += b / (float(r["memcpy_GBps"]) * 1e9)
        g["err"] = max(g["err"], float(r["max_err_over_bound"]))
        g["viol"] += int(r["violations"])
        g["datasets"].append(r["dataset"])
    out = {}
    for key, d in groups.items():
        o = OrderedDict()
        for cb, g in d.items():
            o[cb] = {
                "n": g["n"],
                "cr": math.exp(g["logcr"] / g["n"]),
                "comp": g["bytes"] / g["tc"] / 1e9,
                "decomp": g["bytes"] / g["td"] / 1e9,
                "memcpy": g["bytes"] / g["tm"] / 1e9,
                "err": g["err"],
                "viol": g["viol"],
            }
        out[key] = o
    return out


def ordered_keys(agg, side):
    keys = [k for k in agg if k[0] == side]
    return sorted(keys, key=lambda k: (suite_key(k[1]), k[2]))


def print_tables(agg, rows, out):
    sides = [s for s in ("cpu", "gpu") if any(k[0] == s for k in agg)]
    for side in sides:
        out.write("### %s summary: geometric-mean CR, aggregate throughput "
                  "per suite\n\n" % side.upper())
        out.write("| suite | dtype | codec | mode/bound | datasets | CR "
                  "(geomean) | comp GB/s | decomp GB/s | comp/memcpy | "
                  "decomp/memcpy | max err/bound | violations |\n")
        out.write("|---|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n")
        for key in ordered_keys(agg, side):
            for (codec, bound), s in agg[key].items():
                err = "%.3f" % s["err"] if bound != "lossless" else "-"
                name = "**%s**" % codec if codec.startswith("floatz") else codec
                out.write("| %s | %s | %s | %s | %d | %.3f | %.3g | %.3g | "
                          "%.2fx | %.2fx | %s | %d |\n" % (
                              key[1], key[2], name, bound, s["n"], s["cr"],
                              s["comp"], s["decomp"], s["comp"] / s["memcpy"],
                              s["decomp"] / s["memcpy"], err, s["viol"]))
        out.write("\n")
        bad = [r for r in rows if r["side"] == side and r["measured"] != "1"]
        if bad:
            notes = defaultdict(int)
            for r in bad:
                notes["%s: %s" % (r["codec"], r["note"])] += 1
            out.write("Not measured (%s): %s.\n\n" % (side.upper(), "; ".join(
                "%s (%d rows)" % (k, v) for k, v in sorted(notes.items()))))


def print_full(rows, out):
    """Every row, per side, as in the benches' own markdown tables."""
    for side in ("cpu", "gpu"):
        rs = [r for r in rows if r["side"] == side]
        if not rs:
            continue
        out.write("<details><summary>every %s row (%d)</summary>\n\n" %
                  (side.upper(), len(rs)))
        out.write("| dataset | dtype | MiB | codec | mode/bound | CR | comp "
                  "GB/s | decomp GB/s | comp/memcpy | decomp/memcpy | max "
                  "err/bound | PSNR dB | violations | note |\n")
        out.write("|---|---|--:|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|"
                  "\n")
        order = {}
        for r in rs:
            order.setdefault((r["dataset"], r["dtype"]), len(order))
        rs.sort(key=lambda r: order[(r["dataset"], r["dtype"])])
        for r in rs:
            b = bound_label(r)
            if r["measured"] != "1":
                out.write("| %s | %s | %.1f | %s | %s | - | - | - | - | - | "
                          "- | - | - | %s |\n" % (
                              r["dataset"], r["dtype"], float(r["MiB"]),
                              r["codec"], b, r["note"]))
                continue
            err = ("%.3f" % float(r["max_err_over_bound"])
                   if r["mode"] != "lossless" else "-")
            psnr = ("%.1f" % float(r["psnr_dB"])
                    if r["mode"] != "lossless" else "-")
            out.write("| %s | %s | %.3g | %s | %s | %.3f | %.3g | %.3g | "
                      "%.2fx | %.2fx | %s | %s | %s | %s |\n" % (
                          r["dataset"], r["dtype"], float(r["MiB"]),
                          r["codec"], b, float(r["CR"]),
                          float(r["comp_GBps"]), float(r["decomp_GBps"]),
                          float(r["comp_vs_memcpy"]),
                          float(r["decomp_vs_memcpy"]), err, psnr,
                          r["violations"], r["note"]))
        out.write("\n</details>\n\n")


def plot(agg, prefix, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.lines import Line2D
    except ImportError:
        out.write("(plots skipped: matplotlib absent; "
                  "scripts/install_bench_deps.sh installs it)\n\n")
        return
    codecs = []
    for d in agg.values():
        for codec, _ in d:
            if codec not in codecs:
                codecs.append(codec)
    codecs.sort(key=lambda c: (not c.startswith("floatz"), c))
    # floatz in strong reds, peers from two qualitative palettes
    own = ["#d62728", "#8c1a1a", "#ff7f0e", "#e377c2"]
    peers = list(plt.get_cmap("tab10").colors) + list(
        plt.get_cmap("Dark2").colors) + list(plt.get_cmap("Set2").colors)
    peers = [p for k, p in enumerate(peers) if k not in (1, 3, 6)]
    colour, i_own, i_peer = {}, 0, 0
    for c in codecs:
        if c.startswith("floatz"):
            colour[c] = own[i_own % len(own)]
            i_own += 1
        else:
            colour[c] = peers[i_peer % len(peers)]
            i_peer += 1
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    fmt = FuncFormatter(lambda v, _: "%g" % v)
    for side in ("cpu", "gpu"):
        keys = ordered_keys(agg, side)
        if not keys:
            continue
        for direction, title in (("comp", "compression"),
                                 ("decomp", "decompression")):
            ncols = 3 if len(keys) > 4 else max(1, len(keys))
            nrows = (len(keys) + ncols - 1) // ncols
            fig, axes = plt.subplots(nrows, ncols, squeeze=False,
                                     figsize=(5.0 * ncols, 4.0 * nrows + 1.6))
            used = []
            for i, key in enumerate(keys):
                ax = axes[i // ncols][i % ncols]
                lim = []
                for (codec, bound), s in agg[key].items():
                    fz = codec.startswith("floatz")
                    ax.scatter(s[direction], s["cr"],
                               marker=BOUND_MARKERS.get(bound, "x"),
                               s=110 if fz else 45, color=colour[codec],
                               edgecolors="black" if fz else "none",
                               linewidths=1.2, zorder=3 if fz else 2)
                    if s["viol"]:
                        ax.scatter(s[direction], s["cr"], marker="o", s=260,
                                   facecolors="none", edgecolors="red",
                                   linewidths=1.5, zorder=4)
                    lim.append(s["memcpy"])
                    if codec not in used:
                        used.append(codec)
                memcpy = sum(lim) / len(lim)
                ax.axvline(memcpy, color="grey", linestyle="--", linewidth=1)
                ax.set_xscale("log")
                ax.set_yscale("log")
                ax.set_title("%s %s (%d datasets)" % (
                    key[1], key[2], max(s["n"] for s in agg[key].values())),
                    fontsize=10)
                ax.set_xlabel("%s GB/s" % title, fontsize=9)
                ax.set_ylabel("CR", fontsize=9)
                for axis, lim in ((ax.xaxis, ax.get_xlim()),
                                  (ax.yaxis, ax.get_ylim())):
                    subs = (1.0, 2.0, 5.0) if lim[1] > 10 * lim[0] else (
                        1.0, 1.2, 1.5, 2.0, 3.0, 4.0, 5.0, 7.0)
                    axis.set_major_locator(LogLocator(subs=subs))
                    axis.set_major_formatter(fmt)
                    axis.set_minor_formatter(NullFormatter())
                ax.grid(True, which="both", alpha=0.25)
                ax.tick_params(labelsize=8)
            for j in range(len(keys), nrows * ncols):
                axes[j // ncols][j % ncols].axis("off")
            handles = [Line2D([], [], marker="o", linestyle="none",
                              color=colour[c], markersize=8,
                              markeredgecolor="black" if c.startswith(
                                  "floatz") else "none", label=c)
                       for c in codecs if c in used]
            handles += [Line2D([], [], marker=m, linestyle="none",
                               color="grey", markersize=7, label=b)
                        for b, m in BOUND_MARKERS.items()]
            handles += [Line2D([], [], color="grey", linestyle="--",
                               label="memcpy limit"),
                        Line2D([], [], marker="o", linestyle="none",
                               markerfacecolor="none", markeredgecolor="red",
                               markersize=11, label="violations > 0")]
            fig.legend(handles=handles, loc="lower center",
                       ncol=min(7, len(handles)), fontsize=8, frameon=False)
            fig.suptitle("%s %s: CR vs throughput (log-log; per suite: "
                         "geomean CR, aggregate GB/s)" % (side.upper(), title),
                         fontsize=12)
            fig.tight_layout(rect=(0, 1.3 / (4.0 * nrows + 1.6), 1, 0.97))
            path = "%s-%s-%s.png" % (prefix, side, direction)
            fig.savefig(path, dpi=90)
            plt.close(fig)
            out.write("![%s %s](%s)\n\n" % (side.upper(), title,
                                             os.path.basename(path)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--prefix", required=True,
                    help="output path prefix for the PNG files")
    ap.add_argument("--full", action="store_true",
                    help="also print every row (in <details> blocks)")
    ap.add_argument("csv", nargs="+")
    a = ap.parse_args()
    rows = load([p for p in a.csv if os.path.exists(p)])
    if not rows:
        sys.stdout.write("(no measured rows)\n")
        return 0
    agg = aggregate(rows)
    sys.stdout.write("## Plots\n\n")
    plot(agg, a.prefix, sys.stdout)
    sys.stdout.write("## Summary\n\n")
    print_tables(agg, rows, sys.stdout)
    if a.full:
        sys.stdout.write("## Every row\n\n")
        print_full(rows, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
