// Shared by every shader: the work-group size (compile-time defines LOCAL_X,
// LOCAL_Y), the plan's arena (binding 0: every tensor, as float words), the
// segment's parameters (binding 1: uint words from P[pbase]; after them, the
// scratch words of Recorder.scratch, writable where PARAMS_RW is defined).
layout(local_size_x = LOCAL_X, local_size_y = LOCAL_Y, local_size_z = 1) in;

#ifdef ARENA_UINT  // data movement copies raw words (ints stay exact, no denormal flushing)
layout(std430, binding = 0) buffer Arena { uint A[]; };
#else
layout(std430, binding = 0) buffer Arena { float A[]; };
#endif
#ifdef PARAMS_RW  // a shader that keeps state between its dispatches in the recorder's scratch words
layout(std430, binding = 1) buffer Params { uint P[]; };
#else
layout(std430, binding = 1) readonly buffer Params { uint P[]; };
#endif
layout(location = 0) uniform int pbase;

int pi(int i) { return int(P[pbase + i]); }
uint pu(int i) { return P[pbase + i]; }
float pf(int i) { return uintBitsToFloat(P[pbase + i]); }

// the invocation's index on a 2-D grid of 1-D work groups (the grid's x is capped at 65535)
int flat_index() {
    return int(gl_WorkGroupID.y * gl_NumWorkGroups.x * uint(LOCAL_X) + gl_GlobalInvocationID.x);
}
