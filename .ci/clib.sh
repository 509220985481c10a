# Sourced by the CI scripts: build_qsimd_lib "CC FLAGS..." OUTDIR [SRCROOT] compiles the C
# core and this architecture's kernel files (each with its own ISA flags, from
# csrc/sources.txt as setup.py and CMake) into OUTDIR/libqsimd.a, and sets QSIMD_LIB_DEFS to
# the macros the kernel set needs. Sanitized builds may pass, for the kernel files only,
# QSIMD_LIB_KERNEL_FLAGS (e.g. -g0: debug info makes the -O0 kernel files ~35 % slower to
# compile) and QSIMD_LIB_PLAIN, comma-separated groups left uninstrumented (qsimd_unrunnable
# below: the tiers this CPU cannot run).
#
# qsimd_sources SRCROOT GROUP...: "FILE FLAGS..." lines of csrc/sources.txt (the list that
# CMake and setup.py read too) for the groups asked for.
qsimd_sources() {
    local src=$1; shift
    local groups=" $* "
    while read -r group rest; do
        case "$group" in ''|'#'*) continue ;; esac
        case "$groups" in *" $group "*) echo "$rest" ;; esac
    done < "$src/csrc/sources.txt"
}

# Kernel groups (csrc/sources.txt) this CPU cannot run, comma-separated: sanitized builds
# leave them uninstrumented (QSIMD_UNSANITIZED for setup.py, QSIMD_LIB_PLAIN for clib.sh), as
# instrumenting code that never runs here costs minutes and checks nothing.
qsimd_unrunnable() {
    local flags out=() tier f g
    [ "$(uname -m)" = x86_64 ] && [ -r /proc/cpuinfo ] || return 0
    flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
    # group:the CPU flags its kernels need (as cpu.c checks them)
    for tier in "sse41:sse4_1" "avx2:avx2 fma f16c" "avx512:avx512f avx512bw avx512dq avx512vl"; do
        for f in ${tier#*:}; do
            case "$flags" in *" $f "*) ;; *) out+=("${tier%%:*}"); break ;; esac
        done
    done
    g="${out[*]}"; echo "${g// /,}"
}

build_qsimd_lib() {
    local cc=$1 out=$2 src=${3:-.} objs=() files=() f flags o line
    local groups=core
    QSIMD_LIB_DEFS=""
    case "$(uname -m)" in
        x86_64|amd64)
            if [ -f "$src/csrc/kernels/avx2.c" ]; then
                groups="core sse41 avx2 avx512"
                QSIMD_LIB_DEFS="-DQSIMD_HAVE_X86=1"
            fi ;;
        aarch64|arm64)
            if [ -f "$src/csrc/kernels/neon.c" ]; then
                groups="core neon"
                QSIMD_LIB_DEFS="-DQSIMD_HAVE_NEON=1"
            fi ;;
    esac
    local g extra
    for g in $groups; do
        extra=""
        [ "$g" = core ] || extra=${QSIMD_LIB_KERNEL_FLAGS:-}
        case ",${QSIMD_LIB_PLAIN:-}," in *",$g,"*) extra="$extra -fno-sanitize=all" ;; esac
        while read -r line; do files+=("$line${extra:+ $extra}"); done < <(qsimd_sources "$src" "$g")
    done
    mkdir -p "$out"
    local pids=() p rc=0
    for line in "${files[@]}"; do
        f=${line%% *}
        flags=""
        [ "$f" = "$line" ] || flags=${line#* }
        o="$out/$(echo "$f" | tr / _).o"
        # all files at once (the kernel files are slow to compile with sanitizers)
        # shellcheck disable=SC2086
        $cc -std=c99 -ffp-contract=off -fno-strict-aliasing -Wall -Wextra -Werror $flags \
            $QSIMD_LIB_DEFS -D_GNU_SOURCE -I"$src/csrc/include" -I"$src/csrc" \
            -c "$src/csrc/$f" -o "$o" &
        pids+=($!)
        objs+=("$o")
    done
    for p in "${pids[@]}"; do wait "$p" || rc=1; done
    [ "$rc" = 0 ] || return 1
    rm -f "$out/libqsimd.a"
    ar rcs "$out/libqsimd.a" "${objs[@]}"
}
