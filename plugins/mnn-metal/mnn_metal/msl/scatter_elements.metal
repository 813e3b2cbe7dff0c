#include <metal_stdlib>
#include <simd/simd.h>

using namespace metal;

constant uint _39_tmp [[function_constant(0)]];
constant uint _39 = is_function_constant_defined(_39_tmp) ? _39_tmp : 1u;
constant uint _40_tmp [[function_constant(1)]];
constant uint _40 = is_function_constant_defined(_40_tmp) ? _40_tmp : 1u;
constant uint _41_tmp [[function_constant(2)]];
constant uint _41 = is_function_constant_defined(_41_tmp) ? _41_tmp : 1u;
constant uint3 gl_WorkGroupSize [[maybe_unused]] = uint3(_39, _40, _41);

struct _55
{
    uint _m0;
    uint _m1;
    uint _m2;
    uint _m3;
    uint _m4;
    uint _m5;
    uint _m6;
    uint _m7;
    uint _m8;
    uint _m9;
    uint _m10;
    uint _m11;
    uint _m12[6];
    uint _m13[6];
    uint _m14[6];
};

struct _220
{
    int _m0[1];
};

struct _272
{
    uint _m0[1];
};

struct _282
{
    uint _m0[1];
};

kernel void scatter_elements(const device _220& _222 [[buffer(0)]], const device _282& _284 [[buffer(1)]], device _272& _274 [[buffer(2)]], constant _55& _57 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    do
    {
        uint _368 = (((gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x) * gl_WorkGroupSize.x) + gl_LocalInvocationID.x;
        if (_368 >= _57._m0)
        {
            break;
        }
        int _151 = int(_57._m1) - 1;
        uint _446;
        uint _451;
        _451 = 0u;
        _446 = 0u;
        int _443 = _151;
        uint _476 = _368;
        for (; _443 >= 0; )
        {
            uint _165 = _476 % _57._m12[_443];
            _476 /= _57._m12[_443];
            _451 += (_165 * _57._m13[_443]);
            _446 += (_165 * _57._m14[_443]);
            _443--;
            continue;
        }
        uint _445;
        _445 = _446;
        for (uint _444 = 0u; _444 < _57._m5; _445 += _57._m14[_57._m2], _444++)
        {
            int _447;
            if (_57._m6 != 0u)
            {
                _447 = _222._m0[2u * _445];
            }
            else
            {
                _447 = _222._m0[_445];
            }
            int _452;
            if (_447 < 0)
            {
                _452 = _447 + int(_57._m4);
            }
            else
            {
                _452 = _447;
            }
            uint _254 = _451 + (uint(clamp(_452, 0, int(_57._m4) - 1)) * _57._m13[_57._m2]);
            if (_57._m7 == 0u)
            {
                for (uint _459 = 0u; _459 < _57._m3; )
                {
                    _274._m0[(_254 * _57._m3) + _459] = _284._m0[(_445 * _57._m3) + _459];
                    _459++;
                    continue;
                }
            }
            else
            {
                if (_57._m8 != 0u)
                {
                    int _308 = int(_274._m0[_254]);
                    int _312 = int(_284._m0[_445]);
                    int _458;
                    do
                    {
                        if (_57._m7 == 1u)
                        {
                            _458 = _308 + _312;
                            break;
                        }
                        if (_57._m7 == 2u)
                        {
                            _458 = _308 * _312;
                            break;
                        }
                        int _457;
                        if (_57._m7 == 3u)
                        {
                            _457 = max(_308, _312);
                        }
                        else
                        {
                            _457 = min(_308, _312);
                        }
                        _458 = _457;
                        break;
                    } while(false);
                    _274._m0[_254] = uint(_458);
                }
                else
                {
                    float _323 = as_type<float>(_274._m0[_254]);
                    float _327 = as_type<float>(_284._m0[_445]);
                    float _456;
                    do
                    {
                        if (_57._m7 == 1u)
                        {
                            _456 = _323 + _327;
                            break;
                        }
                        if (_57._m7 == 2u)
                        {
                            _456 = _323 * _327;
                            break;
                        }
                        float _455;
                        if (_57._m7 == 3u)
                        {
                            _455 = fast::max(_323, _327);
                        }
                        else
                        {
                            _455 = fast::min(_323, _327);
                        }
                        _456 = _455;
                        break;
                    } while(false);
                    _274._m0[_254] = as_type<uint>(_456);
                }
            }
        }
        break;
    } while(false);
}

