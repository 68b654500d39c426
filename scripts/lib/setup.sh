# shellcheck shell=bash
# Shared by scripts/test, demo, bench and gpu-check (sourced, not run):
# installs missing build tools with apt-get, puts nvcc on PATH, configures
# build directories and lists a build's programs.

WEFT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# Options every scripts/* release build shares (one build/release for test, demo, bench and
# gpu-check). scripts/test adds -Dcuda-device-code=ptx -Dbench=false after them (no GPU to run
# SASS on; its clang build compiles the host benchmarks, gpu-check the CUDA ones); the others name
# the defaults here, as Meson's reconfigure keeps whatever the last configure set.
# shellcheck disable=SC2034  # used by the scripts that source this file
WEFT_RELEASE_OPTS=(--buildtype=release -Dtests=true -Dbench=true -Dexamples=true -Dcuda=auto
  -Dcuda-device-code=per-arch)

weft_log() { printf '== %s\n' "$*" >&2; }

# A machine that cannot install packages (the GPU machines reach no
# network) gets Eigen and doctest from $WEFT_ROOT/.deps, which
# scripts/pack-deps fills and meson.build falls back to.
weft_has_packed_deps() { [[ -d "$WEFT_ROOT/.deps/include" ]]; }

# Installs what is missing (Debian/Ubuntu); does nothing when all is there.
weft_install_deps() {
  local missing=() packed=0
  weft_has_packed_deps && packed=1
  command -v meson >/dev/null 2>&1 || missing+=(meson)
  command -v ninja >/dev/null 2>&1 || missing+=(ninja-build)
  command -v g++ >/dev/null 2>&1 || missing+=(g++)
  command -v python3 >/dev/null 2>&1 || missing+=(python3)
  if ((!packed)); then
    command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
    if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists eigen3; then
      missing+=(libeigen3-dev)
    fi
    [[ -f /usr/include/doctest/doctest.h ]] || missing+=(doctest-dev)
    # DLPack's header, for <weft/interop.hpp> and its tests (meson.build: weft_dlpack_dep).
    [[ -f /usr/include/dlpack/dlpack.h ]] || missing+=(libdlpack-dev)
  fi
  weft_apt_install "${missing[@]}"
}

# The extra tools scripts/test needs: for its aarch64 build the cross compiler (with its C++
# and OpenMP runtimes) and qemu user emulation to run the result; for weft::dist's suite OpenMPI
# (mpirun, and the headers and mpicxx that Meson's MPI dependency finds); for the consumer
# projects CMake (weft itself builds with Meson only); for its clang build clang >= 15 with
# LLVM's OpenMP runtime and the sanitizer runtimes (clang-16 from Debian unless one is there;
# weft_clang names it).
weft_install_test_deps() {
  local missing=()
  command -v cmake >/dev/null 2>&1 || missing+=(cmake)
  weft_clang >/dev/null || missing+=(clang-16 libomp-16-dev libclang-rt-16-dev)
  command -v aarch64-linux-gnu-g++ >/dev/null 2>&1 || missing+=(g++-aarch64-linux-gnu)
  command -v qemu-aarch64 >/dev/null 2>&1 || missing+=(qemu-user)
  command -v mpirun >/dev/null 2>&1 || missing+=(openmpi-bin)
  command -v mpicxx >/dev/null 2>&1 || missing+=(libopenmpi-dev)
  weft_apt_install "${missing[@]}"
}

# weft_clang: prints the newest versioned clang++ from 15 on (clang++-19 ... clang++-15, with
# its clang, LLVM's OpenMP header and the sanitizer runtimes: Debian's clang-N only recommends
# libclang-rt-N-dev) as "CXX CC"; fails when there is none.
weft_clang() {
  local v
  for v in 19 18 17 16 15; do
    if command -v "clang++-$v" >/dev/null 2>&1 && command -v "clang-$v" >/dev/null 2>&1 &&
      [[ -f "/usr/lib/llvm-$v/lib/clang/$v/include/omp.h" || -f "/usr/lib/llvm-$v/include/omp.h" ]] &&
      compgen -G "/usr/lib/llvm-$v/lib/clang/$v/lib/linux/libclang_rt.asan-*.a" >/dev/null; then
      echo "clang++-$v clang-$v"
      return 0
    fi
  done
  return 1
}

# weft_apt_install PACKAGES...: apt-get install (as root or through sudo); nothing when empty.
weft_apt_install() {
  local missing=("$@")
  ((${#missing[@]} == 0)) && return 0

  weft_log "installing: ${missing[*]}"
  local sudo=()
  if ((EUID != 0)); then
    command -v sudo >/dev/null 2>&1 || {
      echo "missing ${missing[*]}; run as root or install them" >&2
      return 1
    }
    sudo=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# Meson finds nvcc only on PATH (Meson 1.0 ignores $NVCC).
weft_cuda_env() {
  if [[ -d /usr/local/cuda/bin ]]; then
    case ":$PATH:" in
      *:/usr/local/cuda/bin:*) ;;
      *) PATH="/usr/local/cuda/bin:$PATH" ;;
    esac
    export PATH
  fi
  if command -v nvcc >/dev/null 2>&1; then
    NVCC="$(command -v nvcc)"
    export NVCC
  fi
}

weft_setup() {
  weft_install_deps
  weft_cuda_env
}

# weft_configure DIR MESON_ARGS...: set up DIR, or apply the arguments to an
# existing DIR (an incremental rebuild follows); a DIR that cannot be
# reconfigured is wiped.
weft_configure() {
  local dir="$1"
  shift
  if [[ -f "$dir/meson-private/coredata.dat" ]]; then
    meson setup --reconfigure "$dir" "$@" >"$dir.configure.log" 2>&1 ||
      meson setup --wipe "$dir" "$@" >"$dir.configure.log" 2>&1 || {
      cat "$dir.configure.log" >&2
      return 1
    }
  else
    mkdir -p "$(dirname "$dir")"
    meson setup "$dir" "$@" >"$dir.configure.log" 2>&1 || {
      cat "$dir.configure.log" >&2
      return 1
    }
  fi
  awk '/^  weft$/ { on = 1; next } on && /^$/ { exit } on' "$dir.configure.log" >&2 || true
}

# weft_targets DIR SUBDIR in|outside KINDS: the ninja targets of build DIR that SUBDIR/meson.build
# defines (in) or does not (outside), of the Meson target types KINDS names (a regular expression:
# "executable", or "^(?!run$)" for every type but run targets), one path per line relative to DIR.
weft_targets() {
  meson introspect --targets "$1" | python3 -c '
import json, os, re, sys
build, sub, where_wanted, kinds = os.path.realpath(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
for t in json.load(sys.stdin):
    inside = os.path.dirname(os.path.realpath(t["defined_in"])).endswith(os.sep + sub)
    if inside == (where_wanted == "in") and re.match(kinds, t["type"]):
        for f in t["filename"]:
            print(os.path.relpath(f, build))
' "$@"
}

# weft_programs DIR SUBDIR: the executables SUBDIR/meson.build defines in build DIR.
weft_programs() { weft_targets "$1" "$2" in '^executable$'; }

# weft_targets_outside DIR SUBDIR: every target of build DIR (libraries, programs, generated
# files; no run targets) that SUBDIR/meson.build does not define: what a build that only checks
# SUBDIR's syntax (scripts/check-syntax) compiles.
weft_targets_outside() { weft_targets "$1" "$2" outside '^(?!run$)'; }

# weft_drop_stale_nvcc_objects DIR: Debian's Meson 1.0 asks nvcc for no dependency file (`ninja
# -t deps` lists none for a .cu object), so ninja cannot see the headers an nvcc object read and
# keeps it after one of them changed. Deletes each nvcc object of DIR that is older than some
# file of the tree's include/, tests/ or bench/; ninja rebuilds it.
weft_drop_stale_nvcc_objects() {
  local root object
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  while IFS= read -r -d '' object; do
    if [[ -n "$(find "$root/include" "$root/tests" "$root/bench" -type f -newer "$object" -print -quit)" ]]; then
      rm -f "$object"
    fi
  done < <(find "$1" -name '*.cu.o' -print0)
}

# weft_build DIR NINJA_ARGS...: ninja -k 0 in DIR, first marking the time
# so that weft_is_built can tell what this build produced.
weft_build() {
  local dir="$1"
  shift
  weft_drop_stale_nvcc_objects "$dir"
  touch "$dir/.weft-build-start"
  ninja -C "$dir" -k 0 "$@"
}

# weft_is_built DIR TARGET: true when TARGET was linked by the last
# weft_build or ninja has nothing left to do for it, so a binary left by an
# earlier build whose update failed is never run as current (sources edited
# during a long build do not make a fresh binary stale).
weft_is_built() {
  [[ -x "$1/$2" ]] || return 1
  [[ -f "$1/.weft-build-start" && "$1/$2" -nt "$1/.weft-build-start" ]] && return 0
  ninja -C "$1" -n "$2" 2>/dev/null | grep -q 'no work to do'
}
