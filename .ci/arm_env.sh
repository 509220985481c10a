#!/usr/bin/env bash
# .ci/arm_env.sh - an emulated aarch64 Python for testing the NEON build on an x86-64 Debian 12
# host (run as root: it installs Debian packages). Used by .ci/neon.sh; safe to rerun (each
# step keeps a stamp of what it was built with and is skipped when nothing changed).
#
# Result, under $ARM_ENV (default ~/.cache/qsimd-aarch64):
#   root/        Debian bookworm's arm64 python3.11, its headers and libstdc++, unpacked by
#                mmdebstrap's "extract" variant (no package script runs, so nothing is
#                emulated while it is made)
#   site/        PyPI's aarch64 wheels of $ARM_PY_PKGS, installed by the host's pip
#   xsysconfig/  the arm64 interpreter's sysconfig data, for cross-building with a host
#                CPython 3.11
#   bin/arm64-python, bin/arm64-run   the aarch64 interpreter / any aarch64 program under
#                qemu-user (QEMU_CPU defaults to neoverse-n1: ASIMD, fp16, dotprod, no SVE)
#   env.sh       to source: PATH, ARM_PY_CPPFLAGS (the arm64 Python headers, which must come
#                before the host's), ARM_CROSS_ENV (environment of a host cross-build)
# Knobs: ARM_ENV, ARM_PY_PKGS, ARM_MIRROR / ARM_SECURITY_MIRROR (default: this host's apt
# sources).
set -euo pipefail

ARM_ENV=${ARM_ENV:-${XDG_CACHE_HOME:-$HOME/.cache}/qsimd-aarch64}
ARM_PY_PKGS=${ARM_PY_PKGS:-numpy pytest cython setuptools wheel pip}
SUITE=bookworm
PYV=3.11   # bookworm's python3
DEBS="python$PYV libpython$PYV-dev libstdc++6"
T0=$(date +%s)
say() { printf '[arm_env %3ss] %s\n' "$(( $(date +%s) - T0 ))" "$*" >&2; }
fail() { echo "arm_env.sh: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || fail "run as root (apt-get and mmdebstrap --mode=root)"
mkdir -p "$ARM_ENV/bin" "$ARM_ENV/logs"
logs=$ARM_ENV/logs

# 1. host tools
missing=()
command -v aarch64-linux-gnu-gcc >/dev/null || missing+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
command -v qemu-aarch64-static >/dev/null || missing+=(qemu-user-static)
command -v mmdebstrap >/dev/null || missing+=(mmdebstrap)
python3 -m pip --version >/dev/null 2>&1 || missing+=(python3-pip)
if [ ${#missing[@]} -gt 0 ]; then
    say "apt-get install ${missing[*]}"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends "${missing[@]}"; } >"$logs/apt.log" 2>&1 ||
        { tail -20 "$logs/apt.log" >&2; fail "apt-get failed"; }
fi

# stamp DIR TEXT: true when DIR was made with TEXT
stamp() { [ "$(cat "$1/.qsimd-stamp" 2>/dev/null)" = "$2" ]; }

# 2. the arm64 root: Debian packages unpacked from this host's mirrors
apt_uris() {
    grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | tr ' ' '\n' | grep '://' || true
    grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list | awk '{print $2}' || true
}
MIRROR=${ARM_MIRROR:-$(apt_uris | grep -m1 -E '/debian/?$' || true)}
SECURITY=${ARM_SECURITY_MIRROR:-$(apt_uris | grep -m1 -E '/debian-security/?$' || true)}
ROOT=$ARM_ENV/root
want="$SUITE $DEBS"
if ! stamp "$ROOT" "$want"; then
    [ -n "$MIRROR" ] || fail "no Debian mirror in the apt sources; set ARM_MIRROR"
    say "unpacking $DEBS (arm64, $SUITE)"
    rm -rf "$ROOT" "$ROOT.new"
    lists=("deb $MIRROR $SUITE main" "deb $MIRROR $SUITE-updates main")
    [ -z "$SECURITY" ] || lists+=("deb $SECURITY $SUITE-security main")
    mmdebstrap --mode=root --variant=extract --architectures=arm64 \
        --include="${DEBS// /,}" "$SUITE" "$ROOT.new" "${lists[@]}" >"$logs/mmdebstrap.log" 2>&1 ||
        { tail -20 "$logs/mmdebstrap.log" >&2; fail "mmdebstrap failed"; }
    mv "$ROOT.new" "$ROOT"
    echo "$want" >"$ROOT/.qsimd-stamp"
fi
[ -x "$ROOT/usr/bin/python$PYV" ] || fail "no python$PYV in $ROOT"

# 3. aarch64 wheels, installed by the host's pip for the arm64 interpreter
SITE=$ARM_ENV/site
want="cp${PYV/./} $ARM_PY_PKGS"
if ! stamp "$SITE" "$want"; then
    say "aarch64 wheels: $ARM_PY_PKGS"
    rm -rf "$SITE" "$SITE.new"
    # bookworm's glibc is 2.36: every manylinux tag up to it (this pip does not infer them)
    tags=(--platform manylinux2014_aarch64)
    for minor in $(seq 17 36); do tags+=(--platform "manylinux_2_${minor}_aarch64"); done
    # shellcheck disable=SC2086
    python3 -m pip install -q --disable-pip-version-check --no-warn-script-location \
        --target "$SITE.new" "${tags[@]}" --implementation cp --python-version "$PYV" \
        --abi "cp${PYV/./}" --only-binary=:all: $ARM_PY_PKGS >"$logs/pip.log" 2>&1 ||
        { grep -v '^WARNING' "$logs/pip.log" | tail -20 >&2; fail "pip failed"; }
    mv "$SITE.new" "$SITE"
    echo "$want" >"$SITE/.qsimd-stamp"
fi

# 4. wrappers, cross-build data and the environment file (cheap: always rewritten)
cat >"$ARM_ENV/bin/arm64-run" <<EOF
#!/bin/sh
# an aarch64 program (static, or dynamic against $ROOT's glibc) under qemu-user
QEMU_LD_PREFIX="$ROOT" QEMU_CPU="\${QEMU_CPU:-neoverse-n1}" exec qemu-aarch64-static "\$@"
EOF
cat >"$ARM_ENV/bin/arm64-python" <<EOF
#!/bin/sh
# Debian's aarch64 CPython $PYV under qemu-user, with the PyPI wheels of $SITE
unset PYTHONHOME
PYTHONPATH="$SITE\${PYTHONPATH:+:\$PYTHONPATH}" exec "$ARM_ENV/bin/arm64-run" "$ROOT/usr/bin/python$PYV" "\$@"
EOF
chmod +x "$ARM_ENV/bin/arm64-run" "$ARM_ENV/bin/arm64-python"
mkdir -p "$ARM_ENV/xsysconfig"
cp "$ROOT/usr/lib/python$PYV/_sysconfigdata__linux_aarch64-linux-gnu.py" "$ARM_ENV/xsysconfig/"
cat >"$ARM_ENV/env.sh" <<EOF
# . $ARM_ENV/env.sh
export ARM_ENV="$ARM_ENV" ARM_ROOTFS="$ROOT" ARM_SITE="$SITE" ARM_PYV="$PYV"
# setuptools under emulation would read the host's Python.h: the arm64 headers go first
export ARM_PY_CPPFLAGS="-I$ROOT/usr/include/python$PYV -idirafter $ROOT/usr/include"
# a host CPython $PYV building for aarch64: env \$ARM_CROSS_ENV python3 setup.py build_ext
export ARM_CROSS_ENV="_PYTHON_HOST_PLATFORM=linux-aarch64 _PYTHON_SYSCONFIGDATA_NAME=_sysconfigdata__linux_aarch64-linux-gnu PYTHONPATH=$ARM_ENV/xsysconfig"
case ":\$PATH:" in *":$ARM_ENV/bin:"*) ;; *) export PATH="$ARM_ENV/bin:\$PATH" ;; esac
EOF

# 5. bytecode ahead of time: compiling numpy's modules on every start under qemu costs seconds
if [ ! -e "$ARM_ENV/.pyc-done" ] || [ "$ARM_ENV/.pyc-done" -ot "$SITE/.qsimd-stamp" ] ||
        [ "$ARM_ENV/.pyc-done" -ot "$ROOT/.qsimd-stamp" ]; then
    if python3 -c "import sys; sys.exit(sys.version_info[:2] != (${PYV/./, }))" 2>/dev/null; then
        python3 -m compileall -q -j0 "$ROOT/usr/lib/python$PYV" "$SITE" >"$logs/pyc.log" 2>&1 || true
    else   # another host version writes other bytecode: the emulated interpreter does it
        env -u PYTHONDONTWRITEBYTECODE "$ARM_ENV/bin/arm64-python" -m compileall -q -j0 \
            "$ROOT/usr/lib/python$PYV" "$SITE" >"$logs/pyc.log" 2>&1 || true
    fi
    touch "$ARM_ENV/.pyc-done"
fi

# 6. it runs
got=$("$ARM_ENV/bin/arm64-python" -c 'import platform, numpy; print(platform.machine(), platform.python_version(), "numpy", numpy.__version__)') ||
    fail "the aarch64 interpreter does not start"
say "ready: $got ($ARM_ENV)"
