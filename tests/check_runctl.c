/* check_runctl.c - the pure parts of run control (distributed/runctl.h):
 *
 *  - the queue column's estimate: exact when the counts stand still, never
 *    negative, never beyond the true queue when the sender's count is
 *    taken at the receiver's moment (random steady flows: the sender's
 *    reports at other moments than the receiver's, the true queue
 *    bounded as a socket pair bounds it), where the difference of the
 *    latest counts alone (the old column) is off by the rate times the
 *    reports' skew;
 *  - set's argument: ACTOR.PARAM=VALUE and ACTOR[K].PARAM=VALUE, and the
 *    malformed ones refused with a message naming what is wrong.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "runctl.h"
#include "testutil.h"

static tusk_count_sample_t sample(uint64_t at, uint64_t count)
{
    return (tusk_count_sample_t){true, at, count};
}

START_TEST(queue_still)
{
    /* A stalled link: the counts stand still, the figure is exact. */
    tusk_count_sample_t b = sample(1000, 40), l = sample(1500, 40), r = sample(1200, 32);
    ck_assert_uint_eq(tusk_queue_estimate(&b, &l, &r), 8);
    r = sample(1700, 32); /* the receiver reported later */
    ck_assert_uint_eq(tusk_queue_estimate(&b, &l, &r), 8);
    r = sample(900, 32); /* earlier */
    ck_assert_uint_eq(tusk_queue_estimate(&b, &l, &r), 8);
    /* No report from one side: nothing to say. */
    tusk_count_sample_t none = {0};
    ck_assert_uint_eq(tusk_queue_estimate(&b, &none, &r), 0);
    ck_assert_uint_eq(tusk_queue_estimate(&b, &l, &none), 0);
    /* Only one report of the sender's: its count. */
    r = sample(1200, 30);
    ck_assert_uint_eq(tusk_queue_estimate(&none, &l, &r), 10);
    ck_assert_uint_eq(tusk_queue_estimate(NULL, &l, &r), 10);
    /* Never negative (the receiver's count is newer than the sender's). */
    r = sample(1700, 55);
    ck_assert_uint_eq(tusk_queue_estimate(&b, &l, &r), 0);
}
END_TEST

START_TEST(queue_flowing)
{
    /* Steady flows: sent(t) = rate * t, received(t) = sent(t) - q, q the
     * true queue (at most 2 * hwm + what the pipe holds). The sender and
     * the receiver report every period, at moments of their own. */
    uint64_t seed = tu_seed();
    double worst_old = 0;
    for (int i = 0; i < 2000; i++) {
        double rate = 1 + tu_below(200000) / 1000.0; /* buffers per ms */
        uint64_t q = tu_below(40), period = 100 + tu_below(900);
        uint64_t t_send = 10000 + tu_below(100000), t_recv = t_send - period + tu_below((uint32_t)(2 * period));
        uint64_t t_before = t_send - period;
        uint64_t recv_at = (uint64_t)(rate * (double)t_recv);
        tusk_count_sample_t b = sample(t_before, (uint64_t)(rate * (double)t_before)),
                            l = sample(t_send, (uint64_t)(rate * (double)t_send)),
                            r = sample(t_recv, recv_at - q);
        uint64_t est = tusk_queue_estimate(&b, &l, &r);
        if (t_recv >= t_before && t_recv <= t_send) {
            /* Between the sender's reports: the true queue, to rounding. */
            ck_assert_msg(est + 2 >= q && est <= q + 2,
                          "seed %llu: rate %.3f/ms, queue %llu, estimate %llu (reports at %llu, %llu; receiver's at %llu)",
                          (unsigned long long)seed, rate, (unsigned long long)q, (unsigned long long)est,
                          (unsigned long long)t_before, (unsigned long long)t_send, (unsigned long long)t_recv);
        } else {
            /* After the sender's last report: at most the true queue. */
            ck_assert_msg(est <= q + 2, "seed %llu: queue %llu, estimate %llu beyond it", (unsigned long long)seed,
                          (unsigned long long)q, (unsigned long long)est);
        }
        double old = (double)l.count - (double)r.count;
        if (old - (double)q > worst_old)
            worst_old = old - (double)q;
    }
    /* The old column (latest counts alone) was off by far more than any
     * hwm: what made it show tens of thousands on an hwm of 8. */
    ck_assert_msg(worst_old > 1000, "seed %llu: the old figure was never far off (%.0f)?", (unsigned long long)seed,
                  worst_old);
}
END_TEST

START_TEST(set_arguments)
{
    tusk_set_arg_t a;
    tusk_error_t err;
    ck_assert_int_eq(tusk_set_arg_parse("copy.tag=B", &a, &err), TUSK_OK);
    ck_assert_str_eq(a.actor, "copy");
    ck_assert_int_eq(a.instance, -1);
    ck_assert_str_eq(a.key, "tag");
    ck_assert_str_eq(a.value, "B");
    ck_assert_int_eq(tusk_set_arg_parse("copy[2].threshold=1.5=x", &a, &err), TUSK_OK);
    ck_assert_str_eq(a.actor, "copy");
    ck_assert_int_eq(a.instance, 2);
    ck_assert_str_eq(a.key, "threshold");
    ck_assert_str_eq(a.value, "1.5=x");
    ck_assert_int_eq(tusk_set_arg_parse("copy.tag=", &a, &err), TUSK_OK); /* an empty value is a value */
    ck_assert_str_eq(a.value, "");
    static const struct {
        const char *text, *says;
    } bad[] = {{"copy", "give ACTOR.PARAM=VALUE"},
               {"copytag=B", "no '.' before the '='"},
               {".tag=B", "empty"},
               {"copy.=B", "empty"},
               {"copy[x].tag=B", "no instance number"},
               {"copy[].tag=B", "ACTOR[K]"},
               {"copy[1]tag=B", "a '.' and the parameter follow"},
               {"copy.tag=a\nb", "one line"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(tusk_set_arg_parse(bad[i].text, &a, &err), TUSK_EINVAL);
        ck_assert_msg(strstr(err.message, bad[i].says), "'%s': %s", bad[i].text, err.message);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("runctl");
    TCase *tc = tcase_create("queue");
    tcase_add_test(tc, queue_still);
    tcase_add_test(tc, queue_flowing);
    suite_add_tcase(s, tc);
    tc = tcase_create("set");
    tcase_add_test(tc, set_arguments);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
