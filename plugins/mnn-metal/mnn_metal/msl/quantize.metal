#include <metal_stdlib>
#include <simd/simd.h>

using namespace metal;

constant uint _35_tmp [[function_constant(0)]];
constant uint _35 = is_function_constant_defined(_35_tmp) ? _35_tmp : 1u;
constant uint _36_tmp [[function_constant(1)]];
constant uint _36 = is_function_constant_defined(_36_tmp) ? _36_tmp : 1u;
constant uint _37_tmp [[function_constant(2)]];
constant uint _37 = is_function_constant_defined(_37_tmp) ? _37_tmp : 1u;
constant uint3 gl_WorkGroupSize [[maybe_unused]] = uint3(_35, _36, _37);

struct _78
{
    uint _m0;
    uint _m1;
    uint _m2;
    uint _m3;
    uint _m4;
    uint _m5;
    uint _m6;
};

struct _138
{
    uint _m0[1];
};

struct _162
{
    uint _m0[1];
};

struct _170
{
    float _m0[1];
};

struct _229
{
    uint _m0[1];
};

kernel void quantize(const device _162& _164 [[buffer(0)]], const device _170& _172 [[buffer(1)]], const device _138& _140 [[buffer(2)]], device _229& _231 [[buffer(3)]], constant _78& _80 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    do
    {
        uint _76 = ((((gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x) * gl_WorkGroupSize.x) + gl_LocalInvocationID.x) * 4u;
        if (_76 >= _80._m0)
        {
            break;
        }
        uint _279;
        _279 = 0u;
        uint _225;
        uint _277 = 0u;
        for (;;)
        {
            bool _97 = _277 < 4u;
            bool _106;
            if (_97)
            {
                _106 = (_76 + _277) < _80._m0;
            }
            else
            {
                _106 = _97;
            }
            if (_106)
            {
                uint _110 = _76 + _277;
                int _285;
                if (_80._m1 == 0u)
                {
                    uint _126 = (_110 / _80._m4) % _80._m5;
                    float _283;
                    if (_80._m6 != 0u)
                    {
                        uint _265 = (_140._m0[_126 >> 2u] >> ((_126 & 3u) * 8u)) & 255u;
                        int _282;
                        if (_80._m3 != 0u)
                        {
                            _282 = int(_265 << uint(24)) >> 24;
                        }
                        else
                        {
                            _282 = int(_265);
                        }
                        _283 = float(_282);
                    }
                    else
                    {
                        _283 = 0.0;
                    }
                    float _180 = rint(as_type<float>(_164._m0[_110]) / _172._m0[_126]) + _283;
                    float _284;
                    if (_80._m3 != 0u)
                    {
                        _284 = fast::clamp(_180, -128.0, 127.0);
                    }
                    else
                    {
                        _284 = fast::clamp(_180, 0.0, 255.0);
                    }
                    _285 = int(_284);
                }
                else
                {
                    int _281;
                    if (_80._m2 != 0u)
                    {
                        _281 = int(_164._m0[_110]);
                    }
                    else
                    {
                        _281 = int(trunc(as_type<float>(_164._m0[_110])));
                    }
                    _285 = _281;
                }
                _225 = _279 | ((uint(_285) & 255u) << (_277 * 8u));
                _279 = _225;
                _277++;
                continue;
            }
            else
            {
                break;
            }
        }
        _231._m0[_76 >> 2u] = _279;
        break;
    } while(false);
}

