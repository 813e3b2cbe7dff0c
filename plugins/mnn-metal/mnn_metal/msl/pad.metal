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

struct _47
{
    uint _m0;
    uint _m1;
    uint _m2;
    float _m3;
    uint _m4[6];
    uint _m5[6];
    int _m6[6];
};

struct _117
{
    float _m0[1];
};

struct _198
{
    float _m0[1];
};

kernel void pad(const device _198& _200 [[buffer(0)]], device _117& _119 [[buffer(1)]], constant _47& _49 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    do
    {
        uint _227 = (((gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x) * gl_WorkGroupSize.x) + gl_LocalInvocationID.x;
        if (_227 >= _49._m0)
        {
            break;
        }
        int _69 = int(_49._m1) - 1;
        uint _242;
        _242 = 0u;
        uint _101;
        uint _189;
        uint _193;
        bool _252;
        int _228 = _69;
        uint _229 = _227;
        uint _236 = 1u;
        for (;;)
        {
            if (_228 >= 0)
            {
                int _82 = int(_49._m4[_228]);
                int _96 = int(_229 % _49._m5[_228]) - _49._m6[_228];
                _101 = _229 / _49._m5[_228];
                bool _103 = _96 < 0;
                int _232;
                if (_103 || (_96 >= _82))
                {
                    int _233;
                    if (_49._m2 == 0u)
                    {
                        _119._m0[_227] = _49._m3;
                        _252 = true;
                        break;
                    }
                    else
                    {
                        if (_49._m2 == 1u)
                        {
                            int _231;
                            if (_103)
                            {
                                _231 = -_96;
                            }
                            else
                            {
                                _231 = (2 * (_82 - 1)) - _96;
                            }
                            _233 = _231;
                        }
                        else
                        {
                            int _234;
                            if (_49._m2 == 2u)
                            {
                                _234 = clamp(_96, 0, _82 - 1);
                            }
                            else
                            {
                                int _230;
                                if (_103)
                                {
                                    _230 = (_82 - 1) - int(uint((-1) - _96) % uint(_82));
                                }
                                else
                                {
                                    _230 = int(uint(_96) % uint(_82));
                                }
                                _234 = _230;
                            }
                            _233 = _234;
                        }
                    }
                    _232 = _233;
                }
                else
                {
                    _232 = _96;
                }
                _189 = _242 + (uint(_232) * _236);
                _193 = _236 * uint(_82);
                _242 = _189;
                _236 = _193;
                _229 = _101;
                _228--;
                continue;
            }
            else
            {
                _252 = false;
                break;
            }
        }
        if (_252)
        {
            break;
        }
        _119._m0[_227] = _200._m0[_242];
        break;
    } while(false);
}

