#pragma clang diagnostic ignored "-Wmissing-prototypes"
#pragma clang diagnostic ignored "-Wmissing-braces"

#include <metal_stdlib>
#include <simd/simd.h>

using namespace metal;

template<typename T, size_t Num>
struct spvUnsafeArray
{
    T elements[Num ? Num : 1];
    
    thread T& operator [] (size_t pos) thread
    {
        return elements[pos];
    }
    constexpr const thread T& operator [] (size_t pos) const thread
    {
        return elements[pos];
    }
    
    device T& operator [] (size_t pos) device
    {
        return elements[pos];
    }
    constexpr const device T& operator [] (size_t pos) const device
    {
        return elements[pos];
    }
    
    constexpr const constant T& operator [] (size_t pos) const constant
    {
        return elements[pos];
    }
    
    threadgroup T& operator [] (size_t pos) threadgroup
    {
        return elements[pos];
    }
    constexpr const threadgroup T& operator [] (size_t pos) const threadgroup
    {
        return elements[pos];
    }
};

constant uint _47_tmp [[function_constant(0)]];
constant uint _47 = is_function_constant_defined(_47_tmp) ? _47_tmp : 1u;
constant uint _48_tmp [[function_constant(1)]];
constant uint _48 = is_function_constant_defined(_48_tmp) ? _48_tmp : 1u;
constant uint _49_tmp [[function_constant(2)]];
constant uint _49 = is_function_constant_defined(_49_tmp) ? _49_tmp : 1u;
constant uint3 gl_WorkGroupSize [[maybe_unused]] = uint3(_47, _48, _49);

struct _85
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
    float _m11;
    uint _m12;
    uint _m13;
};

struct _237
{
    uint _m0[1];
};

struct _262
{
    float _m0[1];
};

struct _344
{
    uint _m0[1];
};

struct _436
{
    float _m0[1];
};

struct _492
{
    float _m0[1];
};

struct _534
{
    float _m0[1];
};

struct _674
{
    float _m0[1];
};

kernel void dq_lstm_step(device _262& _264 [[buffer(0)]], const device _344& _346 [[buffer(1)]], const device _436& _438 [[buffer(2)]], const device _237& _239 [[buffer(3)]], const device _492& _494 [[buffer(4)]], const device _534& _536 [[buffer(5)]], device _674& _676 [[buffer(6)]], constant _85& _87 [[buffer(30)]], uint3 gl_WorkGroupID [[threadgroup_position_in_grid]], uint3 gl_NumWorkGroups [[threadgroups_per_grid]], uint3 gl_LocalInvocationID [[thread_position_in_threadgroup]])
{
    do
    {
        uint _714 = (((gl_WorkGroupID.y * gl_NumWorkGroups.x) + gl_WorkGroupID.x) * gl_WorkGroupSize.x) + gl_LocalInvocationID.x;
        if (_714 >= _87._m0)
        {
            break;
        }
        uint _154 = _714 % _87._m4;
        uint _159 = _714 / _87._m4;
        uint _165 = _159 % _87._m3;
        uint _170 = _159 / _87._m3;
        uint _180 = (_87._m5 * _87._m3) * _87._m4;
        bool _191 = _87._m8 == 1u;
        bool _202;
        if (!_191)
        {
            _202 = (_87._m8 == 2u) && (_170 == 1u);
        }
        else
        {
            _202 = _191;
        }
        uint _965;
        if (_202)
        {
            _965 = (_87._m1 - 1u) - _87._m2;
        }
        else
        {
            _965 = _87._m2;
        }
        bool _226 = (_87._m7 & 16u) != 0u;
        int _967;
        if ((_87._m7 & 32u) != 0u)
        {
            uint _244 = _170 * _87._m10;
            uint _724 = (_239._m0[_244 >> 2u] >> ((_244 & 3u) * 8u)) & 255u;
            int _966;
            if (_226)
            {
                _966 = int(_724 << uint(24)) >> 24;
            }
            else
            {
                _966 = int(_724);
            }
            _967 = _966;
        }
        else
        {
            _967 = 0;
        }
        uint _266 = 2u * _170;
        uint _267 = 2u + _266;
        uint _274 = 3u + _266;
        uint _289 = _170 * (_87._m3 * _87._m4);
        uint _294 = _165 * _87._m4;
        uint _295 = ((_87._m13 + (_87._m6 * _180)) + _289) + _294;
        uint _300 = 4u * _87._m4;
        int4 _303 = int4(0);
        for (uint _968 = 0u; _968 < _87._m4; _968++)
        {
            uint _341 = (((_170 * _87._m4) + _968) * _300) + _154;
            uint _745 = (_346._m0[_341 >> 2u] >> ((_341 & 3u) * 8u)) & 255u;
            int _998;
            if (_226)
            {
                _998 = int(_745 << uint(24)) >> 24;
            }
            else
            {
                _998 = int(_745);
            }
            uint _360 = _341 + _87._m4;
            uint _766 = (_346._m0[_360 >> 2u] >> ((_360 & 3u) * 8u)) & 255u;
            int _999;
            if (_226)
            {
                _999 = int(_766 << uint(24)) >> 24;
            }
            else
            {
                _999 = int(_766);
            }
            uint _377 = _341 + (2u * _87._m4);
            uint _787 = (_346._m0[_377 >> 2u] >> ((_377 & 3u) * 8u)) & 255u;
            int _1000;
            if (_226)
            {
                _1000 = int(_787 << uint(24)) >> 24;
            }
            else
            {
                _1000 = int(_787);
            }
            uint _395 = _341 + (3u * _87._m4);
            uint _808 = (_346._m0[_395 >> 2u] >> ((_395 & 3u) * 8u)) & 255u;
            int _1001;
            if (_226)
            {
                _1001 = int(_808 << uint(24)) >> 24;
            }
            else
            {
                _1001 = int(_808);
            }
            _303 += (int4(int(fast::clamp(rint(_264._m0[_295 + _968] / _264._m0[_267]) + _264._m0[_274], 0.0, 255.0) - _264._m0[_274])) * (int4(_998, _999, _1000, _1001) - int4(_967)));
        }
        spvUnsafeArray<float, 4> _518;
        for (uint _969 = 0u; _969 < 4u; _969++)
        {
            uint _433 = (_969 * _87._m4) + _154;
            float _484 = fma(float(_303[_969]), _264._m0[_267] * _438._m0[(_170 * _87._m9) + ((_87._m9 == 1u) ? 0u : _433)], _264._m0[((_87._m12 + ((((_170 * _87._m1) + _965) * _87._m3) * _300)) + (_165 * _300)) + _433]);
            float _997;
            if ((_87._m7 & 1u) != 0u)
            {
                uint _498 = (_170 * 2u) * _300;
                _997 = _484 + (_494._m0[_498 + _433] + _494._m0[(_498 + _300) + _433]);
            }
            else
            {
                _997 = _484;
            }
            _518[_969] = _997;
        }
        float _970;
        float _975;
        float _989;
        if ((_87._m7 & 2u) != 0u)
        {
            uint _541 = (_170 * 3u) * _87._m4;
            _989 = _536._m0[(_541 + _87._m4) + _154];
            _975 = _536._m0[(_541 + (2u * _87._m4)) + _154];
            _970 = _536._m0[_541 + _154];
        }
        else
        {
            _989 = 0.0;
            _975 = 0.0;
            _970 = 0.0;
        }
        uint _584 = ((_87._m13 + _289) + _294) + _154;
        uint _589 = (2u * _180) + _584;
        float _591 = _264._m0[_589];
        float _598 = fma(_970, _591, _518[0]);
        bool _825 = _87._m11 > 0.0;
        float _971;
        if (_825)
        {
            _971 = fast::clamp(_598, -_87._m11, _87._m11);
        }
        else
        {
            _971 = _598;
        }
        float _845 = exp(-abs(_971));
        float _972;
        if (_971 >= 0.0)
        {
            _972 = 1.0 / (1.0 + _845);
        }
        else
        {
            _972 = _845 / (1.0 + _845);
        }
        float _980;
        if ((_87._m7 & 8u) != 0u)
        {
            _980 = 1.0 - _972;
        }
        else
        {
            float _619 = fma(_975, _591, _518[2]);
            float _978;
            if (_825)
            {
                _978 = fast::clamp(_619, -_87._m11, _87._m11);
            }
            else
            {
                _978 = _619;
            }
            float _884 = exp(-abs(_978));
            float _979;
            if (_978 >= 0.0)
            {
                _979 = 1.0 / (1.0 + _884);
            }
            else
            {
                _979 = _884 / (1.0 + _884);
            }
            _980 = _979;
        }
        float _984;
        if (_825)
        {
            _984 = fast::clamp(_518[3], -_87._m11, _87._m11);
        }
        else
        {
            _984 = _518[3];
        }
        float _636 = fma(_980, _591, _972 * precise::tanh(fast::clamp(_984, -15.0, 15.0)));
        float _643 = fma(_989, _636, _518[1]);
        float _992;
        if (_825)
        {
            _992 = fast::clamp(_643, -_87._m11, _87._m11);
        }
        else
        {
            _992 = _643;
        }
        float _946 = exp(-abs(_992));
        float _993;
        if (_992 >= 0.0)
        {
            _993 = 1.0 / (1.0 + _946);
        }
        else
        {
            _993 = _946 / (1.0 + _946);
        }
        float _651 = _993 * precise::tanh(fast::clamp(_636, -15.0, 15.0));
        _264._m0[_589] = _636;
        _264._m0[((1u - _87._m6) * _180) + _584] = _651;
        if ((_87._m7 & 4u) != 0u)
        {
            _676._m0[(((((_965 * _87._m5) + _170) * _87._m3) + _165) * _87._m4) + _154] = _651;
        }
        break;
    } while(false);
}

