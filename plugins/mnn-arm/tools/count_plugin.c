/* A qemu TCG plugin (linux-user, plugin API version 1: qemu 7.2 and later) that counts the guest
 * instructions executed between two marker instructions, for tools/count_peer.py.
 *
 * The markers are unallocated HINT instructions (architectural NOPs: hint #0x71 opens a window,
 * hint #0x72 closes it), executed by count_marks.c's two functions. Every translation block adds its
 * instruction count to one counter inline (no callback per block, so qemu keeps most of its speed);
 * a marker's callback reads the counter and, at the close, appends "<instructions> <threads>" as one
 * line to the file named by the plugin argument out=PATH. Counts are exact per block: a block left
 * early (a fault, a signal) still counts whole, as the in_asm/exec log of count_insns.py does.
 * The counter is shared by all guest threads without atomics: the counted programs run on one
 * thread, and <threads> (vCPUs seen so far) tells the caller when others exist. With the argument
 * per_thread=on each block calls back instead (slower) to count per thread, and the line gets a third
 * field, what the other threads executed in the window: the check that they stayed idle.
 *
 *   gcc -O2 -shared -fPIC count_plugin.c -o count_plugin.so
 *   qemu-aarch64 -plugin ./count_plugin.so,out=/tmp/windows.txt[,per_thread=on] ... */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The declarations this plugin uses, as qemu's include/qemu/qemu-plugin.h (API version 1) has them;
 * qemu resolves them against its own exported symbols when it loads the plugin. */
typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_simple_cb_t)(qemu_plugin_id_t id, unsigned int vcpu_index);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_init_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_simple_cb_t cb);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op, void *ptr,
                                              uint64_t imm);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
                                          enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define HINT(imm) (0xd503201fu | ((uint32_t)(imm) << 5))
#define MARK_BEGIN HINT(0x71)
#define MARK_END HINT(0x72)

#define MAX_THREADS 256

static uint64_t executed;      /* instructions of every block entered so far */
static uint64_t window_start;  /* `executed` at the last opening marker */
static unsigned threads;       /* vCPUs (guest threads) created so far */
static FILE *out;
static int per_thread;         /* count per thread (by_thread) instead of `executed` */
static uint64_t by_thread[MAX_THREADS], by_thread_start[MAX_THREADS];

static void on_block(unsigned int vcpu_index, void *n_insns) {
    by_thread[vcpu_index < MAX_THREADS ? vcpu_index : MAX_THREADS - 1] += (uintptr_t)n_insns;
}

static void on_thread(qemu_plugin_id_t id, unsigned int vcpu_index) {
    (void)id, (void)vcpu_index;
    threads++;
}

static void on_mark(unsigned int vcpu_index, void *userdata) {
    if (per_thread) {
        unsigned self = vcpu_index < MAX_THREADS ? vcpu_index : MAX_THREADS - 1;
        if (userdata == (void *)(uintptr_t)MARK_BEGIN) {
            memcpy(by_thread_start, by_thread, sizeof by_thread);
            return;
        }
        uint64_t others = 0;
        for (unsigned t = 0; t < MAX_THREADS; t++)
            if (t != self) others += by_thread[t] - by_thread_start[t];
        fprintf(out, "%" PRIu64 " %u %" PRIu64 "\n", by_thread[self] - by_thread_start[self], threads, others);
    } else if (userdata == (void *)(uintptr_t)MARK_BEGIN) {
        window_start = executed;
        return;
    } else {
        fprintf(out, "%" PRIu64 " %u\n", executed - window_start, threads);
    }
    fflush(out); /* a crash later on keeps the windows already closed */
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    if (per_thread)
        qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block, QEMU_PLUGIN_CB_NO_REGS, (void *)(uintptr_t)n);
    else
        qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &executed, n);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint32_t word;
        if (qemu_plugin_insn_size(insn) != sizeof word) continue;
        memcpy(&word, qemu_plugin_insn_data(insn), sizeof word);
        if (word == MARK_BEGIN || word == MARK_END)
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_mark, QEMU_PLUGIN_CB_NO_REGS, (void *)(uintptr_t)word);
    }
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                                               int argc, char **argv) {
    (void)info;
    for (int i = 0; i < argc; i++)
        if (strncmp(argv[i], "out=", 4) == 0)
            out = fopen(argv[i] + 4, "w");
        else if (strcmp(argv[i], "per_thread=on") == 0)
            per_thread = 1;
    if (!out) {
        fprintf(stderr, "count_plugin: needs a writable out=PATH argument\n");
        return -1;
    }
    qemu_plugin_register_vcpu_init_cb(id, on_thread);
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    return 0;
}
