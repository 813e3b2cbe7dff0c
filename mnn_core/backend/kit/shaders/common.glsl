// Shared by every mnn-vulkan compute shader (included right after #version).
// Work-group sizes are specialization constants 0..2, set per pipeline.
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

// Element-wise shaders run 1-D work groups on a 2-D grid (the grid's x is
// capped at 65535 groups); this is the invocation's flat element index.
uint flat_index() {
    return (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
}

// Element types of tensors in the arena. The *_h.comp variants (precision="low" on a
// device with shaderFloat16 and 16-bit storage) define MNN_HALF: every float tensor is
// stored as float16 there; HALF_T is the type of their float16 arithmetic.
#ifdef MNN_HALF
#define DATA_T float16_t
#define HALF_T float16_t
#else
#define DATA_T float
#define HALF_T float
#endif
