/* memprof train's driver: model, trainer, data set (files, or a synthetic task a fixed teacher
 * labels), the training loop with its timing, the trained model and the trace written. */
#include "cli/train_driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/summary.h"
#include "cli/bench_stats.h"
#include "cli/cli.h"
#include "trace/files.h"

typedef struct dataset {
    int64_t n;          /* samples */
    float **in;         /* per input: n x its per-sample elements */
    size_t *in_per;     /* per-sample elements of each input */
    float *labels;      /* n x label_per */
    size_t label_per;
    int n_inputs;
} dataset;

static void dataset_free(dataset *d)
{
    for (int i = 0; d->in && i < d->n_inputs; i++)
        free(d->in[i]);
    free(d->in);
    free(d->in_per);
    free(d->labels);
}

static uint32_t xs32(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* Copy batch `k` of the data set into the trainer. */
static void load_batch(mp_trainer *t, const dataset *d, int64_t k, int64_t batch)
{
    size_t n;
    for (int i = 0; i < d->n_inputs; i++) {
        float *dst = mp_trainer_input(t, i, &n);
        memcpy(dst, d->in[i] + (size_t)(k * batch) * d->in_per[i], n * sizeof(float));
    }
    float *lab = mp_trainer_labels(t, &n);
    memcpy(lab, d->labels + (size_t)(k * batch) * d->label_per, n * sizeof(float));
}

/* A whole file of floats. */
static mp_status read_floats(const char *path, float **out, size_t *n, mp_error *err)
{
    FILE *f;
    mp_status st = mp_file_in_open(path, &f, err);
    if (st != MP_OK)
        return st;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            char *nb = cap < ((size_t)1 << 34) ? realloc(buf, cap * 2) : NULL;
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    bool bad = ferror(f);
    fclose(f);
    if (!buf)
        return mp_fail(err, MP_ERR_NOMEM, "%s: out of memory reading it", path);
    if (bad) {
        free(buf);
        return mp_fail(err, MP_ERR_IO, "%s: read error", path);
    }
    if (len % sizeof(float)) {
        free(buf);
        return mp_fail(err, MP_ERR_FORMAT, "%s: %zu bytes is not a whole number of float32 "
                       "values", path, len);
    }
    *out = (float *)buf;
    *n = len / sizeof(float);
    return MP_OK;
}

static int find_input(const mp_model *m, const char *name, size_t len)
{
    for (int i = 0; i < m->n_inputs; i++) {
        const char *nm = m->tensors[m->inputs[i]].name;
        if (strlen(nm) == len && strncmp(nm, name, len) == 0)
            return i;
    }
    if (len > 0 && len < 4 && strspn(name, "0123456789") >= len) {
        int i = atoi(name);
        return i < m->n_inputs ? i : -1;
    }
    return -1;
}

static mp_status files_dataset(const mp_train_args *a, mp_trainer *t, const mp_model *m,
                               dataset *d, mp_error *err)
{
    if (a->n_inputs != m->n_inputs || !a->labels)
        return mp_fail(err, MP_ERR_ARG, "--input is needed for each of the model's %d inputs, "
                       "with --labels", m->n_inputs);
    for (int k = 0; k < a->n_inputs; k++) {
        const char *eq = strchr(a->inputs[k], '=');
        int i = eq ? find_input(m, a->inputs[k], (size_t)(eq - a->inputs[k])) : -1;
        if (i < 0)
            return mp_fail(err, MP_ERR_ARG, "--input %s: no such input (NAME=FILE)", a->inputs[k]);
        size_t n;
        mp_status st = read_floats(eq + 1, &d->in[i], &n, err);
        if (st != MP_OK)
            return st;
        if (n % d->in_per[i] || (k > 0 && (int64_t)(n / d->in_per[i]) != d->n))
            return mp_fail(err, MP_ERR_SHAPE, "%s: %zu floats is not a whole number of samples "
                           "of %zu (or differs from the other inputs)", eq + 1, n, d->in_per[i]);
        d->n = (int64_t)(n / d->in_per[i]);
    }
    size_t n;
    mp_status st = read_floats(a->labels, &d->labels, &n, err);
    if (st != MP_OK)
        return st;
    if ((int64_t)(n / d->label_per) != d->n || n % d->label_per)
        return mp_fail(err, MP_ERR_SHAPE, "%s: %zu floats, expected %lld samples of %zu labels",
                       a->labels, n, (long long)d->n, d->label_per);
    (void)t;
    return MP_OK;
}

/* Inputs uniform in [-1, 1); labels: the output of the model with its last trainable weighted
 * operator's weights replaced by fixed pseudo-random ones (one-hot of its largest class for
 * cross-entropy), so that training can learn them. */
static mp_status synthetic_dataset(const mp_train_args *a, int loss, mp_trainer *t, dataset *d,
                                   mp_error *err)
{
    d->n = a->samples > 0 ? a->samples : 4 * a->batch;
    uint32_t s = 17;
    for (int i = 0; i < d->n_inputs; i++) {
        d->in[i] = malloc((size_t)d->n * d->in_per[i] * sizeof(float));
        if (!d->in[i])
            return mp_fail(err, MP_ERR_NOMEM, "out of memory for the synthetic inputs");
        for (size_t k = 0; k < (size_t)d->n * d->in_per[i]; k++)
            d->in[i][k] = (float)(xs32(&s) >> 8) / 8388608.0f - 1.0f;
    }
    d->labels = calloc((size_t)d->n * d->label_per, sizeof(float));
    if (!d->labels)
        return mp_fail(err, MP_ERR_NOMEM, "out of memory for the synthetic labels");
    bool teacher = mp_trainer_perturb_last(t, 7);
    for (int64_t k = 0; k < d->n / a->batch; k++) {
        load_batch(t, d, k, a->batch);
        mp_status st = mp_trainer_eval(t, NULL, err);
        if (st != MP_OK)
            return st;
        size_t n;
        const float *y = mp_trainer_output(t, &n);
        float *lab = d->labels + (size_t)(k * a->batch) * d->label_per;
        for (int64_t r = 0; r < a->batch; r++) {
            const float *yr = y + (size_t)r * d->label_per;
            float *lr = lab + (size_t)r * d->label_per;
            if (loss == MP_LOSS_CCE) {
                size_t best = 0;
                for (size_t j = 1; j < d->label_per; j++)
                    best = yr[j] > yr[best] ? j : best;
                lr[best] = 1.0f;
            } else {
                memcpy(lr, yr, d->label_per * sizeof(float));
            }
        }
    }
    if (teacher)
        mp_trainer_restore_weights(t);
    return MP_OK;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static double median(double *v, int64_t n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static mp_status train(const mp_train_args *a, mp_trainer *t, const dataset *d, mp_train_run *r,
                       mp_error *err)
{
    int64_t per_epoch = d->n / a->batch;
    int64_t total = a->steps > 0 ? a->steps : a->epochs * per_epoch;
    int64_t epochs = (total + per_epoch - 1) / per_epoch;
    double *times = malloc(((size_t)total + 1) * sizeof *times);
    double *fwd = malloc(4 * sizeof *fwd);
    r->epoch_loss = calloc((size_t)epochs + 1, sizeof *r->epoch_loss);
    if (!times || !fwd || !r->epoch_loss) {
        free(times), free(fwd);
        return mp_fail(err, MP_ERR_NOMEM, "out of memory");
    }
    mp_status st = MP_OK;
    load_batch(t, d, 0, a->batch);
    for (int k = 0; k < 3 && st == MP_OK; k++) {
        uint64_t t0 = mp_now_ns();
        st = mp_trainer_eval(t, &r->loss_before, err);
        fwd[k] = (double)(mp_now_ns() - t0) / 1e6;
    }
    r->forward_ms = median(fwd, 3);
    int64_t in_epoch = 0;
    double sum = 0;
    if (a->progress)
        a->progress->total = (long)total;
    for (int64_t s = 0; s < total && st == MP_OK; s++) {
        load_batch(t, d, s % per_epoch, a->batch);
        double L;
        uint64_t t0 = mp_now_ns();
        st = mp_trainer_step(t, &L, err);
        times[s] = (double)(mp_now_ns() - t0) / 1e6;
        r->steps_done++;
        sum += L;
        if (a->progress)
            mp_progress_step(a->progress, (long)(s + 1), "train: epoch %lld of %lld, step %lld, "
                             "loss %.4g", (long long)(s / per_epoch + 1), (long long)epochs,
                             (long long)(s + 1), sum / (double)(in_epoch + 1));
        if (++in_epoch == per_epoch || s + 1 == total) {
            r->epoch_loss[r->n_epoch_loss++] = sum / (double)in_epoch;
            in_epoch = 0;
            sum = 0;
        }
    }
    r->epochs_done = r->n_epoch_loss;
    r->step_ms = median(times, r->steps_done);
    if (st == MP_OK) {
        load_batch(t, d, 0, a->batch);
        st = mp_trainer_eval(t, &r->loss_after, err);
    }
    free(times);
    free(fwd);
    return st;
}

mp_status mp_train_drive(const mp_train_args *a, mp_train_run *r, mp_error *err)
{
    memset(r, 0, sizeof *r);
    mp_model *m = NULL;
    mp_trainer *t = NULL;
    mp_trace *tr = NULL;
    dataset d = {0};
    mp_status st = mp_model_open(a->model, &m, err);
    if (st != MP_OK)
        return st;
    /* always recorded: the categories' measured peaks are read from the trace (a planned
     * arena's slots count as their categories while their steps run, analyzers/replay.h) */
    if (!(tr = mp_trace_create())) {
        mp_model_free(m);
        return mp_fail(err, MP_ERR_NOMEM, "out of memory");
    }
    int loss = a->loss;
    if (loss < 0) { /* cross-entropy when the model ends in SOFTMAX, else squared error */
        loss = MP_LOSS_MSE;
        for (int32_t i = 0; i < m->n_ops; i++)
            if (m->ops[i].n_outputs == 1 && m->n_outputs == 1 &&
                m->ops[i].outputs[0] == m->outputs[0] && m->ops[i].opcode == MP_OP_SOFTMAX)
                loss = MP_LOSS_CCE;
    }
    r->loss = loss;
    mp_train_options o = {
        .batch = (int)a->batch, .trainable_ops = (int)a->trainable_ops,
        .loss = (mp_loss_kind)loss, .optimizer = (mp_optim_kind)a->optimizer,
        .learning_rate = (float)(a->learning_rate >= 0 ? a->learning_rate
                                 : a->optimizer == MP_OPTIM_ADAM ? 0.001 : 0.01),
        .policy = (mp_train_policy)a->policy, .planner = a->planner,
        .threads = (int)a->threads, .trace = tr};
    st = mp_trainer_create(m, a->model, &o, &t, err);
    if (st == MP_OK)
        st = mp_trainer_memory(t, &r->mem, err);
    if (st == MP_OK && r->mem.lower_bound_step >= 0)
        mp_trainer_step_name(t, r->mem.lower_bound_step, r->lb_step, sizeof r->lb_step);
    if (st == MP_OK && !a->memory_only) {
        d.n_inputs = m->n_inputs;
        d.in = calloc((size_t)m->n_inputs + 1, sizeof *d.in);
        d.in_per = calloc((size_t)m->n_inputs + 1, sizeof *d.in_per);
        if (!d.in || !d.in_per)
            st = mp_fail(err, MP_ERR_NOMEM, "out of memory");
        for (int i = 0; st == MP_OK && i < m->n_inputs; i++) {
            size_t n;
            mp_trainer_input(t, i, &n);
            d.in_per[i] = n / (size_t)a->batch;
        }
        size_t n;
        mp_trainer_labels(t, &n);
        d.label_per = n / (size_t)a->batch;
        r->synthetic = a->n_inputs == 0 && !a->labels;
        if (st == MP_OK)
            st = r->synthetic ? synthetic_dataset(a, loss, t, &d, err) : files_dataset(a, t, m, &d, err);
        if (st == MP_OK && d.n < a->batch)
            st = mp_fail(err, MP_ERR_ARG, "%lld samples, fewer than one batch of %ld",
                         (long long)d.n, a->batch);
        r->samples = d.n;
        if (st == MP_OK)
            st = train(a, t, &d, r, err);
    }
    if (st == MP_OK && a->out) {
        void *bytes = NULL;
        size_t size = 0;
        char why[256];
        st = mp_trainer_write_model(t, &bytes, &size, err);
        if (st == MP_OK && !mp_write_file_atomic(a->out, bytes, size, why, sizeof why))
            st = mp_fail(err, MP_ERR_IO, "%s", why);
        free(bytes);
    }
    if (t)
        r->heap_peak = mp_mem_get_stats(mp_trainer_mem(t))->peak_total;
    mp_trainer_destroy(t);
    if (st == MP_OK) {
        mp_summary *sum = calloc(1, sizeof *sum);
        st = sum ? mp_summary_compute(tr, sum, err) : mp_fail(err, MP_ERR_NOMEM, "out of memory");
        for (int c = 0; st == MP_OK && c < MP_TCAT_COUNT; c++)
            r->kind_peak[c] = sum->kind_peak[mp_train_cat_kind(c)];
        if (sum)
            mp_summary_free(sum);
        free(sum);
    }
    if (st == MP_OK && a->trace)
        st = mp_trace_save(tr, a->trace, err);
    mp_trace_destroy(tr);
    dataset_free(&d);
    mp_model_free(m);
    return st;
}

void mp_train_run_free(mp_train_run *r)
{
    free(r->epoch_loss);
    r->epoch_loss = NULL;
}
