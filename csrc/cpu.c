/* Run-time CPU feature detection. Only what the kernels need, asked of the CPU and the OS:
 * an instruction set counts only when the OS also saves the registers it uses. */
#include "qsimd.h"
#include "cpu.h"

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__) || defined(_M_IX86)
#define QSIMD_CPU_X86 1
#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
static void cpuid(unsigned leaf, unsigned sub, unsigned r[4])
{
    int v[4];
    __cpuidex(v, (int)leaf, (int)sub);
    r[0] = (unsigned)v[0]; r[1] = (unsigned)v[1]; r[2] = (unsigned)v[2]; r[3] = (unsigned)v[3];
}
static unsigned long long xgetbv0(void) { return _xgetbv(0); }
#else
#include <cpuid.h>
static void cpuid(unsigned leaf, unsigned sub, unsigned r[4])
{
    __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
}
static unsigned long long xgetbv0(void)
{
    unsigned lo, hi;
    /* raw opcode of xgetbv: works without -mxsave on every gcc/clang */
    __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((unsigned long long)hi << 32) | lo;
}
#endif

static unsigned detect(void)
{
    unsigned r[4], f = 0, max_leaf;
    cpuid(0, 0, r);
    max_leaf = r[0];
    if (max_leaf < 1) return 0;
    cpuid(1, 0, r);
    if (r[2] & (1u << 19)) f |= QSIMD_CPU_SSE41;
    if (r[2] & (1u << 12)) f |= QSIMD_CPU_FMA;
    if (r[2] & (1u << 29)) f |= QSIMD_CPU_F16C;
    int osxsave = (r[2] & (1u << 27)) != 0, avx = (r[2] & (1u << 28)) != 0;
    unsigned long long xcr0 = osxsave ? xgetbv0() : 0;
    if (avx && (xcr0 & 0x6) == 0x6) f |= QSIMD_CPU_OS_AVX;            /* XMM + YMM */
    if ((xcr0 & 0xe6) == 0xe6) f |= QSIMD_CPU_OS_AVX512;              /* + opmask, ZMM */
    if (!(f & QSIMD_CPU_OS_AVX)) f &= ~(unsigned)(QSIMD_CPU_FMA | QSIMD_CPU_F16C);
    if (max_leaf >= 7) {
        cpuid(7, 0, r);
        if ((r[1] & (1u << 5)) && (f & QSIMD_CPU_OS_AVX)) f |= QSIMD_CPU_AVX2;
        if (f & QSIMD_CPU_OS_AVX512) {
            if (r[1] & (1u << 16)) f |= QSIMD_CPU_AVX512F;
            if (r[1] & (1u << 17)) f |= QSIMD_CPU_AVX512DQ;
            if (r[1] & (1u << 30)) f |= QSIMD_CPU_AVX512BW;
            if (r[1] & (1u << 31)) f |= QSIMD_CPU_AVX512VL;
        }
    }
    return f;
}

#elif defined(__aarch64__) || defined(_M_ARM64)
#define QSIMD_CPU_ARM64 1
#if defined(__linux__) || defined(__ANDROID__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1 << 1)
#endif
#ifndef HWCAP_ASIMDHP
#define HWCAP_ASIMDHP (1 << 10)
#endif
static unsigned detect(void)
{
    /* /proc/cpuinfo is not trustworthy under emulation; the auxiliary vector is */
    unsigned long hw = getauxval(AT_HWCAP);
    unsigned f = QSIMD_CPU_NEON;   /* Advanced SIMD is mandatory on AArch64 */
    if ((hw & HWCAP_ASIMD) && (hw & HWCAP_ASIMDHP)) f |= QSIMD_CPU_FP16;
    return f;
}
#elif defined(__APPLE__)
#include <sys/sysctl.h>
static unsigned detect(void)
{
    unsigned f = QSIMD_CPU_NEON;
    int v = 0;
    size_t len = sizeof v;
    if (sysctlbyname("hw.optional.arm.FEAT_FP16", &v, &len, NULL, 0) == 0 && v) f |= QSIMD_CPU_FP16;
    return f;
}
#elif defined(_WIN32)
#include <windows.h>
static unsigned detect(void)
{
    unsigned f = QSIMD_CPU_NEON;
#ifdef PF_ARM_V82_DP_INSTRUCTIONS_AVAILABLE
    /* Windows exposes no FP16 flag; dot-product CPUs (ARMv8.2+) all implement FP16 */
    if (IsProcessorFeaturePresent(PF_ARM_V82_DP_INSTRUCTIONS_AVAILABLE)) f |= QSIMD_CPU_FP16;
#endif
    return f;
}
#else
static unsigned detect(void) { return QSIMD_CPU_NEON; }
#endif

#else
static unsigned detect(void) { return 0; }
#endif

unsigned qsimd_cpu_features(void)
{
    /* idempotent: a race only repeats the detection and stores the same word */
    static unsigned cached = 0;   /* bit 31: valid */
    unsigned v = QSIMD_LOAD_U32(cached);
    if (v & 0x80000000u) return v & 0x7fffffffu;
    v = detect();
    QSIMD_STORE_U32(cached, v | 0x80000000u);
    return v;
}
