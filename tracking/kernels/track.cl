/* track.cl - the search over orders of gamma-ray tracking (tusk/track_cl.h,
 * tracking/README.md). One work-group a cluster of 2..8 points; its
 * work-items take the permutation ranks lid, lid + WG, ..., decode each
 * (factorial number system: lexicographic order), compute the order's
 * figure of merit exactly as tracker.c does (in float), keep their lowest
 * (the lowest rank among equals, as ranks rise), then the group reduces to
 * the lowest FoM, the lowest rank on ties. NaN never wins.
 *
 * Constants from the host: TRK_WG (work-items a group, a power of two),
 * TRK_TABLE_N (entries per attenuation table), TRK_MEC2 (keV),
 * TRK_EPS_MM2. */

#define MAXP 8
#define NO_RANK 0xFFFFFFFFu

/* ln mu (1/mm) of the three tables at energy e, linear in ln E, clamped. */
static void lookup(__global const float *table, float ln_e0, float inv_step, float e, float *lt, float *lc,
                   float *lp)
{
    float x = (log(e) - ln_e0) * inv_step;
    if (!(x > 0.0f))
        x = 0.0f;
    if (x > (float)(TRK_TABLE_N - 1))
        x = (float)(TRK_TABLE_N - 1);
    int i = (int)x;
    if (i > TRK_TABLE_N - 2)
        i = TRK_TABLE_N - 2;
    float f = x - (float)i;
    *lt = table[i] + f * (table[i + 1] - table[i]);
    *lc = table[TRK_TABLE_N + i] + f * (table[TRK_TABLE_N + i + 1] - table[TRK_TABLE_N + i]);
    *lp = table[2 * TRK_TABLE_N + i] + f * (table[2 * TRK_TABLE_N + i + 1] - table[2 * TRK_TABLE_N + i]);
}

static uint factorial(uint n)
{
    uint f = 1;
    for (uint i = 2; i <= n; i++)
        f *= i;
    return f;
}

__kernel __attribute__((reqd_work_group_size(TRK_WG, 1, 1))) void
track_orders(__global const float4 *pts, __global const uint *count, __global const float *table,
             __global uint2 *out, const float inner, const float w0, const float w1, const float ln_e0,
             const float inv_step)
{
    const uint c = get_group_id(0);
    const uint lid = get_local_id(0);
    __local float lf[TRK_WG];
    __local uint lr[TRK_WG];

    const uint n = min(count[c], (uint)MAXP);
    float4 p[MAXP];
    float s2[MAXP], depth[MAXP];
    float e0 = 0.0f;
    for (uint i = 0; i < n; i++) {
        p[i] = pts[c * MAXP + i];
        e0 += p[i].w;
        float s = w0 + w1 * sqrt(100.0f / p[i].w);
        s2[i] = s * s;
        float r = length(p[i].xyz);
        depth[i] = r > inner ? r - inner : 0.0f;
    }
    const uint nf = factorial(n);
    float best = INFINITY;
    uint best_rank = NO_RANK;
    for (uint rank = lid; rank < nf; rank += TRK_WG) {
        /* the order of this rank */
        uint perm[MAXP], avail[MAXP];
        for (uint i = 0; i < n; i++)
            avail[i] = i;
        uint r = rank, f = nf;
        for (uint i = 0; i < n; i++) {
            f /= (n - i);
            uint d = r / f;
            r -= d * f;
            perm[i] = avail[d];
            for (uint j = d; j + 1 < n - i; j++)
                avail[j] = avail[j + 1];
        }
        /* its figure of merit: tracker.c's fom_of */
        float L = 0.0f, e = e0, e_prev = 0.0f;
        for (uint k = 0; k < n; k++) {
            uint i = perm[k];
            float lt, lc, lp;
            lookup(table, ln_e0, inv_step, e, &lt, &lc, &lp);
            float d = k == 0 ? depth[i] : distance(p[perm[k - 1]].xyz, p[i].xyz);
            L += exp(lt) * d + (lt - (k == n - 1 ? lp : lc));
            if (k >= 1) {
                uint v = perm[k - 1];
                float3 A = k >= 2 ? p[v].xyz - p[perm[k - 2]].xyz : p[v].xyz;
                float3 B = p[i].xyz - p[v].xyz;
                float theta_p = atan2(length(cross(A, B)), dot(A, B));
                float cs = 1.0f - TRK_MEC2 * (1.0f / e - 1.0f / e_prev);
                float excess = 0.0f;
                if (cs < -1.0f) {
                    excess = -1.0f - cs;
                    cs = -1.0f;
                } else if (cs > 1.0f) {
                    excess = cs - 1.0f;
                    cs = 1.0f;
                }
                float theta_e = acos(cs);
                float a2 = dot(A, A) + TRK_EPS_MM2, b2 = dot(B, B) + TRK_EPS_MM2;
                float var = ((k >= 2 ? s2[perm[k - 2]] : 0.0f) + s2[v]) / a2 + (s2[v] + s2[i]) / b2;
                float dt = theta_p - theta_e;
                L += 0.5f * (dt * dt + excess * excess) / var;
            }
            e_prev = e;
            e -= p[i].w;
        }
        float fom = L / (float)(2 * n - 1);
        if (fom < best) { /* NaN never */
            best = fom;
            best_rank = rank;
        }
    }
    lf[lid] = best;
    lr[lid] = best_rank;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = TRK_WG / 2; s > 0; s >>= 1) {
        if (lid < s) {
            float fo = lf[lid + s];
            uint ro = lr[lid + s];
            if (fo < lf[lid] || (fo == lf[lid] && ro < lr[lid])) {
                lf[lid] = fo;
                lr[lid] = ro;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        out[c] = (uint2)(lr[0] == NO_RANK ? 0u : lr[0], as_uint(lf[0]));
}
