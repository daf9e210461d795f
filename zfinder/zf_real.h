/* zf_real.h - the z-finder's formulas in one precision (internal; read
 * after zf_shared.h by the host and by the kernel).
 *
 * Define ZF_DOUBLE as 0 (float) or 1 (double) before reading it; it
 * defines ZF_R, the arithmetic type, and ZF_FN(name), the name with the
 * precision's suffix (name_f, name_d). The host reads it once per
 * precision (zf_ref_float.c, zf_ref_double.c); the kernel is built with
 * -DZF_DOUBLE=0 or 1. No include guard, on purpose.
 *
 * The inputs are the frames' floats, converted to ZF_R; every expression
 * below is evaluated the same way on both sides (see zf_shared.h). */

#undef ZF_R
#undef ZF_FN
#undef ZF_FN_
#undef ZF_DIV
#undef ZF_ABS
#if ZF_DOUBLE
#define ZF_R double
#define ZF_FN_(name, suffix) name##suffix
#define ZF_FN(name) ZF_FN_(name, _d)
#define ZF_DIV(a, b) ((a) / (b))
#else
#define ZF_R float
#define ZF_FN_(name, suffix) name##suffix
#define ZF_FN(name) ZF_FN_(name, _f)
/* A device whose float division is not correctly rounded divides in
 * double: the double quotient of two floats rounds to the correctly
 * rounded float quotient (53 >= 2 * 24 + 2 bits). */
#if defined(__OPENCL_VERSION__) && defined(ZF_DIV_VIA_DOUBLE) && ZF_DIV_VIA_DOUBLE
#define ZF_DIV(a, b) ((float)((double)(a) / (double)(b)))
#else
#define ZF_DIV(a, b) ((a) / (b))
#endif
#endif
/* |x| without a library call (NaN stays NaN, so every test with it fails). */
#define ZF_ABS(x) ((x) < (ZF_R)0 ? -(x) : (x))

/* z_V: where the straight line through (rho1, z1) and (rho2, z2) meets the
 * beam line (rho = 0): (z2 rho1 - z1 rho2) / (rho1 - rho2) [seed §3]. */
TUSK_FN ZF_R ZF_FN(zf_intercept)(ZF_R rho1, ZF_R z1, ZF_R rho2, ZF_R z2)
{
    ZF_R num = z2 * rho1 - z1 * rho2;
    ZF_R den = rho1 - rho2;
    return ZF_DIV(num, den);
}

/* The histogram bin of z_V: floor((z_V - z_min) / width), computed as
 * t = (z_V - z_min) * inv_width; -1 when z_V lies outside [z_min, z_min +
 * n_bins * width) or is not a number (dropped, spec §2.3 step 5). */
TUSK_FN tusk_i32 ZF_FN(zf_bin)(ZF_R zv, ZF_R z_min, ZF_R inv_width, ZF_R n_bins)
{
    ZF_R t = (zv - z_min) * inv_width;
    if (!(t >= (ZF_R)0 && t < n_bins))
        return -1;
    return (tusk_i32)t;
}

/* zHisto's q of z_V in its bin b = zf_bin(z_V, ...) >= 0: its place in
 * the bin in fixed point, ZF_ZQ(t - b) with the same t (zf_shared.h;
 * t - b is exact). */
TUSK_FN tusk_u32 ZF_FN(zf_bin_q)(ZF_R zv, ZF_R z_min, ZF_R inv_width, tusk_i32 bin)
{
    ZF_R t = (zv - z_min) * inv_width;
    return ZF_ZQ(t - (ZF_R)bin);
}

/* Triplet mode 1 (seed §3.1; the test is tusk's, spec §2.3 step 4): does
 * the point p3 = (rho3, phi3, z3) of a higher layer lie on the straight
 * line through the pair p1, p2 in rho-z and in rho-phi, within tol_z (mm)
 * and tol_phi (rad) at its radius? Division-free: with d12 = rho2 - rho1,
 *   |(z3 - z1) d12 - (z2 - z1)(rho3 - rho1)| <= tol_z d12
 * and the same in phi (phi is linear in rho along a stiff track). */
TUSK_FN int ZF_FN(zf_triplet_ok)(ZF_R rho1, ZF_R phi1, ZF_R z1, ZF_R rho2, ZF_R phi2, ZF_R z2, ZF_R rho3, ZF_R phi3,
                                   ZF_R z3, ZF_R tol_z, ZF_R tol_phi)
{
    ZF_R d12 = rho2 - rho1;
    ZF_R d13 = rho3 - rho1;
    ZF_R ez = (z3 - z1) * d12 - (z2 - z1) * d13;
    ZF_R ephi = (phi3 - phi1) * d12 - (phi2 - phi1) * d13;
    return ZF_ABS(ez) <= tol_z * d12 && ZF_ABS(ephi) <= tol_phi * d12;
}

/* z0 of a peak window: the zHisto sum of its three bins over their
 * nHisto sum [seed §3.2], from the fixed-point sums (zf_shared.h): bin is
 * the window's first bin, sum its zf_window_sum (quanta above the bin's
 * lower edge), count > 0 its entries. z0 = the window's lower edge + the
 * mean offset sum / count quanta of width 2^-ZF_ZQ_BITS. */
TUSK_FN ZF_R ZF_FN(zf_window_z)(tusk_u32 bin, tusk_u64 sum, tusk_u32 count, ZF_R z_min, ZF_R width)
{
    ZF_R low = z_min + (ZF_R)bin * width;
    ZF_R off = ZF_DIV((ZF_R)sum, (ZF_R)count) * (ZF_R)ZF_ZQ_QUANTUM;
    return low + off * width;
}
