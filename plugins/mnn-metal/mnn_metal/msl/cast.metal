#include <metal_stdlib>
#include <simd/simd.h>

using namespace metal;

constant uint _42_tmp [[function_constant(0)]];
constant uint _42 = is_function_constant_defined(_42_tmp) ? _42_tmp : 1u;
constant uint _43_tmp [[function_constant(1)]];
constant uint _43 = is_function_constant_defined(_43_tmp) ? _43_tmp : 1u;
constant uint _44_tmp [[function_constant(2)]];
constant uint _44 = is_function_constant_defined(_44_tmp) ? _44_tmp : 1u;
constant uint3 gl_WorkGroupSize [[maybe_unused]] = uint3(_42, _43, _44);

struct _65
{
    uint _m0;
    uint _m1;
    uint _m2;
};

struct _77
{
    uint _m0[1];
};

struct _183
{
    uint _m0;
    uint _m1;
};

struct _278
{
    uint _m0[1];
};

kernel void _cast(const device _77& _79 [[buffer(0)]], device _278& _280 [[buffer(1)]], constant _65& _67 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    do
    {
        uint _229 = ((((gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x) * gl_WorkGroupSize.x) + gl_LocalInvocationID.x) * 4u;
        if (_229 >= _67._m0)
        {
            break;
        }
        uint _525;
        _525 = 0u;
        uint _575;
        uint _523 = 0u;
        for (;;)
        {
            bool _245 = _523 < 4u;
            bool _254;
            if (_245)
            {
                _254 = (_229 + _523) < _67._m0;
            }
            else
            {
                _254 = _245;
            }
            if (_254)
            {
                uint _258 = _229 + _523;
                bool _383 = _67._m1 == 0u;
                float _534;
                int _538;
                uint _544;
                if (_383)
                {
                    float _389 = trunc(as_type<float>(_79._m0[_258]));
                    int _539;
                    uint _545;
                    if (abs(_389) < 2147483648.0)
                    {
                        int _395 = int(_389);
                        _545 = uint(_395);
                        _539 = (_395 < 0) ? (-1) : 0;
                    }
                    else
                    {
                        float _404 = floor(_389 * 2.3283064365386962890625e-10);
                        _545 = uint(fma(-_404, 4294967296.0, _389));
                        _539 = int(_404);
                    }
                    _544 = _545;
                    _538 = _539;
                    _534 = as_type<float>(_79._m0[_258]);
                }
                else
                {
                    float _535;
                    int _540;
                    uint _546;
                    if (_67._m1 == 1u)
                    {
                        int _425 = int(_79._m0[_258]);
                        _546 = uint(_425);
                        _540 = (_425 < 0) ? (-1) : 0;
                        _535 = float(_425);
                    }
                    else
                    {
                        float _536;
                        int _541;
                        uint _547;
                        if (_67._m1 == 2u)
                        {
                            uint _439 = 2u * _258;
                            int _447 = int(_79._m0[_439 + 1u]);
                            bool _449 = _447 == 0;
                            bool _454;
                            if (_449)
                            {
                                _454 = _79._m0[_439] < 2147483648u;
                            }
                            else
                            {
                                _454 = _449;
                            }
                            bool _465;
                            if (!_454)
                            {
                                bool _458 = _447 == (-1);
                                bool _463;
                                if (_458)
                                {
                                    _463 = _79._m0[_439] >= 2147483648u;
                                }
                                else
                                {
                                    _463 = _458;
                                }
                                _465 = _463;
                            }
                            else
                            {
                                _465 = _454;
                            }
                            float _537;
                            if (_465)
                            {
                                _537 = float(int(_79._m0[_439]));
                            }
                            else
                            {
                                uint _472 = ~_79._m0[_439];
                                _183 _473;
                                _473._m0 = _472 + 1u;
                                _473._m1 = select(uint(1), uint(0), _473._m0 >= max(_472, 1u));
                                float _533;
                                if (_447 < 0)
                                {
                                    _533 = -fma(float((~uint(_447)) + _473._m1), 4294967296.0, float(_473._m0));
                                }
                                else
                                {
                                    _533 = fma(float(_447), 4294967296.0, float(_79._m0[_439]));
                                }
                                _537 = _533;
                            }
                            _547 = _79._m0[_439];
                            _541 = _447;
                            _536 = _537;
                        }
                        else
                        {
                            uint _509 = uint(((_79._m0[_258 >> 2u] >> ((_258 & 3u) * 8u)) & 255u) != 0u);
                            _547 = _509;
                            _541 = 0;
                            _536 = float(_509);
                        }
                        _546 = _547;
                        _540 = _541;
                        _535 = _536;
                    }
                    _544 = _546;
                    _538 = _540;
                    _534 = _535;
                }
                if (_67._m2 == 0u)
                {
                    _280._m0[_258] = as_type<uint>(_534);
                    _575 = _525;
                }
                else
                {
                    uint _576;
                    if (_67._m2 == 1u)
                    {
                        _280._m0[_258] = _544;
                        _576 = _525;
                    }
                    else
                    {
                        uint _577;
                        if (_67._m2 == 2u)
                        {
                            uint _301 = 2u * _258;
                            _280._m0[_301] = _544;
                            _280._m0[_301 + 1u] = uint(_538);
                            _577 = _525;
                        }
                        else
                        {
                            bool _550;
                            if (_383)
                            {
                                _550 = (_79._m0[_258] & 2147483647u) != 0u;
                            }
                            else
                            {
                                _550 = (_544 != 0u) || (_538 != 0);
                            }
                            uint _578;
                            if (_550)
                            {
                                _578 = _525 | (1u << (_523 * 8u));
                            }
                            else
                            {
                                _578 = _525;
                            }
                            _577 = _578;
                        }
                        _576 = _577;
                    }
                    _575 = _576;
                }
                _525 = _575;
                _523++;
                continue;
            }
            else
            {
                break;
            }
        }
        if (_67._m2 == 3u)
        {
            _280._m0[_229 >> 2u] = _525;
        }
        break;
    } while(false);
}

