#include <metal_stdlib>
#include <simd/simd.h>

using namespace metal;

constant uint _25_tmp [[function_constant(0)]];
constant uint _25 = is_function_constant_defined(_25_tmp) ? _25_tmp : 1u;
constant uint _26_tmp [[function_constant(1)]];
constant uint _26 = is_function_constant_defined(_26_tmp) ? _26_tmp : 1u;
constant uint _27_tmp [[function_constant(2)]];
constant uint _27 = is_function_constant_defined(_27_tmp) ? _27_tmp : 1u;
constant uint3 gl_WorkGroupSize [[maybe_unused]] = uint3(_25, _26, _27);

struct _41
{
    uint _m0;
    uint _m1;
    uint _m2;
};

struct _71
{
    float _m0[1];
};

struct _148
{
    float _m0[1];
};

kernel void ml_normalizer(const device _71& _73 [[buffer(0)]], device _148& _150 [[buffer(1)]], constant _41& _43 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    do
    {
        uint _208 = (((gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x) * gl_WorkGroupSize.x) + gl_LocalInvocationID.x;
        if (_208 >= _43._m0)
        {
            break;
        }
        uint _59 = _208 * _43._m1;
        bool _66 = _43._m2 == 0u;
        float _209;
        if (_66)
        {
            _209 = _73._m0[_59];
        }
        else
        {
            _209 = 0.0;
        }
        float _213;
        _213 = _209;
        float _218;
        for (uint _210 = 0u; _210 < _43._m1; _213 = _218, _210++)
        {
            uint _94 = _59 + _210;
            if (_66)
            {
                _218 = fast::max(_213, _73._m0[_94]);
            }
            else
            {
                float _217;
                if (_43._m2 == 1u)
                {
                    _217 = abs(_73._m0[_94]);
                }
                else
                {
                    _217 = _73._m0[_94] * _73._m0[_94];
                }
                _218 = _213 + _217;
            }
        }
        for (uint _211 = 0u; _211 < _43._m1; _211++)
        {
            uint _138 = _59 + _211;
            float _140 = _73._m0[_138];
            if (_43._m2 == 2u)
            {
                float _214;
                if (_213 == 0.0)
                {
                    _214 = _140;
                }
                else
                {
                    _214 = sqrt((_140 * _140) / _213) * ((_140 < 0.0) ? (-1.0) : 1.0);
                }
                _150._m0[_138] = _214;
            }
            else
            {
                _150._m0[_138] = _140 / ((_213 == 0.0) ? 1.0 : _213);
            }
        }
        break;
    } while(false);
}

