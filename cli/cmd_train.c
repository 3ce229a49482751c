/* memprof train: train a float32 model for a few steps or epochs (forward, loss, backward,
 * optimizer) and show the training memory by category, held against planned, beside the
 * step's live-set lower bound; -o writes the trained model, --trace the trace. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/bench_stats.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "cli/train_driver.h"
#include "engine/memory/plan.h"
#include "reports/train_report.h"

static void help(void)
{
    printf("Usage: memprof train MODEL [options]\n\n"
           "Trains MODEL (a float32 .tflite file or zoo:NAME) and prints the loss, the time and\n"
           "throughput of a training step beside the forward's, and the memory of a step by\n"
           "category: activation (forward tensors), trainable (weights), backprop (dL/d\n"
           "activations), gradient (dL/d weights), optimizer (Adam's m and v), disposable\n"
           "(temporaries within one operator: im2col, packed operands) and extra (per-layer\n"
           "auxiliaries such as transposed operands; memprof's kernels need none, so 0).\n"
           "Columns: held (each category whole for the\n"
           "session), planned alone (each category planned on its own), and the bytes of each\n"
           "alive at the step where the live set is largest; then the shared planned arena\n"
           "against the live-set lower bound. Without --input and --labels the data are\n"
           "synthetic: uniform inputs, labels from a fixed teacher (the model with its last\n"
           "weighted layer re-drawn), so the loss must fall.\n\n"
           "Options:\n"
           "  --batch N            samples per step (default 16)\n"
           "  --epochs E           passes over the data (default 3)\n"
           "  --steps S            this many steps instead of epochs\n"
           "  --samples N          synthetic samples (default 4 x batch)\n"
           "  --optimizer sgd|adam  default adam (beta1 0.9, beta2 0.999, epsilon 1e-7)\n"
           "  --learning-rate R    default 0.001 (adam), 0.01 (sgd)\n"
           "  --loss mse|cce       default cce when the model ends in SOFTMAX (fused), else mse\n"
           "  --trainable-ops K    train only the last K operators (default 0: all)\n"
           "  --input NAME=FILE    float32 samples of input NAME (raw, samples one after another)\n"
           "  --labels FILE        float32 labels (raw, the output's elements per sample)\n"
           "  -o, --output FILE    write the trained model (.tflite) there\n"
           "  --memory P           planned (default: non-persistent tensors planned by lifetime\n"
           "                       in one arena), held (each category one block for the\n"
           "                       session), dynamic (each tensor allocated for its lifetime)\n"
           "  --planner NAME       the planner of the arena (default %s)\n"
           "  --threads N          XNNPACK's threads (default 1)\n"
           "  --trace FILE.json    save the trace: every block with its category as its kind\n"
           "  --memory-only        the memory table without training\n"
           "  --format text|json   the report as text (default) or as JSON (memprof-train,\n"
           "                       docs/json.md), alone on standard output\n"
           "  -h, --help           show this help\n"
           "On a terminal, a progress line on stderr while it trains (epoch, step, loss).\n\n"
           "Trainable operators: FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D, MAX_POOL_2D,\n"
           "AVERAGE_POOL_2D, MEAN, RESHAPE, SOFTMAX, RELU, RELU6, ADD, SUB, MUL, PAD (fused RELU\n"
           "and RELU6 too); float32; the batch is dimension 0 of every activation.\n\n"
           "Exit codes: 0 ok; 2 usage; 3 file; 4 malformed model or data file; 5 an operator\n"
           "memprof cannot train; 6 impossible shape; 7 runtime failure.\n\n"
           "Examples:\n"
           "  memprof train zoo:mnist_mlp --batch 32 --epochs 5 -o mnist_trained.tflite\n"
           "  memprof train zoo:mobilenet_v2 --batch 13 --memory-only\n"
           "  memprof train zoo:mnist_mlp --steps 20 --format json > train.json\n"
           "  memprof train model.tflite --input x=x.f32 --labels y.f32 --optimizer sgd\n\n"
           "More: docs/train.md in memprof's sources.\n",
           mp_planner_default()->name);
}

enum { O_OPTIMIZER = 1, O_LOSS, O_MEMORY, O_LR, O_BATCH, O_EPOCHS, O_STEPS, O_SAMPLES, O_K,
       O_FORMAT };

static int take(void *ctx, int id, const char *v)
{
    mp_train_args *a = ctx;
    static const char *const optims[] = {"sgd", "adam", NULL};
    static const char *const losses[] = {"mse", "cce", NULL};
    static const char *const pols[] = {"planned", "held", "dynamic", NULL};
    long *num[] = {[O_BATCH] = &a->batch, [O_EPOCHS] = &a->epochs, [O_STEPS] = &a->steps,
                   [O_SAMPLES] = &a->samples, [O_K] = &a->trainable_ops};
    static const char *const flags[] = {[O_BATCH] = "--batch", [O_EPOCHS] = "--epochs",
                                        [O_STEPS] = "--steps", [O_SAMPLES] = "--samples",
                                        [O_K] = "--trainable-ops"};
    switch (id) {
    case O_OPTIMIZER:
        return mp_opt_choice("train", "--optimizer", v, optims, &a->optimizer);
    case O_LOSS:
        return mp_opt_choice("train", "--loss", v, losses, &a->loss);
    case O_MEMORY:
        return mp_opt_choice("train", "--memory", v, pols, &a->policy);
    case O_FORMAT:
        return mp_opt_text_or_json("train", v, &a->json);
    case O_LR: {
        char *end;
        a->learning_rate = strtod(v, &end);
        if (*v == 0 || *end || !(a->learning_rate >= 0 && a->learning_rate <= 1e3))
            return mp_usage_error("train", "--learning-rate takes a number in [0, 1000], got '%s'",
                                  v);
        return 0;
    }
    default:
        if (!mp_parse_int(v, id == O_K ? 0 : 1, id == O_BATCH ? 1 << 20 : 1L << 40, num[id]))
            return mp_usage_error("train", "%s takes a whole number%s, got '%s'", flags[id],
                                  id == O_K ? " >= 0" : " >= 1", v);
        return 0;
    }
}

static int parse(int argc, char **argv, mp_train_args *a, mp_model_opts *m)
{
    static const mp_opt opts[] = {
        {"batch", 0, MP_ARG_VALUE, 0, O_BATCH},
        {"epochs", 0, MP_ARG_VALUE, 0, O_EPOCHS},
        {"steps", 0, MP_ARG_VALUE, 0, O_STEPS},
        {"samples", 0, MP_ARG_VALUE, 0, O_SAMPLES},
        {"trainable-ops", 0, MP_ARG_VALUE, 0, O_K},
        {"optimizer", 0, MP_ARG_VALUE, 0, O_OPTIMIZER},
        {"loss", 0, MP_ARG_VALUE, 0, O_LOSS},
        {"learning-rate", 0, MP_ARG_VALUE, 0, O_LR},
        {"memory", 0, MP_ARG_VALUE, 0, O_MEMORY},
        {"labels", 0, MP_ARG_STRING, offsetof(mp_train_args, labels), 0},
        {"output", 'o', MP_ARG_STRING, offsetof(mp_train_args, out), 0},
        {"trace", 0, MP_ARG_STRING, offsetof(mp_train_args, trace), 0},
        {"memory-only", 0, MP_ARG_FLAG, offsetof(mp_train_args, memory_only), 0},
        {"format", 0, MP_ARG_VALUE, 0, O_FORMAT},
        {0}};
    memset(a, 0, sizeof *a);
    a->batch = 16;
    a->epochs = 3;
    a->optimizer = 1;
    a->loss = -1;
    a->learning_rate = -1;
    m->threads = 1;
    int rc = mp_opts_parse(&(mp_cmd_spec){.cmd = "train", .help = help, .opts = opts,
                                          .take = take, .ctx = a,
                                          .model = MP_OPT_INPUT | MP_OPT_THREADS | MP_OPT_PLANNER,
                                          .m = m, .pos = &a->model, .max_pos = 1,
                                          .missing = "no MODEL given"},
                           argc, argv, NULL);
    if (rc != 0)
        return rc;
    if (m->n_inputs > MP_TRAIN_MAX_INPUTS)
        return mp_usage_error("train", "at most %d --input", MP_TRAIN_MAX_INPUTS);
    if ((m->n_inputs > 0) != (a->labels != NULL))
        return mp_usage_error("train", "--input and --labels go together");
    for (int i = 0; i < m->n_inputs; i++)
        a->inputs[i] = m->inputs[i];
    a->n_inputs = m->n_inputs;
    a->threads = m->threads;
    a->planner = m->planner;
    mp_cli_files f = {0};
    mp_cli_files_in(&f, a->model);
    mp_cli_files_in(&f, a->labels);
    mp_cli_files_inputs(&f, m->inputs, m->n_inputs);
    mp_cli_files_out(&f, a->out);
    mp_cli_files_out(&f, a->trace);
    return mp_cli_files_check("train", &f);
}

int mp_cmd_train(int argc, char **argv)
{
    mp_train_args a;
    mp_model_opts m = {0};
    int rc = parse(argc, argv, &a, &m);
    if (rc != 0)
        return rc < 0 ? MP_EXIT_OK : rc;
    mp_train_run r;
    mp_error err = {0};
    mp_progress pg;
    mp_progress_begin(&pg);
    a.progress = &pg;
    mp_status st = mp_train_drive(&a, &r, &err);
    mp_progress_end(&pg);
    if (st != MP_OK) {
        mp_train_run_free(&r);
        return mp_report_error(&err);
    }
    static const char *const optims[] = {"sgd", "adam"}, *const losses[] = {"mse", "cce"};
    mp_train_report rep = {
        .model = a.model, .policy = mp_train_policy_name(a.policy), .planner = r.mem.planner,
        .loss = losses[r.loss], .optimizer = optims[a.optimizer],
        .learning_rate = a.learning_rate >= 0 ? a.learning_rate : a.optimizer ? 0.001 : 0.01,
        .batch = a.batch, .trainable_ops = a.trainable_ops, .n_forward = r.mem.n_forward,
        .n_backward = r.mem.n_backward, .trained = !a.memory_only, .synthetic = r.synthetic,
        .samples = r.samples, .steps = r.steps_done, .epochs = r.epochs_done,
        .epoch_loss = r.epoch_loss, .n_epoch_loss = r.n_epoch_loss,
        .loss_before = r.loss_before, .loss_after = r.loss_after, .step_ms = r.step_ms,
        .forward_ms = r.forward_ms, .step_flops = r.mem.step_flops,
        .forward_flops = r.mem.forward_flops, .held_total = r.mem.held_total,
        .persistent = r.mem.persistent, .arena = r.mem.arena, .lower_bound = r.mem.lower_bound,
        .planned_total = r.mem.planned_total, .lower_bound_step = r.lb_step,
        .n_planned = r.mem.n_planned, .heap_peak = r.heap_peak, .out = a.out, .trace = a.trace};
    for (int c = 0; c < MP_TCAT_COUNT && c < MP_TRAIN_REPORT_CATS; c++) {
        rep.cat_names[c] = mp_train_cat_name(c);
        rep.held[c] = r.mem.held[c];
        rep.alone[c] = r.mem.alone[c];
        rep.at_bound[c] = r.mem.at_bound[c];
        rep.measured[c] = r.kind_peak[c];
    }
    if (a.json)
        st = mp_train_report_json(stdout, &rep, &err);
    else
        mp_train_report_text(stdout, &rep);
    mp_train_run_free(&r);
    if (st != MP_OK)
        return mp_report_error(&err);
    return fflush(stdout) == 0 ? MP_EXIT_OK : MP_EXIT_IO;
}
