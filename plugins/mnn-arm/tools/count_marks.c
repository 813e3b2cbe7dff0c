/* The two marker functions of tools/count_peer.py, cross-compiled for aarch64 and called through
 * ctypes around what is counted: each executes an unallocated HINT (a NOP on every Arm core and
 * in qemu) that count_plugin.c recognizes when qemu translates it. */
void mnn_count_begin(void) { __asm__ volatile("hint #0x71"); }
void mnn_count_end(void) { __asm__ volatile("hint #0x72"); }
