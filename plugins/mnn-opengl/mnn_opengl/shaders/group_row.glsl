// A row's loop shared by a work group (with GROUP_ROW: one group per row, its
// LOCAL_X invocations a power of two, striding by ROW_STEP), or by one
// invocation per row (ROW_STEP 1). llvmpipe ends an invocation's loops after
// 65535 passes in all, so a long row needs the group.
#ifdef GROUP_ROW
#define ROW_STEP LOCAL_X
shared float group_part[LOCAL_X];

int row_index() { return int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x); }
int row_lane() { return int(gl_LocalInvocationID.x); }

// every invocation gets the group's sum (is_max 0) or max (is_max 1) of v
float group_combine(float v, bool is_max) {
    int lid = int(gl_LocalInvocationID.x);
    barrier();  // the previous result was read by all
    group_part[lid] = v;
    barrier();
    for (int s = LOCAL_X / 2; s > 0; s >>= 1) {
        if (lid < s) group_part[lid] = is_max ? max(group_part[lid], group_part[lid + s]) : group_part[lid] + group_part[lid + s];
        barrier();
    }
    return group_part[0];
}
#else
#define ROW_STEP 1
int row_index() { return flat_index(); }
int row_lane() { return 0; }
float group_combine(float v, bool is_max) { return v; }
#endif
