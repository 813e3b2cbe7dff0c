// Moves float words between the arena and a kernel's scratch words (Recorder.scratch): into the
// scratch from an arena tensor, or zeros where there is none (to_scratch = 1); or back out into an
// arena tensor (to_scratch = 0). A recurrent kernel's initial and final states.
// P: count, to_scratch, arena_off (-1: zeros), scratch (from the buffer's end)
void main() {
    int i = flat_index();
    if (i >= pi(0)) return;
    int s = int(P.length()) + pi(3) + i, a = pi(2);
    if (pi(1) != 0) {
        P[s] = a >= 0 ? A[a + i] : 0u;
    } else {
        A[a + i] = P[s];
    }
}
