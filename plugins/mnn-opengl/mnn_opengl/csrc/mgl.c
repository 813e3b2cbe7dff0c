/* mgl: EGL context, buffers, programs and recorded segments (see mgl.h). */
#define _GNU_SOURCE
#include "mgl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The few EGL and GL declarations used, so that no EGL/GL headers are needed to build. */
typedef void *EGLDisplay, *EGLContext, *EGLConfig, *EGLSurface, *EGLDeviceEXT;
typedef int32_t EGLint;
typedef unsigned int EGLBoolean, EGLenum, GLenum, GLuint, GLbitfield;
typedef int GLint, GLsizei;
typedef intptr_t GLintptr;
typedef intptr_t GLsizeiptr;
typedef int64_t GLint64;
typedef char GLchar;
typedef unsigned char GLubyte;

#define EGL_NONE 0x3038
#define EGL_EXTENSIONS 0x3055
#define EGL_RENDERABLE_TYPE 0x3040
#define EGL_OPENGL_ES3_BIT 0x0040
#define EGL_OPENGL_BIT 0x0008
#define EGL_OPENGL_ES_API 0x30A0
#define EGL_OPENGL_API 0x30A2
#define EGL_CONTEXT_MAJOR_VERSION 0x3098
#define EGL_CONTEXT_MINOR_VERSION 0x30FB
#define EGL_CONTEXT_OPENGL_PROFILE_MASK 0x30FD
#define EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT 0x0001
#define EGL_PLATFORM_SURFACELESS_MESA 0x31DD
#define EGL_PLATFORM_DEVICE_EXT 0x313F

#define GL_NO_ERROR 0
#define GL_VENDOR 0x1F00
#define GL_RENDERER 0x1F01
#define GL_VERSION 0x1F02
#define GL_MAJOR_VERSION 0x821B
#define GL_MINOR_VERSION 0x821C
#define GL_SHADER_STORAGE_BUFFER 0x90D2
#define GL_DYNAMIC_DRAW 0x88E8
#define GL_MAP_READ_BIT 0x0001
#define GL_COMPUTE_SHADER 0x91B9
#define GL_COMPILE_STATUS 0x8B81
#define GL_LINK_STATUS 0x8B82
#define GL_INFO_LOG_LENGTH 0x8B84
#define GL_SHADER_STORAGE_BARRIER_BIT 0x00002000
#define GL_ALL_BARRIER_BITS 0xFFFFFFFF
#define GL_MAX_SHADER_STORAGE_BLOCK_SIZE 0x90DE
#define GL_MAX_COMPUTE_WORK_GROUP_COUNT 0x91BE
#define GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS 0x90EB
#define GL_SHADER_STORAGE_BUFFER_OFFSET_ALIGNMENT 0x90DF

#define EGLFN(ret, name, args) typedef ret (*PFN_##name) args;
EGLFN(void *, eglGetProcAddress, (const char *))
EGLFN(EGLint, eglGetError, (void))
EGLFN(EGLDisplay, eglGetDisplay, (void *))
EGLFN(EGLDisplay, eglGetPlatformDisplayEXT, (EGLenum, void *, const EGLint *))
EGLFN(EGLBoolean, eglQueryDevicesEXT, (EGLint, EGLDeviceEXT *, EGLint *))
EGLFN(EGLBoolean, eglInitialize, (EGLDisplay, EGLint *, EGLint *))
EGLFN(EGLBoolean, eglTerminate, (EGLDisplay))
EGLFN(const char *, eglQueryString, (EGLDisplay, EGLint))
EGLFN(EGLBoolean, eglBindAPI, (EGLenum))
EGLFN(EGLBoolean, eglChooseConfig, (EGLDisplay, const EGLint *, EGLConfig *, EGLint, EGLint *))
EGLFN(EGLContext, eglCreateContext, (EGLDisplay, EGLConfig, EGLContext, const EGLint *))
EGLFN(EGLBoolean, eglDestroyContext, (EGLDisplay, EGLContext))
EGLFN(EGLBoolean, eglMakeCurrent, (EGLDisplay, EGLSurface, EGLSurface, EGLContext))

/* GL entry points, looked up once per context after it is first made current */
#define GL_FUNCS(X)                                                                  \
    X(GLenum, glGetError, (void))                                                    \
    X(const GLubyte *, glGetString, (GLenum))                                        \
    X(void, glGetIntegerv, (GLenum, GLint *))                                        \
    X(void, glGetInteger64v, (GLenum, GLint64 *))                                    \
    X(void, glGetIntegeri_v, (GLenum, GLuint, GLint *))                              \
    X(void, glGenBuffers, (GLsizei, GLuint *))                                       \
    X(void, glDeleteBuffers, (GLsizei, const GLuint *))                              \
    X(void, glBindBuffer, (GLenum, GLuint))                                          \
    X(void, glBindBufferBase, (GLenum, GLuint, GLuint))                              \
    X(void, glBufferData, (GLenum, GLsizeiptr, const void *, GLenum))                \
    X(void, glBufferSubData, (GLenum, GLintptr, GLsizeiptr, const void *))           \
    X(void *, glMapBufferRange, (GLenum, GLintptr, GLsizeiptr, GLbitfield))          \
    X(unsigned char, glUnmapBuffer, (GLenum))                                        \
    X(GLuint, glCreateShader, (GLenum))                                              \
    X(void, glShaderSource, (GLuint, GLsizei, const GLchar *const *, const GLint *)) \
    X(void, glCompileShader, (GLuint))                                               \
    X(void, glGetShaderiv, (GLuint, GLenum, GLint *))                                \
    X(void, glGetShaderInfoLog, (GLuint, GLsizei, GLsizei *, GLchar *))              \
    X(void, glDeleteShader, (GLuint))                                                \
    X(GLuint, glCreateProgram, (void))                                               \
    X(void, glAttachShader, (GLuint, GLuint))                                        \
    X(void, glLinkProgram, (GLuint))                                                 \
    X(void, glGetProgramiv, (GLuint, GLenum, GLint *))                               \
    X(void, glGetProgramInfoLog, (GLuint, GLsizei, GLsizei *, GLchar *))             \
    X(void, glDeleteProgram, (GLuint))                                               \
    X(void, glUseProgram, (GLuint))                                                  \
    X(void, glUniform1i, (GLint, GLint))                                             \
    X(void, glDispatchCompute, (GLuint, GLuint, GLuint))                             \
    X(void, glMemoryBarrier, (GLbitfield))                                           \
    X(void, glFlush, (void))

#define GL_TYPEDEF(ret, name, args) typedef ret (*PFN_##name) args;
GL_FUNCS(GL_TYPEDEF)

typedef struct gl_api {
#define GL_MEMBER(ret, name, args) PFN_##name name;
    GL_FUNCS(GL_MEMBER)
} gl_api;

struct mgl_context {
    pthread_mutex_t lock;
    void *lib;
    PFN_eglGetError GetError;
    PFN_eglMakeCurrent MakeCurrent;
    PFN_eglTerminate Terminate;
    PFN_eglDestroyContext DestroyContext;
    EGLDisplay dpy;
    EGLContext ctx;
    gl_api gl;
    mgl_info info;
};

struct mgl_segment {
    mnn_execution exec;
    mgl_context *ctx;
    GLuint arena, params;
    int n;
    struct {
        GLuint prog;
        GLint base;
        GLuint g[3];
        int barrier;
    } *d;
    char err[512];
};

static void set_err(char *err, size_t n, const char *fmt, ...) {
    if (!err || !n) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
}

static int has_ext(const char *list, const char *name) {
    size_t len = strlen(name);
    for (const char *p = list; p && (p = strstr(p, name)) != NULL; p += len)
        if ((p == list || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0')) return 1;
    return 0;
}

/* Take the context's lock and make it current on this thread. */
static int acquire(mgl_context *c, char *err, size_t n) {
    pthread_mutex_lock(&c->lock);
    if (!c->MakeCurrent(c->dpy, NULL, NULL, c->ctx)) {
        set_err(err, n, "eglMakeCurrent failed (EGL error 0x%x): the OpenGL context is current in another thread",
                c->GetError());
        pthread_mutex_unlock(&c->lock);
        return -1;
    }
    return 0;
}

static void release(mgl_context *c) {
    c->MakeCurrent(c->dpy, NULL, NULL, NULL);  /* flushes; lets another thread take the context */
    pthread_mutex_unlock(&c->lock);
}

static int gl_check(mgl_context *c, const char *what, char *err, size_t n) {
    GLenum e = c->gl.glGetError(), first = e;
    while (e != GL_NO_ERROR) e = c->gl.glGetError();
    if (first != GL_NO_ERROR) {
        set_err(err, n, "%s failed (GL error 0x%x%s)", what, first, first == 0x0505 ? ": out of memory" : "");
        return -1;
    }
    return 0;
}

static EGLContext try_context(mgl_context *c, PFN_eglBindAPI BindAPI, PFN_eglChooseConfig ChooseConfig,
                              PFN_eglCreateContext CreateContext, int gles, int major, int minor, int no_config) {
    if (!BindAPI(gles ? EGL_OPENGL_ES_API : EGL_OPENGL_API)) return NULL;
    EGLConfig cfg = NULL;
    if (!no_config) {
        EGLint attrs[] = {EGL_RENDERABLE_TYPE, gles ? EGL_OPENGL_ES3_BIT : EGL_OPENGL_BIT, EGL_NONE};
        EGLint count = 0;
        if (!ChooseConfig(c->dpy, attrs, &cfg, 1, &count) || count < 1) return NULL;
    }
    EGLint gl_attrs[] = {EGL_CONTEXT_MAJOR_VERSION, major, EGL_CONTEXT_MINOR_VERSION, minor,
                         EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
    EGLint es_attrs[] = {EGL_CONTEXT_MAJOR_VERSION, major, EGL_CONTEXT_MINOR_VERSION, minor, EGL_NONE};
    return CreateContext(c->dpy, cfg, NULL, gles ? es_attrs : gl_attrs);
}

static EGLDisplay open_display(mgl_context *c, int platform, PFN_eglGetProcAddress GetProcAddress,
                               PFN_eglInitialize Initialize, char *tried, size_t tn) {
    const char *client = ((PFN_eglQueryString)dlsym(c->lib, "eglQueryString"))(NULL, EGL_EXTENSIONS);
    PFN_eglGetPlatformDisplayEXT GetPlatformDisplay =
        (PFN_eglGetPlatformDisplayEXT)GetProcAddress("eglGetPlatformDisplayEXT");
    PFN_eglGetDisplay GetDisplay = (PFN_eglGetDisplay)dlsym(c->lib, "eglGetDisplay");
    size_t used = 0;
#define TRIED(...) used += (size_t)snprintf(tried + used, used < tn ? tn - used : 0, __VA_ARGS__)
    if (platform == MGL_PLATFORM_AUTO || platform == MGL_PLATFORM_SURFACELESS) {
        if (GetPlatformDisplay && has_ext(client, "EGL_MESA_platform_surfaceless")) {
            EGLDisplay d = GetPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, NULL, NULL);
            if (d && Initialize(d, NULL, NULL)) {
                snprintf(c->info.platform, sizeof c->info.platform, "surfaceless");
                return d;
            }
            TRIED("surfaceless: eglInitialize failed (0x%x); ", c->GetError());
        } else {
            TRIED("surfaceless: EGL_MESA_platform_surfaceless not offered; ");
        }
    }
    if (platform == MGL_PLATFORM_AUTO || platform == MGL_PLATFORM_DEVICE) {
        PFN_eglQueryDevicesEXT QueryDevices = (PFN_eglQueryDevicesEXT)GetProcAddress("eglQueryDevicesEXT");
        EGLDeviceEXT devs[16];
        EGLint n = 0;
        if (GetPlatformDisplay && QueryDevices && has_ext(client, "EGL_EXT_platform_device") &&
            QueryDevices(16, devs, &n) && n > 0) {
            for (EGLint i = 0; i < n; ++i) {
                EGLDisplay d = GetPlatformDisplay(EGL_PLATFORM_DEVICE_EXT, devs[i], NULL);
                if (d && Initialize(d, NULL, NULL)) {
                    snprintf(c->info.platform, sizeof c->info.platform, "device");
                    return d;
                }
            }
            TRIED("device: no EGL device initialized; ");
        } else {
            TRIED("device: EGL_EXT_platform_device offers no device; ");
        }
    }
    if (platform == MGL_PLATFORM_AUTO || platform == MGL_PLATFORM_DEFAULT) {
        EGLDisplay d = GetDisplay ? GetDisplay(NULL) : NULL;
        if (d && Initialize(d, NULL, NULL)) {
            snprintf(c->info.platform, sizeof c->info.platform, "default");
            return d;
        }
        TRIED("default display: eglInitialize failed (0x%x); ", c->GetError());
    }
#undef TRIED
    return NULL;
}

mgl_context *mgl_context_create(const char *library, int platform, int api, int *status, char *err, size_t errlen) {
    mgl_context *c = calloc(1, sizeof *c);
    if (!c) {
        *status = MGL_NO_CONTEXT;
        set_err(err, errlen, "out of host memory");
        return NULL;
    }
    pthread_mutex_init(&c->lock, NULL);
    c->lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    PFN_eglGetProcAddress GetProcAddress = c->lib ? (PFN_eglGetProcAddress)dlsym(c->lib, "eglGetProcAddress") : NULL;
    if (!GetProcAddress) {
        *status = MGL_NO_LIBRARY;
        set_err(err, errlen, "cannot load %s: %s", library, c->lib ? "no eglGetProcAddress in it" : dlerror());
        mgl_context_destroy(c);
        return NULL;
    }
    c->GetError = (PFN_eglGetError)dlsym(c->lib, "eglGetError");
    c->MakeCurrent = (PFN_eglMakeCurrent)dlsym(c->lib, "eglMakeCurrent");
    c->Terminate = (PFN_eglTerminate)dlsym(c->lib, "eglTerminate");
    c->DestroyContext = (PFN_eglDestroyContext)dlsym(c->lib, "eglDestroyContext");
    PFN_eglInitialize Initialize = (PFN_eglInitialize)dlsym(c->lib, "eglInitialize");
    PFN_eglQueryString QueryString = (PFN_eglQueryString)dlsym(c->lib, "eglQueryString");
    PFN_eglBindAPI BindAPI = (PFN_eglBindAPI)dlsym(c->lib, "eglBindAPI");
    PFN_eglChooseConfig ChooseConfig = (PFN_eglChooseConfig)dlsym(c->lib, "eglChooseConfig");
    PFN_eglCreateContext CreateContext = (PFN_eglCreateContext)dlsym(c->lib, "eglCreateContext");
    if (!c->GetError || !c->MakeCurrent || !Initialize || !QueryString || !BindAPI || !ChooseConfig ||
        !CreateContext || !c->Terminate || !c->DestroyContext) {
        *status = MGL_NO_LIBRARY;
        set_err(err, errlen, "%s lacks core EGL 1.4 entry points", library);
        mgl_context_destroy(c);
        return NULL;
    }
    char tried[512] = "";
    c->dpy = open_display(c, platform, GetProcAddress, Initialize, tried, sizeof tried);
    if (!c->dpy) {
        size_t len = strlen(tried);
        if (len >= 2 && tried[len - 2] == ';') tried[len - 2] = '\0';  /* no trailing separator */
        *status = MGL_NO_DISPLAY;
        set_err(err, errlen, "no headless EGL display (%s)", tried);
        mgl_context_destroy(c);
        return NULL;
    }
    int no_config = has_ext(QueryString(c->dpy, EGL_EXTENSIONS), "EGL_KHR_no_config_context");
    /* GLES 3.2, 3.1, then desktop GL 4.6 .. 4.3 core: the first that the driver makes */
    static const int es_versions[][2] = {{3, 2}, {3, 1}};
    static const int gl_versions[][2] = {{4, 6}, {4, 5}, {4, 4}, {4, 3}};
    if (api != MGL_API_GL)
        for (int i = 0; i < 2 && !c->ctx; ++i)
            if ((c->ctx = try_context(c, BindAPI, ChooseConfig, CreateContext, 1, es_versions[i][0],
                                      es_versions[i][1], no_config)))
                c->info.gles = 1;
    if (api != MGL_API_GLES)
        for (int i = 0; i < 4 && !c->ctx; ++i)
            c->ctx = try_context(c, BindAPI, ChooseConfig, CreateContext, 0, gl_versions[i][0], gl_versions[i][1],
                                 no_config);
    if (!c->ctx) {
        *status = MGL_NO_CONTEXT;
        set_err(err, errlen, "the %s EGL display makes no %s context with compute shaders (EGL error 0x%x)",
                c->info.platform,
                api == MGL_API_GLES ? "OpenGL ES 3.1+" : api == MGL_API_GL ? "desktop OpenGL 4.3+ core"
                                                                            : "OpenGL ES 3.1+ or desktop OpenGL 4.3+",
                c->GetError());
        mgl_context_destroy(c);
        return NULL;
    }
    if (!c->MakeCurrent(c->dpy, NULL, NULL, c->ctx)) {
        *status = MGL_NO_CONTEXT;
        set_err(err, errlen, "eglMakeCurrent without a surface failed (EGL error 0x%x)", c->GetError());
        mgl_context_destroy(c);
        return NULL;
    }
#define GL_LOAD(ret, name, args)                                                       \
    c->gl.name = (PFN_##name)GetProcAddress(#name);                                    \
    if (!c->gl.name) {                                                                 \
        *status = MGL_NO_CONTEXT;                                                      \
        set_err(err, errlen, "the OpenGL driver has no %s (compute needs GL 4.3 / GLES 3.1)", #name); \
        c->MakeCurrent(c->dpy, NULL, NULL, NULL);                                      \
        mgl_context_destroy(c);                                                        \
        return NULL;                                                                   \
    }
    GL_FUNCS(GL_LOAD)
#undef GL_LOAD
    mgl_info *in = &c->info;
    snprintf(in->vendor, sizeof in->vendor, "%s", (const char *)c->gl.glGetString(GL_VENDOR));
    snprintf(in->renderer, sizeof in->renderer, "%s", (const char *)c->gl.glGetString(GL_RENDERER));
    snprintf(in->version, sizeof in->version, "%s", (const char *)c->gl.glGetString(GL_VERSION));
    c->gl.glGetIntegerv(GL_MAJOR_VERSION, &in->major);
    c->gl.glGetIntegerv(GL_MINOR_VERSION, &in->minor);
    GLint64 ssbo = 0;
    c->gl.glGetInteger64v(GL_MAX_SHADER_STORAGE_BLOCK_SIZE, &ssbo);
    in->max_ssbo_bytes = ssbo;
    for (GLuint i = 0; i < 3; ++i) c->gl.glGetIntegeri_v(GL_MAX_COMPUTE_WORK_GROUP_COUNT, i, &in->max_group_count[i]);
    c->gl.glGetIntegerv(GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS, &in->max_invocations);
    c->gl.glGetIntegerv(GL_SHADER_STORAGE_BUFFER_OFFSET_ALIGNMENT, &in->ssbo_align);
    c->gl.glGetError();
    c->MakeCurrent(c->dpy, NULL, NULL, NULL);
    *status = MGL_OK;
    return c;
}

void mgl_context_destroy(mgl_context *c) {
    if (!c) return;
    if (c->ctx) c->DestroyContext(c->dpy, c->ctx);
    /* the display is left initialized: EGL displays are per process and may be shared */
    if (c->lib) dlclose(c->lib);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

void mgl_context_info(mgl_context *c, mgl_info *out) { *out = c->info; }

uint32_t mgl_buffer_create(mgl_context *c, int64_t nbytes, char *err, size_t errlen) {
    if (acquire(c, err, errlen)) return 0;
    GLuint b = 0;
    c->gl.glGenBuffers(1, &b);
    c->gl.glBindBuffer(GL_SHADER_STORAGE_BUFFER, b);
    c->gl.glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)(nbytes > 0 ? nbytes : 4), NULL, GL_DYNAMIC_DRAW);
    c->gl.glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
    if (gl_check(c, "glBufferData", err, errlen)) {
        c->gl.glDeleteBuffers(1, &b);
        b = 0;
    }
    release(c);
    return b;
}

void mgl_buffer_destroy(mgl_context *c, uint32_t b) {
    if (!b || acquire(c, NULL, 0)) return;
    c->gl.glDeleteBuffers(1, &b);
    release(c);
}

int mgl_buffer_write(mgl_context *c, uint32_t b, int64_t offset, const void *src, int64_t n, char *err, size_t errlen) {
    if (n <= 0) return 0;
    if (acquire(c, err, errlen)) return -1;
    c->gl.glBindBuffer(GL_SHADER_STORAGE_BUFFER, b);
    c->gl.glBufferSubData(GL_SHADER_STORAGE_BUFFER, (GLintptr)offset, (GLsizeiptr)n, src);
    c->gl.glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
    int rc = gl_check(c, "glBufferSubData", err, errlen);
    release(c);
    return rc;
}

int mgl_buffer_read(mgl_context *c, uint32_t b, int64_t offset, void *dst, int64_t n, char *err, size_t errlen) {
    if (n <= 0) return 0;
    if (acquire(c, err, errlen)) return -1;
    c->gl.glMemoryBarrier(GL_ALL_BARRIER_BITS);  /* shader writes visible to the mapping */
    c->gl.glBindBuffer(GL_SHADER_STORAGE_BUFFER, b);
    const void *p = c->gl.glMapBufferRange(GL_SHADER_STORAGE_BUFFER, (GLintptr)offset, (GLsizeiptr)n, GL_MAP_READ_BIT);
    int rc = 0;
    if (!p) {
        gl_check(c, "glMapBufferRange", err, errlen);
        rc = -1;
    } else {
        memcpy(dst, p, (size_t)n);
        c->gl.glUnmapBuffer(GL_SHADER_STORAGE_BUFFER);
        rc = gl_check(c, "reading back a buffer", err, errlen);
    }
    c->gl.glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
    release(c);
    return rc;
}

uint32_t mgl_program_create(mgl_context *c, const char *source, char *err, size_t errlen) {
    if (acquire(c, err, errlen)) return 0;
    GLuint sh = c->gl.glCreateShader(GL_COMPUTE_SHADER), prog = 0;
    GLint ok = 0, len = 0;
    c->gl.glShaderSource(sh, 1, &source, NULL);
    c->gl.glCompileShader(sh);
    c->gl.glGetShaderiv(sh, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        size_t used = (size_t)snprintf(err, errlen, "compile error: ");
        if (used < errlen) c->gl.glGetShaderInfoLog(sh, (GLsizei)(errlen - used), &len, err + used);
        c->gl.glDeleteShader(sh);
        release(c);
        return 0;
    }
    prog = c->gl.glCreateProgram();
    c->gl.glAttachShader(prog, sh);
    c->gl.glLinkProgram(prog);
    c->gl.glDeleteShader(sh);  /* freed with the program */
    c->gl.glGetProgramiv(prog, GL_LINK_STATUS, &ok);
    if (!ok) {
        size_t used = (size_t)snprintf(err, errlen, "link error: ");
        if (used < errlen) c->gl.glGetProgramInfoLog(prog, (GLsizei)(errlen - used), &len, err + used);
        c->gl.glDeleteProgram(prog);
        prog = 0;
    }
    release(c);
    return prog;
}

void mgl_program_destroy(mgl_context *c, uint32_t prog) {
    if (!prog || acquire(c, NULL, 0)) return;
    c->gl.glDeleteProgram(prog);
    release(c);
}

static int segment_run_cb(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    (void)ins, (void)n_in, (void)outs, (void)n_out;
    return mgl_segment_run((mgl_segment *)state);
}

static const char *segment_error_cb(void *state) { return ((mgl_segment *)state)->err; }

mgl_segment *mgl_segment_create(mgl_context *c, uint32_t arena, uint32_t params, int n) {
    mgl_segment *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->d = calloc((size_t)(n > 0 ? n : 1), sizeof *s->d);
    if (!s->d) {
        free(s);
        return NULL;
    }
    s->ctx = c;
    s->arena = arena;
    s->params = params;
    s->n = n;
    s->exec.abi_version = MNN_ABI_VERSION;
    s->exec.run = segment_run_cb;
    s->exec.state = s;
    s->exec.error = segment_error_cb;
    s->exec.name = "opengl segment";
    return s;
}

int mgl_segment_set(mgl_segment *s, int i, uint32_t prog, int32_t base, uint32_t gx, uint32_t gy, uint32_t gz,
                    int barrier) {
    if (i < 0 || i >= s->n) return -1;
    s->d[i].prog = prog;
    s->d[i].base = base;
    s->d[i].g[0] = gx, s->d[i].g[1] = gy, s->d[i].g[2] = gz;
    s->d[i].barrier = barrier;
    return 0;
}

int mgl_segment_run(mgl_segment *s) {
    mgl_context *c = s->ctx;
    if (acquire(c, s->err, sizeof s->err)) return -1;
    c->gl.glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, s->arena);
    c->gl.glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, s->params);
    GLuint current = 0;
    for (int i = 0; i < s->n; ++i) {
        if (s->d[i].barrier) c->gl.glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
        if (s->d[i].prog != current) c->gl.glUseProgram(current = s->d[i].prog);
        c->gl.glUniform1i(0, s->d[i].base);
        c->gl.glDispatchCompute(s->d[i].g[0], s->d[i].g[1], s->d[i].g[2]);
    }
    /* the next segment, or a read-back, sees every write */
    c->gl.glMemoryBarrier(GL_ALL_BARRIER_BITS);
    c->gl.glUseProgram(0);
    int rc = gl_check(c, "a recorded OpenGL dispatch", s->err, sizeof s->err);
    release(c);
    return rc;
}

const char *mgl_segment_error(mgl_segment *s) { return s->err; }
mnn_execution *mgl_segment_execution(mgl_segment *s) { return &s->exec; }

void mgl_segment_destroy(mgl_segment *s) {
    if (!s) return;
    free(s->d);
    free(s);
}
