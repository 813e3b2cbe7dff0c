/* mnn_metal._metal: the macOS host side of the Metal backend (Objective-C, ARC).
 *
 * UNTESTED ON REAL HARDWARE IN THIS REPOSITORY'S CI (there is no Mac there): it is built
 * only on macOS by setup.py, and its logic is kept to the minimum the Python side needs.
 *
 *   device_name()                 the default MTLDevice's name, "" when there is none
 *   Context()                     device + command queue
 *   Context.pipeline(msl, function, constants, macros) -> Pipeline
 *                                 compiles one kernel's MSL (macros: SPIRV_CROSS_CONSTANT_ID_n),
 *                                 specialises it (constants: function constant id -> uint)
 *   Buffer(ctx, nbytes)           shared-storage MTLBuffer; write(offset, array, half=False),
 *                                 read(offset, out, half=False), address (of its contents), nbytes;
 *                                 half: the array is float32 and the buffer holds it as float16
 *                                 (precision="low": the plan's float tensors are float16)
 *   Program(ctx)                  dispatch(pipeline, [(buffer|None, offset)], params, grid, tg, name),
 *                                 keep(obj), capsule(): an mnn_execution for the core's run loop
 *
 * As in mnn-vulkan, everything is resolved at resize: a Program holds a flat C array of
 * dispatch records (pipeline, buffers and offsets, parameter bytes, grid), so a run is one
 * tight loop that encodes them into a fresh command buffer (Metal command buffers are
 * single-use), commits it and waits; no Python and no allocation beyond Metal's own. The
 * parameters go through setBytes at buffer(30), where tools/build_msl.py put them.
 *
 * Built with ARC (-fobjc-arc). Metal objects held by Python objects are stored as retained
 * `void *` (CFBridgingRetain / CFRelease in dealloc), never as ARC fields of C structs
 * that Python allocates; dispatch records hold unretained pointers whose owners (Pipeline
 * and Buffer objects) the Program keeps alive.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#import <Foundation/Foundation.h>
#import <Metal/Metal.h>
#include <string.h>

#include "mnn_core/abi.h"

#define PARAMS_INDEX 30 /* mnn_metal.spirv_ubo.PARAMS_INDEX */
#define MAX_BINDINGS 16
#define MAX_PARAMS 256 /* the largest Vulkan push-constant block is 128 bytes */

#define DEVICE(c) ((__bridge id<MTLDevice>)(c)->device)
#define QUEUE(c) ((__bridge id<MTLCommandQueue>)(c)->queue)
#define PIPELINE(p) ((__bridge id<MTLComputePipelineState>)(p))
#define MTLBUF(b) ((__bridge id<MTLBuffer>)(b))

static void release(void **ref) {
    if (*ref) CFRelease(*ref);
    *ref = NULL;
}

/* -- Context ------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    void *device; /* id<MTLDevice>, retained */
    void *queue;  /* id<MTLCommandQueue>, retained */
} ContextObject;

static PyTypeObject ContextType;

static int Context_init(ContextObject *self, PyObject *args, PyObject *kw) {
    if (!PyArg_ParseTuple(args, ":Context")) return -1;
    release(&self->queue);
    release(&self->device);
    id<MTLDevice> device = MTLCreateSystemDefaultDevice();
    if (device == nil) {
        PyErr_SetString(PyExc_RuntimeError, "no Metal device on this Mac (MTLCreateSystemDefaultDevice returned nil)");
        return -1;
    }
    id<MTLCommandQueue> queue = [device newCommandQueue];
    if (queue == nil) {
        PyErr_SetString(PyExc_RuntimeError, "Metal: newCommandQueue failed");
        return -1;
    }
    self->device = (void *)CFBridgingRetain(device);
    self->queue = (void *)CFBridgingRetain(queue);
    return 0;
}

static void Context_dealloc(ContextObject *self) {
    release(&self->queue);
    release(&self->device);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* -- Pipeline ------------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    void *state; /* id<MTLComputePipelineState>, retained */
} PipelineObject;

static PyTypeObject PipelineType;

static void Pipeline_dealloc(PipelineObject *self) {
    release(&self->state);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Pipeline_max_threads(PipelineObject *self, void *closure) {
    return PyLong_FromUnsignedLong((unsigned long)PIPELINE(self->state).maxTotalThreadsPerThreadgroup);
}

static PyGetSetDef Pipeline_getset[] = {
    {"max_threads", (getter)Pipeline_max_threads, NULL, "maxTotalThreadsPerThreadgroup", NULL},
    {NULL}};

/* Metal's error text as a Python exception naming what failed. */
static PyObject *metal_error(const char *what, NSError *error) {
    const char *msg = error ? error.localizedDescription.UTF8String : "unknown error";
    PyErr_Format(PyExc_RuntimeError, "Metal: %s: %s", what, msg ? msg : "unknown error");
    return NULL;
}

static PyObject *Context_pipeline(ContextObject *self, PyObject *args) {
    const char *source, *function;
    PyObject *constants, *macros;
    if (!PyArg_ParseTuple(args, "ssO!O!:pipeline", &source, &function, &PyDict_Type, &constants, &PyDict_Type,
                          &macros))
        return NULL;
    @autoreleasepool {
        MTLCompileOptions *options = [MTLCompileOptions new];
        NSMutableDictionary *defines = [NSMutableDictionary dictionary];
        PyObject *key, *value;
        Py_ssize_t pos = 0;
        while (PyDict_Next(macros, &pos, &key, &value)) {
            long id_ = PyLong_AsLong(key), v = PyLong_AsLong(value);
            if (PyErr_Occurred()) return NULL;
            defines[[NSString stringWithFormat:@"SPIRV_CROSS_CONSTANT_ID_%ld", id_]] =
                [NSString stringWithFormat:@"%ldu", v];
        }
        options.preprocessorMacros = defines;
        NSError *error = nil;
        id<MTLLibrary> library = [DEVICE(self) newLibraryWithSource:[NSString stringWithUTF8String:source]
                                                            options:options
                                                              error:&error];
        if (library == nil) return metal_error("compiling the MSL failed", error);
        MTLFunctionConstantValues *values = [MTLFunctionConstantValues new];
        pos = 0;
        while (PyDict_Next(constants, &pos, &key, &value)) {
            unsigned long id_ = PyLong_AsUnsignedLong(key), v = PyLong_AsUnsignedLong(value);
            if (PyErr_Occurred()) return NULL;
            uint32_t u = (uint32_t)v;
            [values setConstantValue:&u type:MTLDataTypeUInt atIndex:id_];
        }
        id<MTLFunction> fn = [library newFunctionWithName:[NSString stringWithUTF8String:function]
                                           constantValues:values
                                                    error:&error];
        if (fn == nil) return metal_error("specialising the kernel function failed", error);
        id<MTLComputePipelineState> state = [DEVICE(self) newComputePipelineStateWithFunction:fn error:&error];
        if (state == nil) return metal_error("creating the compute pipeline failed", error);
        PipelineObject *p = PyObject_New(PipelineObject, &PipelineType);
        if (p == NULL) return NULL;
        p->state = (void *)CFBridgingRetain(state);
        return (PyObject *)p;
    }
}

static PyObject *Context_name(ContextObject *self, void *closure) {
    return PyUnicode_FromString(DEVICE(self).name.UTF8String);
}

static PyMethodDef Context_methods[] = {
    {"pipeline", (PyCFunction)Context_pipeline, METH_VARARGS, "pipeline(msl, function, constants, macros)"},
    {NULL}};

static PyGetSetDef Context_getset[] = {{"name", (getter)Context_name, NULL, "the device's name", NULL}, {NULL}};

/* -- Buffer -------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    void *buffer; /* id<MTLBuffer>, retained */
    Py_ssize_t nbytes;
} BufferObject;

static PyTypeObject BufferType;

static int Buffer_init(BufferObject *self, PyObject *args, PyObject *kw) {
    ContextObject *ctx;
    Py_ssize_t nbytes;
    if (!PyArg_ParseTuple(args, "O!n:Buffer", &ContextType, &ctx, &nbytes)) return -1;
    if (nbytes < 0) {
        PyErr_SetString(PyExc_ValueError, "Buffer: negative size");
        return -1;
    }
    release(&self->buffer);
    if ((uint64_t)nbytes > DEVICE(ctx).maxBufferLength) {
        PyErr_Format(PyExc_MemoryError, "Metal: %zd bytes exceed the device's largest buffer (%llu bytes)", nbytes,
                     (unsigned long long)DEVICE(ctx).maxBufferLength);
        return -1;
    }
    /* shared storage: unified memory on Apple GPUs, so host copies are plain memcpy */
    id<MTLBuffer> buffer = [DEVICE(ctx) newBufferWithLength:(NSUInteger)(nbytes ? nbytes : 4)
                                                    options:MTLResourceStorageModeShared];
    if (buffer == nil) {
        PyErr_Format(PyExc_MemoryError, "Metal: cannot allocate a buffer of %zd bytes", nbytes);
        return -1;
    }
    self->buffer = (void *)CFBridgingRetain(buffer);
    self->nbytes = nbytes;
    return 0;
}

static void Buffer_dealloc(BufferObject *self) {
    release(&self->buffer);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int in_bounds(BufferObject *self, Py_ssize_t offset, Py_ssize_t len) {
    if (self->buffer == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Metal buffer was not initialised");
        return 0;
    }
    if (offset < 0 || len < 0 || offset > self->nbytes || len > self->nbytes - offset) {
        PyErr_Format(PyExc_IndexError, "Metal buffer: bytes [%zd, %zd) outside its %zd bytes", offset,
                     offset + len, self->nbytes);
        return 0;
    }
    return 1;
}

/* float32 <-> float16 while copying (precision="low"), round to nearest even as numpy's cast;
 * (__fp16 is clang's storage-only half: one fcvt each on Apple silicon) */
static void narrow_f32(__fp16 *dst, const float *src, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = (__fp16)src[i];
}

static void widen_f16(float *dst, const __fp16 *src, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = (float)src[i];
}

static PyObject *Buffer_write(BufferObject *self, PyObject *args) {
    Py_ssize_t offset;
    Py_buffer view;
    int half = 0;
    if (!PyArg_ParseTuple(args, "ny*|p:write", &offset, &view, &half)) return NULL;
    if ((half && view.len % 4) || !in_bounds(self, offset, half ? view.len / 2 : view.len) ||
        !PyBuffer_IsContiguous(&view, 'C')) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "Buffer.write needs a C-contiguous array (float32 when half)");
        PyBuffer_Release(&view);
        return NULL;
    }
    char *dst = (char *)MTLBUF(self->buffer).contents + offset;
    if (half)
        narrow_f32((__fp16 *)dst, (const float *)view.buf, (size_t)view.len / 4);
    else
        memcpy(dst, view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
}

static PyObject *Buffer_read(BufferObject *self, PyObject *args) {
    Py_ssize_t offset;
    Py_buffer view;
    int half = 0;
    if (!PyArg_ParseTuple(args, "nw*|p:read", &offset, &view, &half)) return NULL;
    if ((half && view.len % 4) || !in_bounds(self, offset, half ? view.len / 2 : view.len) ||
        !PyBuffer_IsContiguous(&view, 'C')) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "Buffer.read needs a C-contiguous array (float32 when half)");
        PyBuffer_Release(&view);
        return NULL;
    }
    const char *src = (const char *)MTLBUF(self->buffer).contents + offset;
    if (half)
        widen_f16((float *)view.buf, (const __fp16 *)src, (size_t)view.len / 4);
    else
        memcpy(view.buf, src, (size_t)view.len);
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
}

static PyObject *Buffer_address(BufferObject *self, void *closure) {
    if (!in_bounds(self, 0, 0)) return NULL;
    return PyLong_FromVoidPtr(MTLBUF(self->buffer).contents); /* shared storage: host-visible */
}

static PyObject *Buffer_nbytes(BufferObject *self, void *closure) { return PyLong_FromSsize_t(self->nbytes); }

static PyGetSetDef Buffer_getset[] = {
    {"address", (getter)Buffer_address, NULL, "host address of the contents (shared storage)", NULL},
    {"nbytes", (getter)Buffer_nbytes, NULL, "size in bytes", NULL},
    {NULL}};

static PyMethodDef Buffer_methods[] = {
    {"write", (PyCFunction)Buffer_write, METH_VARARGS, "write(offset, array, half=False)"},
    {"read", (PyCFunction)Buffer_read, METH_VARARGS, "read(offset, out, half=False)"},
    {NULL}};

/* -- Program ------------------------------------------------------------------------- */

typedef struct {
    void *pipeline; /* unretained: the Pipeline object in keep_list owns it */
    void *buffers[MAX_BINDINGS]; /* unretained: the Buffer objects in keep_list own them */
    NSUInteger offsets[MAX_BINDINGS];
    int n_bindings;
    uint8_t params[MAX_PARAMS];
    int n_params;
    MTLSize grid, threadgroup;
} Dispatch;

typedef struct {
    PyObject_HEAD
    ContextObject *ctx;
    PyObject *keep_list; /* every Pipeline and Buffer the dispatches point at */
    Dispatch *dispatches;
    Py_ssize_t n, cap;
    mnn_execution exec;
    char error[512];
} ProgramObject;

static PyTypeObject ProgramType;

static int Program_init(ProgramObject *self, PyObject *args, PyObject *kw) {
    ContextObject *ctx;
    if (!PyArg_ParseTuple(args, "O!:Program", &ContextType, &ctx)) return -1;
    Py_INCREF(ctx);
    self->ctx = ctx;
    self->keep_list = PyList_New(0);
    return self->keep_list ? 0 : -1;
}

static void Program_dealloc(ProgramObject *self) {
    PyMem_Free(self->dispatches);
    Py_XDECREF(self->keep_list);
    Py_XDECREF(self->ctx);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int size3(PyObject *t, MTLSize *out, const char *what) {
    unsigned long x, y, z;
    if (!PyArg_ParseTuple(t, "kkk", &x, &y, &z)) {
        PyErr_Format(PyExc_TypeError, "Program.dispatch: %s must be three integers", what);
        return 0;
    }
    *out = MTLSizeMake(x, y, z);
    return 1;
}

static PyObject *Program_dispatch(ProgramObject *self, PyObject *args) {
    PipelineObject *pipeline;
    PyObject *bindings, *grid, *tg;
    Py_buffer params;
    const char *name;
    if (!PyArg_ParseTuple(args, "O!O!y*OOs:dispatch", &PipelineType, &pipeline, &PyList_Type, &bindings, &params,
                          &grid, &tg, &name))
        return NULL;
    Dispatch d;
    memset(&d, 0, sizeof d);
    PyObject *result = NULL;
    if (PyList_GET_SIZE(bindings) > MAX_BINDINGS || params.len > MAX_PARAMS) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bindings / %zd parameter bytes (max %d / %d)", name,
                     PyList_GET_SIZE(bindings), params.len, MAX_BINDINGS, MAX_PARAMS);
        goto done;
    }
    if (!size3(grid, &d.grid, "grid") || !size3(tg, &d.threadgroup, "threadgroup")) goto done;
    NSUInteger max_threads = PIPELINE(pipeline->state).maxTotalThreadsPerThreadgroup;
    if (d.threadgroup.width * d.threadgroup.height * d.threadgroup.depth > max_threads) {
        PyErr_Format(PyExc_ValueError, "%s: %lu threads per threadgroup, the pipeline takes at most %lu", name,
                     (unsigned long)(d.threadgroup.width * d.threadgroup.height * d.threadgroup.depth),
                     (unsigned long)max_threads);
        goto done;
    }
    d.pipeline = pipeline->state;
    if (PyList_Append(self->keep_list, (PyObject *)pipeline) < 0) goto done;
    d.n_bindings = (int)PyList_GET_SIZE(bindings);
    for (int i = 0; i < d.n_bindings; ++i) {
        PyObject *buf;
        Py_ssize_t offset;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(bindings, i), "On", &buf, &offset)) goto done;
        if (!PyObject_TypeCheck(buf, &BufferType)) {
            PyErr_Format(PyExc_TypeError, "%s: binding %d is not a Buffer", name, i);
            goto done;
        }
        if (!in_bounds((BufferObject *)buf, offset, 0)) goto done;
        d.buffers[i] = ((BufferObject *)buf)->buffer;
        d.offsets[i] = (NSUInteger)offset;
        if (PyList_Append(self->keep_list, buf) < 0) goto done;
    }
    memcpy(d.params, params.buf, (size_t)params.len);
    d.n_params = (int)params.len;
    if (self->n == self->cap) {
        Py_ssize_t cap = self->cap ? 2 * self->cap : 16;
        Dispatch *grown = PyMem_Realloc(self->dispatches, (size_t)cap * sizeof(Dispatch));
        if (grown == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        self->dispatches = grown;
        self->cap = cap;
    }
    self->dispatches[self->n++] = d;
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&params);
    return result;
}

static PyObject *Program_keep(ProgramObject *self, PyObject *obj) {
    if (PyList_Append(self->keep_list, obj) < 0) return NULL;
    Py_RETURN_NONE;
}

/* The run: called by the core's run loop without the GIL. */
static int program_run(void *state, const mnn_tensor *ins, int32_t n_in, mnn_tensor *outs, int32_t n_out) {
    ProgramObject *self = (ProgramObject *)state;
    @autoreleasepool {
        id<MTLCommandBuffer> cb = [QUEUE(self->ctx) commandBuffer];
        id<MTLComputeCommandEncoder> enc = [cb computeCommandEncoder]; /* serial: dispatches in order */
        for (Py_ssize_t i = 0; i < self->n; ++i) {
            const Dispatch *d = &self->dispatches[i];
            [enc setComputePipelineState:PIPELINE(d->pipeline)];
            for (int b = 0; b < d->n_bindings; ++b)
                [enc setBuffer:MTLBUF(d->buffers[b]) offset:d->offsets[b] atIndex:(NSUInteger)b];
            if (d->n_params) [enc setBytes:d->params length:(NSUInteger)d->n_params atIndex:PARAMS_INDEX];
            [enc dispatchThreadgroups:d->grid threadsPerThreadgroup:d->threadgroup];
        }
        [enc endEncoding];
        [cb commit];
        [cb waitUntilCompleted];
        if (cb.status == MTLCommandBufferStatusError) {
            const char *msg = cb.error.localizedDescription.UTF8String;
            snprintf(self->error, sizeof self->error, "Metal command buffer failed: %s", msg ? msg : "unknown error");
            return 1;
        }
    }
    return 0;
}

static const char *program_error(void *state) { return ((ProgramObject *)state)->error; }

static PyObject *Program_capsule(ProgramObject *self, PyObject *unused) {
    self->exec.abi_version = MNN_ABI_VERSION;
    self->exec.flags = 0;
    self->exec.run = program_run;
    self->exec.state = self; /* the owner (this Program) outlives the capsule's use */
    self->exec.error = program_error;
    self->exec.name = "metal";
    return PyCapsule_New(&self->exec, MNN_EXECUTION_CAPSULE, NULL);
}

static PyObject *Program_len(ProgramObject *self, void *closure) { return PyLong_FromSsize_t(self->n); }

static PyMethodDef Program_methods[] = {
    {"dispatch", (PyCFunction)Program_dispatch, METH_VARARGS,
     "dispatch(pipeline, [(buffer, offset)], params, grid, threadgroup, name)"},
    {"keep", (PyCFunction)Program_keep, METH_O, "keep(obj): hold a reference for the program's lifetime"},
    {"capsule", (PyCFunction)Program_capsule, METH_NOARGS, "the mnn_execution in a PyCapsule"},
    {NULL}};

static PyGetSetDef Program_getset[] = {{"dispatches", (getter)Program_len, NULL, "recorded dispatches", NULL},
                                       {NULL}};

/* -- module -------------------------------------------------------------------------- */

static PyObject *device_name(PyObject *m, PyObject *unused) {
    @autoreleasepool {
        id<MTLDevice> dev = MTLCreateSystemDefaultDevice();
        return PyUnicode_FromString(dev ? dev.name.UTF8String : "");
    }
}

static PyMethodDef module_methods[] = {
    {"device_name", device_name, METH_NOARGS, "the default Metal device's name, or '' when there is none"},
    {NULL}};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_metal", "mnn-metal's native part (macOS)", -1,
                                        module_methods};

/* NAME: the type's Python name and the prefix of its C struct (NAMEObject) */
#define TYPE(T, NAME, NEW, INIT, DEALLOC, METHODS, GETSET)                              \
    T.tp_name = "mnn_metal._metal." #NAME;                                             \
    T.tp_basicsize = sizeof(NAME##Object);                                             \
    T.tp_flags = Py_TPFLAGS_DEFAULT;                                                   \
    T.tp_new = NEW;                                                                    \
    T.tp_init = (initproc)(INIT);                                                      \
    T.tp_dealloc = (destructor)(DEALLOC);                                              \
    T.tp_methods = METHODS;                                                            \
    T.tp_getset = GETSET;                                                              \
    if (PyType_Ready(&T) < 0) return NULL;                                             \
    Py_INCREF(&T);                                                                     \
    if (PyModule_AddObject(m, #NAME, (PyObject *)&T) < 0) return NULL;

PyMODINIT_FUNC PyInit__metal(void) {
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL) return NULL;
    TYPE(ContextType, Context, PyType_GenericNew, Context_init, Context_dealloc, Context_methods, Context_getset)
    TYPE(PipelineType, Pipeline, NULL, NULL, Pipeline_dealloc, NULL, Pipeline_getset) /* Context.pipeline makes them */
    TYPE(BufferType, Buffer, PyType_GenericNew, Buffer_init, Buffer_dealloc, Buffer_methods, Buffer_getset)
    TYPE(ProgramType, Program, PyType_GenericNew, Program_init, Program_dealloc, Program_methods, Program_getset)
    return m;
}
