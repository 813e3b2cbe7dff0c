#include <metal_stdlib>
#include <simd/simd.h>

using namespace metal;

struct _23
{
    uint _m0;
    uint _m1;
    uint _m2;
    uint _m3;
    uint _m4;
};

struct _132
{
    float _m0[1];
};

constant uint _163_tmp [[function_constant(0)]];
constant uint _163 = is_function_constant_defined(_163_tmp) ? _163_tmp : 1u;
constant uint _164_tmp [[function_constant(1)]];
constant uint _164 = is_function_constant_defined(_164_tmp) ? _164_tmp : 1u;
constant uint _165_tmp [[function_constant(2)]];
constant uint _165 = is_function_constant_defined(_165_tmp) ? _165_tmp : 1u;
constant uint3 gl_WorkGroupSize [[maybe_unused]] = uint3(_163, _164, _165);
constant uint _170 = gl_WorkGroupSize.x;
constant uint _178 = gl_WorkGroupSize.x;
constant uint _189 = gl_WorkGroupSize.x;
constant uint _190 = (_189 / 2u);

struct _267
{
    uint _m0[1];
};

kernel void argreduce(const device _132& _134 [[buffer(0)]], device _267& _269 [[buffer(1)]], constant _23& _25 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    threadgroup float _173[_170];
    threadgroup uint _181[_178];
    uint _77 = (gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x;
    bool _87 = _77 < _25._m0;
    uint _367;
    if (_87)
    {
        _367 = (((_77 / _25._m2) * _25._m1) * _25._m2) + (_77 % _25._m2);
    }
    else
    {
        _367 = 0u;
    }
    float _369;
    uint _371;
    if (_87)
    {
        float _370;
        uint _372;
        _372 = 4294967295u;
        _370 = 0.0;
        uint _404;
        float _405;
        for (uint _368 = gl_LocalInvocationID.x; _368 < _25._m1; _372 = _404, _370 = _405, _368 += gl_WorkGroupSize.x)
        {
            uint _140 = _367 + (_368 * _25._m2);
            bool _145 = _372 == 4294967295u;
            bool _158;
            if (!_145)
            {
                bool _386;
                do
                {
                    if (_134._m0[_140] == _370)
                    {
                        bool _385;
                        if (_25._m4 != 0u)
                        {
                            _385 = _368 > _372;
                        }
                        else
                        {
                            _385 = _368 < _372;
                        }
                        _386 = _385;
                        break;
                    }
                    bool _384;
                    if (_25._m3 != 0u)
                    {
                        _384 = _134._m0[_140] < _370;
                    }
                    else
                    {
                        _384 = _134._m0[_140] > _370;
                    }
                    _386 = _384;
                    break;
                } while(false);
                _158 = _386;
            }
            else
            {
                _158 = _145;
            }
            _404 = _158 ? _368 : _372;
            _405 = _158 ? _134._m0[_140] : _370;
        }
        _371 = _372;
        _369 = _370;
    }
    else
    {
        _371 = 4294967295u;
        _369 = 0.0;
    }
    _173[gl_LocalInvocationID.x] = _369;
    _181[gl_LocalInvocationID.x] = _371;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint _373 = _190; _373 > 0u; _373 = _373 >> 1u)
    {
        bool _200 = gl_LocalInvocationID.x < _373;
        bool _209;
        if (_200)
        {
            _209 = _181[gl_LocalInvocationID.x + _373] != 4294967295u;
        }
        else
        {
            _209 = _200;
        }
        bool _241;
        if (_209)
        {
            bool _215 = _181[gl_LocalInvocationID.x] == 4294967295u;
            bool _240;
            if (!_215)
            {
                uint _221 = gl_LocalInvocationID.x + _373;
                bool _377;
                do
                {
                    if (_173[_221] == _173[gl_LocalInvocationID.x])
                    {
                        bool _376;
                        if (_25._m4 != 0u)
                        {
                            _376 = _181[_221] > _181[gl_LocalInvocationID.x];
                        }
                        else
                        {
                            _376 = _181[_221] < _181[gl_LocalInvocationID.x];
                        }
                        _377 = _376;
                        break;
                    }
                    bool _375;
                    if (_25._m3 != 0u)
                    {
                        _375 = _173[_221] < _173[gl_LocalInvocationID.x];
                    }
                    else
                    {
                        _375 = _173[_221] > _173[gl_LocalInvocationID.x];
                    }
                    _377 = _375;
                    break;
                } while(false);
                _240 = _377;
            }
            else
            {
                _240 = _215;
            }
            _241 = _240;
        }
        else
        {
            _241 = _209;
        }
        if (_241)
        {
            uint _247 = gl_LocalInvocationID.x + _373;
            _173[gl_LocalInvocationID.x] = _173[_247];
            _181[gl_LocalInvocationID.x] = _181[_247];
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if ((gl_LocalInvocationID.x == 0u) && _87)
    {
        uint _271 = 2u * _77;
        _269._m0[_271] = _181[0];
        _269._m0[_271 + 1u] = 0u;
    }
}

