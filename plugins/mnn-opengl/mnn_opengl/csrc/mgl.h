/* mgl: the small C runtime of mnn-opengl.
 *
 * libEGL is opened with dlopen and every EGL and GL entry point is looked up at
 * run time (eglGetProcAddress), so nothing OpenGL is needed to build or install
 * the package. A context is headless (no surface): EGL_PLATFORM_SURFACELESS_MESA,
 * else the EGL device platform, else the default display; GLES 3.1+, else
 * desktop GL 4.3 core. GL contexts are bound to one thread at a time, so every
 * entry point takes the context's lock, makes it current, and releases it.
 */
#ifndef MNN_OPENGL_MGL_H
#define MNN_OPENGL_MGL_H

#include <stddef.h>
#include <stdint.h>

#include "mnn_core/abi.h"

enum { MGL_OK = 0, MGL_NO_LIBRARY = 1, MGL_NO_DISPLAY = 2, MGL_NO_CONTEXT = 3 };
enum { MGL_PLATFORM_AUTO = 0, MGL_PLATFORM_SURFACELESS = 1, MGL_PLATFORM_DEVICE = 2, MGL_PLATFORM_DEFAULT = 3 };
enum { MGL_API_AUTO = 0, MGL_API_GLES = 1, MGL_API_GL = 2 };

typedef struct mgl_context mgl_context;
typedef struct mgl_segment mgl_segment;

typedef struct mgl_info {
    int gles;               /* 1: OpenGL ES, 0: desktop GL */
    int major, minor;
    char platform[32];      /* "surfaceless", "device", "default" */
    char vendor[128], renderer[256], version[256];
    int64_t max_ssbo_bytes; /* GL_MAX_SHADER_STORAGE_BLOCK_SIZE */
    int32_t max_group_count[3];
    int32_t max_invocations;
    int32_t ssbo_align;
} mgl_info;

mgl_context *mgl_context_create(const char *library, int platform, int api, int *status, char *err, size_t errlen);
void mgl_context_destroy(mgl_context *ctx);
void mgl_context_info(mgl_context *ctx, mgl_info *out);

/* buffers: GL names; 0 means failure (err says why) */
uint32_t mgl_buffer_create(mgl_context *ctx, int64_t nbytes, char *err, size_t errlen);
void mgl_buffer_destroy(mgl_context *ctx, uint32_t buf);
int mgl_buffer_write(mgl_context *ctx, uint32_t buf, int64_t offset, const void *src, int64_t n, char *err, size_t errlen);
int mgl_buffer_read(mgl_context *ctx, uint32_t buf, int64_t offset, void *dst, int64_t n, char *err, size_t errlen);

/* programs: a compute shader compiled and linked; 0 on failure with the driver's log in err */
uint32_t mgl_program_create(mgl_context *ctx, const char *source, char *err, size_t errlen);
void mgl_program_destroy(mgl_context *ctx, uint32_t prog);

/* a segment: dispatches recorded at resize, replayed by each run */
mgl_segment *mgl_segment_create(mgl_context *ctx, uint32_t arena, uint32_t params, int n_dispatches);
int mgl_segment_set(mgl_segment *s, int i, uint32_t prog, int32_t param_base, uint32_t gx, uint32_t gy, uint32_t gz,
                    int barrier_before);
int mgl_segment_run(mgl_segment *s);
const char *mgl_segment_error(mgl_segment *s);
mnn_execution *mgl_segment_execution(mgl_segment *s);
void mgl_segment_destroy(mgl_segment *s);

#endif
